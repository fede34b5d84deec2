//! The skill text audit: what a skill's words ask an agent or a person to
//! do. Most hostile skills have no handler; their SKILL.md does the harm
//! (ClawHavoc's "prerequisites": `curl … | bash`, a base64 blob to paste
//! into Terminal, a password-protected "helper" archive). This reads the
//! text of a skill folder and reports what the rules in `rules.toml` flag.
//!
//! The rules match the text after normalisation (`normalize.rs`), so
//! zero-width characters, fullwidth letters and URL escapes do not hide a
//! command; findings point at the text as written. See docs/audit.md.

mod assembled;
mod cache;
mod flow;
mod fold;
mod hidden;
mod intent;
mod normalize;
mod packages;
mod persist;
mod pickled;
mod prose;
mod quoted;
mod read;
mod rules;
mod safeguard;
mod text_audit;
mod vendors;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use cache::{FindingsCache, key as cache_key};
pub use flow::{FLOW_RULES, FlowRule};
pub use hidden::{HIDDEN_DESCRIPTION, HIDDEN_RULE};
pub use intent::{INTENT_RULES, LEXICON_TOML};
pub use normalize::{Normalized, normalize};
pub use packages::PACKAGES_TOML;
pub use prose::{
    Entry as PhraseEntry, Intent, PROSE_TOML, Table as PhraseTable, table as phrase_table,
};
pub use rules::{RULES_TOML, Rule, RuleSet, decode_blob, rules, spoofed_host};
pub use safeguard::{PERMISSIONS_RULE, SAFEGUARDS_TOML, SETTINGS_RULE};
pub use text_audit::{FOLDED_RULE, audit_text};
pub use vendors::{VENDORS_TOML, vendor_of};

/// `[audit]` in skillhost.toml: the audit at catalog load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditConfig {
    /// Audit skills when the catalog loads (every source but bundled), and
    /// keep a skill with a high finding out of the prompt, retrieval and
    /// the MCP tools. On by default.
    pub enabled: bool,
    /// Skills used despite a high finding, each pinned to the text the
    /// operator read: `name@sha256:HEX` (see [`text_pin`]). A skill whose
    /// text has changed since is held back again; a bare name allows
    /// nothing. Their findings are still shown.
    pub allow: Vec<String>,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            enabled: true,
            allow: Vec::new(),
        }
    }
}

/// How much a finding matters. Only `High` fails `skills audit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        })
    }
}

/// One thing a rule flagged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The rule's id in rules.toml (or `audit-limit`, `symlink-escape`).
    pub rule: String,
    pub severity: Severity,
    /// Relative to the skill folder, `/`-separated.
    pub file: String,
    /// 1-based; the column counts characters.
    pub line: usize,
    pub column: usize,
    /// The flagged text as written, short, with every invisible, control
    /// or bidi character shown as `\u{…}`.
    pub excerpt: String,
}

/// Findings for a file the audit could not read in full: high, since what
/// the audit has not read it cannot vouch for, and padding a payload past
/// a cap is the cheapest way around a reader.
pub const LIMIT_RULE: &str = "audit-limit";
/// Findings for a symbolic link that leads out of the skill folder.
pub const SYMLINK_RULE: &str = "symlink-escape";

/// What the audit of one skill folder found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    pub findings: Vec<Finding>,
    /// Text files read.
    pub files: usize,
    /// Bytes of text read.
    pub bytes: u64,
    /// Files not read: binary formats, symbolic links, over a cap.
    pub skipped: Vec<Skipped>,
    /// The pin of the texts read (see [`text_pin`]): what an `[audit]
    /// allow` entry names.
    #[serde(default)]
    pub pin: String,
}

/// The pin of a skill's audited text, `sha256:` + lowercase hex: SHA-256
/// over each text file the audit read, in the audit's order (SKILL.md
/// first, then the rest by relative path), each as the relative path's
/// length (u64, big-endian), the path, the text's length (u64,
/// big-endian) and the text. Binary files, which the audit does not read,
/// are not part of it.
#[derive(Clone, Debug, Default)]
pub struct Pin(sha2::Sha256);

impl Pin {
    /// Adds one file the audit read.
    pub fn add(&mut self, rel: &str, text: &[u8]) {
        use sha2::Digest as _;
        for part in [rel.as_bytes(), text] {
            self.0.update((part.len() as u64).to_be_bytes());
            self.0.update(part);
        }
    }

    pub fn finish(self) -> String {
        use sha2::Digest as _;
        let mut out = String::from("sha256:");
        for b in self.0.finalize() {
            out.push_str(&format!("{b:02x}"));
        }
        out
    }
}

