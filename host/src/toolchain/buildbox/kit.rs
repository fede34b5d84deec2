//! The kit a boxed Rust build is made from: a copy of the guest SDK that
//! builds on its own, the crates of its dependency graph and no other
//! (`cargo vendor`), and a target folder where they are already built.
//! The kit is made once per SDK, lock and toolchain, under the build cache;
//! each build gets a target folder of its own (small files copied, large
//! ones linked to the kit's, which the box binds read-only), so that no
//! build sees another's output and the kit itself is never written by a
//! build.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

/// A kit's folder: `sdk/` (the crate `skillhost-guest/` and the `wit/`
/// beside it), `vendor/`, `target/`, `tools/`, and `READY` once complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kit {
    pub dir: PathBuf,
}

const READY: &str = "READY";

impl Kit {
    pub fn sdk(&self) -> PathBuf {
        self.dir.join("sdk")
    }

    pub fn vendor(&self) -> PathBuf {
        self.dir.join("vendor")
    }

    pub fn target(&self) -> PathBuf {
        self.dir.join("target")
    }

    pub fn tools(&self) -> PathBuf {
        self.dir.join("tools")
    }

    /// Whether the kit was completed (the marker is written last).
    pub fn ready(&self) -> bool {
        self.dir.join(READY).is_file()
    }

    pub fn mark_ready(&self) -> Result<(), KitError> {
        let path = self.dir.join(READY);
        fs::write(&path, b"").map_err(io_err("write", &path))
    }

    /// Marks the kit used now (its marker's modification time), so that
    /// [`remove_unused_kits`] keeps it. Best effort: a kit that cannot be
    /// marked is only removed sooner, and made again when needed.
    pub fn mark_used(&self) {
        let _ = fs::File::options()
            .write(true)
            .open(self.dir.join(READY))
            .and_then(|f| f.set_modified(SystemTime::now()));
    }

    /// When the kit was last used (or, unfinished, last written).
    fn last_used(dir: &Path) -> Option<SystemTime> {
        let marker = dir.join(READY);
        let probe = if marker.is_file() {
            marker
        } else {
            dir.to_path_buf()
        };
        fs::metadata(probe).and_then(|m| m.modified()).ok()
    }
}

/// How long a kit may go unused before the next kit made removes it: a
/// kit is a few hundred MB, and every SDK, lock or toolchain change makes
/// a new one.
pub const KIT_UNUSED_FOR: Duration = Duration::from_secs(14 * 24 * 3600);

/// Removes the kits in `kits` other than `keep` that were not used for
/// `unused_for`, finished or not; returns the folders removed. A build
/// marks its kit used when it starts, so a kit in use is never this old.
pub fn remove_unused_kits(kits: &Path, keep: &Path, unused_for: Duration) -> Vec<PathBuf> {
    let now = SystemTime::now();
    let mut removed = Vec::new();
    for entry in fs::read_dir(kits).into_iter().flatten().flatten() {
        let dir = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let stale = Kit::last_used(&dir)
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > unused_for);
        if is_dir && dir != keep && stale && fs::remove_dir_all(&dir).is_ok() {
            removed.push(dir);
        }
    }
    removed
}

#[derive(Debug, thiserror::Error)]
pub enum KitError {
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the guest SDK at {}: {message}", .path.display())]
    Sdk { path: PathBuf, message: String },
    #[error(
        "`cargo vendor --offline` could not gather the guest SDK's dependencies from CARGO_HOME/registry (build the host once so that they are there): {0}"
    )]
    Vendor(String),
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> KitError {
    let path = path.to_path_buf();
    move |source| KitError::Io {
        action,
        path,
        source,
    }
}

/// The SDK's files as the kit holds them, relative to the kit's `sdk/`:
/// `skillhost-guest/Cargo.toml` made standalone (what it inherits from its
/// workspace written in, so the workspace's manifest stays out of the
/// box), its `src/`, and the `wit/` beside the crate.
pub fn sdk_files(sdk: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, KitError> {
    let bad = |message: String| KitError::Sdk {
        path: sdk.to_path_buf(),
        message,
    };
    let read = |p: &Path| fs::read_to_string(p).map_err(io_err("read", p));
    let manifest = read(&sdk.join("Cargo.toml"))?;
    let workspace = sdk
        .parent()
        .map(|p| p.join("Cargo.toml"))
        .filter(|p| p.is_file())
        .map(|p| read(&p))
        .transpose()?
        .unwrap_or_default();
    let manifest =
        crate::toolchain::scaffold::standalone_manifest(&manifest, &workspace).map_err(bad)?;
    let mut files = vec![(
        PathBuf::from("skillhost-guest/Cargo.toml"),
        manifest.into_bytes(),
    )];
    collect(
        &sdk.join("src"),
        Path::new("skillhost-guest/src"),
        &mut files,
    )?;
    if let Some(wit) = sdk.parent().map(|p| p.join("wit")) {
        collect(&wit, Path::new("wit"), &mut files)?;
    }
    files.sort();
    Ok(files)
}

/// Every regular file under `dir`, named `rel/...`.
fn collect(dir: &Path, rel: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) -> Result<(), KitError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err("read", dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io_err("read", dir))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(io_err("read", &path))?;
        if kind.is_dir() {
            collect(&path, &rel.join(entry.file_name()), out)?;
        } else if kind.is_file() {
            let bytes = fs::read(&path).map_err(io_err("read", &path))?;
            out.push((rel.join(entry.file_name()), bytes));
        }
    }
    Ok(())
}

/// Writes `files` under `dir`.
pub fn write_files(dir: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<(), KitError> {
    for (rel, bytes) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_err("create", parent))?;
        }
        fs::write(&path, bytes).map_err(io_err("write", &path))?;
    }
    Ok(())
}

