//! Issue 13, "honest learning", through the CLI: a removed rule stays
//! removed, and a person's verdict on a run feeds the learning cycle.

use crate::harness;

use harness::Workspace;
use serde_json::Value;

fn ok(ws: &Workspace, args: &[&str]) -> String {
    let r = ws.run_cli(args);
    assert_eq!(r.code, 0, "skillhost {args:?}:\n{}\n{}", r.stdout, r.stderr);
    r.stdout
}

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
    assert!(ok(&ws, &["learn"]).contains(&format!("+ {id}")));

    let removed = ok(&ws, &["rules", "remove", id]);
    assert!(removed.contains("rules restore"), "{removed}");
    // The class keeps failing; the next cycles leave the rule removed.
    for _ in 0..3 {
        assert_eq!(ws.run_cli(&["run", task]).code, 1);
    }
    let learned = ok(&ws, &["learn"]);
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
    let rules: Value = serde_json::from_str(&ok(&ws, &["rules", "list", "--json"])).expect("json");
    assert_eq!(rule(&rules, id).expect("tombstone")["removed"], true);
    let listed = ok(&ws, &["rules", "list"]);
    assert!(listed.contains("removed by the operator"), "{listed}");

    let e = ws.run_cli(&["rules", "enable", id]);
    assert_ne!(e.code, 0);
    assert!(e.stderr.contains("rules restore"), "{}", e.stderr);

    assert!(ok(&ws, &["rules", "restore", id]).contains("restored"));
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
    assert!(ok(&ws, &["learn"]).contains("+ prevent-spamtriggererror-email-writer"));
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
