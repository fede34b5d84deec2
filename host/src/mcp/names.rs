//! Which skills become MCP tools, under which names, with which input
//! schema. MCP clients accept tool names matching `^[a-zA-Z0-9_-]{1,64}$`,
//! while skill names come from folders and front matter written by anyone,
//! so the mapping is lossy; the table keeps the way back.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::skill::{Catalog, Skill, skeleton};

/// Longest tool name MCP clients accept.
pub const MAX_TOOL_NAME: usize = 64;
/// Prefix of every skill tool, so skills never shadow the fixed tools.
pub const SKILL_TOOL_PREFIX: &str = "skill_";

/// Whether a skill answers without a model: it has a handler, a declared
/// pipeline or a template. Only these are tools; a skill that would need a
/// model to do anything is better read (`read_skill`, prompts) by the
/// client's own model.
pub fn runs_without_model(skill: &Skill) -> bool {
    let s = &skill.meta.skillhost;
    s.handler.is_some() || s.pipeline.is_some() || s.template.is_some()
}

/// Whether `name` is a valid MCP tool name.
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `skill_<name>` when that is a valid tool name and free; otherwise the
/// name with every other character replaced by `_`, shortened, and made
/// unique with a hash of the real skill name (so two skills that sanitize
/// alike still get distinct, stable names). `taken` holds the
/// [`skeleton`]s of the names given out: a name is free when no name
/// given out looks like it (`skill_a_b-1f2e` and `skill_a-b-1f2e` are one).
pub fn tool_name(skill: &str, taken: &HashSet<String>) -> String {
    let is_taken = |name: &str| taken.contains(&skeleton(name));
    let plain = format!("{SKILL_TOOL_PREFIX}{skill}");
    if is_valid_tool_name(&plain) && !is_taken(&plain) {
        return plain;
    }
    let sanitized: String = plain
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let digest = Sha256::digest(skill.as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    // `sanitized` is ASCII, so byte truncation is safe.
    let keep = MAX_TOOL_NAME - hash.len() - 1;
    let stem = &sanitized[..sanitized.len().min(keep)];
    let mut name = format!("{stem}-{hash}");
    let mut n = 2u32;
    while is_taken(&name) {
        let suffix = format!("-{hash}{n}");
        let stem = &sanitized[..sanitized.len().min(MAX_TOOL_NAME - suffix.len())];
        name = format!("{stem}{suffix}");
        n += 1;
    }
    name
}

/// The JSON Schema of a skill tool's arguments: the task text plus the
/// skill's declared context fields (required when declared required
/// without a default). Mirrors the schema the model loop's `skill_*` tools
/// use, so a skill looks the same to every caller.
pub fn input_schema(skill: &Skill) -> Map<String, Value> {
    // One schema for every caller: the same as the `skill_<name>` tool's.
    match crate::tools::skill_parameters(skill) {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Tool name → skill name, for every skill that runs without a model.
/// Built once per server from the catalog, in catalog order with every
/// installed skill after the others (so a skill this machine keeps gets
/// its plain name before a look-alike tool name can), so names are stable
/// across restarts of the same catalog.
#[derive(Debug, Default, Clone)]
pub struct ToolTable {
    by_tool: BTreeMap<String, String>,
    by_skill: BTreeMap<String, String>,
}

impl ToolTable {
    pub fn new(catalog: &Catalog) -> Self {
        let mut table = ToolTable::default();
        let mut taken: HashSet<String> = HashSet::new();
        // A skill the audit holds back is no tool (see `Catalog::held_back`).
        let tools = catalog.offered().filter(|s| runs_without_model(s));
        let (foreign, kept): (Vec<&Skill>, Vec<&Skill>) =
            tools.partition(|s| s.source.is_foreign());
        for skill in kept.into_iter().chain(foreign) {
            let name = tool_name(&skill.name, &taken);
            taken.insert(skeleton(&name));
            table.by_tool.insert(name.clone(), skill.name.clone());
            table.by_skill.insert(skill.name.clone(), name);
        }
        table
    }

    /// The skill behind a tool name.
    pub fn skill(&self, tool: &str) -> Option<&str> {
        self.by_tool.get(tool).map(String::as_str)
    }

    /// The tool name of a skill, if it is a tool.
    pub fn tool(&self, skill: &str) -> Option<&str> {
        self.by_skill.get(skill).map(String::as_str)
    }

    /// (tool name, skill name) pairs, ordered by tool name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.by_tool.iter().map(|(t, s)| (t.as_str(), s.as_str()))
    }

    pub fn len(&self) -> usize {
        self.by_tool.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_tool.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_keep_the_skill_name() {
        let taken = HashSet::new();
        assert_eq!(tool_name("email-writer", &taken), "skill_email-writer");
        assert_eq!(tool_name("a_b-9", &taken), "skill_a_b-9");
    }

    #[test]
    fn odd_names_become_valid_distinct_names() {
        let taken = HashSet::new();
        let a = tool_name("pdf tools/v2", &taken);
        let b = tool_name("pdf tools:v2", &taken);
        let long = tool_name(&"x".repeat(200), &taken);
        let unicode = tool_name("résumé", &taken);
        for n in [&a, &b, &long, &unicode] {
            assert!(is_valid_tool_name(n), "{n} is not a valid tool name");
            assert!(n.starts_with(SKILL_TOOL_PREFIX), "{n}");
        }
        assert_ne!(a, b, "names that sanitize alike must stay distinct");
        assert!(long.len() <= MAX_TOOL_NAME);
        // Stable: the same skill gets the same name next time.
        assert_eq!(a, tool_name("pdf tools/v2", &taken));
    }

    #[test]
    fn a_taken_name_is_not_reused() {
        let mut taken = HashSet::new();
        let first = tool_name("a.b", &taken);
        taken.insert(skeleton(&first));
        let second = tool_name("a.b", &taken);
        assert_ne!(first, second);
        assert!(is_valid_tool_name(&second));
    }

    #[test]
    fn a_look_alike_of_a_name_given_out_is_taken() {
        // `a.b` becomes `skill_a_b-HASH`; a skill named `a-b-HASH` would
        // be `skill_a-b-HASH`, its look-alike, were that name free.
        let mut taken = HashSet::new();
        let first = tool_name("a.b", &taken);
        taken.insert(skeleton(&first));
        let squatter = first.replacen("skill_a_b", "a-b", 1);
        let second = tool_name(&squatter, &taken);
        assert_ne!(skeleton(&second), skeleton(&first), "{first} {second}");
        // And the plain name of a look-alike skill is not given out either.
        taken.insert(skeleton("skill_email-writer"));
        assert_ne!(tool_name("email_writer", &taken), "skill_email_writer");
    }

    fn tool_skill(name: &str, source: crate::skill::Source) -> Skill {
        let mut meta = crate::skill::SkillMeta::default();
        meta.skillhost.template = Some("{{task}}".into());
        Skill {
            name: name.into(),
            description: "d".into(),
            body: String::new(),
            dir: format!("/s/{name}").into(),
            path: format!("/s/{name}/SKILL.md").into(),
            version: "sha256:0".into(),
            source,
            warnings: Vec::new(),
            meta,
        }
    }

    #[test]
    fn a_skill_of_this_machine_gets_its_name_before_an_installed_look_alike() {
        use crate::skill::Source;
        // `a.b` becomes `skill_a_b-HASH`; an installed `a-b-HASH` sorts
        // first and would take `skill_a-b-HASH`, which looks the same.
        let wanted = tool_name("a.b", &HashSet::new());
        let squatter = wanted.replacen("skill_a_b", "a-b", 1);
        let catalog = Catalog::from_skills(vec![
            tool_skill(&squatter, Source::Installed),
            tool_skill("a.b", Source::Bundled),
        ]);
        let table = ToolTable::new(&catalog);
        assert_eq!(table.tool("a.b"), Some(wanted.as_str()));
        let other = table.tool(&squatter).expect("still a tool");
        assert_ne!(skeleton(other), skeleton(&wanted), "{other}");
    }

    #[test]
    fn invalid_names_are_rejected() {
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("a b"));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
        assert!(is_valid_tool_name(&"a".repeat(64)));
    }
}
