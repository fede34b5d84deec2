//! The module map in `host/src/lib.rs` is the architecture: this reads it,
//! reads every module reference in `host/src`, and fails on a reference
//! that goes to the same layer or up (which is how cycles start), and on a
//! module the map does not place.
//!
//! A unit of the map is a top-level module, or a submodule the map places
//! on its own (`gate::policy`): that one is then a unit apart from its
//! parent, held to its own layer both ways. So that such a unit cannot be
//! reached around the map, `super::` and `self::` paths count as well as
//! `crate::` ones, and so does a child unit named bare in its parent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `layer N: `a`, `b::c`: ...` lines of the crate docs, as unit → layer.
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

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The items of the `{...}` group whose inside `group` starts with, up to
/// its closing brace.
fn group_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (j, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..j]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

/// The module paths of the use tree or path that `s` starts with, each
/// after `prefix`: `a::{b, c::d}` gives `a::b` and `a::c::d`. Item names
/// (`Runner`) stay on the end; they never name a unit.
fn tree_paths(s: &str, prefix: Vec<String>, out: &mut BTreeSet<Vec<String>>) {
    let mut path = prefix;
    let mut rest = s.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            for item in group_items(group) {
                tree_paths(item, path.clone(), out);
            }
            return;
        }
        let name = ident(rest);
        if name.is_empty() || name == "self" {
            break;
        }
        path.push(name.to_owned());
        rest = &rest[name.len()..];
        let Some(after) = rest.strip_prefix("::") else {
            break;
        };
        rest = after;
    }
    out.insert(path);
}

/// Where `word` starts a path in `text`: not inside another name or path
/// (`skillhost_crate::x`, `$crate::x`, `a::crate::x`).
fn path_starts<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(word).filter_map(move |(i, _)| {
        let before = text[..i].chars().next_back();
        let inside =
            before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == ':');
        (!inside).then_some(i)
    })
}

/// Every module path after `crate::` in `text`, including each item of a
/// `crate::{a, b::c}` group: `a`, `b::c`.
fn referenced_paths(text: &str) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for i in path_starts(text, "crate::") {
        tree_paths(&text[i + "crate::".len()..], Vec::new(), &mut out);
    }
    out.retain(|p| !p.is_empty());
    out
}

/// Every module named right after `crate::` in `text`, including each
/// item of a `crate::{a, b::c}` group.
fn referenced_modules(text: &str) -> BTreeSet<String> {
    referenced_paths(text)
        .into_iter()
        .map(|p| p[0].clone())
        .collect()
}

/// The byte ranges of the inline modules of a rustfmt-formatted file
/// (`mod tests { ... }`), in which `super` is the file's own module.
fn inline_modules(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut offset = 0;
    let mut open: Vec<(String, usize)> = Vec::new();
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let item = trimmed
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ");
        if let Some(m) = item.strip_prefix("mod ")
            && m.trim_end().ends_with('{')
        {
            open.push((indent.to_owned(), offset));
        } else if trimmed.trim_end() == "}"
            && open.last().is_some_and(|(i, _)| i == indent)
            && let Some((_, start)) = open.pop()
        {
            ranges.push((start, offset + line.len()));
        }
        offset += line.len();
    }
    ranges
}

/// Every module path `text`, the source of module `here`, references:
/// `crate::` paths; `super::` and `self::` paths, resolved from where
/// they stand; paths through a child of `here` named bare, among
/// `children`.
fn resolved_paths(
    text: &str,
    here: &[String],
    children: &BTreeSet<String>,
) -> BTreeSet<Vec<String>> {
    let mut out = referenced_paths(text);
    // Code only: a comment may show an example (`use super::X;`) of
    // another module.
    let code: String = text
        .split_inclusive('\n')
        .map(|l| {
            if l.trim_start().starts_with("//") {
                " ".repeat(l.len() - 1) + "\n"
            } else {
                l.to_owned()
            }
        })
        .collect();
    let text = code.as_str();
    let inline = inline_modules(text);
    for word in ["super::", "self::"] {
        for i in path_starts(text, word) {
            let mut rest = &text[i..];
            // In an inline module the first `super` is the file's module.
            let mut up = inline.iter().filter(|(s, e)| (*s..*e).contains(&i)).count();
            let mut levels = 0;
            while let Some(after) = rest.strip_prefix("super::") {
                if up > 0 {
                    up -= 1;
                } else {
                    levels += 1;
                }
                rest = after;
            }
            rest = rest.strip_prefix("self::").unwrap_or(rest);
            let Some(base) = here.len().checked_sub(levels) else {
                continue;
            };
            tree_paths(rest, here[..base].to_vec(), &mut out);
        }
    }
    for child in children {
        for i in path_starts(text, &format!("{child}::")) {
            tree_paths(&text[i..], here.to_vec(), &mut out);
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The unit `path` belongs to: its longest prefix the map places.
fn unit_of(path: &[String], layers: &BTreeMap<String, u32>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|u| layers.contains_key(u))
}

/// The module path of a source file: `gate/policy/report.rs` is
/// `gate::policy::report`, `gate/mod.rs` is `gate`.
fn module_path(file: &Path, src: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).ok()?.with_extension("");
    let mut path: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_str().map(str::to_owned))
        .collect::<Option<_>>()?;
    if path.last().is_some_and(|l| l == "mod") {
        path.pop();
    }
    Some(path)
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
/// Each file comes with its unit and the module paths it references.
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
        let (mut targets, mut unmapped) = (BTreeSet::new(), BTreeSet::new());
        for r in refs {
            let path: Vec<String> = r.split("::").map(str::to_owned).collect();
            match unit_of(&path, layers) {
                Some(unit) => targets.insert(unit),
                None => unmapped.insert(path[0].clone()),
            };
        }
        for name in unmapped {
            bad.push(format!(
                "{file}: uses `{name}`, which is not in the module map"
            ));
        }
        for to_module in targets.iter().filter(|t| *t != module) {
            let to = layers[to_module];
            if to >= from {
                bad.push(format!(
                    "{file}: `{module}` (layer {from}) uses `{to_module}` (layer {to})"
                ));
            }
        }
    }
    bad
}

