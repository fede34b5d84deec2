//! The learning loop end to end through the CLI: runs recorded, failures
//! turned into rules, rules firing and keeping statistics, a harmful rule
//! disabled, concurrent writers, and the ablation command.

use crate::harness;

use harness::Workspace;
use serde_json::{Value, json};

#[test]
fn handler_path_timezone_error_learned_without_guessing() {
    let ws = Workspace::new();
    let task = "Email Dana about the review at 3pm";
    for _ in 0..3 {
        let r = ws.run_cli(&["run", task, "--json"]);
        assert_eq!(r.code, 1);
        assert_eq!(r.json()["failure"]["class"], "TimezoneError");
    }
    let runs: Value = serde_json::from_str(&ws.run_ok(&["runs", "list", "--json"])).expect("json");
    assert_eq!(runs.as_array().expect("runs").len(), 3);
    assert_eq!(runs[0]["failure_class"], "TimezoneError");

    let learned = ws.run_ok(&["learn"]);
    assert!(
        learned.contains("+ prevent-timezoneerror-email-writer"),
        "{learned}"
    );
    let again = ws.run_ok(&["learn"]);
    assert!(
        again.contains("0 rule(s) added"),
        "a second cycle duplicates nothing: {again}"
    );

    // The learned rule never invents a timezone: with none given and no
    // operator default, the handler run is refused before the call, with
    // the exact fix.
    let r = ws.run_cli(&["run", task, "--json"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let v = r.json();
    assert!(v["output"].is_null(), "no answer with a guessed zone: {v}");
    assert!(!r.stdout.contains("UTC"), "no invented timezone: {v}");
    assert_eq!(v["failure"]["class"], "RequiredField", "{v}");
    let fix = v["failure"]["message"].as_str().unwrap_or("");
    assert!(
        fix.contains("-c timezone=") && fix.contains("[defaults] timezone"),
        "{fix}"
    );
    assert!(
        v["trajectory"].as_array().is_some_and(|t| t.is_empty()),
        "refused before the handler was called: {v}"
    );
    // The user's value is used as given.
    let r = ws.run_cli(&["run", task, "-c", "timezone=Asia/Tokyo", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.json()["output"]["body"]
            .as_str()
            .unwrap_or("")
            .contains("3pm (Asia/Tokyo)"),
        "{}",
        r.stdout
    );

    // An operator default is used, and the run says so.
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[defaults]\ntimezone = \"Europe/Berlin\"\n",
    )
    .expect("write skillhost.toml");
    let r = ws.run_cli(&["run", task, "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert!(
        v["output"]["body"]
            .as_str()
            .unwrap_or("")
            .contains("3pm (Europe/Berlin)"),
        "{v}"
    );
    assert!(
        v["notices"]
            .as_array()
            .expect("notices")
            .iter()
            .any(|n| n.as_str().is_some_and(|n| {
                n.contains("Europe/Berlin") && n.contains("[defaults] in skillhost.toml")
            })),
        "{v}"
    );
    let text = ws.run_cli(&["run", task]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stderr.contains("[defaults] in skillhost.toml"),
        "the text output says so too: {}",
        text.stderr
    );
    let fired: Vec<&str> = v["rules_applied"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|a| a["id"].as_str())
        .collect();
    assert_eq!(fired, vec!["prevent-timezoneerror-email-writer"]);
    let run_id = v["run_id"].as_i64().expect("recorded");
    let explained = ws.run_ok(&["rules", "explain", &run_id.to_string()]);
    assert!(
        explained.contains("prevent-timezoneerror-email-writer")
            && explained.contains("set timezone"),
        "{explained}"
    );

    // The rule's statistics went up; it can be disabled and enabled.
    let rules: Value =
        serde_json::from_str(&ws.run_ok(&["rules", "list", "--json"])).expect("json");
    let rule = rules["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .find(|r| r["id"] == "prevent-timezoneerror-email-writer")
        .expect("rule")
        .clone();
    assert_eq!(
        (rule["applied"].as_u64(), rule["succeeded"].as_u64()),
        (Some(3), Some(2)),
        "fired on the refused run and the two with the default; not on the one with a timezone"
    );
    ws.run_ok(&["rules", "disable", "prevent-timezoneerror-email-writer"]);
    // The disabled rule no longer fires. The handler fails on its own, with
    // no answer: the validation rule has no output to find its evidence in,
    // so it does not fire on the class name alone.
    let v = ws.run_cli(&["run", task, "--json"]).json();
    assert_eq!(v["rules_applied"], json!([]), "{v}");
    assert_eq!(v["attempts"], 1);
    assert_eq!(v["failure"]["class"], "TimezoneError", "{v}");
    ws.run_ok(&["rules", "enable", "prevent-timezoneerror-email-writer"]);
    assert_eq!(ws.run_cli(&["run", task]).code, 0);

    // Export is JSON Lines, one run per line.
    let export = ws.run_ok(&["runs", "export"]);
    assert_eq!(export.lines().count(), 9);
    for line in export.lines() {
        serde_json::from_str::<Value>(line).expect("each line is JSON");
    }
}

/// A skill whose template greets casually, and whose validator fails a
/// formal request answered that way: a class no shipped pattern knows.
const GREETER: &str = r#"metadata:
  context_fields:
    name: { type: string, default: "Ada" }
    greeting: { type: string, default: "Hey" }
  skillhost:
    validators:
      - class: ToneError
        message: "a formal request got a casual greeting"
        when:
          - { field: task.description, op: matches, value: "(?i)\\bformal\\b" }
          - { field: output.body, op: matches, value: "^Hey" }
    template: "{{context.greeting}} {{context.name}}, about: {{task}}""#;

/// Fails every request to sign, whatever the context says.
const MEMO: &str = r#"metadata:
  skillhost:
    validators:
      - class: SignatureError
        message: "the memo is not signed"
        when:
          - { field: task.description, op: matches, value: "(?i)\\bsign" }
    template: "Memo: {{task}}""#;

#[test]
fn a_model_proposes_rules_for_unknown_classes_and_replay_decides() {
    let ws = Workspace::new();
    ws.add_skill("greeter", GREETER, None);
    ws.add_skill("memo", MEMO, None);
    let skills = ws.skills.to_string_lossy().into_owned();
    let run = |skill: &str, task: &str| {
        ws.run_cli(&["--skills", &skills, "run", task, "--skill", skill, "--json"])
    };
    for i in 0..3 {
        let r = run("greeter", &format!("a formal invitation #{i}"));
        assert_eq!(r.json()["failure"]["class"], "ToneError", "{}", r.stderr);
        assert_eq!(run("greeter", &format!("a quick hello #{i}")).code, 0);
        assert_eq!(run("memo", &format!("sign the lease #{i}")).code, 1);
        assert_eq!(run("memo", &format!("note the budget #{i}")).code, 0);
    }
    // The failed answers are kept in the record: a validation rule is
    // replayed against what the skill wrote.
    let runs: Value =
        serde_json::from_str(&ws.run_ok(&["runs", "list", "--json"])).expect("runs json");
    let failed = runs
        .as_array()
        .expect("runs")
        .iter()
        .find(|r| r["failure_class"] == "ToneError")
        .expect("a ToneError run");
    assert!(
        failed["output"]
            .as_str()
            .unwrap_or("")
            .starts_with("Hey Ada"),
        "{failed}"
    );

    // Without a model the classes are only reported.
    let plain = ws.run_ok(&["--skills", &skills, "learn"]);
    assert_eq!(
        plain.matches("no pattern for this class").count(),
        2,
        "{plain}"
    );
    assert!(plain.contains("skillhost learn --model"), "{plain}");

    // The model answers in the order of the groups: greeter, then memo.
    // Its greeter rule singles out the formal requests; its memo rule
    // would fire on every memo.
    let greeter_rule = json!({
        "kind": "prevention",
        "conditions": [{"field": "task.description", "op": "matches", "value": "(?i)\\bformal\\b"}],
        "actions": [{"action": "set_field", "field": "greeting", "value": "Dear", "force": true}],
        "rationale": "formal requests need a formal greeting"
    });
    let memo_rule = json!({
        "kind": "prevention",
        "conditions": [{"field": "task.description", "op": "exists"}],
        "actions": [{"action": "add_instruction", "text": "Sign the memo."}]
    });
    let script = ws.workspace.join("proposals.json");
    let turns = json!([
        {"text": format!("Here is the rule:\n```json\n{greeter_rule}\n```")},
        {"text": memo_rule.to_string()}
    ]);
    std::fs::write(&script, turns.to_string()).expect("write script");
    let model = format!("scripted:{}", script.display());
    let learned = ws.run_ok(&["--skills", &skills, "learn", "--model", &model]);
    assert!(
        learned.contains("+ proposed-toneerror-greeter")
            && learned
                .contains("kept: matches 3 of 3 failures (100%) and 0 of 3 successful runs (0%)"),
        "{learned}"
    );
    assert!(
        learned.contains("- proposed-signatureerror-memo (rejected")
            && learned.contains("too many successful runs matched (at most 10%)"),
        "{learned}"
    );

    let shown: Value =
        serde_json::from_str(&ws.run_ok(&["rules", "show", "proposed-signatureerror-memo"]))
            .expect("rule json");
    assert_eq!(shown["rejected"], true);
    assert_eq!(shown["origin"]["pattern"], "model");
    assert_eq!(
        (
            shown["replay"]["failures_matched"].as_u64(),
            shown["replay"]["successes_matched"].as_u64()
        ),
        (Some(3), Some(3))
    );
    let listed = ws.run_ok(&["rules", "list"]);
    assert!(
        listed.contains("rejected: too many successful runs"),
        "{listed}"
    );

    // The kept rule fixes formal requests; the rejected one never fires.
    let v = run("greeter", "a formal invitation to the gala").json();
    assert!(v["failure"].is_null(), "{v}");
    assert!(
        v["output"]["body"]
            .as_str()
            .unwrap_or("")
            .starts_with("Dear Ada"),
        "{v}"
    );
    assert_eq!(v["rules_applied"][0]["id"], "proposed-toneerror-greeter");
    let v = run("memo", "sign the new lease").json();
    assert_eq!(v["failure"]["class"], "SignatureError");
    assert_eq!(v["rules_applied"], json!([]));

    // The model is not asked again about classes it has answered for: an
    // empty script would fail if it were.
    std::fs::write(&script, "[]").expect("empty script");
    let again = ws.run_ok(&["--skills", &skills, "learn", "--model", &model]);
    assert!(
        again.contains("0 rule(s) added") && !again.contains("asking the model failed"),
        "{again}"
    );
    assert!(
        again.contains("rule proposed-toneerror-greeter addresses it")
            && again.contains("it is asked again once the class failed 6 times"),
        "each class says why the model was not asked: {again}"
    );
}

#[test]
fn a_harmful_rule_is_disabled_with_its_reason() {
    let ws = Workspace::new();
    ws.write_harmful_summarizer_rule();
    let args = [
        "run",
        "summarize",
        "--skill",
        "text-summarizer",
        "-c",
        "text=One sentence here. Another one.",
    ];
    for i in 0..8 {
        let r = ws.run_cli(&args);
        assert_eq!(r.code, 1, "run {i}: the rule breaks the run");
    }
    let set: Value = serde_json::from_str(&ws.run_ok(&["rules", "list", "--json"])).expect("json");
    let r = &set["rules"][0];
    assert_eq!(r["enabled"], false);
    assert!(
        r["disabled_reason"]
            .as_str()
            .unwrap_or("")
            .contains("0 of 8"),
        "{r}"
    );
    ws.run_ok(&args);
}

#[test]
fn concurrent_processes_lose_no_runs() {
    let ws = Workspace::new();
    ws.add_skill(
        "quick",
        "metadata:\n  skillhost:\n    template: \"done: {{task}}\"",
        None,
    );
    let skills = ws.skills.to_string_lossy().into_owned();
    let children: Vec<_> = (0..6)
        .map(|p| {
            let skills = skills.clone();
            let mut cmd = ws.cli();
            cmd.args([
                "--skills",
                &skills,
                "run",
                &format!("task from process {p}"),
                "--skill",
                "quick",
            ]);
            std::thread::spawn(move || {
                for _ in 0..5 {
                    let out = cmd.output().expect("run");
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for c in children {
        c.join().expect("writer thread");
    }
    let runs: Value =
        serde_json::from_str(&ws.run_ok(&["runs", "list", "--limit", "100", "--json"]))
            .expect("json");
    assert_eq!(runs.as_array().expect("runs").len(), 30);
}

fn arm<'a>(sweep: &'a Value, name: &str) -> &'a Value {
    sweep["summary"]
        .as_array()
        .expect("summary")
        .iter()
        .find(|a| a["arm"] == name)
        .expect("arm")
}

#[test]
fn ablation_reports_every_arm_both_verdicts_and_the_compliance_sweep() {
    let ws = Workspace::new();
    let open_world = harness::repo_root().join("tests/data/learning/email-open-world.jsonl");
    for extra in [vec![], vec!["--tasks", open_world.to_str().expect("utf8")]] {
        let mut args = vec![
            "eval",
            "ablation",
            "--scenario",
            "email",
            "--seeds",
            "1",
            "--train",
            "30",
            "--eval",
            "30",
            "--compliance",
            "0.5,0.9",
            "--json",
        ];
        args.extend(extra);
        let report: Value = serde_json::from_str(&ws.run_ok(&args)).expect("json");
        let sweeps = report["sweeps"].as_array().expect("sweeps");
        assert_eq!(sweeps.len(), 2);
        for sweep in sweeps {
            for name in [
                "baseline",
                "retry-only",
                "feedback-retry",
                "prevention",
                "all-rules",
                "rules+feedback",
            ] {
                let a = arm(sweep, name);
                for field in [
                    "validator_success",
                    "truth_success",
                    "agreement",
                    "model_calls_per_task",
                ] {
                    assert!(a[field].is_number(), "{name}.{field}: {a}");
                }
            }
        }
        // Compliance is a parameter of the model, not a constant: the
        // instructions in its prompt are followed more at 0.9.
        let truth = |sweep: &Value| {
            sweep["summary"]
                .as_array()
                .expect("summary")
                .iter()
                .map(|a| a["truth_success"].as_f64().expect("truth"))
                .sum::<f64>()
        };
        assert!(
            truth(&sweeps[1]) > truth(&sweeps[0]),
            "{} vs {}",
            truth(&sweeps[1]),
            truth(&sweeps[0])
        );
        assert!(arm(&sweeps[0], "baseline")["agreement"].as_f64() < Some(1.0));
    }
}

#[test]
fn ablation_writes_every_judged_answer_for_reading_by_hand() {
    let ws = Workspace::new();
    let answers = ws.workspace.join("answers.jsonl");
    let report: Value = serde_json::from_str(&ws.run_ok(&[
        "eval",
        "ablation",
        "--seeds",
        "1",
        "--train",
        "5",
        "--eval",
        "4",
        "--compliance",
        "0.5",
        "--answers",
        answers.to_str().expect("utf8"),
        "--json",
    ]))
    .expect("json");
    let lines: Vec<Value> = std::fs::read_to_string(&answers)
        .expect("answers written")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let judged: u64 = report["sweeps"][0]["seeds"][0]["arms"]
        .as_array()
        .expect("arms")
        .iter()
        .map(|a| a["judged"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(lines.len() as u64, judged, "one line per judged answer");
    assert_eq!(judged, 6 * 4, "six arms, four labelled tasks");
    for l in &lines {
        for field in ["seed", "arm", "task", "answer", "validated", "misses"] {
            assert!(l.get(field).is_some(), "{field} in {l}");
        }
        // The checker's misses beside the answer they judge.
        let subject = l["answer"]
            .as_str()
            .is_some_and(|a| a.trim_start().to_lowercase().starts_with("subject:"));
        let format_miss = l["misses"]
            .as_array()
            .expect("misses")
            .iter()
            .any(|m| m["class"] == "FormatError");
        assert_eq!(format_miss, !subject, "{l}");
    }
}
