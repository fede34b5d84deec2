//! The sandbox: one wasmtime engine, compiled components cached on disk and
//! in memory, and a fresh store per call built from the effective grants
//! and limits. A trap, a limit or a panic in a handler is a failure of that
//! call; the host and the next call carry on.

mod bindings;
mod cache;
pub mod grants;
mod host_api;
pub mod inspect;
pub mod limits;
mod state;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, Trap};

pub use grants::{Basis, Effective, fingerprint};
pub use host_api::{BoxFuture, KvHost, LogLine, ModelHost, ServiceError, Services, ToolHost};
pub use limits::Limits;
pub use state::{FileRoots, GrantPathError};

use bindings::HandlerPre;
use state::HostState;

/// How often the epoch ticks; time limits are rounded up to it.
const EPOCH_TICK: Duration = Duration::from_millis(5);

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot set up the wasm engine: {0}")]
    Engine(String),
    #[error("not a valid WebAssembly component: {0}")]
    InvalidComponent(String),
    #[error("the component does not fit the skillhost:skill handler world: {0}")]
    WrongWorld(String),
}

/// Engine settings.
#[derive(Debug, Clone, Default)]
pub struct SandboxOptions {
    /// Where compiled components are kept; `None` disables the disk cache.
    pub cache_dir: Option<PathBuf>,
    /// Use the pooling instance allocator.
    pub pooling: bool,
}

/// A handler compiled and linked, ready to instantiate (cheaply) per call.
#[derive(Clone)]
pub struct Handler {
    pre: HandlerPre<HostState>,
    /// `sha256:` of the component bytes.
    pub hash: String,
    /// How it was obtained: compiled now, or loaded from the disk cache.
    pub origin: HandlerOrigin,
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
}

/// A successful answer of a handler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Output {
    pub body: String,
    pub content_type: String,
    pub flags: Vec<String>,
}

/// A classified failure: from the handler, or from the host (limits, traps,
/// denials).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub class: String,
    pub message: String,
}

impl Failure {
    pub fn new(class: impl Into<String>, message: impl Into<String>) -> Self {
        Failure {
            class: class.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.class, self.message)
    }
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
}

/// The engine, the linker and the compiled-handler caches.
pub struct Sandbox {
    engine: Engine,
    linker: Linker<HostState>,
    disk: Option<cache::DiskCache>,
    memory: Mutex<HashMap<String, Handler>>,
    allow_private: Vec<std::net::IpAddr>,
    _ticker: EpochTicker,
}