/// The source files and module paths under `src`, but lib.rs and main.rs.
fn modules(src: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    paths
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n != "lib.rs" && n != "main.rs")
        })
        .map(|p| {
            let module = module_path(&p, src).expect("a file under src");
            (p, module)
        })
        .collect()
}

#[test]
fn dependencies_run_one_way_as_the_module_map_says() {
    let src = src();
    let lib_rs = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let layers = layers_from_docs(&lib_rs);
    let declared = declared_modules(&lib_rs);
    let top: BTreeSet<String> = layers
        .keys()
        .filter(|u| !u.contains("::"))
        .cloned()
        .collect();
    assert_eq!(
        top, declared,
        "the module map in lib.rs must list exactly the modules lib.rs declares"
    );
    for unit in layers.keys().filter(|u| u.contains("::")) {
        let rel = unit.replace("::", "/");
        assert!(
            src.join(format!("{rel}.rs")).is_file() || src.join(&rel).join("mod.rs").is_file(),
            "the module map places `{unit}`, which has no source file"
        );
    }

    let modules = modules(&src);
    let files: Vec<_> = modules
        .iter()
        .map(|(p, here)| {
            let text = std::fs::read_to_string(p).expect("a readable source file");
            let rel = p.strip_prefix(&src).unwrap_or(p).display().to_string();
            // The children of `here` the map places apart from it.
            let children: BTreeSet<String> = layers
                .keys()
                .filter_map(|u| {
                    let (parent, child) = u.rsplit_once("::")?;
                    (parent == here.join("::")).then(|| child.to_owned())
                })
                .collect();
            let unit = unit_of(here, &layers).unwrap_or_else(|| here.join("::"));
            let refs = resolved_paths(&text, here, &children)
                .into_iter()
                .map(|p| p.join("::"))
                .collect();
            (rel, unit, refs)
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

/// A submodule the map places on its own is held to its layer both ways:
/// it may not use its parent, by `crate::` or by `super::`, while the
/// parent may use it, by any path; `super` in a test module of a file is
/// that file's own module.
#[test]
fn a_submodule_placed_on_its_own_is_a_unit_apart_from_its_parent() {
    let layers: BTreeMap<String, u32> =
        [("store", 3), ("gate::policy", 4), ("exec", 6), ("gate", 7)]
            .into_iter()
            .map(|(m, l)| (m.to_owned(), l))
            .collect();
    let module = |s: &str| -> Vec<String> { s.split("::").map(str::to_owned).collect() };
    let check = |file: &str, here: &str, children: &[&str], text: &str| {
        let here = module(here);
        let children = children.iter().map(|c| (*c).to_owned()).collect();
        let refs = resolved_paths(text, &here, &children)
            .into_iter()
            .map(|p| p.join("::"))
            .collect();
        let unit = unit_of(&here, &layers).expect("placed");
        violations(&layers, &[(file.to_owned(), unit, refs)])
    };
    let tests_module =
        "use crate::store::Row;\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
    assert_eq!(
        check("gate/policy/mod.rs", "gate::policy", &[], tests_module),
        Vec::<String>::new()
    );
    assert_eq!(
        check(
            "gate/mod.rs",
            "gate",
            &["policy"],
            "use crate::gate::policy::Report;\nuse policy::Check;\nuse self::policy::Status;\nuse crate::exec::Runner;\n"
        ),
        Vec::<String>::new()
    );
    for text in [
        "use crate::gate::Subject;",
        "use crate::{gate::{policy::Check, Subject}};",
        "use super::super::Subject;",
        "use super::super::run::Run;",
        "fn f() { crate::exec::run(); }",
    ] {
        let bad = check("gate/policy/report.rs", "gate::policy::report", &[], text);
        assert_eq!(bad.len(), 1, "{text}: {bad:?}");
        assert!(
            bad[0].contains("`gate::policy` (layer 4) uses"),
            "{text}: {bad:?}"
        );
    }
    let bad = check(
        "gate/policy/mod.rs",
        "gate::policy",
        &[],
        "use super::Subject;",
    );
    assert_eq!(bad.len(), 1, "{bad:?}");
}
