//! Lenient SKILL.md parsing: YAML front matter + markdown body, as the
//! ecosystem actually writes them rather than as the spec says they should.
//!
//! A skill is refused only when its front matter cannot be read even after
//! the unquoted-colon repair, or when no description can be found at all.
//! Everything else (spec deviations, odd types, unknown keys) is a warning.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::model::{ContextField, FieldKind, SkillMeta, SkillhostMeta};
use super::yaml;

/// What `parse_skill` makes of one SKILL.md.
#[derive(Debug, Clone)]
pub struct ParsedSkill {
    pub name: String,
    pub description: String,
    /// The markdown after the front matter.
    pub body: String,
    pub meta: SkillMeta,
    /// Non-fatal problems, one sentence each.
    pub warnings: Vec<String>,
}

/// Why a SKILL.md cannot become a skill.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("front matter is not valid YAML (also after quoting values that contain ': '): {0}")]
    InvalidYaml(String),
    #[error("front matter is a {0}, not a mapping of keys to values")]
    NotAMapping(&'static str),
    #[error(
        "no description: the front matter has no `description` and the body has no paragraph to use"
    )]
    NoDescription,
}

/// Longest description taken from the body when the front matter has none.
const MAX_FALLBACK_DESCRIPTION: usize = 1024;

/// Parses one SKILL.md. `folder_name` is the name of the skill's folder: the
/// fallback name, and what the spec wants `name` to equal. Pure and total:
/// arbitrary bytes return an error, never panic.
pub fn parse_skill(bytes: &[u8], folder_name: &str) -> Result<ParsedSkill, ParseError> {
    let mut warnings = Vec::new();
    let text = decode(bytes, &mut warnings);
    let split = split_front_matter(&text);
    let mut unclosed_warnings = Vec::new();

    let (front, body) = match split {
        Split::None { body } => match bare_front_matter(body) {
            // Some exports drop the `---` lines but keep the keys on top.
            Some((fm, yaml, rest)) => {
                warnings.push(
                    "front matter has no `---` lines: read the leading `key: value` block"
                        .to_owned(),
                );
                (Some((fm, yaml)), rest)
            }
            None => {
                warnings.push(
                    "no YAML front matter: name taken from the folder, description from the first paragraph"
                        .to_owned(),
                );
                (None, body)
            }
        },
        Split::Closed { yaml, body } => {
            let fm = read_front_matter(yaml, &mut warnings)?;
            (Some((fm, yaml)), body)
        }
        // Decision: an opening `---` that is never closed is read as front
        // matter running to the end of the file when that parses as a mapping
        // with a `name` or `description` (exports sometimes lose the closing
        // line, e.g. the whole file is front matter); otherwise the
        // `---` was a markdown rule and the file is read as plain markdown.
        // Either way the skill loads when a description can be found, with a
        // warning.
        Split::Unclosed { rest } => match read_front_matter(rest, &mut unclosed_warnings) {
            Ok(fm) if fm.contains_key("description") || fm.contains_key("name") => {
                warnings.append(&mut unclosed_warnings);
                warnings.push(
                    "front matter opened with `---` but never closed: read the rest of the file as front matter"
                        .to_owned(),
                );
                (Some((fm, rest)), "")
            }
            _ => {
                warnings.push(
                    "front matter opened with `---` but never closed: read the file as markdown without front matter"
                        .to_owned(),
                );
                (None, rest)
            }
        },
    };

    let has_front = front.is_some();
    let (fm_map, fm_text) = front.unwrap_or_default();
    let fm = &fm_map;

    let name = read_name(fm, has_front, folder_name, &mut warnings);
    let description = match fm.get("description").and_then(scalar_string) {
        Some(d) if !d.trim().is_empty() => d.trim().to_owned(),
        other => {
            let d = first_paragraph(body).ok_or(ParseError::NoDescription)?;
            if has_front {
                warnings.push(match other {
                    Some(_) => {
                        "description is empty: using the first paragraph of the body".to_owned()
                    }
                    None if fm.contains_key("description") => {
                        "description is not text: using the first paragraph of the body".to_owned()
                    }
                    None => {
                        "no description in the front matter: using the first paragraph of the body"
                            .to_owned()
                    }
                });
            }
            d
        }
    };
    spec_warnings(&name, &description, folder_name, &mut warnings);
    let mut meta = read_meta(fm, fm_text, &mut warnings);
    meta.raw = Value::Object(fm_map);

    Ok(ParsedSkill {
        name,
        description,
        body: body.to_owned(),
        meta,
        warnings,
    })
}

