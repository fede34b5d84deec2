//! The source refused before anything builds it: a first, cheap filter
//! against spellings that make the build read the host.

use std::sync::LazyLock;

use regex::Regex;

use super::{HandlerLang, MAX_SOURCE_BYTES, SourceError};
use crate::types::constant_regex;

/// Refuses a source that could read the host while it builds.
pub fn check_source(source: &str, lang: HandlerLang) -> Result<(), SourceError> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(SourceError::TooLarge(source.len()));
    }
    match lang {
        HandlerLang::Rust => check_rust(source),
        HandlerLang::Js => check_js(source),
    }
}

/// Macros that read files or the environment at compile time, by any
/// name: `include_str` and the rest are refused wherever they are named
/// (a macro argument too); `env` where it is called or renamed.
static RUST_READS: LazyLock<Regex> = LazyLock::new(|| {
    constant_regex(
        r"\b(include_str|include_bytes|include|option_env)\b|\benv\s*(!|\bas\b)|\bas\s+env\b",
    )
});
/// `mod x;`: a module read from another file (`mod $n;` in a macro too).
static RUST_OUT_OF_LINE: LazyLock<Regex> =
    LazyLock::new(|| constant_regex(r"\bmod\s+(r#|\$\s*)?\w+\s*;"));
/// The start of an attribute at a `#`: `#[`, `#![`, with any spacing.
static RUST_ATTRIBUTE_START: LazyLock<Regex> = LazyLock::new(|| constant_regex(r"^#\s*!?\s*\[\s*"));
/// `extern crate`, with any spacing.
static RUST_EXTERN_CRATE: LazyLock<Regex> = LazyLock::new(|| constant_regex(r"\bextern\s+crate\b"));
/// A macro called by a macro argument's name: `$m!(...)`.
static RUST_METAVAR_CALL: LazyLock<Regex> = LazyLock::new(|| constant_regex(r"\$\s*\w+\s*!"));
/// A macro defined by the handler.
static RUST_MACRO_RULES: LazyLock<Regex> = LazyLock::new(|| constant_regex(r"\bmacro_rules\s*!"));
/// Attributes a handler may carry; every other one (`path`, `link`,
/// `export_name`, `debugger_visualizer`, `cfg_attr` which could wrap them,
/// ...) is refused, and so is one whose name is a macro argument.
pub(super) const RUST_ATTRIBUTES: &[&str] = &[
    "derive",
    "allow",
    "warn",
    "deny",
    "expect",
    "forbid",
    "inline",
    "cold",
    "must_use",
    "repr",
    "cfg",
    "doc",
    "serde",
    "non_exhaustive",
    "rustfmt",
    "test",
];

/// A first, cheap filter: refuses the spellings known to make the compiler
/// read the host (a file by `#[path]` or `include*!`, a variable by
/// `env!`), whether written out or assembled by a macro. Nothing relies
/// on it: the build runs in a box that has nothing of the host to read
/// (`buildbox`), and what the compiler says about files other than the
/// handler's is withheld.
fn check_rust(source: &str) -> Result<(), SourceError> {
    let code = blank_rust_literals(source);
    let refused = |at: usize, what: String| SourceError::Refused {
        line: code[..at].matches('\n').count() + 1,
        what,
    };
    if let Some(m) = RUST_READS.find(&code) {
        return Err(refused(
            m.start(),
            format!("it names `{}`", m.as_str().trim()),
        ));
    }
    if let Some((at, what)) = rust_attribute_refused(&code) {
        return Err(refused(at, what));
    }
    if let Some(m) = RUST_OUT_OF_LINE.find(&code) {
        return Err(refused(
            m.start(),
            format!("`{}` declares a module in another file", m.as_str()),
        ));
    }
    if let Some(m) = RUST_EXTERN_CRATE.find(&code) {
        return Err(refused(m.start(), "`extern crate` is not allowed".into()));
    }
    if let Some(m) = RUST_METAVAR_CALL.find(&code) {
        return Err(refused(
            m.start(),
            format!(
                "`{}` calls a macro named by a macro argument",
                m.as_str().split_whitespace().collect::<String>()
            ),
        ));
    }
    if let Some(m) = RUST_MACRO_RULES.find(&code) {
        return Err(refused(
            m.start(),
            "a handler may not define macros (`macro_rules!`): a macro can assemble attributes and macro calls that no check of the source sees; write the code out".into(),
        ));
    }
    Ok(())
}

