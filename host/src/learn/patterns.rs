//! The pattern library: data, not code. Shipped patterns (embedded), then
//! the user's (`$SKILLHOST_HOME/patterns/*.yaml`), then a skill's own
//! (`patterns.yaml` next to its SKILL.md); a later definition of a class
//! overrides an earlier one.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::condition::{Condition, ConditionError, compile_all};
use super::rules::Action;

const SHIPPED: &str = include_str!("../../patterns/shipped.yaml");
const MAX_PATTERN_FILE: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternFile {
    pub patterns: Vec<Pattern>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pattern {
    pub class: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub preventable: bool,
    /// `skill` (default): rules apply to the failing skill; `global`: to all.
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub prevention: Option<Stage>,
    #[serde(default)]
    pub validation: Option<Stage>,
    #[serde(default)]
    pub recovery: Option<Stage>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stage {
    #[serde(default)]
    pub conditions: Vec<Condition>,
    #[serde(default)]
    pub actions: Vec<Action>,
}

#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    #[error("{source_name}: {message}")]
    Invalid {
        source_name: String,
        message: String,
    },
}

/// Patterns by failure class.
#[derive(Debug, Clone, Default)]
pub struct Library {
    by_class: BTreeMap<String, (Pattern, String)>,
}

impl Library {
    /// The shipped patterns only. Parsed and their conditions checked once
    /// per process: the background learning cycle asks for them every
    /// `auto_every` runs, and checking compiles every regex.
    pub fn shipped() -> Result<Library, PatternError> {
        static SHIPPED_LIBRARY: std::sync::LazyLock<Result<Library, String>> =
            std::sync::LazyLock::new(|| {
                let mut lib = Library::default();
                lib.add_text(SHIPPED, "shipped patterns")
                    .map_err(|PatternError::Invalid { message, .. }| message)?;
                Ok(lib)
            });
        SHIPPED_LIBRARY
            .clone()
            .map_err(|message| PatternError::Invalid {
                source_name: "shipped patterns".into(),
                message,
            })
    }

    /// Shipped (unless `shipped` is false), then every `*.yaml` in
    /// `user_dir` (sorted), warnings for files that do not parse.
    pub fn load(user_dir: &Path, shipped: bool) -> (Library, Vec<String>) {
        let mut warnings = Vec::new();
        let mut lib = if shipped {
            Library::shipped().unwrap_or_else(|e| {
                warnings.push(e.to_string());
                Library::default()
            })
        } else {
            Library::default()
        };
        if let Ok(entries) = std::fs::read_dir(user_dir) {
            let mut files: Vec<_> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect();
            files.sort();
            for f in files {
                if let Err(e) = lib.add_file(&f) {
                    warnings.push(e.to_string());
                }
            }
        }
        (lib, warnings)
    }

    pub fn add_file(&mut self, path: &Path) -> Result<(), PatternError> {
        let name = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|e| PatternError::Invalid {
            source_name: name.clone(),
            message: e.to_string(),
        })?;
        if meta.len() > MAX_PATTERN_FILE {
            return Err(PatternError::Invalid {
                source_name: name,
                message: format!("{} bytes, the limit is {MAX_PATTERN_FILE}", meta.len()),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|e| PatternError::Invalid {
            source_name: name.clone(),
            message: e.to_string(),
        })?;
        self.add_text(&text, &name)
    }

    /// Parses and checks (every condition compiles) before adding anything.
    pub fn add_text(&mut self, text: &str, source_name: &str) -> Result<(), PatternError> {
        let invalid = |message: String| PatternError::Invalid {
            source_name: source_name.to_owned(),
            message,
        };
        let file: PatternFile = serde_norway::from_str(text).map_err(|e| invalid(e.to_string()))?;
        for p in &file.patterns {
            for stage in [&p.prevention, &p.validation, &p.recovery]
                .into_iter()
                .flatten()
            {
                compile_all(&stage.conditions)
                    .map_err(|e: ConditionError| invalid(format!("{}: {e}", p.class)))?;
            }
        }
        for p in file.patterns {
            self.by_class
                .insert(p.class.clone(), (p, source_name.to_owned()));
        }
        Ok(())
    }

    pub fn get(&self, class: &str) -> Option<&Pattern> {
        self.by_class.get(class).map(|(p, _)| p)
    }

    pub fn classes(&self) -> impl Iterator<Item = &str> {
        self.by_class.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_patterns_cover_the_email_classes_and_tool_failures() {
        let lib = Library::shipped().expect("shipped patterns parse");
        for class in [
            "TimezoneError",
            "SpamTriggerError",
            "AttachmentError",
            "FormatError",
            "Timeout",
            "RateLimited",
            "InvalidArguments",
        ] {
            assert!(lib.get(class).is_some(), "{class}");
        }
        assert!(!lib.get("FormatError").expect("format").preventable);
        assert!(lib.get("FormatError").expect("format").prevention.is_none());
    }

    #[test]
    fn without_the_shipped_library_only_the_users_patterns_load() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("mine.yaml"),
            "patterns:\n  - class: ToneError\n    description: mine\n",
        )
        .expect("write");
        let (with, _) = Library::load(dir.path(), true);
        assert!(with.get("FormatError").is_some() && with.get("ToneError").is_some());
        let (without, warnings) = Library::load(dir.path(), false);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(without.classes().collect::<Vec<_>>(), ["ToneError"]);
    }

    #[test]
    fn later_files_override_and_bad_files_are_reported() {
        let mut lib = Library::shipped().expect("shipped");
        lib.add_text(
            "patterns:\n  - class: FormatError\n    description: mine\n",
            "user",
        )
        .expect("valid");
        assert_eq!(lib.get("FormatError").expect("format").description, "mine");
        let e = lib
            .add_text("patterns:\n  - class: X\n    prevention:\n      conditions: [{ field: task.description, op: matches, value: \"(\" }]\n", "bad.yaml")
            .expect_err("bad regex");
        assert!(
            e.to_string().contains("bad.yaml") && e.to_string().contains("regex"),
            "{e}"
        );
        assert!(lib.get("X").is_none(), "nothing from a bad file is added");
    }
}
