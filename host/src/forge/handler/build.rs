//! The build: the project the host writes into the slot and the toolchain
//! that builds it, boxed unless the operator says not.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::process::{Run, run_limited};
use super::request::SKILL_WIT;
use super::{BuildError, HANDLER_FILE, HandlerConfig, HandlerLang, io_err};
use crate::toolchain::buildbox::{self, BuildBox, LogFilter, RustBox};

/// How to build: where the toolchains and the shared cache are, and for
/// how long.
#[derive(Debug, Clone)]
pub struct BuildSettings {
    pub timeout: Duration,
    /// Shared by every build (`CARGO_TARGET_DIR`), so that the second build
    /// compiles only the handler.
    pub cache_dir: PathBuf,
    pub toolchain: Option<String>,
    pub componentize_js: Option<PathBuf>,
    pub guest_sdk: Option<PathBuf>,
    /// `[forge.handler] build_box`.
    pub build_box: BuildBox,
}

impl BuildSettings {
    /// From `[forge.handler]`, caching under `cache_dir`.
    pub fn new(config: &HandlerConfig, cache_dir: &Path) -> Self {
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
        }
    }
}

/// A built artifact.
#[derive(Debug, Clone)]
pub struct Built {
    pub wasm: Vec<u8>,
    pub duration: Duration,
}

const CRATE: &str = "generated-handler";

/// Writes the build project into `slot`: the source and, for Rust, the
/// `Cargo.toml` the host writes itself (the guest SDK by path, nothing
/// else; no build script). For JS, the WIT beside `handler.js`.
pub fn write_project(
    slot: &Path,
    source: &str,
    lang: HandlerLang,
    settings: &BuildSettings,
) -> Result<(), BuildError> {
    let write = |rel: &str, text: &str| {
        let path = slot.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_err("create", parent))?;
        }
        fs::write(&path, text).map_err(io_err("write", &path))
    };
    match lang {
        HandlerLang::Rust => {
            let sdk = crate::toolchain::scaffold::guest_sdk_dir(settings.guest_sdk.as_deref())?;
            let sdk_path = sdk
                .display()
                .to_string()
                .replace('\\', "\\\\")
                .replace('"', "\\\"");
            write(
                "Cargo.toml",
                &format!(
                    "[package]\nname = \"{CRATE}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\nbuild = false\nautobins = false\nautoexamples = false\nautotests = false\nautobenches = false\n\n\
                     [lib]\npath = \"src/lib.rs\"\ncrate-type = [\"cdylib\"]\n\n\
                     [dependencies]\nskillhost-guest = {{ path = \"{sdk_path}\" }}\n\n\
                     [workspace]\n\n\
                     [profile.release]\nopt-level = \"s\"\ncodegen-units = 1\nstrip = true\npanic = \"abort\"\n"
                ),
            )?;
            // The versions the host's own workspace pinned, where it has a
            // lock: the build resolves offline from what is already here.
            if let Some(lock) = sdk.parent().map(|p| p.join("Cargo.lock"))
                && let Ok(text) = fs::read_to_string(&lock)
            {
                write("Cargo.lock", &text)?;
            }
            write("src/lib.rs", source)
        }
        HandlerLang::Js => {
            write("handler.js", source)?;
            write("wit/skill.wit", SKILL_WIT)
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
    match lang {
        HandlerLang::Rust => build_rust(slot, settings),
        HandlerLang::Js => build_js(slot, settings),
    }
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
            "the forge builds a model's handler only inside a bubblewrap box; install it with `{}` (or `skillhost toolchain install rust`), or set [forge.handler] build_box = \"none\" to build unboxed, which lets the model's source read the operator's files (see docs/forge.md)",
            crate::toolchain::apt_install(&["bubblewrap"])
        ),
    })
}

/// The operator's CARGO_HOME: `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
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

