//! What the skill text audit adds to a catalog load: 3,000 skills of an
//! audited source (`--skills`, source `path`) loaded by `Catalog::load`
//! with the audit off; with it on and no cache (cold: every skill's text
//! audited, what the first load after new skills arrive does); and with
//! it on and the findings cache a previous load wrote (warm: what every
//! later command's load does, the cache file read and checked each time),
//! in interleaved rounds so that all three see the same machine state.
//! Prints the medians, `RATIO audit-load` (cold) and `RATIO
//! audit-load-warm` (target: at most 1.5).
//!
//! The skills' bodies are the SKILL.md texts of the corpus at
//! `../shared/skill-corpus` (or `$SKILLHOST_CORPUS`), reused in turn, so
//! their sizes and wording are those of real skills; without the corpus,
//! generated text of the same average size.
//!
//! Run: `cargo bench -p skillhost --bench audit` (release profile).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use skillhost::audit::{self, FindingsCache};
use skillhost::skill::{Catalog, LoadOptions, Root, Source};

const SKILLS: usize = 3_000;
const ROUNDS: usize = 11;

fn corpus_bodies() -> Vec<String> {
    let dir = std::env::var_os("SKILLHOST_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/skill-corpus"));
    let mut files = Vec::new();
    collect(&dir, &mut files);
    files.sort();
    let bodies: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .map(|t| body_of(&t).to_owned())
        .collect();
    if bodies.is_empty() {
        eprintln!("no corpus at {}: generated bodies", dir.display());
        let para = "Use this skill to summarise a report, draft an email, or query the \
                    database. Run `curl -s https://api.example.com/v1/items | jq .` to list \
                    items, then write the answer as a table.\n\n";
        return vec![para.repeat(40)];
    }
    bodies
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p
            .file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case("skill.md"))
        {
            out.push(p);
        }
    }
}

/// The text after the front matter.
fn body_of(text: &str) -> &str {
    text.strip_prefix("---")
        .and_then(|rest| rest.find("\n---").map(|i| &rest[i + 4..]))
        .unwrap_or(text)
}

fn generate(root: &Path, bodies: &[String]) {
    for i in 0..SKILLS {
        let name = format!("skill-{i:05}");
        let dir = root.join(format!("group-{:02}", i % 30)).join(&name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let text = format!(
            "---\nname: {name}\ndescription: Bench skill {i}, with the body of a real one.\n---\n{}",
            bodies[i % bodies.len()]
        );
        std::fs::write(dir.join("SKILL.md"), text).expect("write");
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes --bench; a plain `cargo test --benches` passes
    // nothing and should not spend a minute here.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let bodies = corpus_bodies();
    let tmp = tempfile::tempdir().expect("tempdir");
    generate(tmp.path(), &bodies);
    let roots = [Root::new(tmp.path().to_path_buf(), Source::Path)];
    let (high, bytes) = check_audited_load(&roots);
    // The cache a previous command's load wrote.
    let cache_file = tmp.path().join("audit-findings.json");
    let cache = FindingsCache::open(&cache_file);
    let _ = Catalog::load_cached(&roots, &options(true), Some(&cache));
    assert_eq!(cache.misses(), SKILLS);
    cache.save().expect("write the cache");

    let (mut load, mut audited, mut warm) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        load.push(time_plain(&roots));
        audited.push(time_cold(&roots));
        warm.push(time_warm(&roots, &cache_file, high));
    }
    println!(
        "audit: {SKILLS} skills, {:.1} MiB of SKILL.md, {high} with a high finding",
        bytes as f64 / (1 << 20) as f64
    );
    print_medians(median(load), median(audited), median(warm));
}

fn options(audit: bool) -> LoadOptions {
    LoadOptions {
        audit,
        ..LoadOptions::default()
    }
}

/// Warms the page cache and the compiled rules, and checks that the
/// audited load did audit every skill, the same way `audit_folder` does.
/// Returns the skills with a high finding and the bytes of SKILL.md.
fn check_audited_load(roots: &[Root]) -> (usize, u64) {
    let catalog = Catalog::load(roots, &options(true));
    assert_eq!(catalog.len(), SKILLS);
    let mut high = 0;
    for s in catalog.skills() {
        let at_load = catalog.audit(&s.name).expect("audited at load");
        let alone = audit::audit_folder(&s.dir).expect("audit");
        assert_eq!(at_load.findings, alone.findings, "{}", s.name);
        high += usize::from(at_load.flagged());
    }
    let bytes: u64 = catalog
        .skills()
        .iter()
        .filter_map(|s| std::fs::metadata(&s.path).ok())
        .map(|m| m.len())
        .sum();
    (high, bytes)
}

/// A load with the audit off.
fn time_plain(roots: &[Root]) -> Duration {
    let t = Instant::now();
    let c = Catalog::load(black_box(roots), &options(false));
    let took = t.elapsed();
    assert!(c.audit("skill-00000").is_none());
    took
}

/// A load with the audit on and no cache: every text audited.
fn time_cold(roots: &[Root]) -> Duration {
    let t = Instant::now();
    let c = Catalog::load(black_box(roots), &options(true));
    let took = t.elapsed();
    let findings: usize = c
        .skills()
        .iter()
        .filter_map(|s| c.audit(&s.name))
        .map(|a| a.findings.len())
        .sum();
    black_box(findings);
    took
}

/// A load with the audit on and the findings cache read (and checked)
/// from `cache_file`; it must give the same `high` findings.
fn time_warm(roots: &[Root], cache_file: &Path, high: usize) -> Duration {
    let t = Instant::now();
    let cache = FindingsCache::open(black_box(cache_file));
    let c = Catalog::load_cached(black_box(roots), &options(true), Some(&cache));
    cache.save().expect("nothing to write");
    let took = t.elapsed();
    assert_eq!(cache.misses(), 0, "every text was in the cache");
    let flagged = c
        .skills()
        .iter()
        .filter(|s| c.audit(&s.name).is_some_and(|a| a.flagged()))
        .count();
    assert_eq!(flagged, high, "the cache gives the same findings");
    took
}

/// The medians of the plain (`l`), cold (`a`) and warm (`w`) loads, and
/// the ratios.
fn print_medians(l: Duration, a: Duration, w: Duration) {
    println!(
        "LOAD  catalog, audit off median {:>8.1} ms",
        l.as_secs_f64() * 1e3
    );
    println!(
        "LOAD  catalog, audit on  median {:>8.1} ms",
        a.as_secs_f64() * 1e3
    );
    println!(
        "LOAD  catalog, audit on, findings cache warm median {:>8.1} ms",
        w.as_secs_f64() * 1e3
    );
    println!(
        "RATIO audit-load {:.2} (cold: every text audited)",
        a.as_secs_f64() / l.as_secs_f64()
    );
    println!(
        "RATIO audit-load-warm {:.2} (target <= 1.5)",
        w.as_secs_f64() / l.as_secs_f64()
    );
}
