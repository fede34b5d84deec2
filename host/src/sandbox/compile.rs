//! Compiling a handler: the checks before a compile, the engines and
//! their linker, the caches, and the background Cranelift compile of a
//! component first run on Winch code.

use std::collections::HashSet;
use std::sync::{Arc, Condvar, Mutex, Weak};

use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, Strategy};

use super::bindings::HandlerPre;
use super::state::HostState;
use super::{
    CompileNotice, Handler, HandlerOrigin, Inner, Part, SandboxError, Tier, cache, cause, inspect,
    limits,
};
use crate::types::Chain;

/// The baseline tier: its own engine (code is tied to the engine that
/// compiled it) and linker, and the threads its compiles run on.
pub(super) struct FastTier {
    pub(super) engine: Engine,
    pub(super) linker: Linker<HostState>,
    /// Winch code on disk, so a process that exits before Cranelift is done
    /// (a one-shot CLI run) does not compile it again.
    pub(super) disk: Option<cache::DiskCache>,
    /// All cores but one: a first call's compile leaves a core to the
    /// calls already running.
    pub(super) pool: rayon::ThreadPool,
}

/// Components waiting for (or in) their background Cranelift compile.
pub(super) struct Optimiser {
    /// One thread at the lowest priority: rayon runs its jobs one at a time
    /// and the compile inside a job uses this pool's one thread, so calls
    /// always win the CPU over it.
    pub(super) pool: Option<rayon::ThreadPool>,
    pub(super) pending: Mutex<HashSet<String>>,
    pub(super) idle: Condvar,
}

/// Most components waiting for Cranelift at once: each holds its bytes. One
/// left out is queued again by a later load (see `load_async_with`).
pub(super) const MAX_PENDING: usize = 4;

impl Inner {
    pub(super) fn cached(&self, hash: &str) -> Option<Handler> {
        let m = self.memory.lock().ok()?;
        m.get(hash).map(|h| Handler {
            origin: HandlerOrigin::MemoryCache,
            ..h.clone()
        })
    }

    /// With `tiered` (the bytes, shared with the background compile) and a
    /// Winch engine, a component in no cache is compiled with Winch;
    /// otherwise with Cranelift.
    pub(super) fn load(
        self: &Arc<Self>,
        wasm: &[u8],
        hash: String,
        tiered: Option<&Arc<[u8]>>,
        on_compile: impl FnOnce(CompileNotice),
    ) -> Result<Handler, SandboxError> {
        if let Some(h) = self.cached(&hash) {
            return Ok(h);
        }
        // One compile at a time; another call may have compiled it while
        // this one waited.
        let _one = self.compiling.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(h) = self.cached(&hash) {
            return Ok(h);
        }
        let fast = tiered.zip(self.fast.as_ref());
        if let Some(loaded) = self.from_disk(&hash, fast) {
            return loaded;
        }
        self.precheck(wasm)?;
        on_compile(CompileNotice {
            hash: hash.clone(),
            bytes: wasm.len(),
            tier: if fast.is_some() {
                Tier::Baseline
            } else {
                Tier::Optimized
            },
        });
        if let Some(fast) = fast
            && let Some(h) = self.compile_fast(wasm, &hash, fast)
        {
            return h;
        }
        self.compile_optimized(wasm, hash)
    }

    /// The handler from a disk cache, if one holds it: Cranelift's code
    /// when there is some (a cache hit never uses Winch), else Winch's,
    /// with Cranelift's compile queued.
    fn from_disk(
        self: &Arc<Self>,
        hash: &str,
        fast: Option<(&Arc<[u8]>, &FastTier)>,
    ) -> Option<Result<Handler, SandboxError>> {
        if let Some(c) = self.disk.as_ref().and_then(|d| d.load(&self.engine, hash)) {
            return Some(self.link(
                &self.linker,
                &c,
                hash.to_owned(),
                HandlerOrigin::DiskCache,
                Tier::Optimized,
            ));
        }
        let (shared, fast) = fast?;
        let c = fast
            .disk
            .as_ref()
            .and_then(|d| d.load(&fast.engine, hash))?;
        let linked = self.link(
            &fast.linker,
            &c,
            hash.to_owned(),
            HandlerOrigin::DiskCache,
            Tier::Baseline,
        );
        if linked.is_ok() {
            self.optimise_later(hash.to_owned(), shared.clone());
        }
        Some(linked)
    }

