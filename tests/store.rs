//! `skillhost store migrate` and `[store] url` at the command line: a
//! workspace's SQLite store copied into PostgreSQL, idempotently, and read
//! by another workspace (another host) that names the database.
//!
//! The PostgreSQL tests use the server SKILLHOST_TEST_POSTGRES_URL names
//! (each in a database of its own, `harness::postgres`) and say they were
//! skipped without it, except under CI, where that is a failure.

use serde_json::Value;
use skillhost::store::{KvStore, RunLog, RunRecord, SqliteStore};

use crate::harness::Workspace;
use crate::harness::postgres::{TestDatabase, use_database};

fn json(ws: &Workspace, args: &[&str]) -> Value {
    serde_json::from_str(&ws.run_ok(args)).expect("JSON")
}

const RUNS: usize = 300;

#[test]
fn migrate_copies_a_workspace_store_once_and_another_host_reads_it() {
    let Some(db) = TestDatabase::new("migrate") else {
        return;
    };
    let a = Workspace::new();
    let ids = {
        let store = SqliteStore::open_in(&a.workspace.join(".skillhost")).expect("store");
        let runs: Vec<RunRecord> = (0..RUNS)
            .map(|i| {
                let mut r = RunRecord::new(["mail", "notes"][i % 2], i % 5 != 0, i as i64);
                r.task = format!("task {i}");
                r
            })
            .collect();
        let ids = store.record_runs(&runs).expect("record");
        store.kv_set("mail", "greeting", b"hello").expect("kv");
        ids
    };
    let marked = ids[1].to_string();
    a.run_ok(&["runs", "mark", &marked, "--failed", "--class", "ToneError"]);
    a.write_harmful_summarizer_rule();

    let copied = json(&a, &["store", "migrate", "--to", &db.url, "--json"]);
    assert_eq!(copied["runs"], RUNS);
    assert_eq!(copied["shared"]["rules"], 1, "{copied}");
    assert_eq!(copied["runs_present"], 0);
    assert_eq!(copied["verdicts"], 1);
    assert_eq!(copied["kv_entries"], 1);
    // Again: nothing new.
    let again = json(&a, &["store", "migrate", "--to", &db.url, "--json"]);
    assert_eq!(again["runs"], 0);
    assert_eq!(again["runs_present"], RUNS);
    assert_eq!(again["verdicts"], 0);
    assert_eq!(again["shared"]["rules"], 0, "{again}");

    // Another host names the database: it sees every run, the verdict, the
    // usage statistics, and records after the copied ids.
    let b = Workspace::new();
    use_database(&b, &db.url);
    let listed = json(&b, &["runs", "list", "--limit", "1000", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(RUNS));
    let shown = b.run_ok(&["runs", "show", &marked]);
    assert!(shown.contains("ToneError"), "{shown}");
    // The rules A had learned are the ones every host on the store reads.
    let rules = b.run_ok(&["rules", "list"]);
    assert!(rules.contains("prevent-bad-text-summarizer"), "{rules}");
    let skills = json(&b, &["skills", "list", "--json"]);
    assert!(skills.is_array(), "{skills}");
    let store = skillhost::store::PgStore::open(&db.url).expect("open");
    assert_eq!(store.run_count().expect("count"), RUNS as u64);
    let next = store
        .record_run(&RunRecord::new("mail", true, 1))
        .expect("record");
    assert!(next > ids[RUNS - 1], "{next}");
    assert_eq!(
        store.kv_get("mail", "greeting").expect("kv"),
        Some(b"hello".to_vec())
    );

    // Another workspace's store into the same database: its runs would
    // mix with A's under the same ids. Refused, naming why; nothing copied.
    let c = Workspace::new();
    SqliteStore::open_in(&c.workspace.join(".skillhost"))
        .expect("store")
        .record_runs(&[RunRecord::new("other", true, 7)])
        .expect("record");
    let r = c.run_cli(&["store", "migrate", "--to", &db.url]);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stderr.contains("not a copy of this store"),
        "{}",
        r.stderr
    );
    assert_eq!(store.run_count().expect("count"), RUNS as u64 + 1);
}

#[test]
fn a_bad_target_or_store_url_is_named() {
    let ws = Workspace::new();
    let r = ws.run_cli(&["store", "migrate", "--to", "postgres://127.0.0.1:1/x"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("nothing to migrate"), "{}", r.stderr);

    SqliteStore::open_in(&ws.workspace.join(".skillhost")).expect("a store");
    let r = ws.run_cli(&["store", "migrate", "--to", "mysql://db/x"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("--to"), "{}", r.stderr);
    let r = ws.run_cli(&[
        "store",
        "migrate",
        "--to",
        "postgres://u:hunter2@127.0.0.1:1/x",
    ]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("cannot connect") && r.stderr.contains("--to"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("hunter2"), "{}", r.stderr);

    use_database(&ws, "postgres://u:hunter2@127.0.0.1:1/x");
    let r = ws.run_cli(&["runs", "list"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("`url` in [store]"), "{}", r.stderr);
    assert!(!r.stderr.contains("hunter2"), "{}", r.stderr);
    use_database(&ws, "sqlite:///tmp/x.db");
    let r = ws.run_cli(&["runs", "list"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("skillhost.toml") && r.stderr.contains("`url` in [store]"),
        "{}",
        r.stderr
    );
}

/// Three hosts (workspaces of their own) recording runs into one database
/// at once: every run is stored once, under an id no other host used, and
/// the usage statistics count them all.
#[test]
fn three_hosts_recording_at_once_lose_no_run() {
    let Some(db) = TestDatabase::new("three_hosts") else {
        return;
    };
    const PER_HOST: usize = 4;
    let hosts: Vec<Workspace> = (0..3).map(|_| Workspace::new()).collect();
    for ws in &hosts {
        use_database(ws, &db.url);
    }
    std::thread::scope(|scope| {
        for (h, ws) in hosts.iter().enumerate() {
            scope.spawn(move || {
                for i in 0..PER_HOST {
                    let task = format!("write an email to Bob about lunch, host {h} run {i}");
                    ws.run_ok(&["run", "--skill", "email-writer", &task]);
                }
            });
        }
    });
    let store = skillhost::store::PgStore::open(&db.url).expect("open");
    let runs = store.all_runs().expect("runs");
    assert_eq!(runs.len(), 3 * PER_HOST);
    let mut tasks: Vec<&str> = runs.iter().map(|r| r.task.as_str()).collect();
    tasks.sort_unstable();
    tasks.dedup();
    assert_eq!(tasks.len(), 3 * PER_HOST, "each run once");
    let usage = store.skill_usage().expect("usage");
    assert_eq!(usage["email-writer"].uses, (3 * PER_HOST) as u64);
    // Nothing waits in a journal.
    for ws in &hosts {
        let journal = ws.workspace.join(".skillhost/journal");
        let left = std::fs::read_dir(&journal).map_or(0, |d| d.count());
        assert_eq!(left, 0, "{}", journal.display());
    }
}
