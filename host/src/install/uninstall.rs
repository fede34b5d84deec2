//! Removing an installed skill.

use std::fs;
use std::io;

use super::staging::Staging;
use super::{InstallError, NAMES_ONLY, Uninstalled, check_name};
use crate::fsutil;
use crate::paths::Paths;
use crate::skill::{Catalog, Source};

/// Removes the installed skill `name`: its folder is renamed into
/// `.staging/` (one step: the catalog no longer sees it) and then deleted.
/// Bundled, user, workspace, forged and `--skills` skills are refused.
pub fn uninstall(paths: &Paths, name: &str) -> Result<Uninstalled, InstallError> {
    let root = paths.installed_root();
    let direct = check_name(name).is_ok()
        && fs::symlink_metadata(root.join(name)).is_ok_and(|m| m.is_dir() || m.is_symlink());
    let dir = if direct {
        root.join(name)
    } else {
        // Not a folder of that name: a skill of another source, or one
        // whose folder is named otherwise.
        let catalog = Catalog::load(&paths.roots(), &NAMES_ONLY);
        let installed = Catalog::load(
            &[crate::skill::Root::new(root.clone(), Source::Installed)
                .skipping(paths.install_staging())],
            &NAMES_ONLY,
        );
        match (installed.get(name), catalog.get(name)) {
            (Some(s), _) if s.dir.parent() == Some(root.as_path()) => s.dir.clone(),
            (_, Some(s)) => {
                return Err(InstallError::NotInstalled {
                    name: name.to_owned(),
                    kind: s.source,
                    dir: s.dir.clone(),
                });
            }
            _ => return Err(InstallError::UnknownSkill(name.to_owned())),
        }
    };
    let staging = Staging::open(paths)?;
    let folder = dir
        .file_name()
        .ok_or_else(|| InstallError::UnknownSkill(name.to_owned()))?;
    let current = staging.root.join(folder);
    if fs::symlink_metadata(&current).is_err() {
        // Gone while waiting for the lock.
        return Err(InstallError::UnknownSkill(name.to_owned()));
    }
    let aside = staging.spare_path("removed");
    fs::rename(&current, &aside).map_err(InstallError::io("remove", &current))?;
    fsutil::sync_dir(&staging.root);
    let removed = if fs::symlink_metadata(&aside).is_ok_and(|m| m.is_dir()) {
        fs::remove_dir_all(&aside)
    } else {
        fs::remove_file(&aside)
    };
    if let Err(e) = removed {
        // Out of the catalog already; the next install clears the rest.
        tracing::warn!("cannot delete {}: {e}", aside.display());
    }
    let record = staging.records.join(format!("{name}.json"));
    if let Err(e) = fs::remove_file(&record)
        && e.kind() != io::ErrorKind::NotFound
    {
        tracing::warn!("cannot delete {}: {e}", record.display());
    }
    tracing::info!(name, "uninstalled a skill");
    Ok(Uninstalled {
        name: name.to_owned(),
        dir: current,
    })
}
