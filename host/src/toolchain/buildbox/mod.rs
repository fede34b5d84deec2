//! The box the forge builds a model's handler in, and what of the build's
//! output may leave it.
//!
//! The handler's source is the model's, and a compiler reads more than the
//! file it is given: `#[path = "..."] mod x;`, `include_str!`, `env!` and
//! their spellings through `macro_rules!` make rustc read any file or
//! variable the operator can, and its error quotes what it read. The
//! source check (`handler::check_source`) refuses the spellings it knows;
//! this module is what the forge relies on:
//!
//! - [`BoxSpec`] and [`bwrap_args`]: cargo, rustc and the linker (or
//!   componentize-js and node) run under bubblewrap in new user, mount,
//!   pid, network, IPC, UTS and cgroup namespaces, with no capabilities and
//!   a cleared environment;
//! - [`RustBox`]: a Rust build sees, at neutral paths under `/box`, only
//!   the toolchain, a copy of the guest SDK with its own vendored
//!   dependencies (the [`Kit`]), the slot and a target folder of its own,
//!   and no `/proc`, so nothing in it names a host path;
//! - [`BoxLimits`]: memory, file size and process count, set on the build
//!   before bwrap starts;
//! - [`LogFilter`]: of the compiler's JSON diagnostics, only those whose
//!   every span (children's and macro expansions' included) lies in the
//!   slot's `src/` are passed on, to `build.log`, the model and the
//!   operator; the others are one line saying so.
//!
//! See docs/forge.md ("The build box").

mod kit;
mod limits;
mod log_filter;
mod rust_box;
#[cfg(test)]
mod tests;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use kit::{
    KIT_UNUSED_FOR, Kit, KitError, LINK_MIN_BYTES, drop_file_checksums, kit_id, remove_unused_kits,
    sdk_files, stage_tree, vendor, write_files,
};
pub use limits::{BoxLimits, LimitHit, Rlimits, processes_of};
pub use log_filter::{LogFilter, WITHHELD};
pub use rust_box::{
    BOX_CARGO, BOX_KIT_TARGET, BOX_SDK_CRATE, BOX_SRC, BOX_TARGET, BOX_TOOLCHAIN, BOX_VENDOR,
    KIT_SHARED, RustBox, artifact_in, write_tools,
};

/// `[forge.handler] build_box`: where a model's handler is built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildBox {
    /// In a bubblewrap box (the default). Without a working `bwrap` the
    /// build fails.
    #[default]
    Bwrap,
    /// Unboxed, as the operator: the model's source can make the compiler
    /// read and quote any file the operator can. Unsafe; each build logs a
    /// warning.
    None,
}

impl BuildBox {
    pub fn name(self) -> &'static str {
        match self {
            BuildBox::Bwrap => "bwrap",
            BuildBox::None => "none",
        }
    }
}

/// What installs bubblewrap, for messages.
pub const BWRAP_INSTALL: &str = "apt-get install -y bubblewrap";

/// HOME inside the box: empty, on the box's own `/tmp`.
pub const BOX_HOME: &str = "/tmp/home";
/// TMPDIR inside the box.
pub const BOX_TMP: &str = "/tmp";

/// Where `bwrap` is looked for after `path`: a service started with a
/// bare PATH still finds the system's.
const BWRAP_DIRS: &[&str] = &["/usr/bin", "/usr/local/bin", "/bin"];

