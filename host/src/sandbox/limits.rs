//! Resource limits: always on. A skill may ask for less than a default;
//! above a default it needs the operator's grant (or trust by source), and
//! never above the operator's ceiling. The limiter counts every memory and
//! every table of the call together and remembers which limit stopped the
//! guest so the failure can say so.

use std::time::Duration;

use wasmtime::{Enabled, PoolingAllocationConfig};

use super::config::LimitDefaults;
use crate::skill::LimitSpec;

/// Linear memories one call may define (the handler plus its adapters).
const MEMORIES_PER_CALL: usize = 8;

/// Calls the pooling allocator holds at once; a call beyond them waits for
/// one to end, within its own time limit.
pub const POOL_CALLS: u32 = 64;

/// Dirty bytes of one linear memory (or table) reset by copying when its
/// slot is freed, rather than by `madvise`: `madvise` and the page faults
/// after it take the process's memory-map lock and flush the TLB of every
/// core running the process, which is what kept concurrent calls from
/// scaling (`benches/sandbox.rs`). A trivial handler dirties a few pages;
/// an idle slot keeps at most this much resident.
const KEEP_RESIDENT_MEMORY: usize = 1 << 20;
const KEEP_RESIDENT_TABLE: usize = 64 << 10;

/// The pooling allocator, sized so that `POOL_CALLS` calls at the default
/// limits always find their slots, and that no component the limits allow
/// is refused by the pool instead: one memory slot covers all of wasm32
/// (the address space each slot reserves anyway), one table the largest
/// a call may hold.
pub(crate) fn pooling_config() -> PoolingAllocationConfig {
    let d = LimitDefaults::default();
    let calls = POOL_CALLS;
    let per_call = |n: u32| calls.saturating_mul(n);
    let memories = u32::try_from(MEMORIES_PER_CALL).unwrap_or(u32::MAX);
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(calls)
        .total_core_instances(per_call(d.instances))
        .total_memories(per_call(memories))
        .total_tables(per_call(d.tables))
        // A call runs on one fiber at a time; twice that leaves room for
        // a store that is being dropped while the next call starts.
        .total_stacks(per_call(2))
        .max_core_instances_per_component(d.max_instances)
        .max_memories_per_component(memories)
        .max_memories_per_module(memories)
        .max_tables_per_component(d.max_tables)
        .max_tables_per_module(d.max_tables)
        .table_elements(usize::try_from(d.max_table_elements).unwrap_or(usize::MAX))
        .max_memory_size(1 << 32);
    // Without PAGEMAP_SCAN (Linux before 6.7) keeping memory resident means
    // copying its first bytes back whether they were written or not.
    if PoolingAllocationConfig::is_pagemap_scan_available() {
        pool.pagemap_scan(Enabled::Yes)
            .linear_memory_keep_resident(KEEP_RESIDENT_MEMORY)
            .table_keep_resident(KEEP_RESIDENT_TABLE);
    }
    pool
}

/// The limits one handler call runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// All linear memories of the call together, in bytes.
    pub memory_bytes: usize,
    pub timeout: Duration,
    /// Everything the call returns together (see `Sandbox::call`).
    pub output_bytes: usize,
    pub tables: usize,
    /// All tables of the call together, in elements.
    pub table_elements: usize,
    pub instances: usize,
    /// Linear memories per store (the handler plus its adapters).
    pub memories: usize,
    /// Total bytes of log lines kept per call.
    pub log_bytes: usize,
    /// The host allowance: memory and host memory together stay within
    /// `memory_bytes` plus this (see `host_budget`).
    pub host_bytes: usize,
    /// Resource-table entries the call may hold at once.
    pub resources: usize,
    /// Open files and directories the call may hold at once.
    pub open_files: usize,
    /// Bytes the skill may keep in its writable folders, all together.
    pub file_quota_bytes: u64,
}

/// Events (denials, requests, tool calls) kept per call: the call's event
/// log is the capabilities' (`grants::Events`).
pub use crate::grants::MAX_EVENTS;

