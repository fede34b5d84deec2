//! The second attempt at front matter YAML cannot read: the ecosystem
//! writes `description: Use when: ...` unquoted, and indents with tabs.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use crate::types::constant_regex;

/// `key: value` lines whose plain value is not quoted, bracketed or a block
/// scalar header. Group 1: indent (and `- `), 2: key, 3: value.
static KEY_LINE: LazyLock<Regex> = LazyLock::new(|| {
    constant_regex(
        r"^(\s*(?:-\s+)?)([A-Za-z0-9_][A-Za-z0-9_.\-]*|'[^']*'|\x22[^\x22]*\x22)[ \t]*:[ \t]+(\S.*)$",
    )
});

/// The second attempt: quote plain values that contain `: ` (which YAML
/// reads as a nested mapping), folding their continuation lines the way YAML
/// folds a plain multi-line scalar, and turn tab indentation into spaces.
/// Block scalar contents are left alone. `None` when nothing was changed.
pub(crate) fn repair(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut changed = false;
    let mut block_indent: Option<usize> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = detab(lines[i]);
        i += 1;
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
        let block_scalar = first == '|' || first == '>';
        if block_scalar {
            block_indent = Some(indent);
        }
        if block_scalar || !needs_quotes(first, value) {
            out.push(line.into_owned());
            continue;
        }
        let joined = plain_scalar(value, &lines, &mut i, key_indent);
        out.push(format!("{prefix}{key}: '{}'", joined.replace('\'', "''")));
        changed = true;
    }
    changed.then(|| out.join("\n"))
}

/// A plain value YAML would misread as a mapping: it holds `: ` (or
/// ends with `:`) and does not start as a quoted, flow, anchor, alias,
/// tag or reserved value does.
fn needs_quotes(first: char, value: &str) -> bool {
    !matches!(
        first,
        '"' | '\'' | '[' | '{' | '&' | '*' | '!' | '%' | '@' | '`' | '#'
    ) && (value.contains(": ") || value.contains(":\t") || value.ends_with(':'))
}

/// The plain scalar starting with `value`, its continuation lines (from
/// `lines[*i]` on, more indented than `key_indent`) folded in with
/// spaces; `*i` moves past them. A plain scalar ends at ` #` (a comment).
fn plain_scalar(value: &str, lines: &[&str], i: &mut usize, key_indent: usize) -> String {
    let mut joined = strip_comment(value).to_owned();
    while *i < lines.len() {
        let next = detab(lines[*i]);
        if next.trim().is_empty()
            || indent_of(&next) <= key_indent
            || next.trim_start().starts_with('#')
        {
            break;
        }
        joined.push(' ');
        joined.push_str(strip_comment(next.trim()));
        *i += 1;
    }
    joined
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repair_leaves_block_scalars_alone() {
        let src = "description: a: b\nbody: |\n  x: y: z\n";
        let fixed = repair(src).expect("changed");
        assert_eq!(fixed, "description: 'a: b'\nbody: |\n  x: y: z\n");
    }
}
