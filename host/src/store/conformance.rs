//! One test suite, every implementation: each test below runs against the
//! SQLite store and against PostgreSQL, through `&dyn RunStore` only.
//!
//! PostgreSQL tests use the server `SKILLHOST_TEST_POSTGRES_URL` names,
//! each in a schema of its own. Without the variable they say they were
//! skipped and pass, except under CI (`CI` set), where they fail: CI must
//! not pass by testing one implementation.

use std::io::Write as _;
use std::sync::Arc;

use super::*;

/// Where a test's stores live; `open` may be called again to reopen the
/// same data, as another process or host would.
pub(super) trait Backend {
    fn open(&self, quota: KvQuota) -> Arc<dyn RunStore>;
}

pub(super) struct Sqlite(tempfile::TempDir);

impl Sqlite {
    pub(super) fn new() -> Sqlite {
        Sqlite(tempfile::tempdir().expect("tempdir"))
    }
}

impl Backend for Sqlite {
    fn open(&self, quota: KvQuota) -> Arc<dyn RunStore> {
        let store = SqliteStore::open(&self.0.path().join("s.db")).expect("open the SQLite store");
        Arc::new(store.with_kv_quota(quota))
    }
}

/// The value of the environment variable `var` for `test`: None (said on
/// stderr, naming `set_it`) without one, a panic under CI, which must test
/// what it names.
fn required_env(test: &str, var: &str, set_it: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => Some(v),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{test}: {var} is not set, and CI must test it")
        }
        _ => {
            // Straight to stderr (not the std print macros, which the
            // crate keeps to the CLI's printing, and the harness hides).
            let _ = writeln!(std::io::stderr(), "{test}: skipped ({set_it})");
            None
        }
    }
}

/// The CA certificate of the test server's TLS (SKILLHOST_TEST_POSTGRES_CA,
/// as `.ci/postgres.sh` makes it), if any; required under CI.
pub(super) fn postgres_ca(test: &str) -> Option<String> {
    required_env(
        test,
        "SKILLHOST_TEST_POSTGRES_CA",
        "set SKILLHOST_TEST_POSTGRES_CA, as .ci/postgres.sh does",
    )
}

/// The server to test against, if any.
pub(super) fn postgres_url(test: &str) -> Option<String> {
    required_env(
        test,
        "SKILLHOST_TEST_POSTGRES_URL",
        "against PostgreSQL: set SKILLHOST_TEST_POSTGRES_URL=postgres://...",
    )
}

/// A fresh schema on the test server, dropped afterwards.
pub(super) struct Postgres {
    base: String,
    schema: String,
}

impl Postgres {
    pub(super) fn new(test: &str) -> Option<Postgres> {
        let base = postgres_url(test)?;
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let schema = format!("t_{}_{}_{n}", std::process::id(), test);
        admin(
            &base,
            &format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"),
        );
        Some(Postgres { base, schema })
    }

    /// The URL of this test's schema.
    pub(super) fn url(&self) -> String {
        let join = if self.base.contains('?') { '&' } else { '?' };
        format!(
            "{}{join}options=-c%20search_path%3D{}",
            self.base, self.schema
        )
    }

    /// Runs `sql` in this test's schema.
    pub(super) fn execute(&self, sql: &str) {
        admin(&self.url(), sql);
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        admin(
            &self.base,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema),
        );
    }
}

impl Backend for Postgres {
    fn open(&self, quota: KvQuota) -> Arc<dyn RunStore> {
        let store = PgStore::open(&self.url()).expect("open the PostgreSQL store");
        Arc::new(store.with_kv_quota(quota))
    }
}

/// Runs `sql` over a connection of its own.
fn admin(url: &str, sql: &str) {
    PgStore::execute_on(url, sql).expect("SQL on SKILLHOST_TEST_POSTGRES_URL");
}

/// `#[test]`s for each implementation, calling `fn name(&dyn Backend)`.
macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $name() {
                super::$name(&super::Sqlite::new());
            })*
        }
        mod postgres {
            $(#[test]
            fn $name() {
                if let Some(backend) = super::Postgres::new(stringify!($name)) {
                    super::$name(&backend);
                }
            })*
        }
    };
}

