//! The load test at CI size (the figures: `benches/load.rs`): many
//! sessions at once against `mcp --http` with small limits, mixing trivial
//! calls, spins and memory hoards, against one server on SQLite and three
//! on one PostgreSQL database. Outcomes only: every call is answered with
//! its result or busy, nothing hangs, and every answered call is a run in
//! the store after the servers are killed.

use std::time::Duration;

use crate::harness::load::{LoadPlan, LoadStore, run_load};
use crate::harness::postgres::TestDatabase;

#[test]
fn every_call_is_answered_or_busy_and_no_run_is_lost() {
    let plan = LoadPlan {
        sessions: 48,
        calls: 600,
        spin_every: 20,
        memory_every: 25,
        limit_ms: 200,
        // Few places and a short queue, so that some calls are refused.
        mcp_args: [
            "--max-calls",
            "4",
            "--max-queued",
            "8",
            "--max-sessions",
            "40",
        ]
        .map(String::from)
        .to_vec(),
        guard: Duration::from_secs(300),
        store: LoadStore::Sqlite,
    };
    let report = run_load(&plan);
    eprintln!("{}", report.summary());
    assert!(report.failures.is_empty(), "{:#?}", report.failures);
    assert_eq!(
        report.answered + report.busy,
        plan.calls,
        "every call answered"
    );
    // 48 sessions for 40 places: some were told to come back, and did.
    assert!(report.sessions_busy > 0, "{}", report.summary());
    // 48 clients against 4 places and 8 queue slots, spins holding places.
    assert!(report.busy > 0, "{}", report.summary());
    assert!(report.answered > 0, "{}", report.summary());
    assert_eq!(report.runs_stored, report.runs_expected, "lost runs");
}

/// Three hosts, each serving MCP over HTTP, on one PostgreSQL database:
/// the sessions spread over them, every answered call on any of them is a
/// run in the shared database once all three are killed.
#[test]
fn three_hosts_on_one_postgres_database_lose_no_run_under_load() {
    let Some(db) = TestDatabase::new("load_three_hosts") else {
        return;
    };
    let plan = LoadPlan {
        sessions: 24,
        calls: 300,
        spin_every: 20,
        memory_every: 25,
        limit_ms: 200,
        // Few places per host, so that some calls are refused.
        mcp_args: ["--max-calls", "2", "--max-queued", "2"]
            .map(String::from)
            .to_vec(),
        guard: Duration::from_secs(300),
        store: LoadStore::Postgres {
            url: db.url.clone(),
            hosts: 3,
        },
    };
    let report = run_load(&plan);
    eprintln!("{}", report.summary());
    assert!(report.failures.is_empty(), "{:#?}", report.failures);
    assert_eq!(
        report.answered + report.busy,
        plan.calls,
        "every call answered"
    );
    assert!(report.answered > 0, "{}", report.summary());
    // The answered calls of all three hosts and their warm-up calls.
    assert_eq!(report.runs_stored, report.runs_expected, "lost runs");
}
