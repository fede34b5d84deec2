//! The validation gate (`skillhost handler gate|report|approve`): each way
//! a handler is rejected, each with its own classified verdict and built
//! from source (WAT text, or the echo guest's misbehaving modes), a
//! correct handler accepted and then run on tier 1, and the approval
//! pinned to the artifact's bytes that `run` enforces for gated sources.

use crate::harness;

use std::path::{Path, PathBuf};

use harness::{Workspace, guest};
use skillhost::config::Config;
use skillhost::exec::Runner;
use skillhost::gate::policy::{Check, FindingClass, HandlerState, Provenance, Report, Status};
use skillhost::gate::{self, Subject};
use skillhost::store::RunRecord;

const HANDLER: &str = "metadata:\n  skillhost:\n    handler: handler.wasm";

/// A component that exports a `handle` (of a type no host would link)
/// and imports `imports`: enough for every static check.
fn component_importing(imports: &[&str]) -> Vec<u8> {
    let mut text = String::from("(component\n");
    for i in imports {
        text.push_str(&format!("(import \"{i}\" (instance))\n"));
    }
    text.push_str(
        r#"(core module $m (func (export "f")))
        (core instance $i (instantiate $m))
        (func (export "handle") (canon lift (core func $i "f"))))"#,
    );
    wat::parse_str(text).expect("wat")
}

/// Writes `root/NAME/SKILL.md` (front matter lines `front`), the handler
/// bytes and, if given, `tests/cases.jsonl`.
fn write_skill(root: &Path, name: &str, front: &str, wasm: &[u8], cases: Option<&str>) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("tests")).expect("mkdir");
    let md = format!("---\nname: {name}\ndescription: Test skill {name}.\n{front}\n---\n\nTest.\n");
    std::fs::write(dir.join("SKILL.md"), md).expect("write SKILL.md");
    std::fs::write(dir.join("handler.wasm"), wasm).expect("write handler");
    if let Some(c) = cases {
        std::fs::write(dir.join("tests/cases.jsonl"), c).expect("write cases");
    }
    dir
}

fn echo() -> Vec<u8> {
    std::fs::read(guest("echo-guest")).expect("echo guest")
}

/// The gate on catalog skill `name` of a runner with `config`.
fn gate_skill(ws: &Workspace, config: Config, name: &str) -> (Runner, gate::Gated) {
    let runner = ws.runner(config);
    let subject = Subject::catalog(&runner, name).expect("subject");
    let gated = harness::runtime()
        .block_on(gate::gate(&runner, &subject))
        .expect("gate");
    (runner, gated)
}

fn gate_report(ws: &Workspace, config: Config, name: &str) -> Report {
    gate_skill(ws, config, name).1.report
}

fn verdict(r: &Report, check: Check) -> &skillhost::gate::policy::Verdict {
    r.verdict(check).expect("every check has a verdict")
}

/// The report is a rejection whose failed check is `check` with `class`.
fn assert_rejected(r: &Report, check: Check, class: FindingClass) {
    assert!(!r.passed(), "{r:#?}");
    let v = verdict(r, check);
    assert_eq!(v.status, Status::Fail, "{r:#?}");
    assert_eq!(v.class, Some(class), "{r:#?}");
    assert!(!v.explanation.is_empty());
}

/// Nothing after the static checks ran: no case, no instantiation.
fn assert_nothing_ran(r: &Report) {
    for c in [Check::Cases, Check::Determinism, Check::Limits] {
        assert_eq!(verdict(r, c).status, Status::Skipped, "{r:#?}");
    }
    assert!(r.cases.is_empty());
}

#[test]
fn rejects_a_core_module_and_garbage_bytes() {
    let ws = Workspace::new();
    write_skill(
        &ws.skills,
        "core",
        HANDLER,
        &wat::parse_str("(module)").expect("wat"),
        None,
    );
    write_skill(
        &ws.skills,
        "garbage",
        HANDLER,
        b"#!/bin/sh\necho pwned\n",
        None,
    );
    let r = gate_report(&ws, Config::default(), "core");
    assert_rejected(&r, Check::Artifact, FindingClass::CoreModule);
    assert!(
        verdict(&r, Check::Artifact)
            .explanation
            .contains("core wasm module")
    );
    assert_nothing_ran(&r);
    let r = gate_report(&ws, Config::default(), "garbage");
    assert_rejected(&r, Check::Artifact, FindingClass::Malformed);
    assert_nothing_ran(&r);
    assert_eq!(verdict(&r, Check::World).status, Status::Skipped);
}