/// The `bwrap` executable: on `path` (PATH), else in the system's folders.
pub fn find_bwrap(path: &[PathBuf]) -> Option<PathBuf> {
    path.iter()
        .map(PathBuf::as_path)
        .chain(BWRAP_DIRS.iter().map(Path::new))
        .map(|d| d.join("bwrap"))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A host path bound into the box at `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    pub host: PathBuf,
    pub at: PathBuf,
}

impl Bind {
    pub fn new(host: impl Into<PathBuf>, at: impl Into<PathBuf>) -> Bind {
        Bind {
            host: host.into(),
            at: at.into(),
        }
    }

    /// At its own path.
    pub fn same(path: &Path) -> Bind {
        Bind::new(path, path)
    }
}

/// A file made in the box from text, read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxFile {
    pub text: String,
    pub path: PathBuf,
    pub executable: bool,
}

/// What a box sees besides the system's programs and libraries, and how
/// its program starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoxSpec {
    /// Bound read-only (skipped when missing).
    pub read_only: Vec<Bind>,
    /// Bound writable.
    pub writable: Vec<Bind>,
    /// Bound read-only after the writable binds, over folders in them.
    pub read_only_over: Vec<Bind>,
    /// Empty writable folders (tmpfs) made at these paths before the binds.
    pub empty: Vec<PathBuf>,
    /// Files made from text.
    pub data: Vec<BoxFile>,
    /// The program's whole environment.
    pub env: Vec<(String, OsString)>,
    /// The program's working folder.
    pub chdir: PathBuf,
    /// A private `/proc`. Without one, nothing in the box can read the
    /// mount table (`/proc/self/mountinfo`), which names the host path of
    /// every bind.
    pub proc: bool,
}

/// The root's entries that may be links into `/usr` (a merged `/usr`) or
/// folders of their own.
const SYSTEM_DIRS: &[&str] = &["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
/// Files of `/etc` the toolchain reads: the `cc` link of Debian's
/// alternatives (build scripts link with it) and the loader's cache.
const SYSTEM_ETC: &[&str] = &["/etc/alternatives", "/etc/ld.so.cache"];

/// The box's `/etc/passwd` and `/etc/group`: the one user the build runs
/// as, at home in [`BOX_HOME`]. Tools that ask the user database for a
/// home (wizer, which componentize-js runs with an empty environment)
/// find this one, not the host's.
pub fn user_files() -> Vec<BoxFile> {
    // SAFETY: getuid and getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let name = if uid == 0 { "root" } else { "builder" };
    [
        (
            format!("{name}:x:{uid}:{gid}:{name}:{BOX_HOME}:/bin/sh\n"),
            "/etc/passwd",
        ),
        (format!("{name}:x:{gid}:\n"), "/etc/group"),
    ]
    .into_iter()
    .map(|(text, path)| BoxFile {
        text,
        path: PathBuf::from(path),
        executable: false,
    })
    .collect()
}

/// bubblewrap's arguments for `spec`, up to and including `--`; the
/// program and its arguments follow. `status_fd`: bwrap writes its JSON
/// status there (the box started, the program's exit code). `data_fds`:
/// the descriptors bwrap reads `spec.data`'s contents from, in order (an
/// item without one is left out).
pub fn bwrap_args(spec: &BoxSpec, status_fd: Option<i32>, data_fds: &[i32]) -> Vec<OsString> {
    let mut a = BwrapArgs(Vec::new());
    a.system(spec.proc);
    a.spec_mounts(spec, data_fds);
    // The root itself (where the mount points were made) read-only.
    a.push(&[
        os("--remount-ro"),
        os("/"),
        os("--chdir"),
        spec.chdir.as_os_str(),
    ]);
    for (k, v) in &spec.env {
        a.push(&[os("--setenv"), OsStr::new(k), v.as_os_str()]);
    }
    if let Some(fd) = status_fd {
        let fd = OsString::from(fd.to_string());
        a.push(&[os("--json-status-fd"), &fd]);
    }
    a.push(&[os("--")]);
    a.0
}

fn os(x: &'static str) -> &'static OsStr {
    OsStr::new(x)
}

/// bubblewrap's arguments, as they are built.
struct BwrapArgs(Vec<OsString>);

impl BwrapArgs {
    fn push(&mut self, args: &[&OsStr]) {
        self.0.extend(args.iter().map(|s| s.to_os_string()));
    }

    /// The namespaces, and the system read-only: `/usr`, the system
    /// folders (or their symlinks), the `/etc` files a build reads; `/proc`
    /// when `proc`; a `/dev`, an empty temp folder and the home folder.
    fn system(&mut self, proc: bool) {
        self.push(&[
            os("--die-with-parent"),
            os("--new-session"),
            // user, ipc, pid, net, uts, cgroup: no network but a loopback of
            // its own, no process of the host's in its /proc.
            os("--unshare-all"),
            os("--cap-drop"),
            os("ALL"),
            os("--clearenv"),
            os("--ro-bind"),
            os("/usr"),
            os("/usr"),
        ]);
        for d in SYSTEM_DIRS {
            let path = Path::new("/").join(d);
            match std::fs::read_link(&path) {
                Ok(target) => self.push(&[os("--symlink"), target.as_os_str(), path.as_os_str()]),
                Err(_) if path.is_dir() => {
                    self.push(&[os("--ro-bind"), path.as_os_str(), path.as_os_str()])
                }
                Err(_) => {}
            }
        }
        for f in SYSTEM_ETC {
            self.push(&[os("--ro-bind-try"), os(f), os(f)]);
        }
        if proc {
            self.push(&[os("--proc"), os("/proc")]);
        }
        self.push(&[
            os("--dev"),
            os("/dev"),
            os("--tmpfs"),
            os(BOX_TMP),
            os("--dir"),
            os(BOX_HOME),
        ]);
    }

    /// What `spec` adds: empty folders, files from `data_fds`, read-only
    /// and writable binds, and read-only binds over those.
    fn spec_mounts(&mut self, spec: &BoxSpec, data_fds: &[i32]) {
        for p in &spec.empty {
            self.push(&[os("--tmpfs"), p.as_os_str()]);
        }
        for (file, fd) in spec.data.iter().zip(data_fds) {
            let fd = OsString::from(fd.to_string());
            let mode = if file.executable { "0555" } else { "0444" };
            self.push(&[
                os("--perms"),
                os(mode),
                os("--ro-bind-data"),
                &fd,
                file.path.as_os_str(),
            ]);
        }
        for b in &spec.read_only {
            self.push(&[os("--ro-bind-try"), b.host.as_os_str(), b.at.as_os_str()]);
        }
        for b in &spec.writable {
            self.push(&[os("--bind"), b.host.as_os_str(), b.at.as_os_str()]);
        }
        for b in &spec.read_only_over {
            self.push(&[os("--ro-bind"), b.host.as_os_str(), b.at.as_os_str()]);
        }
    }
}

/// The paths a componentize-js build needs: node, the `node_modules` the
/// tool is in, the slot, each at its own path, and a private `/proc` (node
/// finds itself through `/proc/self/exe`): unlike the Rust box, its mount
/// table names these host paths.
pub fn js_spec(tool: &Path, node: &Path, slot: &Path) -> BoxSpec {
    let real_node = node.canonicalize().unwrap_or_else(|_| node.to_path_buf());
    let node_bin = real_node.parent().map(Path::to_path_buf);
    let read_only = js_read_only(tool, node_bin.as_deref())
        .iter()
        .map(|p| Bind::same(p))
        .collect();
    let path = std::env::join_paths(
        node.parent()
            .into_iter()
            .chain(node_bin.as_deref())
            .map(Path::to_path_buf)
            .chain([PathBuf::from("/usr/bin"), PathBuf::from("/bin")]),
    )
    .unwrap_or_default();
    BoxSpec {
        read_only,
        writable: vec![Bind::same(slot)],
        read_only_over: Vec::new(),
        empty: Vec::new(),
        data: user_files(),
        proc: true,
        env: vec![
            ("PATH".to_owned(), path),
            ("HOME".to_owned(), OsString::from(BOX_HOME)),
            ("TMPDIR".to_owned(), OsString::from(BOX_TMP)),
        ],
        chdir: slot.to_path_buf(),
    }
}

/// The folders outside /usr a componentize-js build reads: the tool's own
/// folder (node_modules/.bin) and the node_modules its real file is in,
/// with the packages it imports; node's installation (`node_bin`'s parent).
fn js_read_only(tool: &Path, node_bin: Option<&Path>) -> Vec<PathBuf> {
    let mut read_only = Vec::new();
    if let Some(dir) = tool.parent() {
        read_only.push(dir.to_path_buf());
    }
    let real_tool = tool.canonicalize().unwrap_or_else(|_| tool.to_path_buf());
    if let Some(modules) = real_tool
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
    {
        read_only.push(modules.to_path_buf());
    }
    if let Some(prefix) = node_bin.and_then(Path::parent)
        && !prefix.starts_with("/usr")
    {
        read_only.push(prefix.to_path_buf());
    }
    read_only.retain(|p| !p.starts_with("/usr"));
    read_only
}

/// bwrap's JSON status: whether the program started in its box and how
/// it ended. bwrap writes `{"child-pid": N, ...}` once it has forked the
/// box and `{"exit-code": N}` once the program in it has ended; a box that
/// could not be set up (a namespace refused, a path it cannot bind, a
/// program it cannot run) never writes an exit code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoxStatus {
    /// The box's first process, as the host numbers it.
    pub child_pid: Option<i32>,
    pub exit_code: Option<i32>,
}

impl BoxStatus {
    pub fn parse(text: &str) -> BoxStatus {
        let mut status = BoxStatus::default();
        // One JSON object after another, not always one a line.
        let stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        for v in stream {
            let Ok(v) = v else { break };
            let int = |k: &str| {
                v.get(k)
                    .and_then(Value::as_i64)
                    .and_then(|n| i32::try_from(n).ok())
            };
            if let Some(pid) = int("child-pid") {
                status.child_pid = Some(pid);
            }
            if let Some(code) = int("exit-code") {
                status.exit_code = Some(code);
            }
        }
        status
    }
}