fn build_rust(slot: &Path, settings: &BuildSettings) -> Result<Built, BuildError> {
    let missing = |hint: String| BuildError::ToolchainMissing {
        what: "cargo with the wasm32-wasip2 target".into(),
        hint,
    };
    // Fail closed before anything else: no box, no build.
    let bwrap = match settings.build_box {
        BuildBox::Bwrap => Some(bwrap()?),
        BuildBox::None => None,
    };
    // The toolchain's sysroot, asked of rustup's rustc (outside the box,
    // with nothing of the model's); the build runs that toolchain's own
    // cargo and rustc, not rustup's proxies.
    let rustc = on_path("rustc").ok_or_else(|| missing("no `rustc` on PATH".into()))?;
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
        .map_err(|e| missing(format!("cannot run rustc: {e}")))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    let sysroot = sysroot.canonicalize().unwrap_or(sysroot);
    if !sysroot.join("lib/rustlib/wasm32-wasip2").is_dir() {
        return Err(missing(format!(
            "the toolchain {} has no wasm32-wasip2 target: rustup target add wasm32-wasip2{}",
            settings
                .toolchain
                .as_deref()
                .unwrap_or("(rustup's default)"),
            settings
                .toolchain
                .as_deref()
                .map(|t| format!(" --toolchain {t}"))
                .unwrap_or_default()
        )));
    }
    let cargo = sysroot.join("bin/cargo");
    if !cargo.is_file() {
        return Err(missing(format!(
            "the toolchain at {} has no bin/cargo (rustup component add cargo)",
            sysroot.display()
        )));
    }
    let cargo_home =
        cargo_home().ok_or_else(|| missing("neither CARGO_HOME nor a home folder".into()))?;
    fs::create_dir_all(&settings.cache_dir).map_err(io_err("create", &settings.cache_dir))?;
    let cache_dir = settings
        .cache_dir
        .canonicalize()
        .unwrap_or_else(|_| settings.cache_dir.clone());
    let slot = &slot.canonicalize().unwrap_or_else(|_| slot.to_path_buf());
    let paths = RustBox {
        sysroot,
        cargo_home,
        guest_sdk: crate::toolchain::scaffold::guest_sdk_dir(settings.guest_sdk.as_deref())?,
        slot: slot.clone(),
        cache_dir,
    };
    let args = [
        "build",
        "--release",
        "--offline",
        "--target",
        "wasm32-wasip2",
        "--message-format=json",
        "--manifest-path",
        "Cargo.toml",
    ];
    let run = match &bwrap {
        Some(bwrap) => Run::boxed(bwrap, &paths.spec(), &cargo, &args)?,
        None => {
            warn_unboxed(HandlerLang::Rust);
            let mut cmd = Command::new(&cargo);
            cmd.env_clear().current_dir(slot).args(args);
            let home = std::env::var_os("HOME").unwrap_or_default();
            cmd.envs(paths.env(home, None, std::env::var_os("PATH")));
            Run::direct(cmd)
        }
    };
    // One build at a time in the shared cache, so that the artifact read
    // after it is this build's.
    let _lock = lock_cache(&settings.cache_dir)?;
    let duration = run_limited(run, slot, settings.timeout, LogFilter::cargo(slot))?;
    let out = settings
        .cache_dir
        .join("wasm32-wasip2/release")
        .join(format!("{}.wasm", CRATE.replace('-', "_")));
    let wasm = fs::read(&out).map_err(io_err("read", &out))?;
    Ok(Built { wasm, duration })
}

fn build_js(slot: &Path, settings: &BuildSettings) -> Result<Built, BuildError> {
    let bwrap = match settings.build_box {
        BuildBox::Bwrap => Some(bwrap()?),
        BuildBox::None => None,
    };
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
    let duration = run_limited(run, slot, settings.timeout, LogFilter::raw())?;
    let out = slot.join(HANDLER_FILE);
    let wasm = fs::read(&out).map_err(io_err("read", &out))?;
    Ok(Built { wasm, duration })
}

fn lock_cache(dir: &Path) -> Result<fs::File, BuildError> {
    let path = dir.join(".skillhost-build.lock");
    crate::fsutil::lock_file(&path).map_err(io_err("lock", &path))
}
