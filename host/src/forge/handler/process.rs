//! A build's process: bwrap with the program after `--`, or the program;
//! in a process group of its own, with no descriptor of the host's, killed
//! with everything it started past its time limit.

use std::fs;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::build_log::{BUILD_LOG, BuildOutput, Log, read_lines};
use super::{BuildError, io_err};
use crate::toolchain::buildbox::{self, BoxLimits, BoxStatus, LogFilter, Rlimits};

/// A build's command: bwrap with the program after `--`, or the program.
pub(super) struct Run {
    cmd: Command,
    /// The read end of bwrap's `--json-status-fd`; None: unboxed.
    status: Option<std::io::PipeReader>,
    /// What only the child keeps: the status pipe's write end and the
    /// read ends bwrap takes `--ro-bind-data` files from. Dropped here
    /// once the child is spawned.
    child_fds: Vec<std::os::fd::OwnedFd>,
    /// Set on the child before it starts.
    limits: Option<BoxLimits>,
}

impl Run {
    pub(super) fn direct(cmd: Command) -> Run {
        Run {
            cmd,
            status: None,
            child_fds: Vec::new(),
            limits: None,
        }
    }

    /// The same run with `limits` set on it.
    pub(super) fn limited(mut self, limits: BoxLimits) -> Run {
        self.limits = Some(limits);
        self
    }

    pub(super) fn boxed(
        bwrap: &Path,
        spec: &buildbox::BoxSpec,
        program: &Path,
        args: &[&str],
    ) -> Result<Run, BuildError> {
        use std::os::fd::AsRawFd as _;
        let pipe_err = |e: std::io::Error| BuildError::ToolchainMissing {
            what: "bubblewrap (bwrap)".into(),
            hint: format!("cannot make a pipe for it: {e}"),
        };
        let mut cmd = Command::new(bwrap);
        // The box's own environment is set by --setenv; bwrap itself needs
        // none of the host's.
        cmd.env_clear();
        let (status, status_writer) = std::io::pipe().map_err(pipe_err)?;
        let mut child_fds = vec![std::os::fd::OwnedFd::from(status_writer)];
        let data_fds = data_pipes(spec, &mut child_fds).map_err(pipe_err)?;
        cmd.args(buildbox::bwrap_args(
            spec,
            Some(child_fds[0].as_raw_fd()),
            &data_fds,
        ))
        .arg(program)
        .args(args);
        Ok(Run {
            cmd,
            status: Some(status),
            child_fds,
            limits: None,
        })
    }
}

/// A pipe holding each of `spec.data`'s texts (a few bytes: the pipe
/// holds them until bwrap reads them); the read ends go to `child_fds`,
/// their numbers are returned.
fn data_pipes(
    spec: &buildbox::BoxSpec,
    child_fds: &mut Vec<std::os::fd::OwnedFd>,
) -> std::io::Result<Vec<i32>> {
    use std::io::Write as _;
    use std::os::fd::AsRawFd as _;
    let mut data_fds = Vec::new();
    for file in &spec.data {
        let (r, mut w) = std::io::pipe()?;
        w.write_all(file.text.as_bytes())?;
        drop(w);
        data_fds.push(r.as_raw_fd());
        child_fds.push(r.into());
    }
    Ok(data_fds)
}

/// Runs the build in a process group of its own; only what `filter`
/// passes goes to `slot/build.log` and into the errors. Past `limit` the
/// whole group is killed, and with bwrap (`--die-with-parent`, a pid
/// namespace) everything in the box.
pub(super) fn run_limited(
    run: Run,
    slot: &Path,
    limit: Duration,
    filter: LogFilter,
) -> Result<Duration, BuildError> {
    let status_reader = run.status;
    let boxed = status_reader.is_some();
    let started = Instant::now();
    let rlimits = run.limits.map(|l| l.rlimits(user_processes()));
    let mut child = spawn_build(run.cmd, run.child_fds, boxed, rlimits)?;
    let mut output = read_output(&mut child, filter, boxed, slot);
    let status = wait_within(
        &mut child,
        &mut output,
        started,
        limit,
        status_reader.as_ref(),
    )?;
    let duration = started.elapsed();
    // The rest of the output: the readers end when the last writer in the
    // box is gone, which is now (bwrap's pid namespace ends with it).
    let log = output.finish(Duration::from_secs(5));
    if let Some(reader) = &status_reader
        && read_status(reader).exit_code.is_none()
        && status.code().is_some()
    {
        return Err(box_did_not_start(&output.bwrap_said));
    }
    if !status.success() {
        let over = run
            .limits
            .zip(output.limit_hit)
            .map(|(l, hit)| l.describe(hit));
        return Err(failed(over, status, log));
    }
    Ok(duration)
}

