//! Sandbox benchmarks. Each reports a ratio against a baseline measured in
//! the same run:
//! - a trivial handler called through skillhost vs the same component
//!   called through a bare wasmtime `InstancePre` (target ≤ 1.3x);
//! - start from the compiled-component cache vs compiling;
//! - calls per second with 8 concurrent tasks vs one at a time.

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::{Map, Value};
use skillhost::sandbox::{
    CallRequest, Effective, FileRoots, Handler, Limits, Sandbox, SandboxOptions,
};
use wasmtime::component::{ComponentType, Lift, Lower, ResourceTable};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

// --- The bare baseline: wasmtime, WASI and a typed call, nothing else. ---

#[derive(ComponentType, Lower)]
#[component(record)]
struct Task {
    description: String,
    #[component(name = "context-json")]
    context_json: String,
}

// Every field of the WIT record must be lifted, even those not read.
#[allow(dead_code)]
#[derive(ComponentType, Lift)]
#[component(record)]
struct Output {
    body: String,
    #[component(name = "content-type")]
    content_type: String,
    flags: Vec<String>,
}

#[derive(ComponentType, Lift)]
#[component(record)]
struct Failure {
    class: String,
    message: String,
}

struct Bare {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Bare {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

struct BareHandler {
    engine: Engine,
    pre: wasmtime::component::InstancePre<Bare>,
}

impl BareHandler {
    fn new(wasm: &[u8]) -> Self {
        let mut config = Config::new();
        config.epoch_interruption(true);
        let engine = Engine::new(&config).expect("engine");
        let component = wasmtime::component::Component::new(&engine, wasm).expect("compile");
        let mut linker = wasmtime::component::Linker::<Bare>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).expect("wasi");
        // The echo handler never calls the host interface; trap if it did.
        linker
            .define_unknown_imports_as_traps(&component)
            .expect("stubs");
        let pre = linker.instantiate_pre(&component).expect("pre");
        BareHandler { engine, pre }
    }

    async fn call(&self, description: &str) -> String {
        let mut store = Store::new(
            &self.engine,
            Bare {
                wasi: WasiCtx::builder().build(),
                table: ResourceTable::new(),
            },
        );
        store.set_epoch_deadline(u64::MAX / 2);
        let instance = self
            .pre
            .instantiate_async(&mut store)
            .await
            .expect("instantiate");
        let handle = instance
            .get_typed_func::<(Task,), (Result<Output, Failure>,)>(&mut store, "handle")
            .expect("handle export");
        let task = Task {
            description: description.to_owned(),
            context_json: "{}".into(),
        };
        let (result,) = handle.call_async(&mut store, (task,)).await.expect("call");
        match result {
            Ok(o) => o.body,
            Err(f) => format!("{}: {}", f.class, f.message),
        }
    }
}

// --- skillhost ---

struct Hosted {
    sandbox: Arc<Sandbox>,
    handler: Handler,
    roots: FileRoots,
    context: Map<String, Value>,
    grants: Effective,
}

impl Hosted {
    fn new(wasm: &[u8], roots: FileRoots) -> Self {
        let sandbox = Arc::new(Sandbox::new(&SandboxOptions::default()).expect("sandbox"));
        let handler = sandbox.load(wasm).expect("load");
        Hosted {
            sandbox,
            handler,
            roots,
            context: Map::new(),
            grants: Effective::none(),
        }
    }

