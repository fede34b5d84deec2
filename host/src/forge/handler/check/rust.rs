//! The Rust source check: the source as proc-macro2 lexes it (`tokens`),
//! held to rustc's own lexer (`rustc_view`), then every lexeme against the
//! allowlists (`allow`). A macro call must be one the allowlist names;
//! so must an attribute and a derive; nothing may define a macro, declare
//! a module in another file, bring in a crate or rename a name the
//! allowlists trust.

use super::allow;
use super::rustc_view::first_difference;
use super::tokens::{CodeKind, CodeToken, code_tokens, lexemes};
use crate::forge::handler::SourceError;

/// Keywords of every edition: `return !x` is not a macro call. Edition
/// keywords (`async`, `dyn`, `try`, `gen`) are absent: in an edition where
/// they are not keywords they can name a macro.
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof",
    "unsized", "virtual", "yield",
];

type Checked = Result<(), SourceError>;

fn refused(t: &CodeToken, what: impl Into<String>) -> SourceError {
    SourceError::Refused {
        line: t.line,
        what: what.into(),
    }
}

/// Refuses a Rust source that could make the build read the host, or that
/// rustc's lexer reads differently from the check.
pub(super) fn check_rust(source: &str) -> Checked {
    if let Some(at) = source.find('\r') {
        // rustc rewrites `\r\n` before it lexes; neither lexer here does.
        return Err(SourceError::Refused {
            line: line_of(source, at),
            what: "it holds a carriage return; end lines with `\\n` alone".to_owned(),
        });
    }
    let tokens = code_tokens(source)?;
    if let Some((at, how)) = first_difference(source, &lexemes(&tokens)) {
        return Err(SourceError::Refused {
            line: line_of(source, at),
            what: format!("rustc's own lexer reads it differently from the check: {how}"),
        });
    }
    for i in 0..tokens.len() {
        check_token(&tokens, i)?;
    }
    Ok(())
}

fn line_of(source: &str, at: usize) -> usize {
    source[..at.min(source.len())].matches('\n').count() + 1
}

fn check_token(tokens: &[CodeToken], i: usize) -> Checked {
    let t = &tokens[i];
    match &t.kind {
        CodeKind::Ident(name) => check_ident(tokens, i, name),
        CodeKind::Punct { ch: '#', .. } => check_attribute(tokens, i),
        CodeKind::Punct { ch: '$', .. } => Err(refused(
            t,
            "`$` belongs to macro definitions, and a handler may not define macros",
        )),
        _ => Ok(()),
    }
}

fn ident_at(tokens: &[CodeToken], i: usize) -> Option<&str> {
    match tokens.get(i).map(|t| &t.kind) {
        Some(CodeKind::Ident(n)) => Some(n),
        _ => None,
    }
}

fn punct_at(tokens: &[CodeToken], i: usize, ch: char) -> bool {
    matches!(tokens.get(i).map(|t| &t.kind), Some(CodeKind::Punct { ch: c, .. }) if *c == ch)
}

fn joint_at(tokens: &[CodeToken], i: usize, ch: char) -> bool {
    matches!(tokens.get(i).map(|t| &t.kind), Some(CodeKind::Punct { ch: c, joint: true }) if *c == ch)
}

/// `name` without `r#`: the name rustc resolves.
fn unraw(name: &str) -> &str {
    name.strip_prefix("r#").unwrap_or(name)
}

fn check_ident(tokens: &[CodeToken], i: usize, name: &str) -> Checked {
    let t = &tokens[i];
    if !name.is_ascii() {
        return Err(refused(
            t,
            format!("the name `{name}` is not ASCII; a handler's names must be"),
        ));
    }
    match name {
        "macro" => {
            return Err(refused(t, "a handler may not define macros (`macro`)"));
        }
        "mod" if ident_at(tokens, i + 1).is_some() && punct_at(tokens, i + 2, ';') => {
            return Err(refused(
                t,
                format!(
                    "`mod {};` declares a module in another file",
                    ident_at(tokens, i + 1).unwrap_or_default()
                ),
            ));
        }
        "extern" if ident_at(tokens, i + 1) == Some("crate") => {
            return Err(refused(t, "`extern crate` is not allowed"));
        }
        "use" => check_use(tokens, i)?,
        _ => {}
    }
    if is_macro_call(tokens, i, name) {
        check_macro_call(tokens, i)?;
    }
    Ok(())
}

/// `name!` at `i`: a macro call, unless `!` begins `!=`, the name is a
/// keyword (`return !x`) or the name of a lifetime (`break 'a !x`).
fn is_macro_call(tokens: &[CodeToken], i: usize, name: &str) -> bool {
    let bang = punct_at(tokens, i + 1, '!')
        && !(joint_at(tokens, i + 1, '!') && punct_at(tokens, i + 2, '='));
    let keyword = KEYWORDS.contains(&name);
    let lifetime = i > 0 && joint_at(tokens, i - 1, '\'');
    bang && !keyword && !lifetime
}

