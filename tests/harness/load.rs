//! A load run against `skillhost mcp --http` on loopback: many sessions
//! at once, each making its share of calls one after another, mixing the
//! hostile guest's trivial call, a spin to its time limit and a memory
//! hoard past its memory limit. One server on its workspace's SQLite file,
//! or several (hosts, each a workspace of its own) on one PostgreSQL
//! database, the sessions spread over them in turn. Shared by
//! `benches/load.rs` (figures) and `tests/mcp_load.rs` (outcomes only).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillhost::store::RunStore;

use super::Workspace;
use super::mcp_http::{McpHttpServer, McpSession, hostile_workspace, start_hostile};
use super::postgres::use_database;

/// Where the servers store their runs.
#[derive(Debug, Clone)]
pub enum LoadStore {
    /// One server, on its workspace's SQLite file.
    Sqlite,
    /// `hosts` servers, each a workspace whose `[store] url` is `url`.
    Postgres { url: String, hosts: usize },
}

impl LoadStore {
    fn hosts(&self) -> usize {
        match self {
            LoadStore::Sqlite => 1,
            LoadStore::Postgres { hosts, .. } => *hosts,
        }
    }
}

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
    pub store: LoadStore,
}

/// What happened.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub sessions: usize,
    /// Servers the sessions were spread over.
    pub hosts: usize,
    /// `initialize` answered 503 (each retried after `Retry-After`).
    pub sessions_busy: usize,
    /// Calls answered with a result (a spin's or a hoard's limit failure
    /// included): each is a run.
    pub answered: usize,
    /// Calls answered busy (HTTP 503, the JSON-RPC busy error its body).
    pub busy: usize,
    /// Anything else: no answer, another status, an unexpected error.
    pub failures: Vec<String>,
    pub elapsed: Duration,
    /// Latencies of the answered calls, sorted.
    pub latencies: Vec<Duration>,
    /// The largest of the servers' peak resident memory (VmHWM), in KiB.
    pub peak_rss_kb: u64,
    /// Runs in the store once the servers are gone (journals replayed).
    pub runs_stored: u64,
    /// Runs there should be: the answered calls and a warm-up call per
    /// server.
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
            "{} host(s), {} sessions ({} busy at open), {} calls answered + {} busy in {:.2?}: {:.0} answered/s, p50 {:.2?}, p99 {:.2?}, peak RSS {} MiB per host, runs stored {}/{}, {} failures",
            self.hosts,
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
    let Some(answer) = answer_in(&body, id) else {
        return Answer::Failure(format!("{task} {id}: HTTP {status}, no answer: {body}"));
    };
    if answer["error"]["data"]["class"] == "Busy" {
        // Calls are admitted at the HTTP front: busy is always a 503.
        if status != 503 {
            return Answer::Failure(format!("{task} {id}: Busy in HTTP {status}, not 503"));
        }
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

/// The JSON-RPC message in `body` (plain JSON or server-sent events) that
/// answers `id`.
fn answer_in(body: &str, id: u64) -> Option<Value> {
    body.lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == json!(id))
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

/// Starts the servers, runs `plan` against them, stops them (SIGKILL: the
/// runs must survive in their journals) and counts the runs in the store.
pub fn run_load(plan: &LoadPlan) -> LoadReport {
    let mcp_args: Vec<&str> = plan.mcp_args.iter().map(String::as_str).collect();
    let hosts = host_workspaces(plan);
    let servers: Vec<McpHttpServer> = hosts
        .iter()
        .map(|ws| start_hostile(ws, &mcp_args, &[]))
        .collect();
    let urls: Vec<String> = servers.iter().map(|s| s.url.clone()).collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut report = LoadReport {
        sessions: plan.sessions,
        hosts: hosts.len(),
        ..LoadReport::default()
    };
    let load = drive(plan, &urls, &mut report);
    let outcome = rt.block_on(async { tokio::time::timeout(plan.guard, load).await });
    assert!(
        outcome.is_ok(),
        "the load did not end within {:?}: a hang",
        plan.guard
    );
    report.latencies.sort();
    report.peak_rss_kb = servers
        .iter()
        .map(|s| peak_rss_kb(s.pid()))
        .max()
        .unwrap_or(0);
    drop(servers);
    report.runs_stored = stored_runs(plan, &hosts);
    report.runs_expected = (report.answered + hosts.len()) as u64;
    report
}

/// A workspace per host, each with the hostile skill and the plan's store.
fn host_workspaces(plan: &LoadPlan) -> Vec<Workspace> {
    (0..plan.store.hosts())
        .map(|_| {
            let ws = hostile_workspace(plan.limit_ms);
            if let LoadStore::Postgres { url, .. } = &plan.store {
                use_database(&ws, url);
            }
            ws
        })
        .collect()
}

/// Warms up each server with one call, then runs the plan's sessions at
/// once, round robin over the servers, and adds up what they saw.
async fn drive(plan: &LoadPlan, urls: &[String], report: &mut LoadReport) {
    for url in urls {
        let warm = McpSession::open(url).await;
        let r = warm.call_skill(1, "hostile", "ok").await;
        assert_eq!(r["isError"], false, "warm-up of {url}: {r}");
    }

    let started = Instant::now();
    let mut tasks = Vec::new();
    for s in 0..plan.sessions {
        // Round robin over the servers.
        let (url, plan) = (urls[s % urls.len()].clone(), plan.clone());
        tasks.push(tokio::spawn(session(url, s, plan)));
    }
    for t in tasks {
        let tally = t.await.expect("session task");
        report.sessions_busy += tally.sessions_busy;
        report.answered += tally.answered;
        report.busy += tally.busy;
        report.latencies.extend(tally.latencies);
        report.failures.extend(tally.failures);
    }
    report.elapsed = started.elapsed();
}

/// What one session saw.
#[derive(Default)]
struct Tally {
    /// Times `initialize` was busy before the session opened.
    sessions_busy: usize,
    answered: usize,
    busy: usize,
    latencies: Vec<Duration>,
    failures: Vec<String>,
}

/// Session number `s`: opens on `url`, makes its calls one after another
/// (every `sessions`-th from `s`) and closes.
async fn session(url: String, s: usize, plan: LoadPlan) -> Tally {
    let mut out = Tally::default();
    let (session, busy) = match open(&url).await {
        Ok(s) => s,
        Err(e) => {
            out.failures.push(e);
            return out;
        }
    };
    out.sessions_busy = busy;
    for k in (s..plan.calls).step_by(plan.sessions) {
        let t = Instant::now();
        match call(&session, 10 + k as u64, task(&plan, k)).await {
            Answer::Result => {
                out.answered += 1;
                out.latencies.push(t.elapsed());
            }
            Answer::Busy => out.busy += 1,
            Answer::Failure(f) => out.failures.push(f),
        }
    }
    // Makes room for a session waiting for one.
    if !session.close().await {
        out.failures.push(format!("session {s} did not close"));
    }
    out
}

/// Replays every host's journal into the plan's store and counts its runs.
fn stored_runs(plan: &LoadPlan, hosts: &[Workspace]) -> u64 {
    let store: Box<dyn RunStore> = match &plan.store {
        LoadStore::Sqlite => Box::new(
            skillhost::store::SqliteStore::open_in(&hosts[0].workspace.join(".skillhost"))
                .expect("the store opens"),
        ),
        LoadStore::Postgres { url, .. } => {
            Box::new(skillhost::store::PgStore::open(url).expect("the store opens"))
        }
    };
    for ws in hosts {
        let journal = ws.workspace.join(".skillhost").join("journal");
        skillhost::store::journal::replay(&journal, store.as_ref()).expect("replay");
    }
    store.run_count().expect("count")
}
