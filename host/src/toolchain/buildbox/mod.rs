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
//!   pid, network, IPC, UTS and cgroup namespaces, with no capabilities, a
//!   cleared environment, a private `/proc`, an empty `/tmp` and HOME,
//!   and nothing of the host's files but the system's programs and
//!   libraries (`/usr`), the toolchain, the guest SDK, the cargo
//!   registry's sources, read-only, and the build slot and the shared
//!   build cache, writable;
//! - [`LogFilter`]: of the compiler's JSON diagnostics, only those whose
//!   every span (children's and macro expansions' included) lies in the
//!   slot's `src/` are passed on, to `build.log`, the model and the
//!   operator; the others are one line saying so.
//!
//! See docs/forge.md ("The build box").

mod log_filter;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use log_filter::{LogFilter, WITHHELD};

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

/// What a box sees besides the system's programs and libraries, and how
/// its program starts. Every path is bound at its own path, so that the
/// compiler's paths (and cargo's fingerprints in the shared cache) are the
/// same inside and out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoxSpec {
    /// Bound read-only (skipped when missing).
    pub read_only: Vec<PathBuf>,
    /// Bound writable.
    pub writable: Vec<PathBuf>,
    /// Empty writable folders made at these paths before the binds (a
    /// CARGO_HOME that holds only the registry bound into it).
    pub empty: Vec<PathBuf>,
    /// Files made from text, read-only: (contents, path in the box).
    pub data: Vec<(String, PathBuf)>,
    /// The program's whole environment.
    pub env: Vec<(String, OsString)>,
    /// The program's working folder.
    pub chdir: PathBuf,
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
pub fn user_files() -> Vec<(String, PathBuf)> {
    // SAFETY: getuid and getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let name = if uid == 0 { "root" } else { "builder" };
    vec![
        (
            format!("{name}:x:{uid}:{gid}:{name}:{BOX_HOME}:/bin/sh\n"),
            PathBuf::from("/etc/passwd"),
        ),
        (format!("{name}:x:{gid}:\n"), PathBuf::from("/etc/group")),
    ]
}

/// bubblewrap's arguments for `spec`, up to and including `--`; the
/// program and its arguments follow. `status_fd`: bwrap writes its JSON
/// status there (the box started, the program's exit code). `data_fds`:
/// the descriptors bwrap reads `spec.data`'s contents from, in order (an
/// item without one is left out).
pub fn bwrap_args(spec: &BoxSpec, status_fd: Option<i32>, data_fds: &[i32]) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |args: &[&OsStr]| a.extend(args.iter().map(|s| s.to_os_string()));
    let s = |x: &'static str| OsStr::new(x);
    push(&[
        s("--die-with-parent"),
        s("--new-session"),
        // user, ipc, pid, net, uts, cgroup: no network but a loopback of
        // its own, no process of the host's in its /proc.
        s("--unshare-all"),
        s("--cap-drop"),
        s("ALL"),
        s("--clearenv"),
        s("--ro-bind"),
        s("/usr"),
        s("/usr"),
    ]);
    for d in SYSTEM_DIRS {
        let path = Path::new("/").join(d);
        match std::fs::read_link(&path) {
            Ok(target) => push(&[s("--symlink"), target.as_os_str(), path.as_os_str()]),
            Err(_) if path.is_dir() => push(&[s("--ro-bind"), path.as_os_str(), path.as_os_str()]),
            Err(_) => {}
        }
    }
    for f in SYSTEM_ETC {
        push(&[s("--ro-bind-try"), s(f), s(f)]);
    }
    push(&[
        s("--proc"),
        s("/proc"),
        s("--dev"),
        s("/dev"),
        s("--tmpfs"),
        s(BOX_TMP),
        s("--dir"),
        s(BOX_HOME),
    ]);
    for p in &spec.empty {
        push(&[s("--tmpfs"), p.as_os_str()]);
    }
    for ((_, dest), fd) in spec.data.iter().zip(data_fds) {
        let fd = OsString::from(fd.to_string());
        push(&[s("--ro-bind-data"), &fd, dest.as_os_str()]);
    }
    for p in &spec.read_only {
        push(&[s("--ro-bind-try"), p.as_os_str(), p.as_os_str()]);
    }
    for p in &spec.writable {
        push(&[s("--bind"), p.as_os_str(), p.as_os_str()]);
    }
    // The root itself (where the mount points were made) read-only.
    push(&[
        s("--remount-ro"),
        s("/"),
        s("--chdir"),
        spec.chdir.as_os_str(),
    ]);
    for (k, v) in &spec.env {
        push(&[s("--setenv"), OsStr::new(k), v.as_os_str()]);
    }
    if let Some(fd) = status_fd {
        let fd = OsString::from(fd.to_string());
        push(&[s("--json-status-fd"), &fd]);
    }
    push(&[s("--")]);
    a
}

