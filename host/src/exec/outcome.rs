//! What a run gives back: its outcome, the tier that answered, the steps
//! it took and its timings; and why a run could not start.

use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

use super::context::ContextError;
use crate::learn::Applied;
use crate::sandbox::{self, LogLine};
use crate::tools::Caller;
use crate::types::{Failure, FailureClass, Output};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("no skill named `{0}`; see `skillhost skills list`")]
    UnknownSkill(String),
    /// The skill text audit flagged it and `[audit] allow` does not name it.
    #[error("{0}")]
    HeldBack(String),
    #[error(
        "no skill matches this task; name one with --skill (see `skillhost skills search \"TASK\"`)"
    )]
    NoMatch,
    #[error(transparent)]
    Context(#[from] ContextError),
    #[error(transparent)]
    Sandbox(#[from] sandbox::SandboxError),
}

impl RunError {
    /// The failure class a client sees when a run cannot start.
    pub fn class(&self) -> FailureClass {
        match self {
            RunError::UnknownSkill(_) => FailureClass::UnknownSkill,
            RunError::HeldBack(_) => FailureClass::Denied,
            RunError::NoMatch => FailureClass::NoMatch,
            RunError::Context(_) => FailureClass::InvalidContext,
            RunError::Sandbox(_) => FailureClass::SandboxError,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Tier 1: the skill's sandboxed handler.
    Handler,
    /// Tier 1: the tool pipeline the skill declares as its handler.
    Pipeline,
    /// Tier 2: the model loop.
    Model,
    /// Tier 3: the skill's template.
    Template,
}

impl Tier {
    /// Its name as stored and logged (its serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Handler => "handler",
            Tier::Pipeline => "pipeline",
            Tier::Model => "model",
            Tier::Template => "template",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    pub select_us: u64,
    pub load_us: u64,
    pub instantiate_us: u64,
    pub call_us: u64,
    pub total_us: u64,
    /// Model calls repeated after a 429 or 5xx answer, over the run.
    pub model_retries: u32,
    /// Tokens the provider reported (prompt + completion), over the run.
    pub model_tokens: u64,
    /// Wall time spent in model calls, over the run.
    pub model_us: u64,
}

/// One step of a run's trajectory: a model turn or a tool call.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Step {
    Model {
        step: u32,
        request_bytes: usize,
        response_bytes: usize,
        /// The prompt's size in tokens, as the provider counted it (0 when
        /// it did not say).
        prompt_tokens: u64,
        /// Tokens the model generated, as the provider counted them.
        output_tokens: u64,
        tool_calls: usize,
        duration_us: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// `ModelError`, or `ModelBudgetExceeded` for a call the run's
        /// time budget cut off.
        #[serde(skip_serializing_if = "Option::is_none")]
        error_class: Option<FailureClass>,
    },
    Tool {
        step: u32,
        caller: Caller,
        tool: String,
        arguments: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_class: Option<FailureClass>,
        #[serde(skip_serializing_if = "Option::is_none")]
        recovery: Option<String>,
        duration_us: u64,
    },
}

/// Everything a run produced; `--json` prints this.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutcome {
    /// The run's id in the store, when it was recorded.
    pub run_id: Option<i64>,
    pub skill: String,
    pub skill_version: String,
    /// Why this skill was chosen.
    pub selected_by: String,
    pub tier: Tier,
    pub output: Option<Output>,
    pub failure: Option<Failure>,
    /// The answer a validator refused, kept for the run record: learning
    /// needs to see what was wrong with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected_output: Option<String>,
    pub context: Map<String, Value>,
    /// How the skill's capabilities were decided.
    pub grants: Option<String>,
    /// Things the user should know (e.g. a stale grant).
    pub notices: Vec<String>,
    /// Things only the host's operator can act on (the run could not be
    /// recorded): logged where they happen, and never part of an answer
    /// to a client.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operator_notes: Vec<String>,
    /// Learned rules that fired, and what they changed.
    pub rules_applied: Vec<Applied>,
    /// 1, or 2 when a validation rule retried the run.
    pub attempts: u32,
    pub model_calls: u32,
    /// Model turns and tool calls, in order.
    pub trajectory: Vec<Step>,
    pub log: Vec<LogLine>,
    pub events: Vec<String>,
    pub timings: Timings,
}

impl RunOutcome {
    /// A run of `skill` that has not answered yet; selecting it took
    /// `select_us`.
    pub(super) fn new(
        skill: &crate::skill::Skill,
        selected_by: String,
        context: Map<String, Value>,
        select_us: u64,
    ) -> Self {
        RunOutcome {
            run_id: None,
            skill: skill.name.clone(),
            skill_version: skill.version.clone(),
            selected_by,
            tier: Tier::Template,
            output: None,
            failure: None,
            rejected_output: None,
            context,
            grants: None,
            notices: Vec::new(),
            operator_notes: Vec::new(),
            rules_applied: Vec::new(),
            attempts: 0,
            model_calls: 0,
            trajectory: Vec::new(),
            log: Vec::new(),
            events: Vec::new(),
            timings: Timings {
                select_us,
                ..Timings::default()
            },
        }
    }

    pub fn succeeded(&self) -> bool {
        self.failure.is_none()
    }
}

/// Logs a note for the host's operator and keeps it with the run.
pub(super) fn operator_note(outcome: &mut RunOutcome, note: String) {
    tracing::warn!("{note}");
    outcome.operator_notes.push(note);
}

/// Microseconds since `since`.
pub(super) fn micros(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}