/// The build failed: by running into a limit (`over` says which), or as
/// `status` says.
fn failed(over: Option<String>, status: ExitStatus, log: String) -> BuildError {
    BuildError::Failed {
        refused_by_limit: over.is_some(),
        status: over.unwrap_or_else(|| status.to_string()),
        log,
    }
}

/// The child's stdout and stderr, read line by line on threads of their
/// own, gathered by the returned output (its log goes to `slot`).
fn read_output(
    child: &mut std::process::Child,
    filter: LogFilter,
    boxed: bool,
    slot: &Path,
) -> BuildOutput {
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        std::thread::spawn(move || read_lines(out, tx, true));
    }
    if let Some(err) = child.stderr.take() {
        let tx = tx.clone();
        std::thread::spawn(move || read_lines(err, tx, false));
    }
    BuildOutput {
        rx,
        filter,
        log: Log::default(),
        bwrap_said: Vec::new(),
        limit_hit: None,
        boxed,
        log_path: slot.join(BUILD_LOG),
    }
}

/// The child's exit status, taking its output meanwhile; past `limit`
/// (or when waiting fails) its whole group is killed.
fn wait_within(
    child: &mut std::process::Child,
    output: &mut BuildOutput,
    started: Instant,
    limit: Duration,
    status_reader: Option<&std::io::PipeReader>,
) -> Result<ExitStatus, BuildError> {
    loop {
        output.take_ready();
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if started.elapsed() >= limit => {
                kill_group(child, status_reader);
                let log = output.finish(Duration::from_secs(2));
                return Err(BuildError::TimedOut { limit, log });
            }
            Ok(None) => output.take_one(Duration::from_millis(20)),
            Err(e) => {
                kill_group(child, status_reader);
                output.finish(Duration::ZERO);
                return Err(io_err("wait for", Path::new("the build"))(e));
            }
        }
    }
}

/// bwrap exited without starting the build: what it said, and the ways on.
fn box_did_not_start(bwrap_said: &[String]) -> BuildError {
    BuildError::ToolchainMissing {
        what: "bubblewrap (bwrap)".into(),
        hint: format!(
            "it could not start the build's box{}; see docs/forge.md (\"The build box\"), or set [forge.handler] build_box = \"none\" in your user skillhost.toml to build unboxed (unsafe)",
            if bwrap_said.is_empty() {
                String::new()
            } else {
                format!(": {}", bwrap_said.join(" "))
            }
        ),
    }
}

/// How many processes this user runs now.
fn user_processes() -> u64 {
    // SAFETY: getuid has no preconditions.
    buildbox::processes_of(unsafe { libc::getuid() })
}

/// Starts `cmd` in a process group of its own with its output piped and
/// no descriptor of the host's but `child_fds`.
fn spawn_build(
    mut cmd: Command,
    child_fds: Vec<std::os::fd::OwnedFd>,
    boxed: bool,
    limits: Option<Rlimits>,
) -> Result<std::process::Child, BuildError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd as _;
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        close_inherited_fds(&mut cmd, child_fds.iter().map(|f| f.as_raw_fd()).collect());
        if let Some(limits) = limits {
            // SAFETY: the closure runs between fork and exec and only
            // calls setrlimit (Rlimits::apply), which is async-signal-safe.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || limits.apply());
            }
        }
    }
    let spawned = cmd.spawn();
    // The box's status reaches us only through bwrap's copy.
    drop(child_fds);
    spawned.map_err(|e| {
        if boxed {
            BuildError::ToolchainMissing {
                what: "bubblewrap (bwrap)".into(),
                hint: format!("cannot run {}: {e}", cmd.get_program().to_string_lossy()),
            }
        } else {
            io_err("run", Path::new(cmd.get_program()))(e)
        }
    })
}