/// UTF-8 with the BOM dropped and line ends normalised to `\n`. Invalid
/// UTF-8 is replaced (and reported) rather than refused: the text around a
/// stray byte is usually fine.
fn decode(bytes: &[u8], warnings: &mut Vec<String>) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(e) => {
            warnings.push(format!(
                "not valid UTF-8 (first bad byte at offset {}): invalid bytes replaced",
                e.valid_up_to()
            ));
            String::from_utf8_lossy(bytes)
        }
    };
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.into_owned()
    }
}

pub(crate) enum Split<'a> {
    None { body: &'a str },
    Closed { yaml: &'a str, body: &'a str },
    Unclosed { rest: &'a str },
}

/// Finds the `---` block, after any leading blank lines. The closing line is
/// `---` or YAML's document end `...`.
pub(crate) fn split_front_matter(text: &str) -> Split<'_> {
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n');
    // Leading blank lines.
    let opening = loop {
        match lines.next() {
            None => return Split::None { body: text },
            Some(line) if line.trim().is_empty() => offset += line.len(),
            Some(line) => break line,
        }
    };
    if opening.trim_end() != "---" {
        return Split::None { body: text };
    }
    let start = offset + opening.len();
    let mut pos = start;
    for line in lines {
        let t = line.trim_end();
        if t == "---" || t == "..." {
            return Split::Closed {
                yaml: &text[start..pos],
                body: &text[pos + line.len()..],
            };
        }
        pos += line.len();
    }
    Split::Unclosed {
        rest: &text[start..],
    }
}

/// Front matter written without `---` lines: the file starts with a
/// `name:` or `description:` key; the block ends at the first markdown
/// heading or `---`. Used only when it parses to a mapping with a
/// `description`.
fn bare_front_matter(text: &str) -> Option<(Map<String, Value>, &str, &str)> {
    let start = text.len() - text.trim_start().len();
    let head = &text[start..];
    if !(head.starts_with("name:") || head.starts_with("description:")) {
        return None;
    }
    let mut end = head.len();
    let mut pos = 0;
    for line in head.split_inclusive('\n') {
        if line.starts_with('#') || line.trim_end() == "---" {
            end = pos;
            break;
        }
        pos += line.len();
    }
    let yaml = &head[..end];
    let fm = read_front_matter(yaml, &mut Vec::new()).ok()?;
    fm.get("description").and_then(scalar_string)?;
    Some((fm, yaml, &head[end..]))
}

/// Parses front matter text into a JSON object, repairing unquoted colons
/// and tab indentation on a second attempt.
fn read_front_matter(
    text: &str,
    warnings: &mut Vec<String>,
) -> Result<Map<String, Value>, ParseError> {
    let mut duplicates = Vec::new();
    let value = match yaml::to_json(text, &mut duplicates) {
        Ok(v) => v,
        Err(first) => {
            let repaired = repair(text).ok_or_else(|| ParseError::InvalidYaml(first.clone()))?;
            duplicates.clear();
            let v = yaml::to_json(&repaired, &mut duplicates)
                .map_err(|_| ParseError::InvalidYaml(first.clone()))?;
            warnings.push(format!(
                "front matter is not valid YAML ({first}); read it after quoting values that contain ': '"
            ));
            v
        }
    };
    for key in duplicates {
        warnings.push(format!(
            "key `{key}` appears twice in one mapping: the last one is used"
        ));
    }
    match value {
        Value::Object(m) => Ok(m),
        Value::Null => {
            warnings.push("front matter is empty".to_owned());
            Ok(Map::new())
        }
        Value::Array(_) => Err(ParseError::NotAMapping("list")),
        Value::String(_) => Err(ParseError::NotAMapping("string")),
        Value::Number(_) => Err(ParseError::NotAMapping("number")),
        Value::Bool(_) => Err(ParseError::NotAMapping("boolean")),
    }
}