suite!(
    kv_is_per_skill_and_survives_reopen,
    kv_bytes_quota_counts_keys_values_and_replacements,
    kv_key_count_quota_and_a_lowered_quota,
    concurrent_kv_writers_cannot_overrun_the_quota,
    a_verdict_overrides_the_outcome_for_learning_and_keeps_the_record,
    usage_counts_runs_and_keeps_an_ema_of_their_outcomes,
    a_replayed_run_that_was_stored_is_not_counted_again,
    tool_steps_stream_in_run_and_step_order,
    a_run_reads_back_whole_and_listings_go_newest_first,
    run_ids_are_handed_out_once_across_stores_and_given_back_only_when_last,
    failure_groups_count_runs_and_tool_errors_in_the_window,
    a_run_with_nul_characters_is_stored,
    a_copy_of_a_sqlite_store_is_whole_and_a_second_copy_adds_nothing,
    an_approval_needs_a_passed_report_of_the_same_artifact,
    old_reports_are_dropped_but_never_the_approved_one,
);

fn default_store(b: &dyn Backend) -> Arc<dyn RunStore> {
    b.open(KvQuota::default())
}

fn run(skill: &str, success: bool, at: i64) -> RunRecord {
    RunRecord::new(skill, success, at)
}

fn kv_is_per_skill_and_survives_reopen(b: &dyn Backend) {
    {
        let s = default_store(b);
        s.kv_set("a", "k", b"1").expect("set");
        s.kv_set("a", "k", b"2").expect("overwrite");
        s.kv_set("b", "k", b"other").expect("set");
    }
    let s = default_store(b);
    assert_eq!(s.kv_get("a", "k").expect("get"), Some(b"2".to_vec()));
    assert_eq!(s.kv_get("b", "k").expect("get"), Some(b"other".to_vec()));
    s.kv_delete("a", "k").expect("delete");
    assert_eq!(s.kv_get("a", "k").expect("get"), None);
    s.kv_delete("a", "missing")
        .expect("deleting a missing key is fine");
}

fn quota_error(e: StoreError) -> (&'static str, u64, u64, u64) {
    let text = e.to_string();
    match e {
        StoreError::KvQuota {
            setting,
            quota,
            would,
            now,
            ..
        } => {
            assert!(text.contains(setting), "{text}");
            (setting, quota, would, now)
        }
        other => panic!("not a quota error: {other}"),
    }
}

fn kv_bytes_quota_counts_keys_values_and_replacements(b: &dyn Backend) {
    let s = b.open(KvQuota {
        max_bytes: 100,
        max_keys: 1_000,
    });
    // Keys are 2 bytes, values 18: five entries fill the 100 bytes.
    for i in 0..5 {
        s.kv_set("a", &format!("k{i}"), &[b'x'; 18]).expect("fits");
    }
    assert_eq!(
        s.kv_usage("a").expect("usage"),
        KvUsage {
            keys: 5,
            bytes: 100
        }
    );
    let e = s
        .kv_set("a", "k5", b"")
        .expect_err("refused past the quota");
    assert_eq!(quota_error(e), ("kv_quota_kb", 100, 102, 100));
    // Replacing counts the old value out: the same size fits, one more
    // byte does not, and a smaller value frees room for a new key.
    s.kv_set("a", "k0", &[b'y'; 18])
        .expect("same size replaces");
    let e = s.kv_set("a", "k0", &[b'y'; 19]).expect_err("one byte over");
    assert_eq!(quota_error(e), ("kv_quota_kb", 100, 101, 100));
    s.kv_set("a", "k0", &[b'y'; 8]).expect("shrinks");
    s.kv_set("a", "k5", &[b'z'; 8])
        .expect("fits in the freed room");
    assert_eq!(
        s.kv_usage("a").expect("usage"),
        KvUsage {
            keys: 6,
            bytes: 100
        }
    );
    assert_eq!(s.kv_get("a", "k0").expect("get"), Some(vec![b'y'; 8]));
    assert_eq!(
        s.kv_get("a", "k6").expect("get"),
        None,
        "refused writes leave nothing"
    );
    // Keys count in bytes, not characters; the quota is per skill.
    let e = s.kv_set("a", "é", b"").expect_err("two bytes over");
    assert_eq!(quota_error(e), ("kv_quota_kb", 100, 102, 100));
    s.kv_set("b", "k0", &[b'x'; 98])
        .expect("another skill has its own quota");
    s.kv_delete("a", "k5").expect("delete frees room");
    s.kv_set("a", "k6", &[b'x'; 8])
        .expect("fits after the delete");
}

