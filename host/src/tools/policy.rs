//! The policy every tool call passes, in order: the operator's global
//! allow/deny → the skill's `allowed-tools` → the skill's trust → the
//! tool's own check against the skill's sandbox grants (see
//! `Tool::authorize`). The first layer that says no decides, and its name
//! is in the error.

use std::fmt;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::http_fetch::UrlError;
use super::{CallContext, Tool};
use crate::grants::netguard::NetDenied;
use crate::paths::ControlPathDenied;

/// `[tools]` in skillhost.toml.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    /// Tool names or `prefix*` patterns that may be used at all.
    pub allow: Vec<String>,
    /// Tool names or patterns that may never be used (wins over allow).
    pub deny: Vec<String>,
    /// Tools a pipeline step may name.
    pub pipeline_allow: Vec<String>,
    /// Most steps one pipeline may have.
    pub pipeline_max_steps: usize,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            allow: vec!["*".into()],
            deny: Vec::new(),
            pipeline_allow: vec!["*".into()],
            pipeline_max_steps: 20,
        }
    }
}

/// The policy layers, named in denials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Global,
    AllowedTools,
    Trust,
    Grants,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Global => "global tool policy",
            Layer::AllowedTools => "skill's allowed-tools",
            Layer::Trust => "skill trust",
            Layer::Grants => "sandbox grants",
        })
    }
}

/// What a policy layer refused, with the value it refused. Each reason
/// belongs to one layer ([`Denied::layer`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    #[error("`{tool}` is denied by the operator")]
    ByOperator { tool: String },
    #[error("`{tool}` is not in the operator's allowed tools")]
    NotAllowedByOperator { tool: String },
    #[error("skill `{skill}` does not list `{tool}` in allowed-tools")]
    NotInAllowedTools { skill: String, tool: String },
    #[error(
        "skill `{skill}` is not trusted; until it is granted (`skillhost skills grant {skill}`) it may only use tools confined to its own files"
    )]
    Untrusted { skill: String },
    /// A skill-file tool asked for another skill's files.
    #[error(
        "`{tool}` reads only the files of the calling skill `{skill}`, not of skill {}",
        named(.asked)
    )]
    OtherSkill {
        tool: String,
        skill: String,
        asked: Value,
    },
    #[error("`{path}` must be a relative workspace path without `..`")]
    NotRelative { path: String },
    #[error(
        "skill `{skill}` has no {} grant covering `workspace:{path}`",
        if *.write { "write" } else { "read" }
    )]
    NoFileGrant {
        skill: String,
        path: String,
        write: bool,
    },
    /// A granted workspace folder that reaches the host's own paths.
    #[error("file grant `workspace:{dir}` is refused: {reason}")]
    ControlPath {
        dir: String,
        reason: ControlPathDenied,
    },
    /// A URL whose host cannot be checked against the grants; worded as
    /// the argument error it also is.
    #[error("{class}: {0}", class = crate::types::FailureClass::InvalidArguments)]
    Url(UrlError),
    #[error(transparent)]
    Net(#[from] NetDenied),
}

/// A skill name as asked for: a string in backticks, anything else as JSON.
fn named(asked: &Value) -> String {
    asked
        .as_str()
        .map_or_else(|| asked.to_string(), |n| format!("`{n}`"))
}

impl Denied {
    /// The layer that refused.
    pub fn layer(&self) -> Layer {
        match self {
            Denied::ByOperator { .. } | Denied::NotAllowedByOperator { .. } => Layer::Global,
            Denied::NotInAllowedTools { .. } => Layer::AllowedTools,
            Denied::Untrusted { .. } => Layer::Trust,
            Denied::OtherSkill { .. }
            | Denied::NotRelative { .. }
            | Denied::NoFileGrant { .. }
            | Denied::ControlPath { .. }
            | Denied::Url(_)
            | Denied::Net(_) => Layer::Grants,
        }
    }
}

