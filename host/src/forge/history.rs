//! What the forge did to each skill, under `.skillhost/forge/history/NAME/`
//! (the workspace's state folder, whichever root the skill is in, so a
//! user skill's folder gets no files it did not have):
//!
//! - `N.md`: the SKILL.md as it was before change N (N from 1), written
//!   before the change itself, so every version a skill had is kept;
//! - `log.jsonl`: one event a line (created, improved, rejected with the
//!   reason, declined, rolled back, evicted). A line cut short by a crash
//!   is skipped when read.
//!
//! A skill's front matter also carries its audit trail
//! (`metadata.skillhost.history`); this folder is what a rollback restores
//! from.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::writer::{Expect, ForgeLock, SkillWriter};
use super::{ForgeError, check_slug, now_secs};
use crate::skill::{Skill, Source, content_version, parse_skill};

const LOG_FILE: &str = "log.jsonl";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Created,
    Improved,
    /// A proposal that did not pass the writer's checks.
    Rejected,
    /// The model saw nothing to improve, or answered nothing usable.
    Declined,
    RolledBack,
    Evicted,
    /// A handler written by the model passed the gate and was added.
    HandlerAdded,
    /// A handler written by the model was refused, failed to build or
    /// failed the gate on every attempt.
    HandlerRejected,
}

/// One line of `log.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Seconds since the Unix epoch.
    pub at: i64,
    pub kind: EventKind,
    pub reason: String,
    /// Content hash of the SKILL.md before the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
    /// The saved version holding that content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
}

impl Event {
    pub fn new(kind: EventKind, reason: impl Into<String>) -> Self {
        Event {
            at: now_secs(),
            kind,
            reason: reason.into(),
            previous: None,
            version: None,
        }
    }
}

/// A saved version of a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Version {
    pub version: u32,
    /// `sha256:` of its bytes.
    pub hash: String,
    pub bytes: u64,
    /// When it was saved (seconds since the Unix epoch).
    pub saved_at: i64,
}

/// `.skillhost/forge/history/NAME`.
pub fn dir(forge_dir: &Path, name: &str) -> Result<PathBuf, ForgeError> {
    check_slug(name)?;
    Ok(forge_dir.join("history").join(name))
}

/// Saves `bytes` as the skill's next version; answers its number.
pub fn save(
    _lock: &ForgeLock,
    forge_dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<u32, ForgeError> {
    let d = dir(forge_dir, name)?;
    fs::create_dir_all(&d).map_err(ForgeError::io("create", &d))?;
    let next = versions(forge_dir, name)?
        .last()
        .map_or(1, |v| v.version + 1);
    let path = d.join(format!("{next}.md"));
    crate::fsutil::write_atomic(&path, bytes).map_err(ForgeError::io("write", &path))?;
    Ok(next)
}

/// The saved versions, oldest first.
pub fn versions(forge_dir: &Path, name: &str) -> Result<Vec<Version>, ForgeError> {
    let d = dir(forge_dir, name)?;
    let entries = match fs::read_dir(&d) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ForgeError::io("list", &d)(e)),
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(n) = file
            .to_str()
            .and_then(|f| f.strip_suffix(".md"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let path = e.path();
        let bytes = fs::read(&path).map_err(ForgeError::io("read", &path))?;
        let saved_at = e
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64);
        out.push(Version {
            version: n,
            hash: content_version(&bytes),
            bytes: bytes.len() as u64,
            saved_at,
        });
    }
    out.sort_by_key(|v| v.version);
    Ok(out)
}

pub fn read_version(forge_dir: &Path, name: &str, version: u32) -> Result<Vec<u8>, ForgeError> {
    let path = dir(forge_dir, name)?.join(format!("{version}.md"));
    match fs::read(&path) {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ForgeError::UnknownVersion {
            name: name.to_owned(),
            version,
        }),
        Err(e) => Err(ForgeError::io("read", &path)(e)),
    }
}