#[test]
fn rejects_a_component_of_another_world() {
    let ws = Workspace::new();
    // Exports `run`, not `handle`: found from its types.
    let other = wat::parse_str(
        r#"(component
            (core module $m (func (export "f")))
            (core instance $i (instantiate $m))
            (func (export "run") (canon lift (core func $i "f"))))"#,
    )
    .expect("wat");
    write_skill(&ws.skills, "other-world", HANDLER, &other, None);
    let r = gate_report(&ws, Config::default(), "other-world");
    assert_rejected(&r, Check::World, FindingClass::WrongWorld);
    assert!(
        verdict(&r, Check::World).explanation.contains("run (func)"),
        "{r:#?}"
    );
    assert_nothing_ran(&r);
    // Exports `handle` with another type: linking against the handler
    // world refuses it, and no case runs.
    write_skill(
        &ws.skills,
        "wrong-type",
        HANDLER,
        &component_importing(&[]),
        None,
    );
    let r = gate_report(&ws, Config::default(), "wrong-type");
    assert_rejected(&r, Check::World, FindingClass::WrongWorld);
    assert_eq!(verdict(&r, Check::Imports).status, Status::Pass);
    assert_nothing_ran(&r);
}

#[test]
fn rejects_sockets_and_filesystem_for_a_skill_that_declares_neither() {
    let ws = Workspace::new();
    write_skill(
        &ws.skills,
        "sockets",
        HANDLER,
        &component_importing(&["wasi:sockets/tcp@0.2.6", "wasi:sockets/network@0.2.6"]),
        None,
    );
    let r = gate_report(&ws, Config::default(), "sockets");
    assert_rejected(&r, Check::Imports, FindingClass::UndeclaredImport);
    let details = &verdict(&r, Check::Imports).details;
    assert_eq!(details.len(), 2, "{details:?}");
    assert!(
        details[0].contains("wasi:sockets/tcp") && details[0].contains("no capability permits it")
    );
    // Static: nothing compiled, so the type check waits too.
    assert_eq!(verdict(&r, Check::World).status, Status::Skipped);
    assert_nothing_ran(&r);

    let fs = component_importing(&[
        "wasi:filesystem/types@0.2.6",
        "wasi:filesystem/preopens@0.2.6",
    ]);
    write_skill(&ws.skills, "files", HANDLER, &fs, None);
    let r = gate_report(&ws, Config::default(), "files");
    assert_rejected(&r, Check::Imports, FindingClass::UndeclaredImport);
    assert!(
        verdict(&r, Check::Imports).details[0]
            .contains("needs the `files` capability, which skill `files` does not declare"),
        "{r:#?}"
    );
    // The same component for a skill that declares files: the imports
    // pass (then linking refuses this test component's `handle`).
    let declares = "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities: { files: { read: [data/] } }";
    write_skill(&ws.skills, "reads-files", declares, &fs, None);
    let r = gate_report(&ws, Config::default(), "reads-files");
    assert_eq!(verdict(&r, Check::Imports).status, Status::Pass, "{r:#?}");
}

#[test]
fn rejects_http_when_the_skill_declares_none() {
    let ws = Workspace::new();
    let http = component_importing(&["wasi:http/types@0.2.6", "wasi:http/outgoing-handler@0.2.6"]);
    write_skill(&ws.skills, "http", HANDLER, &http, None);
    let r = gate_report(&ws, Config::default(), "http");
    assert_rejected(&r, Check::Imports, FindingClass::UndeclaredImport);
    assert!(verdict(&r, Check::Imports).details[1].contains("needs the `http` capability"));
    assert_nothing_ran(&r);
    // Declared, but a generated handler's ceiling allows no http.
    let declares = "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities: { http: [api.example.com] }";
    let forged = ws.workspace.join(".skillhost/skills/forged");
    write_skill(&forged, "forged-http", declares, &http, None);
    let r = gate_report(&ws, Config::default(), "forged-http");
    assert_eq!(r.provenance, Provenance::Generated);
    assert_rejected(&r, Check::Imports, FindingClass::UndeclaredImport);
    assert!(
        verdict(&r, Check::Imports).details[0].contains("[gate] generated ceiling"),
        "{r:#?}"
    );
    assert_rejected(&r, Check::Capabilities, FindingClass::ExceedsCeiling);
}

