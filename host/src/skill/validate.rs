//! `skills validate`: the agentskills.io rules, strictly. Loading is
//! lenient; this is for authors who want a skill every client accepts.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::discover::SKILL_FILES;
use super::parse::{Split, is_spec_name, split_front_matter};
use super::yaml;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One rule a skill breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub severity: Severity,
    pub message: String,
}

impl Problem {
    fn error(message: impl Into<String>) -> Self {
        Problem {
            severity: Severity::Error,
            message: message.into(),
        }
    }

    fn warning(message: impl Into<String>) -> Self {
        Problem {
            severity: Severity::Warning,
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity, self.message)
    }
}

/// The top-level keys the spec defines.
pub const SPEC_KEYS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];
/// Largest file `validate_strict` reads.
const MAX_VALIDATE_BYTES: u64 = 16 << 20;

/// Checks a SKILL.md (or a skill folder) against the spec. An empty list
/// means the skill is valid; any `Error` means some client may refuse it.
pub fn validate_strict(path: &Path) -> Vec<Problem> {
    let mut problems = Vec::new();
    let Some((text, folder)) = read_text(path, &mut problems) else {
        return problems;
    };
    let Some(fm) = front_matter(&text, &mut problems) else {
        return problems;
    };
    check_name(fm.get("name"), &folder, &mut problems);
    check_description(fm.get("description"), &mut problems);
    check_optional_fields(&fm, &mut problems);
    for key in fm.keys() {
        if !SPEC_KEYS.contains(&key.as_str()) {
            problems.push(Problem::error(format!(
                "unexpected top-level key `{key}`: the spec allows only {} (put others under `metadata`)",
                SPEC_KEYS.join(", ")
            )));
        }
    }
    problems
}

/// The SKILL.md's text, UTF-8 with LF line ends and no byte order mark,
/// and the name of its folder; None when there is no such text.
fn read_text(path: &Path, problems: &mut Vec<Problem>) -> Option<(String, String)> {
    let (file, folder) = locate(path, problems)?;
    let bytes = match read(&file) {
        Ok(b) => b,
        Err(msg) => {
            problems.push(Problem::error(msg));
            return None;
        }
    };
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) => t,
        Err(e) => {
            problems.push(Problem::error(format!(
                "not valid UTF-8 (first bad byte at offset {})",
                e.valid_up_to()
            )));
            return None;
        }
    };
    if text.starts_with('\u{feff}') {
        problems.push(Problem::warning(
            "starts with a byte order mark, which some parsers reject",
        ));
    }
    let text = text.trim_start_matches('\u{feff}').replace("\r\n", "\n");
    Some((text, folder))
}

/// The front matter as a mapping (duplicate keys are problems too); None
/// when there is none, it is never closed, or it is not a YAML mapping.
fn front_matter(text: &str, problems: &mut Vec<Problem>) -> Option<Map<String, Value>> {
    if !text.starts_with("---") {
        problems.push(Problem::error(
            "the file must start with a `---` line opening the YAML front matter",
        ));
    }
    let yaml_text = match split_front_matter(text) {
        Split::Closed { yaml, .. } => yaml,
        Split::None { .. } => {
            if text.starts_with("---") {
                problems.push(Problem::error("no YAML front matter"));
            }
            return None;
        }
        Split::Unclosed { .. } => {
            problems.push(Problem::error(
                "front matter is never closed with a `---` line",
            ));
            return None;
        }
    };
    yaml_mapping(yaml_text, problems)
}

/// The front matter's YAML as a mapping (empty for none), every key once.
fn yaml_mapping(yaml_text: &str, problems: &mut Vec<Problem>) -> Option<Map<String, Value>> {
    let mut duplicates = Vec::new();
    let fm = match yaml::to_json(yaml_text, &mut duplicates) {
        Ok(Value::Object(m)) => m,
        Ok(Value::Null) => Map::new(),
        Ok(_) => {
            problems.push(Problem::error(
                "front matter is not a mapping of keys to values",
            ));
            return None;
        }
        Err(e) => {
            problems.push(Problem::error(format!(
                "front matter is not valid YAML: {e}"
            )));
            return None;
        }
    };
    for key in duplicates {
        problems.push(Problem::error(format!(
            "key `{key}` appears more than once"
        )));
    }
    Some(fm)
}

