//! Catalog speed: loading 10,000 skills from disk, and ranking a query
//! over them. Targets: the load well under a second, a query well under a
//! millisecond.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use skillhost::skill::{Catalog, LoadOptions, Root, Source};

const SKILLS: usize = 10_000;

const WORDS: &[&str] = &[
    "email",
    "report",
    "invoice",
    "calendar",
    "meeting",
    "summary",
    "translate",
    "database",
    "query",
    "chart",
    "spreadsheet",
    "deploy",
    "kubernetes",
    "docker",
    "review",
    "code",
    "test",
    "lint",
    "format",
    "image",
    "resize",
    "audio",
    "transcribe",
    "video",
    "pdf",
    "extract",
    "table",
    "weather",
    "forecast",
    "stock",
    "price",
    "crypto",
    "wallet",
    "slack",
    "discord",
    "github",
    "issue",
    "release",
    "notes",
    "budget",
    "travel",
    "flight",
    "hotel",
    "recipe",
    "grocery",
    "fitness",
    "workout",
    "sleep",
    "journal",
    "poem",
    "story",
    "research",
    "paper",
    "citation",
];

/// Deterministic pseudo-random words (xorshift), so every run sees the same corpus.
struct Rng(u64);

impl Rng {
    fn word(&mut self) -> &'static str {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        WORDS[(self.0 % WORDS.len() as u64) as usize]
    }
}

/// 10,000 skills spread over 100 folders, in the shapes the ecosystem uses:
/// plain, with tags, with triggers, with nested metadata.
fn generate(root: &Path) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..SKILLS {
        let name = format!("skill-{i:05}");
        let dir = root.join(format!("group-{:03}", i % 100)).join(&name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let description: Vec<&str> = (0..14).map(|_| rng.word()).collect();
        let mut text = format!(
            "---\nname: {name}\ndescription: Helps with {} when the user asks about {}.\n",
            description[..8].join(" "),
            description[8..].join(" ")
        );
        if i % 2 == 0 {
            text.push_str(&format!("tags: [{}, {}]\n", rng.word(), rng.word()));
        }
        if i % 3 == 0 {
            text.push_str(&format!(
                "metadata:\n  triggers: [{} {}, {}]\n  author: bench\n",
                rng.word(),
                rng.word(),
                rng.word()
            ));
        }
        text.push_str(&format!("---\n# {name}\n\nInstructions for {name}.\n"));
        std::fs::write(dir.join("SKILL.md"), text).expect("write");
    }
}

fn catalog_benches(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    generate(tmp.path());
    let roots = [Root::new(tmp.path().to_path_buf(), Source::Path)];
    let opts = LoadOptions::default();

    let mut group = c.benchmark_group("catalog");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    // Dropping the catalog is not part of loading it.
    group.bench_function("load_10k", |b| {
        b.iter_with_large_drop(|| {
            let catalog = Catalog::load(black_box(&roots), &opts);
            assert_eq!(catalog.len(), SKILLS);
            catalog
        })
    });
    group.finish();

    let catalog = Catalog::load(&roots, &opts);
    c.bench_function("catalog/search_10k", |b| {
        b.iter(|| {
            catalog
                .search(
                    black_box("write a summary email about the meeting report"),
                    5,
                )
                .len()
        })
    });
}

criterion_group!(benches, catalog_benches);
criterion_main!(benches);
