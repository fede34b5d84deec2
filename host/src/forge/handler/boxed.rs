//! A Rust build in the box: the kit it is made from (prepared once per
//! SDK, lock and toolchain) and a target folder of its own, staged from the
//! kit's (its small files copied, its large ones linked to the kit's,
//! which the box binds read-only), removed once the artifact is read.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::build::{
    BuildSettings, Built, CARGO_ARGS, CRATE, cargo_home, host_cargo_env, lock_dir, read_artifact,
    rust_manifest, sdk_lock, write_rust_project,
};
use super::process::{Run, run_limited};
use super::{BuildError, HandlerConfig, io_err};
use crate::toolchain::buildbox::{
    self, BOX_CARGO, BOX_SDK_CRATE, BOX_SRC, Kit, LogFilter, RustBox,
};

/// The handler the kit's target folder is built with, so that its
/// dependencies are compiled before any model's handler is.
const WARM_SOURCE: &str = "use skillhost_guest::{HandlerResult, Output, Task};\n\nfn handle(task: Task) -> HandlerResult {\n    Ok(Output::text(task.description))\n}\n\nskillhost_guest::export_handler!(handle);\n";

/// Changes whenever what a kit holds or how it is built changes.
const KIT_FORMAT: &[u8] =
    b"kit 4: vendored without per-file checksums, its own rustc wrapper, built in the box without /proc, no handler units";

/// Builds the project in `slot` in the box: the kit's SDK and crates, a
/// target folder staged from its own.
pub(super) fn build(
    bwrap: &Path,
    sysroot: &Path,
    sdk: &Path,
    slot: &Path,
    settings: &BuildSettings,
) -> Result<Built, BuildError> {
    let kit = kit(bwrap, sysroot, sdk, settings)?;
    let target = BuildDir::staged_from(&kit.target(), &settings.cache_dir.join("builds"))?;
    let paths = RustBox {
        sysroot: sysroot.to_path_buf(),
        sdk: kit.sdk(),
        vendor: kit.vendor(),
        tools: kit.tools(),
        slot: slot.to_path_buf(),
        target: target.path.clone(),
        kit_target: Some(kit.target()),
    };
    let duration = run_boxed(bwrap, &paths, settings)?;
    let wasm = read_artifact(&paths.artifact(CRATE), &settings.limits)?;
    target.remove_later();
    Ok(Built { wasm, duration })
}

fn run_boxed(
    bwrap: &Path,
    paths: &RustBox,
    settings: &BuildSettings,
) -> Result<Duration, BuildError> {
    let run = Run::boxed(bwrap, &paths.spec(), Path::new(BOX_CARGO), &CARGO_ARGS)?
        .limited(settings.limits);
    // The compiler's paths are the box's: the slot's src/ is /box/src/src.
    let filter = LogFilter::cargo(Path::new(BOX_SRC));
    run_limited(run, &paths.slot, settings.timeout, filter)
}

fn kit_err(e: buildbox::KitError) -> BuildError {
    BuildError::ToolchainMissing {
        what: "the build box's guest SDK and its dependencies".into(),
        hint: e.to_string(),
    }
}

/// The kit for this SDK, lock and toolchain, made if it is not there yet.
fn kit(
    bwrap: &Path,
    sysroot: &Path,
    sdk: &Path,
    settings: &BuildSettings,
) -> Result<Kit, BuildError> {
    let files = buildbox::sdk_files(sdk).map_err(kit_err)?;
    let lock = sdk_lock(sdk);
    let id = kit_id(&files, lock.as_deref(), sysroot);
    let kits = settings.cache_dir.join("kits");
    let kit = Kit {
        dir: kits.join(&id),
    };
    if kit.ready() {
        kit.mark_used();
        return Ok(kit);
    }
    fs::create_dir_all(&kits).map_err(io_err("create", &kits))?;
    // One process makes it; the others wait and use it.
    let _lock = lock_dir(&kits)?;
    if !kit.ready() {
        let made = Made {
            files: &files,
            lock: lock.as_deref(),
            sysroot,
        };
        make_kit(bwrap, &made, &kit, settings)?;
        for old in buildbox::remove_unused_kits(&kits, &kit.dir, buildbox::KIT_UNUSED_FOR) {
            tracing::info!("removed the build box kit {}, unused", old.display());
        }
    }
    Ok(kit)
}

