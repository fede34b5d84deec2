//! The build: the project the host writes into the slot and the toolchain
//! that builds it, boxed unless the operator says not.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::boxed;
use super::process::{Run, run_limited};
use super::request::SKILL_WIT;
use super::{BuildError, HANDLER_FILE, HandlerConfig, HandlerLang, io_err};
use crate::toolchain::buildbox::{self, BoxLimits, BuildBox, LogFilter};

/// How to build: where the toolchains and the build cache are, the limits,
/// and for how long.
#[derive(Debug, Clone)]
pub struct BuildSettings {
    pub timeout: Duration,
    /// The build cache: the box's kits (`kits/`), each build's own target
    /// folder while it runs (`builds/`), and the unboxed builds' shared
    /// target folder (`shared/`).
    pub cache_dir: PathBuf,
    pub toolchain: Option<String>,
    pub componentize_js: Option<PathBuf>,
    pub guest_sdk: Option<PathBuf>,
    /// `[forge.handler] build_box`.
    pub build_box: BuildBox,
    /// Memory, file size and processes of a build; the file size is also
    /// the largest artifact read.
    pub limits: BoxLimits,
}

impl BuildSettings {
    /// From `[forge.handler]`, caching under `cache_dir`.
    pub fn new(config: &HandlerConfig, cache_dir: &Path) -> Self {
        let mib = |n: u64| n.max(1).saturating_mul(1 << 20);
        BuildSettings {
            timeout: Duration::from_secs(config.build_timeout_secs.max(1)),
            cache_dir: cache_dir.join("forge-handler-build"),
            toolchain: config
                .toolchain
                .clone()
                .or_else(|| option_env!("RUSTUP_TOOLCHAIN").map(str::to_owned)),
            componentize_js: config.componentize_js.clone(),
            guest_sdk: config.guest_sdk.clone(),
            build_box: config.build_box,
            limits: BoxLimits {
                memory_bytes: mib(config.build_memory_mb),
                file_bytes: mib(config.build_max_file_mb),
                processes: config.build_max_processes.max(1),
            },
        }
    }

    /// The artifact limit no larger than the sandbox's `max_component_mb`:
    /// a bigger component could not run anyway.
    pub fn within(mut self, sandbox: &crate::sandbox::SandboxConfig) -> Self {
        let max = sandbox.max_component_mb.max(1).saturating_mul(1 << 20);
        self.limits.file_bytes = self.limits.file_bytes.min(max);
        self
    }
}

/// A built artifact.
#[derive(Debug, Clone)]
pub struct Built {
    pub wasm: Vec<u8>,
    pub duration: Duration,
}

pub(super) const CRATE: &str = "generated-handler";

/// The handler's `Cargo.toml`: the guest SDK at `sdk` by path and nothing
/// else; no build script, no other target.
pub(super) fn rust_manifest(sdk: &Path) -> String {
    let sdk = sdk
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    format!(
        "[package]\nname = \"{CRATE}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\nbuild = false\nautobins = false\nautoexamples = false\nautotests = false\nautobenches = false\n\n\
         [lib]\npath = \"src/lib.rs\"\ncrate-type = [\"cdylib\"]\n\n\
         [dependencies]\nskillhost-guest = {{ path = \"{sdk}\" }}\n\n\
         [workspace]\n\n\
         [profile.release]\nopt-level = \"s\"\ncodegen-units = 1\nstrip = true\npanic = \"abort\"\n"
    )
}

/// The versions the host's own workspace pinned, where the SDK's checkout
/// has a lock: the build resolves offline from what is already there.
pub(super) fn sdk_lock(sdk: &Path) -> Option<String> {
    fs::read_to_string(sdk.parent()?.join("Cargo.lock")).ok()
}

fn write_file(dir: &Path, rel: &str, text: &str) -> Result<(), BuildError> {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io_err("create", parent))?;
    }
    fs::write(&path, text).map_err(io_err("write", &path))
}

/// Writes a Rust project into `dir`: the manifest with the SDK at `sdk`,
/// the lock, `source`.
pub(super) fn write_rust_project(
    dir: &Path,
    source: &str,
    sdk: &Path,
    lock: Option<&str>,
) -> Result<(), BuildError> {
    write_file(dir, "Cargo.toml", &rust_manifest(sdk))?;
    if let Some(lock) = lock {
        write_file(dir, "Cargo.lock", lock)?;
    }
    write_file(dir, "src/lib.rs", source)
}

