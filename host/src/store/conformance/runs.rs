//! Runs, verdicts, usage statistics and run ids.

use super::*;
use crate::skill::Usage;

pub(super) fn a_verdict_overrides_the_outcome_for_learning_and_keeps_the_record(b: &dyn Backend) {
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

pub(super) fn usage_counts_runs_and_keeps_an_ema_of_their_outcomes(b: &dyn Backend) {
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

pub(super) fn a_replayed_run_that_was_stored_is_not_counted_again(b: &dyn Backend) {
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

pub(super) fn step(kind: &str, tool: Option<&str>, error: Option<&str>) -> StepRecord {
    StepRecord {
        kind: kind.into(),
        tool: tool.map(Into::into),
        detail: serde_json::json!({"arguments": {"x": 1}}),
        error: error.map(|_| "boom".into()),
        error_class: error.map(Into::into),
        duration_us: 1,
    }
}

pub(super) fn tool_steps_stream_in_run_and_step_order(b: &dyn Backend) {
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

pub(super) fn a_run_reads_back_whole_and_listings_go_newest_first(b: &dyn Backend) {
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

pub(super) fn run_ids_are_handed_out_once_across_stores_and_given_back_only_when_last(
    b: &dyn Backend,
) {
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

pub(super) fn failure_groups_count_runs_and_tool_errors_in_the_window(b: &dyn Backend) {
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
pub(super) fn a_run_with_nul_characters_is_stored(b: &dyn Backend) {
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
