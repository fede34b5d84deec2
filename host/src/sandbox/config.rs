//! The sandbox's settings: the `[limits]` and `[sandbox]` sections of
//! `skillhost.toml`. The crate's `config` collects them; the sandbox owns
//! their meaning and defaults.

use serde::{Deserialize, Serialize};

/// Limits applied to every handler call, and the ceilings a skill's own
/// `limits` may not exceed. A skill may ask for less than a default on its
/// own; above a default it needs the operator's grant (`[grants.NAME.limits]`,
/// or trust by source), and never above the `max_*` ceiling. The per-call
/// host allowances (`host_mb`, `resources`, `open_files`) and the file quota
/// are the operator's alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitDefaults {
    /// Linear memory of one call, all memories of the component together.
    pub memory_mb: u64,
    /// Wall-clock time of one call.
    pub timeout_ms: u64,
    /// Everything a call returns: body, content type, flags, or a failure's
    /// class and message.
    pub output_kb: u64,
    /// Tables of one call.
    pub tables: u32,
    /// Table elements of one call, all tables together.
    pub table_elements: u32,
    /// Core and component instances of one call.
    pub instances: u32,
    pub max_memory_mb: u64,
    pub max_timeout_ms: u64,
    pub max_output_kb: u64,
    pub max_tables: u32,
    pub max_table_elements: u32,
    pub max_instances: u32,
    /// The host allowance: a call's linear memories and the host memory it
    /// makes the host hold (resource-table entries, HTTP header fields,
    /// request paths, events, what it returns) together stay within
    /// `memory_mb` plus this.
    pub host_mb: u64,
    /// Host objects (descriptors, streams, HTTP fields, ...) one call may
    /// hold at once.
    pub resources: u32,
    /// Open files and directories one call may hold at once.
    pub open_files: u32,
    /// Bytes a skill may keep in the folders it may write, all together.
    pub file_quota_mb: u64,
    /// Key and value bytes a skill may keep in the key-value store, all
    /// together. The store is for small state (counters, settings, cached
    /// answers), not bulk data, which belongs in a granted folder: 1 MiB is
    /// sixteen values of the largest size a single write takes (64 KiB).
    pub kv_quota_kb: u64,
    /// Keys a skill may keep in the key-value store. Bounds the rows, whose
    /// own overhead the byte quota does not count: without it, 1 MiB would
    /// hold a million one-byte keys. 1,000 is far above what a handler's
    /// state needs and keeps a skill's rows cheap to count on every write.
    pub kv_max_keys: u64,
}

impl Default for LimitDefaults {
    fn default() -> Self {
        LimitDefaults {
            memory_mb: 64,
            timeout_ms: 5_000,
            output_kb: 1_024,
            tables: 20,
            table_elements: 100_000,
            instances: 50,
            max_memory_mb: 1_024,
            max_timeout_ms: 60_000,
            max_output_kb: 16 * 1_024,
            max_tables: 100,
            max_table_elements: 1_000_000,
            max_instances: 200,
            host_mb: 32,
            resources: 4_096,
            open_files: 64,
            file_quota_mb: 64,
            kv_quota_kb: 1_024,
            kv_max_keys: 1_000,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// Use wasmtime's pooling allocator. On by default: release figures
    /// (`benches/sandbox.rs`, 2 cores) put a trivial call at 0.20-0.21x
    /// its time with on-demand allocation (10.4-10.7 µs against 51-54 µs),
    /// which maps and unmaps every memory and stack per call and so also
    /// keeps concurrent calls from scaling. The pool holds 64 calls at
    /// once; more wait for a slot within their time limit.
    pub pooling: bool,
    /// Keep compiled components on disk, keyed by content and engine.
    pub cache: bool,
    /// Largest component the host will compile.
    pub max_component_mb: u64,
    /// Largest single function body the host will compile. Compile time and
    /// memory grow faster than linearly with a function's size, so this is
    /// what bounds them; the largest function of a real handler (an
    /// interpreter loop of the Python or JavaScript runtime) is far below it.
    pub max_function_kb: u64,
    /// How long a call waits for its handler to compile.
    pub compile_timeout_ms: u64,
    /// Move a handler still running at its first epoch tick to threads of
    /// its own, apart from the threads that serve requests: a handler
    /// spinning to its deadline then delays another client's answer by
    /// one tick at most. Costs two thread hand-offs for a call that runs
    /// that long; `skillhost mcp` always turns it on.
    pub dedicated_threads: bool,
    /// Which compilers make a handler's code (see [`Compiler`]).
    pub compiler: Compiler,
}

/// How a handler that is in no cache gets compiled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compiler {
    /// Winch (a baseline compiler: about 6x quicker, less optimised code)
    /// for the first call, then Cranelift in the background; its code
    /// replaces Winch's and is what the disk cache keeps. A component Winch
    /// cannot compile (e.g. it uses wasm exceptions or tail calls) is
    /// compiled with Cranelift, with a log line saying why.
    #[default]
    Tiered,
    /// Cranelift only: the first call waits for the optimised code.
    Cranelift,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            pooling: true,
            cache: true,
            max_component_mb: 100,
            max_function_kb: 2_048,
            compile_timeout_ms: 120_000,
            dedicated_threads: false,
            compiler: Compiler::Tiered,
        }
    }
}
