//! Usage statistics, retrieval and mining at the command line: what runs
//! record shows in `skills list`, pinned skills and usage order `skills
//! search` and selection, `--tag` filters, and `forge mine --dry-run`
//! finds the sequences planted in the recorded runs.

use std::path::Path;

use serde_json::Value;
use skillhost::store::{RunLog, RunRecord, SqliteStore, StepRecord};

use crate::harness::Workspace;
use crate::support::write;

fn write_skill(dir: &Path, name: &str, front: &str) {
    let md = format!("---\nname: {name}\ndescription: Skill {name}.\n{front}\n---\n\nBody.\n");
    write(dir, &format!("{name}/SKILL.md"), md);
}

fn by_name<'a>(items: &'a [Value], name: &str) -> &'a Value {
    items
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {items:?}"))
}

fn json_list(ws: &Workspace, args: &[&str]) -> Vec<Value> {
    serde_json::from_str(&ws.run_ok(args)).expect("a JSON array")
}

fn record(at: i64, skill: &str, success: bool, steps: Vec<StepRecord>) -> RunRecord {
    RunRecord {
        steps,
        ..RunRecord::new(skill, success, at)
    }
}

/// Runs written straight into the workspace's store.
fn store_runs(ws: &Workspace, runs: &[RunRecord]) {
    let store = SqliteStore::open_in(&ws.workspace.join(".skillhost")).expect("open the store");
    store.record_runs(runs).expect("record");
}

/// A skill whose template answers, failing (class BadTask) when the task
/// says "bad".
const MIXED: &str = r#"metadata:
  skillhost:
    validators:
      - class: BadTask
        when:
          - { field: task.description, op: matches, value: "bad" }
    template: "done: {{task}}""#;

