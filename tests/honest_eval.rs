//! The learning ablation as a sceptic would check it (issues 13 and 33):
//! the retry-only and feedback-retry controls, identical-prompt retries,
//! ground truth from labels against the validators (they disagree), an
//! effect that follows what a rule says and not one word in it, and the
//! support scenario whose rules come only from proposals that must read
//! their evidence, with a noisy reviewer.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Map;
use skillhost::config::Config;
use skillhost::eval::ablation::{self, Arm, ArmSummary, Options, Report, Scenario};
use skillhost::eval::tasks::{Vocabulary, support_tasks};
use skillhost::exec::{Extras, Runner};
use skillhost::learn::rules::{Action, Kind, Origin, Replay, Rule, RuleSet};
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

fn ablation(ws: &Workspace, catalog: Arc<Catalog>, opts: &Options) -> Report {
    harness::runtime()
        .block_on(ablation::run(
            &ws.paths(),
            catalog,
            &Config::default(),
            opts,
        ))
        .expect("ablation")
}

/// One seed at one compliance, small: a debug test build stays fast.
fn small(scenario: Scenario) -> Options {
    let mut o = Options::new(scenario);
    o.seeds = 1;
    o.eval = 40;
    o.compliance = vec![0.7];
    o
}

fn arm(report: &Report, arm: Arm) -> &ArmSummary {
    report.sweeps[0].arm(arm).expect("arm")
}

