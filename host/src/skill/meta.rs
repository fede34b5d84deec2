//! The front matter keys skillhost acts on, read leniently and where the
//! ecosystem puts them: seed keys under `metadata` or at top level,
//! list-or-string fields, numbers where text is expected.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::model::{ContextField, FieldKind, SkillMeta, SkillhostMeta};
use crate::types::constant_regex;

/// The keys skillhost acts on, read where the ecosystem puts them.
pub(crate) fn read_meta(
    fm: &Map<String, Value>,
    fm_text: &str,
    warnings: &mut Vec<String>,
) -> SkillMeta {
    let metadata = read_metadata_block(fm, warnings);
    // `triggers`, `context_fields` and `output_type` live in `metadata`, but
    // some skills put them at top level; `tags` and `version` the other way.
    let seed = |key: &str| metadata.get(key).or_else(|| fm.get(key));
    let top = |keys: &[&str]| keys.iter().find_map(|k| fm.get(*k));

    let version = read_version(fm, &metadata, fm_text);
    let allowed_tools = read_allowed_tools(
        top(&["allowed-tools", "allowed_tools", "allowedTools"]),
        warnings,
    );

    let [tags, roles, stages] = [
        &["tags"][..],
        // Roles and stages, as EurekaClaw names them or shorter.
        &["roles", "agent_roles"],
        &["stages", "pipeline_stages"],
    ]
    .map(|keys| read_list(fm, &metadata, keys, warnings));
    let triggers = read_triggers(seed("triggers"), warnings);

    let context_fields = seed("context_fields")
        .map(|v| read_context_fields(v, warnings))
        .unwrap_or_default();

    let skillhost = read_skillhost(metadata.get("skillhost"), warnings);
    let (disable_model_invocation, user_invocable) = read_invocation(&top, warnings);

    SkillMeta {
        version,
        license: top(&["license"]).and_then(scalar_string),
        compatibility: top(&["compatibility"]).and_then(scalar_string),
        tags,
        roles,
        stages,
        allowed_tools,
        disable_model_invocation,
        user_invocable,
        triggers,
        context_fields,
        output_type: seed("output_type").and_then(scalar_string),
        skillhost,
        // Filled by the caller, which owns the map.
        raw: Value::Null,
    }
}

/// A list at top level or in `metadata`, under any of its names `keys`:
/// a list of strings or a comma-separated string.
fn read_list(
    fm: &Map<String, Value>,
    metadata: &Map<String, Value>,
    keys: &[&str],
    warnings: &mut Vec<String>,
) -> Vec<String> {
    let found = keys
        .iter()
        .find_map(|k| fm.get(*k))
        .or_else(|| keys.iter().find_map(|k| metadata.get(*k)));
    match found {
        Some(Value::String(s)) => split_commas(s),
        Some(v) => list_of_strings(v, keys[0], warnings),
        None => Vec::new(),
    }
}

/// `version`, top level first; a number at top level is taken as written
/// (`1.10` stays `1.10`).
fn read_version(
    fm: &Map<String, Value>,
    metadata: &Map<String, Value>,
    fm_text: &str,
) -> Option<String> {
    fm.get("version")
        .or_else(|| metadata.get("version"))
        .and_then(|v| match v {
            Value::Number(_) if fm.contains_key("version") => {
                version_literal(fm_text).or_else(|| scalar_string(v))
            }
            _ => scalar_string(v),
        })
}

/// `allowed-tools` as a list or a space- or comma-separated string.
fn read_allowed_tools(v: Option<&Value>, warnings: &mut Vec<String>) -> Option<Vec<String>> {
    match v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(split_tools(s)),
        Some(v @ Value::Array(_)) => Some(list_of_strings(v, "allowed-tools", warnings)),
        Some(v) => match scalar_string(v) {
            Some(s) => Some(split_tools(&s)),
            None => {
                warnings.push("`allowed-tools` is neither text nor a list: ignored".to_owned());
                None
            }
        },
    }
}

/// `disable-model-invocation` (default false) and `user-invocable`
/// (default true), under either spelling.
fn read_invocation<'a>(
    top: &dyn Fn(&[&str]) -> Option<&'a Value>,
    warnings: &mut Vec<String>,
) -> (bool, bool) {
    let disable = read_bool(
        top(&["disable-model-invocation", "disable_model_invocation"]),
        "disable-model-invocation",
        false,
        warnings,
    );
    let user = read_bool(
        top(&["user-invocable", "user_invocable"]),
        "user-invocable",
        true,
        warnings,
    );
    (disable, user)
}