    /// Winch's compile, Cranelift's queued after it; None when Winch
    /// cannot compile the component (it refuses proposals it lacks with an
    /// error; a panic is caught all the same), so that Cranelift has the
    /// last word on it.
    fn compile_fast(
        self: &Arc<Self>,
        wasm: &[u8],
        hash: &str,
        (shared, fast): (&Arc<[u8]>, &FastTier),
    ) -> Option<Result<Handler, SandboxError>> {
        let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            fast.pool.install(|| Component::new(&fast.engine, wasm))
        }));
        let c = match compiled {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                tracing::warn!(
                    "Winch cannot compile handler {hash} ({e:#}); compiling it with Cranelift"
                );
                return None;
            }
            Err(_) => {
                tracing::warn!("Winch failed on handler {hash}; compiling it with Cranelift");
                return None;
            }
        };
        let linked = self.link(
            &fast.linker,
            &c,
            hash.to_owned(),
            HandlerOrigin::Compiled,
            Tier::Baseline,
        );
        if linked.is_ok() {
            if let Some(d) = &fast.disk {
                let _ = d.store(hash, &c);
            }
            self.optimise_later(hash.to_owned(), shared.clone());
        }
        Some(linked)
    }

    /// Cranelift's compile, stored in the disk cache.
    fn compile_optimized(
        self: &Arc<Self>,
        wasm: &[u8],
        hash: String,
    ) -> Result<Handler, SandboxError> {
        let c = Component::new(&self.engine, wasm)
            .map_err(|e| SandboxError::InvalidComponent(cause(e)))?;
        let h = self.link(
            &self.linker,
            &c,
            hash.clone(),
            HandlerOrigin::Compiled,
            Tier::Optimized,
        )?;
        if let Some(d) = &self.disk {
            // A cache that cannot be written only costs speed.
            let _ = d.store(&hash, &c);
        }
        Ok(h)
    }

    /// Links a compiled component as a handler and keeps it in memory,
    /// replacing what was there (Winch's code, once Cranelift's is ready).
    /// Only what links as a handler is worth keeping, so callers write the
    /// disk cache after this.
    pub(super) fn link(
        &self,
        linker: &Linker<HostState>,
        component: &Component,
        hash: String,
        origin: HandlerOrigin,
        tier: Tier,
    ) -> Result<Handler, SandboxError> {
        let pre = linker
            .instantiate_pre(component)
            .map_err(|e| SandboxError::WrongWorld(cause(e)))?;
        let pre = HandlerPre::new(pre).map_err(|e| SandboxError::WrongWorld(cause(e)))?;
        let handler = Handler {
            pre,
            hash: hash.clone(),
            origin,
            tier,
        };
        if let Ok(mut m) = self.memory.lock() {
            m.insert(hash, handler.clone());
        }
        Ok(handler)
    }

    /// Queues the Cranelift compile of a component that runs on Winch code,
    /// unless it is queued already or the queue is full.
    pub(super) fn optimise_later(self: &Arc<Self>, hash: String, wasm: Arc<[u8]>) {
        let Some(pool) = &self.optimiser.pool else {
            return;
        };
        {
            let mut pending = self
                .optimiser
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if pending.len() >= MAX_PENDING || !pending.insert(hash.clone()) {
                return;
            }
        }
        // A dropped sandbox skips what is still queued.
        let weak: Weak<Inner> = Arc::downgrade(self);
        pool.spawn(move || {
            if let Some(inner) = weak.upgrade() {
                // A panic in a rayon job would abort the host.
                let optimise = std::panic::AssertUnwindSafe(|| inner.optimise(&hash, &wasm));
                if std::panic::catch_unwind(optimise).is_err() {
                    tracing::warn!("Cranelift failed on handler {hash}; it keeps Winch's code");
                }
                let mut pending = inner
                    .optimiser
                    .pending
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                pending.remove(&hash);
                if pending.is_empty() {
                    inner.optimiser.idle.notify_all();
                }
            }
        });
    }

    /// The background tier: the same bytes, already checked by `precheck`
    /// and linked once, compiled with Cranelift on the optimiser's one
    /// low-priority thread. No caller waits on it, so the compile timeout
    /// (a caller's wait) does not apply; the size limits did, before Winch.
    pub(super) fn optimise(&self, hash: &str, wasm: &[u8]) {
        let c = match Component::new(&self.engine, wasm) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(
                    "Cranelift cannot compile handler {hash} ({e:#}); it keeps Winch's code"
                );
                return;
            }
        };
        if let Err(e) = self.link(
            &self.linker,
            &c,
            hash.to_owned(),
            HandlerOrigin::Compiled,
            Tier::Optimized,
        ) {
            tracing::warn!(
                "handler {hash} compiled by Cranelift does not link ({}); it keeps Winch's code",
                Chain(&e)
            );
            return;
        }
        if let Some(d) = &self.disk
            && d.store(hash, &c).is_ok()
            && let Some(f) = self.fast.as_ref().and_then(|f| f.disk.as_ref())
        {
            // Cranelift's code is what later starts load from now on.
            f.remove(hash);
        }
    }

    /// What can be known without compiling: the size, the largest function
    /// (compile time and memory grow with it), and whether the component's
    /// types fit the handler world.
    pub(super) fn precheck(&self, wasm: &[u8]) -> Result<(), SandboxError> {
        let max = self.options.max_component_bytes;
        if wasm.len() > max {
            return Err(SandboxError::TooLarge {
                part: Part::Component,
                size: wasm.len(),
                limit: max,
            });
        }
        let inspection = inspect::inspect_with(wasm, inspect::Bodies::LeaveToCompiler)
            .map_err(|e| SandboxError::InvalidComponent(Arc::new(e)))?;
        if !inspection.problems.is_empty() {
            return Err(SandboxError::NotAHandler(inspection.problems));
        }
        let max = self.options.max_function_bytes;
        if inspection.largest_function > max {
            return Err(SandboxError::TooLarge {
                part: Part::Function,
                size: inspection.largest_function,
                limit: max,
            });
        }
        Ok(())
    }
}

