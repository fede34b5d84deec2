//! Lenient SKILL.md parsing: YAML front matter + markdown body, as the
//! ecosystem actually writes them rather than as the spec says they should.
//!
//! A skill is refused only when its front matter cannot be read even after
//! the unquoted-colon repair, or when no description can be found at all.
//! Everything else (spec deviations, odd types, unknown keys) is a warning.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::meta::{read_meta, scalar_string};
use super::model::SkillMeta;
use super::repair::repair;
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
    #[error("front matter is {size} bytes; at most {max} are read")]
    FrontMatterTooLarge { size: usize, max: usize },
    #[error(
        "no description: the front matter has no `description` and the body has no paragraph to use"
    )]
    NoDescription,
}

/// Largest front matter handed to the YAML parser. Real ones are a few
/// kilobytes; the cap keeps a hostile one from costing more than a few
/// milliseconds of parsing.
const MAX_FRONT_MATTER_BYTES: usize = 256 << 10;

/// Longest description taken from the body when the front matter has none.
const MAX_FALLBACK_DESCRIPTION: usize = 1024;

/// Parses one SKILL.md. `folder_name` is the name of the skill's folder: the
/// fallback name, and what the spec wants `name` to equal. Pure and total:
/// arbitrary bytes return an error, never panic.
pub fn parse_skill(bytes: &[u8], folder_name: &str) -> Result<ParsedSkill, ParseError> {
    let mut warnings = Vec::new();
    let text = decode(bytes, &mut warnings);
    let (front, body) = locate_front_matter(&text, &mut warnings)?;
    let has_front = front.is_some();
    let (fm_map, fm_text) = front.unwrap_or_default();
    let fm = &fm_map;

    let name = read_name(fm, has_front, folder_name, &mut warnings);
    let description = read_description(fm, has_front, body, &mut warnings)?;
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

/// Front matter read, with its text, and the body after it.
type Located<'a> = (Option<(Map<String, Value>, &'a str)>, &'a str);

/// The front matter, however the file marks it (or does not), and the body.
fn locate_front_matter<'a>(
    text: &'a str,
    warnings: &mut Vec<String>,
) -> Result<Located<'a>, ParseError> {
    Ok(match split_front_matter(text) {
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
            let fm = read_front_matter(yaml, warnings)?;
            (Some((fm, yaml)), body)
        }
        Split::Unclosed { rest } => unclosed_front_matter(rest, warnings),
    })
}

/// Decision: an opening `---` that is never closed is read as front
/// matter running to the end of the file when that parses as a mapping
/// with a `name` or `description` (exports sometimes lose the closing
/// line, e.g. the whole file is front matter); otherwise the `---` was a
/// markdown rule and the file is read as plain markdown. Either way the
/// skill loads when a description can be found, with a warning.
fn unclosed_front_matter<'a>(rest: &'a str, warnings: &mut Vec<String>) -> Located<'a> {
    let mut unclosed_warnings = Vec::new();
    match read_front_matter(rest, &mut unclosed_warnings) {
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
    }
}

/// The front matter's `description`, else the body's first paragraph
/// (with a warning saying why when there is front matter).
fn read_description(
    fm: &Map<String, Value>,
    has_front: bool,
    body: &str,
    warnings: &mut Vec<String>,
) -> Result<String, ParseError> {
    let other = match fm.get("description").and_then(scalar_string) {
        Some(d) if !d.trim().is_empty() => return Ok(d.trim().to_owned()),
        other => other,
    };
    let d = first_paragraph(body).ok_or(ParseError::NoDescription)?;
    if has_front {
        warnings.push(match other {
            Some(_) => "description is empty: using the first paragraph of the body".to_owned(),
            None if fm.contains_key("description") => {
                "description is not text: using the first paragraph of the body".to_owned()
            }
            None => "no description in the front matter: using the first paragraph of the body"
                .to_owned(),
        });
    }
    Ok(d)
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
    if text.len() > MAX_FRONT_MATTER_BYTES {
        return Err(ParseError::FrontMatterTooLarge {
            size: text.len(),
            max: MAX_FRONT_MATTER_BYTES,
        });
    }
    let mut duplicates = Vec::new();
    let value = yaml_or_repaired(text, &mut duplicates, warnings)?;
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

/// The YAML as JSON; when it does not parse, the repaired text's (with a
/// warning saying so). `duplicates` gets the keys given twice.
fn yaml_or_repaired(
    text: &str,
    duplicates: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Result<Value, ParseError> {
    match yaml::to_json(text, duplicates) {
        Ok(v) => Ok(v),
        Err(first) => {
            let repaired = repair(text).ok_or_else(|| ParseError::InvalidYaml(first.clone()))?;
            duplicates.clear();
            let v = yaml::to_json(&repaired, duplicates)
                .map_err(|_| ParseError::InvalidYaml(first.clone()))?;
            warnings.push(format!(
                "front matter is not valid YAML ({first}); read it after quoting values that contain ': '"
            ));
            Ok(v)
        }
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
        if is_break(t) {
            if !para.is_empty() {
                break;
            }
            fence = opened_fence(t);
            in_comment = t.starts_with("<!--") && !t.contains("-->");
            continue;
        }
        if para.is_empty() && is_decoration(t) {
            continue;
        }
        para.push(t.trim_start_matches('>').trim());
    }
    capped_text(&para)
}

/// A line that ends a paragraph (or comes before one): blank, a heading,
/// a code fence, an HTML comment, a rule.
fn is_break(t: &str) -> bool {
    t.is_empty()
        || t.starts_with('#')
        || t.starts_with("```")
        || t.starts_with("~~~")
        || t.starts_with("<!--")
        || is_rule(t)
}

/// The marker of the code fence `t` opens, if it opens one.
fn opened_fence(t: &str) -> Option<&'static str> {
    ["```", "~~~"].into_iter().find(|m| t.starts_with(m))
}

/// A line that is not prose when it would start a paragraph: a table
/// row, a badge, HTML.
fn is_decoration(t: &str) -> bool {
    t.starts_with('|') || t.starts_with("![") || t.starts_with("[![") || t.starts_with('<')
}

/// The lines joined, whitespace collapsed, cut to the longest fallback
/// description; `None` when empty.
fn capped_text(para: &[&str]) -> Option<String> {
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
    fn oversized_front_matter_is_refused() {
        let src = format!("---\ndescription: d\nx: '{}'\n---\n", "y".repeat(300 << 10));
        let e = parse_skill(src.as_bytes(), "x").expect_err("too large");
        assert!(
            matches!(e, ParseError::FrontMatterTooLarge { max: 262144, .. }),
            "{e}"
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
