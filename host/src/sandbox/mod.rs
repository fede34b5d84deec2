//! The sandbox: one wasmtime engine, compiled components cached on disk and
//! in memory, and a fresh store per call built from the effective grants
//! and limits. A trap, a limit or a panic in a handler is a failure of that
//! call; the host and the next call carry on.

mod bindings;
mod cache;
mod config;
mod fs_guard;
mod host_api;
pub mod host_budget;
pub mod inspect;
pub mod limits;
mod outbound_http;
mod state;
mod ticker;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use serde::Serialize;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolConcurrencyLimitError, Store, Strategy, Trap,
    UpdateDeadline, WasmBacktrace,
};

pub use crate::grants::{Basis, Effective, fingerprint};

/// The `sha256:` of a component's bytes: what a handler is cached by
/// ([`Handler::hash`]) and what a gate approval is pinned to.
pub fn artifact_hash(wasm: &[u8]) -> String {
    cache::content_hash(wasm)
}

/// A component's bytes with their [`artifact_hash`], computed once: a
/// caller that checks the hash (a gate approval) and then loads the bytes
/// hashes a component of many megabytes once, not twice.
#[derive(Clone)]
pub struct Artifact {
    bytes: Arc<[u8]>,
    hash: String,
}

impl Artifact {
    pub fn new(bytes: Arc<[u8]>) -> Self {
        let hash = artifact_hash(&bytes);
        Artifact { bytes, hash }
    }

    pub fn hash(&self) -> &str {
        &self.hash
    }
}
pub use crate::types::{BoxFuture, Chain, Failure, FailureClass, Output, ServiceError};
pub use config::{Compiler, LimitDefaults, SandboxConfig};
pub use host_api::{KvHost, LogLine, ModelHost, Services, ToolHost};
use limits::LimitHit;
pub use limits::Limits;
pub use state::{FileRoots, GrantPathError};

use bindings::HandlerPre;
use host_budget::{Charged, HostBudget};
use state::HostState;
use ticker::EpochTicker;

/// Longest a failure's class may be; classes are identifiers.
const MAX_CLASS_LEN: usize = 64;

/// What a sandbox error carries as its cause: shared, so that a sandbox
/// that failed to start can give the same error to every caller.
pub type Cause = Arc<dyn std::error::Error + Send + Sync>;

/// Why a handler cannot be loaded, or the sandbox cannot start. The cause
/// (wasmtime's error, the parser's, the thread pool's) is the `source`,
/// not part of the message: `{:#}` and [`Chain`] show it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot set up the wasm engine")]
    Engine(#[source] Cause),
    #[error("not a valid WebAssembly component")]
    InvalidComponent(#[source] Cause),
    /// Its types do not fit the handler world (found without compiling).
    #[error("the component does not fit the skillhost:skill handler world: {}", .0.join("; "))]
    NotAHandler(Vec<String>),
    /// It does not link against the host interface.
    #[error("the component does not fit the skillhost:skill handler world")]
    WrongWorld(#[source] Cause),
    #[error("the component is too large to compile: {}", too_large(*.part, *.size, *.limit))]
    TooLarge {
        part: Part,
        size: usize,
        limit: usize,
    },
    #[error("compiling the component took longer than {0} ms")]
    CompileTimeout(u128),
}

/// What of a component is over a compile limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The whole component: `[sandbox] max_component_mb`.
    Component,
    /// One function body: `[sandbox] max_function_kb`.
    Function,
}

fn too_large(part: Part, size: usize, limit: usize) -> String {
    match part {
        Part::Component => {
            format!("it is {size} bytes, the limit is {limit} bytes ([sandbox] max_component_mb)")
        }
        Part::Function => format!(
            "one of its functions is {size} bytes, the limit is {limit} bytes ([sandbox] max_function_kb)"
        ),
    }
}

impl SandboxError {
    /// The failure class a run reports for this error.
    pub fn class(&self) -> FailureClass {
        match self {
            SandboxError::TooLarge { .. } | SandboxError::CompileTimeout(_) => {
                FailureClass::LimitExceeded
            }
            _ => FailureClass::HandlerUnavailable,
        }
    }

    fn engine(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        SandboxError::Engine(Arc::from(e.into()))
    }
}

/// A wasmtime error as a cause, its own chain kept.
fn cause(e: wasmtime::Error) -> Cause {
    Arc::from(e.into_boxed_dyn_error())
}

/// A compile that ended without an answer: its task panicked or was
/// cancelled.
#[derive(Debug, thiserror::Error)]
#[error("compiling stopped")]
struct CompileStopped(#[source] tokio::task::JoinError);

/// Engine settings.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    /// Where compiled components are kept; `None` disables the disk cache.
    pub cache_dir: Option<PathBuf>,
    /// Use the pooling instance allocator.
    pub pooling: bool,
    /// Largest component the host will compile.
    pub max_component_bytes: usize,
    /// Largest single function body the host will compile.
    pub max_function_bytes: usize,
    /// How long a call waits for its handler to compile.
    pub compile_timeout: Duration,
    /// Run guest code on threads of its own (see [`Sandbox`]).
    pub dedicated_threads: bool,
    /// How handlers' outbound HTTP is judged: the non-public addresses
    /// granted HTTP may still reach (operator config) and the resolver.
    pub net: crate::netguard::NetPolicy,
    /// Which compilers make a handler's code.
    pub compiler: Compiler,
}

impl SandboxOptions {
    /// The operator's sandbox settings.
    pub fn from_config(config: &SandboxConfig, cache_dir: Option<PathBuf>) -> Self {
        let bytes =
            |v: u64, unit: u64| usize::try_from(v.saturating_mul(unit)).unwrap_or(usize::MAX);
        SandboxOptions {
            cache_dir: config.cache.then_some(cache_dir).flatten(),
            pooling: config.pooling,
            max_component_bytes: bytes(config.max_component_mb, 1 << 20),
            max_function_bytes: bytes(config.max_function_kb, 1 << 10),
            compile_timeout: Duration::from_millis(config.compile_timeout_ms),
            dedicated_threads: config.dedicated_threads,
            net: crate::netguard::NetPolicy::default(),
            compiler: config.compiler,
        }
    }
}

impl Default for SandboxOptions {
    fn default() -> Self {
        SandboxOptions::from_config(&SandboxConfig::default(), None)
    }
}

/// A handler compiled and linked, ready to instantiate (cheaply) per call.
#[derive(Clone)]
pub struct Handler {
    pre: HandlerPre<HostState>,
    /// `sha256:` of the component bytes.
    pub hash: String,
    /// How it was obtained: compiled now, or loaded from the disk cache.
    pub origin: HandlerOrigin,
    /// Which compiler made its code.
    pub tier: Tier,
}

/// Which compiler made a handler's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Winch: quick to compile, slower to run; Cranelift's code replaces
    /// it once the background compile is done.
    Baseline,
    /// Cranelift.
    Optimized,
}