impl Limits {
    /// The skill's requests where it has them, the defaults elsewhere. A
    /// request above a default is honoured only as far as `raise` (what the
    /// operator granted, or what a trusted skill declares) allows, and never
    /// above the operator's ceiling.
    pub fn resolve(spec: &LimitSpec, raise: &LimitSpec, defaults: &LimitDefaults) -> Limits {
        fn pick(asked: Option<u64>, raise: Option<u64>, default: u64, ceiling: u64) -> u64 {
            let allowed = raise.unwrap_or(default).max(default).min(ceiling.max(1));
            asked.unwrap_or(default).min(allowed).max(1)
        }
        let wide = |v: Option<u32>| v.map(u64::from);
        let memory_mb = pick(
            spec.memory_mb,
            raise.memory_mb,
            defaults.memory_mb,
            defaults.max_memory_mb,
        );
        let timeout_ms = pick(
            spec.timeout_ms,
            raise.timeout_ms,
            defaults.timeout_ms,
            defaults.max_timeout_ms,
        );
        let output_kb = pick(
            spec.output_kb,
            raise.output_kb,
            defaults.output_kb,
            defaults.max_output_kb,
        );
        let tables = pick(
            wide(spec.tables),
            wide(raise.tables),
            u64::from(defaults.tables),
            u64::from(defaults.max_tables),
        );
        let table_elements = pick(
            wide(spec.table_elements),
            wide(raise.table_elements),
            u64::from(defaults.table_elements),
            u64::from(defaults.max_table_elements),
        );
        let instances = pick(
            wide(spec.instances),
            wide(raise.instances),
            u64::from(defaults.instances),
            u64::from(defaults.max_instances),
        );
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        let mb = |v: u64| size(v.saturating_mul(1 << 20));
        Limits {
            memory_bytes: mb(memory_mb),
            timeout: Duration::from_millis(timeout_ms),
            output_bytes: size(output_kb.saturating_mul(1024)),
            tables: size(tables),
            table_elements: size(table_elements),
            instances: size(instances),
            memories: MEMORIES_PER_CALL,
            log_bytes: 64 * 1024,
            host_bytes: mb(defaults.host_mb.max(1)),
            resources: size(u64::from(defaults.resources.max(16))),
            open_files: size(u64::from(defaults.open_files)),
            file_quota_bytes: defaults.file_quota_mb.saturating_mul(1 << 20),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::resolve(
            &LimitSpec::default(),
            &LimitSpec::default(),
            &LimitDefaults::default(),
        )
    }
}

/// A limit that stopped a call: one the limiter refused (the guest saw an
/// allocation fail, and may trap because of it), or the host budget, which
/// the epoch callback raises as the call's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LimitHit {
    #[error(
        "memory: the handler asked for {} MiB in all, the limit is {} MiB",
        .asked >> 20,
        .limit >> 20
    )]
    Memory { asked: usize, limit: usize },
    #[error("table elements: the handler asked for {asked} in all, the limit is {limit}")]
    TableElements { asked: usize, limit: usize },
    #[error(
        "host memory: the handler's memory and what it made the host hold came to more than {} MiB (its memory limit plus [limits] host_mb)",
        .limit >> 20
    )]
    HostMemory { limit: usize },
}

/// wasmtime's resource limiter for one store. It sums every memory and
/// every table of the call (a component may define several of each),
/// refuses growth past the limits (the guest sees an allocation failure)
/// and records the first refusal so a resulting trap is reported as
/// `LimitExceeded`.
pub(crate) struct Limiter {
    limits: Limits,
    memory_bytes: usize,
    table_elements: usize,
    pub(crate) hit: Option<LimitHit>,
}

impl Limiter {
    pub(crate) fn new(limits: Limits) -> Self {
        Limiter {
            limits,
            memory_bytes: 0,
            table_elements: 0,
            hit: None,
        }
    }

    fn refuse(&mut self, what: LimitHit) -> wasmtime::Result<bool> {
        self.hit.get_or_insert(what);
        Ok(false)
    }