/// The macro path ending at `i` (`a::b::name`), without `r#`; and whether
/// it starts with `::` (or follows something not a name, `<T>::m`).
fn macro_path(tokens: &[CodeToken], i: usize) -> (Vec<String>, bool) {
    let mut segments = vec![unraw(ident_at(tokens, i).unwrap_or_default()).to_owned()];
    let mut j = i;
    while j >= 2 && punct_at(tokens, j - 1, ':') && joint_at(tokens, j - 2, ':') {
        match j.checked_sub(3).and_then(|k| ident_at(tokens, k)) {
            Some(seg) => {
                segments.push(unraw(seg).to_owned());
                j -= 3;
            }
            None => {
                segments.reverse();
                return (segments, true);
            }
        }
    }
    segments.reverse();
    (segments, false)
}

fn check_macro_call(tokens: &[CodeToken], i: usize) -> Checked {
    let (path, global) = macro_path(tokens, i);
    if path.last().is_some_and(|n| n == "macro_rules") {
        return Err(refused(
            &tokens[i],
            "a handler may not define macros (`macro_rules!`): a macro can assemble attributes and macro calls that no check of the source sees; write the code out",
        ));
    }
    if allow::macro_allowed(&path, global) {
        return Ok(());
    }
    Err(refused(
        &tokens[i],
        format!(
            "it calls `{}{}!`, which is not a macro a handler may use (those are {})",
            if global { "::" } else { "" },
            path.join("::"),
            allow::allowed_macros()
        ),
    ))
}

/// A `use` from `i` to its `;`: no rename to a trusted name, no compiler
/// macro the allowlist lacks, no glob of the standard library (which
/// would bring in its macros unnamed).
fn check_use(tokens: &[CodeToken], i: usize) -> Checked {
    let end = (i + 1..tokens.len())
        .find(|&k| punct_at(tokens, k, ';'))
        .unwrap_or(tokens.len());
    let root = (i + 1..end).find_map(|k| ident_at(tokens, k)).map(unraw);
    for k in i + 1..end {
        let t = &tokens[k];
        if ident_at(tokens, k) == Some("as") {
            let alias = ident_at(tokens, k + 1).map(unraw).unwrap_or_default();
            if !allow::alias_allowed(alias) {
                return Err(refused(
                    t,
                    format!("`use ... as {alias}` renames something to a name the check trusts"),
                ));
            }
        } else if let Some(name) = ident_at(tokens, k).map(unraw)
            && !punct_at(tokens, k + 1, ':')
            && !allow::import_allowed(name)
        {
            return Err(refused(
                t,
                format!("`use` brings in `{name}`, a macro a handler may not use"),
            ));
        } else if punct_at(tokens, k, '*') && root.is_none_or(|r| allow::STD_ROOTS.contains(&r)) {
            return Err(refused(
                t,
                "a glob `use` of the standard library is not allowed: name what it brings in",
            ));
        }
    }
    Ok(())
}

/// A `#` at `i` must begin an attribute (`#[...]`, `#![...]`) the allowlist
/// names.
fn check_attribute(tokens: &[CodeToken], i: usize) -> Checked {
    let open = if punct_at(tokens, i + 1, '!') {
        i + 2
    } else {
        i + 1
    };
    if !matches!(tokens.get(open).map(|t| &t.kind), Some(CodeKind::Open('['))) {
        return Err(refused(
            &tokens[i],
            "a `#` that does not start an attribute a handler may use",
        ));
    }
    let (path, after) = attribute_path(tokens, open + 1);
    let at = tokens.get(open + 1).unwrap_or(&tokens[open]);
    match path.as_slice() {
        [] => Err(refused(
            at,
            "an attribute whose name is not a plain word is not one a handler may use",
        )),
        [name] if name == "derive" => check_derive(tokens, after),
        [name] if allow::RUST_ATTRIBUTES.contains(&name.as_str()) => Ok(()),
        [tool, _, ..] if allow::TOOL_ATTRIBUTES.contains(&tool.as_str()) => Ok(()),
        _ => Err(refused(
            at,
            format!(
                "the attribute `{}` is not one a handler may use",
                path.join("::")
            ),
        )),
    }
}

/// The attribute's path from `start` (as written: `r#path` is not `path`)
/// and the index after it.
fn attribute_path(tokens: &[CodeToken], start: usize) -> (Vec<String>, usize) {
    let mut path = Vec::new();
    let mut k = start;
    while let Some(seg) = ident_at(tokens, k) {
        path.push(seg.to_owned());
        k += 1;
        if !(joint_at(tokens, k, ':') && punct_at(tokens, k + 1, ':')) {
            break;
        }
        k += 2;
    }
    (path, k)
}

/// `derive(A, B)` from its `(` at `k`: each name one the allowlist holds.
fn check_derive(tokens: &[CodeToken], k: usize) -> Checked {
    if !matches!(tokens.get(k).map(|t| &t.kind), Some(CodeKind::Open('('))) {
        return Err(refused(
            &tokens[k - 1],
            "`derive` without a list of derives",
        ));
    }
    let mut j = k + 1;
    loop {
        let t = tokens.get(j).unwrap_or(&tokens[k]);
        match &t.kind {
            CodeKind::Close(')') => return Ok(()),
            CodeKind::Ident(name) if allow::DERIVES.contains(&name.as_str()) => j += 1,
            CodeKind::Punct { ch: ',', .. } => j += 1,
            _ => {
                return Err(refused(
                    t,
                    format!("a handler may derive only {}", allow::DERIVES.join(", ")),
                ));
            }
        }
    }
}
