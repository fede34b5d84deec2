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