/// The paths a Rust build needs.
#[derive(Debug, Clone)]
pub struct RustBox {
    /// The toolchain's sysroot (`rustc --print sysroot`, canonical): its
    /// `bin/cargo`, `bin/rustc`, the wasm32-wasip2 library and the linker.
    pub sysroot: PathBuf,
    /// The operator's CARGO_HOME. Only its `registry` (the crates the
    /// build resolves offline) is in the box, never its `credentials*`,
    /// `config*` or `bin`.
    pub cargo_home: PathBuf,
    /// The guest SDK crate; beside it, the workspace manifest it inherits
    /// from and the WIT it builds against.
    pub guest_sdk: PathBuf,
    pub slot: PathBuf,
    /// CARGO_TARGET_DIR, shared by every build.
    pub cache_dir: PathBuf,
}

impl RustBox {
    /// The box and cargo's environment in it.
    pub fn spec(&self) -> BoxSpec {
        let mut read_only = vec![
            self.sysroot.clone(),
            self.cargo_home.join("registry"),
            self.guest_sdk.clone(),
        ];
        if let Some(parent) = self.guest_sdk.parent() {
            read_only.push(parent.join("Cargo.toml"));
            read_only.push(parent.join("wit"));
        }
        BoxSpec {
            read_only,
            writable: vec![self.slot.clone(), self.cache_dir.clone()],
            empty: vec![self.cargo_home.clone()],
            data: user_files(),
            env: self.env(
                OsString::from(BOX_HOME),
                Some(OsString::from(BOX_TMP)),
                None,
            ),
            chdir: self.slot.clone(),
        }
    }

    /// cargo's environment: the toolchain's own rustc, the registry
    /// offline, the shared cache. `path`: PATH after the toolchain's `bin`
    /// (default `/usr/bin:/bin`).
    pub fn env(
        &self,
        home: OsString,
        tmp: Option<OsString>,
        path: Option<OsString>,
    ) -> Vec<(String, OsString)> {
        let bin = self.sysroot.join("bin");
        let path = std::env::join_paths(
            std::iter::once(bin.into_os_string()).chain(
                std::env::split_paths(&path.unwrap_or_else(|| OsString::from("/usr/bin:/bin")))
                    .map(PathBuf::into_os_string),
            ),
        )
        .unwrap_or_default();
        let mut env = vec![
            ("PATH".to_owned(), path),
            ("HOME".to_owned(), home),
            (
                "CARGO_HOME".to_owned(),
                self.cargo_home.clone().into_os_string(),
            ),
            (
                "RUSTC".to_owned(),
                self.sysroot.join("bin/rustc").into_os_string(),
            ),
            (
                "CARGO_TARGET_DIR".to_owned(),
                self.cache_dir.clone().into_os_string(),
            ),
            ("CARGO_NET_OFFLINE".to_owned(), OsString::from("true")),
            ("CARGO_TERM_COLOR".to_owned(), OsString::from("never")),
        ];
        if let Some(tmp) = tmp {
            env.push(("TMPDIR".to_owned(), tmp));
        }
        env
    }
}