/// Appends one event to the skill's log.
pub fn append(
    _lock: &ForgeLock,
    forge_dir: &Path,
    name: &str,
    event: &Event,
) -> Result<(), ForgeError> {
    let d = dir(forge_dir, name)?;
    fs::create_dir_all(&d).map_err(ForgeError::io("create", &d))?;
    let path = d.join(LOG_FILE);
    let mut line = serde_json::to_string(event).unwrap_or_default();
    line.push('\n');
    let mut f = crate::fsutil::open_append(&path).map_err(ForgeError::io("open", &path))?;
    f.write_all(line.as_bytes())
        .and_then(|()| f.sync_data())
        .map_err(ForgeError::io("write", &path))
}

/// The skill's events, oldest first.
pub fn events(forge_dir: &Path, name: &str) -> Vec<Event> {
    let Ok(d) = dir(forge_dir, name) else {
        return Vec::new();
    };
    let Ok(text) = fs::read_to_string(d.join(LOG_FILE)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// When the model was last asked to improve the skill.
pub fn last_attempt(forge_dir: &Path, name: &str) -> Option<i64> {
    events(forge_dir, name)
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Improved | EventKind::Rejected | EventKind::Declined
            )
        })
        .map(|e| e.at)
        .max()
}

/// What a rollback did.
#[derive(Debug, Clone, Serialize)]
pub struct Rollback {
    pub skill: String,
    /// The version restored.
    pub restored: u32,
    /// The version the replaced content was saved as.
    pub saved_as: u32,
    pub path: PathBuf,
}

/// Whether the forge may write `skill` at all.
pub fn editable(skill: &Skill) -> Result<(), ForgeError> {
    match skill.source {
        Source::Forged | Source::User | Source::Workspace => Ok(()),
        kind => Err(ForgeError::NotEditable {
            name: skill.name.clone(),
            kind,
        }),
    }
}

/// The latest saved version of `name`.
fn latest_version(forge_dir: &Path, name: &str) -> Result<u32, ForgeError> {
    versions(forge_dir, name)?
        .last()
        .map(|v| v.version)
        .ok_or(ForgeError::UnknownVersion {
            name: name.to_owned(),
            version: 0,
        })
}

/// Restores `version` (default: the newest saved) of `skill`, atomically,
/// after saving what it replaces as a version of its own (so a rollback
/// can be rolled back).
pub fn rollback(
    writer: &SkillWriter,
    skill: &Skill,
    version: Option<u32>,
) -> Result<Rollback, ForgeError> {
    editable(skill)?;
    let lock = writer.lock()?;
    let forge_dir = writer.forge_dir();
    let version = match version {
        Some(v) => v,
        None => latest_version(&forge_dir, &skill.name)?,
    };
    let restored = read_version(&forge_dir, &skill.name, version)?;
    let text = String::from_utf8(restored).map_err(|_| super::Invalid::NotUtf8)?;
    let current = fs::read(&skill.path).map_err(ForgeError::io("read", &skill.path))?;
    let old =
        parse_skill(&current, &skill.name).map_err(|e| super::Invalid::Parse(e.to_string()))?;
    let expect = Expect {
        bounded: false,
        ..Expect::replacing(&old)
    };
    let saved_as = save(&lock, &forge_dir, &skill.name, &current)?;
    writer.replace(&lock, &skill.path, &current, &text, &expect)?;
    let event = Event {
        previous: Some(content_version(&current)),
        version: Some(saved_as),
        ..Event::new(EventKind::RolledBack, format!("restored version {version}"))
    };
    append(&lock, &forge_dir, &skill.name, &event)?;
    tracing::info!(skill = %skill.name, version, saved_as, "forge: rolled back");
    Ok(Rollback {
        skill: skill.name.clone(),
        restored: version,
        saved_as,
        path: skill.path.clone(),
    })
}