/// A compile about to start, for a caller to tell whoever waits on it (see
/// [`Sandbox::load_async_with`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileNotice {
    /// `sha256:` of the component bytes.
    pub hash: String,
    /// Size of the component.
    pub bytes: usize,
    /// The compiler the caller waits for.
    pub tier: Tier,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HandlerOrigin {
    Compiled,
    DiskCache,
    MemoryCache,
}

/// The input of one call.
#[derive(Debug, Clone)]
pub struct CallRequest<'a> {
    pub skill: &'a str,
    pub description: &'a str,
    /// The context as a JSON object.
    pub context: &'a serde_json::Map<String, serde_json::Value>,
    pub grants: &'a Effective,
    pub limits: Limits,
    pub roots: &'a FileRoots,
    /// What the handler may reach through the host interface.
    pub services: Services,
    /// Where its clocks and random numbers come from.
    pub entropy: Entropy,
}

/// Where a call's clocks and random numbers come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Entropy {
    /// The host's clocks and random numbers: every run.
    #[default]
    Host,
    /// Derived from a seed: the wall and monotonic clocks start at times
    /// the seed picks (the wall clock up to 30 days ahead of the real one)
    /// and advance in real time; random numbers come from a generator
    /// seeded with it. Calls with different seeds see different times and
    /// numbers, which is how the validation gate finds a handler whose
    /// answer depends on them.
    Seeded(u64),
}

/// What one call produced, whatever happened.
#[derive(Debug, Clone, Serialize)]
pub struct CallOutcome {
    pub result: Result<Output, Failure>,
    pub log: Vec<LogLine>,
    /// Host-side events: denials, HTTP requests, tool calls.
    pub events: Vec<String>,
    /// Captured guest stdout and stderr (truncated).
    pub stdout: String,
    pub stderr: String,
    pub instantiate_us: u64,
    pub call_us: u64,
    /// The most host memory the call made the host hold at once.
    pub host_peak_bytes: u64,
}

impl CallOutcome {
    fn failed(failure: Failure) -> Self {
        CallOutcome {
            result: Err(failure),
            log: Vec::new(),
            events: Vec::new(),
            stdout: String::new(),
            stderr: String::new(),
            instantiate_us: 0,
            call_us: 0,
            host_peak_bytes: 0,
        }
    }
}

/// The engine, the linker, the compiled-handler caches, and where guest
/// code runs.
pub struct Sandbox {
    inner: Arc<Inner>,
    /// With `dedicated_threads`, a guest still running at its first tick
    /// moves to threads of its own, so a guest that spins until its
    /// deadline occupies the threads that serve a protocol (MCP) for one
    /// tick at most. Otherwise it runs on the caller's runtime throughout;
    /// a running guest still yields every tick.
    guest: Option<GuestRuntime>,
}

struct Inner {
    engine: Engine,
    linker: Linker<HostState>,
    disk: Option<cache::DiskCache>,
    memory: Mutex<HashMap<String, Handler>>,
    /// One compile at a time: compiling is the most expensive thing a
    /// component can make the host do, and concurrent compiles would
    /// multiply its memory.
    compiling: Mutex<()>,
    /// With the pooling allocator, one permit per call the pool holds: a
    /// call past them waits rather than failing for want of a slot.
    pool_slots: Option<tokio::sync::Semaphore>,
    options: SandboxOptions,
    /// Ticks the epoch of both engines (this one and the fast tier's).
    ticker: EpochTicker,
    /// Winch, with `compiler = "tiered"`.
    fast: Option<FastTier>,
    /// Cranelift compiles of components that run on Winch code, one at a
    /// time, beside at most one foreground compile.
    optimiser: Optimiser,
}

