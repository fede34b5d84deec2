//! The epoch ticker: one background thread that increments the engines'
//! epochs every [`EPOCH_TICK`] while at least one call runs, and sleeps,
//! not woken at all, while none does.
//!
//! A short call (an echo handler takes tens of microseconds) ends before
//! its first tick, so on Linux the tick is a timer armed by the first call
//! to start and disarmed by the last to end (`timerfd`): short calls cost
//! two system calls and no thread wake-up. A ticker that went on ticking
//! between calls woke a thousand times a second: 0.3 wake-ups and 10 µs of
//! CPU per stdio `echo` call in a release build. One woken at every call's
//! start would cost a wake-up per call instead.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::Engine;

/// How often the epoch ticks. A running guest yields to the executor at
/// every tick, so time limits hold in wall-clock time under concurrency
/// and are rounded up to it, and the host budget is checked. Release
/// figures (`benches/mcp_spin.rs`, `benches/flood_rss.rs`): at 5 ms, 8
/// concurrent spins ended at 1.30x their limit and a header flood
/// overshot its budget by 4%; at 1 ms, 1.07x and 1%.
pub const EPOCH_TICK: Duration = Duration::from_millis(1);

/// Increments the epochs of its engines while calls run (see the module
/// docs). Dropping it stops its thread.
pub struct EpochTicker {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    /// Calls running now; the alarm is armed and disarmed under it.
    calls: Mutex<usize>,
    alarm: Alarm,
    stop: AtomicBool,
    /// Ticks so far (for tests).
    ticks: AtomicU64,
}

impl Shared {
    fn calls(&self) -> MutexGuard<'_, usize> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running call: the epoch ticks until it is dropped.
pub struct Ticking(Arc<Shared>);

impl Drop for Ticking {
    fn drop(&mut self) {
        let mut calls = self.0.calls();
        *calls -= 1;
        if *calls == 0 && !self.0.stop.load(Ordering::Relaxed) {
            self.0.alarm.disarm();
        }
    }
}

impl EpochTicker {
    /// A ticker for `engines`, on the system's timer where there is one.
    /// Fails if its thread cannot be started: without ticks a spinning
    /// guest would never be stopped, so there is no sandbox without them.
    pub fn start(engines: &[&Engine]) -> std::io::Result<Self> {
        Self::with_alarm(engines, Alarm::new(EPOCH_TICK))
    }

    fn with_alarm(engines: &[&Engine], alarm: Alarm) -> std::io::Result<Self> {
        let engines: Vec<_> = engines.iter().map(|e| e.weak()).collect();
        let shared = Arc::new(Shared {
            calls: Mutex::new(0),
            alarm,
            stop: AtomicBool::new(false),
            ticks: AtomicU64::new(0),
        });
        let ticker = shared.clone();
        let thread = std::thread::Builder::new()
            .name("skillhost-epoch".into())
            .spawn(move || {
                loop {
                    ticker.alarm.wait();
                    if ticker.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    ticker.ticks.fetch_add(1, Ordering::Relaxed);
                    for weak in &engines {
                        match weak.upgrade() {
                            Some(engine) => engine.increment_epoch(),
                            None => return,
                        }
                    }
                }
            });
        Ok(EpochTicker {
            shared,
            thread: Some(thread?),
        })
    }

