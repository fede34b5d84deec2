//! A load run against `skillhost mcp --http` on loopback: many sessions
//! at once, each making its share of calls one after another, mixing the
//! hostile guest's trivial call, a spin to its time limit and a memory
//! hoard past its memory limit. Shared by `benches/load.rs` (figures) and
//! `tests/mcp_load.rs` (outcomes only).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillhost::store::RunStore;

use super::mcp_http::{McpSession, hostile_server_with};

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    pub sessions: usize,
    pub calls: usize,
    /// One call in this many spins until its time limit.
    pub spin_every: usize,
    /// One call in this many hoards memory past its limit.
    pub memory_every: usize,
    /// The hostile skill's time limit: how long a spin holds its place.
    pub limit_ms: u64,
    /// Flags after `mcp --http ADDR` (limits).
    pub mcp_args: Vec<String>,
    /// The whole run must end within this, or it is a hang.
    pub guard: Duration,
}

/// What happened.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub sessions: usize,
    /// `initialize` answered 503 (each retried after `Retry-After`).
    pub sessions_busy: usize,
    /// Calls answered with a result (a spin's or a hoard's limit failure
    /// included): each is a run.
    pub answered: usize,
    /// Calls answered busy (HTTP 503 or the JSON-RPC busy error).
    pub busy: usize,
    /// Anything else: no answer, another status, an unexpected error.
    pub failures: Vec<String>,
    pub elapsed: Duration,
    /// Latencies of the answered calls, sorted.
    pub latencies: Vec<Duration>,
    /// The server's peak resident memory (VmHWM), in KiB.
    pub peak_rss_kb: u64,
    /// Runs in the store once the server is gone (journals replayed).
    pub runs_stored: u64,
    /// Runs there should be: the answered calls and the warm-up call.
    pub runs_expected: u64,
}

impl LoadReport {
    pub fn percentile(&self, p: f64) -> Duration {
        if self.latencies.is_empty() {
            return Duration::ZERO;
        }
        let i = ((self.latencies.len() - 1) as f64 * p).round() as usize;
        self.latencies[i]
    }

    /// Calls answered with a result, per second.
    pub fn throughput(&self) -> f64 {
        self.answered as f64 / self.elapsed.as_secs_f64()
    }

    pub fn summary(&self) -> String {
        format!(
            "{} sessions ({} busy at open), {} calls answered + {} busy in {:.2?}: {:.0} answered/s, p50 {:.2?}, p99 {:.2?}, peak RSS {} MiB, runs stored {}/{}, {} failures",
            self.sessions,
            self.sessions_busy,
            self.answered,
            self.busy,
            self.elapsed,
            self.throughput(),
            self.percentile(0.50),
            self.percentile(0.99),
            self.peak_rss_kb / 1024,
            self.runs_stored,
            self.runs_expected,
            self.failures.len()
        )
    }
}

enum Answer {
    Result,
    Busy,
    Failure(String),
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "skillhost-load", "version": "0" }
        }
    })
}

/// Opens a session, waiting `Retry-After` and trying again while busy;
/// returns it and how many times it was busy.
async fn open(url: &str) -> Result<(McpSession, usize), String> {
    let mut busy = 0;
    loop {
        let mut s = McpSession::unopened(url);
        let resp = s.post_raw(&initialize()).await;
        match resp.status().as_u16() {
            200 => {
                let id = resp
                    .headers()
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
                    .ok_or("no session id")?;
                let _ = resp.text().await;
                s.set_session(id);
                let ack = s
                    .post_raw(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
                    .await;
                if ack.status() != 202 {
                    return Err(format!("initialized: HTTP {}", ack.status()));
                }
                return Ok((s, busy));
            }
            503 => {
                busy += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            other => return Err(format!("initialize: HTTP {other}")),
        }
    }
}

async fn call(session: &McpSession, id: u64, task: &str) -> Answer {
    let msg = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "skill_hostile", "arguments": { "task": task } }
    });
    let resp = session.post_raw(&msg).await;
    let status = resp.status().as_u16();
    let body = resp.text().await.unwrap_or_default();
    let answer = body
        .lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == json!(id));
    let Some(answer) = answer else {
        return Answer::Failure(format!("{task} {id}: HTTP {status}, no answer: {body}"));
    };
    if answer["error"]["data"]["class"] == "Busy" {
        return Answer::Busy;
    }
    if status != 200 || answer.get("result").is_none() {
        return Answer::Failure(format!("{task} {id}: HTTP {status}: {answer}"));
    }
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let expected = match task {
        "ok" => text == "fine",
        // A hostile call must end at its limit, nothing else.
        _ => text.contains("LimitExceeded"),
    };
    if expected {
        Answer::Result
    } else {
        Answer::Failure(format!("{task} {id}: {text}"))
    }
}