/// Writes the build project into `slot`: the source and, for Rust, the
/// `Cargo.toml` the host writes itself (the guest SDK by path, nothing
/// else; no build script): in the box the kit's SDK at its box path,
/// unboxed the SDK's own folder. For JS, the WIT beside `handler.js`.
pub fn write_project(
    slot: &Path,
    source: &str,
    lang: HandlerLang,
    settings: &BuildSettings,
) -> Result<(), BuildError> {
    match lang {
        HandlerLang::Rust => {
            let sdk = crate::toolchain::scaffold::guest_sdk_dir(settings.guest_sdk.as_deref())?;
            let lock = sdk_lock(&sdk);
            let at = match settings.build_box {
                BuildBox::Bwrap => PathBuf::from(buildbox::BOX_SDK_CRATE),
                BuildBox::None => sdk,
            };
            write_rust_project(slot, source, &at, lock.as_deref())
        }
        HandlerLang::Js => {
            write_file(slot, "handler.js", source)?;
            write_file(slot, "wit/skill.wit", SKILL_WIT)
        }
    }
}

/// Builds the project in `slot` (see [`write_project`]); the build's output
/// goes to `slot/build.log`.
pub fn build(
    slot: &Path,
    lang: HandlerLang,
    settings: &BuildSettings,
) -> Result<Built, BuildError> {
    let built = match lang {
        HandlerLang::Rust => build_rust(slot, settings),
        HandlerLang::Js => build_js(slot, settings),
    };
    if let Err(BuildError::Failed {
        refused_by_limit: true,
        ..
    }) = &built
    {
        // Nothing of a build a limit refused is kept: not its output, not
        // its project.
        let _ = fs::remove_dir_all(slot);
    }
    built
}

/// The artifact at `path`, its size checked before it is read: over the
/// file size limit it is refused unread.
pub(super) fn read_artifact(path: &Path, limits: &BoxLimits) -> Result<Vec<u8>, BuildError> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let max = limits.file_bytes;
    let over = |size: u64| BuildError::Failed {
        status: format!(
            "refused: the artifact is {size} bytes, over the limit of {} MB ([forge.handler] build_max_file_mb)",
            max >> 20
        ),
        log: String::new(),
        refused_by_limit: true,
    };
    // Never through a link: a build's target folder is written in the box.
    let file = fs::File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io_err("read", path))?;
    let meta = file.metadata().map_err(io_err("read", path))?;
    if !meta.is_file() {
        return Err(io_err("read", path)(std::io::Error::other(
            "the artifact is not a regular file",
        )));
    }
    let size = meta.len();
    if size > max {
        return Err(over(size));
    }
    let mut wasm = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(max.saturating_add(1))
        .read_to_end(&mut wasm)
        .map_err(io_err("read", path))?;
    if wasm.len() as u64 > max {
        return Err(over(wasm.len() as u64));
    }
    Ok(wasm)
}

/// Only what rustup and node need; no RUSTFLAGS, no proxies, no
/// credentials the host was started with.
fn cleared(program: &Path, slot: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear().current_dir(slot);
    for key in [
        "PATH",
        "HOME",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
    ] {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    cmd
}

/// Where `program` is on PATH.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The `bwrap` a boxed build runs in, or why there is none.
fn bwrap() -> Result<PathBuf, BuildError> {
    let path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    buildbox::find_bwrap(&path).ok_or_else(|| BuildError::ToolchainMissing {
        what: "bubblewrap (bwrap)".into(),
        hint: format!(
            "the forge builds a model's handler only inside a bubblewrap box; install it with `{}` (or `skillhost toolchain install rust`), or set [forge.handler] build_box = \"none\" in your user skillhost.toml to build unboxed, which lets the model's source read the operator's files (see docs/forge.md)",
            crate::toolchain::apt_install(&["bubblewrap"])
        ),
    })
}

/// The operator's CARGO_HOME: `$CARGO_HOME`, else `~/.cargo`.
pub(super) fn cargo_home() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".cargo")))?;
    Some(home.canonicalize().unwrap_or(home))
}

fn warn_unboxed(lang: HandlerLang) {
    tracing::warn!(
        "building a model's {} handler without a box ([forge.handler] build_box = \"none\"): its source can make the build read and quote any file this user can read",
        lang.flag()
    );
}

