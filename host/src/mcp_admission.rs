//! Backpressure for a server (`skillhost mcp --http`): how many calls run
//! at once, how many may wait for one of those places, and how many
//! sessions stay open. Past them a caller hears "busy" at once, with when
//! to try again; nothing waits without bound and nothing hangs.
//!
//! The `[mcp]` section of `skillhost.toml` sets the limits; a limit left
//! out is derived from the machine (see [`McpConfig::resolve`]). A module
//! apart from `mcp`, low in the module map: `config` holds `McpConfig`,
//! and `mcp`, far above it, uses the rest.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What a busy answer tells the client to wait before trying again
/// (HTTP `Retry-After`, in seconds). Calls last up to their time limit
/// (5 s by default), most far less: a second is when a place is likely.
pub const RETRY_AFTER_SECS: u64 = 1;

/// The `[mcp]` section: the limits of `skillhost mcp --http`. A limit left
/// out is derived from the machine's cores and memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// Skill calls running at once. Default: 8 per core, no more than
    /// half the memory holds at a call's memory limit, and no more than
    /// the sandbox's pool of instances (64).
    pub max_calls: Option<usize>,
    /// Skill calls waiting for a place to run; a call past them is busy.
    /// Default: 8 per running place. A waiting call holds only its request.
    pub max_queued: Option<usize>,
    /// Open sessions; a new session past them is busy. Default: one per
    /// 2 MiB of memory, between 64 and 4,096.
    pub max_sessions: Option<usize>,
}

/// What the defaults are derived from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostCapacity {
    pub cores: usize,
    /// Memory the process may use.
    pub memory_bytes: u64,
    /// The most one call may make the host hold (its memory limit plus the
    /// host allowance).
    pub call_bytes: u64,
    /// Calls the sandbox's instance pool holds at once: more would wait
    /// there, unseen by this queue.
    pub pool_calls: usize,
}

impl HostCapacity {
    /// This machine's cores and memory (4 GiB when unknown).
    pub fn of_this_machine(call_bytes: u64, pool_calls: usize) -> Self {
        HostCapacity {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: crate::sys::memory_bytes().unwrap_or(4 << 30),
            call_bytes,
            pool_calls,
        }
    }
}

/// The limits in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub calls: usize,
    pub queued: usize,
    pub sessions: usize,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AdmissionError {
    #[error("[mcp] {0} must be at least 1")]
    Zero(&'static str),
}

impl McpConfig {
    /// These settings, each left out taken from `base`.
    pub fn over(&self, base: &McpConfig) -> McpConfig {
        McpConfig {
            max_calls: self.max_calls.or(base.max_calls),
            max_queued: self.max_queued.or(base.max_queued),
            max_sessions: self.max_sessions.or(base.max_sessions),
        }
    }

    /// The limits: what is set, else the default for `host`.
    pub fn resolve(&self, host: HostCapacity) -> Result<Limits, AdmissionError> {
        let by_memory = (host.memory_bytes / 2 / host.call_bytes.max(1)) as usize;
        let calls = self.max_calls.unwrap_or_else(|| {
            (host.cores.max(1) * 8)
                .min(by_memory)
                .min(host.pool_calls)
                .max(1)
        });
        let queued = self.max_queued.unwrap_or(calls.saturating_mul(8));
        let sessions = self
            .max_sessions
            .unwrap_or_else(|| ((host.memory_bytes >> 21) as usize).clamp(64, 4096));
        if calls == 0 {
            return Err(AdmissionError::Zero("max_calls"));
        }
        if sessions == 0 {
            return Err(AdmissionError::Zero("max_sessions"));
        }
        Ok(Limits {
            calls,
            queued,
            sessions,
        })
    }
}

/// Too many calls: every place to run and every place in the queue taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "Busy: {running} calls are running and {queued} waiting, the most this server takes; retry after {RETRY_AFTER_SECS} s"
)]
pub struct Busy {
    pub running: usize,
    pub queued: usize,
}

/// Places to run calls, and a bounded queue for them.
#[derive(Debug)]
pub struct CallGate {
    running: Arc<Semaphore>,
    max_running: usize,
    queued: AtomicUsize,
    max_queued: usize,
}

/// A place to run one call, given back when dropped.
#[derive(Debug)]
pub struct CallPermit {
    _running: OwnedSemaphorePermit,
}

/// A place the HTTP front took for a call, handed on with the request to
/// whoever runs it, who holds it until the run ends and is recorded (a
/// client that goes away does not end the run, so must not free its
/// place). Until taken, the front's response holds it.
#[derive(Clone)]
pub struct HeldPlace(Arc<std::sync::Mutex<Option<CallPermit>>>);

impl HeldPlace {
    pub fn new(place: CallPermit) -> Self {
        HeldPlace(Arc::new(std::sync::Mutex::new(Some(place))))
    }

    /// The place, to whoever runs the call (None once taken).
    pub fn take(&self) -> Option<CallPermit> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Counts a call in the queue while it waits, including when its waiting
/// is abandoned (the client went away).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl CallGate {
    pub fn new(limits: &Limits) -> Self {
        CallGate {
            running: Arc::new(Semaphore::new(limits.calls)),
            max_running: limits.calls,
            queued: AtomicUsize::new(0),
            max_queued: limits.queued,
        }
    }

    /// No limit (stdio: one client, which waits for its own answers).
    pub fn unlimited() -> Self {
        CallGate::new(&Limits {
            calls: Semaphore::MAX_PERMITS,
            queued: 0,
            sessions: usize::MAX,
        })
    }

