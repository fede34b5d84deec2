//! The whole run path against the sandbox call it wraps, measured in the
//! same run: `Runner::run_skill` of the trivial (echo) handler, recording
//! on, over `Sandbox::call` of the same component with the same limits.
//! Target: <= 10x. Also the same run with recording off, to show what
//! recording costs on the request path.
//!
//! `cargo bench -p skillhost --bench run_path` (release profile).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Map;
use skillhost::config::Config;
use skillhost::exec::Runner;
use skillhost::grants::Effective;
use skillhost::sandbox::{CallRequest, FileRoots, Handler, Limits, Sandbox, SandboxOptions};

const ECHO: &str = "metadata:\n  skillhost:\n    handler: handler.wasm";

/// Per-call times of `n` calls of `f`, after a warm-up.
fn times(n: usize, mut f: impl FnMut()) -> Vec<Duration> {
    for _ in 0..n / 10 + 1 {
        f();
    }
    harness::call_times(n, f)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

struct Summary {
    median: Duration,
    p99: Duration,
    mean: Duration,
}

fn summary(mut t: Vec<Duration>) -> Summary {
    t.sort_unstable();
    let mean = t.iter().sum::<Duration>() / t.len() as u32;
    Summary {
        median: percentile(&t, 0.5),
        p99: percentile(&t, 0.99),
        mean,
    }
}

fn main() {
    let ws = harness::Workspace::new();
    ws.add_skill("echo", ECHO, Some(&harness::guest("echo-guest")));
    // A runner trusts what it read of a file only once the file's change
    // time is a clock tick older than the read (`FileIdentity`); a skill
    // written this instant is read again on every run until then.
    std::thread::sleep(Duration::from_millis(200));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");

    let recording = ws.runner(Config::default());
    let mut quiet_config = Config::default();
    quiet_config.learning.record = false;
    let quiet = ws.runner(quiet_config);
    let bare = BareCall::new();

    // Interleaved rounds, so drift on a shared machine hits every side.
    let (mut b, mut r, mut q) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..10 {
        b.extend(times(300, || bare.call(&rt)));
        r.extend(times(300, || run(&rt, &recording)));
        q.extend(times(300, || run(&rt, &quiet)));
    }
    print_results(&summary(b), &summary(r), &summary(q));
    drop(recording);
}

/// The echo component called on the sandbox directly, with the limits
/// a run would have.
struct BareCall {
    sandbox: Arc<Sandbox>,
    handler: Handler,
    roots: FileRoots,
    context: Map<String, serde_json::Value>,
    grants: Effective,
    limits: Limits,
}

impl BareCall {
    fn new() -> BareCall {
        let wasm = std::fs::read(harness::guest("echo-guest")).expect("echo wasm");
        let sandbox = Arc::new(Sandbox::new(&SandboxOptions::default()).expect("sandbox"));
        let handler = sandbox.load(&wasm).expect("load");
        let dir = std::env::temp_dir();
        BareCall {
            sandbox,
            handler,
            roots: FileRoots {
                skill_dir: dir.clone(),
                workspace: dir,
                skill_files: Vec::new(),
                control: Default::default(),
            },
            context: Map::new(),
            grants: Effective::none(),
            limits: Limits::resolve(
                &Default::default(),
                &Default::default(),
                &Config::default().limits,
            ),
        }
    }

    fn call(&self, rt: &tokio::runtime::Runtime) {
        let out = rt.block_on(self.sandbox.call(
            &self.handler,
            &CallRequest {
                skill: "echo",
                description: "hi",
                context: &self.context,
                grants: &self.grants,
                limits: self.limits,
                roots: &self.roots,
                services: Default::default(),
                entropy: Default::default(),
            },
        ));
        assert_eq!(out.result.map(|o| o.body).as_deref(), Ok("hi"));
    }
}

/// One run of the echo skill.
fn run(rt: &tokio::runtime::Runtime, runner: &Runner) {
    let catalog = runner.catalog();
    let skill = catalog.get("echo").expect("echo skill");
    let o = rt
        .block_on(runner.run_skill(skill, "bench".into(), "hi", &Map::new(), Instant::now()))
        .expect("run");
    assert!(o.failure.is_none(), "{:?}", o.failure);
    black_box(o);
}

/// Each side's figures, and the ratios: the run with recording against
/// the sandbox call, and recording on against off.
fn print_results(b: &Summary, r: &Summary, q: &Summary) {
    let show = |name: &str, s: &Summary| {
        println!(
            "{name:<28} median {:>9.1?}  p99 {:>9.1?}  mean {:>9.1?}",
            s.median, s.p99, s.mean
        )
    };
    show("sandbox call", b);
    show("run, recording on", r);
    show("run, recording off", q);
    println!(
        "RATIO run_path: run with recording {:?} / sandbox call {:?} (medians) = {:.2}x (target <= 10x); mean {:.2}x",
        r.median,
        b.median,
        r.median.as_secs_f64() / b.median.as_secs_f64(),
        r.mean.as_secs_f64() / b.mean.as_secs_f64()
    );
    println!(
        "RATIO run_path-recording: recording on {:?} / off {:?} (medians) = {:.2}x",
        r.median,
        q.median,
        r.median.as_secs_f64() / q.median.as_secs_f64()
    );
}
