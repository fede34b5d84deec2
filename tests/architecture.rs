//! The module map in `host/src/lib.rs` is the architecture: this reads it,
//! reads every `crate::` reference in `host/src`, and fails on a reference
//! that goes to the same layer or up (which is how cycles start), and on a
//! module the map does not place.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `layer N: `a`, `b`: ...` lines of the crate docs, as module → layer.
fn layers_from_docs(lib_rs: &str) -> BTreeMap<String, u32> {
    let mut layers = BTreeMap::new();
    for line in lib_rs.lines() {
        let Some(rest) = line
            .trim_start_matches("//!")
            .trim()
            .strip_prefix("- layer ")
        else {
            continue;
        };
        let Some((n, names)) = rest.split_once(':') else {
            continue;
        };
        let n: u32 = n.trim().parse().expect("a layer number");
        let mut names = names.trim();
        while let Some(after) = names.strip_prefix('`') {
            let (name, tail) = after.split_once('`').expect("a closing backtick");
            layers.insert(name.to_owned(), n);
            names = tail.strip_prefix(", ").unwrap_or("");
        }
    }
    layers
}

/// The `pub mod` / `mod` items of lib.rs.
fn declared_modules(lib_rs: &str) -> BTreeSet<String> {
    lib_rs
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)
        })
        .collect()
}

/// Every module named right after `crate::` in `text`, including each
/// item of a `crate::{a, b::c}` group.
fn referenced_modules(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        // `skillhost_crate::x` or `$crate::x` are not references to us.
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        let name = ident(&group[j..]);
                        if !name.is_empty() {
                            out.insert(name);
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// The top-level module a source file belongs to (`exec/mod.rs` → exec).
fn module_of(file: &Path, src: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_owned())
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every edge that breaks the layering, as `file: a (layer) -> b (layer)`.
fn violations(
    layers: &BTreeMap<String, u32>,
    files: &[(String, String, BTreeSet<String>)],
) -> Vec<String> {
    let mut bad = Vec::new();
    for (file, module, refs) in files {
        let Some(&from) = layers.get(module) else {
            bad.push(format!(
                "{file}: module `{module}` is not in the module map"
            ));
            continue;
        };
        for to_module in refs.iter().filter(|r| *r != module) {
            match layers.get(to_module) {
                Some(&to) if to < from => {}
                Some(&to) => bad.push(format!(
                    "{file}: `{module}` (layer {from}) uses `{to_module}` (layer {to})"
                )),
                None => bad.push(format!(
                    "{file}: uses `{to_module}`, which is not in the module map"
                )),
            }
        }
    }
    bad
}

#[test]
fn dependencies_run_one_way_as_the_module_map_says() {
    let src = src();
    let lib_rs = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let layers = layers_from_docs(&lib_rs);
    let declared = declared_modules(&lib_rs);
    let mapped: BTreeSet<String> = layers.keys().cloned().collect();
    assert_eq!(
        mapped, declared,
        "the module map in lib.rs must list exactly the modules lib.rs declares"
    );

    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files: Vec<_> = paths
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n != "lib.rs" && n != "main.rs")
        })
        .map(|p| {
            let text = std::fs::read_to_string(p).expect("a readable source file");
            let rel = p.strip_prefix(&src).unwrap_or(p).display().to_string();
            let module = module_of(p, &src).expect("a file under src");
            (rel, module, referenced_modules(&text))
        })
        .collect();
    assert!(files.len() > 50, "read the whole source tree");
    let bad = violations(&layers, &files);
    assert!(
        bad.is_empty(),
        "edges against the module map:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_catches_an_upward_edge_a_sideways_edge_and_an_unmapped_module() {
    let layers: BTreeMap<String, u32> = [("types", 0), ("store", 3), ("llm", 3), ("exec", 6)]
        .into_iter()
        .map(|(m, l)| (m.to_owned(), l))
        .collect();
    let refs = |text: &str| referenced_modules(text);
    let files = vec![
        (
            "exec/mod.rs".to_owned(),
            "exec".to_owned(),
            refs("use crate::{store::Store, types::Output};"),
        ),
        (
            "store/mod.rs".to_owned(),
            "store".to_owned(),
            refs("use crate::exec::Runner;"),
        ),
        (
            "llm/mod.rs".to_owned(),
            "llm".to_owned(),
            refs("let x = crate::store::open();"),
        ),
        (
            "ghost.rs".to_owned(),
            "ghost".to_owned(),
            refs("use crate::types::Output;"),
        ),
    ];
    let bad = violations(&layers, &files);
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(bad[0].contains("`store` (layer 3) uses `exec` (layer 6)"));
    assert!(bad[1].contains("`llm` (layer 3) uses `store` (layer 3)"));
    assert!(bad[2].contains("`ghost` is not in the module map"));
}

#[test]
fn grouped_and_nested_references_are_all_seen() {
    let got = referenced_modules(
        "use crate::{\n    a::{b, c},\n    d,\n};\nfn f() { crate::e::g(); $crate::h::i(); }",
    );
    let want: BTreeSet<String> = ["a", "d", "e"].into_iter().map(String::from).collect();
    assert_eq!(got, want);
}