#[test]
fn list_shows_each_source_and_the_usage_that_runs_recorded() {
    let ws = Workspace::new();
    let state = ws.workspace.join(".skillhost");
    write_skill(&ws.home.join("skills"), "from-user", "");
    write_skill(&ws.home.join("installed"), "from-installed", "");
    write_skill(&state.join("skills"), "mixed", MIXED);
    write_skill(&state.join("skills").join("forged"), "from-forge", "");
    write_skill(&ws.skills, "from-path", "");
    let skills = ws.skills.display().to_string();

    // Before any run: no store is made by listing, and no usage.
    let items = json_list(&ws, &["--skills", &skills, "skills", "list", "--json"]);
    assert!(!state.join("skillhost.db").exists());
    assert_eq!(by_name(&items, "mixed")["usage"]["uses"], 0);

    for (task, code) in [("good one", 0), ("bad one", 1), ("good two", 0)] {
        let r = ws.run_cli(&["--skills", &skills, "run", task, "--skill", "mixed"]);
        assert_eq!(r.code, code, "{task}: {}\n{}", r.stdout, r.stderr);
    }

    let items = json_list(&ws, &["--skills", &skills, "skills", "list", "--json"]);
    for (name, source) in [
        ("from-user", "user"),
        ("from-installed", "installed"),
        ("mixed", "workspace"),
        ("from-forge", "forged"),
        ("from-path", "path"),
    ] {
        assert_eq!(by_name(&items, name)["source"], source, "{name}");
    }
    assert!(
        items.iter().any(|i| i["source"] == "bundled"),
        "the bundled skills are listed too"
    );
    let usage = &by_name(&items, "mixed")["usage"];
    assert_eq!(
        (usage["uses"].as_u64(), usage["successes"].as_u64()),
        (Some(3), Some(2))
    );
    // 1, then 0.7·1 = 0.7, then 0.3 + 0.7·0.7 = 0.79.
    let rate = usage["success_rate"].as_f64().expect("a rate");
    assert!((rate - 0.79).abs() < 1e-9, "{usage}");
    assert!(
        usage["last_used"]
            .as_i64()
            .is_some_and(|t| t > 1_600_000_000),
        "{usage}"
    );
    assert_eq!(by_name(&items, "from-user")["usage"]["uses"], 0);
    // `--format json` is the same thing.
    let same = json_list(
        &ws,
        &["--skills", &skills, "skills", "list", "--format", "json"],
    );
    assert_eq!(same, items);

    let table = ws.run_ok(&["--skills", &skills, "skills", "list"]);
    let header = table.lines().next().unwrap_or_default();
    for col in [
        "NAME",
        "SOURCE",
        "USES",
        "SUCCESS",
        "LAST USED",
        "DESCRIPTION",
    ] {
        assert!(header.contains(col), "{table}");
    }
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row for {name}: {table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    let mixed = row("mixed");
    assert_eq!(mixed[1], "workspace");
    assert_eq!(&mixed[3..5], ["3", "79%"], "{mixed:?}");
    assert!(mixed[5].starts_with("20"), "a date: {mixed:?}");
    assert_eq!(&row("from-forge")[1..2], ["forged"]);
    assert_eq!(&row("from-installed")[1..2], ["installed"]);
    assert_eq!(&row("from-user")[3..6], ["0", "-", "-"]);
}

#[test]
fn pinned_skills_come_first_usage_breaks_ties_and_tags_filter() {
    let ws = Workspace::new();
    let root = ws.workspace.join(".skillhost").join("skills");
    // The same trigger and no text match: every score is exactly 100.
    for name in ["alpha", "beta", "gamma", "zeta"] {
        write_skill(&root, name, "metadata:\n  triggers: [convert]");
    }
    write_skill(&root, "tagged", "tags: [Reporting]");
    write_skill(&root, "by-role", "roles: [reporting]");
    write_skill(
        &root,
        "by-stage",
        "metadata:\n  pipeline_stages: [reporting]",
    );
    store_runs(
        &ws,
        &[
            record(1, "alpha", false, vec![]),
            record(2, "alpha", false, vec![]),
            record(3, "beta", true, vec![]),
            record(4, "beta", true, vec![]),
            record(5, "zeta", false, vec![]),
        ],
    );
    let names = |items: &[Value]| -> Vec<String> {
        items
            .iter()
            .filter_map(|i| i["name"].as_str().map(str::to_owned))
            .collect()
    };
    let selected = |ws: &Workspace| -> String {
        let out: Value = serde_json::from_str(&ws.run_ok(&["run", "convert this", "--json"]))
            .expect("run --json");
        out["skill"].as_str().unwrap_or_default().to_owned()
    };

    // Unpinned: the better record first, never-used in the middle.
    let items = json_list(&ws, &["skills", "search", "convert", "-k", "10", "--json"]);
    assert_eq!(names(&items), ["beta", "gamma", "alpha", "zeta"]);
    assert!(items.iter().all(|i| i["score"] == items[0]["score"]));
    assert_eq!(items[0]["usage"]["uses"], 2);
    assert_eq!(selected(&ws), "beta");

    // Pinned: first in search and in selection, whatever its record.
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[catalog]\npinned = [\"zeta\", \"nowhere\"]\n",
    )
    .expect("write config");
    let r = ws.run_cli(&["skills", "search", "convert", "-k", "10", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let items: Vec<Value> = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(names(&items), ["zeta", "beta", "gamma", "alpha"]);
    assert_eq!(items[0]["pinned"], true);
    assert!(
        r.stderr.contains("nowhere"),
        "an unknown pin is named: {}",
        r.stderr
    );
    assert_eq!(selected(&ws), "zeta");
    let table = ws.run_ok(&["skills", "search", "convert"]);
    assert!(
        table.lines().nth(1).is_some_and(|l| l.starts_with("zeta")),
        "{table}"
    );

    // A tag matches tags, roles or stages; alone it lists them all.
    let items = json_list(&ws, &["skills", "search", "--tag", "reporting", "--json"]);
    assert_eq!(names(&items), ["by-role", "by-stage", "tagged"]);
    let items = json_list(
        &ws,
        &[
            "skills",
            "search",
            "convert",
            "--tag",
            "reporting",
            "--json",
        ],
    );
    assert!(items.is_empty(), "{items:?}");
    let r = ws.run_cli(&["skills", "search"]);
    assert_ne!(r.code, 0, "a query or a tag is needed");
}

#[cfg(feature = "forge")]
mod mining {
    use serde_json::json;

    use super::*;

    fn call(tool: &str, arguments: Value) -> StepRecord {
        StepRecord {
            kind: "tool".into(),
            tool: Some(tool.into()),
            detail: json!({
                "kind": "tool", "step": 1, "caller": "model", "tool": tool,
                "arguments": arguments, "result": "ok",
            }),
            error: None,
            error_class: None,
            duration_us: 1,
        }
    }

    #[test]
    fn forge_mine_dry_run_lists_the_planted_sequence() {
        let ws = Workspace::new();
        let ok_runs = ws.run_cli(&["forge", "mine", "--dry-run"]);
        assert_eq!(ok_runs.code, 0, "{}", ok_runs.stderr);
        assert!(
            ok_runs.stdout.contains("no candidates"),
            "{}",
            ok_runs.stdout
        );

        let mut runs = Vec::new();
        for i in 0..8 {
            let steps = vec![
                call(&format!("noise{i}"), json!({})),
                call("find_file", json!({"pattern": format!("q{i}")})),
                call("read_file", json!({"path": format!("notes/{i}.md")})),
                call("write_file", json!({"path": "out/brief.md", "text": "..."})),
            ];
            runs.push(record(i, "notes", i != 7, steps));
        }
        // Too few: three runs of another pair.
        for i in 0..3 {
            runs.push(record(
                i,
                "notes",
                true,
                vec![call("a", json!({})), call("b", json!({}))],
            ));
        }
        for r in &mut runs {
            r.tier = "model".into();
        }
        store_runs(&ws, &runs);

        let table = ws.run_ok(&["forge", "mine", "--dry-run"]);
        let row = table
            .lines()
            .find(|l| l.contains("find_file → read_file → write_file"))
            .unwrap_or_else(|| panic!("{table}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            &cells[..3],
            ["8", "88%", "16"],
            "support, success, steps saved"
        );
        assert!(!table.contains("a → b"), "{table}");

        let report: Value =
            serde_json::from_str(&ws.run_ok(&["forge", "mine", "--dry-run", "--json"]))
                .expect("JSON report");
        let best = &report["candidates"][0];
        assert_eq!(
            best["tools"],
            json!(["find_file", "read_file", "write_file"])
        );
        assert_eq!(
            best["arg_shapes"][2],
            json!({"path": "string", "text": "string"})
        );
        assert_eq!(
            (best["support"].as_u64(), best["steps_saved"].as_u64()),
            (Some(8), Some(16))
        );
        assert_eq!(best["run_ids"].as_array().map(Vec::len), Some(8));
        assert_eq!(report["runs"], 11);

        // Stricter settings from the flags leave nothing.
        let strict = ws.run_ok(&["forge", "mine", "--dry-run", "--min-success", "0.9"]);
        assert!(strict.contains("no candidates"), "{strict}");
        let r = ws.run_cli(&["forge", "mine", "--dry-run", "--max-len", "12"]);
        assert_ne!(r.code, 0);
        assert!(r.stderr.contains("max_len"), "{}", r.stderr);

        // Without --dry-run, a candidate whose skill is gone is skipped,
        // saying why, and nothing is written.
        let forged = ws.workspace.join(".skillhost/skills/forged");
        let r = ws.run_cli(&["forge", "mine"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout.contains("skill `notes` is not in the catalog"),
            "{}",
            r.stdout
        );
        assert!(!forged.exists());

        // With the skill there, the best candidate becomes a forged skill
        // through the forge's writer, naming every supporting run.
        write_skill(
            &ws.workspace.join(".skillhost/skills"),
            "notes",
            "metadata:\n  skillhost:\n    capabilities:\n      files: { read: [notes], write: [out] }",
        );
        let r = ws.run_cli(&["forge", "mine"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout
                .lines()
                .any(|l| l.starts_with("forged `")
                    && l.contains("find_file → read_file → write_file")),
            "{}",
            r.stdout
        );
        let written: Vec<_> = std::fs::read_dir(&forged)
            .expect("forged root")
            .flatten()
            .map(|e| e.path().join("SKILL.md"))
            .filter(|p| p.is_file())
            .collect();
        assert_eq!(written.len(), 1, "{written:?}");
        let text = std::fs::read_to_string(&written[0]).expect("read");
        assert!(text.contains("source: forged"), "{text}");
        assert!(text.contains("find_file"), "{text}");

        // Mining again finds the same sequence: now a near-duplicate.
        let again = ws.run_ok(&["forge", "mine"]);
        let line = again
            .lines()
            .find(|l| l.contains("skipped find_file → read_file → write_file"))
            .unwrap_or_else(|| panic!("{again}"));
        assert!(line.contains("near-duplicate"), "{line}");
    }
}
