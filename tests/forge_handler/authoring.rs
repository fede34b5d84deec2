//! A model's handler built and gated: tier 1, refusals, build errors and limits, JS, the CLI.

use super::*;

#[test]
fn a_skill_that_answered_on_tier_2_gets_a_handler_and_answers_the_same_on_tier_1() {
    let (ws, dir) = workspace();
    let (runner, outputs, authored) = forge_good_handler(&ws);
    assert_eq!(authored.attempts.len(), 1);
    let attempt = &authored.attempts[0];
    assert!(
        matches!(attempt.outcome, AttemptOutcome::Passed { .. }),
        "{attempt:?}"
    );
    let slot = attempt.slot.clone().expect("a slot");
    assert!(slot.starts_with(ws.workspace.join(".skillhost/quarantine").join(SKILL)));
    assert!(slot.join("gate-report.json").is_file());
    assert!(slot.join("build.log").is_file());
    let admission = authored.admitted.expect("admitted");
    assert_eq!(admission.state, HandlerState::Enabled, "generated: auto");
    let wasm = std::fs::read(dir.join("handler.wasm")).expect("in the skill folder");
    assert_eq!(skillhost::sandbox::artifact_hash(&wasm), admission.artifact);
    let md = std::fs::read_to_string(dir.join("SKILL.md")).expect("SKILL.md");
    assert!(md.contains("handler: handler.wasm"), "{md}");
    assert!(md.contains("handler_generated: true"), "{md}");
    let store = runner.store().expect("store");
    let report = approval::latest_report(store, SKILL)
        .expect("read")
        .expect("stored");
    assert!(report.report.passed());
    assert_eq!(report.report.cases.len(), TASKS.len());

    // The same tasks on tier 1, with a model at hand that is never asked.
    let model = Arc::new(ScriptedProvider::from_turns("unused", Vec::new()));
    let runner = ws.runner(config()).with_provider(model.clone());
    for (t, want) in TASKS.iter().zip(&outputs) {
        let out = harness::run(&runner, SKILL, t, json!({}));
        assert!(out.succeeded(), "{:?}", out.failure);
        assert_eq!(out.tier, Tier::Handler);
        assert_eq!(out.model_calls, 0);
        assert_eq!(&out.output.expect("answer").body, want);
    }
    assert!(model.requests().is_empty(), "no model call on tier 1");

    // `skills rollback` undoes it: the skill answers through the model again.
    let skill = runner.catalog().get(SKILL).cloned().expect("skill");
    let writer = skillhost::forge::SkillWriter::new(&ws.paths());
    skillhost::forge::history::rollback(&writer, &skill, None).expect("rollback");
    let model = Arc::new(ScriptedProvider::from_turns("again", vec![turn("HI")]));
    let runner = ws.runner(config()).with_provider(model);
    let out = harness::run(&runner, SKILL, "hi", json!({}));
    assert_eq!(out.tier, Tier::Model);
}

#[test]
fn a_generated_handler_whose_artifact_changed_after_approval_is_refused() {
    let (ws, dir) = workspace();
    let (_, _, authored) = forge_good_handler(&ws);
    assert_eq!(
        authored.admitted.expect("admitted").state,
        HandlerState::Enabled
    );
    // A workspace skill is not gated by source; its generated handler is.
    assert!(
        !Config::default()
            .gate
            .gates(skillhost::skill::Source::Workspace)
    );
    // Another component, valid and answering, in its place.
    std::fs::copy(harness::guest("echo-guest"), dir.join("handler.wasm")).expect("replace");
    let model = Arc::new(ScriptedProvider::from_turns("unused", Vec::new()));
    let runner = ws.runner(config()).with_provider(model.clone());
    let out = harness::run(&runner, SKILL, "hello world", json!({}));
    let failure = out.failure.expect("refused");
    assert_eq!(failure.class.as_str(), "HandlerNotApproved", "{failure:?}");
    assert!(failure.message.contains("artifact changed"), "{failure:?}");
    assert!(model.requests().is_empty(), "no fallback to the model");
}

