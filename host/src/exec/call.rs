//! One go at a tier, as the tier sees it. The runner resolves a [`Call`]
//! (the skill, task, context and learned instructions, the effective
//! grants and limits, and the services of that tier) and hands it to the
//! tier: a function of the call that writes what happened into the run's
//! outcome. No tier sees the runner.

use serde_json::{Map, Value};

use super::outcome::RunOutcome;
use crate::grants::Effective;
use crate::sandbox::Limits;
use crate::skill::Skill;

/// What one run of a skill is about, as every step of it sees it.
pub(super) struct Run<'a> {
    pub skill: &'a Skill,
    pub task: &'a str,
    pub given: &'a Map<String, Value>,
    /// 0 for a caller's run, deeper for a skill run as another's tool.
    pub depth: u32,
}

/// One call of a tier; `S` is what that tier reaches beyond the call
/// (`()` for the template, the tools for a pipeline, the model and the
/// tools for the model loop, the compiled handler for a handler).
pub(super) struct Call<'a, S> {
    pub skill: &'a Skill,
    pub task: &'a str,
    /// The run's context, lent by the outcome for the call (a recovery
    /// rule in the model loop edits it); [`Call::end`] gives it back.
    pub context: Map<String, Value>,
    /// Instructions from learned rules, for a model to follow.
    pub instructions: &'a [String],
    pub depth: u32,
    /// declared ∩ granted, at the skill's pin.
    pub grants: Effective,
    pub limits: Limits,
    pub services: S,
}

impl<'a, S> Call<'a, S> {
    /// A call of `run`, borrowing the outcome's context until [`Call::end`].
    pub(super) fn new(
        run: &Run<'a>,
        instructions: &'a [String],
        (grants, limits): (Effective, Limits),
        services: S,
        outcome: &mut RunOutcome,
    ) -> Self {
        Call {
            skill: run.skill,
            task: run.task,
            context: std::mem::take(&mut outcome.context),
            instructions,
            depth: run.depth,
            grants,
            limits,
            services,
        }
    }

    /// Gives the context (as the call left it) back to the outcome.
    pub(super) fn end(self, outcome: &mut RunOutcome) {
        outcome.context = self.context;
    }
}