fn missing_cargo(hint: String) -> BuildError {
    BuildError::ToolchainMissing {
        what: "cargo with the wasm32-wasip2 target".into(),
        hint,
    }
}

fn build_rust(slot: &Path, settings: &BuildSettings) -> Result<Built, BuildError> {
    // Fail closed before anything else: no box, no build.
    let bwrap = match settings.build_box {
        BuildBox::Bwrap => Some(bwrap()?),
        BuildBox::None => None,
    };
    let sysroot = sysroot(slot, settings)?;
    let sdk = crate::toolchain::scaffold::guest_sdk_dir(settings.guest_sdk.as_deref())?;
    let slot = &slot.canonicalize().unwrap_or_else(|_| slot.to_path_buf());
    match &bwrap {
        Some(bwrap) => boxed::build(bwrap, &sysroot, &sdk, slot, settings),
        None => build_unboxed(&sysroot, slot, settings),
    }
}

/// The toolchain's sysroot, asked of rustup's rustc (outside the box, with
/// nothing of the model's); the build runs that toolchain's own cargo and
/// rustc, not rustup's proxies.
fn sysroot(slot: &Path, settings: &BuildSettings) -> Result<PathBuf, BuildError> {
    let rustc = on_path("rustc").ok_or_else(|| missing_cargo("no `rustc` on PATH".into()))?;
    let mut probe = cleared(&rustc, slot);
    if let Some(t) = &settings.toolchain {
        probe.env("RUSTUP_TOOLCHAIN", t);
    }
    // Never let rustup download a toolchain in the middle of a build.
    probe.env("RUSTUP_AUTO_INSTALL", "0");
    let sysroot = probe
        .args(["--print", "sysroot"])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| missing_cargo(format!("cannot run rustc: {e}")))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    let sysroot = sysroot.canonicalize().unwrap_or(sysroot);
    if !sysroot.join("lib/rustlib/wasm32-wasip2").is_dir() {
        let toolchain = settings.toolchain.as_deref();
        return Err(missing_cargo(format!(
            "the toolchain {} has no wasm32-wasip2 target: rustup target add wasm32-wasip2{}",
            toolchain.unwrap_or("(rustup's default)"),
            toolchain
                .map(|t| format!(" --toolchain {t}"))
                .unwrap_or_default()
        )));
    }
    if !sysroot.join("bin/cargo").is_file() {
        return Err(missing_cargo(format!(
            "the toolchain at {} has no bin/cargo (rustup component add cargo)",
            sysroot.display()
        )));
    }
    Ok(sysroot)
}

/// The arguments of every Rust build.
pub(super) const CARGO_ARGS: [&str; 8] = [
    "build",
    "--release",
    "--offline",
    "--target",
    "wasm32-wasip2",
    "--message-format=json",
    "--manifest-path",
    "Cargo.toml",
];

/// cargo's environment as the operator: the toolchain's own rustc, the
/// operator's registry offline; `target`: CARGO_TARGET_DIR, if any.
pub(super) fn host_cargo_env(
    sysroot: &Path,
    cargo_home: &Path,
    target: Option<&Path>,
) -> Vec<(String, std::ffi::OsString)> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    let path = std::env::join_paths(
        std::iter::once(sysroot.join("bin")).chain(std::env::split_paths(&path)),
    )
    .unwrap_or_default();
    let mut env = vec![
        ("PATH".to_owned(), path),
        (
            "HOME".to_owned(),
            std::env::var_os("HOME").unwrap_or_default(),
        ),
        ("CARGO_HOME".to_owned(), cargo_home.as_os_str().to_owned()),
        (
            "RUSTC".to_owned(),
            sysroot.join("bin/rustc").into_os_string(),
        ),
        ("CARGO_NET_OFFLINE".to_owned(), "true".into()),
        ("CARGO_TERM_COLOR".to_owned(), "never".into()),
    ];
    if let Some(t) = target {
        env.push(("CARGO_TARGET_DIR".to_owned(), t.as_os_str().to_owned()));
    }
    env
}

