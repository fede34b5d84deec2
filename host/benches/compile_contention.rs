//! Eight MCP clients over streamable HTTP call a trivial handler (the echo
//! test guest) while a ninth client's first call compiles the 12 MB
//! JavaScript example: the trivial calls' p99 latency while it compiles,
//! as a ratio to their p99 in the 8 s before and after it (target ≤ 2×;
//! measuring on both sides keeps a machine whose load drifts from
//! skewing the ratio either way), once with
//! `compiler = "tiered"` (the window ends when Cranelift's code is cached)
//! and once with `compiler = "cranelift"` (it ends with the first call).
//! Prints `RATIO compile-contention: ...` lines.
//!
//! The JavaScript component is found as in `benches/compile.rs`; a custom
//! section with a fresh nonce makes it new to the shared component cache,
//! and its cache files are removed afterwards.
//!
//! Run: `cargo bench -p skillhost --bench compile_contention` (release).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use harness::Workspace;
use harness::mcp_http::{McpHttpServer, McpSession};
use sha2::{Digest, Sha256};

const CLIENTS: u64 = 8;
const IDLE: Duration = Duration::from_secs(8);

fn js_component() -> Option<Vec<u8>> {
    let path = std::env::var_os("SKILLHOST_BENCH_JS")
        .map(PathBuf::from)
        .unwrap_or_else(|| harness::repo_root().join("examples/js/unit-converter/handler.wasm"));
    std::fs::read(path).ok()
}

/// `wasm` with a custom section appended: other bytes, the same code.
fn with_custom_section(wasm: &[u8], name: &str) -> Vec<u8> {
    let mut payload = leb(name.len());
    payload.extend_from_slice(name.as_bytes());
    let mut out = wasm.to_vec();
    out.push(0);
    out.extend(leb(payload.len()));
    out.extend(payload);
    out
}

fn leb(mut n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// The component cache's files for one component (its name starts with
/// 40 hex digits of the content hash).
fn cache_files(wasm: &[u8]) -> Vec<PathBuf> {
    let hex: String = Sha256::digest(wasm)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let root = harness::cache_dir();
    [root.clone(), root.join("components")]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&hex[..40]))
        })
        .collect()
}

fn p99(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() * 99 / 100).copied().unwrap_or_default()
}

fn main() {
    let Some(js) = js_component() else {
        println!(
            "SKIP compile-contention: no JavaScript example; run examples/js/unit-converter/build.sh \
             or set SKILLHOST_BENCH_JS to a built handler.wasm"
        );
        return;
    };
    // `SKILLHOST_BENCH_COMPILERS=tiered` runs one.
    let compilers =
        std::env::var("SKILLHOST_BENCH_COMPILERS").unwrap_or_else(|_| "tiered,cranelift".into());
    for compiler in compilers.split(',') {
        run(compiler.trim(), &js);
    }
}

fn run(compiler: &str, js: &[u8]) {
    let nonce = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let wasm = with_custom_section(js, &format!("skillhost-bench-{nonce}"));
    let ws = contention_workspace(compiler, &wasm);
    let skills = ws.skills.display().to_string();
    let server = McpHttpServer::start(&ws, &["--skills", &skills]);
    let rt = harness::runtime();
    let phases = rt.block_on(async {
        let session = McpSession::open(&server.url).await;
        let warm = session.call_skill(1, "trivial", "hello").await;
        assert_eq!(warm["isError"], false, "{warm}");
        measure(&session, compiler, &wasm).await
    });
    drop(server);
    for f in cache_files(&wasm) {
        let _ = std::fs::remove_file(f);
    }
    phases.print(compiler);
}

/// A workspace with the trivial echo skill and the JS skill (`wasm`),
/// compiled by `compiler`.
fn contention_workspace(compiler: &str, wasm: &[u8]) -> Workspace {
    let ws = Workspace::new();
    let front = "metadata:\n  skillhost:\n    handler: handler.wasm";
    ws.add_skill("trivial", front, Some(&harness::guest("echo-guest")));
    let js_dir = ws.add_skill("js", front, None);
    std::fs::write(js_dir.join("handler.wasm"), wasm).expect("write js");
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        format!("[sandbox]\ncompiler = \"{compiler}\"\n"),
    )
    .expect("write config");
    ws
}