    /// Calls running now.
    pub fn running(&self) -> usize {
        self.max_running - self.running.available_permits()
    }

    /// Calls waiting now.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// Whether a call arriving now would be busy. A hint, for refusing a
    /// request before reading more of it: [`CallGate::enter`] decides.
    pub fn is_full(&self) -> bool {
        self.running.available_permits() == 0 && self.queued() >= self.max_queued
    }

    fn busy(&self) -> Busy {
        Busy {
            running: self.running(),
            queued: self.queued(),
        }
    }

    /// A place to run, at once or after waiting in the queue; busy at once
    /// when the queue is full too.
    pub async fn enter(&self) -> Result<CallPermit, Busy> {
        if let Ok(p) = self.running.clone().try_acquire_owned() {
            return Ok(CallPermit { _running: p });
        }
        self.queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max_queued).then_some(n + 1)
            })
            .map_err(|_| self.busy())?;
        let _waiting = Waiting(&self.queued);
        // The semaphore is never closed.
        let permit = self
            .running
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| self.busy())?;
        Ok(CallPermit { _running: permit })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn host(cores: usize, memory_bytes: u64) -> HostCapacity {
        HostCapacity {
            cores,
            memory_bytes,
            call_bytes: 96 << 20,
            pool_calls: 64,
        }
    }

    #[test]
    fn defaults_follow_cores_memory_and_the_pool() {
        let two_cores = McpConfig::default().resolve(host(2, 24 * GIB)).unwrap();
        assert_eq!(two_cores.calls, 16);
        assert_eq!(two_cores.queued, 128);
        assert_eq!(two_cores.sessions, 4096);
        // Many cores: the sandbox's pool is the ceiling.
        assert_eq!(
            McpConfig::default()
                .resolve(host(64, 256 * GIB))
                .unwrap()
                .calls,
            64
        );
        // Little memory: half of it at a call's limit, and fewer sessions.
        let small = McpConfig::default().resolve(host(8, GIB)).unwrap();
        assert_eq!(small.calls, 5);
        assert_eq!(small.sessions, 512);
        // Never below one call or 64 sessions.
        let tiny = McpConfig::default().resolve(host(1, 16 << 20)).unwrap();
        assert_eq!((tiny.calls, tiny.sessions), (1, 64));
    }

    #[test]
    fn what_is_set_wins_and_zero_is_refused() {
        let set = McpConfig {
            max_calls: Some(3),
            max_queued: Some(0),
            max_sessions: Some(7),
        };
        assert_eq!(
            set.resolve(host(2, GIB)).unwrap(),
            Limits {
                calls: 3,
                queued: 0,
                sessions: 7
            }
        );
        let zero_calls = McpConfig {
            max_calls: Some(0),
            ..McpConfig::default()
        };
        assert_eq!(
            zero_calls.resolve(host(2, GIB)),
            Err(AdmissionError::Zero("max_calls"))
        );
        let zero_sessions = McpConfig {
            max_sessions: Some(0),
            ..McpConfig::default()
        };
        assert_eq!(
            zero_sessions.resolve(host(2, GIB)),
            Err(AdmissionError::Zero("max_sessions"))
        );
    }

    #[test]
    fn the_config_section_parses_and_refuses_unknown_keys() {
        let c: McpConfig = toml::from_str("max_calls = 4\nmax_sessions = 10").unwrap();
        assert_eq!(c.max_calls, Some(4));
        assert_eq!(c.max_queued, None);
        assert!(toml::from_str::<McpConfig>("max_call = 4").is_err());
    }

    fn gate(calls: usize, queued: usize) -> Arc<CallGate> {
        Arc::new(CallGate::new(&Limits {
            calls,
            queued,
            sessions: 1,
        }))
    }

    #[tokio::test]
    async fn past_the_places_and_the_queue_a_call_is_busy_until_one_ends() {
        let gate = gate(2, 1);
        let a = gate.enter().await.expect("first place");
        let _b = gate.enter().await.expect("second place");
        assert!(!gate.is_full());
        // The third waits in the queue.
        let waiter = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.enter().await.map(|_| ()) })
        };
        while gate.queued() == 0 {
            tokio::task::yield_now().await;
        }
        assert!(gate.is_full());
        assert_eq!(
            gate.enter().await.map(|_| ()),
            Err(Busy {
                running: 2,
                queued: 1
            })
        );
        // A place freed goes to the waiter, and the queue has room again.
        drop(a);
        waiter.await.unwrap().expect("the queued call runs");
        assert_eq!(gate.queued(), 0);
        assert!(gate.enter().await.is_ok());
    }

    #[tokio::test]
    async fn an_abandoned_wait_leaves_the_queue() {
        let gate = gate(1, 1);
        let _running = gate.enter().await.expect("place");
        let waiter = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.enter().await.map(|_| ()) })
        };
        while gate.queued() == 0 {
            tokio::task::yield_now().await;
        }
        waiter.abort();
        let _ = waiter.await;
        assert_eq!(gate.queued(), 0);
        assert!(!gate.is_full());
    }

    #[tokio::test]
    async fn with_no_queue_the_call_past_the_places_is_busy() {
        let gate = gate(1, 0);
        let held = gate.enter().await.expect("place");
        assert!(gate.is_full());
        assert!(gate.enter().await.is_err());
        drop(held);
        assert!(gate.enter().await.is_ok());
    }
}
