use std::path::{Path, PathBuf};

use super::*;
use crate::forge::handler::request::{JS_TEMPLATE, RUST_TEMPLATE};

fn refused(src: &str) -> String {
    match check_source(src, HandlerLang::Rust) {
        Err(SourceError::Refused { what, .. }) => what,
        other => panic!("not refused: {other:?}\n{src}"),
    }
}

fn passes(src: &str) {
    check_source(src, HandlerLang::Rust).unwrap_or_else(|e| panic!("{e}:\n{src}"));
}

/// What is wrong with `src` if the check accepts it: rustc's lexer reads
/// it differently, or sees a call that reads the host.
fn rustc_disagrees(src: &str) -> Option<String> {
    check_source(src, HandlerLang::Rust).ok()?;
    let saw = code_tokens(src).expect("accepted, so tokenized");
    if let Some((at, how)) = first_difference(src, &lexemes(&saw)) {
        return Some(format!("byte {at}: {how}"));
    }
    let calls = read_calls(src);
    (!calls.is_empty()).then(|| format!("rustc sees {calls:?}"))
}

/// Issue 39, finding 1: the old blanking ended `'\''` at the escaped
/// quote, took `'"'` for the start of a string and so blanked the call.
#[test]
fn an_escaped_quote_char_literal_hides_no_macro_call() {
    for src in [
        "fn f() { let _ = ('\\'','\"',compile_error!(include_str!(\"PATH\"))); }",
        "const A: char = '\\''; const B: &str = \"\"; const C: &str = include_str!(\"/etc/passwd\");",
        "const A: char = '\\\\'; const B: &str = include_str!(\"/etc/passwd\");",
        "const A: char = '\\u{27}'; const B: char = '\"'; const C: &str = env!(\"HOME\");",
    ] {
        let what = refused(src);
        assert!(
            what.contains("include_str") || what.contains("compile_error") || what.contains("env"),
            "{src}\n=> {what}"
        );
        assert_eq!(rustc_disagrees(src), None, "{src}");
    }
}

