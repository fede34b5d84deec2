//! Spinning handlers under `skillhost mcp --http`: how long after its time
//! limit each of 8 concurrent spins ends, as a ratio to the limit (target
//! ≤ 1.5×), and a ping's latency during the spins, as a ratio to the same
//! ping on an idle server. Prints `RATIO mcp-spin: ...` lines.
//!
//! Run: `cargo bench -p skillhost --bench mcp_spin` (release profile).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::time::{Duration, Instant};

use harness::mcp_http::{McpSession, hostile_server};

const LIMIT_MS: u64 = 1000;
const SPINS: u64 = 8;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let (_ws, server) = hostile_server(LIMIT_MS);
    let rt = harness::runtime();
    rt.block_on(async {
        let session = McpSession::open(&server.url).await;
        let warm = session.call_skill(1, "hostile", "ok").await;
        assert_eq!(warm["isError"], false, "{warm}");
        let mut id = 10;
        let mut idle = Vec::new();
        for _ in 0..50 {
            id += 1;
            idle.push(ping(&session, id).await);
        }
        let started = Instant::now();
        let spins = start_spins(&session, started);
        let mut busy = Vec::new();
        while started.elapsed() < Duration::from_millis(LIMIT_MS * 3 / 4) {
            id += 1;
            busy.push(ping(&session, id).await);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut ends = Vec::new();
        for s in spins {
            ends.push(s.await.expect("spin"));
        }
        print_ratios(ends, idle, busy);
    });
}

/// How long a `ping` takes to answer.
async fn ping(session: &McpSession, id: u64) -> Duration {
    let t = Instant::now();
    let r = session.request(id, "ping", serde_json::json!({})).await;
    assert!(r.get("error").is_none(), "{r}");
    t.elapsed()
}

/// `SPINS` calls that spin past their limit, each answering when (since
/// `started`) it ended.
fn start_spins(session: &McpSession, started: Instant) -> Vec<tokio::task::JoinHandle<Duration>> {
    (0..SPINS)
        .map(|i| {
            let s = session.clone();
            tokio::spawn(async move {
                let r = s.call_skill(1000 + i, "hostile", "spin").await;
                assert_eq!(r["isError"], true, "{r}");
                started.elapsed()
            })
        })
        .collect()
}

/// When the spins ended against their limit, and the pings during them
/// against idle ones.
fn print_ratios(ends: Vec<Duration>, idle: Vec<Duration>, busy: Vec<Duration>) {
    let limit = Duration::from_millis(LIMIT_MS);
    let worst = ends.iter().max().copied().unwrap_or_default();
    println!(
        "RATIO mcp-spin: {SPINS} concurrent spins of limit {LIMIT_MS} ms ended after {:?} (median) / {worst:?} (last) = {:.2}x / {:.2}x the limit",
        median(ends.clone()),
        median(ends.clone()).as_secs_f64() / limit.as_secs_f64(),
        worst.as_secs_f64() / limit.as_secs_f64()
    );
    let (i, b) = (median(idle), median(busy.clone()));
    let busy_max = busy.iter().max().copied().unwrap_or_default();
    println!(
        "RATIO mcp-spin: ping during the spins {b:?} (median of {}, max {busy_max:?}) / idle {i:?} = {:.1}x",
        busy.len(),
        b.as_secs_f64() / i.as_secs_f64()
    );
}