fn kv_key_count_quota_and_a_lowered_quota(b: &dyn Backend) {
    let s = b.open(KvQuota {
        max_bytes: 1 << 20,
        max_keys: 3,
    });
    for k in ["a", "b", "c"] {
        s.kv_set("skill", k, b"1").expect("fits");
    }
    let e = s.kv_set("skill", "d", b"1").expect_err("a fourth key");
    assert_eq!(quota_error(e), ("kv_max_keys", 3, 4, 3));
    s.kv_set("skill", "c", b"replaced")
        .expect("replacing adds no key");
    drop(s);
    // The operator lowers the quota below what is stored: nothing may
    // grow, but the skill can still shrink its data.
    let s = b.open(KvQuota {
        max_bytes: 4,
        max_keys: 1,
    });
    let e = s.kv_set("skill", "a", b"11").expect_err("growing");
    assert_eq!(quota_error(e).0, "kv_quota_kb");
    s.kv_set("skill", "c", b"").expect("shrinking is allowed");
    assert!(s.kv_set("skill", "e", b"").is_err(), "a new key is refused");
}

/// Several hosts (stores) writing new keys of one skill at once: together
/// they store exactly what the quota allows, never more.
fn concurrent_kv_writers_cannot_overrun_the_quota(b: &dyn Backend) {
    let quota = KvQuota {
        max_bytes: 1 << 20,
        max_keys: 10,
    };
    let stores: Vec<_> = (0..3).map(|_| b.open(quota)).collect();
    let written: usize = std::thread::scope(|scope| {
        let writers: Vec<_> = stores
            .iter()
            .enumerate()
            .map(|(w, s)| {
                scope.spawn(move || {
                    (0..8)
                        .filter(|i| s.kv_set("shared", &format!("w{w}-{i}"), b"v").is_ok())
                        .count()
                })
            })
            .collect();
        writers.into_iter().map(|h| h.join().expect("writer")).sum()
    });
    assert_eq!(written, 10);
    assert_eq!(stores[0].kv_usage("shared").expect("usage").keys, 10);
}

fn a_verdict_overrides_the_outcome_for_learning_and_keeps_the_record(b: &dyn Backend) {
    let s = default_store(b);
    let s = s.as_ref();
    let mut failed = run("mail", false, 1);
    failed.failure_class = Some("TimezoneError".into());
    let ids = s
        .record_runs(&[run("mail", true, 1), run("mail", true, 2), failed])
        .expect("record");
    let verdict = |ok, class: Option<&str>| Verdict {
        ok,
        class: class.map(str::to_owned),
        note: Some("checked by hand".into()),
        at: 3,
    };
    let classes = |s: &dyn RunStore| -> Vec<(String, u64)> {
        s.failure_groups(100)
            .expect("groups")
            .into_iter()
            .map(|g| (g.class, g.count))
            .collect()
    };
    assert_eq!(classes(s), [("TimezoneError".to_owned(), 1)]);
    // A success a person marks failed, with and without a class.
    assert!(
        s.mark_run(ids[0], &verdict(false, Some("ToneError")))
            .expect("mark")
    );
    assert!(s.mark_run(ids[1], &verdict(false, None)).expect("mark"));
    // A failure a person accepts is no failure for learning.
    assert!(s.mark_run(ids[2], &verdict(true, None)).expect("mark"));
    assert_eq!(
        classes(s),
        [("ToneError".to_owned(), 1), (USER_REPORTED.to_owned(), 1)]
    );
    // The replay sees the judged outcome; the run itself is unchanged.
    let judged = s.recent_runs_of("mail", 10).expect("runs");
    assert!(
        judged
            .iter()
            .find(|r| r.id == ids[2])
            .is_some_and(|r| r.success)
    );
    let kept = s.get_run(ids[2]).expect("get").expect("run");
    assert_eq!(kept.failure_class.as_deref(), Some("TimezoneError"));
    assert_eq!(
        s.verdict(ids[2]).expect("verdict"),
        Some(verdict(true, None))
    );
    // A second verdict replaces the first.
    assert!(s.mark_run(ids[2], &verdict(false, None)).expect("mark"));
    assert_eq!(
        s.verdict(ids[2]).expect("verdict"),
        Some(verdict(false, None))
    );
    // No such run; bad input named.
    assert!(!s.mark_run(999, &verdict(false, None)).expect("no run"));
    for bad in [
        verdict(false, Some("no spaces")),
        verdict(false, Some("")),
        verdict(true, Some("ToneError")),
    ] {
        let e = s.mark_run(ids[0], &bad).expect_err("refused");
        assert!(matches!(e, StoreError::BadVerdict(_)), "{e}");
    }
}

