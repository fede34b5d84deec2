//! What a build may use: address space, the size of a file it writes, the
//! processes it runs. Set as resource limits on the build's first process
//! before bwrap (or cargo) starts; every process of the build inherits
//! them, and the box cannot raise them (it has no capability).

use std::io;

/// The limits of one build, from `[forge.handler]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxLimits {
    /// Address space of each process (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// The largest file a process may write (`RLIMIT_FSIZE`); also the
    /// largest artifact the host reads.
    pub file_bytes: u64,
    /// Processes the build may run beyond what the user already runs
    /// (`RLIMIT_NPROC` counts all of the user's).
    pub processes: u64,
}

/// The values set, computed before the fork (the child may only call
/// async-signal-safe functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rlimits {
    pub address_space: u64,
    pub file_size: u64,
    pub processes: u64,
}

/// Which limit a build ran into, from what its processes said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitHit {
    Memory,
    FileSize,
    Processes,
}

impl BoxLimits {
    /// The limits for a build started now: the process count on top of
    /// the user's `running` processes.
    pub fn rlimits(&self, running: u64) -> Rlimits {
        Rlimits {
            address_space: self.memory_bytes,
            file_size: self.file_bytes,
            processes: running.saturating_add(self.processes),
        }
    }

    /// What a run into `hit` says, naming the setting that raises it.
    pub fn describe(&self, hit: LimitHit) -> String {
        let mb = |b: u64| b >> 20;
        match hit {
            LimitHit::Memory => format!(
                "refused: a process of the build ran out of its {} MB of memory ([forge.handler] build_memory_mb)",
                mb(self.memory_bytes)
            ),
            LimitHit::FileSize => format!(
                "refused: the build wrote a file over the limit of {} MB ([forge.handler] build_max_file_mb)",
                mb(self.file_bytes)
            ),
            LimitHit::Processes => format!(
                "refused: the build started more than {} processes ([forge.handler] build_max_processes)",
                self.processes
            ),
        }
    }
}

impl Rlimits {
    /// Sets the limits (soft and hard) on the calling process, and no core
    /// files. Only `setrlimit`: safe between fork and exec.
    pub fn apply(&self) -> io::Result<()> {
        let set = |resource, value: u64| {
            let rl = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            // SAFETY: setrlimit reads the struct it is given and nothing
            // else; it allocates nothing.
            if unsafe { libc::setrlimit(resource, &rl) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        };
        set(libc::RLIMIT_AS, self.address_space)?;
        set(libc::RLIMIT_FSIZE, self.file_size)?;
        set(libc::RLIMIT_NPROC, self.processes)?;
        set(libc::RLIMIT_CORE, 0)
    }
}

impl LimitHit {
    /// The limit a line of a build's stderr shows it ran into: cargo's
    /// report of a compiler killed by `SIGXFSZ`, an allocation that failed,
    /// a fork refused.
    pub fn in_line(line: &str) -> Option<LimitHit> {
        if line.contains("SIGXFSZ")
            || killed_by(line, libc::SIGXFSZ)
            || line.contains("File too large")
        {
            Some(LimitHit::FileSize)
        } else if (line.contains("memory allocation of") && line.contains("failed"))
            || line.contains("out of memory")
            || line.contains("Cannot allocate memory")
            // rustc's constant evaluation, when an allocation is refused.
            || line.contains("tried to allocate more memory than available to compiler")
        {
            Some(LimitHit::Memory)
        } else if line.contains("Resource temporarily unavailable") {
            Some(LimitHit::Processes)
        } else {
            None
        }
    }
}

/// Whether `line` is cargo's report of a process killed by `signal`:
/// `... (signal: 25)` or `(signal: 25, SIGXFSZ: ...)`.
fn killed_by(line: &str, signal: i32) -> bool {
    line.match_indices("(signal: ").any(|(at, m)| {
        let rest = &line[at + m.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        rest[..digits].parse() == Ok(signal)
            && matches!(rest.as_bytes().get(digits), Some(b')' | b','))
    })
}

/// How many processes `uid` runs now (what `RLIMIT_NPROC` counts).
pub fn processes_of(uid: u32) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_limit_sits_on_top_of_what_the_user_runs() {
        let l = BoxLimits {
            memory_bytes: 1 << 30,
            file_bytes: 8 << 20,
            processes: 64,
        };
        assert_eq!(
            l.rlimits(300),
            Rlimits {
                address_space: 1 << 30,
                file_size: 8 << 20,
                processes: 364
            }
        );
        // SAFETY: getuid has no preconditions.
        let me = unsafe { libc::getuid() };
        assert!(processes_of(me) >= 1, "this test's own process");
        assert!(l.describe(LimitHit::FileSize).contains("8 MB"));
        assert!(l.describe(LimitHit::FileSize).contains("build_max_file_mb"));
    }

    #[test]
    fn the_limit_a_build_ran_into_is_named_from_its_output() {
        let cases = [
            (
                "  process didn't exit successfully: `rustc ...` (signal: 25, SIGXFSZ: file size limit exceeded)",
                Some(LimitHit::FileSize),
            ),
            (
                "memory allocation of 600000000 bytes failed",
                Some(LimitHit::Memory),
            ),
            ("LLVM ERROR: out of memory", Some(LimitHit::Memory)),
            (
                "error[E0080]: tried to allocate more memory than available to compiler",
                Some(LimitHit::Memory),
            ),
            (
                "  process didn't exit successfully: `/box/tools/rustc-wrapper ...` (signal: 25)",
                Some(LimitHit::FileSize),
            ),
            ("  ... (signal: 250)", None),
            ("   Compiling serde v1.0.0", None),
        ];
        for (line, hit) in cases {
            assert_eq!(LimitHit::in_line(line), hit, "{line}");
        }
    }
}