/// A kit's id: the SDK's files, its lock, the toolchain, the warm
/// crate and the kit's format.
fn kit_id(files: &[(PathBuf, Vec<u8>)], lock: Option<&str>, sysroot: &Path) -> String {
    buildbox::kit_id(
        files,
        &[
            lock.unwrap_or_default().as_bytes(),
            toolchain_id(sysroot).as_bytes(),
            rust_manifest(Path::new(BOX_SDK_CRATE)).as_bytes(),
            WARM_SOURCE.as_bytes(),
            KIT_FORMAT,
        ],
    )
}

/// What a kit is made from.
struct Made<'a> {
    files: &'a [(PathBuf, Vec<u8>)],
    lock: Option<&'a str>,
    sysroot: &'a Path,
}

/// Makes `kit` in a folder beside it, then renames it into place: the SDK,
/// its crates vendored from the operator's registry, and its target
/// folder built in the box.
fn make_kit(bwrap: &Path, m: &Made, kit: &Kit, settings: &BuildSettings) -> Result<(), BuildError> {
    let tmp = Kit {
        dir: kit.dir.with_extension("tmp"),
    };
    for stale in [&tmp.dir, &kit.dir] {
        if stale.exists() {
            fs::remove_dir_all(stale).map_err(io_err("clear", stale))?;
        }
    }
    buildbox::write_files(&tmp.sdk(), m.files).map_err(kit_err)?;
    buildbox::write_tools(&tmp.tools()).map_err(io_err("write", &tmp.tools()))?;
    let scratch = tmp.dir.join("scratch");
    vendor_sdk_crates(m, &tmp, &scratch)?;
    let warm = tmp.dir.join("warm");
    write_rust_project(&warm, WARM_SOURCE, Path::new(BOX_SDK_CRATE), m.lock)?;
    fs::create_dir(tmp.target()).map_err(io_err("create", &tmp.target()))?;
    build_warm(bwrap, m.sysroot, &tmp, &warm, settings)?;
    for done in [&scratch, &warm] {
        fs::remove_dir_all(done).map_err(io_err("remove", done))?;
    }
    remove_own_units(&tmp.target())?;
    fs::rename(&tmp.dir, &kit.dir).map_err(io_err("rename", &tmp.dir))?;
    kit.mark_ready().map_err(kit_err)
}

/// The SDK's crates vendored into `tmp` from the operator's registry,
/// through a project in `scratch`.
fn vendor_sdk_crates(m: &Made, tmp: &Kit, scratch: &Path) -> Result<(), BuildError> {
    write_rust_project(
        scratch,
        WARM_SOURCE,
        &tmp.sdk().join("skillhost-guest"),
        m.lock,
    )?;
    let cargo_home = cargo_home().ok_or_else(|| BuildError::ToolchainMissing {
        what: "cargo's registry".into(),
        hint: "neither CARGO_HOME nor a home folder".into(),
    })?;
    let env = host_cargo_env(m.sysroot, &cargo_home, None);
    buildbox::vendor(&m.sysroot.join("bin/cargo"), &env, scratch, &tmp.vendor()).map_err(kit_err)
}

/// Builds the warm handler in `warm` in the box, filling the kit's target
/// folder with the SDK's dependencies.
fn build_warm(
    bwrap: &Path,
    sysroot: &Path,
    tmp: &Kit,
    warm: &Path,
    settings: &BuildSettings,
) -> Result<(), BuildError> {
    let paths = RustBox {
        sysroot: sysroot.to_path_buf(),
        sdk: tmp.sdk(),
        vendor: tmp.vendor(),
        tools: tmp.tools(),
        slot: warm.to_path_buf(),
        target: tmp.target(),
        kit_target: None,
    };
    tracing::info!("building the guest SDK's dependencies for the build box, once");
    // The operator's own SDK and registry, not a model's source: the
    // default limits, which its dependencies fit, whatever a model's
    // builds are held to.
    let settings = BuildSettings {
        limits: BuildSettings::new(&HandlerConfig::default(), Path::new("")).limits,
        ..settings.clone()
    };
    run_boxed(bwrap, &paths, &settings).map_err(|e| match e {
        BuildError::Failed { status, log, .. } => BuildError::ToolchainMissing {
            what: "the build box's prebuilt guest SDK".into(),
            hint: format!("building it failed ({status}):\n{log}"),
        },
        e => e,
    })?;
    Ok(())
}

