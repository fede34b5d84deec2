//! The SKILL.md's `name` set to the name the skill installs as, so that
//! the catalog, grants and `uninstall` agree on it.

use super::InstallError;
use crate::skill::{ParsedSkill, parse_skill};

/// `md` with its front matter's `name` set to `name`: the `name:` line
/// (and its continuation lines) replaced, or one added after the opening
/// `---`, or a front matter block added. Refused unless the result reads
/// back as the same skill under the new name.
pub(super) fn with_name(
    md: &[u8],
    name: &str,
    fallback: &str,
) -> Result<(Vec<u8>, ParsedSkill), InstallError> {
    let refuse = |why: &str| {
        InstallError::Rename(format!(
            "cannot install the skill as `{name}`: {why}; set `name: {name}` in its SKILL.md instead"
        ))
    };
    let text = std::str::from_utf8(md).map_err(|_| refuse("its SKILL.md is not UTF-8"))?;
    let out = named_text(text, name).map_err(refuse)?;
    let before = parse_skill(md, fallback).map_err(|e| refuse(&e.to_string()))?;
    let after = parse_skill(out.as_bytes(), name).map_err(|e| refuse(&e.to_string()))?;
    if !same_but_name(&before, &after, name) {
        return Err(refuse("its front matter could not be edited safely"));
    }
    Ok((out.into_bytes(), after))
}

type Lines<'a> = std::iter::Peekable<std::str::SplitInclusive<'a, char>>;

/// `text` with `name: "NAME"` in its front matter, or a front matter
/// block of that line added when it has none; `Err` says why not.
fn named_text(text: &str, name: &str) -> Result<String, &'static str> {
    let (bom, text) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let line = format!("name: \"{name}\"");
    let mut lines = text.split_inclusive('\n').peekable();
    let mut out = String::from(bom);
    // Leading blank lines, then the opening `---`.
    while let Some(&l) = lines.peek() {
        if l.trim().is_empty() {
            out.push_str(l);
            lines.next();
            continue;
        }
        if l.trim_end() != "---" {
            break;
        }
        let eol = if l.ends_with("\r\n") { "\r\n" } else { "\n" };
        out.push_str(l);
        lines.next();
        if !replace_name(&mut lines, &mut out, &line, eol) {
            return Err("its front matter is never closed");
        }
        out.extend(lines);
        return Ok(out);
    }
    Ok(format!("{bom}---\n{line}\n---\n{text}"))
}

/// Copies the front matter after its opening line into `out`, up to and
/// including its closing line, with any `name:` (and its continuation
/// lines) dropped and `line` put before the close. False when it never
/// closes.
fn replace_name(lines: &mut Lines<'_>, out: &mut String, line: &str, eol: &str) -> bool {
    while let Some(l) = lines.next() {
        let t = l.trim_end();
        if t == "---" || t == "..." {
            out.push_str(line);
            out.push_str(eol);
            out.push_str(l);
            return true;
        }
        if t.starts_with("name:") {
            // Drop the old value and its continuation lines.
            while lines
                .peek()
                .is_some_and(|n| n.starts_with(' ') || n.starts_with('\t'))
            {
                lines.next();
            }
            continue;
        }
        out.push_str(l);
    }
    false
}

/// Whether `after` is `before` renamed to `name` and nothing else.
fn same_but_name(before: &ParsedSkill, after: &ParsedSkill, name: &str) -> bool {
    let without_name = |v: &serde_json::Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("name");
        }
        v
    };
    after.name == name
        && after.description == before.description
        && after.body == before.body
        && without_name(&after.meta.raw) == without_name(&before.meta.raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renamed(md: &str) -> String {
        let (out, parsed) = with_name(md.as_bytes(), "new-name", "folder").expect("renamed");
        assert_eq!(parsed.name, "new-name");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn the_name_line_is_replaced_and_the_rest_kept() {
        assert_eq!(
            renamed("---\nname: Old Name\ndescription: Does it.\n---\nBody.\n"),
            "---\ndescription: Does it.\nname: \"new-name\"\n---\nBody.\n"
        );
        assert_eq!(
            renamed(
                "\u{feff}---\r\nname: >\r\n  folded\r\n  name\r\ndescription: d\r\n---\r\nB\r\n"
            ),
            "\u{feff}---\r\ndescription: d\r\nname: \"new-name\"\r\n---\r\nB\r\n"
        );
        assert_eq!(
            renamed("---\ndescription: d\n---\n"),
            "---\ndescription: d\nname: \"new-name\"\n---\n"
        );
        assert_eq!(
            renamed("# Title\n\nWhat it does.\n"),
            "---\nname: \"new-name\"\n---\n# Title\n\nWhat it does.\n"
        );
    }

    #[test]
    fn a_rename_that_would_change_the_skill_is_refused() {
        // Front matter without `---` lines: adding a block would turn the
        // keys into body text.
        let e =
            with_name(b"name: x\ndescription: Bare keys.\n\n# T\n", "y", "f").expect_err("refused");
        assert!(e.to_string().contains("set `name: y`"), "{e}");
        let e = with_name(b"---\nname: x\ndescription: d\n", "y", "f").expect_err("unclosed");
        assert!(e.to_string().contains("never closed"), "{e}");
        let e = with_name(b"---\nname: x\ndescription: caf\xe9\n---\n", "y", "f")
            .expect_err("not utf-8");
        assert!(e.to_string().contains("UTF-8"), "{e}");
    }
}
