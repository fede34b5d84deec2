//! The second ablation scenario, support replies: a simulated support
//! model. A test device, not a model.
//!
//! Like the email model it reads its whole prompt ([`super::reading`]):
//! the support-reply skill's own instructions already ask for an apology
//! to an upset customer and for escalating an incident, and learned rules
//! or feedback add to them by what they mean. Its tendencies:
//! - `ToneError` ([`TONE_RATE`]): the customer is upset and the reply does
//!   not apologise. No validator sees it; only a person does.
//! - `EscalationError` ([`ESCALATION_RATE`]): the ticket reports an
//!   incident and the reply does not escalate it. The skill's validator
//!   knows some words for an incident, not all ("nobody can sign in" is
//!   one it misses); and when the model does escalate it sometimes says
//!   "forwarded to our on-call engineers", which the validator flags
//!   although it is right.
//! - `GreetingError` ([`GREETING_RATE`]): no greeting line.
//!
//! What the model takes for an upset customer or an incident is its own
//! lexicon, broader than the validator's.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::Regex;

use super::reading::{Need, Prompt};
use super::simulated::{next_attempt, text_answer, uniform_draw};
use crate::llm::{ChatRequest, ChatResponse, LlmError, Provider};
use crate::types::{BoxFuture, constant_regex as re};

pub const SKILL: &str = "support-reply";
/// The skill's SKILL.md, shipped with the scenario.
pub const SKILL_MD: &str = include_str!("ablation_scenario/support-reply.md");

pub const ESCALATION_RATE: f64 = 0.45;
pub const TONE_RATE: f64 = 0.5;
pub const GREETING_RATE: f64 = 0.03;
/// Share of escalations said as "forwarded" (no "escalat" in them).
pub const FORWARDED_FORM: f64 = 0.3;

pub const ESCALATION: &str = "EscalationError";
pub const TONE: &str = "ToneError";
pub const FORMAT: &str = "GreetingError";
pub const CLASSES: [&str; 3] = [FORMAT, ESCALATION, TONE];

const SAY: &[&str] = &[
    "say", "tell", "state", "confirm", "mention", "include", "sentence", "write", "open", "start",
    "begin", "first",
];

pub const NEED_APOLOGY: Need = Need {
    name: "apology",
    topic: &[
        "apology",
        "apologise",
        "apologize",
        "apologising",
        "apologizing",
        "apologies",
        "sorry",
        "regret",
    ],
    aspects: &[
        &[
            "upset",
            "angry",
            "frustrated",
            "annoyed",
            "unhappy",
            "disappointed",
            "complain",
            "complaint",
            "customer wrote",
            "ticket says",
        ],
        SAY,
    ],
    avoidance: false,
    contrary: &[],
};
pub const NEED_ESCALATION: Need = Need {
    name: "escalation",
    topic: &[
        "escalate",
        "escalated",
        "escalation",
        "on-call",
        "on call",
        "incident team",
        "engineers",
        "hand over",
        "handed over",
        "forwarded",
    ],
    aspects: &[
        &[
            "outage",
            "down",
            "breach",
            "lost data",
            "data loss",
            "incident",
            "hacked",
            "unreachable",
            "security",
            "sign in",
            "ticket says",
            "ticket reports",
        ],
        SAY,
    ],
    avoidance: false,
    contrary: &[],
};
pub const NEED_GREETING: Need = Need {
    name: "greeting",
    topic: &["greet", "greeting", "hi", "hello", "dear", "salutation"],
    aspects: &[SAY],
    avoidance: false,
    contrary: &[],
};

/// The model's reading of a ticket: an incident, an upset customer.
static INCIDENT_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(outage|is down|went down|breach|data loss|hacked|unreachable|sign in at all|changed our billing|is gone|are gone)\b",
    )
});
static UPSET_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(unacceptable|furious|ridiculous|third time|fed up|worst|waiting two weeks|disappointed|frustrated|cancelling)\b",
    )
});

pub struct SimulatedSupportModel {
    seed: u64,
    compliance: f64,
    attempts: Mutex<HashMap<String, u64>>,
}

impl SimulatedSupportModel {
    pub fn new(seed: u64, compliance: f64) -> Self {
        SimulatedSupportModel {
            seed,
            compliance,
            attempts: Mutex::new(HashMap::new()),
        }
    }

    pub fn compose(&self, prompt: &Prompt) -> String {
        let task = prompt.task.as_str();
        let attempt = next_attempt(&self.attempts, task);
        let draw = |what: &str| uniform_draw(self.seed ^ 0x51_77_0e, task, attempt, what);
        let slips = |what: &str, rate: f64, need: &Need, cue: Option<&str>| {
            let specifics: Vec<String> = cue.map(str::to_owned).into_iter().collect();
            draw(what) < rate * (1.0 - prompt.follows(need, &specifics, self.compliance))
        };
        let mut reply = String::new();
        if !slips("greeting", GREETING_RATE, &NEED_GREETING, None) {
            reply.push_str("Hi,\n\n");
        }
        if let Some(cue) = UPSET_RE.find(task)
            && !slips("tone", TONE_RATE, &NEED_APOLOGY, Some(cue.as_str()))
        {
            reply.push_str(if draw("tone-form") < 0.6 {
                "I am sorry for the trouble this has caused you.\n"
            } else {
                "We apologise for the inconvenience.\n"
            });
        }
        reply.push_str("Thank you for your message; we are looking into it.\n");
        if let Some(cue) = INCIDENT_RE.find(task)
            && !slips(
                "escalation",
                ESCALATION_RATE,
                &NEED_ESCALATION,
                Some(cue.as_str()),
            )
        {
            reply.push_str(if draw("escalation-form") < FORWARDED_FORM {
                "I have forwarded this to our on-call engineers.\n"
            } else {
                "I have escalated this to our on-call team.\n"
            });
        }
        reply.push_str(
            "We will get back to you within one business day.\n\nKind regards,\nSupport\n",
        );
        reply
    }
}

impl Provider for SimulatedSupportModel {
    fn name(&self) -> String {
        format!("simulated-support:{}", self.seed)
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let prompt =
                Prompt::read(req).ok_or_else(|| LlmError::Scripted("no user message".into()))?;
            Ok(text_answer(self.compose(&prompt)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn prompt(task: &str, learned: &[&str]) -> Prompt {
        Prompt {
            task: task.to_owned(),
            context: Map::new(),
            instructions: learned
                .iter()
                .map(|t| super::super::reading::Instruction {
                    text: (*t).to_owned(),
                    salience: 1.0,
                })
                .collect(),
        }
    }

    #[test]
    fn no_shipped_pattern_knows_the_scenario_classes() {
        let lib = crate::learn::patterns::Library::shipped().expect("shipped");
        for class in CLASSES {
            assert!(lib.get(class).is_none(), "{class}");
        }
    }

    #[test]
    fn an_apology_follows_an_instruction_that_means_it() {
        let n = 2000;
        let share = |learned: &[&str]| {
            let m = SimulatedSupportModel::new(5, 0.9);
            (0..n)
                .filter(|i| {
                    let task = format!("ticket {i}: the app is down, this is unacceptable");
                    let reply = m.compose(&prompt(&task, learned));
                    !reply.contains("sorry") && !reply.contains("apologise")
                })
                .count() as f64
                / n as f64
        };
        let none = share(&[]);
        let meant = share(&["The customer wrote 'unacceptable': open with a sincere apology."]);
        let wrong = share(&["Never apologise to a customer."]);
        assert!(meant < none - 0.2, "{meant} vs {none}");
        assert!(wrong >= none - 0.02, "{wrong} vs {none}");
    }
}