/// A refused tool call, shown as `LAYER: why`; in a pipeline, also which
/// step was refused before any step ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}{}", .reason.layer(), StepNote(.step.as_ref()))]
pub struct Denial {
    pub reason: Denied,
    /// The pipeline step (index and tool) refused before any step ran.
    pub step: Option<(usize, String)>,
}

struct StepNote<'a>(Option<&'a (usize, String)>);

impl fmt::Display for StepNote<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((i, tool)) => write!(f, " (pipeline step {i}, `{tool}`; no step ran)"),
            None => Ok(()),
        }
    }
}

impl From<Denied> for Denial {
    fn from(reason: Denied) -> Self {
        Denial { reason, step: None }
    }
}

/// As its message, the form tool errors have always had on the wire.
impl Serialize for Denial {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub config: ToolsConfig,
}

impl Policy {
    pub fn new(config: ToolsConfig) -> Self {
        Policy { config }
    }

    /// Layers 1-3 (layer 4 is the tool's `authorize`).
    pub fn check(&self, tool: &dyn Tool, cx: &CallContext<'_>) -> Result<(), Denied> {
        let name = tool.name();
        if self.config.deny.iter().any(|p| matches(p, name)) {
            return Err(Denied::ByOperator { tool: name.into() });
        }
        if !self.config.allow.iter().any(|p| matches(p, name)) {
            return Err(Denied::NotAllowedByOperator { tool: name.into() });
        }
        if let Some(allowed) = &cx.skill.meta.allowed_tools
            && !allowed
                .iter()
                .any(|entry| allowed_tools_entry_covers(entry, name))
        {
            return Err(Denied::NotInAllowedTools {
                skill: cx.skill.name.clone(),
                tool: name.into(),
            });
        }
        if !cx.trusted && !tool.confined() {
            return Err(Denied::Untrusted {
                skill: cx.skill.name.clone(),
            });
        }
        Ok(())
    }

    /// Whether a pipeline step may name this tool.
    pub fn pipeline_allows(&self, name: &str) -> bool {
        name != super::pipeline::NAME && self.config.pipeline_allow.iter().any(|p| matches(p, name))
    }
}

/// `*`, an exact name, or `prefix*`.
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// The names other clients use for the same kind of tool, so a skill
/// written for them (`allowed-tools: Read, WebFetch`) keeps its meaning.
fn aliases(name: &str) -> &'static [&'static str] {
    match name {
        "read_skill_file" | "read_file" => &["read"],
        "list_skill_files" => &["glob", "ls", "list"],
        "write_file" => &["write", "edit"],
        "http_fetch" => &["webfetch", "fetch"],
        n if n.starts_with("skill_") => &["skill"],
        _ => &[],
    }
}

/// An `allowed-tools` entry such as `Read`, `Bash(git:*)`, `http_fetch`
/// or `skill_*`. Arguments in parentheses narrow tools we do not have, so
/// they are ignored for matching.
/// Whether the skill's `allowed-tools` names the tool (a missing list
/// names nothing).
pub(super) fn declares(skill: &crate::skill::Skill, tool: &str) -> bool {
    skill
        .meta
        .allowed_tools
        .iter()
        .flatten()
        .any(|entry| allowed_tools_entry_covers(entry, tool))
}

fn allowed_tools_entry_covers(entry: &str, name: &str) -> bool {
    let base = entry.split('(').next().unwrap_or(entry).trim();
    if matches(base, name) {
        return true;
    }
    let lower = base.to_ascii_lowercase();
    aliases(name).contains(&lower.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_and_aliases() {
        assert!(matches("*", "x"));
        assert!(matches("skill_*", "skill_email"));
        assert!(!matches("skill_*", "http_fetch"));
        assert!(allowed_tools_entry_covers("Read", "read_skill_file"));
        assert!(allowed_tools_entry_covers(
            "WebFetch(domain:x.com)",
            "http_fetch"
        ));
        assert!(allowed_tools_entry_covers("http_fetch", "http_fetch"));
        assert!(!allowed_tools_entry_covers("Bash(git:*)", "write_file"));
    }
}