/// The trivial calls' times, and when the JS handler's compile started,
/// answered its first call, and ended.
struct Phases {
    samples: Vec<(Instant, Duration)>,
    started: Instant,
    first_done: Instant,
    ended: Instant,
}

/// Clients call the trivial skill throughout: idle, while the JS handler
/// compiles (its first call), and idle again.
async fn measure(session: &McpSession, compiler: &str, wasm: &[u8]) -> Phases {
    let stop = Arc::new(AtomicBool::new(false));
    let samples = Arc::new(Mutex::new(Vec::<(Instant, Duration)>::new()));
    let clients = spawn_clients(session, &stop, &samples);
    tokio::time::sleep(IDLE).await;
    let started = Instant::now();
    let first = session.call_skill(2, "js", "convert 5 km to mi").await;
    let first_done = Instant::now();
    assert_eq!(first["isError"], false, "{first}");
    if compiler == "tiered" {
        wait_for_cranelift(wasm, started).await;
    }
    let ended = Instant::now();
    tokio::time::sleep(IDLE).await;
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.await.expect("client");
    }
    let samples = samples.lock().expect("samples").clone();
    Phases {
        samples,
        started,
        first_done,
        ended,
    }
}

/// `CLIENTS` tasks calling the trivial skill until `stop`, each call's
/// start and time put in `samples`.
fn spawn_clients(
    session: &McpSession,
    stop: &Arc<AtomicBool>,
    samples: &Arc<Mutex<Vec<(Instant, Duration)>>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let ids = Arc::new(AtomicU64::new(100));
    (0..CLIENTS)
        .map(|_| {
            let (s, stop, ids, samples) =
                (session.clone(), stop.clone(), ids.clone(), samples.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let id = ids.fetch_add(1, Ordering::Relaxed);
                    let t = Instant::now();
                    let r = s.call_skill(id, "trivial", "hello").await;
                    let took = t.elapsed();
                    assert_eq!(r["isError"], false, "{r}");
                    samples.lock().expect("samples").push((t, took));
                }
            })
        })
        .collect()
}

/// Tiered: the first file cached is Winch's code (the background job
/// writes it before compiling); the window ends when another
/// (Cranelift's) is there.
async fn wait_for_cranelift(wasm: &[u8], started: Instant) {
    let mut winch = Vec::new();
    while started.elapsed() < Duration::from_secs(900) {
        let now = cache_files(wasm);
        if winch.is_empty() {
            winch = now;
        } else if now.iter().any(|f| !winch.contains(f)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

impl Phases {
    /// The calls that started in `from..to`.
    fn window(&self, from: Instant, to: Instant) -> Vec<Duration> {
        self.samples
            .iter()
            .filter(|(t, _)| *t >= from && *t < to)
            .map(|(_, d)| *d)
            .collect()
    }

    /// The p99 while compiling, and until the first call answered, against idle.
    fn print(&self, compiler: &str) {
        let (started, first_done, ended) = (self.started, self.first_done, self.ended);
        // The first second of the idle phase warms connections up.
        let mut idle = self.window(started - IDLE + Duration::from_secs(1), started);
        idle.extend(self.window(ended, ended + IDLE));
        let busy = self.window(started, ended);
        let first_phase = self.window(started, first_done);
        let (pi, pb) = (p99(idle.clone()), p99(busy.clone()));
        println!(
            "RATIO compile-contention ({compiler}): trivial calls' p99 while compiling {pb:?} ({} calls over {:?}) / idle {pi:?} ({} calls) = {:.2}x (target <= 2)",
            busy.len(),
            ended - started,
            idle.len(),
            pb.as_secs_f64() / pi.as_secs_f64()
        );
        println!(
            "RATIO compile-contention ({compiler}): until the first call answered ({:?}): p99 {:?} ({} calls) = {:.2}x idle",
            first_done - started,
            p99(first_phase.clone()),
            first_phase.len(),
            p99(first_phase).as_secs_f64() / pi.as_secs_f64()
        );
    }
}
