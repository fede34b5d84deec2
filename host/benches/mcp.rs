//! What MCP costs: a `tools/call` round trip to `skillhost mcp` over stdio
//! (JSON-RPC framing, process boundary, rmcp dispatch) for the bundled Rust
//! handler `email-writer`, vs `Runner::run_skill` of the same skill
//! in-process. Both use the same compiled-component cache and are measured
//! in the same run; the ratio is printed as `RATIO mcp: ...`.

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::{Map, Value, json};
use skillhost::config::Config;
use skillhost::exec::Runner;
use skillhost::paths::Paths;
use skillhost::skill::{Catalog, LoadOptions};

const SKILL: &str = "email-writer";
const TASK: &str = "Write an email to Dana about the budget review";

/// A minimal MCP client: newline-delimited JSON-RPC on the child's pipes.
struct McpChild {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl McpChild {
    fn start(ws: &harness::Workspace) -> Self {
        let mut child = ws
            .cli()
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn skillhost mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut c = McpChild {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        let init = c.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "skillhost-bench", "version": "0" }
            }),
        );
        assert_eq!(init["serverInfo"]["name"], "skillhost", "{init}");
        c.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        c
    }

    fn send(&mut self, msg: &Value) {
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Sends a request and returns its `result`, skipping notifications.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "skillhost mcp closed stdout");
            let msg: Value = serde_json::from_str(&line).expect("JSON-RPC line");
            if msg["id"] == json!(id) {
                assert!(msg.get("error").is_none(), "{msg}");
                return msg["result"].clone();
            }
        }
    }

    fn call_tool(&mut self) -> Value {
        let r = self.request(
            "tools/call",
            json!({ "name": format!("skill_{SKILL}"), "arguments": { "task": TASK } }),
        );
        assert_eq!(r["isError"], false, "{r}");
        r
    }
}

impl Drop for McpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bench_mcp(c: &mut Criterion) {
    let ws = harness::Workspace::new();
    // The same bundled skills the binary materializes under SKILLHOST_HOME.
    let bundled = skillhost::bundled::materialize(&ws.home).expect("bundled skills");
    let paths = Paths {
        bundled: Some(bundled),
        extra_skills: Vec::new(),
        ..ws.paths()
    };
    let catalog = Catalog::load(&paths.roots(), &LoadOptions::default());
    let runner = Runner::new(paths, Config::default(), catalog);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("rt");
    let given = Map::new();
    let direct_once = || {
        let skill = runner.catalog().get(SKILL).expect("bundled email-writer");
        let o = rt
            .block_on(runner.run_skill(skill, "bench".into(), TASK, &given, Instant::now()))
            .expect("run");
        assert!(o.failure.is_none(), "{:?}", o.failure);
        o
    };
    let mut mcp = McpChild::start(&ws);
    // Warm both: compile or load the component, first instantiation.
    for _ in 0..5 {
        black_box(direct_once());
        black_box(mcp.call_tool());
    }

    let mut g = c.benchmark_group("mcp");
    g.bench_function("direct_run_skill", |b| b.iter(|| black_box(direct_once())));
    g.bench_function("mcp_stdio_tools_call", |b| {
        b.iter(|| black_box(mcp.call_tool()))
    });
    g.finish();

    // Interleaved, so both see the same machine load.
    let rounds: u32 = 200;
    let (mut direct, mut over_mcp) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        let t = Instant::now();
        black_box(direct_once());
        direct += t.elapsed();
        let t = Instant::now();
        black_box(mcp.call_tool());
        over_mcp += t.elapsed();
    }
    let (d, m) = (direct / rounds, over_mcp / rounds);
    println!(
        "RATIO mcp: tools/call over stdio {m:?} / in-process run_skill {d:?} per call = {:.2}x (+{:?} per call for MCP)",
        m.as_secs_f64() / d.as_secs_f64(),
        m.saturating_sub(d)
    );
}

criterion_group!(benches, bench_mcp);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
