//! An unpacked skill checked in staging (its SKILL.md, its name, its
//! handler, the text audit) and put in place in one step, then recorded.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::records::write_record;
use super::rename::with_name;
use super::staging::Staging;
use super::unpack::{Payload, locate_skill_file, unpack};
use super::{
    InstallConfig, InstallError, InstallOptions, InstallRecord, Installed, NAMES_ONLY, Origin,
    RecordedAudit, Shadow, check_name, extract, file_name,
};
use crate::audit::{self, Finding};
use crate::fsutil;
use crate::paths::Paths;
use crate::skill::{Catalog, LoadOptions, ParsedSkill, Source, parse_skill};

/// The whole install: stage, check, put in place, report.
pub(super) fn install_payload(
    paths: &Paths,
    payload: Payload<'_>,
    default_name: &str,
    origin: Origin,
    options: &InstallOptions,
    config: &InstallConfig,
) -> Result<Installed, InstallError> {
    let staging = Staging::open(paths)?;
    let work = staging.work_dir("install")?;
    let result = stage_and_place(
        &staging,
        &work,
        payload,
        default_name,
        origin,
        options,
        config,
    );
    // The work folder holds what was refused, or the replaced skill; it
    // is gone when the skill was its whole content.
    match fs::remove_dir_all(&work) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            tracing::warn!("cannot remove {}: {e}", work.display());
        }
        _ => {}
    }
    let mut installed = result?;
    drop(staging);
    note_catalog_view(paths, &mut installed);
    tracing::info!(
        name = %installed.name,
        fingerprint = %installed.fingerprint,
        "installed a skill from {}",
        installed.origin
    );
    Ok(installed)
}

/// Whether the catalog now shows the installed skill: another source's
/// skill of a like name may shadow it, or it may not be listed at all.
fn note_catalog_view(paths: &Paths, installed: &mut Installed) {
    let catalog = Catalog::load(&paths.roots(), &NAMES_ONLY);
    match catalog.look_alike(&installed.name) {
        Some(s) if s.source != Source::Installed => {
            installed.shadowed_by = Some(Shadow {
                source: s.source,
                path: s.path.clone(),
            });
        }
        Some(_) => {}
        None => installed
            .warnings
            .push("the catalog does not list it: see `skillhost skills list`".into()),
    }
}

/// `payload` unpacked into `work`, with the folder of its skill (relative
/// to `work`) and its SKILL.md.
fn unpack_skill(
    work: &Path,
    payload: Payload<'_>,
    config: &InstallConfig,
) -> Result<(extract::Unpacked, PathBuf, PathBuf), InstallError> {
    let mut sink = extract::Sink::new(work, config)?;
    unpack(payload, &mut sink)?;
    let unpacked = sink.finish();
    let (top, md_rel) = locate_skill_file(&unpacked.files, &unpacked.dirs)?;
    Ok((unpacked, top, md_rel))
}

/// Unpacks `payload` into `work`, checks it there and puts the skill in
/// place under the name it installs as, then writes its install record.
fn stage_and_place(
    staging: &Staging,
    work: &Path,
    payload: Payload<'_>,
    default_name: &str,
    origin: Origin,
    options: &InstallOptions,
    config: &InstallConfig,
) -> Result<Installed, InstallError> {
    let (unpacked, top, md_rel) = unpack_skill(work, payload, config)?;
    let skill_dir = work.join(&top);
    let Named {
        parsed,
        name,
        renamed_from,
    } = read_and_name(staging, &work.join(&md_rel), &top, default_name, options)?;

    // The handler it names must be a file it holds.
    let handler = parsed.meta.skillhost.handler.clone();
    if let Some(rel) = &handler {
        read_handler(work, &top, rel, &unpacked.files, config)?;
    }
    let (fingerprint, findings) = pin_and_audit(&skill_dir, &name, options)?;
    let target = staging.root.join(&name);
    let replaced = place(staging, &skill_dir, &target, &name, options.force)?;
    fsutil::sync_dir(&staging.root);

    let record = staging.records.join(format!("{name}.json"));
    let mut warnings = parsed.warnings;
    warnings.extend(record_install(
        &record,
        &name,
        &origin,
        &fingerprint,
        &findings,
    ));
    Ok(Installed {
        name,
        dir: target,
        source: Source::Installed,
        origin,
        handler,
        fingerprint,
        declared: parsed.meta.skillhost.capabilities.clone(),
        replaced,
        renamed_from,
        files: unpacked.files.len(),
        bytes: unpacked.bytes,
        shadowed_by: None,
        warnings,
        audit: findings,
        record,
    })
}