/// `license`, `compatibility`, `metadata` and `allowed-tools`: each may be
/// absent, and has a shape when present.
fn check_optional_fields(fm: &Map<String, Value>, problems: &mut Vec<Problem>) {
    match fm.get("license") {
        None | Some(Value::String(_)) => {}
        Some(_) => problems.push(Problem::error("`license` must be a string")),
    }
    match fm.get("compatibility") {
        None => {}
        Some(Value::String(s)) => check_compatibility(s, problems),
        Some(_) => problems.push(Problem::error("`compatibility` must be a string")),
    }
    match fm.get("metadata") {
        None => {}
        Some(Value::Object(m)) => check_metadata(m, problems),
        Some(_) => problems.push(Problem::error("`metadata` must be a mapping")),
    }
    match fm.get("allowed-tools") {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(_)) => problems.push(Problem::warning(
            "`allowed-tools` is a list; the spec expects a space-separated string",
        )),
        Some(_) => problems.push(Problem::error(
            "`allowed-tools` must be a space-separated string",
        )),
    }
}

fn check_compatibility(s: &str, problems: &mut Vec<Problem>) {
    let n = s.chars().count();
    if n == 0 || n > 500 {
        problems.push(Problem::error(format!(
            "`compatibility` is {n} characters; it must be 1-500"
        )));
    }
}

/// The spec expects string values in `metadata`.
fn check_metadata(m: &Map<String, Value>, problems: &mut Vec<Problem>) {
    let nested: Vec<&str> = m
        .iter()
        .filter(|(_, v)| !v.is_string())
        .map(|(k, _)| k.as_str())
        .collect();
    if !nested.is_empty() {
        problems.push(Problem::warning(format!(
            "metadata entries that are not strings: {}; the spec expects string values (other clients may ignore them)",
            nested.join(", ")
        )));
    }
}

/// The SKILL.md to check and the name of its folder.
fn locate(path: &Path, problems: &mut Vec<Problem>) -> Option<(PathBuf, String)> {
    let (file, folder_path) = if path.is_dir() {
        let Some(name) = SKILL_FILES.iter().find(|f| path.join(f).is_file()) else {
            problems.push(Problem::error(format!("no SKILL.md in {}", path.display())));
            return None;
        };
        (path.join(name), path.to_path_buf())
    } else if path.is_file() {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let parent = abs.parent().map(Path::to_path_buf).unwrap_or_default();
        (path.to_path_buf(), parent)
    } else {
        problems.push(Problem::error(format!("{} does not exist", path.display())));
        return None;
    };
    if file.file_name().is_some_and(|n| n != "SKILL.md") {
        problems.push(Problem::warning(
            "the spec names the file `SKILL.md` (upper case)",
        ));
    }
    let abs = std::path::absolute(&folder_path).unwrap_or(folder_path);
    let folder = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some((file, folder))
}

