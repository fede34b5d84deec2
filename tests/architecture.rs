//! The module map in `host/src/lib.rs` is the architecture: this reads it,
//! reads every module reference in `host/src`, and fails on a reference
//! that goes to the same layer or up (which is how cycles start), and on a
//! module the map does not place.
//!
//! A unit of the map is a top-level module, or a submodule the map places
//! on its own (such as `gate::policy` was): that one is then a unit apart
//! from its parent, held to its own layer both ways. So that such a unit cannot be
//! reached around the map, `super::` and `self::` paths count as well as
//! `crate::` ones, and so does a child unit named bare in its parent.
//!
//! Folders are layers too: the imports between top-level modules (a
//! folder and all it holds, at the layer the map gives the folder) must
//! all go down, and must form no cycle; a breach names the `file:line`
//! that makes each edge.

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

/// Module paths, each with the byte offset in its file where it is
/// first named.
type Located = BTreeMap<Vec<String>, usize>;

/// The byte offset of `part`, a slice of `whole`, in `whole`.
fn offset_in(whole: &str, part: &str) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

/// The module paths of the use tree or path that `s` (a slice of `text`)
/// starts with, each after `prefix`: `a::{b, c::d}` gives `a::b` and
/// `a::c::d`. Item names (`Runner`) stay on the end; they never name a
/// unit. Each path comes with where in `text` its group item starts.
fn tree_paths(text: &str, s: &str, prefix: Vec<String>, out: &mut Located) {
    let mut path = prefix;
    let mut rest = s.trim_start();
    let at = offset_in(text, rest);
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            for item in group_items(group) {
                tree_paths(text, item, path.clone(), out);
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
    out.entry(path).or_insert(at);
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
fn referenced_paths(text: &str) -> Located {
    let mut out = Located::new();
    for i in path_starts(text, "crate::") {
        tree_paths(text, &text[i + "crate::".len()..], Vec::new(), &mut out);
    }
    out.retain(|p, _| !p.is_empty());
    out
}

/// Every module named right after `crate::` in `text`, including each
/// item of a `crate::{a, b::c}` group.
fn referenced_modules(text: &str) -> BTreeSet<String> {
    referenced_paths(text)
        .into_keys()
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
/// `children`. Each comes with the byte offset where it is first named.
fn resolved_paths(text: &str, here: &[String], children: &BTreeSet<String>) -> Located {
    let mut out = referenced_paths(text);
    // Code only: a comment may show an example (`use super::X;`) of
    // another module.
    let code = without_line_comments(text);
    let text = code.as_str();
    relative_paths(text, here, &mut out);
    for child in children {
        for i in path_starts(text, &format!("{child}::")) {
            tree_paths(text, &text[i..], here.to_vec(), &mut out);
        }
    }
    out.retain(|p, _| !p.is_empty());
    out
}

/// `text` with each line that is a `//` comment blanked, offsets kept.
fn without_line_comments(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|l| {
            if l.trim_start().starts_with("//") {
                " ".repeat(l.len() - 1) + "\n"
            } else {
                l.to_owned()
            }
        })
        .collect()
}

/// Adds to `out` the `super::` and `self::` paths of `text`, the source of
/// module `here`, resolved from where they stand.
fn relative_paths(text: &str, here: &[String], out: &mut Located) {
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
            tree_paths(text, rest, here[..base].to_vec(), out);
        }
    }
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

    let mut sources: Vec<Source> = modules(&src)
        .into_iter()
        .map(|(p, here)| read_source(&p, &src, here, &layers))
        .collect();
    sources.sort_by(|a, b| a.rel.cmp(&b.rel));
    assert!(sources.len() > 50, "read the whole source tree");
    let files: Vec<_> = sources
        .iter()
        .map(|s| {
            let unit = unit_of(&s.here, &layers).unwrap_or_else(|| s.here.join("::"));
            let refs = s.refs.keys().map(|p| p.join("::")).collect();
            (s.rel.clone(), unit, refs)
        })
        .collect();
    let bad = violations(&layers, &files);
    assert!(
        bad.is_empty(),
        "edges against the module map:\n{}",
        bad.join("\n")
    );
    let bad = top_level_violations(&layers, &top_level_edges(&sources, &top));
    assert!(
        bad.is_empty(),
        "imports between top-level modules against the module map:\n{}",
        bad.join("\n")
    );
}

/// A source file as the checks read it: its path under `src`, its module
/// path, its text, and the module paths it names, with where.
struct Source {
    rel: String,
    here: Vec<String>,
    text: String,
    refs: Located,
}

fn read_source(
    path: &Path,
    src: &Path,
    here: Vec<String>,
    layers: &BTreeMap<String, u32>,
) -> Source {
    let text = std::fs::read_to_string(path).expect("a readable source file");
    let rel = path.strip_prefix(src).unwrap_or(path).display().to_string();
    // The children of `here` the map places apart from it.
    let children: BTreeSet<String> = layers
        .keys()
        .filter_map(|u| {
            let (parent, child) = u.rsplit_once("::")?;
            (parent == here.join("::")).then(|| child.to_owned())
        })
        .collect();
    let refs = resolved_paths(&text, &here, &children);
    Source {
        rel,
        here,
        text,
        refs,
    }
}