/// The staged skill's pin (as it will be in place: its paths are
/// relative to its folder) and what the text audit found in it.
fn pin_and_audit(
    skill_dir: &Path,
    name: &str,
    options: &InstallOptions,
) -> Result<(String, Vec<Finding>), InstallError> {
    let fingerprint = pin_of(skill_dir).map_err(|reason| InstallError::Unpinnable {
        name: name.to_owned(),
        reason,
    })?;
    Ok((fingerprint, audit_staged(skill_dir, name, options)?))
}

/// The staged SKILL.md and the name the skill installs as.
struct Named {
    parsed: ParsedSkill,
    name: String,
    /// The front matter's name, when the skill installs under another.
    renamed_from: Option<String>,
}

/// The staged SKILL.md, within the catalog's size cap.
fn read_capped_md(md_path: &Path, md_name: &str) -> Result<Vec<u8>, InstallError> {
    let max_md = LoadOptions::default().max_file_bytes;
    let md = fs::read(md_path).map_err(InstallError::io("read", md_path))?;
    if md.len() as u64 > max_md {
        return Err(InstallError::SkillFileTooLarge {
            file: md_name.to_owned(),
            size: md.len() as u64,
            max: max_md,
        });
    }
    Ok(md)
}

/// Reads and parses the staged SKILL.md at `md_path` (within the catalog's
/// size cap) and settles the name: `--name`, else the front matter's; a
/// slug no skill of another source has. When it differs from the front
/// matter's, the SKILL.md is rewritten to it.
fn read_and_name(
    staging: &Staging,
    md_path: &Path,
    top: &Path,
    default_name: &str,
    options: &InstallOptions,
) -> Result<Named, InstallError> {
    let md_name = file_name(md_path);
    let mut md = read_capped_md(md_path, &md_name)?;
    let fallback = match (&options.name, top.file_name()) {
        (Some(n), _) => n.clone(),
        (None, Some(folder)) => folder.to_string_lossy().into_owned(),
        (None, None) => default_name.to_owned(),
    };
    let mut parsed = parse_skill(&md, &fallback).map_err(|source| InstallError::Parse {
        file: md_name.clone(),
        source,
    })?;
    let name = options.name.clone().unwrap_or_else(|| parsed.name.clone());
    check_name(&name)?;
    staging.check_free(&name, default_name)?;
    let renamed_from = if parsed.name != name {
        let old = std::mem::take(&mut parsed.name);
        (md, parsed) = with_name(&md, &name, &fallback)?;
        fsutil::write_atomic(md_path, &md).map_err(InstallError::io("write", md_path))?;
        Some(old)
    } else {
        None
    };
    Ok(Named {
        parsed,
        name,
        renamed_from,
    })
}

/// Writes the install record at `record`; a warning when it cannot be.
/// The skill is in place by then; the record is what `skills list` and a
/// person read later. The catalog audits it again at every load.
fn record_install(
    record: &Path,
    name: &str,
    origin: &Origin,
    fingerprint: &str,
    findings: &[Finding],
) -> Option<String> {
    let written = InstallRecord {
        name: name.to_owned(),
        origin: serde_json::to_value(origin).unwrap_or_default(),
        fingerprint: fingerprint.to_owned(),
        installed_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        audit: RecordedAudit {
            allowed_suspicious: audit::has_high(findings),
            findings: findings.to_vec(),
        },
    };
    write_record(record, &written)
        .err()
        .map(|e| format!("cannot write the install record {}: {e}", record.display()))
}