/// `metadata` as a map. OpenClaw sometimes stores it as a JSON string.
fn read_metadata_block<'a>(
    fm: &'a Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Cow<'a, Map<String, Value>> {
    match fm.get("metadata") {
        None | Some(Value::Null) => Cow::Owned(Map::new()),
        Some(Value::Object(m)) => Cow::Borrowed(m),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Cow::Owned(m),
            _ => {
                warnings.push("`metadata` is text, not a mapping: ignored".to_owned());
                Cow::Owned(Map::new())
            }
        },
        Some(_) => {
            warnings.push("`metadata` is not a mapping: ignored".to_owned());
            Cow::Owned(Map::new())
        }
    }
}

/// The text of a top-level `version:` number as written (`1.10`, not 1.1).
fn version_literal(fm_text: &str) -> Option<String> {
    static VERSION: LazyLock<Regex> = LazyLock::new(|| {
        constant_regex(r"(?m)^version[ \t]*:[ \t]*([0-9][0-9A-Za-z._+\-]*)[ \t]*(?:#.*)?$")
    });
    VERSION.captures(fm_text).map(|c| c[1].to_owned())
}

/// Strings, numbers and booleans as text; anything else is not a scalar.
pub(crate) fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn list_of_strings(v: &Value, key: &str, warnings: &mut Vec<String>) -> Vec<String> {
    match v {
        Value::Null => Vec::new(),
        Value::Array(items) => {
            let out: Vec<String> = items
                .iter()
                .filter_map(scalar_string)
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect();
            if out.len() < items.len() {
                warnings.push(format!("`{key}`: entries that are not text were ignored"));
            }
            out
        }
        other => match scalar_string(other) {
            Some(s) => split_commas(&s),
            None => {
                warnings.push(format!("`{key}` is neither text nor a list: ignored"));
                Vec::new()
            }
        },
    }
}

fn split_commas(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `allowed-tools` as a string: comma-separated (Claude Code) or
/// space-separated (the spec). Parentheses group: `Bash(git status:*)`.
fn split_tools(s: &str) -> Vec<String> {
    let by_comma = has_top_level_comma(s);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        let sep = depth <= 0
            && if by_comma {
                c == ','
            } else {
                c.is_whitespace()
            };
        if sep {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_owned());
            }
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_owned());
    }
    out
}

/// A comma outside parentheses (`Bash(git add, git commit)` has none).
fn has_top_level_comma(s: &str) -> bool {
    let mut depth = 0i32;
    s.chars().any(|c| {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        c == ',' && depth <= 0
    })
}

fn read_bool(v: Option<&Value>, key: &str, default: bool, warnings: &mut Vec<String>) -> bool {
    match v {
        None | Some(Value::Null) => default,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => true,
            "false" | "no" | "off" => false,
            _ => {
                warnings.push(format!("`{key}` is not a boolean ('{s}'): using {default}"));
                default
            }
        },
        Some(_) => {
            warnings.push(format!("`{key}` is not a boolean: using {default}"));
            default
        }
    }
}

/// `triggers`: one regex, a comma-separated text or a list, less those
/// holding a control character.
fn read_triggers(value: Option<&Value>, warnings: &mut Vec<String>) -> Vec<String> {
    let triggers = match value {
        Some(Value::String(s)) if is_regex_trigger(s.trim()) => vec![s.trim().to_owned()],
        Some(Value::String(s)) => split_commas(s),
        Some(v) => list_of_strings(v, "triggers", warnings),
        None => Vec::new(),
    };
    without_control_characters(triggers, warnings)
}

/// `metadata.skillhost`, or the default with a warning when it does not
/// read.
fn read_skillhost(value: Option<&Value>, warnings: &mut Vec<String>) -> SkillhostMeta {
    match value {
        None | Some(Value::Null) => SkillhostMeta::default(),
        Some(v) => SkillhostMeta::deserialize(v).unwrap_or_else(|e| {
            warnings.push(format!(
                "metadata.skillhost ignored ({e}): the skill gets no handler, template or capabilities until it is fixed"
            ));
            SkillhostMeta::default()
        }),
    }
}

