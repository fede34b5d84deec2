//! `store migrate` on 100,000 runs: a SQLite store copied into PostgreSQL,
//! against the same copy into a fresh SQLite file as the baseline, measured
//! in the same run; then the second, idempotent pass (nothing new).
//!
//! Needs a server: SKILLHOST_TEST_POSTGRES_URL (the bench makes and drops a
//! database of its own). One timed pass each: a copy of 100,000 runs is
//! long enough to time alone. `cargo bench --bench store_migrate`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

use std::time::Instant;

use serde_json::json;
use skillhost::store::copy::{self, Copied};
use skillhost::store::{
    AppliedRecord, KvQuota, KvStore, PgStore, RunLog, RunRecord, RunStore, SqliteStore, StepRecord,
    Verdict,
};

const RUNS: usize = 100_000;

fn run(i: usize) -> RunRecord {
    let failed = i.is_multiple_of(4);
    let mut r = RunRecord::new(format!("skill-{}", i % 20), !failed, i as i64);
    r.task = format!("task number {i}: write to Dana at 3pm");
    r.tier = "model".into();
    r.failure_class = failed.then(|| "TimezoneError".to_owned());
    r.context = json!({"timezone": "", "n": i});
    r.output = (!failed).then(|| "Subject: ok\n\nDear Dana, ...".to_owned());
    r.model_calls = 1;
    r.origin = "bench".into();
    if i.is_multiple_of(5) {
        let step = |tool: &str| StepRecord {
            kind: "tool".into(),
            tool: Some(tool.into()),
            detail: json!({"arguments": {"path": "notes.md"}}),
            error: None,
            error_class: None,
            duration_us: 40,
        };
        r.steps = vec![step("read_file"), step("write_file")];
        r.rules_applied = vec![AppliedRecord {
            rule_id: "timezone-default".into(),
            kind: "prevention".into(),
            effect: "set timezone".into(),
        }];
    }
    r
}

fn admin(url: &str, sql: &str) {
    PgStore::execute_on(url, sql).expect(sql);
}

fn timed(from: &dyn RunStore, to: &dyn RunStore) -> (f64, Copied) {
    let start = Instant::now();
    let copied = copy::copy(from, to, |_| {}).expect("copy");
    (start.elapsed().as_secs_f64(), copied)
}

fn main() {
    let Ok(admin_url) = std::env::var("SKILLHOST_TEST_POSTGRES_URL") else {
        println!("store_migrate: skipped (set SKILLHOST_TEST_POSTGRES_URL=postgres://...)");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let source = source_store(&dir.path().join("source.db"));
    let unlimited = KvQuota {
        max_bytes: u64::MAX,
        max_keys: u64::MAX,
    };
    let sqlite = SqliteStore::open(&dir.path().join("copy.db"))
        .expect("target")
        .with_kv_quota(unlimited);
    let (t_sqlite, c_sqlite) = timed(&source, &sqlite);

    let db = format!("skillhost_bench_{}", std::process::id());
    admin(&admin_url, &format!("DROP DATABASE IF EXISTS {db}"));
    admin(&admin_url, &format!("CREATE DATABASE {db}"));
    let base = admin_url.split('?').next().unwrap_or(&admin_url);
    let server = base.rsplit_once('/').map_or(base, |(s, _)| s);
    let pg = PgStore::open(&format!("{server}/{db}"))
        .expect("PostgreSQL")
        .with_kv_quota(unlimited);
    let (t_pg, c_pg) = timed(&source, &pg);
    let (t_again, c_again) = timed(&source, &pg);
    assert_eq!(c_pg, c_sqlite, "both copies complete");
    assert_eq!(c_again.runs, 0);
    assert_eq!(pg.run_count().expect("count"), RUNS as u64);
    drop(pg);
    admin(
        &admin_url,
        &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
    );
    print_times(&c_pg, t_pg, t_sqlite, t_again);
}

/// The store to copy: `RUNS` runs, a verdict on every 100th, 200 kv entries.
fn source_store(path: &std::path::Path) -> SqliteStore {
    let source = SqliteStore::open(path).expect("source");
    let runs: Vec<RunRecord> = (0..RUNS).map(run).collect();
    let ids = source.record_runs(&runs).expect("record");
    for id in ids.iter().step_by(100) {
        let verdict = Verdict {
            ok: false,
            class: Some("ToneError".into()),
            note: None,
            at: 1,
        };
        source.mark_run(*id, &verdict).expect("mark");
    }
    for k in 0..200 {
        source
            .kv_set(&format!("skill-{}", k % 20), &format!("key-{k}"), &[7; 512])
            .expect("kv");
    }
    source
}

/// What was copied, and the copies' times against each other.
fn print_times(c_pg: &Copied, t_pg: f64, t_sqlite: f64, t_again: f64) {
    println!(
        "copied: {} runs, {} verdicts, {} kv entries",
        c_pg.runs, c_pg.verdicts, c_pg.kv_entries
    );
    println!(
        "RATIO migrate: 100,000 runs into PostgreSQL {t_pg:.2}s ({:.0} runs/s) / into a new SQLite file {t_sqlite:.2}s = {:.2}x",
        RUNS as f64 / t_pg,
        t_pg / t_sqlite
    );
    println!(
        "RATIO migrate again: second pass (nothing new) {t_again:.2}s / first pass {t_pg:.2}s = {:.2}x",
        t_again / t_pg
    );
}
