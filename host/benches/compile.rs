//! The first call of a large handler with an empty cache, and the calls
//! after it: `compiler = "cranelift"` (wait for Cranelift's code) against
//! `compiler = "tiered"` (Winch's code now, Cranelift's in the background),
//! interleaved in the same run. Prints `RATIO compile: ...` lines:
//!
//! - first call, tiered / Cranelift only (target ≤ 0.25);
//! - later calls once Cranelift's code replaced Winch's, tiered / Cranelift
//!   only (target ≈ 1);
//! - for information, calls on Winch's code / Cranelift's.
//!
//! The handler is the JavaScript example (a 12 MB componentize-js
//! component): `examples/js/unit-converter/handler.wasm` once its `build.sh`
//! ran, or the file `SKILLHOST_BENCH_JS` names. `SKILLHOST_BENCH_ROUNDS`
//! sets the rounds (3).
//!
//! Run: `cargo bench -p skillhost --bench compile` (release profile).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use skillhost::sandbox::{
    CallRequest, Compiler, Effective, FileRoots, Handler, Limits, Sandbox, SandboxOptions,
    Services, Tier,
};

const TASK: &str = "convert 5 km to mi";
const ANSWER: &str = "5 km = 3.1069 mi";
/// Calls per sample of the later-call time.
const CALLS: usize = 40;

fn js_component() -> Option<(PathBuf, Vec<u8>)> {
    let path = std::env::var_os("SKILLHOST_BENCH_JS")
        .map(PathBuf::from)
        .unwrap_or_else(|| harness::repo_root().join("examples/js/unit-converter/handler.wasm"));
    std::fs::read(&path).ok().map(|b| (path, b))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

struct Bench {
    rt: tokio::runtime::Runtime,
    wasm: Arc<[u8]>,
    roots: FileRoots,
    grants: Effective,
    context: Map<String, Value>,
    _dir: tempfile::TempDir,
}

impl Bench {
    fn new(wasm: Vec<u8>) -> Bench {
        let dir = tempfile::tempdir().expect("tempdir");
        Bench {
            rt: harness::runtime(),
            wasm: Arc::from(wasm),
            roots: FileRoots {
                skill_dir: dir.path().to_path_buf(),
                workspace: dir.path().to_path_buf(),
                skill_files: Vec::new(),
                control: Default::default(),
            },
            grants: Effective::none(),
            context: Map::new(),
            _dir: dir,
        }
    }

    /// One call as the runner makes it: load (a cache hit after the first),
    /// then call.
    fn call(&self, sandbox: &Sandbox) -> Handler {
        self.rt.block_on(async {
            let handler = sandbox.load_async(self.wasm.clone()).await.expect("load");
            let req = CallRequest {
                skill: "unit-converter",
                description: TASK,
                context: &self.context,
                grants: &self.grants,
                limits: Limits::default(),
                roots: &self.roots,
                services: Services::default(),
                entropy: Default::default(),
            };
            let outcome = sandbox.call(&handler, &req).await;
            let body = outcome.result.map(|o| o.body);
            assert_eq!(body.as_deref(), Ok(ANSWER));
            handler
        })
    }

    /// A sandbox with an empty disk cache, and how long its first call took
    /// (engine set-up, compile, link, instantiate, call).
    fn first_call(&self, compiler: Compiler) -> (Sandbox, tempfile::TempDir, Duration, Tier) {
        let cache = tempfile::tempdir().expect("tempdir");
        let options = SandboxOptions {
            cache_dir: Some(cache.path().to_path_buf()),
            compiler,
            ..SandboxOptions::default()
        };
        let started = Instant::now();
        let sandbox = Sandbox::new(&options).expect("sandbox");
        let handler = self.call(&sandbox);
        (sandbox, cache, started.elapsed(), handler.tier)
    }

    fn calls(&self, sandbox: &Sandbox, expect: Tier) -> Duration {
        let mut times = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let t = Instant::now();
            let h = self.call(sandbox);
            times.push(t.elapsed());
            assert_eq!(h.tier, expect);
        }
        median(times)
    }
}

fn main() {
    let Some((path, wasm)) = js_component() else {
        println!(
            "SKIP compile: no JavaScript example; run examples/js/unit-converter/build.sh \
             or set SKILLHOST_BENCH_JS to a built handler.wasm"
        );
        return;
    };
    let rounds: usize = std::env::var("SKILLHOST_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let bench = Bench::new(wasm);
    println!(
        "compile: {} ({} bytes), {rounds} rounds",
        path.display(),
        bench.wasm.len()
    );
    let mut times = Times::default();
    for round in 0..rounds {
        times.round(&bench);
        println!(
            "round {round}: first call cranelift {:?} tiered {:?}",
            times.cold_c[round], times.cold_t[round]
        );
    }
    times.print();
}

/// Each round's times: first calls, later calls, calls on Winch's code,
/// and how long Cranelift's took to replace it.
#[derive(Default)]
struct Times {
    cold_c: Vec<Duration>,
    cold_t: Vec<Duration>,
    later_c: Vec<Duration>,
    later_t: Vec<Duration>,
    winch_calls: Vec<Duration>,
    optimise: Vec<Duration>,
}

impl Times {
    fn round(&mut self, bench: &Bench) {
        let (cranelift, _c, first, tier) = bench.first_call(Compiler::Cranelift);
        assert_eq!(tier, Tier::Optimized);
        self.cold_c.push(first);
        let (tiered, _t, first, tier) = bench.first_call(Compiler::Tiered);
        assert_eq!(tier, Tier::Baseline, "Winch compiled the component");
        self.cold_t.push(first);
        // Calls on Winch's code, while Cranelift compiles at low priority.
        let t = Instant::now();
        self.winch_calls.push(bench.calls(&tiered, Tier::Baseline));
        assert!(
            tiered.wait_optimised(Duration::from_secs(600)),
            "Cranelift finished"
        );
        self.optimise.push(t.elapsed());
        // Interleaved, so both see the same machine.
        for _ in 0..2 {
            self.later_c.push(bench.calls(&cranelift, Tier::Optimized));
            self.later_t.push(bench.calls(&tiered, Tier::Optimized));
        }
    }

    fn print(self) {
        let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
        let (cc, ct) = (median(self.cold_c), median(self.cold_t));
        println!(
            "RATIO compile: first call with an empty cache, tiered {ct:?} / Cranelift only {cc:?} = {:.3} (target <= 0.25)",
            ratio(ct, cc)
        );
        let (lc, lt) = (median(self.later_c), median(self.later_t));
        println!(
            "RATIO compile: later calls after the swap, tiered {lt:?} / Cranelift only {lc:?} = {:.3} (target ~1)",
            ratio(lt, lc)
        );
        let w = median(self.winch_calls);
        println!(
            "RATIO compile: calls on Winch's code {w:?} / Cranelift's {lc:?} = {:.2} (Cranelift's replaced it {:?} after the first call)",
            ratio(w, lc),
            median(self.optimise)
        );
    }
}
