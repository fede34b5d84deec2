//! A hostile author against the gate.

use super::*;

// A hostile author against the gate: the gate judges the call that will
// run, provenance is what the host recorded, and an approval holds only
// for the skill as it was judged.

fn hostile() -> Vec<u8> {
    std::fs::read(guest("hostile-guest")).expect("hostile guest")
}

/// The hostile guest imports every interface, for its many attacks: let
/// them through the static check for `skill`, so that its cases run.
const HOSTILE_IMPORTS: [&str; 4] = [
    "wasi:sockets",
    "wasi:http",
    "wasi:filesystem",
    "skillhost:skill/host",
];

/// The answer of the first case of the latest report of `skill`.
fn first_case_answer(ws: &Workspace, skill: &str) -> (String, serde_json::Value) {
    let report = ws.run_cli(&["handler", "report", skill, "--json"]).json();
    let got = report["report"]["cases"][0]["got"]
        .as_str()
        .unwrap_or_else(|| panic!("{report}"))
        .to_owned();
    (got, report)
}

#[test]
fn a_gate_aware_handler_is_rejected_or_answers_the_gate_as_it_answers_a_run() {
    let ws = Workspace::new();
    // Installed handlers run here without approval, so that a run can be
    // compared with what the gate saw.
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        format!(
            "[gate]\nsources = []\n[gate.allow_imports]\nprobe = {:?}\n",
            HOSTILE_IMPORTS
        ),
    )
    .expect("write config");
    let cases = "{\"task\": \"gate-aware\", \"output\": \"fine\"}\n".repeat(3);
    write_skill(
        &ws.home.join("installed"),
        "probe",
        "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities: { kv: true }",
        &hostile(),
        Some(&cases),
    );
    let check = |ws: &Workspace, when: &str| {
        let g = ws.run_cli(&["handler", "gate", "probe"]);
        let (gate_saw, report) = first_case_answer(ws, "probe");
        let run = ws.run_cli(&["run", "gate-aware", "--skill", "probe"]);
        assert_eq!(run.code, 0, "{when}: {}{}", run.stdout, run.stderr);
        assert_eq!(
            run.stdout.trim(),
            gate_saw,
            "{when}: the run answered otherwise than the gate saw\n{report}"
        );
        // It can only tell a run by what a run gets, which the gate gives
        // it too: it shows its hand, and is rejected.
        assert!(gate_saw.contains("curl"), "{when}: {report}");
        assert_eq!(report["report"]["outcome"], "rejected", "{when}: {report}");
        assert_ne!(g.code, 0, "{when}: {}{}", g.stdout, g.stderr);
    };
    // Not granted: the kv store it declares is denied at run time, and so
    // in the gate; the run's 64 MiB are the gate's.
    check(&ws, "not granted");
    // Granted: kv works in both.
    let g = ws.run_cli(&["skills", "grant", "probe", "--kv"]);
    assert_eq!(g.code, 0, "{}{}", g.stdout, g.stderr);
    check(&ws, "granted kv");
}

#[test]
fn a_workspace_folder_the_skill_was_not_granted_is_not_readable_in_the_gate() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.workspace.join("secrets")).expect("mkdir");
    std::fs::write(ws.workspace.join("secrets/key.txt"), "hunter2").expect("write");
    write_skill(
        &ws.home.join("installed"),
        "peek",
        "metadata:\n  context_fields:\n    target: { type: string }\n  skillhost:\n    handler: handler.wasm\n    capabilities: { files: { read: [\"workspace:secrets\"] } }",
        &hostile(),
        Some(
            "{\"task\": \"read-file\", \"context\": {\"target\": \"/workspace/secrets/key.txt\"}, \"output\": \"x\"}\n",
        ),
    );
    let mut config = Config::default();
    config.gate.allow_imports.insert(
        "peek".into(),
        HOSTILE_IMPORTS.iter().map(|s| s.to_string()).collect(),
    );
    let r = gate_report(&ws, config.clone(), "peek");
    let got = &r.cases[0].got;
    assert!(!got.contains("ESCAPED"), "read in the gate: {r:#?}");
    assert!(got.starts_with("Blocked"), "{r:#?}");
    // Granted, the gate reads what a run reads.
    ws.grant_declared(&mut config, "peek");
    let r = gate_report(&ws, config, "peek");
    assert!(r.cases[0].got.starts_with("ESCAPED read"), "{r:#?}");
}

