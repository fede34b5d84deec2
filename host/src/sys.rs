//! What the host asks of the operating system beyond the standard library.

/// Nice 19 for the calling thread: background work (a Cranelift compile,
/// storing runs) then gets a core only when no request wants it.
pub fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid has no preconditions; setpriority on a thread id
    // changes only that thread's nice value (Linux threads are tasks).
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid, 19);
    }
}

/// The lowest priority there is for the calling thread: nice 19 and, on
/// Linux, the `SCHED_IDLE` policy, under which the scheduler preempts the
/// thread as soon as any other wants its core, and counts a core running
/// only such threads as idle when it places a waking one.
pub fn idle_thread_priority() {
    lower_thread_priority();
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid sched_param for SCHED_IDLE (priority
        // 0); pid 0 is the calling thread, the only one changed.
        unsafe {
            let _ = libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
        }
    }
}

/// Whether this process runs as root (installing Debian packages then
/// needs no sudo).
pub fn is_root() -> bool {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() == 0 }
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// The memory this process may use, in bytes: the machine's total, or the
/// cgroup's limit when that is lower (a container). `None` where neither
/// can be read (not Linux).
pub fn memory_bytes() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| meminfo_total(&t));
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok());
    match (total, cgroup) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn meminfo_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb = line
        .trim_start_matches("MemTotal:")
        .trim()
        .trim_end_matches("kB")
        .trim();
    kb.parse::<u64>().ok().map(|kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_total_reads_kilobytes() {
        let text = "MemTotal:       24683520 kB\nMemFree:        11611136 kB\n";
        assert_eq!(meminfo_total(text), Some(24_683_520 * 1024));
        assert_eq!(meminfo_total("MemFree: 1 kB\n"), None);
        assert_eq!(meminfo_total("MemTotal: lots kB\n"), None);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn an_idle_thread_gets_the_idle_policy_and_nice_19_and_no_other_thread_does() {
        let idle = std::thread::spawn(|| {
            idle_thread_priority();
            // SAFETY: no preconditions; 0 is the calling thread.
            unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                (
                    libc::sched_getscheduler(0),
                    libc::getpriority(libc::PRIO_PROCESS, tid),
                )
            }
        })
        .join()
        .expect("thread");
        assert_eq!(idle, (libc::SCHED_IDLE, 19));
        // SAFETY: as above.
        let this = unsafe { libc::sched_getscheduler(0) };
        assert_eq!(this, libc::SCHED_OTHER);
    }

    #[test]
    fn this_machine_has_memory() {
        #[cfg(target_os = "linux")]
        assert!(memory_bytes().is_some_and(|b| b > 0));
    }
}
