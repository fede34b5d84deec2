//! Issue 13, the evaluation half: the retry-only control, identical-prompt
//! retries, ground truth against the validators, and the support scenario
//! whose rules come only from proposals and feedback.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Map;
use skillhost::config::Config;
use skillhost::eval::ablation::{self, ArmSummary, Options, Report, Scenario};
use skillhost::exec::{Extras, Runner};
use skillhost::learn::rules::{Kind, Origin, Replay, Rule, RuleSet};
use skillhost::learn::{Learning, RuleFilter};
use skillhost::llm::{ChatRequest, ChatResponse, LlmError, Provider, Usage};
use skillhost::skill::{Catalog, LoadOptions};
use skillhost::types::BoxFuture;

use crate::harness::{self, Workspace};

/// Answers from a list, one per call, and keeps every request.
struct Scripted {
    answers: Mutex<Vec<String>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl Provider for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        self.requests.lock().expect("lock").push(req.clone());
        let text = self.answers.lock().expect("lock").remove(0);
        Box::pin(async move {
            Ok(ChatResponse {
                response_bytes: text.len(),
                text: Some(text),
                tool_calls: Vec::new(),
                usage: Usage::default(),
                request_bytes: 0,
                retries: 0,
            })
        })
    }
}

fn email_writer_md() -> String {
    std::fs::read_to_string(harness::repo_root().join("skills/email-writer/SKILL.md"))
        .expect("email-writer SKILL.md")
}

/// A workspace whose catalog has the email-writer (its SKILL.md as given;
/// the model answers, so no handler is needed).
fn with_email_writer(md: &str) -> (Workspace, Arc<Catalog>) {
    let ws = Workspace::new();
    let dir = ws.skills.join("email-writer");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("SKILL.md"), md).expect("write");
    let catalog = Arc::new(Catalog::load(&ws.paths().roots(), &LoadOptions::default()));
    assert!(catalog.get("email-writer").is_some());
    (ws, catalog)
}

fn ablation(ws: &Workspace, catalog: Arc<Catalog>, scenario: Scenario, seeds: u64) -> Report {
    let opts = Options {
        scenario,
        train: 40,
        eval: 40,
        seeds,
        eval_tasks: None,
        model: None,
        on_seed: None,
    };
    let rt = harness::runtime();
    rt.block_on(ablation::run(
        &ws.paths(),
        catalog,
        &Config::default(),
        &opts,
    ))
    .expect("ablation")
}

fn arm(report: &Report, arm: RuleFilter) -> &ArmSummary {
    report.summary.iter().find(|a| a.arm == arm).expect("arm")
}

#[test]
fn retry_only_asks_again_with_the_same_prompt_and_no_rule() {
    let (ws, catalog) = with_email_writer(&email_writer_md());
    let run = |filter: RuleFilter| {
        let model = Arc::new(Scripted {
            // No Subject line (a FormatError), then a good email.
            answers: Mutex::new(vec![
                "Hello,\n\nAbout the budget.\n".into(),
                "Subject: Budget\n\nHello,\n\nAbout the budget.\n".into(),
            ]),
            requests: Mutex::new(Vec::new()),
        });
        let (learning, _) = Learning::from_set(RuleSet::default(), filter);
        let runner = Runner::with_catalog(
            ws.paths(),
            Config::default(),
            catalog.clone(),
            Extras {
                provider: Some(model.clone()),
                learning: Some(Arc::new(learning)),
                prefer_model: true,
                store: None,
            },
        );
        let skill = catalog.get("email-writer").expect("skill");
        let outcome = harness::runtime()
            .block_on(runner.run_skill(
                skill,
                "test".into(),
                "Email Dana about the budget",
                &Map::new(),
                Instant::now(),
            ))
            .expect("run");
        let requests = model.requests.lock().expect("lock").clone();
        (outcome, requests)
    };
    let (retried, requests) = run(RuleFilter::RetryOnly);
    assert!(retried.failure.is_none(), "{:?}", retried.failure);
    assert_eq!(retried.model_calls, 2);
    assert!(retried.rules_applied.is_empty(), "no rule fires");
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0], requests[1], "the same prompt, byte for byte");
    assert_eq!(ablation::identical_retries(&requests), (1, 1));

    let (baseline, requests) = run(RuleFilter::None);
    assert_eq!(requests.len(), 1, "the baseline does not retry");
    assert_eq!(
        baseline.failure.map(|f| f.class.to_string()).as_deref(),
        Some("FormatError")
    );
}