/// A content id of a kit: the SDK's files, the lock, the toolchain and
/// anything else the kit's build depends on (`extra`).
pub fn kit_id(files: &[(PathBuf, Vec<u8>)], parts: &[&[u8]]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut add = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    for (rel, bytes) in files {
        add(rel.as_os_str().as_encoded_bytes());
        add(bytes);
    }
    for p in parts {
        add(p);
    }
    crate::types::hex(&h.finalize()[..8])
}

/// Runs `cargo vendor --offline` for the project at `project` into `out`,
/// as the operator (outside the box, on manifests the host wrote): the
/// crates of the project's dependency graph, and nothing else of the
/// registry. `env`: cargo's whole environment.
pub fn vendor(
    cargo: &Path,
    env: &[(String, std::ffi::OsString)],
    project: &Path,
    out: &Path,
) -> Result<(), KitError> {
    let result = Command::new(cargo)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(project)
        .args(["vendor", "--offline", "--versioned-dirs", "--quiet"])
        .arg("--manifest-path")
        .arg(project.join("Cargo.toml"))
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| KitError::Vendor(format!("cannot run {}: {e}", cargo.display())))?;
    if !result.status.success() {
        let said = String::from_utf8_lossy(&result.stderr);
        let tail: String = said.lines().rev().take(12).collect::<Vec<_>>().join("\n");
        return Err(KitError::Vendor(format!("{}: {tail}", result.status)));
    }
    drop_file_checksums(out)
}

/// Empties the per-file checksums of each vendored crate, keeping the
/// package's: cargo verifies every file they list on every build (about
/// 50 ms for the SDK's 47 crates, a sixth of a warm build), and here they
/// guard against nothing: `cargo vendor` took the crates from the
/// registry, which verified them, and the box binds the folder read-only.
pub fn drop_file_checksums(vendor: &Path) -> Result<(), KitError> {
    for entry in fs::read_dir(vendor).map_err(io_err("read", vendor))? {
        let path = entry.map_err(io_err("read", vendor))?.path();
        let file = path.join(".cargo-checksum.json");
        let Ok(text) = fs::read(&file) else {
            continue;
        };
        let mut sums: serde_json::Value = serde_json::from_slice(&text)
            .map_err(|e| io_err("read", &file)(std::io::Error::other(e)))?;
        sums["files"] = serde_json::json!({});
        fs::write(&file, sums.to_string()).map_err(io_err("write", &file))?;
    }
    Ok(())
}

/// Files of at least this size are linked by [`stage_tree`], not copied:
/// the units cargo only reads (rlibs, rmeta, wasm). What it rewrites
/// (fingerprints, dep-info, locks) is smaller.
pub const LINK_MIN_BYTES: u64 = 64 << 10;

/// A build's own view of the kit target `from`, made at `to` (which must
/// not exist). Files under [`LINK_MIN_BYTES`] are copied, keeping their
/// modification times (cargo's freshness compares them); larger ones
/// become symbolic links to the same path under `linked_at`, where the box
/// binds `from` read-only, so a build reads them and cannot write them,
/// and staging costs a link, not a copy. The folders `shared` (relative to
/// `from`) are made empty: the box binds them read-only over the view.
/// Symbolic links in `from` are not followed or copied. Returns the bytes
/// copied.
pub fn stage_tree(
    from: &Path,
    to: &Path,
    shared: &[&str],
    linked_at: &Path,
) -> Result<u64, KitError> {
    Staging { shared, linked_at }.under(from, to, Path::new(""))
}

/// How [`stage_tree`] stages: which folders are left empty, and where
/// large files link to.
struct Staging<'a> {
    shared: &'a [&'a str],
    linked_at: &'a Path,
}

impl Staging<'_> {
    fn under(&self, from: &Path, to: &Path, rel: &Path) -> Result<u64, KitError> {
        fs::create_dir(to).map_err(io_err("create", to))?;
        if self.shared.iter().any(|s| Path::new(s) == rel) {
            return Ok(0);
        }
        let mut bytes = 0;
        let entries = fs::read_dir(from).map_err(io_err("read", from))?;
        for entry in entries {
            let entry = entry.map_err(io_err("read", from))?;
            let (src, dst) = (entry.path(), to.join(entry.file_name()));
            let rel = rel.join(entry.file_name());
            let kind = entry.file_type().map_err(io_err("read", &src))?;
            if kind.is_dir() {
                bytes += self.under(&src, &dst, &rel)?;
            } else if kind.is_file() {
                bytes += self.file(&entry, &dst, &rel)?;
            }
        }
        Ok(bytes)
    }

    fn file(&self, entry: &fs::DirEntry, dst: &Path, rel: &Path) -> Result<u64, KitError> {
        let src = entry.path();
        let size = entry.metadata().map_err(io_err("read", &src))?.len();
        if size < LINK_MIN_BYTES {
            return copy_file(entry, dst);
        }
        let to = self.linked_at.join(rel);
        std::os::unix::fs::symlink(to, dst).map_err(io_err("link", dst))?;
        Ok(0)
    }
}

fn copy_file(entry: &fs::DirEntry, dst: &Path) -> Result<u64, KitError> {
    let src = entry.path();
    let bytes = fs::copy(&src, dst).map_err(io_err("copy", &src))?;
    let modified = entry
        .metadata()
        .and_then(|m| m.modified())
        .map_err(io_err("read", &src))?;
    fs::File::options()
        .write(true)
        .open(dst)
        .and_then(|f| f.set_modified(modified))
        .map_err(io_err("touch", dst))?;
    Ok(bytes)
}