fn truth(a: &ArmSummary) -> f64 {
    a.truth_success.expect("labelled tasks have ground truth")
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

#[test]
fn feedback_retry_carries_the_validators_message() {
    let (ws, catalog) = with_email_writer(&email_writer_md());
    let model = Arc::new(Scripted {
        answers: Mutex::new(vec![
            "Hello,\n\nAbout the budget.\n".into(),
            "Subject: Budget\n\nHello,\n\nAbout the budget.\n".into(),
        ]),
        requests: Mutex::new(Vec::new()),
    });
    let skill = catalog.get("email-writer").expect("skill");
    let feedback = ablation::feedback_rules("email-writer", &skill.meta.skillhost.validators);
    let runner = Runner::with_catalog(
        ws.paths(),
        Config::default(),
        catalog.clone(),
        Extras {
            provider: Some(model.clone()),
            learning: Some(Arc::new(
                Arm::FeedbackRetry.learning(&RuleSet::default(), &feedback),
            )),
            prefer_model: true,
            store: None,
        },
    );
    let outcome = harness::runtime()
        .block_on(runner.run_skill(
            skill,
            "test".into(),
            "Email Dana about the budget",
            &Map::new(),
            Instant::now(),
        ))
        .expect("run");
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    let requests = model.requests.lock().expect("lock").clone();
    assert_eq!(requests.len(), 2);
    let retry = requests[1].system.clone().unwrap_or_default();
    assert!(
        retry.contains("Your previous answer was rejected: the email has no 'Subject:' line"),
        "{retry}"
    );
    assert_eq!(ablation::identical_retries(&requests), (1, 0));
}

#[test]
fn every_arm_is_judged_by_validators_and_by_labels_and_they_disagree() {
    let (ws, catalog) = with_email_writer(&email_writer_md());
    let report = ablation(&ws, catalog, &small(Scenario::Email));
    let sweep = &report.sweeps[0];
    assert_eq!(sweep.compliance, Some(0.7));
    assert_eq!(sweep.summary.len(), ablation::ARMS.len());
    for a in &sweep.summary {
        assert!(
            a.truth_success.is_some() && a.agreement.is_some(),
            "{:?}",
            a.arm
        );
        assert!(a.model_calls_per_task >= 1.0);
    }
    let retry = arm(&report, Arm::RetryOnly);
    assert!(retry.retries > 0 && retry.identical_retries == retry.retries);
    for a in [Arm::FeedbackRetry, Arm::AllRules, Arm::RulesAndFeedback] {
        assert_eq!(
            arm(&report, a).identical_retries,
            0,
            "{a:?}: every retry adds information"
        );
    }
    // The checker and the validators disagree both ways on the shipped
    // tasks: mistakes no validator flags, and flags on right answers.
    let base = arm(&report, Arm::Baseline);
    assert!(base.agreement.expect("agreement") < 1.0);
    let missed: u64 = base.by_class.values().map(|t| t.missed).sum();
    let false_alarms: u64 = base.by_class.values().map(|t| t.false_alarms).sum();
    assert!(missed > 0 && false_alarms > 0, "{:?}", base.by_class);
    // Learning helps over doing nothing; the report, not this test, says
    // by how much against feedback-retry.
    assert!(truth(arm(&report, Arm::AllRules)) > truth(base));
}

/// The shipped rules' instructions, said three ways for the timezone and
/// attachment classes: as shipped, in other words without the keyword, and
/// with the keyword but the opposite meaning.
fn reworded(words: &'static str) -> ablation::EditRules {
    Arc::new(move |set: &mut RuleSet| {
        for r in &mut set.rules {
            let text = match (words, r.class.as_str(), r.kind) {
                ("synonyms", "TimezoneError", Kind::Prevention) => {
                    "Beside every hour of the day you write, name its UTC offset or local time region; if nobody gave one, say it is unknown rather than guessing."
                }
                ("synonyms", "TimezoneError", _) => {
                    "The draft gives {evidence} with no UTC offset: beside every hour of the day, name its UTC offset or local time region; if nobody gave one, say it is unknown rather than guessing."
                }
                ("synonyms", "AttachmentError", Kind::Prevention) => {
                    "When the request asks to send files along, end the email with a line that names each enclosed file (or 'the requested document')."
                }
                ("synonyms", "AttachmentError", _) => {
                    "The request mentions {evidence} but the draft encloses no file: end the email with a line that names each enclosed file."
                }
                ("opposite", "TimezoneError", _) => {
                    "Timezone names confuse readers: never mention a timezone next to a time."
                }
                ("opposite", "AttachmentError", _) => {
                    "Attachments are handled by the mail client: do not list or mention them in the email."
                }
                _ => continue,
            };
            for a in &mut r.actions {
                if let Action::AddInstruction { text: t } = a {
                    *t = text.to_owned();
                }
            }
        }
    })
}

#[test]
fn the_effect_follows_what_a_rule_means_not_one_word() {
    let (ws, catalog) = with_email_writer(&email_writer_md());
    // Mistakes of the two classes the prevention rules speak to, counted
    // by ground truth in the prevention arm (no retry: the text alone).
    let misses = |edit: Option<ablation::EditRules>| {
        let mut o = small(Scenario::Email);
        o.eval = 60;
        o.edit_rules = edit;
        let report = ablation(&ws, catalog.clone(), &o);
        let count = |a: Arm| {
            let by = &arm(&report, a).by_class;
            ["TimezoneError", "AttachmentError"]
                .iter()
                .map(|c| by.get(*c).map_or(0, |t| t.truth_misses))
                .sum::<u64>() as f64
        };
        (count(Arm::Baseline), count(Arm::Prevention))
    };
    let (base, shipped) = misses(None);
    let (_, synonyms) = misses(Some(reworded("synonyms")));
    let (_, opposite) = misses(Some(reworded("opposite")));
    let gain = base - shipped;
    assert!(gain >= 4.0, "the shipped rules help: {base} -> {shipped}");
    assert!(
        base - synonyms >= 0.7 * gain,
        "other words, same meaning, the gain remains: {base} -> {synonyms} (shipped {shipped})"
    );
    assert!(
        base - opposite <= 0.2 * gain,
        "the keyword with the opposite meaning gains nothing: {base} -> {opposite} (shipped {shipped})"
    );
}

#[test]
fn support_rules_come_from_evidence_and_say_so() {
    let ws = Workspace::new();
    let catalog = Arc::new(Catalog::load(&ws.paths().roots(), &LoadOptions::default()));
    let mut o = small(Scenario::Support);
    o.mark_noise = 0.0;
    let report = ablation(&ws, catalog, &o);
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
    // The class no validator sees was learned from the runs a reviewer
    // marked, and the validators miss it entirely.
    let tone = live
        .iter()
        .find(|r| r.class == "ToneError")
        .expect("a ToneError rule");
    assert!(
        tone.origin_line(&report.last_marked)
            .contains("marked failed by a person")
    );
    let base = arm(&report, Arm::Baseline);
    let t = &base.by_class["ToneError"];
    assert!(t.truth_misses > 0 && t.missed == t.truth_misses, "{t:?}");
    assert!(
        arm(&report, Arm::AllRules).by_class["ToneError"].truth_misses < t.truth_misses,
        "the learned rule catches what no validator sees"
    );
    assert_eq!(report.sweeps[0].seeds[0].marks.wrong, 0);
}

#[test]
fn email_without_the_shipped_patterns_learns_only_what_proposals_and_marks_give() {
    let (ws, catalog) = with_email_writer(&email_writer_md());
    let with_library = ablation(&ws, catalog.clone(), &small(Scenario::Email));
    assert!(
        with_library.shipped_patterns
            && with_library
                .last_rules
                .iter()
                .any(|r| r.origin.pattern != "model"),
        "by default email's rules come from the shipped patterns"
    );
    let mut o = small(Scenario::Email);
    o.shipped_patterns = false;
    let report = ablation(&ws, catalog, &o);
    assert!(!report.shipped_patterns);
    assert!(!report.last_rules.is_empty(), "the proposer was asked");
    for r in &report.last_rules {
        assert_eq!(r.origin.pattern, "model", "{}: no shipped pattern", r.id);
    }
}

/// A proposer that ignores its evidence: the rule it would write for a
/// class whatever the runs say (the cue words chosen in advance).
struct Blind;

impl Provider for Blind {
    fn name(&self) -> String {
        "blind-proposer".into()
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        let prompt = format!("{:?}", req.messages);
        let (cue, has, text) = if prompt.contains("Failure class `ToneError`") {
            (
                "(?i)\\b(unacceptable|furious|ridiculous|third time|fed up|worst)\\b",
                "(?i)sorry|apologi",
                "Open the reply with a sincere apology.",
            )
        } else {
            (
                "(?i)\\b(outage|is down|went down|breach|data loss|hacked)\\b",
                "(?i)escalat",
                "Say that it has been escalated to the on-call team.",
            )
        };
        let text = serde_json::json!({
            "kind": "validation",
            "conditions": [
                {"field": "task.description", "op": "matches", "value": cue},
                {"field": "output.body", "op": "matches", "value": has, "not": true}
            ],
            "actions": [{"action": "add_instruction", "text": text}],
            "rationale": "known in advance"
        })
        .to_string();
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

#[test]
fn a_proposer_that_ignores_its_evidence_learns_nothing_where_the_words_differ() {
    let ws = Workspace::new();
    let catalog = Arc::new(Catalog::load(&ws.paths().roots(), &LoadOptions::default()));
    let tone_misses = |proposer: Option<Arc<dyn Provider>>| {
        let mut o = small(Scenario::Support);
        o.mark_noise = 0.0;
        o.train_tasks = Some(support_tasks(11, 150, Vocabulary::Shifted));
        o.eval_tasks = Some(support_tasks(12, 60, Vocabulary::Shifted));
        o.proposer = proposer;
        let report = ablation(&ws, catalog.clone(), &o);
        let misses = |a: Arm| {
            arm(&report, a)
                .by_class
                .get("ToneError")
                .map_or(0, |t| t.truth_misses)
        };
        (misses(Arm::Baseline), misses(Arm::AllRules), report)
    };
    let (base, reading, report) = tone_misses(None);
    assert!(
        reading * 2 <= base,
        "the evidence reader learns the new words: {base} -> {reading}; rules {:?}",
        report
            .last_rules
            .iter()
            .map(|r| (&r.id, &r.conditions))
            .collect::<Vec<_>>()
    );
    let (base_blind, blind, report) = tone_misses(Some(Arc::new(Blind)));
    assert_eq!(base, base_blind, "the same world");
    assert!(
        blind + 2 >= base,
        "a proposer that ignores the runs gains nothing: {base} -> {blind}"
    );
    assert!(
        report
            .last_rules
            .iter()
            .filter(|r| r.class == "ToneError")
            .all(|r| r.rejected),
        "the replay rejects its rule"
    );
}

#[test]
fn a_noisy_reviewer_is_counted_and_reported() {
    let ws = Workspace::new();
    let catalog = Arc::new(Catalog::load(&ws.paths().roots(), &LoadOptions::default()));
    let mut o = small(Scenario::Support);
    o.mark_noise = 0.3;
    o.eval = 10;
    let report = ablation(&ws, catalog, &o);
    assert_eq!(report.mark_noise, 0.3);
    let marks = &report.sweeps[0].seeds[0].marks;
    let share = (marks.wrong + marks.overlooked) as f64 / marks.reviewed as f64;
    assert!((share - 0.3).abs() < 0.08, "{marks:?}");
    assert!(marks.wrong > 0 && marks.marked >= marks.wrong);
}