#[test]
fn rejects_a_skill_declaring_more_than_its_parent() {
    let ws = Workspace::new();
    write_skill(
        &ws.skills,
        "notes",
        "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities: { kv: true }",
        &echo(),
        None,
    );
    // A handler written for `notes`, waiting in its quarantine slot, whose
    // SKILL.md asks for the model as well.
    let runner = ws.runner(Config::default());
    let slot = gate::quarantine_slot(runner.paths(), "notes", "sha256:00aa").expect("slot");
    std::fs::create_dir_all(slot.parent().expect("parent")).expect("mkdir");
    let asks = "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities: { kv: true, llm: true }";
    let dir = write_skill(slot.parent().expect("parent"), "00aa", asks, &echo(), None);
    // The slot's folder is named by hash; the skill names itself.
    let md = std::fs::read_to_string(dir.join("SKILL.md")).expect("read");
    std::fs::write(
        dir.join("SKILL.md"),
        md.replace("name: 00aa", "name: notes"),
    )
    .expect("write");
    let subject = Subject::folder(&runner, &dir, None).expect("subject");
    assert_eq!(subject.provenance, Provenance::Generated);
    let gated = harness::runtime()
        .block_on(gate::gate(&runner, &subject))
        .expect("gate");
    let r = &gated.report;
    assert_rejected(r, Check::Capabilities, FindingClass::ExceedsParent);
    assert!(
        verdict(r, Check::Capabilities).details[0]
            .contains("declares llm, beyond what `notes` (the skill it was written for) declares"),
        "{r:#?}"
    );
    assert_eq!(gated.state, None, "outside the catalog: not admitted");
    // It stays in quarantine with its report beside it.
    let kept: Report = serde_json::from_slice(
        &std::fs::read(dir.join(gate::QUARANTINE_REPORT)).expect("report beside the artifact"),
    )
    .expect("a report");
    assert_eq!(kept, gated.report);
    assert!(dir.join("handler.wasm").is_file());
    // A slot whose SKILL.md names another skill is refused before any check.
    std::fs::write(
        dir.join("SKILL.md"),
        md.replace("name: 00aa", "name: other"),
    )
    .expect("write");
    let e = Subject::folder(&runner, &dir, None).expect_err("wrong slot");
    assert!(
        e.to_string().contains("quarantine slot of skill `notes`"),
        "{e}"
    );
}

#[test]
fn rejects_wrong_output_on_a_recorded_case() {
    let ws = Workspace::new();
    write_skill(&ws.skills, "echo", HANDLER, &echo(), None);
    let runner = ws.runner(Config::default());
    let mut wrong = RunRecord::new("echo", true, 1);
    wrong.task = "hello".into();
    wrong.output = Some("goodbye".into());
    let id = runner
        .store()
        .expect("store")
        .record_run(&wrong)
        .expect("record");
    let r = gate_report(&ws, Config::default(), "echo");
    assert_rejected(&r, Check::Cases, FindingClass::WrongAnswer);
    let detail = &verdict(&r, Check::Cases).details[0];
    assert_eq!(
        detail,
        &format!("run {id}: expected (exact) `goodbye`, got `hello`")
    );
    // The case ran and was deterministic within its limits.
    assert_eq!(verdict(&r, Check::Determinism).status, Status::Pass);
    assert_eq!(verdict(&r, Check::Limits).status, Status::Pass);
}

#[test]
fn rejects_answers_that_depend_on_the_clock_or_random_numbers() {
    let ws = Workspace::new();
    let cases = r#"{"task": "@clock", "output": "any", "compare": "class"}
{"task": "@random", "output": "any", "compare": "class"}
{"task": "steady", "output": "steady"}
"#;
    write_skill(&ws.skills, "echo", HANDLER, &echo(), Some(cases));
    let r = gate_report(&ws, Config::default(), "echo");
    assert_eq!(verdict(&r, Check::Cases).status, Status::Pass, "{r:#?}");
    assert_rejected(&r, Check::Determinism, FindingClass::Nondeterministic);
    let details = &verdict(&r, Check::Determinism).details;
    assert_eq!(details.len(), 2, "{details:?}");
    assert!(details[0].starts_with("tests/cases.jsonl:1: differs between seeds"));
    assert!(details[1].starts_with("tests/cases.jsonl:2: differs between seeds"));
    let steady = &r.cases[2];
    assert!(steady.deterministic && steady.passed);
    assert_ne!(steady.seeds[0], steady.seeds[1]);
}