#[test]
fn a_wrong_handler_is_rejected_and_the_skill_keeps_answering_on_tier_2() {
    let (ws, dir) = workspace();
    answer_on_tier_2(&ws);
    let before = snapshot(&dir);
    let runner = ws.runner(config());
    let (authored, model) = author_with(
        &runner,
        vec![
            source_reply("rust", WRONG_RUST),
            source_reply("rust", WRONG_RUST),
        ],
        Some(HandlerLang::Rust),
    );
    let authored = authored.expect("forge handler");
    assert!(authored.admitted.is_none());
    assert_eq!(authored.attempts.len(), 2, "[forge.handler] attempts = 2");
    for a in &authored.attempts {
        assert!(
            matches!(a.outcome, AttemptOutcome::Rejected { .. }),
            "{a:?}"
        );
    }
    // The retry told the model what the gate found.
    let feedback = last_user_text(&model, 1);
    assert!(feedback.contains("WrongAnswer"), "{feedback}");
    assert!(feedback.contains("HELLO WORLD"), "{feedback}");
    // The report is stored and kept beside the artifact.
    let report = approval::latest_report(runner.store().expect("store"), SKILL)
        .expect("read")
        .expect("stored");
    let cases = report.report.verdict(Check::Cases).expect("cases");
    assert_eq!(cases.status, Status::Fail);
    assert_eq!(cases.class, Some(FindingClass::WrongAnswer));
    let slot = authored.attempts[1].slot.clone().expect("slot");
    assert!(slot.join("gate-report.json").is_file());
    // Nothing in the skill folder changed; it answers on tier 2.
    assert_eq!(snapshot(&dir), before);
    let model = Arc::new(ScriptedProvider::from_turns("tier2", vec![turn("HI")]));
    let runner = ws.runner(config()).with_provider(model);
    let out = harness::run(&runner, SKILL, "hi", json!({}));
    assert_eq!(out.tier, Tier::Model);
    assert_eq!(out.output.expect("answer").body, "HI");
}