/// The baseline tier: its own engine (code is tied to the engine that
/// compiled it) and linker, and the threads its compiles run on.
struct FastTier {
    engine: Engine,
    linker: Linker<HostState>,
    /// Winch code on disk, so a process that exits before Cranelift is done
    /// (a one-shot CLI run) does not compile it again.
    disk: Option<cache::DiskCache>,
    /// All cores but one: a first call's compile leaves a core to the
    /// calls already running.
    pool: rayon::ThreadPool,
}

/// Components waiting for (or in) their background Cranelift compile.
struct Optimiser {
    /// One thread at the lowest priority: rayon runs its jobs one at a time
    /// and the compile inside a job uses this pool's one thread, so calls
    /// always win the CPU over it.
    pool: Option<rayon::ThreadPool>,
    pending: Mutex<HashSet<String>>,
    idle: Condvar,
}

/// Most components waiting for Cranelift at once: each holds its bytes. One
/// left out is queued again by a later load (see `load_async_with`).
const MAX_PENDING: usize = 4;

impl Sandbox {
    pub fn new(options: &SandboxOptions) -> Result<Self, SandboxError> {
        let engine = new_engine(Strategy::Cranelift, options.pooling)?;
        let linker = new_linker(&engine)?;
        let disk = options
            .cache_dir
            .as_ref()
            .map(|d| cache::DiskCache::new(d.clone(), &engine));
        let (fast, optimiser) = match options.compiler {
            Compiler::Cranelift => (None, None),
            Compiler::Tiered => {
                // On-demand allocation: a second pool would reserve the
                // address space again for code that serves only first
                // calls. The call limiter bounds memory the same way.
                let engine = new_engine(Strategy::Winch, false)?;
                let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
                let fast = FastTier {
                    linker: new_linker(&engine)?,
                    disk: options
                        .cache_dir
                        .as_ref()
                        .map(|d| cache::DiskCache::new(d.clone(), &engine)),
                    pool: compile_pool("skillhost-winch", cores.saturating_sub(1).max(1), false)?,
                    engine,
                };
                (
                    Some(fast),
                    Some(compile_pool("skillhost-optimise", 1, true)?),
                )
            }
        };
        let ticker = match &fast {
            Some(f) => EpochTicker::start(&[&engine, &f.engine]),
            None => EpochTicker::start(&[&engine]),
        }
        .map_err(SandboxError::engine)?;
        let guest = match options.dedicated_threads {
            true => Some(GuestRuntime::start().map_err(SandboxError::engine)?),
            false => None,
        };
        Ok(Sandbox {
            inner: Arc::new(Inner {
                engine,
                linker,
                disk,
                memory: Mutex::new(HashMap::new()),
                compiling: Mutex::new(()),
                pool_slots: options
                    .pooling
                    .then(|| tokio::sync::Semaphore::new(limits::POOL_CALLS as usize)),
                options: options.clone(),
                ticker,
                fast,
                optimiser: Optimiser {
                    pool: optimiser,
                    pending: Mutex::new(HashSet::new()),
                    idle: Condvar::new(),
                },
            }),
            guest,
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// Compiles with Cranelift (or fetches from a cache) and links a
    /// handler component, on this thread: for checks and for callers that
    /// want the optimised code now (one already loaded by
    /// [`Sandbox::load_async`] may still be on Winch's code). A call's
    /// first load is [`Sandbox::load_async`], which compiles with Winch.
    pub fn load(&self, wasm: &[u8]) -> Result<Handler, SandboxError> {
        self.inner
            .load(wasm, cache::content_hash(wasm), None, |_| {})
    }

    /// Fetches a handler from a cache or compiles it on a blocking thread,
    /// waiting at most the compile timeout: a large component compiles for
    /// seconds, which must not stall the async workers that serve other
    /// calls. With `compiler = "tiered"` a component in no cache is
    /// compiled with Winch, and Cranelift's code replaces it (in memory and
    /// on disk) when a background compile is done.
    pub async fn load_async(&self, wasm: Arc<[u8]>) -> Result<Handler, SandboxError> {
        self.load_async_with(Artifact::new(wasm), |_| {}).await
    }

    /// [`Sandbox::load_async`], calling `on_compile` (on the compiling
    /// thread) just before a compile starts, and never when a cache has the
    /// handler, so that the caller can say why this call takes a while. A
    /// CLI prints one line on stderr when stderr is a terminal ("compiling
    /// handler (12 MB)…"); an MCP server whose request carried a
    /// `progressToken` sends `notifications/progress` with that token (from
    /// a task it spawns, or through a channel: the callback must not block).
    pub async fn load_async_with(
        &self,
        artifact: Artifact,
        on_compile: impl FnOnce(CompileNotice) + Send + 'static,
    ) -> Result<Handler, SandboxError> {
        let Artifact { bytes: wasm, hash } = artifact;
        if let Some(h) = self.inner.cached(&hash) {
            // Its Cranelift compile may have been left out of a full queue.
            if h.tier == Tier::Baseline {
                self.inner.optimise_later(hash, wasm);
            }
            return Ok(h);
        }
        let inner = self.inner.clone();
        let timeout = self.inner.options.compile_timeout;
        let compile = move || inner.load(&wasm, hash, Some(&wasm), on_compile);
        let job = match &self.guest {
            Some(g) => g.handle.spawn_blocking(compile),
            None => tokio::task::spawn_blocking(compile),
        };
        match tokio::time::timeout(timeout, job).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => Err(SandboxError::InvalidComponent(Arc::new(CompileStopped(e)))),
            Err(_) => Err(SandboxError::CompileTimeout(timeout.as_millis())),
        }
    }

    /// Waits until no background Cranelift compile is queued or running,
    /// at most `timeout`; true if none is. A process about to exit (a
    /// one-shot CLI run) calls it so that the optimised code reaches the
    /// disk cache and the next run starts from it.
    pub fn wait_optimised(&self, timeout: Duration) -> bool {
        let o = &self.inner.optimiser;
        let pending = o.pending.lock().unwrap_or_else(|p| p.into_inner());
        let (pending, _) = o
            .idle
            .wait_timeout_while(pending, timeout, |p| !p.is_empty())
            .unwrap_or_else(|p| p.into_inner());
        pending.is_empty()
    }

    /// `handler` as it is now: once Cranelift's code for it replaced
    /// Winch's (see [`Compiler::Tiered`]), the optimised one. For callers
    /// that keep a handler instead of loading it for every call.
    pub fn latest(&self, handler: &Handler) -> Handler {
        match handler.tier {
            Tier::Baseline => self
                .inner
                .cached(&handler.hash)
                .unwrap_or_else(|| handler.clone()),
            _ => handler.clone(),
        }
    }

    /// Instance slots of the pooling allocator not held by a call now;
    /// `None` without pooling. For health reports and tests.
    pub fn free_pool_slots(&self) -> Option<usize> {
        self.inner
            .pool_slots
            .as_ref()
            .map(|s| s.available_permits())
    }

    /// Runs one call in a fresh store (on the guest threads, if dedicated).
    /// Never fails: every problem is a classified failure in the outcome.
    pub async fn call(&self, handler: &Handler, req: &CallRequest<'_>) -> CallOutcome {
        let job = CallJob {
            pre: handler.pre.clone(),
            skill: req.skill.to_owned(),
            description: req.description.to_owned(),
            // A map of JSON values always serialises.
            context: serde_json::to_string(req.context).unwrap_or_default(),
            capabilities: req.grants.capabilities.clone(),
            limits: req.limits,
            roots: req.roots.clone(),
            services: req.services.clone(),
            entropy: req.entropy,
        };
        let Some(guest) = &self.guest else {
            return self.inner.call(job).await;
        };
        // Started here: most calls end before their first tick, and moving
        // one costs two thread hand-offs (release, `benches/mcp.rs`: about
        // 4x the run of the echo handler). A call still running at its
        // first tick yields there, and so does one waiting on a host call;
        // it moves to the guest threads for the rest. So a guest holds
        // the caller's thread for at most one tick.
        let inner = self.inner.clone();
        let rest = match crate::types::poll_here_first(async move { inner.call(job).await }) {
            Ok(outcome) => return outcome,
            Err(rest) => rest,
        };
        let task = AbortOnDrop(guest.handle.spawn(rest));
        match task.await {
            Ok(outcome) => outcome,
            Err(e) => CallOutcome::failed(Failure::new(
                FailureClass::Trap,
                format!("the call's task ended abnormally: {e}"),
            )),
        }
    }
}

/// One call's input, owned so that it can move to the guest threads.
struct CallJob {
    pre: HandlerPre<HostState>,
    skill: String,
    description: String,
    context: String,
    capabilities: crate::skill::Capabilities,
    limits: Limits,
    roots: FileRoots,
    services: Services,
    entropy: Entropy,
}

impl Inner {
    fn cached(&self, hash: &str) -> Option<Handler> {
        let m = self.memory.lock().ok()?;
        m.get(hash).map(|h| Handler {
            origin: HandlerOrigin::MemoryCache,
            ..h.clone()
        })
    }

    /// With `tiered` (the bytes, shared with the background compile) and a
    /// Winch engine, a component in no cache is compiled with Winch;
    /// otherwise with Cranelift.
    fn load(
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
        // Cranelift's code when there is some: a cache hit never uses Winch.
        if let Some(c) = self.disk.as_ref().and_then(|d| d.load(&self.engine, &hash)) {
            return self.link(
                &self.linker,
                &c,
                hash,
                HandlerOrigin::DiskCache,
                Tier::Optimized,
            );
        }
        let fast = tiered.zip(self.fast.as_ref());
        if let Some((shared, fast)) = fast
            && let Some(c) = fast.disk.as_ref().and_then(|d| d.load(&fast.engine, &hash))
        {
            let h = self.link(
                &fast.linker,
                &c,
                hash.clone(),
                HandlerOrigin::DiskCache,
                Tier::Baseline,
            )?;
            self.optimise_later(hash, shared.clone());
            return Ok(h);
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
        if let Some((shared, fast)) = fast {
            // Winch refuses proposals it lacks (exceptions, tail calls, GC)
            // with an error; a panic is caught all the same, and Cranelift
            // then has the last word on the component.
            let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                fast.pool.install(|| Component::new(&fast.engine, wasm))
            }));
            match compiled {
                Ok(Ok(c)) => {
                    let h = self.link(
                        &fast.linker,
                        &c,
                        hash.clone(),
                        HandlerOrigin::Compiled,
                        Tier::Baseline,
                    )?;
                    if let Some(d) = &fast.disk {
                        let _ = d.store(&hash, &c);
                    }
                    self.optimise_later(hash, shared.clone());
                    return Ok(h);
                }
                Ok(Err(e)) => tracing::warn!(
                    "Winch cannot compile handler {hash} ({e:#}); compiling it with Cranelift"
                ),
                Err(_) => {
                    tracing::warn!("Winch failed on handler {hash}; compiling it with Cranelift")
                }
            }
        }
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
    fn link(
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
    fn optimise_later(self: &Arc<Self>, hash: String, wasm: Arc<[u8]>) {
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
    fn optimise(&self, hash: &str, wasm: &[u8]) {
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
    fn precheck(&self, wasm: &[u8]) -> Result<(), SandboxError> {
        let max = self.options.max_component_bytes;
        if wasm.len() > max {
            return Err(SandboxError::TooLarge {
                part: Part::Component,
                size: wasm.len(),
                limit: max,
            });
        }
        let inspection =
            inspect::inspect(wasm).map_err(|e| SandboxError::InvalidComponent(Arc::new(e)))?;
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

    async fn call(&self, job: CallJob) -> CallOutcome {
        let started = Instant::now();
        // The epoch ticks (deadlines, yields, budget checks) while it runs.
        let _ticking = self.ticker.call_started();
        // Declared before the store so that it is released after the
        // store's slots are back in the pool.
        let _slot = match &self.pool_slots {
            Some(slots) => match tokio::time::timeout(job.limits.timeout, slots.acquire()).await {
                Ok(Ok(permit)) => Some(permit),
                _ => {
                    return CallOutcome::failed(Failure::new(
                        FailureClass::LimitExceeded,
                        format!(
                            "time: the call waited {} ms for one of the {} instance slots of the host's pool ([sandbox] pooling)",
                            job.limits.timeout.as_millis(),
                            limits::POOL_CALLS
                        ),
                    ));
                }
            },
            None => None,
        };
        // One budget for all the memory a call holds: its linear memories
        // and what it makes the host hold (what its host calls create, what
        // it returns, lifted out of its memory), together at most its
        // memory limit plus a fixed host allowance.
        let budget = HostBudget::new(
            job.limits
                .memory_bytes
                .saturating_add(job.limits.host_bytes),
        );
        let state = match HostState::new(
            &job.skill,
            job.capabilities,
            job.limits,
            job.services,
            &job.roots,
            state::Ambient {
                net: self.options.net.clone(),
                budget: budget.clone(),
                entropy: job.entropy,
            },
        ) {
            Ok(s) => s,
            Err(e) => {
                return CallOutcome::failed(Failure::new(
                    FailureClass::Denied,
                    Chain(&e).to_string(),
                ));
            }
        };
        let limits = job.limits;
        // The engine that compiled the handler's code (Winch or Cranelift).
        let mut store = Store::new(job.pre.engine(), state);
        store.limiter(|s| &mut s.limiter);
        // Every tick: stop a guest past its deadline or its host budget,
        // else yield so that other calls on these threads make progress.
        // Time spent waiting for a pool slot counts.
        let deadline = started + limits.timeout;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |mut cx| {
            let s = cx.data_mut();
            if s.budget.exceeded_with(s.limiter.memory_bytes()) {
                // The call's error, found again by `classify`.
                return Err(LimitHit::HostMemory {
                    limit: s.budget.limit(),
                }
                .into());
            }
            if Instant::now() >= deadline {
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::Yield(1))
        });

        let task = bindings::skillhost::skill::types::Task {
            description: job.description,
            context_json: job.context,
        };
        let pre = job.pre;
        // The epoch deadline stops wasm; this outer bound stops a host call
        // (a tool, the model) that the guest is waiting on.
        let grace = Duration::from_secs(1);
        let run = Charged::new(
            async {
                let instance = pre.instantiate_async(&mut store).await?;
                let instantiated = started.elapsed();
                let r = instance.call_handle(&mut store, &task).await;
                Ok::<_, wasmtime::Error>((r, instantiated))
            },
            budget.clone(),
        );
        let timed = tokio::time::timeout(
            (limits.timeout + grace).saturating_sub(started.elapsed()),
            run,
        )
        .await;
        let elapsed = started.elapsed();
        let failed = |e: &wasmtime::Error, stage| {
            let data = store.data();
            classify(e, stage, data.limiter.hit, &data.stderr.contents(), limits)
        };
        let (result, instantiate) = match timed {
            Err(_) => (
                Err(Failure::new(
                    FailureClass::LimitExceeded,
                    format!(
                        "time: the call ran longer than {} ms (waiting on the host)",
                        limits.timeout.as_millis()
                    ),
                )),
                elapsed,
            ),
            Ok(Err(e)) => (Err(failed(&e, Stage::Instantiate)), elapsed),
            Ok(Ok((Err(e), inst))) => (Err(failed(&e, Stage::Call)), inst),
            Ok(Ok((Ok(Err(f)), inst))) => (Err(check_failure(f.class, f.message, limits)), inst),
            Ok(Ok((Ok(Ok(o)), inst))) => {
                (check_output(o.body, o.content_type, o.flags, limits), inst)
            }
        };
        let state = store.data_mut();
        let events = state.take_events();
        CallOutcome {
            result,
            log: std::mem::take(&mut state.log),
            events,
            stdout: String::from_utf8_lossy(&state.stdout.contents()).into_owned(),
            stderr: String::from_utf8_lossy(&state.stderr.contents()).into_owned(),
            instantiate_us: micros(instantiate),
            call_us: micros(elapsed.saturating_sub(instantiate)),
            host_peak_bytes: budget.peak() as u64,
        }
    }
}

/// Everything a handler returns counts against one output limit.
fn check_output(
    body: String,
    content_type: String,
    flags: Vec<String>,
    limits: Limits,
) -> Result<Output, Failure> {
    let size = body.len() + content_type.len() + flags.iter().map(String::len).sum::<usize>();
    if size > limits.output_bytes {
        return Err(Failure::new(
            FailureClass::OutputTooLarge,
            format!(
                "the handler returned {size} bytes (body, content type and flags), the limit is {} bytes",
                limits.output_bytes
            ),
        ));
    }
    Ok(Output {
        body,
        content_type,
        flags,
    })
}

/// A handler's own failure: its class must be a short identifier, and its
/// class and message count against the output limit like an answer.
fn check_failure(class: String, message: String, limits: Limits) -> Failure {
    let identifier = !class.is_empty()
        && class.len() <= MAX_CLASS_LEN
        && class.starts_with(|c: char| c.is_ascii_alphabetic())
        && class
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !identifier {
        let shown: String = class.chars().take(32).collect();
        return Failure::new(
            FailureClass::InvalidFailure,
            format!(
                "the handler failed with class `{shown}`{}, which is not an identifier (a letter, then letters, digits, `_`, `-` or `.`; at most {MAX_CLASS_LEN} bytes)",
                if class.len() > shown.len() { "…" } else { "" }
            ),
        );
    }
    let size = class.len() + message.len();
    if size > limits.output_bytes {
        return Failure::new(
            FailureClass::OutputTooLarge,
            format!(
                "the handler failed with class `{class}` and a message of {} bytes, the limit is {} bytes",
                message.len(),
                limits.output_bytes
            ),
        );
    }
    Failure::new(class, message)
}

/// The runtime guest calls run on: its own worker threads, sized to the
/// machine, and its own blocking pool for compiles.
struct GuestRuntime {
    runtime: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
}

impl GuestRuntime {
    fn start() -> std::io::Result<Self> {
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .thread_name("skillhost-guest")
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        Ok(GuestRuntime {
            runtime: Some(runtime),
            handle,
        })
    }
}

impl Drop for GuestRuntime {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which panics inside another runtime;
        // the calls still running end at their own deadlines.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// A spawned call that is cancelled when its caller stops waiting.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> std::future::Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Where a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Instantiate,
    Call,
}

/// Turns a wasmtime error from instantiation or the call into a failure
/// that says which limit or trap stopped the handler: by the limit the
/// limiter refused (`hit`), else by the error's type. `stderr` is the
/// guest's, for a panic message.
fn classify(
    e: &wasmtime::Error,
    stage: Stage,
    hit: Option<LimitHit>,
    stderr: &[u8],
    limits: Limits,
) -> Failure {
    // A refused allocation first: the trap that follows is its effect.
    if let Some(hit) = hit.or_else(|| e.downcast_ref::<LimitHit>().copied()) {
        return Failure::new(FailureClass::LimitExceeded, hit.to_string());
    }
    // Rust prints "thread ... panicked at FILE:" and the message on the
    // next line; keep both.
    let panic_line = || {
        let stderr = String::from_utf8_lossy(stderr);
        let mut lines = stderr.lines().skip_while(|l| !l.contains("panicked"));
        match lines.next() {
            Some(at) => {
                let msg = lines.next().unwrap_or("").trim();
                format!(" ({} {msg})", at.trim())
            }
            None => String::new(),
        }
    };
    if e.downcast_ref::<PoolConcurrencyLimitError>().is_some() {
        return Failure::new(
            FailureClass::LimitExceeded,
            format!("the host's instance pool is full ([sandbox] pooling): {e}"),
        );
    }
    if let Some(wasmtime::component::ResourceTableError::Full) =
        e.downcast_ref::<wasmtime::component::ResourceTableError>()
    {
        return Failure::new(
            FailureClass::LimitExceeded,
            format!(
                "host objects: the handler held more than {} at once ([limits] resources)",
                limits.resources
            ),
        );
    }
    match e.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => Failure::new(
            FailureClass::LimitExceeded,
            format!(
                "time: the handler ran longer than {} ms",
                limits.timeout.as_millis()
            ),
        ),
        Some(Trap::StackOverflow) => Failure::new(
            FailureClass::LimitExceeded,
            "stack: the handler recursed too deeply",
        ),
        Some(Trap::MemoryOutOfBounds) => Failure::new(
            FailureClass::Trap,
            "the handler accessed memory out of bounds; in handlers built from Rust or C this usually means their stack overflowed (deep recursion)",
        ),
        Some(Trap::UnreachableCodeReached) => Failure::new(
            FailureClass::Trap,
            format!("the handler aborted{}", panic_line()),
        ),
        Some(t) => Failure::new(
            FailureClass::Trap,
            format!("the handler trapped: {t}{}", panic_line()),
        ),
        // wasmtime 48 refuses an instance past the limiter's counts
        // (`instances`, `memories`, `tables`) with an untyped message
        // ("resource limit exceeded: ... count too high"); a linked handler
        // fails to instantiate before running guest code (no wasm
        // backtrace) only when its resources are refused.
        None if stage == Stage::Instantiate && e.downcast_ref::<WasmBacktrace>().is_none() => {
            Failure::new(FailureClass::LimitExceeded, format!("{e:#}"))
        }
        None => Failure::new(FailureClass::Trap, format!("{e:#}")),
    }
}

/// An engine for one compiler. What calls rely on is the same for both:
/// the component model, epoch interruption (time limits and yields), the
/// allocator chosen, async host calls (wasmtime's default).
fn new_engine(strategy: Strategy, pooling: bool) -> Result<Engine, SandboxError> {
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
fn new_linker(engine: &Engine) -> Result<Linker<HostState>, SandboxError> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(SandboxError::engine)?;
    fs_guard::add_to_linker(&mut linker).map_err(SandboxError::engine)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)
        .map_err(SandboxError::engine)?;
    bindings::Handler::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)
        .map_err(SandboxError::engine)?;
    Ok(linker)
}

/// Threads that compiles run on: wasmtime compiles functions in parallel
/// on the rayon pool it is called from, so the pool's size is how many
/// cores a compile takes.
fn compile_pool(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(memory_mb: usize) -> Limits {
        Limits {
            memory_bytes: memory_mb << 20,
            ..Limits::default()
        }
    }

    /// Instantiates a component under the call limiter alone: how that
    /// went, and the first limit the limiter refused.
    async fn instantiate_with(
        sandbox: &Sandbox,
        wat: &str,
        limits: Limits,
    ) -> (wasmtime::Result<()>, Option<LimitHit>) {
        let bytes = wat::parse_str(wat).expect("wat");
        let component = Component::new(sandbox.engine(), &bytes).expect("component");
        let mut store = Store::new(sandbox.engine(), limits::Limiter::new(limits));
        store.limiter(|l| l);
        store.set_epoch_deadline(1 << 40);
        let linker: Linker<limits::Limiter> = Linker::new(sandbox.engine());
        let r = linker.instantiate_async(&mut store, &component).await;
        (r.map(|_| ()), store.data().hit)
    }

    async fn instantiate(sandbox: &Sandbox, wat: &str, limits: Limits) -> (bool, Option<String>) {
        let (r, hit) = instantiate_with(sandbox, wat, limits).await;
        (r.is_ok(), hit.map(|h| h.to_string()))
    }

    /// How a failed instantiation is reported.
    async fn instantiate_failure(sandbox: &Sandbox, wat: &str, limits: Limits) -> Failure {
        let (r, hit) = instantiate_with(sandbox, wat, limits).await;
        let e = r.expect_err("instantiation fails");
        classify(&e, Stage::Instantiate, hit, b"", limits)
    }

    #[tokio::test]
    async fn limits_and_traps_are_told_apart_by_type_not_text() {
        let sandbox = Sandbox::new(&SandboxOptions::default()).expect("sandbox");
        // wasmtime refuses the third instance with an untyped message.
        let three = "(component (core module $m)
            (core instance (instantiate $m)) (core instance (instantiate $m))
            (core instance (instantiate $m)))";
        let l = Limits {
            instances: 2,
            ..Limits::default()
        };
        let f = instantiate_failure(&sandbox, three, l).await;
        assert_eq!(f.class, FailureClass::LimitExceeded, "{f}");
        assert!(f.message.contains("instance count"), "{f}");
        let tables = "(component (core module $m (table 1 funcref) (table 1 funcref)
            (table 1 funcref)) (core instance (instantiate $m)))";
        let l = Limits {
            tables: 2,
            ..Limits::default()
        };
        let f = instantiate_failure(&sandbox, tables, l).await;
        assert_eq!(f.class, FailureClass::LimitExceeded, "{f}");
        // A start function that traps ran guest code: a trap, not a limit.
        let traps = "(component (core module $m (func $s unreachable) (start $s))
            (core instance (instantiate $m)))";
        let f = instantiate_failure(&sandbox, traps, Limits::default()).await;
        assert_eq!(f.class, FailureClass::Trap, "{f}");
        assert!(f.message.starts_with("the handler aborted"), "{f}");
        // The host budget, raised by the epoch callback as the call's error.
        let l = Limits::default();
        let e = wasmtime::Error::new(LimitHit::HostMemory { limit: 80 << 20 });
        let f = classify(&e, Stage::Call, None, b"", l);
        assert_eq!(f.class, FailureClass::LimitExceeded, "{f}");
        assert!(f.message.starts_with("host memory"), "{f}");
        // Anything else is a trap, with the whole chain.
        let e = wasmtime::Error::msg("inner").context("outer");
        let f = classify(&e, Stage::Call, None, b"", l);
        assert_eq!(f, Failure::new(FailureClass::Trap, "outer: inner"));
    }

    #[tokio::test]
    async fn the_memory_limit_covers_all_memories_of_a_call() {
        let sandbox = Sandbox::new(&SandboxOptions::default()).expect("sandbox");
        // Eight memories of 16 MiB each: 128 MiB in all, over a 64 MiB limit
        // that each one alone would fit.
        let eight = format!(
            "(component (core module $m {}) (core instance (instantiate $m)))",
            "(memory 256) ".repeat(8)
        );
        let (ok, hit) = instantiate(&sandbox, &eight, limits(64)).await;
        assert!(!ok, "over the limit in all");
        assert!(
            hit.as_deref().is_some_and(|h| h.contains("memory")),
            "{hit:?}"
        );
        let (ok, _) = instantiate(&sandbox, &eight, limits(128)).await;
        assert!(ok, "fits in 128 MiB");
        // Growing from a start function counts the same way. The second
        // grow is refused (memory.grow returns -1, no trap): the limiter
        // records the refusal.
        let grows = "(component (core module $m (memory 1) (memory 1)
              (func $start (drop (memory.grow 0 (i32.const 600))) (drop (memory.grow 1 (i32.const 600))))
              (start $start))
            (core instance (instantiate $m)))";
        let (ok, hit) = instantiate(&sandbox, grows, limits(64)).await;
        assert!(ok, "instantiates");
        assert!(
            hit.as_deref().is_some_and(|h| h.contains("in all")),
            "{hit:?}"
        );
    }

    #[test]
    fn a_cause_keeps_its_chain_out_of_the_message() {
        let e = SandboxError::InvalidComponent(cause(
            wasmtime::Error::msg("unknown opcode").context("failed to parse"),
        ));
        assert_eq!(e.to_string(), "not a valid WebAssembly component");
        assert_eq!(
            Chain(&e).to_string(),
            "not a valid WebAssembly component: failed to parse: unknown opcode"
        );
    }

    fn cache_files(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
    }

    #[test]
    fn components_are_checked_before_compiling_and_cached_only_when_they_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = SandboxOptions {
            cache_dir: Some(dir.path().join("cache")),
            ..SandboxOptions::default()
        };
        let sandbox = Sandbox::new(&options).expect("sandbox");
        // Exports a `handle` of the wrong type: passes the export check,
        // fails linking, and must not be cached.
        let wrong = wat::parse_str(
            r#"(component
                (core module $m (func (export "f")))
                (core instance $i (instantiate $m))
                (func (export "handle") (canon lift (core func $i "f"))))"#,
        )
        .expect("wat");
        let e = sandbox.load(&wrong).err().expect("wrong world");
        assert!(matches!(e, SandboxError::WrongWorld(_)), "{e}");
        assert_eq!(cache_files(&dir.path().join("cache")), 0);
        // No `handle` at all: refused from its types, before compiling.
        let none =
            wat::parse_str("(component (core module $m (func (export \"f\"))))").expect("wat");
        let e = sandbox.load(&none).err().expect("no handle");
        assert!(
            e.to_string()
                .contains("does not export the function `handle`"),
            "{e}"
        );
        // A core module is not a component.
        let e = sandbox.load(b"\0asm\x01\0\0\0").err().expect("core module");
        assert!(matches!(e, SandboxError::InvalidComponent(_)), "{e}");
        assert_eq!(cache_files(&dir.path().join("cache")), 0);
    }

    #[test]
    fn size_and_function_caps_refuse_a_compile_bomb_before_compiling() {
        // A function of 3 MiB of straight-line code: what a compile bomb is
        // made of (compile time and memory grow faster than its size).
        let body = "(drop (i32.const 1))".repeat(1 << 20);
        let bomb = wat::parse_str(format!(
            r#"(component
                (core module $m (func (export "f") {body}))
                (core instance $i (instantiate $m))
                (func (export "handle") (canon lift (core func $i "f"))))"#
        ))
        .expect("wat");
        let sandbox = Sandbox::new(&SandboxOptions::default()).expect("sandbox");
        let e = sandbox.load(&bomb).err().expect("too large a function");
        assert!(matches!(e, SandboxError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("max_function_kb"), "{e}");
        assert_eq!(e.class(), "LimitExceeded");
        let small = Sandbox::new(&SandboxOptions {
            max_component_bytes: 1024,
            ..SandboxOptions::default()
        })
        .expect("sandbox");
        let e = small.load(&bomb).err().expect("too large a component");
        assert!(e.to_string().contains("max_component_mb"), "{e}");
    }

    #[test]
    fn failure_classes_are_identifiers_and_count_as_output() {
        let l = Limits {
            output_bytes: 100,
            ..Limits::default()
        };
        assert_eq!(
            check_failure("TimezoneError".into(), "m".into(), l).class,
            "TimezoneError"
        );
        for bad in ["", "1abc", "a b", "x\ny", &"C".repeat(65)] {
            assert_eq!(
                check_failure(bad.into(), "m".into(), l).class,
                "InvalidFailure",
                "{bad:?}"
            );
        }
        assert_eq!(
            check_failure("Big".into(), "m".repeat(100), l).class,
            "OutputTooLarge"
        );
        let e = check_output("b".into(), "t".repeat(90), vec!["f".repeat(10)], l)
            .expect_err("over 100 bytes in all");
        assert_eq!(e.class, "OutputTooLarge");
        assert!(check_output("b".into(), "text/plain".into(), vec![], l).is_ok());
    }
}
