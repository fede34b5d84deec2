//! Removing an installed skill.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::staging::Staging;
use super::{InstallError, NAMES_ONLY, Uninstalled, check_name};
use crate::fsutil;
use crate::paths::Paths;
use crate::skill::{Catalog, Source};

/// Removes the installed skill `name`: its folder is renamed into
/// `.staging/` (one step: the catalog no longer sees it) and then deleted.
/// Bundled, user, workspace, forged and `--skills` skills are refused.
pub fn uninstall(paths: &Paths, name: &str) -> Result<Uninstalled, InstallError> {
    let dir = installed_folder(paths, name)?;
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
    delete_aside(&aside);
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

/// The folder of the installed skill `name`: the folder of that name, or
/// the installed skill's folder named otherwise. A skill of another
/// source is refused, naming it.
fn installed_folder(paths: &Paths, name: &str) -> Result<PathBuf, InstallError> {
    let root = paths.installed_root();
    let direct = check_name(name).is_ok()
        && fs::symlink_metadata(root.join(name)).is_ok_and(|m| m.is_dir() || m.is_symlink());
    if direct {
        return Ok(root.join(name));
    }
    let catalog = Catalog::load(&paths.roots(), &NAMES_ONLY);
    let installed = Catalog::load(
        &[crate::skill::Root::new(root.clone(), Source::Installed)
            .skipping(paths.install_staging())],
        &NAMES_ONLY,
    );
    match (installed.get(name), catalog.get(name)) {
        (Some(s), _) if s.dir.parent() == Some(root.as_path()) => Ok(s.dir.clone()),
        (_, Some(s)) => Err(InstallError::NotInstalled {
            name: name.to_owned(),
            kind: s.source,
            dir: s.dir.clone(),
        }),
        _ => Err(InstallError::UnknownSkill(name.to_owned())),
    }
}

/// Deletes the folder (or link) moved aside; out of the catalog already,
/// so a failure is only logged (the next install clears the rest).
fn delete_aside(aside: &Path) {
    let removed = if fs::symlink_metadata(aside).is_ok_and(|m| m.is_dir()) {
        fs::remove_dir_all(aside)
    } else {
        fs::remove_file(aside)
    };
    if let Err(e) = removed {
        tracing::warn!("cannot delete {}: {e}", aside.display());
    }
}
