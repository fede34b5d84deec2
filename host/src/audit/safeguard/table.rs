//! `safeguards.toml`, parsed and checked: the settings that weaken a
//! protection, the severity of their combinations, and the folders and
//! file names the permission check reads.

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use crate::audit::Severity;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    setting: Vec<Setting>,
    #[serde(default)]
    tunnel: Vec<Tunnel>,
    combination: Vec<Combination>,
    permissions: PermissionsSpec,
}

/// One weakening setting: the marks a key path ending with one of `keys`
/// gets when its value is one of the listed kinds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setting {
    pub marks: Vec<String>,
    pub keys: Vec<String>,
    #[serde(default)]
    pub values: Vec<String>,
    #[serde(default)]
    pub empty: bool,
    #[serde(default)]
    pub any_host: bool,
    /// A published port (`8888:8888`, `0.0.0.0:80:80`): Docker and
    /// Compose publish on every interface unless given an address.
    #[serde(default)]
    pub published: bool,
    #[serde(default)]
    pub contains: Vec<String>,
    pub why: String,
    pub source: String,
}

/// A program that forwards a local port to the internet: a line naming
/// `program` (a word) and `needs` (anywhere after it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tunnel {
    pub program: String,
    pub needs: String,
    pub marks: Vec<String>,
    pub source: String,
}

/// The severity of a set of marks found in one unit.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Combination {
    pub marks: Vec<String>,
    pub severity: Severity,
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionsSpec {
    system: Vec<String>,
    scratch: Vec<String>,
    home: Vec<String>,
    shared: Vec<String>,
    secret: Vec<String>,
    public: Vec<String>,
}

/// The permission check's data, compiled.
#[derive(Debug)]
pub struct Permissions {
    pub system: Vec<String>,
    pub scratch: Vec<String>,
    pub home: Vec<String>,
    pub shared: Vec<String>,
    pub secret: Vec<Regex>,
    pub public: Vec<Regex>,
}

/// The whole table.
#[derive(Debug)]
pub struct Table {
    pub settings: Vec<Setting>,
    pub tunnels: Vec<Tunnel>,
    pub combinations: Vec<Combination>,
    pub permissions: Permissions,
}

/// Parses and checks `safeguards.toml`: every source an https URL, every
/// key and value lowercase, every mark of a setting in some combination
/// and every mark of a combination given by some setting.
pub fn parse(text: &str) -> Result<Table, String> {
    let file: TableFile = toml::from_str(text).map_err(|e| e.to_string())?;
    for s in &file.setting {
        check_setting(s)?;
    }
    check_marks(&file.setting, &file.combination)?;
    for t in &file.tunnel {
        let known = t
            .marks
            .iter()
            .all(|m| file.setting.iter().any(|s| s.marks.contains(m)));
        if !t.source.starts_with("https://") || !known || t.marks.is_empty() {
            return Err(format!(
                "tunnel {}: needs known marks and an https source",
                t.program
            ));
        }
    }
    let p = file.permissions;
    let lower = |v: Vec<String>| v.into_iter().map(|s| s.to_lowercase()).collect();
    Ok(Table {
        settings: file.setting,
        tunnels: file.tunnel,
        combinations: file.combination,
        permissions: Permissions {
            system: lower(p.system),
            scratch: lower(p.scratch),
            home: lower(p.home),
            shared: lower(p.shared),
            secret: compile_all(&p.secret)?,
            public: compile_all(&p.public)?,
        },
    })
}

fn check_setting(s: &Setting) -> Result<(), String> {
    let name = s.keys.first().map_or("?", String::as_str);
    if !s.source.starts_with("https://") {
        return Err(format!("setting {name}: the source must be an https URL"));
    }
    let lowercase = |v: &[String]| v.iter().all(|k| k.to_lowercase() == *k);
    if s.keys.is_empty() || !lowercase(&s.keys) || !lowercase(&s.values) {
        return Err(format!("setting {name}: keys and values must be lowercase"));
    }
    if s.values.is_empty() && !s.empty && !s.any_host && !s.published && s.contains.is_empty() {
        return Err(format!("setting {name}: no value makes it weak"));
    }
    if s.marks.is_empty() || s.why.is_empty() {
        return Err(format!("setting {name}: needs marks and a why"));
    }
    Ok(())
}

fn check_marks(settings: &[Setting], combos: &[Combination]) -> Result<(), String> {
    for s in settings {
        for m in &s.marks {
            if !combos.iter().any(|c| c.marks.contains(m)) {
                return Err(format!("mark {m} is in no combination"));
            }
        }
    }
    for c in combos {
        for m in &c.marks {
            if !settings.iter().any(|s| s.marks.contains(m)) {
                return Err(format!("combination mark {m} is given by no setting"));
            }
        }
    }
    Ok(())
}

fn compile_all(patterns: &[String]) -> Result<Vec<Regex>, String> {
    patterns.iter().map(|p| compile(p)).collect()
}

/// A case-insensitive regex of the table or of the scanner.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| format!("bad pattern {pattern:?}: {e}"))
}