/// `triggers` less those holding a control character, which no request
/// holds: in a YAML double-quoted string `\b` is a backspace, so
/// `"/\bmail\b/"` is a regex that never matches. Each one dropped is a
/// warning saying so.
fn without_control_characters(triggers: Vec<String>, warnings: &mut Vec<String>) -> Vec<String> {
    triggers
        .into_iter()
        .filter(|t| match t.chars().find(|c| c.is_control()) {
            None => true,
            Some(c) => {
                warnings.push(format!(
                    "trigger {t:?} ignored: it holds the control character U+{:04X}, which no request holds (in a YAML double-quoted string `\\b` is a backspace: write a regex trigger in single quotes)",
                    u32::from(c)
                ));
                false
            }
        })
        .collect()
}

/// `/.../`: a regex trigger.
pub(crate) fn is_regex_trigger(t: &str) -> bool {
    t.len() >= 2 && t.starts_with('/') && t.ends_with('/')
}

/// `context_fields` as a map of field → spec (a mapping, or just the type
/// name), or a list of field names (strings by default).
fn read_context_fields(v: &Value, warnings: &mut Vec<String>) -> BTreeMap<String, ContextField> {
    let mut out = BTreeMap::new();
    match v {
        Value::Null => {}
        Value::Object(m) => {
            for (name, spec) in m {
                match context_field(spec) {
                    Ok(f) => {
                        out.insert(name.clone(), f);
                    }
                    Err(e) => warnings.push(format!("context field `{name}` ignored: {e}")),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::String(name) => {
                        out.insert(name.clone(), ContextField::default());
                    }
                    _ => warnings.push(
                        "context_fields: an entry that is not a field name was ignored".to_owned(),
                    ),
                }
            }
        }
        _ => warnings.push("`context_fields` is neither a mapping nor a list: ignored".to_owned()),
    }
    out
}