/// `key: value` lines whose plain value is not quoted, bracketed or a block
/// scalar header. Group 1: indent (and `- `), 2: key, 3: value.
static KEY_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\s*(?:-\s+)?)([A-Za-z0-9_][A-Za-z0-9_.\-]*|'[^']*'|\x22[^\x22]*\x22)[ \t]*:[ \t]+(\S.*)$")
        .expect("static regex")
});

/// The second attempt: quote plain values that contain `: ` (which YAML
/// reads as a nested mapping), folding their continuation lines the way YAML
/// folds a plain multi-line scalar, and turn tab indentation into spaces.
/// Block scalar contents are left alone. `None` when nothing was changed.
fn repair(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut changed = false;
    let mut block_indent: Option<usize> = None;
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        i += 1;
        let line = detab(raw);
        changed |= matches!(line, Cow::Owned(_));
        let indent = indent_of(&line);
        if let Some(bi) = block_indent {
            if line.trim().is_empty() || indent > bi {
                out.push(line.into_owned());
                continue;
            }
            block_indent = None;
        }
        let Some(caps) = KEY_LINE.captures(&line) else {
            out.push(line.into_owned());
            continue;
        };
        let (prefix, key, value) = (&caps[1], &caps[2], caps[3].trim_end());
        let key_indent = prefix.len();
        let first = value.chars().next().unwrap_or(' ');
        if first == '|' || first == '>' {
            block_indent = Some(indent);
            out.push(line.into_owned());
            continue;
        }
        let needs_quotes =
            !matches!(
                first,
                '"' | '\'' | '[' | '{' | '&' | '*' | '!' | '%' | '@' | '`' | '#'
            ) && (value.contains(": ") || value.contains(":\t") || value.ends_with(':'));
        if !needs_quotes {
            out.push(line.into_owned());
            continue;
        }
        // A plain scalar ends at ` #` (a comment) and continues on more
        // indented lines.
        let mut joined = strip_comment(value).to_owned();
        while i < lines.len() {
            let next = detab(lines[i]);
            if next.trim().is_empty()
                || indent_of(&next) <= key_indent
                || next.trim_start().starts_with('#')
            {
                break;
            }
            joined.push(' ');
            joined.push_str(strip_comment(next.trim()));
            i += 1;
        }
        out.push(format!("{prefix}{key}: '{}'", joined.replace('\'', "''")));
        changed = true;
    }
    changed.then(|| out.join("\n"))
}

fn detab(line: &str) -> Cow<'_, str> {
    let lead = line.len() - line.trim_start_matches([' ', '\t']).len();
    if line[..lead].contains('\t') {
        Cow::Owned(format!(
            "{}{}",
            line[..lead].replace('\t', "  "),
            &line[lead..]
        ))
    } else {
        Cow::Borrowed(line)
    }
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn strip_comment(value: &str) -> &str {
    match value.find(" #").or_else(|| value.find("\t#")) {
        Some(i) => value[..i].trim_end(),
        None => value,
    }
}

/// First markdown paragraph of the body: headings, code blocks, HTML
/// comments, rules, tables and badge lines are skipped.
fn first_paragraph(body: &str) -> Option<String> {
    let mut para: Vec<&str> = Vec::new();
    let mut fence: Option<&str> = None;
    let mut in_comment = false;
    for line in body.lines() {
        let t = line.trim();
        if let Some(marker) = fence {
            if t.starts_with(marker) {
                fence = None;
            }
            continue;
        }
        if in_comment {
            in_comment = !t.contains("-->");
            continue;
        }
        let is_break = t.is_empty()
            || t.starts_with('#')
            || t.starts_with("```")
            || t.starts_with("~~~")
            || t.starts_with("<!--")
            || is_rule(t);
        if is_break {
            if !para.is_empty() {
                break;
            }
            if t.starts_with("```") {
                fence = Some("```");
            } else if t.starts_with("~~~") {
                fence = Some("~~~");
            } else if t.starts_with("<!--") {
                in_comment = !t.contains("-->");
            }
            continue;
        }
        if para.is_empty()
            && (t.starts_with('|')
                || t.starts_with("![")
                || t.starts_with("[![")
                || t.starts_with('<'))
        {
            continue;
        }
        para.push(t.trim_start_matches('>').trim());
    }
    let joined = para.join(" ");
    let text = joined.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return None;
    }
    Some(match text.char_indices().nth(MAX_FALLBACK_DESCRIPTION) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text,
    })
}