/// Every `#` of `code` (literals and comments blanked) must begin an
/// attribute a handler may use, or be the `#` of a raw identifier
/// (`r#type`); else where and why it is refused.
fn rust_attribute_refused(code: &str) -> Option<(usize, String)> {
    for (at, _) in code.match_indices('#') {
        let before = &code[..at];
        let raw_ident = before.ends_with('r')
            && !before[..before.len() - 1]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            && code[at + 1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_');
        if raw_ident {
            continue;
        }
        let rest = &code[at..];
        let Some(start) = RUST_ATTRIBUTE_START.find(rest) else {
            let next = rest[1..].trim_start();
            return Some((
                at,
                if next.starts_with('$') || next.starts_with("!$") {
                    "an attribute built from a macro argument is not one a handler may use".into()
                } else {
                    "a `#` that does not start an attribute a handler may use".into()
                },
            ));
        };
        let name_at = at + start.end();
        let name: String = code[name_at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            let what = if code[name_at..].starts_with('$') {
                "an attribute named by a macro argument (`#[$...]`) is not one a handler may use"
                    .to_owned()
            } else {
                "an attribute whose name is not a plain word is not one a handler may use"
                    .to_owned()
            };
            return Some((name_at, what));
        }
        if !RUST_ATTRIBUTES.contains(&name.as_str()) {
            return Some((
                name_at,
                format!("the attribute `{name}` is not one a handler may use"),
            ));
        }
    }
    None
}

/// `source` with comments and the contents of string and character
/// literals blanked out (newlines kept), so that what is checked is code.
fn blank_rust_literals(source: &str) -> String {
    let s: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < s.len() && s[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && s.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(s[i]));
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && next == Some('r')))
            && !prev_is_ident(&s, i)
            && raw_string_start(&s, i + usize::from(c == 'b')).is_some()
        {
            let start = i + usize::from(c == 'b');
            let hashes = raw_string_start(&s, start).unwrap_or(0);
            // r, the hashes, the quote
            let open = start + 1 + hashes + 1;
            out.extend(std::iter::repeat_n(' ', open - i));
            i = open;
            while i < s.len() {
                if s[i] == '"' && (1..=hashes).all(|k| s.get(i + k) == Some(&'#')) {
                    out.extend(std::iter::repeat_n(' ', hashes + 1));
                    i += hashes + 1;
                    break;
                }
                out.push(blank(s[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < s.len() && s[i] != '"' {
                if s[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < s.len() {
                    out.push(blank(s[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), else a lifetime.
            let end = if next == Some('\\') {
                (i + 2..s.len()).find(|&k| s[k] == '\'')
            } else if s.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.extend(std::iter::repeat_n(' ', end + 1 - i));
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_is_ident(s: &[char], i: usize) -> bool {
    i > 0 && (s[i - 1].is_alphanumeric() || s[i - 1] == '_')
}

/// At `s[i] == 'r'`: the number of `#` of a raw string starting here.
fn raw_string_start(s: &[char], i: usize) -> Option<usize> {
    if s.get(i) != Some(&'r') {
        return None;
    }
    let hashes = s[i + 1..].iter().take_while(|&&c| c == '#').count();
    (s.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
}

/// `import ... from "X"`, `import "X"`, `export ... from "X"`.
static JS_STATIC_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    constant_regex(
        r#"\b(?:import|export)\b[^;'"`]*?\bfrom\s*['"]([^'"]*)['"]|\bimport\s*['"]([^'"]*)['"]"#,
    )
});
static JS_DYNAMIC: LazyLock<Regex> = LazyLock::new(|| constant_regex(r"\b(import|require)\s*\("));
/// A WIT interface (`skillhost:skill/host`, `wasi:cli/environment@0.2.0`):
/// the only modules a handler may import.
static WIT_SPECIFIER: LazyLock<Regex> = LazyLock::new(|| {
    constant_regex(r"^[a-z][a-z0-9-]*:[a-z][a-z0-9-]*/[a-z][a-z0-9-]*(@[0-9A-Za-z.+-]+)?$")
});

/// componentize-js bundles what a module imports: a handler may import
/// WIT interfaces only, never a file.
fn check_js(source: &str) -> Result<(), SourceError> {
    let line = |at: usize| source[..at].matches('\n').count() + 1;
    for c in JS_STATIC_IMPORT.captures_iter(source) {
        let Some(spec) = c.get(1).or_else(|| c.get(2)) else {
            continue;
        };
        if !WIT_SPECIFIER.is_match(spec.as_str()) {
            return Err(SourceError::Refused {
                line: line(spec.start()),
                what: format!(
                    "it imports `{}`, which is not a WIT interface",
                    spec.as_str()
                ),
            });
        }
    }
    if let Some(m) = JS_DYNAMIC.find(source) {
        return Err(SourceError::Refused {
            line: line(m.start()),
            what: format!("`{}` loads a module at run or build time", m.as_str()),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forge::handler::request::{JS_TEMPLATE, RUST_TEMPLATE};

    fn refused(src: &str) -> String {
        match check_source(src, HandlerLang::Rust) {
            Err(SourceError::Refused { what, .. }) => what,
            other => panic!("not refused: {other:?}\n{src}"),
        }
    }

    #[test]
    fn rust_sources_that_read_the_host_at_compile_time_are_refused() {
        for src in [
            "const X: &str = include_str!(\"/etc/passwd\");",
            "const X: &[u8] = include_bytes ! (\"/etc/passwd\");",
            "include!(\"/etc/x.rs\");",
            "const X: &str = env!(\"HOME\");",
            "const X: Option<&str> = option_env!(\"HOME\");",
            "const X: &str = std::include_str!(\"/etc/passwd\");",
            "use std::include_str as read;\nconst X: &str = read!(\"/etc/passwd\");",
            "use std::env as e;\nconst X: &str = e!(\"HOME\");",
            "macro_rules! m { ($i:ident) => { $i!(\"/etc/passwd\") } }\nconst X: &str = m!(include_str);",
            "#[path = \"/etc/passwd\"]\nmod x;",
            "mod helpers;",
            "#[cfg_attr(all(), path = \"/etc/x.rs\")] mod y {}",
            "#[doc = include_str!(\"/etc/passwd\")]\nfn f() {}",
            "#[link(name = \"secret\")] extern \"C\" {}",
            "#![debugger_visualizer(natvis_file = \"/etc/passwd\")]",
            "extern crate std as s;",
        ] {
            refused(src);
        }
        let e = check_source(
            "fn f() {}\nconst X: &str = env!(\"HOME\");",
            HandlerLang::Rust,
        )
        .expect_err("refused");
        assert_eq!(
            e.to_string(),
            "line 2: it names `env!`; it could read the host's files or environment while it builds"
        );
    }

    /// The spellings of issue 30 that passed the check before: each is
    /// refused now, and says why.
    #[test]
    fn reads_assembled_by_a_macro_or_spelled_oddly_are_refused() {
        for (src, why) in [
            // The finding: `path`, a file and a module name as arguments.
            (
                "macro_rules! m { ($a:ident, $f:literal, $n:ident) => { #[$a = $f] mod $n; } }\nm!(path, \"/proc/self/environ\", x);",
                "an attribute named by a macro argument",
            ),
            (
                "macro_rules! m { ($a:ident) => { #![$a] } }",
                "an attribute named by a macro argument",
            ),
            (
                "macro_rules! m { ($a:ident) => { # [ $a(name = \"x\") ] extern \"C\" {} } }",
                "an attribute named by a macro argument",
            ),
            (
                "macro_rules! m { ($a:meta) => { #[$a] fn f() {} } }\nm!(export_name = \"x\");",
                "an attribute named by a macro argument",
            ),
            (
                "macro_rules! m { ($b:tt) => { #$b fn f() {} } }",
                "an attribute built from a macro argument",
            ),
            (
                "macro_rules! m { ($b:tt) => { #!$b } }",
                "an attribute built from a macro argument",
            ),
            (
                "macro_rules! m { ($h:tt) => { $h[path = \"/etc/passwd\"] mod x {} } }\nm!(#);",
                "a `#` that does not start",
            ),
            (
                "macro_rules! m { ($n:ident) => { mod $n; } }",
                "declares a module in another file",
            ),
            (
                "#[r#path = \"/etc/passwd\"] mod x {}",
                "the attribute `r` is not one",
            ),
            (
                "#[::core::prelude::v1::derive(Debug)] struct S;",
                "whose name is not a plain word",
            ),
            (
                "#[export_name = \"handle\"] fn f() {}",
                "the attribute `export_name`",
            ),
            (
                "#[link_section = \".x\"] static X: u8 = 0;",
                "the attribute `link_section`",
            ),
            ("extern  crate std as s;", "`extern crate` is not allowed"),
            ("extern\ncrate std as s;", "`extern crate` is not allowed"),
            (
                "extern /* c */ crate std as s;",
                "`extern crate` is not allowed",
            ),
            // `env` through a macro: by its name as an argument, or a call
            // of whatever macro an argument names.
            (
                "macro_rules! m { ($i:ident) => { $i!(\"HOME\") } }\nconst X: &str = m!(env);",
                "calls a macro named by a macro argument",
            ),
            (
                "macro_rules! m { ($p:path) => { $p ! (\"HOME\") } }",
                "calls a macro named by a macro argument",
            ),
            (
                "macro_rules! m { ($i:ident, $b:tt) => { $i $b (\"HOME\") } }\nconst X: &str = m!(env, !);",
                "may not define macros",
            ),
            (
                "const X: Option<&str> = m!(option_env);",
                "it names `option_env`",
            ),
            ("macro_rules! m { () => { 1 } }", "may not define macros"),
        ] {
            let what = refused(src);
            assert!(what.contains(why), "{src}\n=> {what}\nwanted: {why}");
        }
    }

    #[test]
    fn what_only_looks_like_a_read_passes() {
        check_source(RUST_TEMPLATE, HandlerLang::Rust).expect("the template");
        for src in [
            "// include_str!(\"/etc/passwd\") in a comment\nfn f() {}",
            "/* env!(\"HOME\") /* nested */ mod x; */ fn f() {}",
            "fn f() -> &'static str { \"include_str!(x) mod y;\" }",
            "fn f() -> &'static str { r#\"env!(\"HOME\")\"# }",
            "fn f<'a>(s: &'a str) -> char { let _ = s; 'e' }",
            "fn environment() {} fn f() { let env = 1; let _ = env + 1; }",
            "mod inline { pub fn f() {} }",
            "#[derive(Debug)] struct S;",
            "# [ derive ( Debug ) ] struct S;\n#![allow(dead_code)]",
            "#[rustfmt::skip] fn f() {}",
            "fn r#type() {} fn g() { r#type() }",
            "fn f() -> char { '#' }",
            "fn f() -> &'static str { \"#[path = \\\"/etc/passwd\\\"] $x! macro_rules!\" }",
            "/// # Examples\n/// macro_rules! env!\nfn f() {}",
            "fn f() { let s = std::env::args().count(); let _ = s; }",
            "fn f(extern_crate: u8) -> u8 { extern_crate }",
        ] {
            check_source(src, HandlerLang::Rust).unwrap_or_else(|e| panic!("{e}: {src}"));
        }
    }

    #[test]
    fn js_imports_only_wit_interfaces() {
        check_source(JS_TEMPLATE, HandlerLang::Js).expect("the template");
        check_source(
            "import { log } from 'skillhost:skill/host';\nexport function handle(t) { return t; }",
            HandlerLang::Js,
        )
        .expect("a WIT interface");
        for src in [
            "import x from './secret.js';",
            "import '/etc/passwd';",
            "export * from \"../x.js\";",
            "const m = await import('fs');",
            "const fs = require('fs');",
        ] {
            assert!(
                matches!(
                    check_source(src, HandlerLang::Js),
                    Err(SourceError::Refused { .. })
                ),
                "{src}"
            );
        }
    }
}
