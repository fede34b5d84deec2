//! Resource limits: always on, host defaults with per-skill overrides
//! clamped to the operator's ceilings, enforced by a limiter that remembers
//! which limit stopped the guest so the failure can say so.

use std::time::Duration;

use crate::config::LimitDefaults;
use crate::skill::LimitSpec;

/// The limits one handler call runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Per linear memory, in bytes.
    pub memory_bytes: usize,
    pub timeout: Duration,
    pub output_bytes: usize,
    pub tables: usize,
    pub table_elements: usize,
    pub instances: usize,
    /// Linear memories per store (the handler plus its adapters).
    pub memories: usize,
    /// Total bytes of log lines kept per call.
    pub log_bytes: usize,
}

impl Limits {
    /// The skill's overrides where it has them, the defaults elsewhere, and
    /// never above the operator's ceilings.
    pub fn resolve(spec: &LimitSpec, defaults: &LimitDefaults) -> Limits {
        let mb = |v: u64| usize::try_from(v.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        let memory_mb = spec
            .memory_mb
            .unwrap_or(defaults.memory_mb)
            .clamp(1, defaults.max_memory_mb.max(1));
        let timeout_ms = spec
            .timeout_ms
            .unwrap_or(defaults.timeout_ms)
            .clamp(1, defaults.max_timeout_ms.max(1));
        let output_kb = spec
            .output_kb
            .unwrap_or(defaults.output_kb)
            .clamp(1, defaults.max_output_kb.max(1));
        Limits {
            memory_bytes: mb(memory_mb),
            timeout: Duration::from_millis(timeout_ms),
            output_bytes: usize::try_from(output_kb.saturating_mul(1024)).unwrap_or(usize::MAX),
            tables: spec.tables.unwrap_or(defaults.tables) as usize,
            table_elements: spec.table_elements.unwrap_or(defaults.table_elements) as usize,
            instances: spec.instances.unwrap_or(defaults.instances) as usize,
            memories: 8,
            log_bytes: 64 * 1024,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::resolve(&LimitSpec::default(), &LimitDefaults::default())
    }
}

/// wasmtime's resource limiter for one store. It refuses growth past the
/// limits (the guest sees an allocation failure) and records the first
/// refusal so a resulting trap is reported as `LimitExceeded`.
pub(crate) struct Limiter {
    limits: Limits,
    pub(crate) hit: Option<String>,
}

impl Limiter {
    pub(crate) fn new(limits: Limits) -> Self {
        Limiter { limits, hit: None }
    }

    fn refuse(&mut self, what: String) -> wasmtime::Result<bool> {
        self.hit.get_or_insert(what);
        Ok(false)
    }
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limits.memory_bytes {
            return self.refuse(format!(
                "memory: the handler asked for {} MiB, the limit is {} MiB",
                desired >> 20,
                self.limits.memory_bytes >> 20
            ));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limits.table_elements {
            return self.refuse(format!(
                "table elements: the handler asked for {desired}, the limit is {}",
                self.limits.table_elements
            ));
        }
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

    #[test]
    fn skill_overrides_are_clamped_to_ceilings() {
        let d = LimitDefaults::default();
        let spec = LimitSpec {
            memory_mb: Some(1 << 20),
            timeout_ms: Some(10),
            ..LimitSpec::default()
        };
        let l = Limits::resolve(&spec, &d);
        assert_eq!(l.memory_bytes, (d.max_memory_mb as usize) << 20);
        assert_eq!(l.timeout, Duration::from_millis(10));
        assert_eq!(l.output_bytes, d.output_kb as usize * 1024);
    }

    #[test]
    fn zero_limits_are_raised_to_one() {
        let spec = LimitSpec {
            memory_mb: Some(0),
            timeout_ms: Some(0),
            output_kb: Some(0),
            ..LimitSpec::default()
        };
        let l = Limits::resolve(&spec, &LimitDefaults::default());
        assert_eq!(l.memory_bytes, 1 << 20);
        assert_eq!(l.timeout, Duration::from_millis(1));
        assert_eq!(l.output_bytes, 1024);
    }
}