fn is_rule(t: &str) -> bool {
    let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    compact.len() >= 3
        && (compact.chars().all(|c| c == '-')
            || compact.chars().all(|c| c == '*')
            || compact.chars().all(|c| c == '_'))
}

fn read_name(
    fm: &Map<String, Value>,
    has_front: bool,
    folder: &str,
    warnings: &mut Vec<String>,
) -> String {
    match fm.get("name") {
        Some(v) => match scalar_string(v) {
            Some(n) if !n.trim().is_empty() => n.trim().to_owned(),
            _ => {
                warnings.push(format!(
                    "`name` is empty or not text: using the folder name '{folder}'"
                ));
                folder.to_owned()
            }
        },
        None => {
            if has_front {
                warnings.push(format!(
                    "no `name` in the front matter: using the folder name '{folder}'"
                ));
            }
            folder.to_owned()
        }
    }
}

/// The agentskills.io rules, as warnings: loading never depends on them.
fn spec_warnings(name: &str, description: &str, folder: &str, warnings: &mut Vec<String>) {
    if !is_spec_name(name) {
        warnings.push(format!(
            "name '{name}' does not follow the spec (lowercase letters, digits and single hyphens)"
        ));
    }
    let len = name.chars().count();
    if len > 64 {
        warnings.push(format!("name is {len} characters long; the spec allows 64"));
    }
    if name != folder {
        warnings.push(format!("name '{name}' differs from its folder '{folder}'"));
    }
    let dlen = description.chars().count();
    if dlen > 1024 {
        warnings.push(format!(
            "description is {dlen} characters long; the spec allows 1024"
        ));
    }
}

/// Lowercase letters and digits in groups joined by single hyphens.
pub(crate) fn is_spec_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// The keys skillhost acts on, read where the ecosystem puts them.
fn read_meta(fm: &Map<String, Value>, fm_text: &str, warnings: &mut Vec<String>) -> SkillMeta {
    let metadata = read_metadata_block(fm, warnings);
    // Seed-style keys live in `metadata`, but some skills put them at top level.
    let seed = |key: &str| metadata.get(key).or_else(|| fm.get(key));
    let top = |keys: &[&str]| keys.iter().find_map(|k| fm.get(*k));

    let version = top(&["version"])
        .or_else(|| metadata.get("version"))
        .and_then(|v| match v {
            Value::Number(_) if fm.contains_key("version") => {
                version_literal(fm_text).or_else(|| scalar_string(v))
            }
            _ => scalar_string(v),
        });

    let allowed_tools = match top(&["allowed-tools", "allowed_tools", "allowedTools"]) {
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
    };

    let tags = match seed("tags") {
        Some(Value::String(s)) => split_commas(s),
        Some(v) => list_of_strings(v, "tags", warnings),
        None => Vec::new(),
    };
    let triggers = match seed("triggers") {
        Some(Value::String(s)) if is_regex_trigger(s.trim()) => vec![s.trim().to_owned()],
        Some(Value::String(s)) => split_commas(s),
        Some(v) => list_of_strings(v, "triggers", warnings),
        None => Vec::new(),
    };

    let context_fields = seed("context_fields")
        .map(|v| read_context_fields(v, warnings))
        .unwrap_or_default();

    let skillhost = match metadata.get("skillhost") {
        None | Some(Value::Null) => SkillhostMeta::default(),
        Some(v) => match SkillhostMeta::deserialize(v) {
            Ok(s) => s,
            Err(e) => {
                warnings.push(format!(
                    "metadata.skillhost ignored ({e}): the skill gets no handler, template or capabilities until it is fixed"
                ));
                SkillhostMeta::default()
            }
        },
    };

    SkillMeta {
        version,
        license: top(&["license"]).and_then(scalar_string),
        compatibility: top(&["compatibility"]).and_then(scalar_string),
        tags,
        allowed_tools,
        disable_model_invocation: read_bool(
            top(&["disable-model-invocation", "disable_model_invocation"]),
            "disable-model-invocation",
            false,
            warnings,
        ),
        user_invocable: read_bool(
            top(&["user-invocable", "user_invocable"]),
            "user-invocable",
            true,
            warnings,
        ),
        triggers,
        context_fields,
        output_type: seed("output_type").and_then(scalar_string),
        skillhost,
        // Filled by the caller, which owns the map.
        raw: Value::Null,
    }
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
        Regex::new(r"(?m)^version[ \t]*:[ \t]*([0-9][0-9A-Za-z._+\-]*)[ \t]*(?:#.*)?$")
            .expect("static regex")
    });
    VERSION.captures(fm_text).map(|c| c[1].to_owned())
}