/// What bwrap wrote on its status pipe; it is written before bwrap exits,
/// so nothing is waited for.
fn read_status(reader: &std::io::PipeReader) -> BoxStatus {
    use std::io::Read as _;
    use std::os::fd::AsRawFd as _;
    #[cfg(unix)]
    // SAFETY: fcntl on a descriptor this function's caller owns; it only
    // sets O_NONBLOCK.
    unsafe {
        let fd = reader.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
    let mut text = Vec::new();
    let mut buf = [0u8; 4096];
    let mut r = reader;
    while text.len() < 64 << 10 {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
        }
    }
    BoxStatus::parse(&String::from_utf8_lossy(&text))
}

/// Marks every descriptor but 0, 1, 2 and `keep` close-on-exec in the
/// child, so that nothing the host has open reaches the build (rustc could
/// read it as `/proc/self/fd/N`), and clears it on `keep` (bwrap's status
/// and data pipes, which bwrap itself does not pass into the box).
#[cfg(unix)]
fn close_inherited_fds(cmd: &mut Command, keep: Vec<i32>) {
    // SAFETY: the closure runs between fork and exec and calls only
    // async-signal-safe functions (the close_range system call, fcntl); it
    // allocates nothing and takes no lock.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, move || {
            const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
            let all = libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                libc::c_uint::MAX,
                CLOSE_RANGE_CLOEXEC,
            );
            if all != 0 {
                // Before Linux 5.11: one descriptor at a time.
                let max = match libc::sysconf(libc::_SC_OPEN_MAX) {
                    n if n > 0 => n.min(1 << 16) as libc::c_int,
                    _ => 4096,
                };
                for fd in 3..max {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
            for &fd in &keep {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// Kills the child's process group (the child leads it), reaps the child
/// and waits, briefly, for the rest to be gone: SIGKILL is delivered
/// asynchronously, so a compiler the build started could still be exiting
/// (and holding its files) when this returns otherwise. With bwrap, the
/// box's first process (in a session of its own) is killed too, which
/// ends its pid namespace and so everything in it.
fn kill_group(child: &mut std::process::Child, status: Option<&std::io::PipeReader>) {
    let group = i32::try_from(child.id()).ok();
    #[cfg(unix)]
    if let Some(pid) = group {
        // SAFETY: kill(2) with a negative pid signals that process group,
        // which the child leads (process_group(0)); no memory is touched.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let inner = status.and_then(|r| read_status(r).child_pid);
    #[cfg(unix)]
    if let Some(pid) = inner {
        // SAFETY: as above, for the box's session (bwrap --new-session
        // made its first process the leader of a group of its own).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
            libc::kill(pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    wait_gone(group, inner, Instant::now() + Duration::from_secs(2));
}

/// Waits, until `until` at most, for the process group `group` to be
/// empty and the box's first process `inner` to be gone.
fn wait_gone(group: Option<i32>, inner: Option<i32>, until: Instant) {
    #[cfg(not(unix))]
    let _ = group;
    #[cfg(unix)]
    if let Some(pid) = group {
        // Signal 0 only asks whether any member is left. Zombies count
        // until their new parent reaps them, so this is bounded.
        // SAFETY: kill(2) with signal 0 delivers nothing and touches no
        // memory; a negative pid names the group.
        while unsafe { libc::kill(-pid, 0) } == 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // The box's first process ends only after every other process of its
    // pid namespace has: once it is gone or a zombie, the box is empty.
    if let Some(pid) = inner {
        while Instant::now() < until && alive(pid) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Whether process `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) S ...`: the state follows the last `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}
