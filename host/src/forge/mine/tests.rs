//! Mining over recorded runs in a real store.

use serde_json::{Value, json};

use super::*;
use crate::store::{RunLog, RunRecord, SqliteStore, StepRecord};

/// A model tool call with these arguments.
fn call(tool: &str, arguments: Value) -> StepRecord {
    let detail = json!({
        "kind": "tool", "step": 1, "caller": "model", "tool": tool,
        "arguments": arguments, "result": {"text": "a long result, skipped"},
    });
    StepRecord {
        kind: "tool".into(),
        tool: Some(tool.into()),
        detail,
        error: None,
        error_class: None,
        duration_us: 1,
    }
}

fn run(success: bool, steps: Vec<StepRecord>) -> RunRecord {
    RunRecord {
        steps,
        ..RunRecord::new("s", success, 1)
    }
}

fn planted() -> Vec<StepRecord> {
    vec![
        call("find_file", json!({"pattern": "q3"})),
        call("read_file", json!({"path": "notes/q3.md"})),
        call("skill_summarizer", json!({"text": "...", "max_words": 50})),
    ]
}

fn store_with(runs: &[RunRecord]) -> (tempfile::TempDir, SqliteStore) {
    let d = tempfile::tempdir().expect("tempdir");
    let s = SqliteStore::open(&d.path().join("s.db")).expect("open");
    s.record_runs(runs).expect("record");
    (d, s)
}

fn tools(c: &Candidate) -> Vec<&str> {
    c.tools.iter().map(String::as_str).collect()
}

#[test]
fn a_planted_sequence_is_found_with_its_shapes_and_its_parts_are_not() {
    let mut runs = Vec::new();
    for i in 0..6 {
        // Noise around the sequence, different in every run.
        let mut steps = vec![call(&format!("noise{i}"), json!({}))];
        steps.extend(planted());
        steps.push(call("http_fetch", json!({"url": format!("u{i}")})));
        runs.push(run(true, steps));
    }
    let (_d, store) = store_with(&runs);
    let report = mine(&store, &MineConfig::default()).expect("mine");
    assert_eq!(report.runs, 6);
    assert_eq!(report.steps, 30);
    let best = &report.candidates[0];
    assert_eq!(
        tools(best),
        ["find_file", "read_file", "skill_summarizer", "http_fetch"]
    );
    assert_eq!((best.support, best.steps_saved), (6, 18));
    assert_eq!(best.success_rate, 1.0);
    assert_eq!(best.run_ids.len(), 6);
    assert_eq!(
        best.arg_shapes[2],
        ArgShape::Object(BTreeMap::from([
            ("max_words".to_owned(), JsonType::Number),
            ("text".to_owned(), JsonType::String),
        ]))
    );
    // Every part of it has the same support: closed, so left out.
    assert_eq!(report.candidates.len(), 1, "{:?}", report.candidates);
}

#[test]
fn the_latest_window_reads_only_its_runs() {
    // 6 old runs hold the planted sequence, then 6 newer ones hold another.
    let mut runs: Vec<RunRecord> = (0..6).map(|_| run(true, planted())).collect();
    runs.extend((0..6).map(|_| {
        run(
            true,
            vec![call("x", json!({"a": 1})), call("y", json!({"b": "s"}))],
        )
    }));
    let (_d, store) = store_with(&runs);
    let all = mine(&store, &MineConfig::default()).expect("mine");
    assert_eq!((all.runs, all.candidates.len()), (12, 2));
    let latest = mine_latest(&store, &MineConfig::default(), 6).expect("mine");
    assert_eq!(latest.runs, 6);
    assert_eq!(latest.candidates.len(), 1);
    assert_eq!(tools(&latest.candidates[0]), ["x", "y"]);
    // More than are stored: all of them; an empty store: nothing.
    assert_eq!(
        mine_latest(&store, &MineConfig::default(), 1_000)
            .expect("mine")
            .runs,
        12
    );
    let (_e, empty) = store_with(&[]);
    assert_eq!(
        mine_latest(&empty, &MineConfig::default(), 10)
            .expect("mine")
            .runs,
        0
    );
}