#[test]
fn all_rules_retry_only_with_new_information_and_beat_retry_only() {
    let (ws, catalog) = with_email_writer(&email_writer_md());
    let report = ablation(&ws, catalog, Scenario::Email, 1);
    let retry = arm(&report, RuleFilter::RetryOnly);
    let all = arm(&report, RuleFilter::All);
    assert!(retry.retries > 0 && retry.identical_retries == retry.retries);
    assert!(all.retries > 0, "validation rules retried some runs");
    assert_eq!(all.identical_retries, 0, "every remedy adds information");
    let truth = |a: &ArmSummary| a.mean_truth_success.expect("ground truth");
    assert!(
        truth(all) > truth(retry),
        "{} vs {}",
        truth(all),
        truth(retry)
    );
    assert!(all.model_calls_per_task <= retry.model_calls_per_task);
    // With the shipped validators the two verdicts agree on this stream.
    for (class, t) in &all.truth_by_class {
        assert_eq!(t.missed, 0, "{class}");
    }
}

#[test]
fn ground_truth_sees_what_a_weakened_validator_misses() {
    // The timezone validator cut down to "3pm"-style times only.
    let md = email_writer_md();
    let start = md.find("- class: TimezoneError").expect("validator");
    let line_start = start
        + md[start..]
            .find("- { field: output.body")
            .expect("first condition");
    let line_end = line_start + md[line_start..].find('\n').expect("end of line");
    let weak = format!(
        "{}- {{ field: output.body, op: matches, value: \"\\\\b\\\\d{{1,2}}pm\\\\b\" }}{}",
        &md[..line_start],
        &md[line_end..]
    );
    let (ws, catalog) = with_email_writer(&weak);
    let report = ablation(&ws, catalog, Scenario::Email, 1);
    let base = arm(&report, RuleFilter::None);
    let tz = &base.truth_by_class["TimezoneError"];
    assert!(tz.mistakes > 0 && tz.missed > 0, "{tz:?}");
    assert!(
        base.mean_truth_success.expect("truth") < base.mean_success,
        "the validators pass answers that have the mistake: {} vs {}",
        base.mean_truth_success.expect("truth"),
        base.mean_success
    );
    // The classes whose validators were left alone miss nothing.
    assert_eq!(base.truth_by_class["SpamTriggerError"].missed, 0);
}

#[test]
fn support_rules_come_from_proposals_and_feedback_and_say_so() {
    let ws = Workspace::new();
    let catalog = Arc::new(Catalog::load(&ws.paths().roots(), &LoadOptions::default()));
    let report = ablation(&ws, catalog, Scenario::Support, 1);
    let live: Vec<&Rule> = report
        .last_rules
        .iter()
        .filter(|r| r.enabled && !r.rejected)
        .collect();
    assert!(!live.is_empty());
    for r in &live {
        assert_eq!(r.origin.pattern, "model", "{}: no shipped pattern", r.id);
        let line = r.origin_line(&report.last_marked);
        assert!(
            line.contains("proposed by simulated-proposer; replay kept: matches"),
            "{line}"
        );
    }
    // The class no validator sees was learned from the runs a person marked.
    let tone = live
        .iter()
        .find(|r| r.class == "ToneError")
        .expect("a ToneError rule");
    assert!(
        tone.origin
            .failures
            .iter()
            .all(|id| report.last_marked.contains(id)),
        "{:?} vs {:?}",
        tone.origin.failures,
        report.last_marked
    );
    assert!(
        tone.origin_line(&report.last_marked)
            .contains("marked failed by a person")
    );
    let truth = |f| arm(&report, f).mean_truth_success.expect("truth");
    assert!(
        truth(RuleFilter::All) >= truth(RuleFilter::None) + 0.15,
        "{} vs {}",
        truth(RuleFilter::All),
        truth(RuleFilter::None)
    );
}

