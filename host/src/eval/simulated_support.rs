//! The second ablation scenario, support replies: a simulated support
//! model and a simulated rule proposer. Test devices, not models.
//!
//! The model replies to a ticket and makes two mistakes of the scenario's
//! own classes, which no shipped pattern knows:
//! - `EscalationError` (rate [`ESCALATION_RATE`]): the ticket reports an
//!   outage, a breach or lost data and the reply does not escalate it. The
//!   skill has a validator for it.
//! - `ToneError` (rate [`TONE_RATE`]): the customer is upset and the reply
//!   does not apologise. No validator sees it; only a person does.
//! - `GreetingError` (rate [`FORMAT_RATE`]): no greeting line.
//!
//! A mistake is covered (made at rate × (1 − [`COMPLIANCE`])) when a
//! learned instruction mentions "escalat" or "apolog" respectively. Every
//! answer's real mistakes go to the harness's [`TruthLog`].
//!
//! The proposer stands for a model asked by `skillhost learn` for a rule
//! for a class no pattern knows. It answers for the two classes with the
//! validation rule a careful reader of the failed and successful runs
//! would write (cues from the tickets, the missing sentence in the reply)
//! and declines any other class. What it proposes still goes through the
//! real replay over the recorded runs, which may reject it.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::Regex;
use serde_json::json;

use super::ablation::Rng;
use super::simulated::{
    Truth, TruthLog, first_user_message, learned_rules, mistake_rate, next_attempt, parse_user,
    text_answer, uniform_draw,
};
use crate::llm::{ChatRequest, ChatResponse, LlmError, Provider};
use crate::types::BoxFuture;

pub const SKILL: &str = "support-reply";
/// The skill's SKILL.md, shipped with the scenario.
pub const SKILL_MD: &str = include_str!("ablation_scenario/support-reply.md");

pub const ESCALATION_RATE: f64 = 0.45;
pub const TONE_RATE: f64 = 0.5;
pub const FORMAT_RATE: f64 = 0.03;
/// The same compliance as the email model's: both share `mistake_rate`.
pub use super::simulated::COMPLIANCE;

pub const ESCALATION: &str = "EscalationError";
pub const TONE: &str = "ToneError";
pub const FORMAT: &str = "GreetingError";
pub const CLASSES: [&str; 3] = [FORMAT, ESCALATION, TONE];

/// What the model reads as a ticket that needs escalating, and as an
/// upset customer.
const ESCALATION_CUES: &str = r"(?i)\b(outage|is down|went down|breach|data loss|hacked)\b";
const UPSET_CUES: &str = r"(?i)\b(unacceptable|furious|ridiculous|third time|fed up|worst)\b";

static ESCALATION_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(ESCALATION_CUES).expect("constant regex"));
static UPSET_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(UPSET_CUES).expect("constant regex"));

pub struct SimulatedSupportModel {
    seed: u64,
    attempts: Mutex<HashMap<String, u64>>,
    truth: Option<TruthLog>,
}

impl SimulatedSupportModel {
    pub fn new(seed: u64) -> Self {
        SimulatedSupportModel {
            seed,
            attempts: Mutex::new(HashMap::new()),
            truth: None,
        }
    }

    pub fn with_truth(mut self, log: TruthLog) -> Self {
        self.truth = Some(log);
        self
    }

    fn draw(&self, task: &str, attempt: u64, what: &str) -> f64 {
        uniform_draw(self.seed ^ 0x51_77_0e, task, attempt, what)
    }

    fn mistake(&self, task: &str, attempt: u64, what: &str, rate: f64, covered: bool) -> bool {
        self.draw(task, attempt, what) < mistake_rate(rate, covered)
    }

    pub fn compose(&self, task: &str, learned: &str) -> String {
        let attempt = next_attempt(&self.attempts, task);
        let mut truth = Truth {
            task: task.to_owned(),
            attempt,
            mistakes: Vec::new(),
            forms: Vec::new(),
        };
        let mut reply = String::new();
        if self.mistake(task, attempt, "format", FORMAT_RATE, false) {
            truth.mistakes.push(FORMAT);
        } else {
            reply.push_str("Hi,\n\n");
        }
        if UPSET_RE.is_match(task) {
            if self.mistake(task, attempt, "tone", TONE_RATE, learned.contains("apolog")) {
                truth.mistakes.push(TONE);
            } else {
                reply.push_str("I am sorry for the trouble this has caused you.\n");
            }
        }
        reply.push_str("Thank you for your message; we are looking into it.\n");
        if ESCALATION_RE.is_match(task) {
            if self.mistake(
                task,
                attempt,
                "escalation",
                ESCALATION_RATE,
                learned.contains("escalat"),
            ) {
                truth.mistakes.push(ESCALATION);
            } else {
                reply.push_str("I have escalated this to our on-call team.\n");
            }
        }
        reply.push_str(
            "We will get back to you within one business day.\n\nKind regards,\nSupport\n",
        );
        if let Some(log) = &self.truth {
            log.lock().unwrap_or_else(|p| p.into_inner()).push(truth);
        }
        reply
    }
}