#[test]
fn a_source_that_reads_a_host_file_is_refused_before_any_build() {
    let (ws, dir) = workspace();
    let before = snapshot(&dir);
    let runner = ws.runner(config());
    let reading = "const SECRET: &str = include_str!(\"/etc/passwd\");\n".to_owned() + GOOD_RUST;
    let (authored, model) = author_with(
        &runner,
        vec![
            source_reply("rust", &reading),
            turn("I cannot write Rust today."),
        ],
        None,
    );
    let authored = authored.expect("forge handler");
    assert!(authored.admitted.is_none());
    for a in &authored.attempts {
        assert!(matches!(a.outcome, AttemptOutcome::Refused { .. }), "{a:?}");
        assert!(a.slot.is_none() && a.build_ms.is_none(), "nothing built");
    }
    assert!(
        !ws.workspace
            .join(".skillhost/quarantine")
            .join(SKILL)
            .exists(),
        "no slot was made"
    );
    let feedback = last_user_text(&model, 1);
    assert!(feedback.contains("include_str"), "{feedback}");
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn a_build_error_is_fed_back_and_the_retry_passes() {
    let (ws, dir) = workspace();
    answer_on_tier_2(&ws);
    let runner = ws.runner(config());
    let broken = GOOD_RUST.replace("to_uppercase()", "to_uppercase() + 1");
    let (authored, model) = author_with(
        &runner,
        vec![
            source_reply("rust", &broken),
            source_reply("rust", GOOD_RUST),
        ],
        None,
    );
    let authored = authored.expect("forge handler");
    assert!(
        matches!(
            authored.attempts[0].outcome,
            AttemptOutcome::BuildFailed { .. }
        ),
        "{:?}",
        authored.attempts[0]
    );
    let feedback = last_user_text(&model, 1);
    assert!(
        feedback.contains("error[E"),
        "the compiler's words: {feedback}"
    );
    assert!(
        matches!(authored.attempts[1].outcome, AttemptOutcome::Passed { .. }),
        "{:?}",
        authored.attempts[1]
    );
    assert!(authored.admitted.is_some());
    assert!(dir.join("handler.wasm").is_file());
}

/// Processes whose working folder is under `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        if let Ok(cwd) = std::fs::read_link(e.path().join("cwd"))
            && cwd.starts_with(dir)
        {
            found.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

#[test]
fn a_build_past_its_time_limit_is_killed_with_its_process_group() {
    let (ws, dir) = workspace();
    let before = snapshot(&dir);
    let mut config = config();
    config.forge.handler.build_timeout_secs = 1;
    config.forge.handler.attempts = 1;
    let runner = ws.runner(config);
    // Constant evaluation that never ends (the lint that would stop it is
    // allowed), so rustc runs until it is killed.
    let endless = "#![allow(long_running_const_eval)]\nconst N: u64 = { let mut i = 0u64; loop { i = i.wrapping_add(1); if i == 0 { break i; } } };\n".to_owned()
        + &GOOD_RUST.replace("to_uppercase())", "to_uppercase() + &N.to_string())");
    let (authored, _) = author_with(&runner, vec![source_reply("rust", &endless)], None);
    let authored = authored.expect("forge handler");
    let a = &authored.attempts[0];
    match &a.outcome {
        AttemptOutcome::TimedOut { reason } => {
            assert!(reason.contains("was killed"), "{reason}")
        }
        other => panic!("not killed: {other:?}"),
    }
    let slot = a.slot.clone().expect("slot");
    assert_eq!(
        processes_in(&slot),
        Vec::<String>::new(),
        "nothing left running"
    );
    assert!(authored.admitted.is_none());
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn a_scripted_js_handler_passes_the_gate() {
    // Where .ci/install-example-toolchains.sh puts it (as the examples' tests
    // expect), not examples/js/: a clean checkout has nothing there.
    let tool = harness::target_dir().join("example-tools/node_modules/.bin/componentize-js");
    assert!(
        tool.is_file(),
        "the JavaScript toolchain is missing: node + @bytecodealliance/componentize-js 0.23 in target/example-tools/node_modules (.ci/install-example-toolchains.sh); looked for {}",
        tool.display()
    );
    let (ws, dir) = workspace();
    let outputs = answer_on_tier_2(&ws);
    let mut config = config();
    config.forge.handler.componentize_js = Some(tool);
    // componentize-js's runtime imports interfaces the handler never uses;
    // the gate lets them through only by the documented per-skill setting.
    config.gate.allow_imports.insert(
        SKILL.to_owned(),
        ["wasi:sockets", "wasi:filesystem", "skillhost:skill/host"]
            .map(str::to_owned)
            .to_vec(),
    );
    let runner = ws.runner(config.clone());
    let (authored, _) = author_with(
        &runner,
        vec![source_reply("js", GOOD_JS)],
        Some(HandlerLang::Js),
    );
    let authored = authored.expect("forge handler");
    assert!(
        matches!(authored.attempts[0].outcome, AttemptOutcome::Passed { .. }),
        "{:?}",
        authored.attempts
    );
    assert!(authored.admitted.is_some());
    assert!(dir.join("handler.wasm").is_file());
    let runner = ws.runner(config);
    for (t, want) in TASKS.iter().zip(&outputs) {
        let out = harness::run(&runner, SKILL, t, json!({}));
        assert_eq!(out.tier, Tier::Handler);
        assert_eq!(&out.output.expect("answer").body, want);
    }
}

#[test]
fn the_cli_needs_a_model_and_exits_1_when_no_handler_passed() {
    let (ws, dir) = workspace();
    let before = snapshot(&dir);
    let no_model = ws.run_cli(&["forge", "handler", SKILL]);
    assert_eq!(no_model.code, 1, "{}", no_model.stderr);
    assert!(
        no_model.stderr.contains("needs a model"),
        "{}",
        no_model.stderr
    );
    let script = ws.workspace.join("author.json");
    let reading = "const X: &[u8] = include_bytes!(\"/etc/passwd\");\n".to_owned() + GOOD_RUST;
    let turns = json!([
        {"text": format!("```rust\n{reading}```\n")},
        {"text": "no code this time"}
    ]);
    std::fs::write(&script, turns.to_string()).expect("write script");
    let model = format!("scripted:{}", script.display());
    let out = ws.run_cli(&["forge", "handler", SKILL, "--model", &model]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("attempt 1: refused before building: line 1: it calls `include_bytes!`"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("attempt 2: refused before building: the reply holds no ```rust block"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("no handler for `shout`"),
        "{}",
        out.stdout
    );
    assert_eq!(snapshot(&dir), before);
    // Bundled skills are never modified.
    let bundled = ws.run_cli(&["forge", "handler", "nonexistent-skill", "--model", &model]);
    assert_eq!(bundled.code, 1);
    assert!(
        bundled.stderr.contains("no skill named"),
        "{}",
        bundled.stderr
    );
}
