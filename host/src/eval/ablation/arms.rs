//! The arms of the ablation, and the rules each runs with.
//!
//! | arm | rules in force | retry |
//! |---|---|---|
//! | baseline | none | none |
//! | retry-only | none | a refused answer is asked for again, same prompt |
//! | feedback-retry | none learned | a refused answer is asked for again with the validator's message and what it found |
//! | prevention | learned prevention rules | none |
//! | all-rules | every learned rule | a learned validation rule's remedy |
//! | rules+feedback | every learned rule, then the feedback rules | a learned remedy where one fires, else the validator's message |
//!
//! Feedback-retry is the control that matters (self-correction from the
//! host's own validator message, as in Reflexion-style loops): it gets
//! the same second chance as all-rules, with the information the host
//! already has, and nothing learned. It is built from the run pipeline's
//! own mechanism, without a special path in `exec`: each of the skill's
//! validators becomes a validation rule with the validator's conditions
//! and, as its remedy, the validator's message. The retry's prompt then
//! carries "Your previous answer was rejected: MESSAGE (found: EVIDENCE)"
//! where a learned remedy would stand. Rules+feedback is what a host
//! would deploy: what the learned rules add on top of feedback.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::learn::condition::Condition;
use crate::learn::rules::{Action, Kind, Origin, Rule, RuleSet};
use crate::learn::{Learning, RuleFilter};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arm {
    Baseline,
    RetryOnly,
    FeedbackRetry,
    Prevention,
    AllRules,
    #[serde(rename = "rules+feedback")]
    RulesAndFeedback,
}

pub const ARMS: [Arm; 6] = [
    Arm::Baseline,
    Arm::RetryOnly,
    Arm::FeedbackRetry,
    Arm::Prevention,
    Arm::AllRules,
    Arm::RulesAndFeedback,
];

impl Arm {
    /// The arm of this name ([`Arm::name`]).
    pub fn parse(name: &str) -> Option<Arm> {
        ARMS.into_iter().find(|a| a.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Arm::Baseline => "baseline",
            Arm::RetryOnly => "retry-only",
            Arm::FeedbackRetry => "feedback-retry",
            Arm::Prevention => "prevention",
            Arm::AllRules => "all-rules",
            Arm::RulesAndFeedback => "rules+feedback",
        }
    }

    /// The rules this arm runs with: `learned`, or the validators as
    /// feedback rules (see the module docs).
    pub fn learning(self, learned: &RuleSet, feedback: &RuleSet) -> Learning {
        let (set, filter) = match self {
            Arm::Baseline => (RuleSet::default(), RuleFilter::None),
            Arm::RetryOnly => (RuleSet::default(), RuleFilter::RetryOnly),
            Arm::FeedbackRetry => (feedback.clone(), RuleFilter::All),
            Arm::Prevention => (learned.clone(), RuleFilter::PreventionOnly),
            Arm::AllRules => (learned.clone(), RuleFilter::All),
            // Learned rules first: a rule of the failure's class that
            // fires is tried before that class's feedback.
            Arm::RulesAndFeedback => {
                let mut both = learned.clone();
                both.rules.extend(feedback.rules.iter().cloned());
                (both, RuleFilter::All)
            }
        };
        Learning::from_set(set, filter).0
    }
}

/// A validator as a skill declares it.
#[derive(Deserialize)]
struct ValidatorSpec {
    class: String,
    #[serde(default)]
    message: String,
    when: Vec<Condition>,
}

/// The skill's validators as validation rules whose remedy is their own
/// message (the feedback-retry arm). Validators that do not parse are
/// left out, as the run pipeline leaves them out.
pub fn feedback_rules(skill: &str, validators: &[Value]) -> RuleSet {
    let rules = validators
        .iter()
        .filter_map(|v| serde_json::from_value::<ValidatorSpec>(v.clone()).ok())
        .map(|spec| {
            let message = if spec.message.is_empty() {
                format!("the answer failed the {} check", spec.class)
            } else {
                spec.message
            };
            Rule::new(
                format!("feedback-{}", spec.class.to_lowercase()),
                Kind::Validation,
                &spec.class,
                skill,
                spec.when,
                vec![Action::AddInstruction {
                    text: format!(
                        "Your previous answer was rejected: {message} (found: {{evidence}})."
                    ),
                }],
                Origin {
                    pattern: "validator feedback".into(),
                    ..Origin::default()
                },
            )
        })
        .collect();
    RuleSet { rules }
}
