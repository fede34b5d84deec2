//! The policy every tool call passes, in order: the operator's global
//! allow/deny → the skill's `allowed-tools` → the skill's trust → the
//! tool's own check against the skill's sandbox grants (see
//! `Tool::authorize`). The first layer that says no decides, and its name
//! is in the error.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{CallContext, Tool};

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

#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub config: ToolsConfig,
}

impl Policy {
    pub fn new(config: ToolsConfig) -> Self {
        Policy { config }
    }

    /// Layers 1-3 (layer 4 is the tool's `authorize`).
    pub fn check(&self, tool: &dyn Tool, cx: &CallContext<'_>) -> Result<(), (Layer, String)> {
        let name = tool.name();
        if self.config.deny.iter().any(|p| matches(p, name)) {
            return Err((Layer::Global, format!("`{name}` is denied by the operator")));
        }
        if !self.config.allow.iter().any(|p| matches(p, name)) {
            return Err((
                Layer::Global,
                format!("`{name}` is not in the operator's allowed tools"),
            ));
        }
        if let Some(allowed) = &cx.skill.meta.allowed_tools
            && !allowed
                .iter()
                .any(|entry| allowed_tools_entry_covers(entry, name))
        {
            return Err((
                Layer::AllowedTools,
                format!(
                    "skill `{}` does not list `{name}` in allowed-tools",
                    cx.skill.name
                ),
            ));
        }
        if !cx.trusted && !tool.confined() {
            return Err((
                Layer::Trust,
                format!(
                    "skill `{}` is not trusted; until it is granted (`skillhost skills grant {}`) it may only use tools confined to its own files",
                    cx.skill.name, cx.skill.name
                ),
            ));
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