/// Removes every output of the warm handler's own crate from a kit's
/// target folder: its artifact, dep-info and fingerprint. A model's
/// handler is the same crate at the same box path, so cargo would
/// otherwise find the warm handler fresh (its outputs newer than a slot
/// written before the kit was made) and hand back its artifact unbuilt.
/// With no fingerprint of its own, the crate is always compiled.
fn remove_own_units(dir: &Path) -> Result<(), BuildError> {
    let own = [CRATE.to_owned(), CRATE.replace('-', "_")];
    for entry in fs::read_dir(dir).map_err(io_err("read", dir))? {
        let path = entry.map_err(io_err("read", dir))?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = name.strip_prefix("lib").unwrap_or(&name);
        if own.iter().any(|o| name.starts_with(o.as_str())) {
            let removed = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            removed.map_err(io_err("remove", &path))?;
        } else if path.is_dir() && !path.is_symlink() {
            remove_own_units(&path)?;
        }
    }
    Ok(())
}

/// What identifies a toolchain: its sysroot and the names of its
/// libraries (rustc's driver library carries a hash of its version).
fn toolchain_id(sysroot: &Path) -> String {
    let mut names: Vec<String> = fs::read_dir(sysroot.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    format!("{}\n{}", sysroot.display(), names.join("\n"))
}

/// A build's own target folder, staged from the kit's
/// ([`buildbox::stage_tree`]); removed when dropped.
struct BuildDir {
    path: PathBuf,
}

impl BuildDir {
    fn staged_from(from: &Path, builds: &Path) -> Result<BuildDir, BuildError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        fs::create_dir_all(builds).map_err(io_err("create", builds))?;
        sweep(builds);
        let pid = std::process::id();
        let dir = BuildDir {
            path: builds.join(format!("{pid}-{}", NEXT.fetch_add(1, Ordering::Relaxed))),
        };
        if dir.path.exists() {
            // Left by an earlier process with the same id.
            fs::remove_dir_all(&dir.path).map_err(io_err("clear", &dir.path))?;
        }
        buildbox::stage_tree(
            from,
            &dir.path,
            &buildbox::KIT_SHARED,
            Path::new(buildbox::BOX_KIT_TARGET),
        )
        .map_err(kit_err)?;
        Ok(dir)
    }
}

impl BuildDir {
    /// Removed on a thread of its own, so that the caller does not wait
    /// for it (a process that exits first leaves it to [`sweep`]).
    fn remove_later(mut self) {
        let path = std::mem::take(&mut self.path);
        std::thread::spawn(move || {
            let _ = fs::remove_dir_all(&path);
        });
    }
}

impl Drop for BuildDir {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// Removes the target folders of processes that are gone (killed before
/// they could).
fn sweep(builds: &Path) {
    for entry in fs::read_dir(builds).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.split_once('-'))
            .map(|(p, _)| p);
        if let Some(pid) = pid
            && pid.bytes().all(|b| b.is_ascii_digit())
            && !Path::new("/proc").join(pid).exists()
        {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build's target folder is staged from the kit's, gone when the
    /// build is; one a killed process left is swept by the next build.
    #[test]
    fn a_builds_target_folder_is_staged_and_removed_after_it() {
        let d = tempfile::tempdir().expect("tempdir");
        let kit = d.path().join("kit-target");
        fs::create_dir_all(kit.join("release")).expect("mkdir");
        fs::write(kit.join("release/dep.rlib"), "built").expect("write");
        let builds = d.path().join("builds");
        // A process id no process has (above the kernel's pid_max).
        let left = builds.join("4294967-0");
        fs::create_dir_all(&left).expect("mkdir");
        let dir = BuildDir::staged_from(&kit, &builds).expect("stage");
        assert!(!left.exists(), "a dead process's folder is swept");
        assert_eq!(
            fs::read_to_string(dir.path.join("release/dep.rlib")).expect("copied"),
            "built"
        );
        fs::write(dir.path.join("release/dep.rlib"), "changed").expect("write");
        let path = dir.path.clone();
        drop(dir);
        assert!(!path.exists(), "removed with the build");
        assert_eq!(
            fs::read_to_string(kit.join("release/dep.rlib")).expect("kit"),
            "built",
            "the kit is as it was"
        );
    }
}
