//! Issue 13, "honest learning", through the CLI: a removed rule stays
//! removed, and a person's verdict on a run feeds the learning cycle.

use crate::harness;

use harness::Workspace;
use serde_json::Value;

fn rule<'a>(rules: &'a Value, id: &str) -> Option<&'a Value> {
    rules["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .find(|r| r["id"] == id)
}

#[test]
fn a_removed_rule_is_not_learned_again_until_restored() {
    let ws = Workspace::new();
    let task = "Email Dana about the review at 3pm";
    let id = "prevent-timezoneerror-email-writer";
    assert_eq!(ws.run_cli(&["run", task]).code, 1);
    assert!(ws.run_ok(&["learn"]).contains(&format!("+ {id}")));

    let removed = ws.run_ok(&["rules", "remove", id]);
    assert!(removed.contains("rules restore"), "{removed}");
    // The class keeps failing; the next cycles leave the rule removed.
    for _ in 0..3 {
        assert_eq!(ws.run_cli(&["run", task]).code, 1);
    }
    let learned = ws.run_ok(&["learn"]);
    assert!(
        !learned.contains(&format!("+ {id}")) && learned.contains("removed by the operator"),
        "{learned}"
    );
    let r = ws.run_cli(&["run", task, "--json"]);
    let v = r.json();
    assert!(
        v["rules_applied"]
            .as_array()
            .expect("rules")
            .iter()
            .all(|a| a["id"] != id),
        "a removed rule does not fire: {v}"
    );
    let rules: Value =
        serde_json::from_str(&ws.run_ok(&["rules", "list", "--json"])).expect("json");
    assert_eq!(rule(&rules, id).expect("tombstone")["removed"], true);
    let listed = ws.run_ok(&["rules", "list"]);
    assert!(listed.contains("removed by the operator"), "{listed}");

    let e = ws.run_cli(&["rules", "enable", id]);
    assert_ne!(e.code, 0);
    assert!(e.stderr.contains("rules restore"), "{}", e.stderr);

    assert!(ws.run_ok(&["rules", "restore", id]).contains("restored"));
    let r = ws.run_cli(&["run", task, "--json"]);
    let fired = r.json()["rules_applied"]
        .as_array()
        .expect("rules")
        .iter()
        .any(|a| a["id"] == id);
    assert!(fired, "restored, it fires again: {}", r.stdout);
}

#[test]
fn a_learned_flag_takes_effect_over_its_declared_default() {
    let ws = Workspace::new();
    let task = "Email customers about our free upgrade";
    let r = ws.run_cli(&["run", task, "--json"]);
    assert_eq!(r.json()["failure"]["class"], "SpamTriggerError");
    assert!(
        ws.run_ok(&["learn"])
            .contains("+ prevent-spamtriggererror-email-writer")
    );
    // `rephrase_spam` is declared with default false: the prevention rule
    // still sets it, so the first attempt succeeds (no validation retry).
    let v = ws.run_cli(&["run", task, "--json"]).json();
    assert!(v["failure"].is_null(), "{v}");
    assert_eq!(v["attempts"], 1, "{v}");
    assert_eq!(v["context"]["rephrase_spam"], true);
    let prevention = &v["rules_applied"][0];
    assert_eq!(prevention["id"], "prevent-spamtriggererror-email-writer");
    assert!(
        prevention["effect"]
            .as_str()
            .unwrap_or("")
            .contains("set rephrase_spam = true"),
        "{v}"
    );
    // A value the user gave is theirs: `-c rephrase_spam=false` is kept
    // (the skill then fails as it says it would).
    let v = ws
        .run_cli(&["run", task, "-c", "rephrase_spam=false", "--json"])
        .json();
    assert_eq!(v["context"]["rephrase_spam"], false, "{v}");
}

/// Announces offers; no validator checks its words.
const PROMO: &str = r#"metadata:
  skillhost:
    template: "Great news: {{task}}""#;

#[test]
fn a_persons_verdict_feeds_the_learning_cycle() {
    let ws = Workspace::new();
    ws.add_skill("promo", PROMO, None);
    let skills = ws.skills.to_string_lossy().into_owned();
    let run = |task: &str| {
        ws.run_cli(&[
            "--skills", &skills, "run", task, "--skill", "promo", "--json",
        ])
    };
    let r = run("our free upgrade, act now");
    assert_eq!(r.code, 0, "no validator catches it: {}", r.stderr);
    let id = r.json()["run_id"].as_i64().expect("recorded").to_string();
    assert!(
        ws.run_ok(&["learn"]).contains("0 rule(s) added"),
        "nothing failed yet"
    );

    // Bad input is named, and nothing is stored.
    let bad = ws.run_cli(&["runs", "mark", &id, "--failed", "--class", "spam words"]);
    assert_ne!(bad.code, 0);
    assert!(bad.stderr.contains("class `spam words`"), "{}", bad.stderr);
    let none = ws.run_cli(&["runs", "mark", "999999", "--failed"]);
    assert_ne!(none.code, 0);
    assert!(none.stderr.contains("no run 999999"), "{}", none.stderr);
    assert_ne!(
        ws.run_cli(&["runs", "mark", &id]).code,
        0,
        "--failed or --ok"
    );

    let marked = ws.run_ok(&[
        "runs",
        "mark",
        &id,
        "--failed",
        "--class",
        "SpamTriggerError",
        "--note",
        "reads like spam",
    ]);
    assert!(marked.contains("SpamTriggerError"), "{marked}");
    let shown = ws.run_ok(&["runs", "show", &id]);
    assert!(
        shown.contains("succeeded")
            && shown.contains("marked by a person: failed (SpamTriggerError): reads like spam"),
        "the record is kept beside the verdict: {shown}"
    );
    // The shipped pattern for the class turns the verdict into a rule.
    let learned = ws.run_ok(&["learn"]);
    assert!(
        learned.contains("+ prevent-spamtriggererror-promo"),
        "{learned}"
    );
    let v = run("a free gift for you").json();
    assert!(
        v["rules_applied"]
            .as_array()
            .expect("rules")
            .iter()
            .any(|a| a["id"] == "prevent-spamtriggererror-promo"),
        "{v}"
    );
}

#[test]
fn a_failure_marked_ok_is_no_evidence_for_a_rule() {
    let ws = Workspace::new();
    let r = ws.run_cli(&["run", "Email Dana about the review at 3pm", "--json"]);
    assert_eq!(r.json()["failure"]["class"], "TimezoneError");
    let id = r.json()["run_id"].as_i64().expect("recorded").to_string();
    assert!(
        ws.run_ok(&["runs", "mark", &id, "--ok"])
            .contains("marked run")
    );
    let learned = ws.run_ok(&["learn"]);
    assert!(
        !learned.contains("timezoneerror"),
        "an accepted failure teaches nothing: {learned}"
    );
}