/// The paths a componentize-js build needs: node, the `node_modules` the
/// tool is in, the slot.
pub fn js_spec(tool: &Path, node: &Path, slot: &Path) -> BoxSpec {
    let mut read_only = Vec::new();
    // The tool's own folder (node_modules/.bin) and the node_modules its
    // real file is in, with the packages it imports.
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
    // node's installation, when it is not under /usr.
    let real_node = node.canonicalize().unwrap_or_else(|_| node.to_path_buf());
    let node_bin = real_node.parent().map(Path::to_path_buf);
    if let Some(prefix) = node_bin.as_deref().and_then(Path::parent)
        && !prefix.starts_with("/usr")
    {
        read_only.push(prefix.to_path_buf());
    }
    read_only.retain(|p| !p.starts_with("/usr"));
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
        writable: vec![slot.to_path_buf()],
        empty: Vec::new(),
        data: user_files(),
        env: vec![
            ("PATH".to_owned(), path),
            ("HOME".to_owned(), OsString::from(BOX_HOME)),
            ("TMPDIR".to_owned(), OsString::from(BOX_TMP)),
        ],
        chdir: slot.to_path_buf(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bwraps_status_says_whether_the_program_ran() {
        let started =
            "{ \"child-pid\": 42, \"pid-namespace\": 4026532178 }\n{ \"exit-code\": 101 }\n";
        assert_eq!(
            BoxStatus::parse(started),
            BoxStatus {
                child_pid: Some(42),
                exit_code: Some(101)
            }
        );
        // Set-up failed: no exit code (bwrap's message is on stderr).
        let failed = BoxStatus::parse("{ \"child-pid\": 42, \"net-namespace\": 1 }");
        assert_eq!(failed.exit_code, None);
        assert_eq!(BoxStatus::parse(""), BoxStatus::default());
    }

    fn rust_box(dir: &Path) -> RustBox {
        RustBox {
            sysroot: dir.join("toolchain"),
            cargo_home: dir.join("home/.cargo"),
            guest_sdk: dir.join("checkout/guest-sdk"),
            slot: dir.join("ws/slot"),
            cache_dir: dir.join("cache"),
        }
    }

    /// The pairs of `flag a b` in `args`.
    fn pairs<'a>(args: &'a [OsString], flag: &str) -> Vec<(&'a OsStr, &'a OsStr)> {
        args.windows(3)
            .filter(|w| w[0] == flag)
            .map(|w| (w[1].as_os_str(), w[2].as_os_str()))
            .collect()
    }

    #[test]
    fn the_rust_box_binds_the_toolchain_the_registry_and_the_slot_and_no_home() {
        let d = Path::new("/x");
        let b = rust_box(d);
        let args = bwrap_args(&b.spec(), Some(7), &[8, 9]);
        let has = |s: &str| args.iter().any(|a| a == s);
        for flag in [
            "--die-with-parent",
            "--new-session",
            "--unshare-all",
            "--clearenv",
        ] {
            assert!(has(flag), "{flag}: {args:?}");
        }
        assert!(!has("--share-net"), "no network");
        assert!(
            args.windows(2)
                .any(|w| w[0] == "--cap-drop" && w[1] == "ALL"),
            "{args:?}"
        );
        assert!(
            args.windows(2).any(|w| w[0] == "--proc" && w[1] == "/proc"),
            "a private /proc"
        );
        assert!(args.windows(2).any(|w| w[0] == "--tmpfs" && w[1] == "/tmp"));
        assert!(
            args.windows(2)
                .any(|w| w[0] == "--json-status-fd" && w[1] == "7")
        );
        // The box's user database is made, not the host's.
        let data: Vec<(&OsStr, &OsStr)> = pairs(&args, "--ro-bind-data");
        assert_eq!(
            data,
            [
                (OsStr::new("8"), OsStr::new("/etc/passwd")),
                (OsStr::new("9"), OsStr::new("/etc/group"))
            ]
        );
        assert_eq!(args.last().map(OsString::as_os_str), Some(OsStr::new("--")));
        let ro: Vec<&OsStr> = pairs(&args, "--ro-bind-try")
            .into_iter()
            .map(|(a, b)| {
                assert_eq!(a, b, "each at its own path");
                a
            })
            .collect();
        for p in [
            "/x/toolchain",
            "/x/home/.cargo/registry",
            "/x/checkout/guest-sdk",
            "/x/checkout/Cargo.toml",
            "/x/checkout/wit",
        ] {
            assert!(ro.contains(&OsStr::new(p)), "{p} read-only: {ro:?}");
        }
        let rw: Vec<&OsStr> = pairs(&args, "--bind").into_iter().map(|(a, _)| a).collect();
        assert_eq!(rw, [OsStr::new("/x/ws/slot"), OsStr::new("/x/cache")]);
        // Nothing else of the home: not CARGO_HOME (its credentials), not
        // the home itself, not the checkout.
        for bound in ro.iter().chain(&rw) {
            for not in ["/x/home", "/x/home/.cargo", "/x/checkout", "/x"] {
                assert_ne!(*bound, OsStr::new(not));
            }
            assert!(
                !bound.to_string_lossy().contains("credentials"),
                "{bound:?}"
            );
        }
        // CARGO_HOME is an empty folder holding the registry, made first.
        let tmpfs: Vec<usize> = args
            .iter()
            .enumerate()
            .filter(|(_, a)| *a == "/x/home/.cargo")
            .map(|(i, _)| i)
            .collect();
        assert!(tmpfs.iter().any(|&i| args[i - 1] == "--tmpfs"), "{args:?}");
        let env: Vec<(&OsStr, &OsStr)> = pairs(&args, "--setenv");
        let var = |k: &str| {
            env.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(var("HOME").as_deref(), Some(BOX_HOME));
        assert_eq!(var("CARGO_HOME").as_deref(), Some("/x/home/.cargo"));
        assert_eq!(var("RUSTC").as_deref(), Some("/x/toolchain/bin/rustc"));
        assert_eq!(var("CARGO_NET_OFFLINE").as_deref(), Some("true"));
        assert_eq!(
            var("PATH").as_deref(),
            Some("/x/toolchain/bin:/usr/bin:/bin")
        );
        assert_eq!(env.len(), b.spec().env.len(), "nothing but these");
    }

    /// The box as the forge makes it, run for real with a shell in place
    /// of cargo: it sees neither the home nor CARGO_HOME's credentials nor
    /// a file beside the slot, has no network but its own loopback, no
    /// process of the host's, and can write only the slot and the cache.
    #[test]
    fn the_real_box_sees_no_home_no_credentials_and_no_network() {
        let bwrap = find_bwrap(&[])
            .unwrap_or_else(|| panic!("bubblewrap is not installed: {BWRAP_INSTALL}"));
        let d = tempfile::tempdir().expect("tempdir");
        let root = d.path().canonicalize().expect("canonical");
        let marker = format!("box-secret-{}", std::process::id());
        let b = rust_box(&root);
        for dir in [
            &b.sysroot.join("bin"),
            &b.cargo_home.join("registry/src"),
            &b.guest_sdk,
            &b.slot,
            &b.cache_dir,
        ] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        let home = b.cargo_home.parent().expect("home").to_path_buf();
        std::fs::write(home.join("secret.txt"), &marker).expect("write");
        std::fs::write(b.cargo_home.join("credentials.toml"), &marker).expect("write");
        std::fs::write(root.join("ws/beside-the-slot.txt"), &marker).expect("write");
        std::fs::write(b.cargo_home.join("registry/src/crate.rs"), "public").expect("write");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let host_pid = std::process::id();
        let script = format!(
            r#"
            for f in {home}/secret.txt {cargo}/credentials.toml {root}/ws/beside-the-slot.txt /proc/{host_pid}/environ /proc/1/root{home}/secret.txt; do
                cat "$f" 2>/dev/null && echo "READ $f"
            done
            echo "cargo-home: $(ls -A {cargo} | tr '\n' ' ')"
            echo "home: $(ls -A "$HOME" | wc -l)"
            cat {cargo}/registry/src/crate.rs; echo
            echo "pids: $(ls /proc | grep -c '^[0-9]')"
            echo "ifaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
            (echo hi > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo CONNECTED
            echo x > {sdk}/w 2>/dev/null && echo "WROTE sdk"
            echo x > {slot}/w && echo "wrote slot"
            echo x > {cache}/w && echo "wrote cache"
            echo "env: $(env | cut -d= -f1 | sort | tr '\n' ' ')"
            grep CapEff /proc/self/status
            "#,
            home = home.display(),
            cargo = b.cargo_home.display(),
            root = root.display(),
            sdk = b.guest_sdk.display(),
            slot = b.slot.display(),
            cache = b.cache_dir.display(),
        );
        let out = std::process::Command::new(&bwrap)
            .args(bwrap_args(&b.spec(), None, &[]))
            .args(["/bin/bash", "-c", &script])
            .env("SKILLHOST_BOX_TEST_SECRET", &marker)
            .output()
            .expect("run bwrap");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        assert!(!stdout.contains(&marker), "a secret was read:\n{stdout}");
        assert!(!stdout.contains("READ "), "{stdout}");
        assert!(stdout.contains("cargo-home: registry \n"), "{stdout}");
        assert!(stdout.contains("home: 0\n"), "{stdout}");
        assert!(
            stdout.contains("public\n"),
            "the registry is there: {stdout}"
        );
        // bwrap's own process and the shell (and its pipeline).
        let pids: usize = stdout
            .lines()
            .find_map(|l| l.strip_prefix("pids: "))
            .and_then(|n| n.trim().parse().ok())
            .expect("pids");
        assert!(pids <= 6, "a private /proc: {stdout}");
        assert!(stdout.contains("ifaces: lo \n"), "{stdout}");
        assert!(!stdout.contains("CONNECTED"), "{stdout}");
        listener.set_nonblocking(true).expect("nonblocking");
        assert!(listener.accept().is_err(), "nothing connected");
        assert!(!stdout.contains("WROTE"), "{stdout}");
        assert!(stdout.contains("wrote slot\nwrote cache\n"), "{stdout}");
        let env_line = stdout
            .lines()
            .find_map(|l| l.strip_prefix("env: "))
            .expect("env");
        assert!(
            !env_line.contains("SKILLHOST_BOX_TEST_SECRET"),
            "{env_line}"
        );
        assert!(stdout.contains("CapEff:\t0000000000000000"), "{stdout}");
    }
}