#[test]
fn too_rare_too_failing_or_disagreeing_sequences_are_rejected() {
    let mut runs = Vec::new();
    // Support 4 < 5.
    for _ in 0..4 {
        runs.push(run(true, vec![call("a", json!({})), call("b", json!({}))]));
    }
    // 10 runs, 3 of them failed: 70% < 80%.
    for i in 0..10 {
        runs.push(run(
            i >= 3,
            vec![call("c", json!({})), call("d", json!({}))],
        ));
    }
    // 10 runs that succeed, but 3 with a tool error inside the sequence.
    for i in 0..10 {
        let mut steps = vec![call("e", json!({})), call("f", json!({}))];
        if i < 3 {
            steps[1].error = Some("boom".into());
        }
        runs.push(run(true, steps));
    }
    // 10 runs of g then h, where h's keys or types differ run to run.
    for i in 0..10 {
        let args = if i % 2 == 0 {
            json!({ format!("k{i}"): 1 })
        } else {
            json!({"k": if i % 3 == 0 { json!("s") } else { json!([i]) }, "extra": i})
        };
        runs.push(run(true, vec![call("g", json!({})), call("h", args)]));
    }
    // Control: 5 clean runs of x then y pass.
    for _ in 0..5 {
        runs.push(run(
            true,
            vec![call("x", json!({"n": 1})), call("y", json!({}))],
        ));
    }
    let (_d, store) = store_with(&runs);
    let report = mine(&store, &MineConfig::default()).expect("mine");
    let found: Vec<Vec<&str>> = report.candidates.iter().map(tools).collect();
    assert_eq!(found, [["x", "y"]]);
    // Loosened, the rejected ones come back for the right reasons.
    let loose = MineConfig {
        min_support: 4,
        min_success: 0.7,
        ..MineConfig::default()
    };
    let report = mine(&store, &loose).expect("mine");
    let found: Vec<Vec<&str>> = report.candidates.iter().map(tools).collect();
    for expected in [["a", "b"], ["c", "d"], ["e", "f"]] {
        assert!(found.contains(&expected.to_vec()), "{found:?}");
    }
    assert!(!found.iter().any(|t| t[0] == "g"), "{found:?}");
}

#[test]
fn only_the_models_calls_count_and_a_run_counts_once() {
    let mut runs = Vec::new();
    for _ in 0..5 {
        let mut steps = planted();
        // A pipeline's own steps in between are not the model's.
        let mut piped = call("write_file", json!({"path": "x"}));
        piped.detail["caller"] = json!("pipeline");
        steps.insert(1, piped);
        // The same sequence twice in one run: still one run.
        steps.extend(planted());
        runs.push(run(true, steps));
    }
    let (_d, store) = store_with(&runs);
    let report = mine(&store, &MineConfig::default()).expect("mine");
    let best = &report.candidates[0];
    assert_eq!(best.support, 5);
    assert!(!best.tools.iter().any(|t| t == "write_file"), "{best:?}");
    assert_eq!(best.run_ids.len(), 5);
}

#[test]
fn a_full_table_is_pruned_to_the_frequent_and_says_supports_are_bounds() {
    let mut runs = Vec::new();
    for i in 0..200 {
        let mut steps = vec![call(&format!("rare{i}"), json!({}))];
        steps.extend(planted());
        steps.push(call(&format!("other{i}"), json!({})));
        runs.push(run(true, steps));
    }
    let (_d, store) = store_with(&runs);
    let small = MineConfig {
        max_patterns: 64,
        sample_runs: 3,
        ..MineConfig::default()
    };
    let report = mine(&store, &small).expect("mine");
    let bound = report.undercount_bound.expect("pruned");
    let best = &report.candidates[0];
    assert_eq!(tools(best), ["find_file", "read_file", "skill_summarizer"]);
    assert!(best.support + u64::from(bound) >= 200 && best.support <= 200);
    assert_eq!(best.run_ids.len(), 3);
    assert!(report.sequences <= 64);
    let exact = mine(&store, &MineConfig::default()).expect("mine");
    assert_eq!(exact.undercount_bound, None);
    assert_eq!(exact.candidates[0].support, 200);
}

#[test]
fn bad_settings_are_refused_by_name() {
    let (_d, store) = store_with(&[]);
    let with = |change: fn(&mut MineConfig)| {
        let mut c = MineConfig::default();
        change(&mut c);
        c
    };
    for (cfg, word) in [
        (with(|c| c.max_len = 1), "max_len"),
        (with(|c| c.max_len = 9), "max_len"),
        (with(|c| c.min_support = 0), "min_support"),
        (with(|c| c.min_success = 80.0), "min_success"),
    ] {
        let e = mine(&store, &cfg).expect_err("refused").to_string();
        assert!(e.contains(word), "{e}");
    }
    let e = toml::from_str::<MineConfig>("min_success = 80").expect_err("not a share");
    assert!(e.to_string().contains("is not a share"), "{e}");
}