/// The pin of a skill that is one file, `rel` (its SKILL.md), holding `text`.
pub fn text_pin(rel: &str, text: &str) -> String {
    let mut pin = Pin::default();
    pin.add(rel, text.as_bytes());
    pin.finish()
}

/// An `[audit] allow` entry: `name@sha256:HEX`, or an error that says
/// what is wrong with it.
pub fn parse_allow(entry: &str) -> Result<(&str, &str), String> {
    let Some((name, pin)) = entry.split_once('@') else {
        return Err(format!(
            "`[audit] allow` entry `{entry}` names no pin, so it allows nothing: write `{entry}@sha256:…` with the pin `skillhost skills audit {entry}` prints"
        ));
    };
    let hex = pin.strip_prefix("sha256:").unwrap_or("");
    if hex.len() != 64
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(format!(
            "`[audit] allow` entry `{entry}`: the pin must be `sha256:` and 64 lowercase hex digits"
        ));
    }
    Ok((name, pin))
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Skipped {
    pub file: String,
    pub reason: String,
}

impl Report {
    /// Whether a high-severity finding is among the findings: the answer an
    /// install or a catalog acts on.
    pub fn has_high(&self) -> bool {
        has_high(&self.findings)
    }

    /// The most severe finding's severity.
    pub fn max_severity(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

pub fn has_high(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::High)
}

/// How much of a folder the audit reads.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Bytes read of one file; the rest is not audited (an `audit-limit`
    /// finding says so).
    pub max_file_bytes: u64,
    /// Bytes read over the whole folder.
    pub max_total_bytes: u64,
    /// Files read.
    pub max_files: usize,
    /// Folder depth below the skill folder.
    pub max_depth: usize,
}

/// The caps are high enough that an honest skill (references of a few
/// MiB, a vendored repository's `.git`) is read whole: a file over one is
/// a high finding.
impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 8 << 20,
            max_total_bytes: 64 << 20,
            max_files: 20_000,
            max_depth: 32,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("cannot read skill folder {path}: {source}")]
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} is not a folder")]
    NotAFolder(PathBuf),
}

/// An embedded data file of the audit, parsed. The file is part of the
/// binary and a unit test parses it, so a failure here is a build defect.
fn embedded<T>(file: &str, parsed: Result<T, String>) -> T {
    match parsed {
        Ok(t) => t,
        Err(e) => panic!("host/src/audit/{file}: {e}"),
    }
}

/// Audits a skill folder with the default limits.
pub fn audit_folder(dir: &Path) -> Result<Report, AuditError> {
    audit_folder_with(dir, &Limits::default())
}

/// Audits every text file of a skill folder, SKILL.md first, never leaving
/// the folder: symbolic links are not followed (one that points out of
/// the folder is a finding), binary files are skipped.
pub fn audit_folder_with(dir: &Path, limits: &Limits) -> Result<Report, AuditError> {
    audit_folder_given(dir, None, limits)
}

/// [`audit_folder_with`], with the text of one file already read: a
/// catalog load has SKILL.md in hand and audits that text, not a second
/// read of the file (which could differ from what it parsed).
pub fn audit_folder_given(
    dir: &Path,
    given: Option<(&str, &str)>,
    limits: &Limits,
) -> Result<Report, AuditError> {
    let meta = std::fs::metadata(dir).map_err(|source| AuditError::Folder {
        path: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(AuditError::NotAFolder(dir.to_path_buf()));
    }
    let mut report = Report::default();
    let mut pin = Pin::default();
    if let Some((name, text)) = given {
        pin.add(name, text.as_bytes());
        let cap = limits.max_file_bytes.min(limits.max_total_bytes);
        let read = cut(text, cap as usize);
        report.files += 1;
        report.bytes += read.len() as u64;
        report.findings.extend(audit_text(name, read));
        if read.len() < text.len() {
            report.findings.push(limit_finding(
                name,
                &format!("only the first {cap} bytes were audited"),
            ));
        }
    }
    audit_walked(dir, given, limits, &[], (report, pin))
}

/// What `skills audit ROOT` audits. A folder holding a SKILL.md is one
/// skill. Any other folder is a root: every skill folder below it is
/// audited on its own, and the files of the root outside every skill make
/// one more report (the root's own path), so nothing under it goes unread
/// and no count of skills ends the audit early.
pub fn audit_root(root: &Path, limits: &Limits) -> Result<Vec<(PathBuf, Report)>, AuditError> {
    if holds_skill_md(root) {
        return Ok(vec![(root.to_path_buf(), audit_folder_with(root, limits)?)]);
    }
    let mut skills = Vec::new();
    skill_folders(root, 0, limits.max_depth, &mut skills)?;
    skills.sort();
    let mut out = Vec::with_capacity(skills.len() + 1);
    for dir in &skills {
        out.push((dir.clone(), audit_folder_with(dir, limits)?));
    }
    let start = (Report::default(), Pin::default());
    let rest = audit_walked(root, None, limits, &skills, start)?;
    if skills.is_empty() || rest.files > 0 || !rest.findings.is_empty() {
        out.push((root.to_path_buf(), rest));
    }
    Ok(out)
}

/// Whether `dir` holds a file named SKILL.md (in any case).
fn holds_skill_md(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name()
                .to_string_lossy()
                .eq_ignore_ascii_case("skill.md")
                && e.file_type().is_ok_and(|t| t.is_file())
        })
    })
}

