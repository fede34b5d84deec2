#![cfg(feature = "forge")]
//! `skillhost eval forge`: the ground truth, the CLI's two arms, and the
//! simulated agent staying within the tools it is offered.

use crate::harness;

use harness::Workspace;
use serde_json::Value;
use skillhost::eval::forge::{self, Miss};

fn summary<'a>(report: &'a Value, arm: &str) -> &'a Value {
    report["summary"]
        .as_array()
        .expect("summary")
        .iter()
        .find(|a| a["arm"] == arm)
        .expect("arm")
}

fn mean(arm: &Value, key: &str) -> f64 {
    arm[key]["mean"].as_f64().expect("mean")
}

#[test]
fn the_ground_truth_rejects_missing_misplaced_and_wrong_briefs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path();
    forge::write_workspace(ws).expect("scenario");
    let note = std::fs::read_to_string(ws.join("notes/q3-sales.md")).expect("note");
    let lines: Vec<&str> = note.lines().filter(|l| l.ends_with('.')).collect();
    let out = ws.join("out/q3-sales.md");

    assert_eq!(
        forge::check(ws, "q3-sales"),
        Err(Miss::Missing("out/q3-sales.md".into()))
    );
    // The right summary passes.
    std::fs::write(&out, format!("{} {}", lines[0], lines[2])).expect("w");
    assert_eq!(forge::check(ws, "q3-sales"), Ok(()));
    // Another note's facts do not.
    let other = std::fs::read_to_string(ws.join("notes/q4-sales.md")).expect("note");
    let other_line = other.lines().find(|l| l.ends_with('.')).expect("line");
    std::fs::write(&out, other_line).expect("w");
    assert!(matches!(
        forge::check(ws, "q3-sales"),
        Err(Miss::NotFromSource(_))
    ));
    // A made-up sentence does not.
    std::fs::write(&out, format!("{} Sales doubled.", lines[0])).expect("w");
    assert!(matches!(
        forge::check(ws, "q3-sales"),
        Err(Miss::NotFromSource(_))
    ));
    // A copy of the whole note is not a summary; empty is not a brief.
    std::fs::write(&out, &note).expect("w");
    assert_eq!(forge::check(ws, "q3-sales"), Err(Miss::NotASummary));
    std::fs::write(&out, "  \n").expect("w");
    assert_eq!(forge::check(ws, "q3-sales"), Err(Miss::Empty));
    // The right brief beside a stray file is in the wrong place.
    std::fs::write(&out, lines[1]).expect("w");
    std::fs::write(ws.join("out/brief.md"), lines[1]).expect("w");
    assert!(matches!(
        forge::check(ws, "q3-sales"),
        Err(Miss::WrongPlace(_))
    ));
    // The brief under another name is missing where it belongs.
    std::fs::remove_file(&out).expect("rm");
    assert!(matches!(
        forge::check(ws, "q3-sales"),
        Err(Miss::Missing(_))
    ));
}

#[test]
fn eval_forge_reports_both_arms_and_forging_cuts_model_calls() {
    let ws = Workspace::new();
    let phrasings = harness::repo_root().join("host/src/eval/forge_scenario/tasks.jsonl");
    for extra in [vec![], vec!["--tasks", phrasings.to_str().expect("utf8")]] {
        let mut args = vec!["eval", "forge", "--seeds", "2", "--json"];
        args.extend(extra);
        let r = ws.run_cli(&args);
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        let report: Value = serde_json::from_str(&r.stdout).expect("json");
        let (before, after) = (summary(&report, "before"), summary(&report, "after"));
        assert!(mean(after, "model_calls_per_task") < mean(before, "model_calls_per_task"));
        assert!(mean(after, "tool_steps_per_task") < mean(before, "tool_steps_per_task"));
        assert!(mean(after, "success") >= mean(before, "success"));
        for seed in report["seeds"].as_array().expect("seeds") {
            assert!(
                !seed["forged_skills"].as_array().expect("forged").is_empty(),
                "training forged a skill: {seed}"
            );
            let arms = seed["arms"].as_array().expect("arms");
            assert_eq!(arms[0]["forged_tool_tasks"], 0, "none before forging");
            assert!(arms[1]["forged_tool_tasks"].as_u64().expect("n") > 0);
        }
        // The simulated agent called only tools it was offered.
        assert_eq!(before["calls_not_offered"], 0);
        assert_eq!(after["calls_not_offered"], 0);
    }
    // The forge ran in scratch workspaces, never in the caller's.
    assert!(!ws.workspace.join(".skillhost/skills/forged").exists());
}