fn read(file: &Path) -> Result<Vec<u8>, String> {
    let f =
        std::fs::File::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut bytes = Vec::new();
    f.take(MAX_VALIDATE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if bytes.len() as u64 > MAX_VALIDATE_BYTES {
        return Err(format!("file is over {MAX_VALIDATE_BYTES} bytes"));
    }
    Ok(bytes)
}

fn check_name(name: Option<&Value>, folder: &str, problems: &mut Vec<Problem>) {
    let name = match name {
        None => return problems.push(Problem::error("`name` is missing")),
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return problems.push(Problem::error("`name` must be a string")),
    };
    let n = name.chars().count();
    if n == 0 || n > 64 {
        problems.push(Problem::error(format!(
            "`name` is {n} characters; it must be 1-64"
        )));
    }
    if n > 0 && !is_spec_name(name) {
        let why = if name.chars().any(|c| c.is_uppercase()) {
            "upper-case letters"
        } else if name.starts_with('-') || name.ends_with('-') {
            "a leading or trailing hyphen"
        } else if name.contains("--") {
            "consecutive hyphens"
        } else {
            "characters other than lowercase letters, digits and hyphens"
        };
        problems.push(Problem::error(format!("`name` '{name}' contains {why}")));
    }
    if name != folder {
        problems.push(Problem::error(format!(
            "`name` '{name}' must match its folder name '{folder}'"
        )));
    }
}

fn check_description(d: Option<&Value>, problems: &mut Vec<Problem>) {
    match d {
        None => problems.push(Problem::error("`description` is missing")),
        Some(Value::String(s)) => {
            let n = s.chars().count();
            if s.trim().is_empty() {
                problems.push(Problem::error("`description` is empty"));
            } else if n > 1024 {
                problems.push(Problem::error(format!(
                    "`description` is {n} characters; it must be 1-1024"
                )));
            }
        }
        Some(_) => problems.push(Problem::error("`description` must be a string")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(folder: &str, text: &str) -> Vec<Problem> {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join(folder);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("SKILL.md"), text).expect("write");
        validate_strict(&dir)
    }

    fn errors(p: &[Problem]) -> Vec<&str> {
        p.iter()
            .filter(|p| p.severity == Severity::Error)
            .map(|p| p.message.as_str())
            .collect()
    }

    #[test]
    fn valid_skill_has_no_problems() {
        let p = check(
            "pdf-tools",
            "---\nname: pdf-tools\ndescription: Works with PDFs.\nlicense: MIT\ncompatibility: Needs python3\nmetadata:\n  author: me\nallowed-tools: Read Bash(python3:*)\n---\nbody\n",
        );
        assert!(p.is_empty(), "{p:?}");
    }

    #[test]
    fn each_rule_is_reported() {
        let long = "x".repeat(1025);
        let p = check(
            "folder",
            &format!(
                "---\nname: Bad--Name\ndescription: {long}\ncompatibility: ''\ntags: [a]\n---\n"
            ),
        );
        let e = errors(&p);
        assert!(e.iter().any(|m| m.contains("upper-case")), "{e:?}");
        assert!(
            e.iter().any(|m| m.contains("must match its folder")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|m| m.contains("`description` is 1025 characters")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|m| m.contains("`compatibility` is 0 characters")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|m| m.contains("unexpected top-level key `tags`")),
            "{e:?}"
        );
        assert_eq!(e.len(), 5, "{e:?}");
    }

    #[test]
    fn missing_front_matter_and_bad_yaml_are_errors() {
        assert!(!errors(&check("x", "# no front matter\n")).is_empty());
        let e = check("x", "---\nname: x\ndescription: a: b\n---\n");
        assert!(
            errors(&e).iter().any(|m| m.contains("not valid YAML")),
            "{e:?}"
        );
        let e = check("x", "---\nname: x\n");
        assert!(
            errors(&e).iter().any(|m| m.contains("never closed")),
            "{e:?}"
        );
    }

    #[test]
    fn nested_metadata_and_list_tools_are_warnings() {
        let p = check(
            "x",
            "---\nname: x\ndescription: d\nmetadata:\n  skillhost: {handler: h.wasm}\nallowed-tools: [Read]\n---\n",
        );
        assert!(errors(&p).is_empty(), "{p:?}");
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(
            p[0].message
                .starts_with("metadata entries that are not strings: skillhost;"),
            "{p:?}"
        );
    }

    #[test]
    fn missing_path() {
        let p = validate_strict(Path::new("/definitely/not/here"));
        assert!(p[0].message.contains("does not exist"));
    }
}