/// The skill folders below `dir` (not `dir` itself), without entering a
/// skill folder or following a symbolic link. Deeper than `max_depth` is
/// left to the walk of the root's rest, which reports it.
fn skill_folders(
    dir: &Path,
    depth: usize,
    max_depth: usize,
    found: &mut Vec<PathBuf>,
) -> Result<(), AuditError> {
    if depth >= max_depth {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|source| AuditError::Folder {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        if holds_skill_md(&path) {
            found.push(path);
        } else {
            skill_folders(&path, depth + 1, max_depth, found)?;
        }
    }
    Ok(())
}

/// Walks `dir` (but the folders in `skip`) and audits what it finds into
/// `report`.
fn audit_walked(
    dir: &Path,
    given: Option<(&str, &str)>,
    limits: &Limits,
    skip: &[PathBuf],
    (mut report, mut pin): (Report, Pin),
) -> Result<Report, AuditError> {
    let mut walker = Walker {
        root: dir,
        limits,
        skip,
        files: Vec::new(),
    };
    walker.walk(dir, 0, &mut report)?;
    let mut files = walker.files;
    // SKILL.md first, then the rest by path: stable output.
    files.sort_by(|a: &(String, PathBuf), b| {
        let top = |s: &str| !s.eq_ignore_ascii_case("skill.md");
        (top(&a.0), &a.0).cmp(&(top(&b.0), &b.0))
    });
    for (rel, path) in files {
        if report.files >= limits.max_files || report.bytes >= limits.max_total_bytes {
            report.findings.push(limit_finding(
                &rel,
                "not audited: the folder is over the audit's file or size cap",
            ));
            report.skipped.push(Skipped {
                file: rel,
                reason: "over the folder cap".into(),
            });
            continue;
        }
        let cap = limits
            .max_file_bytes
            .min(limits.max_total_bytes - report.bytes);
        if given.is_some_and(|(name, _)| name == rel) {
            continue;
        }
        audit_file(&rel, &path, cap, (&mut report, &mut pin));
    }
    report.pin = pin.finish();
    Ok(report)
}

/// Reads and audits one file of the folder into `report`.
/// Audits one file on its own (not the folder it is in), read as a
/// folder's files are, within `limits`' cap for one file.
pub fn audit_lone_file(path: &Path, limits: &Limits) -> Report {
    let rel = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (mut report, mut pin) = (Report::default(), Pin::default());
    let cap = limits.max_file_bytes.min(limits.max_total_bytes);
    audit_file(&rel, path, cap, (&mut report, &mut pin));
    report.pin = pin.finish();
    report
}

fn audit_file(rel: &str, path: &Path, cap: u64, (report, pin): (&mut Report, &mut Pin)) {
    match read::read_file(path, cap) {
        Ok(read::Read::Text { text, truncated }) => {
            pin.add(rel, text.as_bytes());
            report.files += 1;
            report.bytes += text.len() as u64;
            report.findings.extend(audit_text(rel, &text));
            if truncated {
                report.findings.push(limit_finding(
                    rel,
                    &format!("only the first {cap} bytes were audited"),
                ));
            }
        }
        Ok(read::Read::Binary(format)) => report.skipped.push(Skipped {
            file: rel.to_owned(),
            reason: format!("binary ({format})"),
        }),
        Err(e) => {
            tracing::debug!("audit: cannot read {}: {e}", path.display());
            report
                .findings
                .push(limit_finding(rel, &format!("unreadable: {e}")));
            report.skipped.push(Skipped {
                file: rel.to_owned(),
                reason: format!("unreadable: {e}"),
            });
        }
    }
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn limit_finding(file: &str, why: &str) -> Finding {
    Finding {
        rule: LIMIT_RULE.into(),
        severity: Severity::High,
        file: file.into(),
        line: 1,
        column: 1,
        excerpt: escape(why, 160),
    }
}

/// A walk of a folder for the files to audit.
struct Walker<'a> {
    root: &'a Path,
    limits: &'a Limits,
    /// Folders not entered (skills audited on their own).
    skip: &'a [PathBuf],
    files: Vec<(String, PathBuf)>,
}

impl Walker<'_> {
    fn walk(&mut self, dir: &Path, depth: usize, report: &mut Report) -> Result<(), AuditError> {
        let entries = std::fs::read_dir(dir).map_err(|source| AuditError::Folder {
            path: dir.to_path_buf(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| AuditError::Folder {
                path: dir.to_path_buf(),
                source,
            })?;
            self.visit(&entry, depth, report)?;
        }
        Ok(())
    }

    fn visit(
        &mut self,
        entry: &std::fs::DirEntry,
        depth: usize,
        report: &mut Report,
    ) -> Result<(), AuditError> {
        let path = entry.path();
        let rel = path
            .strip_prefix(self.root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        // file_type() of a DirEntry does not follow symbolic links.
        let kind = entry.file_type().map_err(|source| AuditError::Folder {
            path: path.clone(),
            source,
        })?;
        if kind.is_symlink() {
            symlink_found(self.root, &path, rel, report);
        } else if kind.is_dir() && self.skip.contains(&path) {
        } else if kind.is_dir() && depth + 1 > self.limits.max_depth {
            report
                .findings
                .push(limit_finding(&rel, "folder too deep: not audited"));
        } else if kind.is_dir() {
            self.walk(&path, depth + 1, report)?;
        } else if kind.is_file() {
            self.files.push((rel, path));
        } else {
            // A FIFO, socket or device: nothing to read, and a skill has
            // no reason to ship one.
            report
                .findings
                .push(limit_finding(&rel, "not a regular file: not audited"));
        }
        Ok(())
    }
}

/// A symbolic link in the folder: skipped, and a finding when it leads out.
fn symlink_found(root: &Path, path: &Path, rel: String, report: &mut Report) {
    if !link_stays_inside(root, path) {
        report.findings.push(Finding {
            rule: SYMLINK_RULE.into(),
            severity: Severity::Medium,
            file: rel.clone(),
            line: 1,
            column: 1,
            excerpt: escape(
                &format!(
                    "symbolic link to {}",
                    std::fs::read_link(path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default()
                ),
                160,
            ),
        });
    }
    report.skipped.push(Skipped {
        file: rel,
        reason: "symbolic link".into(),
    });
}

fn link_stays_inside(root: &Path, link: &Path) -> bool {
    match (root.canonicalize(), link.canonicalize()) {
        (Ok(r), Ok(t)) => t.starts_with(r),
        // A dangling link reads nothing; where it points is still shown.
        _ => false,
    }
}

/// Line starts of a text, for offsets to line and column.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    fn position(&self, text: &str, at: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= at).max(1);
        let start = self.starts[line - 1];
        let column = text.get(start..at).map_or(1, |s| s.chars().count() + 1);
        (line, column)
    }
}

/// The flagged text, widened a little when short, cut when long, escaped.
fn excerpt(text: &str, start: usize, end: usize) -> String {
    const CONTEXT: usize = 16;
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let ceil = |mut i: usize| {
        while i < text.len() && !text.is_char_boundary(i) {
            i += 1;
        }
        i.min(text.len())
    };
    let (mut s, mut e) = (floor(start.min(text.len())), ceil(end.max(start)));
    if e - s < 24 {
        let line_start = text[..s].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[e..].find('\n').map_or(text.len(), |i| e + i);
        s = floor(s.saturating_sub(CONTEXT).max(line_start));
        e = ceil((e + CONTEXT).min(line_end));
    }
    escape(&text[s..e], 120)
}

/// `text` with control, invisible and bidi characters as `\u{…}` (and
/// newlines as `\n`), cut to `max` characters with `…`.
pub fn escape(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 2));
    for (n, c) in text.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || normalize::is_invisible(c) => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// The severities of `rule`'s findings on `text` read as `file` (tests of
/// the rules' owners share it).
#[cfg(test)]
pub(crate) fn severities_of(rule: &str, file: &str, text: &str) -> Vec<Severity> {
    audit_text(file, text)
        .into_iter()
        .filter(|f| f.rule == rule)
        .map(|f| f.severity)
        .collect()
}

#[cfg(test)]
mod tests;
