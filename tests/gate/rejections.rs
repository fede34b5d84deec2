//! Each way the gate rejects a handler, and the seeding its determinism check rests on.

use super::*;

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

/// The static checks leave function bodies to the compile that follows
/// them (`sandbox::inspect::Bodies::LeaveToCompiler`): a component whose
/// sections and types are sound but one of whose function bodies is not
/// passes them, and is then refused by the compile, before anything runs.
#[test]
fn rejects_a_component_whose_function_body_is_invalid_at_its_compile() {
    let ws = Workspace::new();
    // `f` promises an i32 and leaves nothing on the stack.
    let invalid_body = wat::parse_str(
        r#"(component
            (core module $m (func (export "f") (result i32)))
            (core instance $i (instantiate $m))
            (func (export "handle") (result u32) (canon lift (core func $i "f"))))"#,
    )
    .expect("wat");
    write_skill(&ws.skills, "bad-body", HANDLER, &invalid_body, None);
    let r = gate_report(&ws, Config::default(), "bad-body");
    assert_eq!(verdict(&r, Check::Artifact).status, Status::Pass, "{r:#?}");
    assert_rejected(&r, Check::World, FindingClass::DoesNotCompile);
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