    async fn call(&self, description: &str) -> String {
        let out = self
            .sandbox
            .call(
                &self.handler,
                &CallRequest {
                    skill: "echo",
                    description,
                    context: &self.context,
                    grants: &self.grants,
                    limits: Limits::default(),
                    roots: &self.roots,
                    services: Default::default(),
                },
            )
            .await;
        out.result.map(|o| o.body).unwrap_or_else(|f| f.to_string())
    }
}

fn roots() -> FileRoots {
    let dir = std::env::temp_dir();
    FileRoots {
        skill_dir: dir.clone(),
        workspace: dir,
        skill_files: Vec::new(),
        control: Default::default(),
    }
}

/// Mean time per iteration of `f`, over `n` iterations after a warm-up.
fn per_call<F: FnMut()>(n: u32, mut f: F) -> Duration {
    for _ in 0..n / 10 + 1 {
        f();
    }
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed() / n
}

fn bench_overhead(c: &mut Criterion) {
    let wasm = std::fs::read(harness::guest("echo-guest")).expect("echo wasm");
    let rt = harness::runtime();
    let bare = BareHandler::new(&wasm);
    let hosted = Hosted::new(&wasm, roots());
    assert_eq!(rt.block_on(bare.call("hi")), "hi");
    assert_eq!(rt.block_on(hosted.call("hi")), "hi");

    let mut g = c.benchmark_group("call_trivial_handler");
    g.bench_function("bare_wasmtime_instance_pre", |b| {
        b.iter(|| rt.block_on(bare.call(black_box("hi"))))
    });
    g.bench_function("skillhost_sandbox", |b| {
        b.iter(|| rt.block_on(hosted.call(black_box("hi"))))
    });
    g.finish();

    // Interleaved rounds so drift on a shared machine hits both sides.
    let (mut tb, mut th) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..5 {
        tb += per_call(400, || {
            black_box(rt.block_on(bare.call("hi")));
        });
        th += per_call(400, || {
            black_box(rt.block_on(hosted.call("hi")));
        });
    }
    println!(
        "RATIO overhead: skillhost {:?} / bare wasmtime {:?} per call = {:.2}x (target <= 1.3x)",
        th / 5,
        tb / 5,
        th.as_secs_f64() / tb.as_secs_f64()
    );
}

fn bench_cache(c: &mut Criterion) {
    let wasm = std::fs::read(harness::guest("echo-guest")).expect("echo wasm");
    let cache = tempfile::tempdir().expect("tempdir");
    let cached = SandboxOptions {
        cache_dir: Some(cache.path().to_path_buf()),
        ..SandboxOptions::default()
    };
    // Warm the disk cache once.
    Sandbox::new(&cached)
        .expect("sandbox")
        .load(&wasm)
        .expect("load");

    let start_cached = || {
        let s = Sandbox::new(&cached).expect("sandbox");
        black_box(s.load(&wasm).expect("load"));
    };
    let start_compiling = || {
        let s = Sandbox::new(&SandboxOptions::default()).expect("sandbox");
        black_box(s.load(&wasm).expect("load"));
    };
    let mut g = c.benchmark_group("process_start");
    g.sample_size(10);
    g.bench_function("from_disk_cache", |b| b.iter(start_cached));
    g.bench_function("compiling", |b| b.iter(start_compiling));
    g.finish();

    let tc = per_call(20, start_cached);
    let tn = per_call(5, start_compiling);
    println!(
        "RATIO start: compiling {:?} / cached {:?} = {:.1}x faster from the cache",
        tn,
        tc,
        tn.as_secs_f64() / tc.as_secs_f64()
    );
}

fn bench_concurrency(_c: &mut Criterion) {
    let wasm = std::fs::read(harness::guest("echo-guest")).expect("echo wasm");
    let rt = harness::runtime();
    let hosted = Arc::new(Hosted::new(&wasm, roots()));
    const CALLS: usize = 2000;
    const TASKS: usize = 8;

    let sequential = rt.block_on(async {
        let start = Instant::now();
        for _ in 0..CALLS {
            black_box(hosted.call("hi").await);
        }
        start.elapsed()
    });
    let concurrent = rt.block_on(async {
        let start = Instant::now();
        let mut joins = Vec::new();
        for _ in 0..TASKS {
            let h = hosted.clone();
            joins.push(tokio::spawn(async move {
                for _ in 0..CALLS / TASKS {
                    black_box(h.call("hi").await);
                }
            }));
        }
        for j in joins {
            j.await.expect("task");
        }
        start.elapsed()
    });
    let seq_rate = CALLS as f64 / sequential.as_secs_f64();
    let conc_rate = CALLS as f64 / concurrent.as_secs_f64();
    println!(
        "RATIO throughput: {TASKS} concurrent tasks {conc_rate:.0} calls/s / sequential {seq_rate:.0} calls/s = {:.2}x on {} cores",
        conc_rate / seq_rate,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
}

fn bench_pooling(c: &mut Criterion) {
    let wasm = std::fs::read(harness::guest("echo-guest")).expect("echo wasm");
    let rt = harness::runtime();
    let ondemand = Hosted::new(&wasm, roots());
    let pooled = {
        let sandbox = Arc::new(
            Sandbox::new(&SandboxOptions {
                pooling: true,
                ..SandboxOptions::default()
            })
            .expect("pooling sandbox"),
        );
        let handler = sandbox.load(&wasm).expect("load");
        Hosted {
            sandbox,
            handler,
            roots: roots(),
            context: Map::new(),
            grants: Effective::none(),
        }
    };
    let mut g = c.benchmark_group("allocator");
    g.bench_function("on_demand", |b| b.iter(|| rt.block_on(ondemand.call("hi"))));
    g.bench_function("pooling", |b| b.iter(|| rt.block_on(pooled.call("hi"))));
    g.finish();
    let (mut to, mut tp) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..5 {
        to += per_call(300, || {
            black_box(rt.block_on(ondemand.call("hi")));
        });
        tp += per_call(300, || {
            black_box(rt.block_on(pooled.call("hi")));
        });
    }
    println!(
        "RATIO allocator: pooling {:?} / on-demand {:?} per call = {:.2}x",
        tp / 5,
        to / 5,
        tp.as_secs_f64() / to.as_secs_f64()
    );
}

criterion_group!(
    benches,
    bench_overhead,
    bench_cache,
    bench_concurrency,
    bench_pooling
);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
