//! What an install leaves beside the skill: the install record.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::check_name;
use crate::audit::{self, Finding};
use crate::fsutil;
use crate::paths::Paths;

/// What an install leaves beside the skill: where it came from and what
/// the audit found then (`install-records/NAME.json` under the home).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InstallRecord {
    pub name: String,
    /// `Origin` as JSON (`kind` and its fields).
    pub origin: serde_json::Value,
    pub fingerprint: String,
    /// Seconds since the Unix epoch.
    pub installed_at: u64,
    pub audit: RecordedAudit,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedAudit {
    pub findings: Vec<Finding>,
    /// A high finding was let through by `--allow-suspicious`.
    pub allowed_suspicious: bool,
}

/// The install record of skill `name` (see [`InstallRecord`]).
pub fn record_path(paths: &Paths, name: &str) -> PathBuf {
    paths
        .home
        .join("install-records")
        .join(format!("{name}.json"))
}

/// Reads the install record of skill `name`, if there is one.
pub fn read_record(paths: &Paths, name: &str) -> Option<InstallRecord> {
    check_name(name).ok()?;
    let text = fs::read(record_path(paths, name)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Findings one a line: `file:line:col: rule severity: excerpt`.
pub fn list_findings(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| {
            format!(
                "  {}:{}:{}: {} {}: {}",
                audit::escape(&f.file, 200),
                f.line,
                f.column,
                f.rule,
                f.severity,
                f.excerpt
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn write_record(path: &Path, record: &InstallRecord) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let json = serde_json::to_vec_pretty(record).map_err(io::Error::other)?;
    fsutil::write_atomic(path, &json)
}