impl Provider for SimulatedSupportModel {
    fn name(&self) -> String {
        format!("simulated-support:{}", self.seed)
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let user = first_user_message(req)
                .ok_or_else(|| LlmError::Scripted("no user message".into()))?;
            let (task, _) = parse_user(user);
            let text = self.compose(&task, &learned_rules(req.system.as_deref().unwrap_or("")));
            Ok(text_answer(text))
        })
    }
}

/// Support tickets: an outage in about 40%, an upset customer in about
/// 40%, independently.
pub fn generate_tasks(seed: u64, n: usize) -> Vec<String> {
    const TOPICS: &[&str] = &[
        "the March invoice",
        "a password reset",
        "the CSV export",
        "the mobile app",
        "my subscription",
        "the API keys",
        "the team workspace",
        "a missing receipt",
    ];
    const OUTAGES: &[&str] = &[
        "the dashboard is down since this morning",
        "we had an outage of the sync service",
        "I think our account was hacked",
        "we see data loss in the reports",
    ];
    const UPSET: &[&str] = &[
        "this is unacceptable",
        "this is the third time I ask",
        "I am fed up with this",
        "this is ridiculous",
    ];
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5_5e1d);
    (0..n)
        .map(|i| {
            let mut t = format!(
                "Reply to ticket #{}: question about {}",
                1000 + i,
                rng.pick(TOPICS)
            );
            if rng.chance(0.4) {
                t = format!("{t}; {}", rng.pick(OUTAGES));
            }
            if rng.chance(0.4) {
                t = format!("{t}; {}", rng.pick(UPSET));
            }
            t
        })
        .collect()
}

/// The simulated proposer (see the module docs).
pub struct SimulatedProposer;

impl SimulatedProposer {
    fn answer(prompt: &str) -> String {
        let rule = |cues: &str, reply_has: &str, text: &str, why: &str| {
            json!({
                "kind": "validation",
                "conditions": [
                    {"field": "task.description", "op": "matches", "value": cues},
                    {"field": "output.body", "op": "matches", "value": reply_has, "not": true}
                ],
                "actions": [{"action": "add_instruction", "text": text}],
                "rationale": why
            })
            .to_string()
        };
        if prompt.contains(&format!("Failure class `{TONE}`")) {
            rule(
                UPSET_CUES,
                r"(?i)\b(sorry|apologi[sz]e)",
                "The customer wrote {evidence}: open the reply with a sincere apology.",
                "every failed reply answers an upset customer without apologising; the successful ones apologise or the customer was calm",
            )
        } else if prompt.contains(&format!("Failure class `{ESCALATION}`")) {
            rule(
                ESCALATION_CUES,
                r"(?i)\bescalat",
                "The ticket reports {evidence}: say that it has been escalated to the on-call team.",
                "every failed reply leaves an outage or a breach unescalated",
            )
        } else {
            "I cannot tell what rule would help with this class.".into()
        }
    }
}

impl Provider for SimulatedProposer {
    fn name(&self) -> String {
        "simulated-proposer".into()
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let prompt = first_user_message(req).unwrap_or_default();
            let text = Self::answer(prompt);
            Ok(text_answer(text))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_shipped_pattern_knows_the_scenario_classes() {
        let lib = crate::learn::patterns::Library::shipped().expect("shipped");
        for class in CLASSES {
            assert!(lib.get(class).is_none(), "{class}");
        }
    }

    #[test]
    fn rates_and_coverage() {
        let log = TruthLog::default();
        let m = SimulatedSupportModel::new(5).with_truth(log.clone());
        let n = 3000;
        for i in 0..n {
            m.compose(
                &format!("ticket {i}: the app is down, this is unacceptable"),
                "",
            );
        }
        let share = |class: &str| {
            let l = log.lock().expect("log");
            l.iter().filter(|t| t.mistakes.contains(&class)).count() as f64 / l.len() as f64
        };
        assert!((share(ESCALATION) - ESCALATION_RATE).abs() < 0.03);
        assert!((share(TONE) - TONE_RATE).abs() < 0.03);
        log.lock().expect("log").clear();
        for i in 0..n {
            m.compose(
                &format!("ticket {i}: the app is down, this is unacceptable"),
                "- apologise. - say it was escalated.",
            );
        }
        assert!(share(TONE) < TONE_RATE * (1.0 - COMPLIANCE) + 0.02);
        assert!(share(ESCALATION) < ESCALATION_RATE * (1.0 - COMPLIANCE) + 0.02);
    }

    #[test]
    fn the_proposer_answers_rules_for_its_classes_only() {
        let group = crate::store::FailureGroup {
            skill: SKILL.into(),
            class: TONE.into(),
            tool_error: false,
            count: 5,
            runs_affected: 5,
            runs: 20,
            sample_runs: vec![1],
        };
        let a = SimulatedProposer::answer("Failure class `ToneError`: 5 of ...");
        let parsed = crate::learn::propose::parse(&a, &group).expect("a rule");
        assert_eq!(parsed.kind, crate::learn::rules::Kind::Validation);
        let other = SimulatedProposer::answer("Failure class `Weird`: 5 of ...");
        assert!(crate::learn::propose::parse(&other, &group).is_err());
    }
}
