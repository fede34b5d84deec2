//! The sandbox: one wasmtime engine, compiled components cached on disk and
//! in memory, and a fresh store per call built from the effective grants
//! and limits. A trap, a limit or a panic in a handler is a failure of that
//! call; the host and the next call carry on.

mod bindings;
mod cache;
mod call;
mod compile;
mod config;
mod guest_threads;
mod host_api;
pub mod host_budget;
pub mod inspect;
pub mod limits;
mod state;
mod ticker;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde::Serialize;
use wasmtime::component::Linker;
use wasmtime::{Engine, Strategy};

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

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}
pub use crate::grants::Services;
pub use crate::types::{BoxFuture, Chain, Failure, FailureClass, Output, ServiceError};
pub use config::{Compiler, LimitDefaults, SandboxConfig};
pub use host_api::LogLine;
pub use limits::Limits;
pub use state::{FileRoots, GrantPathError};

use bindings::HandlerPre;
use call::CallJob;
use compile::{FastTier, Optimiser, compile_pool, new_engine, new_linker};
use guest_threads::{AbortOnDrop, GuestRuntime};
use state::HostState;
use ticker::EpochTicker;

/// Longest a failure's class may be; classes are identifiers.
pub(super) const MAX_CLASS_LEN: usize = 64;

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

pub(super) fn too_large(part: Part, size: usize, limit: usize) -> String {
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
pub(super) fn cause(e: wasmtime::Error) -> Cause {
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
    pub net: crate::grants::netguard::NetPolicy,
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
            net: crate::grants::netguard::NetPolicy::default(),
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

/// Where the draws behind a call's clocks and random numbers come from.
/// Every call, a run's or a gate case's, gets them from one constructor
/// (`state::clocks_and_random`): the real wall clock, a monotonic clock
/// starting at an offset drawn per call, random numbers seeded per call.
/// The two variants differ only in what seeds those draws, so a handler
/// sees the same distribution in a run and in the gate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Entropy {
    /// The host's random numbers: every run.
    #[default]
    Host,
    /// A seed: the gate's cases, each run of a case with its own, so
    /// that two runs see other monotonic times and random numbers (how
    /// the gate finds an answer that depends on them) and a report can
    /// name the seeds.
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

#[cfg(test)]
mod tests;