/// An import from one top-level module into another, and the first
/// `file:line` that makes it.
#[derive(Debug)]
struct Edge {
    from: String,
    to: String,
    at: String,
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The imports between distinct top-level modules (of `top`), one per
/// pair, at the first place that makes it (files in the order given).
fn top_level_edges(sources: &[Source], top: &BTreeSet<String>) -> Vec<Edge> {
    let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
    for s in sources {
        let mut named: Vec<(usize, &String)> = s.refs.iter().map(|(p, at)| (*at, &p[0])).collect();
        named.sort();
        for (at, to) in named {
            if *to != s.here[0] && top.contains(to) {
                edges
                    .entry((s.here[0].clone(), to.clone()))
                    .or_insert_with(|| format!("{}:{}", s.rel, line_of(&s.text, at)));
            }
        }
    }
    edges
        .into_iter()
        .map(|((from, to), at)| Edge { from, to, at })
        .collect()
}

/// Every import between top-level modules that does not go down the map,
/// and every cycle among them (found from the imports alone), each
/// naming the `file:line` that makes each edge.
fn top_level_violations(layers: &BTreeMap<String, u32>, edges: &[Edge]) -> Vec<String> {
    let mut bad = Vec::new();
    for e in edges {
        let (Some(&from), Some(&to)) = (layers.get(&e.from), layers.get(&e.to)) else {
            continue;
        };
        if to >= from {
            bad.push(format!(
                "{}: `{}` (layer {from}) imports `{}` (layer {to}), which is not below it",
                e.at, e.from, e.to
            ));
        }
    }
    for (group, cycle) in cycles(edges) {
        let steps: Vec<String> = cycle
            .iter()
            .map(|e| format!("{} -> {} ({})", e.from, e.to, e.at))
            .collect();
        bad.push(format!(
            "a cycle: {} reach each other; the shortest loop from {} is {}",
            group.into_iter().collect::<Vec<_>>().join(", "),
            cycle[0].from,
            steps.join(", ")
        ));
    }
    bad
}

/// The modules reachable from `from` by one edge or more.
fn reachable<'a>(from: &str, edges: &'a [Edge]) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_owned()];
    while let Some(n) = stack.pop() {
        for e in edges.iter().filter(|e| e.from == n) {
            if seen.insert(e.to.as_str()) {
                stack.push(e.to.clone());
            }
        }
    }
    seen
}

/// Each group of modules that reach each other, with a shortest cycle
/// through its first module, as the cycle's edges in order.
fn cycles(edges: &[Edge]) -> Vec<(BTreeSet<&str>, Vec<&Edge>)> {
    let nodes: BTreeSet<&str> = edges.iter().map(|e| e.from.as_str()).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in nodes {
        let reach = reachable(n, edges);
        if done.contains(n) || !reach.contains(n) {
            continue;
        }
        let group: BTreeSet<&str> = reach
            .into_iter()
            .filter(|m| reachable(m, edges).contains(n))
            .collect();
        done.extend(group.iter().copied());
        out.push((group, shortest_cycle(n, edges)));
    }
    out
}

/// The edges of a shortest cycle from `start` back to it (breadth first).
fn shortest_cycle<'a>(start: &'a str, edges: &'a [Edge]) -> Vec<&'a Edge> {
    let mut came_by: BTreeMap<&str, &Edge> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        for e in edges.iter().filter(|e| e.from == n) {
            if e.to == start {
                let mut path = vec![e];
                let mut at = n;
                while at != start {
                    let back = came_by[at];
                    path.push(back);
                    at = &back.from;
                }
                path.reverse();
                return path;
            }
            if !came_by.contains_key(e.to.as_str()) {
                came_by.insert(&e.to, e);
                queue.push_back(&e.to);
            }
        }
    }
    Vec::new()
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
            .into_keys()
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

/// The top-level check on a small made-up tree: `grants` (layer 2) reaches
/// up into `exec` and, by `super::`, into `config`, and `exec` and
/// `grants` import each other. Each breach is named with its file:line.
#[test]
fn the_top_level_check_names_an_upward_import_and_a_cycle_where_made() {
    let layers: BTreeMap<String, u32> = [("types", 0), ("grants", 2), ("config", 5), ("exec", 6)]
        .into_iter()
        .map(|(m, l)| (m.to_owned(), l))
        .collect();
    let top: BTreeSet<String> = layers.keys().cloned().collect();
    let source = |rel: &str, text: &str| {
        let here = module_path(Path::new(rel), Path::new("")).expect("a relative path");
        let refs = resolved_paths(text, &here, &BTreeSet::new());
        Source {
            rel: rel.to_owned(),
            here,
            text: text.to_owned(),
            refs,
        }
    };
    let sources = [
        source(
            "exec/mod.rs",
            "use crate::config::Config;\nuse crate::grants::Grants;\n",
        ),
        source("config.rs", "use crate::types::Output;\n"),
        source(
            "grants/edit.rs",
            "//! Grants.\n\nuse crate::{\n    types::Output,\n    exec::files::fingerprint,\n};\n",
        ),
        source("grants/mod.rs", "fn f() {\n    super::config::read();\n}\n"),
    ];
    let edges = top_level_edges(&sources, &top);
    assert_eq!(edges.len(), 6, "{edges:?}");
    let bad = top_level_violations(&layers, &edges);
    assert_eq!(
        bad,
        [
            "grants/mod.rs:2: `grants` (layer 2) imports `config` (layer 5), which is not below it",
            "grants/edit.rs:5: `grants` (layer 2) imports `exec` (layer 6), which is not below it",
            "a cycle: exec, grants reach each other; the shortest loop from exec is \
             exec -> grants (exec/mod.rs:2), grants -> exec (grants/edit.rs:5)",
        ]
    );
    // The cycle is found from the imports alone, whatever the map says.
    let bad = top_level_violations(&BTreeMap::new(), &edges);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].starts_with("a cycle: exec, grants "), "{bad:?}");
}
