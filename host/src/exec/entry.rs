//! The one way into a run, for every caller: the CLI, the MCP server and
//! library users. It catches up with a shared store, selects the skill,
//! types the caller's context by the skill's declared fields and runs it,
//! inside a `run` span that closes with the tier, time and failure.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::{Map, Value};
use tracing::Instrument as _;
use tracing::field::Empty;

use super::context::{self, ContextError};
use super::outcome::{RunError, RunOutcome};
use super::{RunRequest, Runner};
use crate::skill::ContextField;

/// Who asks for a run: it says how the request's context values are read
/// and what the selection of a named skill is recorded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Via {
    /// A library caller: the values are used as given.
    #[default]
    Library,
    /// `skillhost run`: text from `KEY=VALUE` arguments (see
    /// [`context::split_pairs`]), typed by the skill's declared fields.
    Cli,
    /// An MCP tool call: JSON typed by the tool's input schema; text for
    /// a field of another type is read as the CLI reads it.
    Mcp,
}

impl Via {
    fn as_str(self) -> &'static str {
        match self {
            Via::Library => "library",
            Via::Cli => "cli",
            Via::Mcp => "mcp",
        }
    }

    /// The context as the skill declares it, from what this caller sent.
    fn typed<'a>(
        self,
        fields: &BTreeMap<String, ContextField>,
        given: &'a Map<String, Value>,
    ) -> Result<Cow<'a, Map<String, Value>>, ContextError> {
        Ok(match self {
            Via::Library => Cow::Borrowed(given),
            Via::Cli => Cow::Owned(context::type_text(fields, given.clone())?),
            Via::Mcp => Cow::Owned(context::coerce_json(fields, given.clone())?),
        })
    }

    /// How a skill the request names was chosen, as the run records it.
    fn named(self, selected_by: String) -> String {
        match self {
            Via::Mcp => "mcp".to_owned(),
            _ => selected_by,
        }
    }
}

impl Runner {
    /// Selects the skill for `req` and runs it, the values used as given.
    pub async fn run(&self, req: &RunRequest) -> Result<RunOutcome, RunError> {
        self.run_via(req, Via::Library).await
    }

    /// Selects the skill for `req`, types its context as `via` sends it,
    /// and runs it. What other hosts on a shared store changed (rules,
    /// grants, skills) holds from this call on.
    pub async fn run_via(&self, req: &RunRequest, via: Via) -> Result<RunOutcome, RunError> {
        let span = tracing::info_span!(
            target: "skillhost::run",
            "run",
            skill = Empty,
            via = via.as_str(),
            tier = Empty,
            duration_us = Empty,
            failure = Empty,
        );
        let outcome = self.select_and_run(req, via).instrument(span.clone()).await;
        if let Ok(outcome) = &outcome {
            close(&span, outcome);
        }
        outcome
    }

    async fn select_and_run(&self, req: &RunRequest, via: Via) -> Result<RunOutcome, RunError> {
        let started = Instant::now();
        self.catch_up();
        let catalog = self.catalog();
        let (skill, selected_by) = self.select(&catalog, req)?;
        tracing::Span::current().record("skill", skill.name.as_str());
        let given = via.typed(&skill.meta.context_fields, &req.context)?;
        let selected_by = match req.skill {
            Some(_) => via.named(selected_by),
            None => selected_by,
        };
        self.run_skill(skill, selected_by, &req.task, &given, started)
            .await
    }
}

/// What the run was, for its span's close line.
fn close(span: &tracing::Span, outcome: &RunOutcome) {
    span.record("tier", outcome.tier.as_str());
    span.record("duration_us", outcome.timings.total_us);
    if let Some(f) = &outcome.failure {
        span.record("failure", f.class.as_str());
    }
}