/// The bytes of the handler `rel` that the staged SKILL.md names: a file
/// of the unpacked folder `top`, or the install is refused.
fn read_handler(
    work: &Path,
    top: &Path,
    rel: &str,
    files: &[PathBuf],
    config: &InstallConfig,
) -> Result<Vec<u8>, InstallError> {
    let inside = extract::relative_path(rel.as_bytes(), config.max_depth)
        .ok()
        .flatten()
        .map(|p| top.join(p))
        .filter(|p| files.contains(p))
        .ok_or_else(|| InstallError::HandlerMissing(rel.to_owned()))?;
    let path = work.join(inside);
    fs::read(&path).map_err(InstallError::io("read", &path))
}

/// The text audit of the staged folder, before anything is visible: a
/// high finding refuses the install unless the caller allows it.
fn audit_staged(
    skill_dir: &Path,
    name: &str,
    options: &InstallOptions,
) -> Result<Vec<audit::Finding>, InstallError> {
    let findings = audit::audit_folder(skill_dir)
        .map_err(|e| InstallError::Io {
            action: "audit",
            path: skill_dir.to_path_buf(),
            source: io::Error::other(e.to_string()),
        })?
        .findings;
    if audit::has_high(&findings) && !options.allow_suspicious {
        return Err(InstallError::Flagged {
            skill: name.to_owned(),
            findings,
        });
    }
    Ok(findings)
}

/// Puts `staged` at `target`: a new name in one rename that refuses to
/// replace anything; with `force`, swapped with the installed folder in
/// one step. Returns the replaced skill's pin.
fn place(
    staging: &Staging,
    staged: &Path,
    target: &Path,
    name: &str,
    force: bool,
) -> Result<Option<String>, InstallError> {
    let exists = || InstallError::AlreadyInstalled {
        name: name.to_owned(),
        dir: target.to_path_buf(),
    };
    let current = match fs::symlink_metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return match fsutil::rename_noreplace(staged, target) {
                Ok(()) => Ok(None),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(exists()),
                Err(e) => Err(InstallError::io("move into place", target)(e)),
            };
        }
        Err(e) => return Err(InstallError::io("inspect", target)(e)),
    };
    if !force {
        return Err(exists());
    }
    if current.file_type().is_symlink() || !current.is_dir() {
        return Err(InstallError::NotReplaceable(target.to_path_buf()));
    }
    let previous = pin_of(target).ok();
    if fsutil::exchange(staged, target).map_err(InstallError::io("replace", target))? {
        return Ok(previous);
    }
    swap_through_aside(staging, staged, target)?;
    Ok(previous)
}

/// No atomic swap here: the old folder moves aside, then the new one in.
/// In between the skill is absent, never half there.
fn swap_through_aside(staging: &Staging, staged: &Path, target: &Path) -> Result<(), InstallError> {
    let aside = staging.spare_path("replaced");
    fs::rename(target, &aside).map_err(InstallError::io("move aside", target))?;
    if let Err(e) = fs::rename(staged, target) {
        let _ = fs::rename(&aside, target);
        return Err(InstallError::io("move into place", target)(e));
    }
    let _ = fs::remove_dir_all(&aside);
    Ok(())
}

/// The pin of the skill in `dir` (see `Skill::pin`), read as the catalog
/// reads it (inside the folder, no link out): what grants and approvals
/// of it hold.
fn pin_of(dir: &Path) -> Result<String, String> {
    let root = crate::skill::Root::new(dir.to_path_buf(), Source::Installed);
    let catalog = Catalog::load(std::slice::from_ref(&root), &NAMES_ONLY);
    let skill = catalog
        .skills()
        .iter()
        .find(|s| s.dir == root.dir)
        .ok_or("the catalog does not read it")?;
    skill.pin().map_err(|e| e.to_string())
}