/// The task of call number `k`.
fn task(plan: &LoadPlan, k: usize) -> &'static str {
    if k % plan.spin_every == plan.spin_every / 2 {
        "spin"
    } else if k.is_multiple_of(plan.memory_every) {
        "memory"
    } else {
        "ok"
    }
}

/// Peak resident memory of process `pid` in KiB (0 where unknown).
fn peak_rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse().ok())
        })
        .unwrap_or(0)
}

/// Starts a server, runs `plan` against it, stops it (SIGKILL: the runs
/// must survive in its journal) and counts the runs in its store.
pub fn run_load(plan: &LoadPlan) -> LoadReport {
    let mcp_args: Vec<&str> = plan.mcp_args.iter().map(String::as_str).collect();
    let (ws, server) = hostile_server_with(plan.limit_ms, &mcp_args, &[]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut report = LoadReport {
        sessions: plan.sessions,
        ..LoadReport::default()
    };
    let load = async {
        let warm = McpSession::open(&server.url).await;
        let r = warm.call_skill(1, "hostile", "ok").await;
        assert_eq!(r["isError"], false, "warm-up: {r}");

        let started = Instant::now();
        let mut tasks = Vec::new();
        for s in 0..plan.sessions {
            let (url, plan) = (server.url.clone(), plan.clone());
            tasks.push(tokio::spawn(async move {
                let mut out = (0usize, 0usize, 0usize, Vec::new(), Vec::new());
                let (session, busy) = match open(&url).await {
                    Ok(s) => s,
                    Err(e) => {
                        out.4.push(e);
                        return out;
                    }
                };
                out.0 = busy;
                // This session's calls: every `sessions`-th from `s`.
                for k in (s..plan.calls).step_by(plan.sessions) {
                    let t = Instant::now();
                    match call(&session, 10 + k as u64, task(&plan, k)).await {
                        Answer::Result => {
                            out.1 += 1;
                            out.3.push(t.elapsed());
                        }
                        Answer::Busy => out.2 += 1,
                        Answer::Failure(f) => out.4.push(f),
                    }
                }
                // Makes room for a session waiting for one.
                if !session.close().await {
                    out.4.push(format!("session {s} did not close"));
                }
                out
            }));
        }
        for t in tasks {
            let (sessions_busy, answered, busy, latencies, failures) =
                t.await.expect("session task");
            report.sessions_busy += sessions_busy;
            report.answered += answered;
            report.busy += busy;
            report.latencies.extend(latencies);
            report.failures.extend(failures);
        }
        report.elapsed = started.elapsed();
    };
    let outcome = rt.block_on(async { tokio::time::timeout(plan.guard, load).await });
    assert!(
        outcome.is_ok(),
        "the load did not end within {:?}: a hang",
        plan.guard
    );
    report.latencies.sort();
    report.peak_rss_kb = peak_rss_kb(server.pid());
    drop(server);

    let state = ws.workspace.join(".skillhost");
    let store = skillhost::store::SqliteStore::open_in(&state).expect("the store opens");
    skillhost::store::journal::replay(&state.join("journal"), &store).expect("replay");
    report.runs_stored = store.run_count().expect("count");
    report.runs_expected = report.answered as u64 + 1;
    report
}