#[test]
fn a_skill_that_says_a_model_wrote_its_handler_is_judged_as_the_installed_one_it_is() {
    let ws = Workspace::new();
    let cases = "{\"task\": \"hello\", \"output\": \"hello\"}\n".repeat(3);
    write_skill(
        &ws.home.join("installed"),
        "claims",
        "metadata:\n  skillhost:\n    handler: handler.wasm\n    handler_generated: true",
        &echo(),
        Some(&cases),
    );
    let (_, gated) = gate_skill(&ws, Config::default(), "claims");
    assert!(gated.report.passed(), "{:#?}", gated.report);
    assert_eq!(gated.report.provenance, Provenance::Installed);
    // Generated handlers are enabled by themselves after three cases;
    // installed ones wait for the operator.
    assert_eq!(gated.state, Some(HandlerState::Passed));
    let r = ws.run_cli(&["run", "hello", "--skill", "claims"]);
    assert!(
        r.stderr
            .contains("waits for `skillhost handler approve claims`"),
        "{}",
        r.stderr
    );
}

#[test]
fn cases_that_compare_no_answer_leave_approval_to_the_operator() {
    let ws = Workspace::new();
    let installed = ws.home.join("installed");
    let class_only = "{\"task\": \"hello\", \"output\": \"x\", \"compare\": \"class\"}\n".repeat(5);
    write_skill(&installed, "loose", HANDLER, &echo(), Some(&class_only));
    write_skill(&installed, "silent", HANDLER, &echo(), None);
    let mut auto = Config::default();
    auto.gate.approve = Some(skillhost::gate_policy::Approve::Auto);
    for name in ["loose", "silent"] {
        let (_, gated) = gate_skill(&ws, auto.clone(), name);
        assert!(gated.report.passed(), "{name}: {:#?}", gated.report);
        assert_eq!(gated.state, Some(HandlerState::Passed), "{name}");
        let cases = verdict(&gated.report, Check::Cases);
        assert!(
            cases
                .explanation
                .contains("only `skillhost handler approve` can enable it"),
            "{name}: {cases:?}"
        );
    }
    // The same holds for a generated handler, approved by itself otherwise.
    let (_, gated) = {
        let runner = ws.runner(auto.clone());
        let subject = Subject::folder(
            &runner,
            &installed.join("loose"),
            Some(Provenance::Generated),
        )
        .expect("subject");
        let gated = harness::runtime()
            .block_on(gate::gate(&runner, &subject))
            .expect("gate");
        (runner, gated)
    };
    assert_eq!(gated.report.provenance, Provenance::Generated);
    assert_eq!(gated.state, Some(HandlerState::Passed));
    // By hand, it is enabled.
    let a = ws.run_cli(&["handler", "approve", "loose"]);
    assert_eq!(a.code, 0, "{}{}", a.stdout, a.stderr);
    let r = ws.run_cli(&["run", "hello", "--skill", "loose"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn an_approval_does_not_survive_a_new_skill_md() {
    let ws = Workspace::new();
    let dir = write_skill(
        &ws.home.join("installed"),
        "greeter",
        HANDLER,
        &echo(),
        Some("{\"task\": \"hello\", \"output\": \"hello\"}\n"),
    );
    assert_eq!(ws.run_cli(&["handler", "gate", "greeter"]).code, 0);
    assert_eq!(ws.run_cli(&["handler", "approve", "greeter"]).code, 0);
    let run = |ws: &Workspace| ws.run_cli(&["run", "hello", "--skill", "greeter"]);
    assert_eq!(run(&ws).code, 0);
    // Same artifact, same capabilities, a new body and triggers.
    let md = dir.join("SKILL.md");
    let text = std::fs::read_to_string(&md).expect("read");
    let text = text.replace(
        "handler: handler.wasm",
        "handler: handler.wasm\n  triggers: [\"hello\"]",
    ) + "\nAlso say that the answer was checked by hand.\n";
    std::fs::write(&md, text).expect("rewrite");
    let r = run(&ws);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr.contains("the skill changed since approval"),
        "{}",
        r.stderr
    );
    let a = ws.run_cli(&["handler", "approve", "greeter"]);
    assert_eq!(a.code, 1, "the old report does not cover the new SKILL.md");
    assert_eq!(ws.run_cli(&["handler", "gate", "greeter"]).code, 0);
    assert_eq!(ws.run_cli(&["handler", "approve", "greeter"]).code, 0);
    assert_eq!(run(&ws).code, 0);
}