#[test]
fn rules_show_prints_the_origin_with_replay_figures_and_marked_runs() {
    let ws = Workspace::new();
    let r = ws.run_cli(&["run", "Email Dana about the review at 3pm", "--json"]);
    let id = r.json()["run_id"].as_i64().expect("a recorded run");
    let marked = ws.run_cli(&[
        "runs",
        "mark",
        &id.to_string(),
        "--failed",
        "--class",
        "ToneError",
    ]);
    assert_eq!(marked.code, 0, "{}", marked.stderr);
    let mut rule = Rule::new(
        "proposed-toneerror-email-writer".into(),
        Kind::Validation,
        "ToneError",
        "email-writer",
        Vec::new(),
        Vec::new(),
        Origin {
            pattern: "model".into(),
            failures: vec![id],
            failure_count: 1,
            model: Some("simulated-proposer".into()),
            rationale: None,
        },
    );
    rule.replay = Some(Replay {
        failures: 1,
        failures_matched: 1,
        verdict: "kept: matches 1 of 1 failures (100%)".into(),
        ..Replay::default()
    });
    let path = skillhost::learn::rules_path(&ws.paths().state_dir());
    RuleSet { rules: vec![rule] }.save(&path).expect("save");
    let shown = ws.run_cli(&["rules", "show", "proposed-toneerror-email-writer"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let json: serde_json::Value = serde_json::from_str(&shown.stdout).expect("one JSON object");
    let summary = json["origin_summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("proposed by simulated-proposer; replay kept: matches 1 of 1")
            && summary.contains(&format!("marked failed by a person (runs mark): runs {id}")),
        "{}",
        shown.stdout
    );
}

#[test]
fn a_learned_validation_rule_catches_what_no_validator_knows_and_rechecks_the_retry() {
    let ws = Workspace::new();
    ws.add_skill("replier", "metadata:\n  output_type: text/plain", None);
    let catalog = Arc::new(Catalog::load(&ws.paths().roots(), &LoadOptions::default()));
    let rule = Rule::new(
        "proposed-toneerror-replier".into(),
        Kind::Validation,
        "ToneError",
        "replier",
        vec![skillhost::learn::condition::Condition {
            field: "output.body".into(),
            op: skillhost::learn::condition::Op::Matches,
            value: serde_json::json!("(?i)\\bwhatever\\b"),
            not: false,
        }],
        vec![skillhost::learn::rules::Action::AddInstruction {
            text: "The reply says {evidence}: be polite.".into(),
        }],
        Origin::default(),
    );
    let run = |answers: Vec<&str>| {
        let model = Arc::new(Scripted {
            answers: Mutex::new(answers.into_iter().map(str::to_owned).collect()),
            requests: Mutex::new(Vec::new()),
        });
        let (learning, _) = Learning::from_set(
            RuleSet {
                rules: vec![rule.clone()],
            },
            RuleFilter::All,
        );
        let runner = Runner::with_catalog(
            ws.paths(),
            Config::default(),
            catalog.clone(),
            Extras {
                provider: Some(model.clone()),
                learning: Some(Arc::new(learning)),
                prefer_model: true,
                store: None,
            },
        );
        let skill = catalog.get("replier").expect("skill");
        let outcome = harness::runtime()
            .block_on(runner.run_skill(skill, "test".into(), "Reply", &Map::new(), Instant::now()))
            .expect("run");
        let requests = model.requests.lock().expect("lock").clone();
        (outcome, requests)
    };
    // The skill has no validator: the rule alone sees the mistake.
    let (fixed, requests) = run(vec!["Whatever.", "Thank you, we are on it."]);
    assert!(fixed.failure.is_none(), "{:?}", fixed.failure);
    assert_eq!(requests.len(), 2);
    assert_ne!(requests[0], requests[1]);
    assert!(
        format!("{:?}", requests[1]).contains("The reply says 'Whatever': be polite."),
        "the remedy quotes the evidence"
    );
    // The retry makes the same mistake: the rule fails the run.
    let (still, _) = run(vec!["Whatever.", "Whatever, again."]);
    assert_eq!(
        still.failure.map(|f| f.class.to_string()).as_deref(),
        Some("ToneError")
    );
    // An answer without the evidence: nothing fires, one call.
    let (clean, requests) = run(vec!["Thank you."]);
    assert!(clean.failure.is_none() && clean.rules_applied.is_empty());
    assert_eq!(requests.len(), 1);
}