#[test]
fn only_allowlisted_macros_may_be_called_by_any_path_or_name() {
    for (src, why) in [
        (
            "const X: &str = include_str!(\"/etc/passwd\");",
            "`include_str!`",
        ),
        (
            "const X: &[u8] = include_bytes ! (\"/etc/passwd\");",
            "`include_bytes!`",
        ),
        ("include!(\"/etc/x.rs\");", "`include!`"),
        ("const X: &str = env!(\"HOME\");", "`env!`"),
        (
            "const X: Option<&str> = option_env!(\"HOME\");",
            "`option_env!`",
        ),
        ("compile_error!(\"x\");", "`compile_error!`"),
        (
            "const X: &str = std::include_str!(\"/etc/passwd\");",
            "`std::include_str!`",
        ),
        (
            "const X: &str = ::core::include_str!(\"/x\");",
            "`::core::include_str!`",
        ),
        ("const X: &str = r#include_str!(\"/x\");", "`include_str!`"),
        (
            "const X: &str = include_str /* hidden? */ ! (\"/x\");",
            "`include_str!`",
        ),
        ("const X: &str = self::format!(\"x\");", "`self::format!`"),
        ("const X: &str = <u8>::format!(\"x\");", "`::format!`"),
        ("fn f() { r#return!(1) }", "`return!`"),
        ("fn f() { gen!(1) }", "`gen!`"),
        (
            "fn f() { wit_bindgen::generate!({ path: \"/etc\" }); }",
            "`wit_bindgen::generate!`",
        ),
        (
            "fn f() { concat_idents!(inc, lude)(\"x\") }",
            "`concat_idents!`",
        ),
        ("macro_rules! m { () => { 1 } }", "may not define macros"),
        ("macro m() { 1 }", "may not define macros"),
        (
            "const X: &str = stringify!(a $x);",
            "`$` belongs to macro definitions",
        ),
    ] {
        let what = refused(src);
        assert!(what.contains(why), "{src}\n=> {what}\nwanted: {why}");
    }
    let e = check_source(
        "fn f() {}\nconst X: &str = env!(\"HOME\");",
        HandlerLang::Rust,
    )
    .expect_err("refused");
    assert!(
        e.to_string().starts_with(
            "line 2: it calls `env!`, which is not a macro a handler may use (those are `assert!`,"
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("`skillhost_guest::export_handler!`"),
        "{e}"
    );
}

/// A macro the allowlist holds cannot be reached by another name: a
/// rename to a trusted name, an import of a compiler macro, a glob of a
/// standard root or prelude are refused.
#[test]
fn renames_and_imports_cannot_put_a_forbidden_macro_behind_an_allowed_name() {
    for (src, why) in [
        (
            "use core::include_str as format;\nconst X: String = format!(\"/etc/passwd\");",
            "brings in `include_str`",
        ),
        (
            "use std::{fmt as format};",
            "renames something to a name the check trusts",
        ),
        (
            "use self::m::inc as vec;",
            "renames something to a name the check trusts",
        ),
        (
            "use x::y as r#format;",
            "renames something to a name the check trusts",
        ),
        (
            "use self::evil as std;",
            "renames something to a name the check trusts",
        ),
        (
            "use self::evil as skillhost_guest;",
            "renames something to a name the check trusts",
        ),
        (
            "use a::b as export_handler;",
            "renames something to a name the check trusts",
        ),
        (
            "use a::b as test;",
            "renames something to a name the check trusts",
        ),
        (
            "use std::env as e;\nconst X: &str = e!(\"HOME\");",
            "brings in `env`",
        ),
        ("use ::core::{option_env};", "brings in `option_env`"),
        ("use core::*;", "a glob `use`"),
        ("use ::std::prelude::v1::*;", "a glob `use`"),
        ("use core::{*};", "a glob `use`"),
        ("use alloc::{vec::Vec, *};", "a glob `use`"),
        (
            "use core::include_str as inc;\nconst X: &str = inc!(\"/x\");",
            "brings in `include_str`",
        ),
        (
            "use m::inc as x;\nconst X: &str = x!(\"/x\");",
            "it calls `x!`",
        ),
    ] {
        let what = refused(src);
        assert!(what.contains(why), "{src}\n=> {what}\nwanted: {why}");
    }
    for src in [
        "use std::fmt::Write as _;",
        "use std::fmt::Result as FmtResult;",
        "use std::collections::{BTreeMap, HashMap};",
        "use skillhost_guest::{Failure, HandlerResult, Output, Task};",
        "#[cfg(test)]\nmod tests {\n    use super::*;\n}",
        "use std::format;\nfn f() -> String { format!(\"x\") }",
        "fn f() -> String { std::format!(\"{}\", ::core::line!()) }",
        "fn f() -> Vec<u8> { let v = vec![1]; assert_eq!(v.len(), 1); v }",
    ] {
        passes(src);
    }
}

#[test]
fn attributes_derives_modules_and_crates_outside_the_allowlist_are_refused() {
    for (src, why) in [
        (
            "#[path = \"/etc/passwd\"]\nmod x {}",
            "the attribute `path`",
        ),
        (
            "mod helpers;",
            "`mod helpers;` declares a module in another file",
        ),
        ("mod r#helpers;", "declares a module in another file"),
        (
            "#[cfg_attr(all(), path = \"/etc/x.rs\")] mod y {}",
            "the attribute `cfg_attr`",
        ),
        (
            "#[doc = include_str!(\"/etc/passwd\")]\nfn f() {}",
            "`include_str!`",
        ),
        (
            "#[link(name = \"secret\")] extern \"C\" {}",
            "the attribute `link`",
        ),
        (
            "#![debugger_visualizer(natvis_file = \"/etc/passwd\")]",
            "the attribute `debugger_visualizer`",
        ),
        ("#![no_std]", "the attribute `no_std`"),
        ("#[macro_use] mod m {}", "the attribute `macro_use`"),
        (
            "#[export_name = \"handle\"] fn f() {}",
            "the attribute `export_name`",
        ),
        (
            "#[r#path = \"/etc/passwd\"] mod x {}",
            "the attribute `r#path`",
        ),
        (
            "#[::core::prelude::v1::derive(Debug)] struct S;",
            "whose name is not a plain word",
        ),
        ("#[derive(core::fmt::Debug)] struct S;", "may derive only"),
        ("#[derive(Evil)] struct S;", "may derive only"),
        ("extern crate std as s;", "`extern crate` is not allowed"),
        (
            "extern /* c */ crate std as s;",
            "`extern crate` is not allowed",
        ),
        (
            "fn f() -> u8 { # 1 }",
            "a `#` that does not start an attribute",
        ),
    ] {
        let what = refused(src);
        assert!(what.contains(why), "{src}\n=> {what}\nwanted: {why}");
    }
}

/// What rustc's own lexer reads differently from proc-macro2 is refused:
/// the check accepts only a source both read into the same tokens. The
/// first four are what the fuzz target found the check accepting before
/// it compared the two; the fifth, built on the fourth, passed that check
/// and called `include_str!` where it saw a string.
#[test]
fn what_rustc_would_read_differently_is_refused() {
    const DIFFERS: &str = "rustc's own lexer reads it differently from the check";
    for (src, why) in [
        ("const X: u8 = 'c\"x\"; fn f() {}", DIFFERS),
        ("const X: f32 = 0x1.1. ;", DIFFERS),
        ("const X: f32 = 1e-b'0'c;", DIFFERS),
        ("fn f() { let _ = (/*ERROR*/); }", DIFFERS),
        // rustc: `1e-r` (a bad number), a string, then the calls (it put
        // the file into an error about this line); proc-macro2: `1e`, `-`,
        // a raw string, `a`, then a string over the calls.
        (
            "const S: &str = stringify!(1e-r\"\\\" a\"); compile_error!(include_str!(\"/etc/hostname\")); //\");\nfn f() {}\n",
            DIFFERS,
        ),
        (
            "---\n\"\n---\nconst X: &str = include_str!(\"/x\"); // \"\n",
            DIFFERS,
        ),
        (" \n---\nfn f() {}\n---\n", DIFFERS),
        ("#!/usr/bin/env run\nconst X: &str = \"\";", DIFFERS),
        ("fn f() {}\r\nconst X: u8 = 1;", "carriage return"),
        ("fn \u{212a}() {}", "is not ASCII"),
        ("const \u{ff38}: u8 = 1;", "is not ASCII"),
        (
            "const X: &str = \"a; /* unclosed */",
            "does not tokenize as Rust",
        ),
        (
            "/* /* */ const X: &str = include_str!(\"/x\");",
            "does not tokenize as Rust",
        ),
        ("fn f() { let x = (1; }", "does not tokenize as Rust"),
    ] {
        let what = refused(src);
        assert!(what.contains(why), "{src}\n=> {what}\nwanted: {why}");
    }
}

/// Literals and comments of every kind end where rustc ends them: a call
/// after one is seen, a call inside one is not code.
#[test]
fn literals_and_comments_end_where_rustc_ends_them() {
    let hidden_call = [
        "const S: &str = r#\"a\"b\"#; const T: &str = include_str!(\"/x\");",
        "const S: &str = r##\"x\"#\"##; const T: &str = include_str!(\"/x\");",
        "/* /* */ */ const T: &str = include_str!(\"/x\");",
        "const B: &[u8] = b\"\\\"\"; const C: u8 = b'\\''; const T: &str = include_str!(\"/x\");",
        "const C: &core::ffi::CStr = c\"a\\\"b\"; const T: &str = env!(\"HOME\");",
        "const C: &core::ffi::CStr = cr#\"a\"b\"#; const T: &str = env!(\"HOME\");",
        "const R: &[u8] = br#\"\"\"#; const T: &str = env!(\"HOME\");",
        "fn f<'a>(s: &'a str) -> &'a str { s } const C: char = 'a'; const T: &str = include_str!(\"/x\");",
        "fn f<'a>(x: &'a u8) -> char { let _ = x; '\"' } const S: &str = include_str!(\"/x\");",
        "const S: &str = \"\\\\\"; const T: &str = include_str!(\"/x\");",
        "/// a doc \"comment\nconst T: &str = include_str!(\"/x\");",
        "/** a doc /* nested */ \" */ const T: &str = include_str!(\"/x\");",
    ];
    for src in hidden_call {
        let what = refused(src);
        assert!(
            what.contains("`include_str!`") || what.contains("`env!`"),
            "{src}\n=> {what}"
        );
        assert_eq!(rustc_disagrees(src), None, "{src}");
    }
    let inert = [
        "// include_str!(\"/etc/passwd\") in a comment\nfn f() {}",
        "/* env!(\"HOME\") /* nested */ mod x; */ fn f() {}",
        "/* /* */ include_str!(\"/x\") */ fn f() {}",
        "fn f() -> &'static str { \"include_str!(x) mod y;\" }",
        "fn f() -> &'static str { r#\"env!(\"HOME\")\"# }",
        "fn f() -> &'static str { r##\"include_str!(\"x\") \"# still in\"## }",
        "fn f() -> &'static [u8] { b\"include_bytes!(\\\"x\\\")\" }",
        "fn f() -> &'static core::ffi::CStr { c\"env!(HOME)\" }",
        "/// include_str!(\"/x\")\n//! env!(\"HOME\")\n/** include!(\"x\") */\nfn f() {}",
        "fn f<'a, 'b>(s: &'a str) -> char { let _ = s; let _c = 'b'; '\\'' }",
        "fn f() -> u8 { 'outer: loop { break 'outer 1; } }",
        "fn f(a: u8, b: u8) -> bool { a != b && !(a == b) }",
        "fn f(a: bool) -> bool { if !a { return !a; } match !a { _ => !a } }",
        "fn f() -> &'static str { concat!(\"include\", \"_str\") }",
        "fn f() -> &'static str { \"ïnclude_str!(x) — ünïcode\" }",
        "fn r#type() {} fn g() { r#type() }",
        "fn f() -> char { '#' }",
        "# [ derive ( Debug ) ] struct S;\n#![allow(dead_code)]",
        "#[rustfmt::skip] fn f() {}",
        "fn environment() {} fn f() { let env = 1; let _ = env + 1; }",
        "fn f() { let s = std::env::args().count(); let _ = s; }",
        "fn f(extern_crate: u8) -> u8 { extern_crate }",
        "mod inline { pub fn f() {} }",
    ];
    for src in inert {
        passes(src);
        assert_eq!(rustc_disagrees(src), None, "{src}");
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

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every handler the repository ships, and the template the model is
/// shown, passes; and it is the allowlist, not luck, that passes them:
/// the raw wit-bindgen guest (`tests/guests/counter`, which reads its WIT
/// with `wit_bindgen::generate!`) is refused.
#[test]
fn every_handler_source_in_the_repository_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = vec![root.join("host/templates/rust/lib.rs")];
    for parent in ["skills", "examples/rust"] {
        for e in std::fs::read_dir(root.join(parent))
            .expect("read")
            .flatten()
        {
            rust_files(&e.path().join("handler/src"), &mut files);
        }
    }
    for guest in ["echo", "hostile"] {
        rust_files(
            &root.join("tests/guests").join(guest).join("src"),
            &mut files,
        );
    }
    assert!(files.len() >= 7, "{files:?}");
    for f in &files {
        let src = std::fs::read_to_string(f).expect("read");
        check_source(&src, HandlerLang::Rust).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(rustc_disagrees(&src), None, "{}", f.display());
    }
    passes(RUST_TEMPLATE);
    let counter =
        std::fs::read_to_string(root.join("tests/guests/counter/src/lib.rs")).expect("read");
    assert!(refused(&counter).contains("`wit_bindgen::generate!`"));
}

/// Pieces that end or open literals and comments, calls that read the
/// host, and plain code, for `generated_sources`.
const PIECES: &[&str] = &[
    "'\\''",
    "'\\\\'",
    "'",
    "\"",
    "\\",
    "\\\"",
    "r#\"",
    "\"#",
    "r##\"",
    "\"##",
    "#",
    "/*",
    "*/",
    "//",
    "///",
    "//!",
    "/**",
    "*",
    "\n",
    " ",
    "b'",
    "b\"",
    "c\"",
    "cr#\"",
    "br\"",
    "'a",
    "'a'",
    "'\"'",
    "r#",
    "include_str!(\"/x\")",
    "compile_error!(",
    "env!(\"HOME\")",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "!",
    "=",
    "!=",
    ";",
    ",",
    "x",
    "fn f() {",
    "let s = ",
    "format!(\"{}\", ",
    "$",
    "-",
    "1u8",
    "0x",
    "1.",
    "e",
    "\u{a0}",
    "é",
    "\t",
    "#[derive(Debug)]",
    "k#",
    "'r#a",
    "::",
    "use ",
    " as ",
    "mod m;",
    "/* a */",
    "\"s\"",
    "r\"s\"",
    "'\\u{27}'",
    "b'\\''",
    "'\\n'",
];

/// A xorshift generator: the same sources on every run.
fn generated_sources(count: usize) -> Vec<String> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|_| {
            let n = 1 + next() % 12;
            (0..n)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect()
        })
        .collect()
}

/// The property of the fuzz target `rust_source_check`, on generated
/// sources: whatever the check accepts, rustc's own lexer reads into the
/// same lexemes, and sees no call that reads the host in it.
#[test]
fn generated_sources_the_check_accepts_hold_no_call_rustc_sees() {
    let mut accepted = 0;
    for src in generated_sources(20_000) {
        if check_source(&src, HandlerLang::Rust).is_ok() {
            accepted += 1;
        }
        if let Some(d) = rustc_disagrees(&src) {
            panic!("{d}\nsource: {src:?}");
        }
    }
    // The property is tried, not only refusals counted.
    assert!(accepted > 1_000, "{accepted} accepted");
}
