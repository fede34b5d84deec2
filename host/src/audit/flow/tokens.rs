//! A small tokenizer for Python, JavaScript and PowerShell: identifiers
//! (a PowerShell variable with its `$`, a cmdlet with its dashes), string
//! literals (their text, and the variables an interpolated one names),
//! punctuation and line ends. Comments are dropped. It never fails: what
//! it does not know is punctuation.

use super::Lang;
use unicode_normalization::UnicodeNormalization as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    Str,
    Punct,
    Newline,
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub kind: Kind,
    /// Byte offset in the tokenized code.
    pub at: usize,
    /// An identifier's name (PowerShell: lowercase), a string's text, the
    /// punctuation itself.
    pub text: String,
}

/// The tokens of `code` in `lang`.
pub(crate) fn tokenize(lang: Lang, code: &str) -> Vec<Token> {
    let mut lx = Lexer {
        lang,
        src: code,
        bytes: code.as_bytes(),
        i: 0,
        out: Vec::new(),
    };
    lx.run();
    lx.out
}

struct Lexer<'a> {
    lang: Lang,
    src: &'a str,
    bytes: &'a [u8],
    i: usize,
    out: Vec<Token>,
}

impl Lexer<'_> {
    fn run(&mut self) {
        while let Some(&b) = self.bytes.get(self.i) {
            let start = self.i;
            match b {
                b'\n' => self.push(Kind::Newline, start, start + 1),
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'\\' | b'`' if self.continuation() => self.i += 2,
                _ if self.comment() => {}
                b'"' | b'\'' | b'`' => self.string(b),
                b'@' if self.lang == Lang::PowerShell && self.here_string() => {}
                _ if self.string_prefix() => {}
                b'$' if self.lang == Lang::PowerShell => self.ps_variable(),
                _ if is_ident_start(b) => self.ident(),
                _ => {
                    let len = self.src[start..].chars().next().map_or(1, char::len_utf8);
                    self.push(Kind::Punct, start, start + len);
                }
            }
        }
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize) {
        let raw = self.src.get(start..end).unwrap_or("");
        let text = if self.lang == Lang::PowerShell && kind == Kind::Ident {
            raw.to_ascii_lowercase()
        } else if self.lang == Lang::Python && kind == Kind::Ident && !raw.is_ascii() {
            // Python reads identifiers in NFKC (PEP 3131): `𝘦𝘹𝘦𝘤` is `exec`.
            raw.nfkc().collect()
        } else {
            raw.to_owned()
        };
        self.out.push(Token {
            kind,
            at: start,
            text,
        });
        self.i = end.max(self.i + 1);
    }

    /// A `\` (Python, JavaScript) or `` ` `` (PowerShell) before a newline.
    fn continuation(&self) -> bool {
        let mark = if self.lang == Lang::PowerShell {
            b'`'
        } else {
            b'\\'
        };
        self.bytes.get(self.i) == Some(&mark)
            && matches!(self.bytes.get(self.i + 1), Some(b'\n' | b'\r'))
    }

    /// Skips a comment; whether there was one.
    fn comment(&mut self) -> bool {
        let rest = &self.src[self.i..];
        let (open, close) = match self.lang {
            Lang::JavaScript | Lang::Php | Lang::Go if rest.starts_with("//") => ("//", "\n"),
            Lang::JavaScript | Lang::Php | Lang::Go if rest.starts_with("/*") => ("/*", "*/"),
            Lang::Lua if rest.starts_with("--[[") => ("--[[", "]]"),
            Lang::Lua if rest.starts_with("--") => ("--", "\n"),
            Lang::PowerShell if rest.starts_with("<#") => ("<#", "#>"),
            Lang::Python | Lang::PowerShell | Lang::Shell | Lang::Perl | Lang::Ruby | Lang::Php
                if rest.starts_with('#') =>
            {
                ("#", "\n")
            }
            _ => return false,
        };
        let body = &rest[open.len()..];
        let len = body.find(close).map_or(rest.len(), |n| {
            open.len() + n + if close == "\n" { 0 } else { close.len() }
        });
        self.i += len;
        true
    }

    /// A quoted string (Python triple quotes too); the names a JavaScript
    /// template's `${…}` or a PowerShell `"…"`'s `$var` holds follow it.
    fn string(&mut self, quote: u8) {
        let start = self.i;
        let triple = self.lang == Lang::Python && self.bytes[start..].starts_with(&[quote; 3]);
        let open = if triple { 3 } else { 1 };
        let mut j = start + open;
        while j < self.bytes.len() {
            let b = self.bytes[j];
            if b == b'\\' && self.lang != Lang::PowerShell {
                j += 2;
                continue;
            }
            if b == quote && (!triple || self.bytes[j..].starts_with(&[quote; 3])) {
                break;
            }
            if b == b'\n' && !triple && quote != b'`' && self.lang != Lang::PowerShell {
                break;
            }
            j += 1;
        }
        let end = j.min(self.bytes.len());
        let inner = self.src.get(start + open..end).unwrap_or("").to_owned();
        self.out.push(Token {
            kind: Kind::Str,
            at: start,
            text: inner.clone(),
        });
        self.i = (end + open).min(self.bytes.len()).max(start + 1);
        if quote == b'`' || (quote == b'"' && self.lang == Lang::PowerShell) {
            self.interpolated(&inner, start + open);
        }
    }

    /// The variables an interpolated string names, as identifiers.
    fn interpolated(&mut self, inner: &str, base: usize) {
        let sub = tokenize(self.lang, &inner.replace("${", "  ("));
        self.out.extend(
            sub.into_iter()
                .filter(|t| t.kind == Kind::Ident)
                .map(|t| Token {
                    at: base + t.at,
                    ..t
                }),
        );
    }

    /// PowerShell here-strings: `@"…"@`, `@'…'@`.
    fn here_string(&mut self) -> bool {
        let rest = &self.src[self.i..];
        let quote = match rest.as_bytes().get(1) {
            Some(b'"') => '"',
            Some(b'\'') => '\'',
            _ => return false,
        };
        let close = format!("{quote}@");
        let body = &rest[2..];
        let len = body.find(&close).unwrap_or(body.len());
        let inner = body[..len].to_owned();
        let at = self.i;
        self.out.push(Token {
            kind: Kind::Str,
            at,
            text: inner.clone(),
        });
        self.i += 2 + len + close.len().min(body.len() - len);
        if quote == '"' {
            self.interpolated(&inner, at + 2);
        }
        true
    }

    /// Python's `r"…"`, `b'…'`, `f"…"`: the prefix is part of the string.
    fn string_prefix(&mut self) -> bool {
        if self.lang != Lang::Python {
            return false;
        }
        let rest = &self.bytes[self.i..];
        let n = rest
            .iter()
            .take(2)
            .take_while(|b| b"rRbBfFuU".contains(b))
            .count();
        match rest.get(n) {
            Some(&q @ (b'"' | b'\'')) if n > 0 => {
                self.i += n;
                self.string(q);
                true
            }
            _ => false,
        }
    }

    /// `$name`, `${name}`, `$env:NAME`.
    fn ps_variable(&mut self) {
        let start = self.i;
        let mut j = start + 1;
        if self.bytes.get(j) == Some(&b'{') {
            j = self.src[j..]
                .find('}')
                .map_or(self.bytes.len(), |n| j + n + 1);
        } else {
            while j < self.bytes.len() && (is_ident_char(self.bytes[j]) || self.bytes[j] == b':') {
                j += 1;
            }
        }
        let kind = if j > start + 1 {
            Kind::Ident
        } else {
            Kind::Punct
        };
        self.push(kind, start, j);
    }

    fn ident(&mut self) {
        let start = self.i;
        let mut j = start;
        while j < self.bytes.len() {
            let b = self.bytes[j];
            let dash = b == b'-' && self.lang == Lang::PowerShell && j > start;
            if !(is_ident_char(b) || dash) {
                break;
            }
            j += 1;
        }
        self.push(Kind::Ident, start, j);
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}