impl Sandbox {
    pub fn new(options: &SandboxOptions) -> Result<Self, SandboxError> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        if options.pooling {
            let mut pool = PoolingAllocationConfig::default();
            pool.total_component_instances(64)
                .total_core_instances(512)
                .total_memories(256)
                .total_tables(256)
                .max_memory_size(1 << 30);
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        }
        let engine = Engine::new(&config).map_err(|e| SandboxError::Engine(e.to_string()))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| SandboxError::Engine(e.to_string()))?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)
            .map_err(|e| SandboxError::Engine(e.to_string()))?;
        bindings::Handler::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)
            .map_err(|e| SandboxError::Engine(e.to_string()))?;
        let disk = options
            .cache_dir
            .as_ref()
            .map(|d| cache::DiskCache::new(d.clone(), &engine));
        let ticker = EpochTicker::start(&engine);
        Ok(Sandbox {
            engine,
            linker,
            disk,
            memory: Mutex::new(HashMap::new()),
            allow_private: Vec::new(),
            _ticker: ticker,
        })
    }

    /// Non-public addresses granted HTTP may still reach (operator config).
    pub fn with_allow_private(mut self, ips: Vec<std::net::IpAddr>) -> Self {
        self.allow_private = ips;
        self
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Compiles (or fetches from a cache) and links a handler component.
    pub fn load(&self, wasm: &[u8]) -> Result<Handler, SandboxError> {
        let hash = cache::content_hash(wasm);
        if let Some(h) = self.memory.lock().ok().and_then(|m| m.get(&hash).cloned()) {
            return Ok(Handler {
                origin: HandlerOrigin::MemoryCache,
                ..h
            });
        }
        let (component, origin) = match self.disk.as_ref().and_then(|d| d.load(&self.engine, &hash))
        {
            Some(c) => (c, HandlerOrigin::DiskCache),
            None => {
                let c = Component::new(&self.engine, wasm)
                    .map_err(|e| SandboxError::InvalidComponent(format!("{e:#}")))?;
                if let Some(d) = &self.disk {
                    // A cache that cannot be written only costs speed.
                    let _ = d.store(&hash, &c);
                }
                (c, HandlerOrigin::Compiled)
            }
        };
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| SandboxError::WrongWorld(format!("{e:#}")))?;
        let pre = HandlerPre::new(pre).map_err(|e| SandboxError::WrongWorld(format!("{e:#}")))?;
        let handler = Handler {
            pre,
            hash: hash.clone(),
            origin,
        };
        if let Ok(mut m) = self.memory.lock() {
            m.insert(hash, handler.clone());
        }
        Ok(handler)
    }

    /// Runs one call in a fresh store. Never fails: every problem is a
    /// classified failure in the outcome.
    pub async fn call(&self, handler: &Handler, req: &CallRequest<'_>) -> CallOutcome {
        let empty = |failure: Failure| CallOutcome {
            result: Err(failure),
            log: Vec::new(),
            events: Vec::new(),
            stdout: String::new(),
            stderr: String::new(),
            instantiate_us: 0,
            call_us: 0,
        };
        let state = match HostState::new(
            req.skill,
            req.grants.capabilities.clone(),
            req.limits,
            req.services.clone(),
            req.roots,
            self.allow_private.clone(),
        ) {
            Ok(s) => s,
            Err(e) => return empty(Failure::new("Denied", e.to_string())),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limiter);
        let ticks = req
            .limits
            .timeout
            .as_nanos()
            .div_ceil(EPOCH_TICK.as_nanos())
            .max(1);
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX));
        store.epoch_deadline_trap();

        let context = serde_json::Value::Object(req.context.clone()).to_string();
        let task = bindings::skillhost::skill::types::Task {
            description: req.description.to_owned(),
            context_json: context,
        };
        let started = Instant::now();
        // The epoch deadline stops wasm; this outer bound stops a host call
        // (a tool, the model) that the guest is waiting on.
        let grace = Duration::from_secs(1);
        let run = async {
            let instance = handler.pre.instantiate_async(&mut store).await?;
            let instantiated = started.elapsed();
            let r = instance.call_handle(&mut store, &task).await;
            Ok::<_, wasmtime::Error>((r, instantiated))
        };
        let timed = tokio::time::timeout(req.limits.timeout + grace, run).await;
        let elapsed = started.elapsed();
        let (result, instantiate) = match timed {
            Err(_) => (
                Err(Failure::new(
                    "LimitExceeded",
                    format!(
                        "time: the call ran longer than {} ms (waiting on the host)",
                        req.limits.timeout.as_millis()
                    ),
                )),
                elapsed,
            ),
            Ok(Err(e)) => (Err(classify(&e, &store, req.limits)), elapsed),
            Ok(Ok((Err(e), inst))) => (Err(classify(&e, &store, req.limits)), inst),
            Ok(Ok((Ok(Err(f)), inst))) => (Err(Failure::new(f.class, f.message)), inst),
            Ok(Ok((Ok(Ok(o)), inst))) => {
                let size = o.body.len();
                if size > req.limits.output_bytes {
                    (
                        Err(Failure::new(
                            "OutputTooLarge",
                            format!(
                                "the handler returned {} bytes, the limit is {} bytes",
                                size, req.limits.output_bytes
                            ),
                        )),
                        inst,
                    )
                } else {
                    (
                        Ok(Output {
                            body: o.body,
                            content_type: o.content_type,
                            flags: o.flags,
                        }),
                        inst,
                    )
                }
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
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Turns a wasmtime error from instantiation or the call into a failure
/// that says which limit or trap stopped the handler.
fn classify(e: &wasmtime::Error, store: &Store<HostState>, limits: Limits) -> Failure {
    let data = store.data();
    if let Some(hit) = &data.limiter.hit {
        return Failure::new("LimitExceeded", hit.clone());
    }
    // Rust prints "thread ... panicked at FILE:" and the message on the
    // next line; keep both.
    let panic_line = || {
        let stderr = String::from_utf8_lossy(&data.stderr.contents()).into_owned();
        let mut lines = stderr.lines().skip_while(|l| !l.contains("panicked"));
        match lines.next() {
            Some(at) => {
                let msg = lines.next().unwrap_or("").trim();
                format!(" ({} {msg})", at.trim())
            }
            None => String::new(),
        }
    };
    match e.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => Failure::new(
            "LimitExceeded",
            format!(
                "time: the handler ran longer than {} ms",
                limits.timeout.as_millis()
            ),
        ),
        Some(Trap::StackOverflow) => {
            Failure::new("LimitExceeded", "stack: the handler recursed too deeply")
        }
        Some(Trap::MemoryOutOfBounds) => Failure::new(
            "Trap",
            "the handler accessed memory out of bounds; in handlers built from Rust or C this usually means their stack overflowed (deep recursion)",
        ),
        Some(Trap::UnreachableCodeReached) => {
            Failure::new("Trap", format!("the handler aborted{}", panic_line()))
        }
        Some(t) => Failure::new("Trap", format!("the handler trapped: {t}{}", panic_line())),
        None => {
            let text = format!("{e:#}");
            if text.contains("resource limit") || text.contains("exceeds") && text.contains("limit")
            {
                Failure::new("LimitExceeded", text)
            } else {
                Failure::new("Trap", text)
            }
        }
    }
}

/// Increments the engine's epoch on a background thread; stops when the
/// engine is dropped.
struct EpochTicker {
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl EpochTicker {
    fn start(engine: &Engine) -> Self {
        let weak = engine.weak();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let _ = std::thread::Builder::new()
            .name("skillhost-epoch".into())
            .spawn(move || {
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    match weak.upgrade() {
                        Some(engine) => engine.increment_epoch(),
                        None => break,
                    }
                }
            });
        EpochTicker { stop }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}