/// A field's spec: nothing (text), a kind's name, or the whole field.
fn context_field(spec: &Value) -> Result<ContextField, serde_json::Error> {
    match spec {
        Value::Null => Ok(ContextField::default()),
        Value::String(kind) => FieldKind::deserialize(Value::String(kind.trim().to_lowercase()))
            .map(|kind| ContextField {
                kind,
                ..ContextField::default()
            }),
        other => ContextField::deserialize(other),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::{ParsedSkill, parse_skill};
    use super::*;

    fn ok(src: &str) -> ParsedSkill {
        parse_skill(src.as_bytes(), "my-skill").expect("should parse")
    }

    #[test]
    fn list_or_string_fields() {
        let p = ok(
            "---\ndescription: d\nallowed-tools: Read, Grep, Bash(git status:*)\ntags: a, b\n---\n",
        );
        assert_eq!(
            p.meta.allowed_tools.as_deref(),
            Some(
                &[
                    "Read".to_owned(),
                    "Grep".into(),
                    "Bash(git status:*)".into()
                ][..]
            )
        );
        assert_eq!(p.meta.tags, vec!["a", "b"]);
        let p = ok("---\ndescription: d\nallowed-tools: Read Bash(infsh *)\ntags: [x, 'y']\n---\n");
        assert_eq!(
            p.meta.allowed_tools.as_deref(),
            Some(&["Read".to_owned(), "Bash(infsh *)".into()][..])
        );
        assert_eq!(p.meta.tags, vec!["x", "y"]);
        let p = ok("---\ndescription: d\nallowed-tools:\n  - Read\n  - Write\n---\n");
        assert_eq!(
            p.meta.allowed_tools,
            Some(vec!["Read".to_owned(), "Write".into()])
        );
    }

    #[test]
    fn a_trigger_with_a_control_character_is_dropped_with_a_warning() {
        // `\b` in double quotes is YAML's backspace: the regex never matches.
        let p = ok("---\ndescription: d\ntriggers: [mail, \"/\\bmail to\\b/\"]\n---\n");
        assert_eq!(p.meta.triggers, vec!["mail"]);
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("U+0008") && w.contains("single quotes")),
            "{:?}",
            p.warnings
        );
        // In single quotes it is the regex's word boundary, kept.
        let p =
            ok("---\nname: my-skill\ndescription: d\ntriggers: [mail, '/\\bmail to\\b/']\n---\n");
        assert_eq!(p.meta.triggers, vec!["mail", "/\\bmail to\\b/"]);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn every_skill_we_ship_parses_without_a_warning() {
        // A warning in a skill of `skills/` (bundled into the binary) is a
        // defect of ours: a trigger dropped, a field ignored.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills");
        let mut seen = 0;
        for entry in std::fs::read_dir(&root).expect("skills/") {
            let dir = entry.expect("skills/ entry").path();
            let Ok(bytes) = std::fs::read(dir.join("SKILL.md")) else {
                continue;
            };
            let folder = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let parsed = parse_skill(&bytes, folder).expect("shipped skill parses");
            assert!(
                parsed.warnings.is_empty(),
                "{}: {:?}",
                dir.display(),
                parsed.warnings
            );
            seen += 1;
        }
        assert!(seen >= 3, "{seen}");
    }

    #[test]
    fn numbers_where_strings_are_expected() {
        let p = ok("---\nname: 2048\ndescription: 42\nversion: 1.10\n---\n");
        assert_eq!(p.name, "2048");
        assert_eq!(p.description, "42");
        assert_eq!(p.meta.version.as_deref(), Some("1.10"));
        let p = ok("---\ndescription: d\nversion: 1.0\n---\n");
        assert_eq!(p.meta.version.as_deref(), Some("1.0"));
        let p = ok("---\ndescription: d\nmetadata:\n  version: \"2.0.0\"\n---\n");
        assert_eq!(p.meta.version.as_deref(), Some("2.0.0"));
    }

    #[test]
    fn seed_keys() {
        let src = "---\nname: email-writer\ndescription: Writes emails.\nmetadata:\n  triggers: [email, write email, '/e-?mail/']\n  context_fields:\n    has_timezone: { type: bool, default: false }\n    tone: string\n  output_type: text\n  skillhost:\n    handler: handler.wasm\n    capabilities:\n      http: [api.example.com]\n    limits: { memory_mb: 32 }\ndisable-model-invocation: true\nuser-invocable: false\n---\n";
        let p = parse_skill(src.as_bytes(), "email-writer").expect("parse");
        assert_eq!(p.meta.triggers, vec!["email", "write email", "/e-?mail/"]);
        let tz = &p.meta.context_fields["has_timezone"];
        assert_eq!(tz.kind, FieldKind::Bool);
        assert_eq!(tz.default, Some(Value::Bool(false)));
        assert_eq!(p.meta.context_fields["tone"].kind, FieldKind::String);
        assert_eq!(p.meta.output_type.as_deref(), Some("text"));
        assert_eq!(p.meta.skillhost.handler.as_deref(), Some("handler.wasm"));
        assert_eq!(p.meta.skillhost.capabilities.http, vec!["api.example.com"]);
        assert_eq!(p.meta.skillhost.limits.memory_mb, Some(32));
        assert!(p.meta.disable_model_invocation);
        assert!(!p.meta.user_invocable);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn bad_skillhost_block_keeps_skill_without_capabilities() {
        let src = "---\ndescription: d\nmetadata:\n  skillhost:\n    handler: h.wasm\n    capabilities: { http: [x.com], root: true }\n---\n";
        let p = ok(src);
        assert_eq!(p.meta.skillhost, SkillhostMeta::default());
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("metadata.skillhost ignored") && w.contains("root")),
            "{:?}",
            p.warnings
        );
    }

    #[test]
    fn metadata_as_json_string_and_top_level_triggers() {
        let p = ok("---\ndescription: d\nmetadata: '{\"triggers\": [\"a\"]}'\n---\n");
        assert_eq!(p.meta.triggers, vec!["a"]);
        let p = ok("---\ndescription: d\ntriggers:\n  - x y\n---\n");
        assert_eq!(p.meta.triggers, vec!["x y"]);
    }

    #[test]
    fn roles_and_stages_under_either_name() {
        let p = ok(
            "---\ndescription: d\nroles: [writer]\nmetadata:\n  pipeline_stages: draft, review\n---\n",
        );
        assert_eq!(p.meta.roles, vec!["writer"]);
        assert_eq!(p.meta.stages, vec!["draft", "review"]);
        let p = ok("---\ndescription: d\nagent_roles: theory\nstages: [proof]\n---\n");
        assert_eq!(p.meta.roles, vec!["theory"]);
        assert_eq!(p.meta.stages, vec!["proof"]);
    }

    #[test]
    fn unknown_keys_stay_in_raw() {
        let p = ok("---\ndescription: d\nauthor: me\nmetadata: {emoji: x}\n---\n");
        assert_eq!(p.meta.raw["author"], "me");
        assert_eq!(p.meta.raw["metadata"]["emoji"], "x");
    }
}
