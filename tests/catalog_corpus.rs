//! The loader against 555 real SKILL.md files from public repositories.
//!
//! The expected name and description come from a plain serde_norway parse
//! of the front matter, split here by its own code, so the check does not
//! depend on the loader being right about itself.

use crate::support;

use std::path::{Path, PathBuf};

use skillhost::skill::{Catalog, LoadOptions, Root, Source, parse_skill};
use support::corpus_dir;

const NAMES: [&str; 3] = ["SKILL.md", "skill.md", "Skill.md"];

/// Every skill file under `dir`, found with std only.
fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read corpus folder") {
            let entry = entry.expect("corpus entry");
            let path = entry.path();
            let ft = entry.file_type().expect("file type");
            if ft.is_dir() {
                stack.push(path);
            } else if NAMES.iter().any(|n| entry.file_name() == *n) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The front matter text, by the simplest rule: after an optional BOM and
/// blank lines, between a `---` line and the next one.
fn reference_front_matter(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.trim_start_matches('\u{feff}').replace("\r\n", "\n");
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    let mut fm = Vec::new();
    for line in lines {
        if line.trim_end() == "---" {
            return Some(fm.join("\n"));
        }
        fm.push(line);
    }
    None
}

/// `name` and `description` as serde_norway reads them.
fn reference_fields(bytes: &[u8]) -> Option<(Option<String>, String)> {
    let fm = reference_front_matter(bytes)?;
    let value: serde_norway::Value = serde_norway::from_str(&fm).ok()?;
    let map = value.as_mapping()?;
    let description = map.get("description")?.as_str()?.trim().to_owned();
    let name = map
        .get("name")
        .and_then(|n| n.as_str())
        .map(|n| n.trim().to_owned());
    Some((name, description))
}

#[test]
fn corpus_loads_and_matches_the_files() {
    let Some(dir) = corpus_dir() else { return };
    let files = corpus_files(&dir);
    assert!(!files.is_empty(), "no SKILL.md under {}", dir.display());

    let mut loaded = 0;
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut mismatches = Vec::new();
    let mut colon_repaired = 0;
    for path in &files {
        let bytes = std::fs::read(path).expect("read corpus file");
        let folder = path
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parsed = match parse_skill(&bytes, &folder) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        loaded += 1;
        assert!(
            !parsed.description.is_empty(),
            "{}: empty description",
            path.display()
        );
        match reference_fields(&bytes) {
            Some((name, description)) => {
                compared += 1;
                let want_name = name
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| folder.clone());
                if parsed.name != want_name || parsed.description != description {
                    mismatches.push(format!(
                        "{}:\n  name {:?} vs {:?}\n  description {:?} vs {:?}",
                        path.display(),
                        parsed.name,
                        want_name,
                        parsed.description,
                        description
                    ));
                }
            }
            None => {
                // Where serde_norway refuses the front matter, the loader
                // quoted an unquoted `: `: the description must then be the
                // line's text as written.
                let Some(fm) = reference_front_matter(&bytes) else {
                    continue;
                };
                let Some(line) = fm.lines().find_map(|l| l.strip_prefix("description:")) else {
                    continue;
                };
                let raw = line.trim();
                if !raw.is_empty() && !raw.starts_with(['|', '>', '"', '\'']) {
                    colon_repaired += 1;
                    assert!(
                        parsed.description.starts_with(raw),
                        "{}: repaired description {:?} does not start with {:?}",
                        path.display(),
                        parsed.description,
                        raw
                    );
                }
            }
        }
    }

    let total = files.len();
    println!(
        "corpus: {loaded}/{total} loaded; {compared} compared with serde_norway, {} mismatched; {colon_repaired} read after quoting colons",
        mismatches.len()
    );
    for f in &failures {
        println!("  not loaded: {f}");
    }
    assert!(
        loaded * 1000 >= total * 995,
        "only {loaded}/{total} loaded:\n{}",
        failures.join("\n")
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(
        compared * 10 >= total * 9,
        "only {compared}/{total} could be compared"
    );
}

#[test]
fn corpus_catalog_finds_every_file() {
    let Some(dir) = corpus_dir() else { return };
    let total = corpus_files(&dir).len();
    let catalog = Catalog::load(
        &[Root::new(dir.clone(), Source::Path)],
        &LoadOptions::default(),
    );
    let stats = catalog.stats();
    println!(
        "catalog over the corpus: {stats:?}, {} skills",
        catalog.len()
    );
    assert_eq!(stats.files, total, "discovery must reach every file");
    assert!(stats.parsed * 1000 >= total * 995, "{stats:?}");
    assert_eq!(stats.parsed, catalog.len() + stats.duplicates, "{stats:?}");
    for s in catalog.skills() {
        assert!(s.path.starts_with(&dir), "{}", s.path.display());
        assert!(s.version.starts_with("sha256:") && s.version.len() == 7 + 64);
    }
    // Retrieval works on real descriptions.
    let hits = catalog.search("extract text from a pdf document", 5);
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .any(|m| m.skill.name.contains("pdf")
                || m.skill.description.to_lowercase().contains("pdf")),
        "{:?}",
        hits.iter().map(|m| &m.skill.name).collect::<Vec<_>>()
    );
}