    /// Memory held by the call's linear memories now.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.memory_bytes
    }
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self
            .memory_bytes
            .saturating_sub(current)
            .saturating_add(desired);
        if total > self.limits.memory_bytes {
            return self.refuse(LimitHit::Memory {
                asked: total,
                limit: self.limits.memory_bytes,
            });
        }
        self.memory_bytes = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self
            .table_elements
            .saturating_sub(current)
            .saturating_add(desired);
        if total > self.limits.table_elements {
            return self.refuse(LimitHit::TableElements {
                asked: total,
                limit: self.limits.table_elements,
            });
        }
        self.table_elements = total;
        Ok(true)
    }

    fn instances(&self) -> usize {
        self.limits.instances
    }

    fn tables(&self) -> usize {
        self.limits.tables
    }

    fn memories(&self) -> usize {
        self.limits.memories
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::ResourceLimiter;

    #[test]
    fn requests_above_a_default_need_a_raise_and_stop_at_the_ceiling() {
        let d = LimitDefaults::default();
        let spec = LimitSpec {
            memory_mb: Some(1 << 20),
            timeout_ms: Some(10_000_000),
            table_elements: Some(u32::MAX),
            tables: Some(u32::MAX),
            instances: Some(u32::MAX),
            ..LimitSpec::default()
        };
        // Not raised: the defaults.
        let l = Limits::resolve(&spec, &LimitSpec::default(), &d);
        assert_eq!(l.memory_bytes, (d.memory_mb as usize) << 20);
        assert_eq!(l.timeout, Duration::from_millis(d.timeout_ms));
        assert_eq!(l.table_elements, d.table_elements as usize);
        assert_eq!(l.tables, d.tables as usize);
        assert_eq!(l.instances, d.instances as usize);
        // Raised as far as the skill asks: the ceilings.
        let l = Limits::resolve(&spec, &spec, &d);
        assert_eq!(l.memory_bytes, (d.max_memory_mb as usize) << 20);
        assert_eq!(l.timeout, Duration::from_millis(d.max_timeout_ms));
        assert_eq!(l.table_elements, d.max_table_elements as usize);
        assert_eq!(l.tables, d.max_tables as usize);
        assert_eq!(l.instances, d.max_instances as usize);
        // Raised less than asked: the raise.
        let raise = LimitSpec {
            memory_mb: Some(128),
            ..LimitSpec::default()
        };
        let l = Limits::resolve(&spec, &raise, &d);
        assert_eq!(l.memory_bytes, 128 << 20);
        // Asking for less never needs a grant.
        let small = LimitSpec {
            memory_mb: Some(8),
            timeout_ms: Some(10),
            ..LimitSpec::default()
        };
        let l = Limits::resolve(&small, &LimitSpec::default(), &d);
        assert_eq!(l.memory_bytes, 8 << 20);
        assert_eq!(l.timeout, Duration::from_millis(10));
    }

    #[test]
    fn zero_limits_are_raised_to_one() {
        let spec = LimitSpec {
            memory_mb: Some(0),
            timeout_ms: Some(0),
            output_kb: Some(0),
            ..LimitSpec::default()
        };
        let l = Limits::resolve(&spec, &LimitSpec::default(), &LimitDefaults::default());
        assert_eq!(l.memory_bytes, 1 << 20);
        assert_eq!(l.timeout, Duration::from_millis(1));
        assert_eq!(l.output_bytes, 1024);
    }

    fn hit(l: &Limiter) -> String {
        l.hit.map(|h| h.to_string()).unwrap_or_default()
    }

    #[test]
    fn memories_and_tables_count_together() {
        let limits = Limits {
            memory_bytes: 64 << 20,
            table_elements: 1000,
            ..Limits::default()
        };
        let mut l = Limiter::new(limits);
        // Eight memories of 8 MiB fit; a ninth 8 MiB does not.
        for _ in 0..8 {
            assert!(l.memory_growing(0, 8 << 20, None).expect("limiter"));
        }
        assert!(!l.memory_growing(0, 8 << 20, None).expect("limiter"));
        assert!(hit(&l).contains("memory"));
        // Growing one that exists counts only the difference.
        let mut l = Limiter::new(limits);
        assert!(l.memory_growing(0, 32 << 20, None).expect("limiter"));
        assert!(l.memory_growing(32 << 20, 64 << 20, None).expect("limiter"));
        assert_eq!(l.memory_bytes(), 64 << 20);
        // Tables likewise.
        let mut l = Limiter::new(limits);
        assert!(l.table_growing(0, 600, None).expect("limiter"));
        assert!(!l.table_growing(0, 600, None).expect("limiter"));
        assert!(hit(&l).contains("table elements"));
    }
}