/// The operator's explicit choice: cargo as the operator, with the
/// operator's registry and a target folder all unboxed builds share.
fn build_unboxed(
    sysroot: &Path,
    slot: &Path,
    settings: &BuildSettings,
) -> Result<Built, BuildError> {
    let cargo_home =
        cargo_home().ok_or_else(|| missing_cargo("neither CARGO_HOME nor a home folder".into()))?;
    let target = settings.cache_dir.join("shared");
    fs::create_dir_all(&target).map_err(io_err("create", &target))?;
    warn_unboxed(HandlerLang::Rust);
    let mut cmd = Command::new(sysroot.join("bin/cargo"));
    cmd.env_clear()
        .current_dir(slot)
        .args(CARGO_ARGS)
        .envs(host_cargo_env(sysroot, &cargo_home, Some(&target)));
    // One build at a time in the shared target folder, so that the
    // artifact read after it is this build's.
    let _lock = lock_dir(&target)?;
    let run = Run::direct(cmd).limited(settings.limits);
    let duration = run_limited(run, slot, settings.timeout, LogFilter::cargo(slot))?;
    let wasm = read_artifact(&buildbox::artifact_in(&target, CRATE), &settings.limits)?;
    Ok(Built { wasm, duration })
}

fn build_js(slot: &Path, settings: &BuildSettings) -> Result<Built, BuildError> {
    let bwrap = match settings.build_box {
        BuildBox::Bwrap => Some(bwrap()?),
        BuildBox::None => None,
    };
    let (tool, node) = js_tools(settings)?;
    let args = [
        "handler.js",
        "--wit",
        "wit",
        "--world-name",
        "handler",
        "--disable",
        "http",
        "fetch-event",
        "-o",
        HANDLER_FILE,
    ];
    let tool = std::path::absolute(&tool).unwrap_or(tool);
    let slot = &slot.canonicalize().unwrap_or_else(|_| slot.to_path_buf());
    let run = match &bwrap {
        Some(bwrap) => Run::boxed(bwrap, &buildbox::js_spec(&tool, &node, slot), &tool, &args)?,
        None => {
            warn_unboxed(HandlerLang::Js);
            let mut cmd = cleared(&tool, slot);
            cmd.args(args);
            Run::direct(cmd)
        }
    };
    // node and the engine componentize-js runs reserve far more address
    // space than they use: no memory limit for them.
    let run = run.limited(BoxLimits {
        memory_bytes: u64::MAX,
        ..settings.limits
    });
    let duration = run_limited(run, slot, settings.timeout, LogFilter::raw())?;
    let wasm = read_artifact(&slot.join(HANDLER_FILE), &settings.limits)?;
    Ok(Built { wasm, duration })
}

/// componentize-js (as configured, else on PATH) and the node it runs on.
fn js_tools(settings: &BuildSettings) -> Result<(PathBuf, PathBuf), BuildError> {
    let tool = settings
        .componentize_js
        .clone()
        .or_else(|| on_path("componentize-js"))
        .filter(|p| p.is_file())
        .ok_or_else(|| BuildError::ToolchainMissing {
            what: "componentize-js".into(),
            hint: "install @bytecodealliance/componentize-js (npm) and put it on PATH, or set [forge.handler] componentize_js".into(),
        })?;
    let node = on_path("node").ok_or_else(|| BuildError::ToolchainMissing {
        what: "node".into(),
        hint: "componentize-js runs on node; put it on PATH".into(),
    })?;
    Ok((tool, node))
}

/// Holds the lock of the folder `dir` while it lives.
pub(super) fn lock_dir(dir: &Path) -> Result<fs::File, BuildError> {
    let path = dir.join(".skillhost-build.lock");
    crate::fsutil::lock_file(&path).map_err(io_err("lock", &path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39, finding 2: a 600 MB artifact was read whole into the host.
    /// Its size is checked first; over the limit it is refused unread.
    #[test]
    fn an_artifact_over_the_limit_is_refused_before_it_is_read() {
        let d = tempfile::tempdir().expect("tempdir");
        let limits = BoxLimits {
            memory_bytes: 1 << 30,
            file_bytes: 1 << 20,
            processes: 8,
        };
        let big = d.path().join("big.wasm");
        fs::File::create(&big)
            .and_then(|f| f.set_len((1 << 20) + 1))
            .expect("sparse file");
        match read_artifact(&big, &limits) {
            Err(BuildError::Failed {
                status,
                refused_by_limit: true,
                ..
            }) => assert!(
                status.contains("1048577 bytes") && status.contains("build_max_file_mb"),
                "{status}"
            ),
            other => panic!("not refused: {other:?}"),
        }
        let small = d.path().join("small.wasm");
        fs::write(&small, b"\0asm").expect("write");
        assert_eq!(read_artifact(&small, &limits).expect("read"), b"\0asm");
    }
}
