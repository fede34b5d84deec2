//! The forge's gate judges a handler by the skill's own cases: those in
//! the catalog skill's `tests/cases.jsonl` (and its recorded runs), never
//! the quarantine slot's, which holds none.

use super::*;

/// `shout`'s cases, shipped with it: no run was ever recorded.
fn ship_cases(dir: &Path) {
    std::fs::create_dir_all(dir.join("tests")).expect("mkdir tests");
    let cases: String = TASKS
        .iter()
        .map(|t| format!("{}\n", json!({"task": t, "output": t.to_uppercase()})))
        .collect();
    std::fs::write(dir.join("tests/cases.jsonl"), cases).expect("write cases");
}

#[test]
fn a_handler_wrong_on_the_shipped_cases_fails_the_gate_and_is_not_written() {
    let (ws, dir) = workspace();
    ship_cases(&dir);
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
    assert!(authored.admitted.is_none(), "{authored:#?}");
    for a in &authored.attempts {
        assert!(
            matches!(a.outcome, AttemptOutcome::Rejected { .. }),
            "{a:?}"
        );
    }
    let report = approval::latest_report(runner.store().expect("store"), SKILL)
        .expect("read")
        .expect("stored");
    let cases = report.report.verdict(Check::Cases).expect("cases");
    assert_eq!(cases.class, Some(FindingClass::WrongAnswer), "{cases:?}");
    assert_eq!(report.report.cases.len(), TASKS.len());
    assert!(report.report.cases.iter().all(|c| !c.passed));
    // The model heard which shipped case it got wrong.
    let feedback = last_user_text(&model, 1);
    assert!(feedback.contains("tests/cases.jsonl:1"), "{feedback}");
    // Nothing was written into the skill.
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn a_handler_right_on_the_shipped_cases_is_enabled_by_them() {
    let (ws, dir) = workspace();
    ship_cases(&dir);
    let runner = ws.runner(config());
    let (authored, _) = author_with(
        &runner,
        vec![
            source_reply("rust", GOOD_RUST),
            source_reply("rust", GOOD_RUST),
        ],
        Some(HandlerLang::Rust),
    );
    let authored = authored.expect("forge handler");
    assert_eq!(authored.attempts.len(), 1, "{:#?}", authored.attempts);
    let admission = authored
        .admitted
        .unwrap_or_else(|| panic!("not admitted: {:#?}", authored.attempts));
    // Three shipped cases compared answers: enough for a generated
    // handler to be enabled by itself.
    assert_eq!(admission.state, HandlerState::Enabled);
    let report = approval::latest_report(runner.store().expect("store"), SKILL)
        .expect("read")
        .expect("stored");
    assert_eq!(report.report.answers_compared(), TASKS.len());
    assert!(dir.join("handler.wasm").is_file());
}
