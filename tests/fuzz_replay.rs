//! Replays every fuzz target's corpus and regression inputs
//! (`fuzz/corpus/TARGET/`, `fuzz/regressions/TARGET/`) through the same
//! function the cargo-fuzz target calls, on stable: a crash once found and
//! fixed stays fixed. See docs/fuzzing.md.

use std::path::{Path, PathBuf};

use skillhost::fuzzing::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_fuzz_target_is_replayed() {
    let dir = fuzz_dir().join("fuzz_targets");
    let mut on_disk: Vec<String> = inputs(&dir)
        .iter()
        .filter_map(|p| p.file_stem()?.to_str().map(str::to_owned))
        .collect();
    on_disk.sort();
    let mut replayed: Vec<String> = TARGETS.iter().map(|(n, _)| (*n).to_owned()).collect();
    replayed.sort();
    assert_eq!(
        on_disk, replayed,
        "fuzz/fuzz_targets and fuzzing::TARGETS differ"
    );
}

#[test]
fn corpora_and_regressions_replay_without_a_finding() {
    let mut failed = Vec::new();
    for (target, run) in TARGETS {
        let corpus = inputs(&fuzz_dir().join("corpus").join(target));
        assert!(!corpus.is_empty(), "fuzz/corpus/{target} has no seeds");
        let regressions = inputs(&fuzz_dir().join("regressions").join(target));
        for file in corpus.iter().chain(&regressions) {
            let data = std::fs::read(file).expect("a readable input");
            if std::panic::catch_unwind(|| run(&data)).is_err() {
                failed.push(file.display().to_string());
            }
        }
    }
    assert!(
        failed.is_empty(),
        "inputs with a finding:\n{}",
        failed.join("\n")
    );
}
