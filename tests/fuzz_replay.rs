//! Replays every fuzz target's corpus and regression inputs
//! (`fuzz/corpus/TARGET/`, `fuzz/regressions/TARGET/`) through the same
//! function the cargo-fuzz target calls, on stable: a crash once found and
//! fixed stays fixed. See docs/fuzzing.md.

use std::path::{Path, PathBuf};

// The bodies of the fuzz targets, which the targets in fuzz/ call too.
#[path = "../fuzz/harness.rs"]
mod fuzzing;

use fuzzing::TARGETS;

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

/// A folder named after no target would never be replayed: a crash input
/// saved under a misspelt name would look covered and not be.
#[test]
fn every_input_folder_belongs_to_a_target() {
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz_dir().join(kind)) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                TARGETS.iter().any(|(t, _)| *t == name),
                "fuzz/{kind}/{name} is not a fuzz target's folder"
            );
        }
    }
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

fn seeds(target: &str) -> Vec<Vec<u8>> {
    inputs(&fuzz_dir().join("corpus").join(target))
        .iter()
        .map(|p| std::fs::read(p).expect("a readable seed"))
        .collect()
}

/// The seeds get past each target's first parse, so replay and fuzzing
/// start from inputs that reach the checks behind it.
#[test]
fn seeds_reach_past_the_first_parse() {
    use skillhost::gate_policy::{GateConfig, Status};
    use skillhost::learn::rules::RuleSet;

    let rules = seeds("rule_condition");
    assert!(rules.iter().any(|s| {
        let first = s.split(|&b| b == 0).next().unwrap_or_default();
        serde_json::from_slice::<RuleSet>(first).is_ok_and(|r| r.active().0.len() == 2)
    }));
    let configs = seeds("config_toml");
    assert!(configs.iter().any(|s| {
        let layers: Vec<String> = s
            .split(|&b| b == 0)
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        let refs: Vec<&str> = layers.iter().map(String::as_str).collect();
        skillhost::config::from_layers(&refs).is_ok_and(|c| !c.grants.is_empty())
    }));
    let components = seeds("gate_statics");
    assert!(components.iter().any(|s| {
        let (checks, _) = skillhost::gate::static_checks(
            s,
            &Default::default(),
            &GateConfig::default(),
            1 << 20,
            1 << 20,
        );
        checks.len() == 4 && checks.iter().all(|v| v.status == Status::Pass)
    }));
    let messages = seeds("mcp_message");
    assert!(
        messages
            .iter()
            .filter(|s| serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(s).is_ok())
            .count()
            >= messages.len() - 1
    );
}