fn usage_counts_runs_and_keeps_an_ema_of_their_outcomes(b: &dyn Backend) {
    let s = default_store(b);
    assert!(s.skill_usage().expect("usage").is_empty());
    // Two batches: the rate carries over from one to the next.
    s.record_runs(&[
        run("a", false, 100),
        run("b", true, 50),
        run("a", true, 300),
    ])
    .expect("record");
    s.record_run(&run("a", true, 200)).expect("record");
    let u = s.skill_usage().expect("usage");
    let a = u["a"];
    assert_eq!((a.uses, a.successes, a.last_used), (3, 2, Some(300)));
    // First use 0, then 0.3·1 + 0.7·0 = 0.3, then 0.3 + 0.7·0.3 = 0.51.
    assert!((a.success_rate - 0.51).abs() < 1e-12, "{}", a.success_rate);
    let b = u["b"];
    assert_eq!((b.uses, b.successes, b.success_rate), (1, 1, 1.0));
}

fn a_replayed_run_that_was_stored_is_not_counted_again(b: &dyn Backend) {
    let s = default_store(b);
    let ids = s.reserve_run_ids(3).expect("ids");
    let mut runs: Vec<RunRecord> = [true, false, true]
        .into_iter()
        .map(|ok| run("a", ok, 1))
        .collect();
    for (r, id) in runs.iter_mut().zip(ids) {
        r.id = id;
    }
    // The writer stored the first two, then the process died; the
    // journal still holds all three and is replayed, twice.
    assert_eq!(s.insert_runs(&runs[..2]).expect("insert"), [true, true]);
    assert_eq!(s.insert_runs(&runs).expect("replay"), [false, false, true]);
    assert_eq!(s.insert_runs(&runs).expect("again"), [false; 3]);
    let a = s.skill_usage().expect("usage")["a"];
    assert_eq!((a.uses, a.successes), (3, 2));
    assert_eq!(a.uses, s.run_count().expect("count"));
    let mut expected = Usage::default();
    for r in &runs {
        expected.record(r.success, r.at);
    }
    assert_eq!(a, expected);
    // 1, then 0.7·1 = 0.7, then 0.3 + 0.7·0.7 = 0.79.
    assert!((a.success_rate - 0.79).abs() < 1e-12, "{}", a.success_rate);
}

fn step(kind: &str, tool: Option<&str>, error: Option<&str>) -> StepRecord {
    StepRecord {
        kind: kind.into(),
        tool: tool.map(Into::into),
        detail: serde_json::json!({"arguments": {"x": 1}}),
        error: error.map(|_| "boom".into()),
        error_class: error.map(Into::into),
        duration_us: 1,
    }
}

fn tool_steps_stream_in_run_and_step_order(b: &dyn Backend) {
    let s = default_store(b);
    let mut r1 = run("a", true, 1);
    r1.steps = vec![
        step("tool", Some("t1"), None),
        step("model", None, None),
        step("tool", Some("t2"), Some("Timeout")),
    ];
    let mut r2 = run("a", false, 2);
    r2.steps = vec![step("tool", Some("t3"), None)];
    let ids = s.record_runs(&[r1, r2]).expect("record");
    let mut seen = Vec::new();
    let n = s
        .for_each_tool_step(0, &mut |r| {
            seen.push((
                r.run_id,
                r.run_succeeded,
                r.tool.to_owned(),
                r.step_succeeded,
            ));
            assert!(r.detail_json.contains("arguments"));
        })
        .expect("scan");
    assert_eq!(n, 3);
    assert_eq!(
        seen,
        [
            (ids[0], true, "t1".to_owned(), true),
            (ids[0], true, "t2".to_owned(), false),
            (ids[1], false, "t3".to_owned(), true),
        ]
    );
    let from_second = s.for_each_tool_step(ids[1], &mut |_| {}).expect("scan");
    assert_eq!(from_second, 1);
}

