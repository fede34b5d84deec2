//! Forged and installed skills on a store that hosts share. Each skill
//! folder is one shared document, `skill/forged/NAME` or
//! `skill/installed/NAME`: a tar of its files (an empty body: the skill
//! was removed). A host publishes the folders it changed (after a forge,
//! an improvement or an install: [`publish`]) and takes in the others'
//! before its next run ([`materialize`], from `Runner::catch_up` in `exec`).
//!
//! What this host last published or took in, per document, is kept in
//! `.skillhost/shared-skills.json` (version and a signature of the folder:
//! each file's path, size, modification time, inode and change time), so
//! a folder is sent only when it changed here and written only when it
//! changed elsewhere. (A record made by an older version, which signed
//! less, differs once: each folder is then sent once more.)
//! A folder is replaced whole, by rename: a reader sees the old skill or
//! the new one. Documents come from other hosts of the same operator, yet
//! are unpacked as carefully as an install: plain files and folders only,
//! relative paths with no `..`, and at most [`MAX_SKILL_BYTES`].

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::paths::Paths;
use crate::store::{SharedState, StoreError};

pub const SKILL_DOC_PREFIX: &str = "skill/";

/// A shared skill that could not be sent or taken in.
#[derive(Debug, thiserror::Error)]
pub enum SharedError {
    #[error("the store shared by the hosts: {0}")]
    Store(#[from] StoreError),
    #[error("`{doc}` in the store shared by the hosts is not valid: {message}")]
    Invalid { doc: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// Largest skill folder shared (a JavaScript handler is 12 to 18 MB).
pub const MAX_SKILL_BYTES: u64 = 64 << 20;
const SEEN_FILE: &str = "shared-skills.json";
const LOCK_FILE: &str = "shared-skills.lock";

/// What this host last sent or took in of one document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Seen {
    version: i64,
    /// The folder's signature then ("" for a removed skill).
    signature: String,
}

type SeenMap = BTreeMap<String, Seen>;

fn seen_path(paths: &Paths) -> PathBuf {
    paths.state_dir().join(SEEN_FILE)
}

fn load_seen(paths: &Paths) -> SeenMap {
    // A lost or damaged record costs one extra exchange of each folder,
    // never a skill: start over rather than fail the run.
    fs::read(seen_path(paths))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn save_seen(paths: &Paths, seen: &SeenMap) -> Result<(), SharedError> {
    let bytes = serde_json::to_vec_pretty(seen).map_err(|e| invalid(SEEN_FILE, e))?;
    crate::fsutil::write_atomic(&seen_path(paths), &bytes).map_err(|e| io(&seen_path(paths), e))
}

fn invalid(doc: &str, e: impl std::fmt::Display) -> SharedError {
    SharedError::Invalid {
        doc: doc.to_owned(),
        message: e.to_string(),
    }
}

fn io(path: &Path, e: std::io::Error) -> SharedError {
    SharedError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

/// The shared roots: (document kind, folder).
fn roots(paths: &Paths) -> [(&'static str, PathBuf); 2] {
    [
        ("forged", paths.forged_root()),
        ("installed", paths.installed_root()),
    ]
}

/// Files of a skill folder, by relative path: dot files (a forge's
/// temporaries, an install's staging) and anything not a plain file or
/// folder are left out.
fn files(dir: &Path) -> Vec<(PathBuf, fs::Metadata)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(PathBuf, fs::Metadata)>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                walk(base, &e.path(), out);
            } else if meta.is_file()
                && let Ok(rel) = e.path().strip_prefix(base)
            {
                out.push((rel.to_path_buf(), meta));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Path, size, modification time and, on Unix, inode and change time of
/// every file: changes when a file is written or replaced, at no cost of
/// reading it. The change time is what the kernel sets on every write:
/// an edit that keeps the size and puts the old modification time back
/// (`touch -r`, a restore) still changes it.
fn signature(files: &[(PathBuf, fs::Metadata)]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for (rel, meta) in files {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        #[cfg(unix)]
        let changed = {
            use std::os::unix::fs::MetadataExt;
            format!("{}\0{}.{}", meta.ino(), meta.ctime(), meta.ctime_nsec())
        };
        #[cfg(not(unix))]
        let changed = "";
        h.update(format!("{}\0{}\0{mtime}\0{changed}\n", rel.display(), meta.len()).as_bytes());
    }
    format!("{:x}", h.finalize())
}

/// The local skill folders, by document name.
fn local_skills(paths: &Paths) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    for (kind, root) in roots(paths) {
        let Ok(entries) = fs::read_dir(&root) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !e.path().join("SKILL.md").is_file() {
                continue;
            }
            out.insert(format!("{SKILL_DOC_PREFIX}{kind}/{name}"), e.path());
        }
    }
    out
}

/// The folder a document is unpacked into; None for a name no host could
/// have published (another kind, a path in the name).
fn folder_of(paths: &Paths, doc: &str) -> Option<PathBuf> {
    let rest = doc.strip_prefix(SKILL_DOC_PREFIX)?;
    let (kind, name) = rest.split_once('/')?;
    let root = roots(paths).into_iter().find(|(k, _)| *k == kind)?.1;
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && Path::new(name).components().count() == 1
        && matches!(
            Path::new(name).components().next(),
            Some(Component::Normal(_))
        );
    plain.then(|| root.join(name))
}

/// One lock per workspace for publishing and taking in, so two processes
/// of one host do neither twice at once.
fn lock(paths: &Paths) -> Result<fs::File, SharedError> {
    let path = paths.state_dir().join(LOCK_FILE);
    fs::create_dir_all(paths.state_dir()).map_err(|e| io(&paths.state_dir(), e))?;
    crate::fsutil::lock_file(&path).map_err(|e| io(&path, e))
}

fn pack(dir: &Path, files: &[(PathBuf, fs::Metadata)], doc: &str) -> Result<Vec<u8>, SharedError> {
    let total: u64 = files.iter().map(|(_, m)| m.len()).sum();
    if total > MAX_SKILL_BYTES {
        return Err(invalid(
            doc,
            format!("the folder holds {total} bytes, over the {MAX_SKILL_BYTES} shared at most"),
        ));
    }
    let mut tar = tar::Builder::new(Vec::new());
    for (rel, _) in files {
        let path = dir.join(rel);
        let mut f = fs::File::open(&path).map_err(|e| io(&path, e))?;
        tar.append_file(rel, &mut f).map_err(|e| io(&path, e))?;
    }
    tar.into_inner().map_err(|e| io(dir, e))
}

/// Unpacks `body` into a new folder `into` (which must not exist).
fn unpack(body: &[u8], into: &Path, doc: &str) -> Result<(), SharedError> {
    fs::create_dir_all(into).map_err(|e| io(into, e))?;
    let mut archive = tar::Archive::new(body);
    let mut total = 0u64;
    for entry in archive.entries().map_err(|e| invalid(doc, e))? {
        let mut entry = entry.map_err(|e| invalid(doc, e))?;
        let rel = entry.path().map_err(|e| invalid(doc, e))?.into_owned();
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(invalid(
                doc,
                format!("the path {} leaves the skill's folder", rel.display()),
            ));
        }
        match entry.header().entry_type() {
            tar::EntryType::Regular => {}
            tar::EntryType::Directory => continue,
            other => {
                return Err(invalid(
                    doc,
                    format!("{} is a {other:?}, not a file", rel.display()),
                ));
            }
        }
        let mut bytes = Vec::new();
        (&mut entry)
            .take(MAX_SKILL_BYTES - total + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| invalid(doc, e))?;
        total += bytes.len() as u64;
        if total > MAX_SKILL_BYTES {
            return Err(invalid(
                doc,
                format!("it holds more than {MAX_SKILL_BYTES} bytes"),
            ));
        }
        let path = into.join(&rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        fs::write(&path, &bytes).map_err(|e| io(&path, e))?;
    }
    Ok(())
}

/// A hidden folder beside `target` for this process (`.NAME.TAG-PID`):
/// the catalog skips it, and no other process writes it.
fn beside(target: &Path, tag: &str) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.{tag}-{}", std::process::id()))
}

/// Puts `fresh` (a complete folder beside it) where `target` is, by
/// renames; the old folder, if any, is removed after.
fn swap_in(fresh: &Path, target: &Path) -> Result<(), SharedError> {
    let old = beside(target, "old");
    let had = target.exists();
    if had {
        fs::rename(target, &old).map_err(|e| io(target, e))?;
    }
    if let Err(e) = fs::rename(fresh, target) {
        if had {
            let _ = fs::rename(&old, target);
        }
        return Err(io(target, e));
    }
    if had {
        let _ = fs::remove_dir_all(&old);
    }
    Ok(())
}

/// Sends every skill folder this host changed since it last sent or took
/// it in (a removed folder as a removal). Answers how many were sent.
pub fn publish(paths: &Paths, shared: &dyn SharedState) -> Result<usize, SharedError> {
    let _lock = lock(paths)?;
    let mut seen = load_seen(paths);
    let local = local_skills(paths);
    let mut sent = 0;
    let mut changes: Vec<(String, Option<PathBuf>)> = local
        .iter()
        .map(|(doc, dir)| (doc.clone(), Some(dir.clone())))
        .collect();
    changes.extend(
        seen.iter()
            .filter(|(doc, s)| !local.contains_key(*doc) && !s.signature.is_empty())
            .map(|(doc, _)| (doc.clone(), None)),
    );
    for (doc, dir) in changes {
        let (body, signature) = match &dir {
            Some(dir) => {
                let files = files(dir);
                let signature = signature(&files);
                if seen.get(&doc).is_some_and(|s| s.signature == signature) {
                    continue;
                }
                (pack(dir, &files, &doc)?, signature)
            }
            None => (Vec::new(), String::new()),
        };
        let mut body = Some(body);
        if let Some(version) = shared.update(&doc, &mut |_| body.take())? {
            seen.insert(doc, Seen { version, signature });
            sent += 1;
        }
    }
    if sent > 0 {
        save_seen(paths, &seen)?;
    }
    Ok(sent)
}

/// Takes in every skill another host published since this one last looked,
/// and answers whether any folder changed (the catalog is then reloaded).
pub fn materialize(paths: &Paths, shared: &dyn SharedState) -> Result<bool, SharedError> {
    let docs = shared.list(SKILL_DOC_PREFIX)?;
    let mut seen = load_seen(paths);
    if docs
        .iter()
        .all(|(doc, v)| seen.get(doc).is_some_and(|s| s.version >= *v))
    {
        return Ok(false);
    }
    let _lock = lock(paths)?;
    seen = load_seen(paths);
    let mut changed = false;
    for (doc, version) in docs {
        if seen.get(&doc).is_some_and(|s| s.version >= version) {
            continue;
        }
        let Some(target) = folder_of(paths, &doc) else {
            tracing::warn!("shared skill document `{doc}` names no skill folder; skipped");
            continue;
        };
        let Some(current) = shared.read(&doc)? else {
            continue;
        };
        let signature = if current.body.is_empty() {
            if target.exists() {
                fs::remove_dir_all(&target).map_err(|e| io(&target, e))?;
                changed = true;
            }
            String::new()
        } else {
            let parent = target.parent().unwrap_or(Path::new("."));
            fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            let fresh = beside(&target, "shared");
            let _ = fs::remove_dir_all(&fresh);
            if let Err(e) = unpack(&current.body, &fresh, &doc) {
                // Not asked again until it changes: the skill stays as it
                // is here.
                let _ = fs::remove_dir_all(&fresh);
                tracing::warn!("{e}; the skill is left as it is on this host");
                signature(&files(&target))
            } else {
                swap_in(&fresh, &target)?;
                changed = true;
                signature(&files(&target))
            }
        };
        seen.insert(
            doc,
            Seen {
                version: current.version,
                signature,
            },
        );
        save_seen(paths, &seen)?;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A same-size edit that puts the old modification time back is still
    /// a change to publish.
    #[test]
    fn an_edit_that_keeps_size_and_modification_time_changes_the_signature() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("SKILL.md");
        fs::write(&file, "one").expect("write");
        let before = signature(&files(dir.path()));
        assert_eq!(before, signature(&files(dir.path())), "unchanged, same");
        let mtime = fs::metadata(&file)
            .and_then(|m| m.modified())
            .expect("mtime");
        fs::write(&file, "two").expect("write");
        fs::File::options()
            .write(true)
            .open(&file)
            .and_then(|f| f.set_modified(mtime))
            .expect("set the old mtime");
        let after = files(dir.path());
        assert_eq!(after[0].1.modified().expect("mtime"), mtime);
        assert_eq!(after[0].1.len(), 3);
        assert_ne!(before, signature(&after));
    }
}
