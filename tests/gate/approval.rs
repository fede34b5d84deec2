//! Approvals pinned to the artifact: installed, generated, quarantined handlers; `handler report`.

use super::*;

/// Appends a custom section: other bytes, the same behaviour.
fn changed(wasm: &[u8]) -> Vec<u8> {
    let mut w = wasm.to_vec();
    let (name, payload) = (b"changed", b"!");
    w.extend([
        0u8,
        (1 + name.len() + payload.len()) as u8,
        name.len() as u8,
    ]);
    w.extend(name);
    w.extend(payload);
    w
}

#[test]
fn an_installed_handler_runs_only_as_approved_and_a_changed_one_is_refused_until_it_passes_again() {
    let ws = Workspace::new();
    let installed = ws.home.join("installed");
    let cases = "{\"task\": \"hello\", \"output\": \"hello\"}\n";
    let dir = write_skill(&installed, "greeter", HANDLER, &echo(), Some(cases));
    let run = |ws: &Workspace| ws.run_cli(&["run", "hello", "--skill", "greeter"]);

    // Never gated: refused before it is compiled, in one line.
    let r = run(&ws);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("HandlerNotApproved: handler of `greeter` is not approved: it has not been through the gate"),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.stderr.lines().filter(|l| l.contains("greeter")).count(),
        1,
        "{}",
        r.stderr
    );

    // Passed; installed handlers wait for the operator by default.
    let g = ws.run_cli(&["handler", "gate", "greeter"]);
    assert_eq!(g.code, 0, "{}{}", g.stdout, g.stderr);
    assert!(g.stdout.contains("state: passed"), "{}", g.stdout);
    let r = run(&ws);
    assert!(
        r.stderr
            .contains("waits for `skillhost handler approve greeter`"),
        "{}",
        r.stderr
    );

    let a = ws.run_cli(&["handler", "approve", "greeter"]);
    assert_eq!(a.code, 0, "{}{}", a.stdout, a.stderr);
    let r = ws.run_cli(&["run", "hello", "--skill", "greeter", "--json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let out = r.json();
    assert_eq!(out["tier"], "handler");
    assert_eq!(out["output"]["body"], "hello");

    // Changed on disk after approval: refused, and says why.
    let wasm = changed(&echo());
    std::fs::write(dir.join("handler.wasm"), &wasm).expect("rewrite");
    let r = run(&ws);
    assert_eq!(r.code, 1);
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("HandlerNotApproved"))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    assert!(
        line.contains("handler of `greeter` is not approved: artifact changed since approval")
            && line.contains("run `skillhost handler gate greeter`"),
        "{line}"
    );
    // Approving the new bytes needs a report for them.
    let a = ws.run_cli(&["handler", "approve", "greeter"]);
    assert_eq!(a.code, 1);
    assert!(
        a.stderr
            .contains("has not been through the gate as it is now"),
        "{}",
        a.stderr
    );
    let report = ws
        .run_cli(&["handler", "report", "greeter", "--json"])
        .json();
    assert_eq!(report["state"], "quarantined");
    assert!(
        report["refusal"]
            .as_str()
            .unwrap_or("")
            .contains("artifact changed since approval")
    );

    // It passes again, is approved again, and runs.
    assert_eq!(ws.run_cli(&["handler", "gate", "greeter"]).code, 0);
    assert_eq!(ws.run_cli(&["handler", "approve", "greeter"]).code, 0);
    let r = run(&ws);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "hello");
    let report = ws
        .run_cli(&["handler", "report", "greeter", "--json"])
        .json();
    assert_eq!(report["state"], "enabled");
    assert_eq!(report["report"]["outcome"], "passed");
    let checks = report["report"]["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 7);
    assert!(checks.iter().all(|c| c["status"] == "pass"), "{report}");

    // The same bytes as a skill of an ungated source run as they always did.
    ws.add_skill("plain", HANDLER, Some(&guest("echo-guest")));
    let skills = ws.skills.display().to_string();
    let r = ws.run_cli(&["--skills", &skills, "run", "hi", "--skill", "plain"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn a_rejected_handler_cannot_be_approved_and_a_swap_after_the_gate_is_caught() {
    let ws = Workspace::new();
    let installed = ws.home.join("installed");
    let dir = write_skill(
        &installed,
        "swap",
        HANDLER,
        &echo(),
        Some("{\"task\": \"@clock\", \"output\": \"x\", \"compare\": \"class\"}\n"),
    );
    let g = ws.run_cli(&["handler", "gate", "swap"]);
    assert_eq!(g.code, 1, "rejected: {}", g.stdout);
    assert!(g.stdout.contains("FAIL  determinism"), "{}", g.stdout);
    let a = ws.run_cli(&["handler", "approve", "swap"]);
    assert_eq!(a.code, 1);
    assert!(a.stderr.contains("did not pass the gate"), "{}", a.stderr);
    let r = ws.run_cli(&["run", "hi", "--skill", "swap"]);
    assert!(r.stderr.contains("the gate rejected it"), "{}", r.stderr);

    // Passes with steady cases; then the bytes are swapped before approval.
    std::fs::write(
        dir.join("tests/cases.jsonl"),
        "{\"task\": \"hi\", \"output\": \"hi\"}\n",
    )
    .expect("write");
    assert_eq!(ws.run_cli(&["handler", "gate", "swap"]).code, 0);
    std::fs::write(dir.join("handler.wasm"), changed(&echo())).expect("swap");
    let a = ws.run_cli(&["handler", "approve", "swap"]);
    assert_eq!(a.code, 1, "the swapped bytes were never gated");
    // Approved, then the skill declares more: refused until gated again.
    std::fs::write(dir.join("handler.wasm"), echo()).expect("restore");
    assert_eq!(ws.run_cli(&["handler", "approve", "swap"]).code, 0);
    let md = std::fs::read_to_string(dir.join("SKILL.md")).expect("read");
    std::fs::write(
        dir.join("SKILL.md"),
        md.replace(
            "handler: handler.wasm",
            "handler: handler.wasm\n    capabilities: { kv: true }",
        ),
    )
    .expect("write");
    let r = ws.run_cli(&["run", "hi", "--skill", "swap"]);
    assert!(
        r.stderr.contains("the skill changed since approval"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_generated_handler_with_enough_passing_cases_is_enabled_and_runs_on_tier_1() {
    let ws = Workspace::new();
    let forged = ws.workspace.join(".skillhost/skills/forged");
    write_skill(
        &forged,
        "echoes",
        HANDLER,
        &echo(),
        Some("{\"task\": \"a\", \"output\": \"a\"}\n"),
    );
    // Recorded runs of the skill are cases too (they ran through an
    // ungated configuration here).
    let mut open = Config::default();
    open.gate.sources = vec![];
    let runner = ws.runner(open);
    for task in ["one", "two", "one"] {
        let o = harness::run(&runner, "echoes", task, serde_json::json!({}));
        assert_eq!(o.output.map(|o| o.body).as_deref(), Some(task));
    }
    assert!(runner.flush());
    drop(runner);

    let (runner, gated) = gate_skill(&ws, Config::default(), "echoes");
    let r = &gated.report;
    assert!(r.passed(), "{r:#?}");
    assert_eq!(r.provenance, Provenance::Generated);
    let origins: Vec<&str> = r.cases.iter().map(|c| c.origin.as_str()).collect();
    assert_eq!(
        origins.len(),
        3,
        "two distinct recorded tasks and one shipped: {origins:?}"
    );
    assert!(origins[0].starts_with("run ") && origins[2] == "tests/cases.jsonl:1");
    assert_eq!(
        gated.state,
        Some(HandlerState::Enabled),
        "auto: generated, 3 cases"
    );
    drop(runner);
    let runner = ws.runner(Config::default());
    let o = harness::run(&runner, "echoes", "three", serde_json::json!({}));
    assert_eq!(o.failure, None);
    assert_eq!(o.tier, skillhost::exec::Tier::Handler);

    // With fewer cases than `auto_min_cases`, it waits for the operator.
    let mut strict = Config::default();
    strict.gate.auto_min_cases = 10;
    write_skill(
        &forged,
        "few",
        HANDLER,
        &echo(),
        Some("{\"task\": \"a\", \"output\": \"a\"}\n"),
    );
    let (_, gated) = gate_skill(&ws, strict, "few");
    assert_eq!(gated.state, Some(HandlerState::Passed));
}

#[test]
fn a_quarantined_handler_is_gated_in_its_slot_and_admitted_once_moved_in() {
    let ws = Workspace::new();
    let wasm = echo();
    let runner = ws.runner(Config::default());
    let artifact = skillhost::sandbox::artifact_hash(&wasm);
    let slot = gate::quarantine_slot(runner.paths(), "brief", &artifact).expect("slot");
    let cases = "{\"task\": \"a\", \"output\": \"a\"}\n{\"task\": \"b\", \"output\": \"b\"}\n{\"task\": \"c\", \"output\": \"c\"}\n";
    write_skill(
        slot.parent().expect("parent"),
        slot.file_name().and_then(|n| n.to_str()).expect("name"),
        HANDLER,
        &wasm,
        Some(cases),
    );
    let md = std::fs::read_to_string(slot.join("SKILL.md")).expect("read");
    let hex = artifact.trim_start_matches("sha256:");
    std::fs::write(
        slot.join("SKILL.md"),
        md.replace(&format!("name: {hex}"), "name: brief"),
    )
    .expect("write");

    let subject = Subject::folder(&runner, &slot, None).expect("subject");
    let (id, report) = harness::runtime()
        .block_on(gate::check(&runner, &subject))
        .expect("check");
    assert!(report.passed(), "{report:#?}");
    assert!(slot.join(gate::QUARANTINE_REPORT).is_file());

    // Moved in as a forged skill: the approval policy applies to it there.
    let forged = ws.workspace.join(".skillhost/skills/forged");
    std::fs::create_dir_all(&forged).expect("mkdir");
    std::fs::rename(&slot, forged.join("brief")).expect("move in");
    runner.reload_catalog();
    // Its cases ran, but a slot's own cases pin nothing down: whoever
    // filled the slot wrote them. It waits for the operator.
    assert_eq!(report.answers_compared(), 0, "{report:#?}");
    assert_eq!(
        gate::admit(&runner, "brief").expect("admit"),
        HandlerState::Passed
    );
    gate::approve(&runner, "brief").expect("approve");
    let status = gate::status(&runner, "brief").expect("status");
    assert_eq!(status.report.map(|r| r.id), Some(id));
    let o = harness::run(&runner, "brief", "hi", serde_json::json!({}));
    assert_eq!(o.output.map(|o| o.body).as_deref(), Some("hi"));
}

#[test]
fn a_bad_cases_file_is_a_classified_verdict_naming_the_line() {
    let ws = Workspace::new();
    write_skill(
        &ws.skills,
        "echo",
        HANDLER,
        &echo(),
        Some("{\"task\": \"a\", \"output\": \"a\"}\n{\"task\": \"b\"}\n"),
    );
    let r = gate_report(&ws, Config::default(), "echo");
    assert_rejected(&r, Check::Cases, FindingClass::InvalidCase);
    assert!(
        verdict(&r, Check::Cases).details[0].starts_with("tests/cases.jsonl:2: give the expected"),
        "{r:#?}"
    );
}

#[test]
fn handler_report_prints_each_verdict_and_the_state() {
    let ws = Workspace::new();
    write_skill(
        &ws.skills,
        "sockets",
        HANDLER,
        &component_importing(&["wasi:sockets/tcp@0.2.6"]),
        None,
    );
    let skills = ws.skills.display().to_string();
    let g = ws.run_cli(&["--skills", &skills, "handler", "gate", "sockets"]);
    assert_eq!(g.code, 1, "{}{}", g.stdout, g.stderr);
    let r = ws.run_cli(&["--skills", &skills, "handler", "report", "sockets"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for line in [
        "pass  artifact",
        "skip  world",
        "FAIL  imports       UndeclaredImport: 1 of its imports are beyond what skill `sockets` may use",
        "- `wasi:sockets/tcp`: no capability permits it",
        "pass  capabilities",
        "skip  cases",
        "rejected",
        "state: quarantined",
    ] {
        assert!(
            r.stdout.contains(line),
            "missing {line:?} in:\n{}",
            r.stdout
        );
    }
    let none = ws.run_cli(&["handler", "report", "nope"]);
    assert_eq!(none.code, 1);
    assert!(
        none.stderr.contains("no skill named `nope`"),
        "{}",
        none.stderr
    );
}