fn a_run_reads_back_whole_and_listings_go_newest_first(b: &dyn Backend) {
    let s = default_store(b);
    assert_eq!(s.nth_latest_run_id(1).expect("nth"), None);
    assert_eq!(s.run_count().expect("count"), 0);
    let mut full = run("mail", false, 7);
    full.skill_version = "1.2".into();
    full.task = "write to Bob — ünïcode".into();
    full.tier = "model".into();
    full.failure_class = Some("TimezoneError".into());
    full.failure_message = Some("no timezone".into());
    full.context = serde_json::json!({"has_timezone": false, "n": [1, 2]});
    full.output = Some("Dear Bob".into());
    full.duration_us = 1234;
    full.model_calls = 2;
    full.origin = "mcp".into();
    full.steps = vec![
        step("model", None, None),
        step("tool", Some("send"), Some("Denied")),
    ];
    full.rules_applied = vec![
        AppliedRecord {
            rule_id: "r2".into(),
            kind: "prevention".into(),
            effect: "set timezone".into(),
        },
        AppliedRecord {
            rule_id: "r1".into(),
            kind: "validation".into(),
            effect: "flagged".into(),
        },
    ];
    let ids = s
        .record_runs(&[run("mail", true, 5), full.clone(), run("other", true, 9)])
        .expect("record");
    let back = s.get_run(ids[1]).expect("get").expect("stored");
    assert_eq!(back, RunRecord { id: ids[1], ..full });
    assert_eq!(s.get_run(ids[2] + 100).expect("get"), None);
    let listed: Vec<i64> = s.list_runs(2).expect("list").iter().map(|r| r.id).collect();
    assert_eq!(listed, [ids[2], ids[1]]);
    let all: Vec<i64> = s.all_runs().expect("all").iter().map(|r| r.id).collect();
    assert_eq!(all, ids);
    let recent: Vec<i64> = s
        .recent_runs_of("mail", 10)
        .expect("recent")
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(recent, [ids[1], ids[0]]);
    assert_eq!(s.nth_latest_run_id(1).expect("nth"), Some(ids[2]));
    assert_eq!(s.nth_latest_run_id(2).expect("nth"), Some(ids[1]));
    assert_eq!(
        s.nth_latest_run_id(50).expect("nth"),
        Some(ids[0]),
        "fewer runs than asked: the first"
    );
    assert_eq!(s.run_count().expect("count"), 3);
    assert_eq!(
        s.tool_errors_of("mail", "Denied", 10).expect("errors"),
        [(ids[1], "boom".to_owned())]
    );
}