/// An engine for one compiler. What calls rely on is the same for both:
/// the component model, epoch interruption (time limits and yields), the
/// allocator chosen, async host calls (wasmtime's default).
pub(super) fn new_engine(strategy: Strategy, pooling: bool) -> Result<Engine, SandboxError> {
    let mut config = Config::new();
    config.strategy(strategy);
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    // Component-model async is off, so its per-store state only costs:
    // dropping a store resumed a kept fiber with an error, whose
    // backtrace (under RUST_BACKTRACE) took a third of a trivial call
    // and a process-wide unwinder lock (`benches/sandbox.rs`).
    config.concurrency_support(false);
    if pooling {
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(limits::pooling_config()));
    }
    Engine::new(&config).map_err(SandboxError::engine)
}

/// The host interface, linked once per engine.
pub(super) fn new_linker(engine: &Engine) -> Result<Linker<HostState>, SandboxError> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(SandboxError::engine)?;
    crate::grants::file_guard::add_to_linker(&mut linker, HostState::guarded_fs)
        .map_err(SandboxError::engine)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)
        .map_err(SandboxError::engine)?;
    super::host_api::add_to_linker(&mut linker).map_err(SandboxError::engine)?;
    crate::grants::link_capabilities(&mut linker).map_err(SandboxError::engine)?;
    Ok(linker)
}

/// Threads that compiles run on: wasmtime compiles functions in parallel
/// on the rayon pool it is called from, so the pool's size is how many
/// cores a compile takes.
pub(super) fn compile_pool(
    name: &'static str,
    threads: usize,
    lowest_priority: bool,
) -> Result<rayon::ThreadPool, SandboxError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("{name}-{i}"))
        .start_handler(move |_| {
            if lowest_priority {
                crate::sys::lower_thread_priority();
            }
        })
        .build()
        .map_err(SandboxError::engine)
}
