//! rustc's own lexer's view of a source (`ra_ap_rustc_lexer`, rustc's
//! `rustc_lexer` as rust-analyzer publishes it). The check accepts only a
//! source that it and rustc's lexer read into the same lexemes, so no
//! literal or comment of the check's ends where rustc's does not. Depends
//! on nothing else of skillhost.

use std::ops::Range;

use ra_ap_rustc_lexer::{self as lexer, FrontmatterAllowed, LiteralKind, TokenKind};

/// A lexeme of code: its class (`ident`, `punct`, `literal`, `lifetime`,
/// `doc`, as the check's `CodeToken::class`) and its bytes.
pub type Lexeme = (&'static str, Range<usize>);

/// The macros that read the host at compile time, or say what they read.
const READS: &[&str] = &[
    "include",
    "include_str",
    "include_bytes",
    "env",
    "option_env",
    "compile_error",
    "concat_idents",
    "macro_rules",
];

/// The lexemes of code rustc reads in `source` (whitespace and plain
/// comments left out), or what rustc reads that is not a clean token: a
/// shebang line, a front matter block, an unterminated literal or comment,
/// a reserved prefix.
pub fn rustc_lexemes(source: &str) -> Result<Vec<Lexeme>, (usize, String)> {
    let start = if source.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &source[start..];
    if let Some(n) = lexer::strip_shebang(body) {
        return Err((0, format!("a shebang line of {n} bytes")));
    }
    let mut out = Vec::new();
    let mut at = start;
    for token in lexer::tokenize(body, FrontmatterAllowed::Yes) {
        let range = at..at + token.len as usize;
        at = range.end;
        let class = class(token.kind, &source[range.clone()]).map_err(|e| (range.start, e))?;
        if let Some(class) = class {
            out.push((class, range));
        }
    }
    Ok(out)
}

fn class(kind: TokenKind, text: &str) -> Result<Option<&'static str>, String> {
    use TokenKind as K;
    Ok(Some(match kind {
        K::Whitespace
        | K::LineComment { doc_style: None }
        | K::BlockComment {
            doc_style: None,
            terminated: true,
        } => return Ok(None),
        // proc-macro2 skips all of Unicode's White_Space; rustc reports
        // these as errors, but they end no token differently.
        K::Unknown if text.chars().all(char::is_whitespace) => return Ok(None),
        K::LineComment { .. }
        | K::BlockComment {
            terminated: true, ..
        } => "doc",
        K::Ident | K::RawIdent | K::UnknownPrefix => "ident",
        K::Lifetime {
            starts_with_number: false,
        }
        | K::RawLifetime => "lifetime",
        K::Literal { kind, .. } if terminated(kind) => "literal",
        k if is_punct(&k) => "punct",
        other => return Err(format!("rustc reads {text:?} as {other:?}")),
    }))
}

/// The punctuation tokens proc-macro2 reads the same way.
fn is_punct(kind: &TokenKind) -> bool {
    use TokenKind as K;
    matches!(
        kind,
        K::Semi
            | K::Comma
            | K::Dot
            | K::OpenParen
            | K::CloseParen
            | K::OpenBrace
            | K::CloseBrace
            | K::OpenBracket
            | K::CloseBracket
            | K::At
            | K::Pound
            | K::Tilde
            | K::Question
            | K::Colon
            | K::Dollar
            | K::Eq
            | K::Bang
            | K::Lt
            | K::Gt
            | K::Minus
            | K::And
            | K::Or
            | K::Plus
            | K::Star
            | K::Slash
            | K::Caret
            | K::Percent
    )
}

/// Whether a literal ends where its kind says. A malformed number (`0x`,
/// `1e`) is an error rustc reports later, but it ends like any other.
fn terminated(kind: LiteralKind) -> bool {
    use LiteralKind as L;
    match kind {
        L::Int { .. } | L::Float { .. } => true,
        L::Char { terminated }
        | L::Byte { terminated }
        | L::Str { terminated }
        | L::ByteStr { terminated }
        | L::CStr { terminated } => terminated,
        L::RawStr { n_hashes } | L::RawByteStr { n_hashes } | L::RawCStr { n_hashes } => {
            n_hashes.is_some()
        }
    }
}

/// The check's lexemes, those inside one of rustc's numbers merged into
/// it. rustc reads `1e-` or `0x1.5` as one number where proc-macro2 stops
/// earlier: that leaves the check more to see as code, never less. A
/// number of the check's that runs past rustc's is not merged, and differs.
fn merge_numbers(source: &str, saw: &[Lexeme], rustc: &[Lexeme]) -> Vec<Lexeme> {
    let numbers: Vec<&Range<usize>> = rustc
        .iter()
        .filter(|(c, r)| {
            *c == "literal" && source[r.clone()].starts_with(|c: char| c.is_ascii_digit())
        })
        .map(|(_, r)| r)
        .collect();
    let mut out = Vec::with_capacity(saw.len());
    for (class, range) in saw {
        let at = numbers.partition_point(|n| n.end <= range.start);
        match numbers.get(at) {
            Some(n) if n.start <= range.start && range.end <= n.end => {
                if range.start == n.start && *class == "literal" {
                    out.push(("literal", (*n).clone()));
                }
            }
            _ => out.push((class, range.clone())),
        }
    }
    out
}

/// Where rustc's lexer reads `source` differently from the check's
/// lexemes `saw` (`lexemes`), if it does: the byte and how.
pub fn first_difference(source: &str, saw: &[Lexeme]) -> Option<(usize, String)> {
    let rustc = match rustc_lexemes(source) {
        Ok(l) => l,
        Err(e) => return Some(e),
    };
    let saw = merge_numbers(source, saw, &rustc);
    let k = (0..rustc.len().max(saw.len())).find(|&k| rustc.get(k) != saw.get(k))?;
    let show = |l: Option<&Lexeme>| {
        l.map_or("nothing".to_owned(), |(c, r)| {
            format!("{c} {:?}", &source[r.clone()])
        })
    };
    let at = [rustc.get(k), saw.get(k)]
        .into_iter()
        .flatten()
        .map(|(_, r)| r.start)
        .min()
        .unwrap_or(source.len());
    Some((
        at,
        format!(
            "rustc reads {} where the check reads {}",
            show(rustc.get(k)),
            show(saw.get(k))
        ),
    ))
}

/// The calls of a macro that reads the host (`include_str!`, `env!`,
/// `compile_error!`, ...) rustc's lexer sees in `source`: the oracle the
/// tests and the fuzz target hold an accepted source to.
pub fn read_calls(source: &str) -> Vec<String> {
    let Ok(rustc) = rustc_lexemes(source) else {
        return Vec::new();
    };
    rustc
        .windows(2)
        .filter_map(|w| {
            let name = &source[w[0].1.clone()];
            let name = name.strip_prefix("r#").unwrap_or(name);
            // `name!=` is a comparison: rustc glues `!=` into one token.
            let bang = &source[w[1].1.clone()] == "!" && !source[w[1].1.end..].starts_with('=');
            (w[0].0 == "ident" && bang && READS.contains(&name)).then(|| format!("{name}!"))
        })
        .collect()
}