fn run_ids_are_handed_out_once_across_stores_and_given_back_only_when_last(b: &dyn Backend) {
    let stores: Vec<_> = (0..3).map(|_| default_store(b)).collect();
    let mut blocks: Vec<std::ops::Range<i64>> = std::thread::scope(|scope| {
        let takers: Vec<_> = stores
            .iter()
            .map(|s| {
                scope.spawn(move || {
                    (0..20)
                        .map(|_| s.reserve_run_ids(5).expect("reserve"))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        takers
            .into_iter()
            .flat_map(|h| h.join().expect("taker"))
            .collect()
    });
    blocks.sort_by_key(|r| r.start);
    assert_eq!(blocks.len(), 60);
    for pair in blocks.windows(2) {
        assert_eq!(pair[0].end, pair[1].start, "no overlap, no gap");
    }
    let s = &stores[0];
    let last = blocks.last().cloned().expect("a block");
    let earlier = blocks[0].clone();
    assert!(!s.return_run_ids(earlier).expect("return"), "not the last");
    assert!(s.return_run_ids(last.clone()).expect("return"));
    assert_eq!(s.reserve_run_ids(1).expect("reserve").start, last.start);
    // Runs recorded with fresh ids come after every reserved one.
    let id = s.record_run(&run("a", true, 1)).expect("record");
    assert!(id > last.start, "{id}");
}

fn failure_groups_count_runs_and_tool_errors_in_the_window(b: &dyn Backend) {
    let s = default_store(b);
    let failed = |skill: &str, class: &str| {
        let mut r = run(skill, false, 1);
        r.failure_class = Some(class.into());
        r
    };
    let mut with_errors = run("b", true, 1);
    with_errors.steps = vec![
        step("tool", Some("t"), Some("Timeout")),
        step("tool", Some("t"), Some("Timeout")),
    ];
    // Outside the window of 5: the first two.
    s.record_runs(&[failed("a", "Old"), failed("a", "Old")])
        .expect("record");
    let ids = s
        .record_runs(&[
            failed("a", "Zeta"),
            failed("a", "Zeta"),
            run("a", true, 1),
            with_errors,
            failed("B", "Zeta"),
        ])
        .expect("record");
    let groups = s.failure_groups(5).expect("groups");
    let seen: Vec<_> = groups
        .iter()
        .map(|g| {
            (
                g.skill.as_str(),
                g.class.as_str(),
                g.tool_error,
                g.count,
                g.runs_affected,
                g.runs,
            )
        })
        .collect();
    // Skills sort by bytes: "B" before "a".
    assert_eq!(
        seen,
        [
            ("B", "Zeta", false, 1, 1, 1),
            ("a", "Zeta", false, 2, 2, 3),
            ("b", "Timeout", true, 2, 1, 1),
        ]
    );
    assert_eq!(groups[1].sample_runs, [ids[0], ids[1]]);
    assert_eq!(groups[2].sample_runs, [ids[3], ids[3]]);
}

/// A handler or client may put any character in a task or an answer; the
/// run must still be stored (PostgreSQL text cannot hold NUL).
fn a_run_with_nul_characters_is_stored(b: &dyn Backend) {
    let s = default_store(b);
    let mut r = run("a", false, 1);
    r.task = "before\0after".into();
    r.output = Some("\0".into());
    r.failure_message = Some("bad\0byte".into());
    r.context = serde_json::json!({"k": "v\0"});
    // A model names the tools it calls.
    r.steps = vec![step("tool", Some("t\0ool"), Some("Nul\0"))];
    r.steps[0].error = Some("e\0".into());
    let id = s.record_run(&r).expect("stored");
    let back = s.get_run(id).expect("get").expect("run");
    assert!(back.task.starts_with("before") && back.task.ends_with("after"));
    assert_eq!(back.context, r.context, "JSON escapes NUL");
    assert_eq!(back.steps.len(), 1);
}

fn report(skill: &str, artifact: &str, passed: bool) -> GateReportRow {
    GateReportRow {
        id: 0,
        skill: skill.into(),
        artifact: artifact.into(),
        capabilities_pin: "caps".into(),
        at: 1,
        passed,
        report_json: "{}".into(),
    }
}

fn approval(skill: &str, artifact: &str, report_id: i64) -> ApprovalRow {
    ApprovalRow {
        skill: skill.into(),
        artifact: artifact.into(),
        capabilities_pin: "caps".into(),
        report_id,
        at: 2,
        by: "operator".into(),
    }
}

fn an_approval_needs_a_passed_report_of_the_same_artifact(b: &dyn Backend) {
    let s = default_store(b);
    let rejected = s
        .insert_gate_report(&report("a", "h1", false))
        .expect("insert");
    assert!(
        !s.approve_handler(&approval("a", "h1", rejected))
            .expect("tx")
    );
    let passed = s
        .insert_gate_report(&report("a", "h1", true))
        .expect("insert");
    // Another artifact, another skill, other capabilities: refused.
    assert!(!s.approve_handler(&approval("a", "h2", passed)).expect("tx"));
    assert!(!s.approve_handler(&approval("b", "h1", passed)).expect("tx"));
    let mut other_caps = approval("a", "h1", passed);
    other_caps.capabilities_pin = "more".into();
    assert!(!s.approve_handler(&other_caps).expect("tx"));
    assert_eq!(s.handler_approval("a").expect("read"), None);
    assert!(s.approve_handler(&approval("a", "h1", passed)).expect("tx"));
    assert_eq!(
        s.handler_approval("a").expect("read"),
        Some(approval("a", "h1", passed))
    );
    assert_eq!(
        s.latest_gate_report_for("a", "h1")
            .expect("read")
            .map(|r| r.id),
        Some(passed)
    );
    assert_eq!(
        s.gate_report(passed).expect("read"),
        Some(GateReportRow {
            id: passed,
            ..report("a", "h1", true)
        })
    );
    assert!(s.revoke_handler_approval("a").expect("revoke"));
    assert!(!s.revoke_handler_approval("a").expect("revoke"));
}

fn old_reports_are_dropped_but_never_the_approved_one(b: &dyn Backend) {
    let s = default_store(b);
    let approved = s
        .insert_gate_report(&report("a", "h0", true))
        .expect("insert");
    assert!(
        s.approve_handler(&approval("a", "h0", approved))
            .expect("tx")
    );
    let kept = gate::REPORTS_KEPT as usize;
    let ids: Vec<i64> = (0..kept + 5)
        .map(|_| {
            s.insert_gate_report(&report("a", "h1", false))
                .expect("insert")
        })
        .collect();
    let other = s
        .insert_gate_report(&report("b", "h1", false))
        .expect("insert");
    assert!(s.gate_report(approved).expect("read").is_some());
    assert!(s.gate_report(other).expect("read").is_some());
    assert_eq!(
        s.latest_gate_report("a").expect("read").map(|r| r.id),
        ids.last().copied()
    );
    let present: Vec<bool> = ids
        .iter()
        .map(|id| s.gate_report(*id).expect("read").is_some())
        .collect();
    assert_eq!(present[..5], [false; 5], "the oldest are dropped");
    assert!(present[5..].iter().all(|p| *p), "the latest are kept");
}

/// `store migrate`: a SQLite store copied into this one.
fn a_copy_of_a_sqlite_store_is_whole_and_a_second_copy_adds_nothing(b: &dyn Backend) {
    let source = Sqlite::new();
    let from = default_store(&source);
    let mut runs: Vec<RunRecord> = (0..2_500)
        .map(|i| {
            let mut r = run(["mail", "notes", "B"][i % 3], i % 4 != 0, i as i64);
            r.task = format!("task {i}");
            if i % 7 == 0 {
                r.steps = vec![
                    step("tool", Some("read"), None),
                    step("tool", Some("send"), Some("Denied")),
                ];
                r.rules_applied = vec![AppliedRecord {
                    rule_id: format!("r{i}"),
                    kind: "prevention".into(),
                    effect: "set".into(),
                }];
            }
            r
        })
        .collect();
    let ids = from.record_runs(&runs).expect("record");
    for (r, id) in runs.iter_mut().zip(&ids) {
        r.id = *id;
    }
    let verdict = Verdict {
        ok: false,
        class: Some("ToneError".into()),
        note: None,
        at: 9,
    };
    assert!(from.mark_run(ids[5], &verdict).expect("mark"));
    from.kv_set("mail", "greeting", b"hello\0bytes")
        .expect("kv");
    let passed = from
        .insert_gate_report(&report("mail", "h1", true))
        .expect("report");
    from.insert_gate_report(&report("notes", "h2", false))
        .expect("report");
    assert!(
        from.approve_handler(&approval("mail", "h1", passed))
            .expect("approve")
    );

    let to = default_store(b);
    let mut pages = Vec::new();
    let copied = copy::copy(from.as_ref(), to.as_ref(), |n| pages.push(n)).expect("copy");
    assert_eq!(
        copied,
        copy::Copied {
            runs: 2_500,
            runs_present: 0,
            verdicts: 1,
            kv_entries: 1,
            gate_reports: 2,
            approvals: 1,
        }
    );
    assert_eq!(pages, [1_000, 2_000, 2_500]);
    assert_eq!(to.run_count().expect("count"), 2_500);
    for i in [0, 7, 1_234, 2_499] {
        assert_eq!(to.get_run(ids[i]).expect("get"), Some(runs[i].clone()));
    }
    assert_eq!(
        to.skill_usage().expect("usage"),
        from.skill_usage().expect("usage")
    );
    assert_eq!(to.verdict(ids[5]).expect("verdict"), Some(verdict));
    assert_eq!(
        to.failure_groups(10_000).expect("groups"),
        from.failure_groups(10_000).expect("groups")
    );
    assert_eq!(
        to.kv_get("mail", "greeting").expect("kv"),
        Some(b"hello\0bytes".to_vec())
    );
    assert_eq!(
        to.all_gate_reports().expect("reports"),
        from.all_gate_reports().expect("reports")
    );
    assert_eq!(
        to.handler_approval("mail").expect("approval"),
        Some(approval("mail", "h1", passed))
    );
    // New ids on the target come after the copied ones, for runs and reports.
    let next = to.record_run(&run("mail", true, 1)).expect("record");
    assert!(next > ids[2_499], "{next}");
    let report_id = to
        .insert_gate_report(&report("mail", "h3", true))
        .expect("report");
    assert!(report_id > passed, "{report_id}");

    let again = copy::copy(from.as_ref(), to.as_ref(), |_| {}).expect("copy again");
    assert_eq!(
        again,
        copy::Copied {
            runs_present: 2_500,
            ..copy::Copied::default()
        }
    );
    assert_eq!(to.run_count().expect("count"), 2_501);
}
