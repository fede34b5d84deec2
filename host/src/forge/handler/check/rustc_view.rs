//! rustc's own lexer's view of a source (`ra_ap_rustc_lexer`, rustc's
//! `rustc_lexer` as rust-analyzer publishes it): the oracle the source
//! check's tokens are held to, by the unit tests and by the fuzz target
//! `rust_source_check` (fuzz/harness.rs includes this file). Depends on
//! nothing of skillhost.

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
pub fn rustc_lexemes(source: &str) -> Result<Vec<Lexeme>, String> {
    let start = if source.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &source[start..];
    if let Some(n) = lexer::strip_shebang(body) {
        return Err(format!("a shebang line of {n} bytes"));
    }
    let mut out = Vec::new();
    let mut at = start;
    for token in lexer::tokenize(body, FrontmatterAllowed::Yes) {
        let range = at..at + token.len as usize;
        at = range.end;
        if let Some(class) = class(token.kind, &source[range.clone()])? {
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
        | K::Percent => "punct",
        other => return Err(format!("rustc reads {text:?} as {other:?}")),
    }))
}

fn terminated(kind: LiteralKind) -> bool {
    use LiteralKind as L;
    match kind {
        L::Int { empty_int, .. } => !empty_int,
        L::Float { empty_exponent, .. } => !empty_exponent,
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

/// Where the check's view of `source` and rustc's differ in a way that
/// matters, if they do. A source the check `accepted` must be one rustc
/// reads cleanly into exactly the lexemes the check `saw` (every literal
/// and comment ending where rustc ends it), and in which rustc sees no call
/// of a macro that reads the host.
pub fn disagreement(source: &str, accepted: bool, saw: Option<&[Lexeme]>) -> Option<String> {
    if !accepted {
        return None;
    }
    let rustc = match rustc_lexemes(source) {
        Ok(l) => l,
        Err(e) => return Some(format!("accepted, but {e}")),
    };
    let Some(saw) = saw else {
        return Some("accepted without being tokenized".to_owned());
    };
    if let Some(k) = (0..rustc.len().max(saw.len())).find(|&k| rustc.get(k) != saw.get(k)) {
        let show = |l: Option<&Lexeme>| {
            l.map_or("nothing".to_owned(), |(c, r)| {
                format!("{c} {:?} at {r:?}", &source[r.clone()])
            })
        };
        return Some(format!(
            "lexeme {k}: rustc reads {}, the check {}",
            show(rustc.get(k)),
            show(saw.get(k))
        ));
    }
    rustc.windows(2).find_map(|w| {
        let name = &source[w[0].1.clone()];
        let name = name.strip_prefix("r#").unwrap_or(name);
        (w[0].0 == "ident" && &source[w[1].1.clone()] == "!" && READS.contains(&name))
            .then(|| format!("accepted, and rustc sees a call of `{name}!`"))
    })
}