/// Strings, numbers and booleans as text; anything else is not a scalar.
fn scalar_string(v: &Value) -> Option<String> {
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
    let by_comma = {
        let mut depth = 0i32;
        s.chars().any(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            c == ',' && depth <= 0
        })
    };
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

/// `/.../`: a regex trigger.
pub(crate) fn is_regex_trigger(t: &str) -> bool {
    t.len() >= 2 && t.starts_with('/') && t.ends_with('/')
}

/// `context_fields` as a map of field → spec (a mapping, or just the type
/// name), or a list of field names (strings by default).
fn read_context_fields(
    v: &Value,
    warnings: &mut Vec<String>,
) -> std::collections::BTreeMap<String, ContextField> {
    let mut out = std::collections::BTreeMap::new();
    match v {
        Value::Null => {}
        Value::Object(m) => {
            for (name, spec) in m {
                let field = match spec {
                    Value::Null => Ok(ContextField::default()),
                    Value::String(kind) => FieldKind::deserialize(Value::String(
                        kind.trim().to_lowercase(),
                    ))
                    .map(|kind| ContextField {
                        kind,
                        ..ContextField::default()
                    }),
                    other => ContextField::deserialize(other),
                };
                match field {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> ParsedSkill {
        parse_skill(src.as_bytes(), "my-skill").expect("should parse")
    }

    #[test]
    fn plain_front_matter() {
        let p = ok("---\nname: my-skill\ndescription: Does things.\n---\n# Body\n");
        assert_eq!(p.name, "my-skill");
        assert_eq!(p.description, "Does things.");
        assert_eq!(p.body, "# Body\n");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert!(p.meta.user_invocable);
        assert!(!p.meta.disable_model_invocation);
        assert_eq!(p.meta.allowed_tools, None);
    }

    #[test]
    fn crlf_bom_and_leading_blank_lines() {
        let p = ok(
            "\u{feff}\r\n\r\n---\r\nname: my-skill\r\ndescription: CRLF file\r\n---\r\nBody\r\n",
        );
        assert_eq!(p.description, "CRLF file");
        assert_eq!(p.body, "Body\n");
    }

    #[test]
    fn block_scalars_fold_as_yaml_does() {
        let p = ok(
            "---\nname: my-skill\ndescription: >\n  first line\n  second line\n\n  new para\n---\n",
        );
        assert_eq!(p.description, "first line second line\nnew para");
        let p = ok("---\nname: my-skill\ndescription: |\n  keep\n  lines\n---\n");
        assert_eq!(p.description, "keep\nlines");
    }

    #[test]
    fn openclaw_flow_map_with_trailing_commas() {
        let src = "---\nname: my-skill\ndescription: d\nmetadata:\n  {\n    \"openclaw\":\n      {\n        \"emoji\": \"x\",\n        \"requires\": { \"bins\": [\"node\"] },\n      },\n  }\n---\n";
        let p = ok(src);
        assert_eq!(
            p.meta.raw["metadata"]["openclaw"]["requires"]["bins"][0],
            "node"
        );
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
    fn unquoted_colon_is_retried_with_quotes() {
        let p = ok(
            "---\nname: my-skill\ndescription: Use when: (1) things, (2) more # note\n  continued here\nlicense: MIT\n---\n",
        );
        assert_eq!(
            p.description,
            "Use when: (1) things, (2) more continued here"
        );
        assert_eq!(p.meta.license.as_deref(), Some("MIT"));
        assert!(
            p.warnings.iter().any(|w| w.contains("quoting")),
            "{:?}",
            p.warnings
        );
    }

    #[test]
    fn repair_leaves_block_scalars_alone() {
        let src = "description: a: b\nbody: |\n  x: y: z\n";
        let fixed = repair(src).expect("changed");
        assert_eq!(fixed, "description: 'a: b'\nbody: |\n  x: y: z\n");
    }

    #[test]
    fn tab_indentation_is_repaired() {
        let p = ok("---\ndescription: d\nmetadata:\n\ttriggers: [mail]\n---\n");
        assert_eq!(p.meta.triggers, vec!["mail"]);
    }

    #[test]
    fn no_front_matter_uses_folder_and_first_paragraph() {
        let p = ok("# Title\n\n```\ncode\n```\n\nFirst para\nline two.\n\nSecond.\n");
        assert_eq!(p.name, "my-skill");
        assert_eq!(p.description, "First para line two.");
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("no YAML front matter"))
        );
    }

    #[test]
    fn front_matter_without_dashes() {
        let p = ok(
            "\nname: my-skill\ndescription: Bare keys.\nmetadata: {\n\"a\": 1\n}\n\n# Title\n\nBody.\n",
        );
        assert_eq!(p.description, "Bare keys.");
        assert_eq!(p.meta.raw["metadata"]["a"], 1);
        assert_eq!(p.body, "# Title\n\nBody.\n");
        assert!(p.warnings.iter().any(|w| w.contains("no `---` lines")));
        // Prose that merely starts with "name:" is not front matter.
        let p = ok("name: is what this is about: really\n\nMore.\n");
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("no YAML front matter"))
        );
    }

    #[test]
    fn missing_description_falls_back_to_body_or_fails() {
        let p = ok("---\nname: my-skill\n---\nThe body says it.\n");
        assert_eq!(p.description, "The body says it.");
        assert!(p.warnings.iter().any(|w| w.contains("first paragraph")));
        let e =
            parse_skill(b"---\nname: x\n---\n# Only a heading\n", "x").expect_err("no description");
        assert_eq!(e, ParseError::NoDescription);
    }

    #[test]
    fn front_matter_list_or_scalar_is_refused() {
        assert_eq!(
            parse_skill(b"---\n- a\n- b\n---\nbody\n", "x").expect_err("list"),
            ParseError::NotAMapping("list")
        );
        assert_eq!(
            parse_skill(b"---\njust text\n---\nbody\n", "x").expect_err("scalar"),
            ParseError::NotAMapping("string")
        );
    }

    #[test]
    fn unreadable_yaml_is_refused() {
        let e = parse_skill(b"---\nname: [unclosed\n---\nbody\n", "x").expect_err("bad yaml");
        assert!(matches!(e, ParseError::InvalidYaml(_)), "{e}");
        assert!(e.to_string().contains("not valid YAML"));
    }

    #[test]
    fn unclosed_front_matter() {
        // Reads as front matter when the rest is a mapping...
        let p = ok("---\nname: my-skill\ndescription: Never closed.\n");
        assert_eq!(p.description, "Never closed.");
        assert!(p.warnings.iter().any(|w| w.contains("never closed")));
        // ...else as markdown.
        let p = ok("---\n# Heading\n\nA paragraph: with a colon.\n");
        assert_eq!(p.description, "A paragraph: with a colon.");
        assert!(p.warnings.iter().any(|w| w.contains("never closed")));
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
    fn unknown_keys_stay_in_raw() {
        let p = ok("---\ndescription: d\nauthor: me\nmetadata: {emoji: x}\n---\n");
        assert_eq!(p.meta.raw["author"], "me");
        assert_eq!(p.meta.raw["metadata"]["emoji"], "x");
    }

    #[test]
    fn spec_deviations_are_warnings() {
        let p =
            parse_skill(b"---\nname: My_Skill\ndescription: d\n---\n", "folder").expect("loads");
        assert_eq!(p.name, "My_Skill");
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("does not follow the spec"))
        );
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("differs from its folder"))
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_with_a_warning() {
        let p = parse_skill(b"---\ndescription: caf\xe9\n---\n", "x").expect("loads");
        assert_eq!(p.description, "caf\u{fffd}");
        assert!(p.warnings.iter().any(|w| w.contains("UTF-8")));
    }

    #[test]
    fn spec_name_rule() {
        assert!(is_spec_name("a-b-1"));
        assert!(!is_spec_name("a--b"));
        assert!(!is_spec_name("-a"));
        assert!(!is_spec_name("A"));
        assert!(!is_spec_name(""));
    }
}
