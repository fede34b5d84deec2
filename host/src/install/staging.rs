//! The installed root and its `.staging/` folder, locked for this process:
//! installs and uninstalls take turns, and what a killed one left there is
//! removed.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::{InstallError, NAMES_ONLY, check_name, record_path};
use crate::paths::{INSTALL_STAGING, Paths};
use crate::skill::{Catalog, Root, Source};

const LOCK_FILE: &str = "lock";

/// The installed root and its staging folder, locked for this process.
pub(super) struct Staging {
    /// The installed root, resolved.
    pub(super) root: PathBuf,
    dir: PathBuf,
    /// The other roots of the invocation: names an install may not take.
    others: Vec<Root>,
    /// The installed root, as the catalog reads it.
    installed: Root,
    /// Where install records go (see [`record_path`]).
    pub(super) records: PathBuf,
    _lock: File,
}

impl Staging {
    /// Makes the installed root and `.staging/` if missing (refusing links
    /// for either), waits for the lock, and removes what a killed install
    /// or uninstall left there.
    pub(super) fn open(paths: &Paths) -> Result<Staging, InstallError> {
        let root = paths.installed_root();
        refuse_link(&root)?;
        fs::create_dir_all(&root).map_err(InstallError::io("create", &root))?;
        let root = root
            .canonicalize()
            .map_err(InstallError::io("resolve", &root))?;
        let dir = root.join(INSTALL_STAGING);
        refuse_link(&dir)?;
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(InstallError::io("create", &dir)(e)),
        }
        let lock_path = dir.join(LOCK_FILE);
        let lock =
            crate::fsutil::lock_file(&lock_path).map_err(InstallError::io("lock", &lock_path))?;
        let (installed, others): (Vec<Root>, Vec<Root>) = paths
            .roots()
            .into_iter()
            .partition(|r| r.source.is_foreign());
        let installed = installed
            .into_iter()
            .next()
            .unwrap_or_else(|| Root::new(root.clone(), Source::Installed));
        let staging = Staging {
            root,
            dir,
            others,
            installed,
            records: record_path(paths, "x")
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            _lock: lock,
        };
        staging.remove_leftovers();
        Ok(staging)
    }

    /// Under the lock, nothing in `.staging/` but the lock belongs to a
    /// live process.
    fn remove_leftovers(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            if e.file_name() == LOCK_FILE {
                continue;
            }
            let path = e.path();
            let removed = if e.file_type().is_ok_and(|t| t.is_dir()) {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            match removed {
                Ok(()) => {
                    tracing::info!("removed {} (left by an unfinished install)", path.display())
                }
                Err(err) => tracing::warn!("cannot remove {}: {err}", path.display()),
            }
        }
    }

    /// A new, empty folder in `.staging/`.
    pub(super) fn work_dir(&self, purpose: &str) -> Result<PathBuf, InstallError> {
        let path = self
            .dir
            .join(format!("{purpose}-{}-{}", std::process::id(), unique()));
        fs::create_dir(&path).map_err(InstallError::io("create", &path))?;
        Ok(path)
    }

    /// A name in `.staging/` that does not exist yet.
    pub(super) fn spare_path(&self, purpose: &str) -> PathBuf {
        self.dir
            .join(format!("{purpose}-{}-{}", std::process::id(), unique()))
    }

    /// Refuses `name` when a skill of another source has it, or a name of
    /// the same skeleton (see `skill::skeleton`), or another installed skill
    /// has a look-alike of it: the catalog would use only one of them.
    /// `alternative` (the source's own name) is suggested when it is free.
    pub(super) fn check_free(&self, name: &str, alternative: &str) -> Result<(), InstallError> {
        let others = Catalog::load(&self.others, &NAMES_ONLY);
        let installed = Catalog::load(std::slice::from_ref(&self.installed), &NAMES_ONLY);
        let holder = |n: &str| {
            others
                .look_alike(n)
                .or_else(|| installed.look_alike(n).filter(|s| s.name != n))
        };
        let Some(holder_skill) = holder(name) else {
            return Ok(());
        };
        let hint = if alternative != name
            && check_name(alternative).is_ok()
            && holder(alternative).is_none()
            && installed.get(alternative).is_none()
            && fs::symlink_metadata(self.root.join(alternative)).is_err()
        {
            format!(" (e.g. --name {alternative})")
        } else {
            String::new()
        };
        Err(InstallError::NameTaken {
            name: name.to_owned(),
            holder: holder_skill.name.clone(),
            kind: holder_skill.source,
            path: holder_skill.path.clone(),
            hint,
        })
    }
}

fn refuse_link(path: &Path) -> Result<(), InstallError> {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(InstallError::Link(path.to_path_buf()));
    }
    Ok(())
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}