#[test]
fn rejects_a_spin_on_the_time_limit_and_growth_on_the_memory_limit() {
    let ws = Workspace::new();
    write_skill(
        &ws.skills,
        "spins",
        HANDLER,
        &echo(),
        Some("{\"task\": \"@spin\", \"output\": \"never\"}\n"),
    );
    write_skill(
        &ws.skills,
        "grows",
        HANDLER,
        &echo(),
        Some("{\"task\": \"@grow\", \"output\": \"never\"}\n"),
    );
    // Cases run under a run's limits.
    let mut config = Config::default();
    config.limits.timeout_ms = 200;
    let r = gate_report(&ws, config, "spins");
    assert_rejected(&r, Check::Limits, FindingClass::TimeLimit);
    assert!(
        verdict(&r, Check::Limits).details[0].contains("ran longer than 200 ms"),
        "{r:#?}"
    );
    // A case that hit a limit is the limit's finding, not a wrong answer.
    assert_eq!(verdict(&r, Check::Cases).status, Status::Pass, "{r:#?}");
    // A run's own time limit for growth: touching 64 MiB page by page can
    // take longer than 200 ms on a loaded machine, and then the time limit
    // is what refuses it.
    let r = gate_report(&ws, Config::default(), "grows");
    assert_rejected(&r, Check::Limits, FindingClass::MemoryLimit);
    let memory = Config::default().limits.memory_mb;
    assert!(
        verdict(&r, Check::Limits).details[0].contains(&format!("the limit is {memory} MiB")),
        "{r:#?}"
    );
}

#[test]
fn rejects_an_oversized_artifact() {
    let ws = Workspace::new();
    write_skill(&ws.skills, "echo", HANDLER, &echo(), None);
    let mut config = Config::default();
    config.gate.max_artifact_kb = 64;
    let r = gate_report(&ws, config, "echo");
    assert_rejected(&r, Check::Artifact, FindingClass::TooLarge);
    assert!(
        verdict(&r, Check::Artifact)
            .explanation
            .contains("over the cap of 65536 bytes")
    );
    assert_nothing_ran(&r);
}

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
    assert_eq!(
        gate::admit(&runner, "brief").expect("admit"),
        HandlerState::Enabled
    );
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

/// The determinism check rests on this: a call's random numbers come from
/// its seed when it has one, so the same seed repeats them and another
/// seed (or the host's own source) does not.
#[test]
fn seeded_calls_repeat_their_random_numbers_and_other_seeds_do_not() {
    use skillhost::grants::Effective;
    use skillhost::sandbox::{
        CallRequest, Entropy, FileRoots, Limits, Sandbox, SandboxOptions, Services,
    };
    let sandbox = Sandbox::new(&SandboxOptions::default()).expect("sandbox");
    let handler = sandbox.load(&echo()).expect("load");
    let dir = tempfile::tempdir().expect("tempdir");
    let roots = FileRoots {
        skill_dir: dir.path().to_path_buf(),
        workspace: dir.path().to_path_buf(),
        skill_files: Vec::new(),
        control: Default::default(),
    };
    let context = serde_json::Map::new();
    let rt = harness::runtime();
    let draw = |entropy: Entropy| {
        let out = rt.block_on(sandbox.call(
            &handler,
            &CallRequest {
                skill: "echo",
                description: "@random",
                context: &context,
                grants: &Effective::none(),
                limits: Limits::default(),
                roots: &roots,
                services: Services::default(),
                entropy,
            },
        ));
        out.result.expect("an answer").body
    };
    assert_eq!(draw(Entropy::Seeded(7)), draw(Entropy::Seeded(7)));
    assert_ne!(draw(Entropy::Seeded(7)), draw(Entropy::Seeded(8)));
    assert_ne!(draw(Entropy::Host), draw(Entropy::Host));
}

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
    auto.gate.approve = Some(skillhost::gate::policy::Approve::Auto);
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
