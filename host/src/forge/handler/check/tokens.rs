//! A Rust source as the check sees it: proc-macro2's lexer (what a proc
//! macro is given, run outside one) flattened to one token per lexeme,
//! each with its byte range and line. Comments and whitespace are gone;
//! a doc comment is one token.

use std::ops::Range;
use std::str::FromStr;

use proc_macro2::{Delimiter, Spacing, Span, TokenStream, TokenTree};

use crate::forge::handler::SourceError;

/// A lexeme of code: what rustc parses, literals and doc comments whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeKind {
    /// An identifier or keyword as written (`r#` kept).
    Ident(String),
    /// One punctuation character; `joint` when the next one follows it
    /// with no space (`!=`, `::`, the `'` of a lifetime).
    Punct { ch: char, joint: bool },
    /// A literal, its suffix included.
    Literal,
    /// An opening delimiter: `(`, `[` or `{`.
    Open(char),
    /// A closing delimiter.
    Close(char),
    /// A doc comment (`///`, `//!`, `/** */`, `/*! */`).
    DocComment,
}

/// One lexeme and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeToken {
    pub kind: CodeKind,
    /// Bytes of the source.
    pub range: Range<usize>,
    /// 1-based.
    pub line: usize,
}

impl CodeToken {
    /// The class the differential test and fuzz target compare with
    /// rustc's lexer: `ident`, `punct` (delimiters too), `literal`, `doc`.
    pub fn class(&self) -> &'static str {
        match self.kind {
            CodeKind::Ident(_) => "ident",
            CodeKind::Punct { .. } | CodeKind::Open(_) | CodeKind::Close(_) => "punct",
            CodeKind::Literal => "literal",
            CodeKind::DocComment => "doc",
        }
    }
}

/// `source`'s lexemes, in order; a source proc-macro2 cannot tokenize
/// (an unclosed string, comment or bracket, a stray character) is refused.
pub fn code_tokens(source: &str) -> Result<Vec<CodeToken>, SourceError> {
    // Spans live in a per-thread source map that grows with every parse;
    // empty it whatever happens, once the lines are read.
    struct Forget;
    impl Drop for Forget {
        fn drop(&mut self) {
            proc_macro2::extra::invalidate_current_thread_spans();
        }
    }
    let _forget = Forget;
    proc_macro2::fallback::force();
    let stream = TokenStream::from_str(source).map_err(|e| SourceError::Refused {
        line: e.span().start().line,
        what: format!("it does not tokenize as Rust ({e}: an unclosed string, comment or bracket, or a character Rust does not allow)"),
    })?;
    let mut out = Vec::new();
    flatten(stream, &mut out);
    Ok(out)
}

fn token(kind: CodeKind, span: Span) -> CodeToken {
    CodeToken {
        kind,
        range: span.byte_range(),
        line: span.start().line,
    }
}

fn flatten(stream: TokenStream, out: &mut Vec<CodeToken>) {
    let mut trees = stream.into_iter().peekable();
    while let Some(tree) = trees.next() {
        match tree {
            TokenTree::Punct(p) if p.as_char() == '#' && is_doc_comment(p.span()) => {
                // `#`, `!` for an inner one, `[doc = "..."]`: one comment.
                out.push(token(CodeKind::DocComment, p.span()));
                if matches!(trees.peek(), Some(TokenTree::Punct(b)) if b.as_char() == '!') {
                    trees.next();
                }
                trees.next();
            }
            TokenTree::Punct(p) => out.push(token(
                CodeKind::Punct {
                    ch: p.as_char(),
                    joint: p.spacing() == Spacing::Joint,
                },
                p.span(),
            )),
            TokenTree::Ident(i) => out.push(token(CodeKind::Ident(i.to_string()), i.span())),
            TokenTree::Literal(l) => out.push(token(CodeKind::Literal, l.span())),
            TokenTree::Group(g) => {
                let (open, close) = delimiters(g.delimiter());
                out.push(token(CodeKind::Open(open), g.span_open()));
                flatten(g.stream(), out);
                out.push(token(CodeKind::Close(close), g.span_close()));
            }
        }
    }
}

/// A doc comment becomes `#[doc = "..."]` whose every token spans the
/// whole comment; a real `#` spans one byte.
fn is_doc_comment(span: Span) -> bool {
    span.byte_range().len() > 1
}

fn delimiters(d: Delimiter) -> (char, char) {
    match d {
        Delimiter::Parenthesis => ('(', ')'),
        Delimiter::Brace => ('{', '}'),
        Delimiter::Bracket => ('[', ']'),
        // Never made by the lexer: only by a macro.
        Delimiter::None => ('\u{2205}', '\u{2205}'),
    }
}

/// The check's lexemes in the classes rustc's lexer is compared in
/// (`CodeToken::class`), a lifetime (`'` joined to a name) being one.
pub fn lexemes(tokens: &[CodeToken]) -> Vec<(&'static str, Range<usize>)> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while let Some(t) = tokens.get(i) {
        let name = tokens
            .get(i + 1)
            .filter(|n| matches!(n.kind, CodeKind::Ident(_)) && n.range.start == t.range.end);
        match (&t.kind, name) {
            (
                CodeKind::Punct {
                    ch: '\'',
                    joint: true,
                },
                Some(n),
            ) => {
                out.push(("lifetime", t.range.start..n.range.end));
                i += 2;
            }
            _ => {
                out.push((t.class(), t.range.clone()));
                i += 1;
            }
        }
    }
    out
}
