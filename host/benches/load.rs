//! The load test at full size: `skillhost mcp --http` on loopback with the
//! default (machine-derived) limits, at 1, 8, 64 and 1,000 concurrent
//! sessions, the largest making 20,000 calls. One call in 100 spins to its
//! 100 ms time limit, one in 100 hoards memory past its 64 MiB limit, the
//! rest are the trivial call. Prints one `LOAD` line per level:
//! throughput, p50/p99 latency of answered calls, busy answers, the
//! server's peak RSS, and runs stored against runs expected (after a
//! SIGKILL of the server: journals replayed). Fails on a lost run, an
//! unanswered call or a hang (10 minutes per level).
//!
//! Run: `cargo bench -p skillhost --bench load` (release profile).
//! `SKILLHOST_LOAD_LEVELS=SESSIONS:CALLS,...` picks other levels, and
//! `SKILLHOST_LOAD_ARGS="--max-calls 8 ..."` passes limits to the server.
//!
//! `SKILLHOST_LOAD_HOSTS=3` runs three servers (hosts, each a workspace of
//! its own) on one PostgreSQL database instead of one on SQLite, the
//! sessions spread over them in turn; the server is the one
//! `SKILLHOST_LOAD_POSTGRES_URL` (or `SKILLHOST_TEST_POSTGRES_URL`) names,
//! and each level gets a fresh database there.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::time::Duration;

use harness::load::{LoadPlan, LoadStore, run_load};
use harness::postgres::TestDatabase;

const LEVELS: &[(usize, usize)] = &[(1, 2_000), (8, 8_000), (64, 20_000), (1_000, 20_000)];

fn levels() -> Vec<(usize, usize)> {
    let Ok(spec) = std::env::var("SKILLHOST_LOAD_LEVELS") else {
        return LEVELS.to_vec();
    };
    spec.split(',')
        .map(|level| {
            let (s, c) = level
                .split_once(':')
                .expect("SKILLHOST_LOAD_LEVELS: SESSIONS:CALLS,...");
            (
                s.trim().parse().expect("sessions"),
                c.trim().parse().expect("calls"),
            )
        })
        .collect()
}

/// How many hosts on PostgreSQL, and that server's URL; `None` for one
/// host on SQLite.
fn postgres_hosts() -> Option<(usize, String)> {
    let hosts: usize = std::env::var("SKILLHOST_LOAD_HOSTS")
        .ok()?
        .trim()
        .parse()
        .expect("SKILLHOST_LOAD_HOSTS: a number of hosts");
    assert!(hosts > 0, "SKILLHOST_LOAD_HOSTS: at least 1");
    let url = ["SKILLHOST_LOAD_POSTGRES_URL", "SKILLHOST_TEST_POSTGRES_URL"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|u| !u.is_empty()))
        .expect("SKILLHOST_LOAD_HOSTS needs SKILLHOST_LOAD_POSTGRES_URL=postgres://...");
    Some((hosts, url))
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let mcp_args: Vec<String> = std::env::var("SKILLHOST_LOAD_ARGS")
        .map(|a| a.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let postgres = postgres_hosts();
    for (sessions, calls) in levels() {
        // A fresh database per level, dropped after it.
        let db = postgres
            .as_ref()
            .map(|(_, admin)| TestDatabase::on(admin, &format!("load_{sessions}_{calls}")));
        let store = match (&postgres, &db) {
            (Some((hosts, _)), Some(db)) => LoadStore::Postgres {
                url: db.url.clone(),
                hosts: *hosts,
            },
            _ => LoadStore::Sqlite,
        };
        let plan = LoadPlan {
            sessions,
            calls,
            spin_every: 100,
            memory_every: 100,
            limit_ms: 100,
            mcp_args: mcp_args.clone(),
            guard: Duration::from_secs(600),
            store,
        };
        let report = run_load(&plan);
        println!("LOAD {}", report.summary());
        assert!(
            report.failures.is_empty(),
            "{:#?}",
            &report.failures[..report.failures.len().min(20)]
        );
        assert_eq!(report.answered + report.busy, calls, "every call answered");
        assert_eq!(report.runs_stored, report.runs_expected, "lost runs");
    }
}