    /// Marks a call as running until the returned guard is dropped; the
    /// first call to start arms the tick.
    pub fn call_started(&self) -> Ticking {
        let mut calls = self.shared.calls();
        if *calls == 0 {
            self.shared.alarm.arm();
        }
        *calls += 1;
        Ticking(self.shared.clone())
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        {
            let _calls = self.shared.calls();
            self.shared.stop.store(true, Ordering::Relaxed);
            self.shared.alarm.ring_now();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the ticker's thread waits on: a periodic timer that is armed only
/// while calls run.
enum Alarm {
    /// A `timerfd`: arming and disarming it wakes no thread.
    #[cfg(target_os = "linux")]
    Timer {
        fd: std::os::fd::OwnedFd,
        tick: Duration,
    },
    /// Elsewhere, or where no timer can be made: a thread that sleeps a
    /// tick at a time while armed, woken by the first call after a pause.
    Sleeper {
        state: Mutex<SleeperState>,
        wake: Condvar,
        tick: Duration,
    },
}

#[derive(Default)]
struct SleeperState {
    armed: bool,
    /// Wake once even though disarmed (to stop).
    ring: bool,
}

impl Alarm {
    fn new(tick: Duration) -> Self {
        #[cfg(target_os = "linux")]
        match timer::create() {
            Ok(fd) => return Alarm::Timer { fd, tick },
            Err(e) => tracing::warn!(
                "cannot make a timer for the epoch ticker ({e}); it wakes at every call instead"
            ),
        }
        Self::sleeper(tick)
    }

    fn sleeper(tick: Duration) -> Self {
        Alarm::Sleeper {
            state: Mutex::new(SleeperState::default()),
            wake: Condvar::new(),
            tick,
        }
    }

    fn sleeper_state(state: &Mutex<SleeperState>) -> MutexGuard<'_, SleeperState> {
        state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Rings every tick from now on.
    fn arm(&self) {
        match self {
            #[cfg(target_os = "linux")]
            Alarm::Timer { fd, tick } => timer::set(fd, *tick, *tick),
            Alarm::Sleeper { state, wake, .. } => {
                Self::sleeper_state(state).armed = true;
                wake.notify_one();
            }
        }
    }

    /// Rings no more; wakes nothing.
    fn disarm(&self) {
        match self {
            #[cfg(target_os = "linux")]
            Alarm::Timer { fd, .. } => timer::set(fd, Duration::ZERO, Duration::ZERO),
            Alarm::Sleeper { state, .. } => Self::sleeper_state(state).armed = false,
        }
    }

    /// Rings once, now, armed or not.
    fn ring_now(&self) {
        match self {
            #[cfg(target_os = "linux")]
            Alarm::Timer { fd, .. } => timer::set(fd, Duration::from_nanos(1), Duration::ZERO),
            Alarm::Sleeper { state, wake, .. } => {
                Self::sleeper_state(state).ring = true;
                wake.notify_one();
            }
        }
    }

    /// Waits for the next ring.
    fn wait(&self) {
        match self {
            #[cfg(target_os = "linux")]
            Alarm::Timer { fd, tick } => {
                if !timer::wait(fd) {
                    // Not expected of a timerfd; never spin on it.
                    std::thread::sleep(*tick);
                }
            }
            Alarm::Sleeper { state, wake, tick } => {
                let mut s = Self::sleeper_state(state);
                while !s.armed && !s.ring {
                    s = wake.wait(s).unwrap_or_else(|p| p.into_inner());
                }
                if std::mem::take(&mut s.ring) {
                    return;
                }
                drop(s);
                std::thread::sleep(*tick);
            }
        }
    }

    /// Whether it rings at the next tick (for tests).
    #[cfg(test)]
    fn armed(&self) -> bool {
        match self {
            #[cfg(target_os = "linux")]
            Alarm::Timer { fd, .. } => timer::armed(fd),
            Alarm::Sleeper { state, .. } => Self::sleeper_state(state).armed,
        }
    }
}

/// Linux's `timerfd`, through libc.
#[cfg(target_os = "linux")]
mod timer {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::time::Duration;

    pub fn create() -> std::io::Result<OwnedFd> {
        // SAFETY: timerfd_create takes no pointers; a non-negative result
        // is a new descriptor that nothing else owns.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: see above.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    fn timespec(d: Duration) -> libc::timespec {
        libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        }
    }

    /// Expires after `first`, then every `every`; a zero `first` disarms.
    pub fn set(fd: &OwnedFd, first: Duration, every: Duration) {
        let spec = libc::itimerspec {
            it_interval: timespec(every),
            it_value: timespec(first),
        };
        // SAFETY: `spec` is a valid itimerspec; the old value is not asked
        // for. With a valid timerfd and valid times this cannot fail.
        let r = unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if r != 0 {
            tracing::error!(
                "cannot set the epoch timer: {}",
                std::io::Error::last_os_error()
            );
        }
    }

    /// Blocks until the timer expires; false if it cannot be read.
    pub fn wait(fd: &OwnedFd) -> bool {
        let mut expirations = 0u64;
        loop {
            // SAFETY: reads at most 8 bytes into a u64 that outlives the call.
            let n = unsafe {
                libc::read(
                    fd.as_raw_fd(),
                    (&mut expirations as *mut u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
            if n == std::mem::size_of::<u64>() as isize {
                return true;
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return false;
            }
        }
    }

    #[cfg(test)]
    pub fn armed(fd: &OwnedFd) -> bool {
        // SAFETY: an all-zero itimerspec is valid; gettime fills it in.
        let mut spec: libc::itimerspec = unsafe { std::mem::zeroed() };
        // SAFETY: `spec` is a valid, writable itimerspec.
        let r = unsafe { libc::timerfd_gettime(fd.as_raw_fd(), &mut spec) };
        r == 0 && (spec.it_value.tv_sec != 0 || spec.it_value.tv_nsec != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> Engine {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        Engine::new(&config).expect("engine")
    }

    /// Each kind of alarm this platform has.
    fn alarms() -> Vec<(&'static str, Alarm)> {
        let mut alarms = vec![("sleeper", Alarm::sleeper(EPOCH_TICK))];
        #[cfg(target_os = "linux")]
        alarms.push((
            "timer",
            Alarm::Timer {
                fd: timer::create().expect("timerfd"),
                tick: EPOCH_TICK,
            },
        ));
        alarms
    }

    fn ticks(ticker: &EpochTicker) -> u64 {
        ticker.shared.ticks.load(Ordering::Relaxed)
    }

    /// Waits (bounded by a guard, not a time threshold) for `n` more ticks.
    fn ticks_past(ticker: &EpochTicker, kind: &str, n: u64) {
        let from = ticks(ticker);
        for _ in 0..10_000 {
            if ticks(ticker) >= from + n {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("{kind}: the ticker never ticked {n} times for a running call");
    }

    #[test]
    fn the_epoch_ticks_while_a_call_runs_and_not_between_calls() {
        for (kind, alarm) in alarms() {
            let engine = engine();
            let ticker = EpochTicker::with_alarm(&[&engine], alarm).expect("ticker");
            assert!(!ticker.shared.alarm.armed(), "{kind}: armed with no call");
            let call = ticker.call_started();
            ticks_past(&ticker, kind, 3);
            drop(call);
            assert!(!ticker.shared.alarm.armed(), "{kind}: armed after the call");
            // At most the tick already rung when the call ended follows.
            let idle = ticks(&ticker);
            std::thread::sleep(EPOCH_TICK * 20);
            assert!(ticks(&ticker) <= idle + 1, "{kind}: ticked between calls");
            // The next call is ticked for again.
            let again = ticker.call_started();
            ticks_past(&ticker, kind, 2);
            drop(again);
        }
    }

    #[test]
    fn the_epoch_ticks_until_the_last_of_several_calls_ends() {
        for (kind, alarm) in alarms() {
            let engine = engine();
            let ticker = EpochTicker::with_alarm(&[&engine], alarm).expect("ticker");
            let first = ticker.call_started();
            let second = ticker.call_started();
            drop(first);
            assert!(
                ticker.shared.alarm.armed(),
                "{kind}: disarmed with a call running"
            );
            ticks_past(&ticker, kind, 2);
            drop(second);
            assert!(
                !ticker.shared.alarm.armed(),
                "{kind}: armed after the last call"
            );
        }
    }

    #[test]
    fn ticks_advance_the_engines_epoch() {
        let engine = engine();
        let ticker = EpochTicker::start(&[&engine]).expect("ticker");
        let mut store = wasmtime::Store::new(&engine, ());
        // A deadline of one tick from now: it has passed once the epoch
        // has moved; a store reports that through a module that loops.
        store.set_epoch_deadline(1);
        let module =
            wasmtime::Module::new(&engine, r#"(module (func (export "spin") (loop (br 0))))"#)
                .expect("module");
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).expect("instance");
        let spin = instance
            .get_typed_func::<(), ()>(&mut store, "spin")
            .expect("spin");
        // A guard, not a time threshold: a ticker that never ticks fails
        // this test instead of hanging it.
        let guard = Arc::new(AtomicBool::new(false));
        let (fired, weak) = (guard.clone(), engine.weak());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(60));
            fired.store(true, Ordering::Relaxed);
            if let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
            }
        });
        let call = ticker.call_started();
        let trap = spin
            .call(&mut store, ())
            .expect_err("the tick interrupts the loop");
        drop(call);
        assert!(!guard.load(Ordering::Relaxed), "the ticker never ticked");
        assert_eq!(
            trap.downcast_ref::<wasmtime::Trap>(),
            Some(&wasmtime::Trap::Interrupt)
        );
    }

    #[test]
    fn dropping_the_ticker_stops_its_thread_with_calls_running() {
        for (_, alarm) in alarms() {
            let engine = engine();
            let ticker = EpochTicker::with_alarm(&[&engine], alarm).expect("ticker");
            let call = ticker.call_started();
            // Joins the thread: a ticker that did not stop hangs this test.
            drop(ticker);
            drop(call);
        }
    }
}
