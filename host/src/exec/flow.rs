//! One run of a selected skill: prevention, the first tier that can
//! answer, validation and the one retry a learned rule (or the retry-only
//! control) allows, then recording.

use std::time::Instant;

use serde_json::{Map, Value};

use super::call::Run;
use super::outcome::{RunError, RunOutcome, micros};
use super::{Runner, context};
use crate::learn::condition::Facts;
use crate::learn::rules::{Kind, Setting};
use crate::learn::{Applied, Learning, Validator};
use crate::skill::Skill;
use crate::types::{Failure, FailureClass};

impl Runner {
    /// Runs `skill` for `task`: at depth 0 for a caller, deeper for a
    /// skill another skill called as a tool (not recorded on its own).
    pub(super) async fn run_at_depth(
        &self,
        skill: &Skill,
        selected_by: String,
        task: &str,
        given: &Map<String, Value>,
        started: Instant,
        depth: u32,
    ) -> Result<RunOutcome, RunError> {
        let context = context::build(&skill.meta.context_fields, given)?;
        let mut outcome = RunOutcome::new(skill, selected_by, context, micros(started));
        let run = Run {
            skill,
            task,
            given,
            depth,
        };
        let mut instructions = Vec::new();
        let refused = self.prevent(&run, &mut outcome, &mut instructions);
        let validators = self.validators(skill);
        let (validators, invalid) = (&validators.0, &validators.1);
        outcome.notices.extend(
            invalid
                .iter()
                .map(|w| format!("skill `{}`: {w}", skill.name)),
        );
        if let Some(message) = refused {
            outcome.failure = Some(Failure::new(FailureClass::RequiredField, message));
        } else {
            self.attempt(&run, &instructions, &mut outcome).await?;
            self.validate(skill, task, validators, &mut outcome);
            self.retry_once(&run, validators, &mut instructions, &mut outcome)
                .await?;
        }
        self.finish(task, depth, started, &mut outcome).await;
        Ok(outcome)
    }

    /// How learned rules see this run's setting.
    fn setting<'a>(&'a self, run: &Run<'a>) -> Setting<'a> {
        Setting {
            defaults: Some(&self.shared.config.defaults),
            model_answers: self.model_answers(run.skill),
            given: Some(run.given),
        }
    }

    /// Prevention: rules edit the context and the model's instructions.
    /// `Some` says why the run cannot go on (a value nobody gave).
    fn prevent(
        &self,
        run: &Run<'_>,
        outcome: &mut RunOutcome,
        instructions: &mut Vec<String>,
    ) -> Option<String> {
        let learning = self.shared.learning.as_ref()?;
        let prevented = learning.prevent(
            &run.skill.name,
            run.task,
            &mut outcome.context,
            instructions,
            &self.setting(run),
        );
        outcome.rules_applied.extend(prevented.applied);
        outcome.notices.extend(prevented.notices);
        prevented.refused
    }

    /// Validation: a rule whose conditions find its failure in the answer
    /// (one a validator refused, or one every validator passed: a learned
    /// rule can see a mistake no validator knows) applies its remedy and
    /// the run is tried once more. Without such a rule, the retry-only
    /// control asks again with the same prompt.
    async fn retry_once(
        &self,
        run: &Run<'_>,
        validators: &[Validator],
        instructions: &mut Vec<String>,
        outcome: &mut RunOutcome,
    ) -> Result<(), RunError> {
        let Some(learning) = self.shared.learning.clone() else {
            return Ok(());
        };
        let validated = outcome
            .output
            .as_ref()
            .map(|o| o.body.clone())
            .or(outcome.rejected_output.clone());
        let remedy = validated.as_ref().and_then(|body| {
            learning.validation_for(&Facts {
                task: run.task,
                skill: &run.skill.name,
                context: &outcome.context,
                output: Some(body),
                failure: outcome.failure.as_ref().map(|f| f.class.as_str()),
            })
        });
        if let Some((id, class, actions)) = remedy {
            let effect = crate::learn::rules::apply(
                &actions,
                &mut outcome.context,
                instructions,
                &self.setting(run),
            );
            outcome.notices.extend(effect.notices);
            if let Some(message) = effect.refused {
                // The remedy needs a value nobody gave: no retry that
                // could only repeat the failure or guess; the fix is said.
                outcome.rules_applied.push(Applied {
                    id,
                    kind: Kind::Validation,
                    effect: format!("caught {class}; not retried: {message}"),
                });
                outcome.failure = Some(Failure::new(FailureClass::RequiredField, message));
                return Ok(());
            }
            outcome.rules_applied.push(Applied {
                id: id.clone(),
                kind: Kind::Validation,
                effect: format!(
                    "caught {class}; retried after: {}",
                    effect.changes.join("; ")
                ),
            });
            self.again(run, validators, instructions, outcome).await?;
            self.recheck(&learning, run, &id, &class, outcome);
        } else if learning.retries_unchanged() && outcome.rejected_output.is_some() {
            // The retry-only control: a validator refused the answer;
            // ask again with exactly the same prompt.
            self.again(run, validators, instructions, outcome).await?;
        }
        Ok(())
    }

    /// Forgets the first answer and tries the tier again.
    async fn again(
        &self,
        run: &Run<'_>,
        validators: &[Validator],
        instructions: &[String],
        outcome: &mut RunOutcome,
    ) -> Result<(), RunError> {
        outcome.output = None;
        outcome.failure = None;
        outcome.rejected_output = None;
        self.attempt(run, instructions, outcome).await?;
        self.validate(run.skill, run.task, validators, outcome);
        Ok(())
    }

    /// The validators passed the retry: the rule that caught the first
    /// answer reads this one too.
    fn recheck(
        &self,
        learning: &Learning,
        run: &Run<'_>,
        id: &str,
        class: &str,
        outcome: &mut RunOutcome,
    ) {
        let (None, Some(o)) = (&outcome.failure, &outcome.output) else {
            return;
        };
        let facts = Facts {
            task: run.task,
            skill: &run.skill.name,
            context: &outcome.context,
            output: Some(&o.body),
            failure: None,
        };
        if learning.finds(id, &facts) {
            outcome.failure = Some(Failure::new(
                class.to_owned(),
                format!("learned rule {id} still finds a {class} in the answer"),
            ));
            outcome.rejected_output = outcome.output.take().map(|o| o.body);
        }
    }

    /// Counts, records (at depth 0) and keeps rule statistics; then waits
    /// while the store's writer is far behind.
    async fn finish(&self, task: &str, depth: u32, started: Instant, outcome: &mut RunOutcome) {
        outcome.model_calls = outcome
            .trajectory
            .iter()
            .filter(|s| matches!(s, super::Step::Model { .. }))
            .count() as u32;
        outcome.timings.total_us = micros(started);
        let recorded = depth == 0 && self.shared.config.learning.record;
        if recorded {
            self.record(task, outcome).await;
        }
        if let Some(l) = &self.shared.learning {
            if !l.is_kept() {
                if let Err(e) = l.record(&outcome.rules_applied, outcome.failure.is_none()) {
                    outcome
                        .notices
                        .push(format!("rule statistics not saved: {e}"));
                }
            } else if !recorded {
                // A recorded run carries its rules to the writer.
                self.shared.recorder.rules_only(crate::learn::RuleOutcome {
                    rules: outcome.rules_applied.iter().map(|a| a.id.clone()).collect(),
                    success: outcome.failure.is_none(),
                });
            }
        }
        // Backpressure: an answer waits while the writer is far behind.
        self.shared.recorder.room().await;
    }

    /// Whether [`attempt`](Self::attempt) hands `skill` to the model (and
    /// not to its handler, pipeline or template).
    pub(super) fn model_answers(&self, skill: &Skill) -> bool {
        let has_code =
            skill.meta.skillhost.handler.is_some() || skill.meta.skillhost.pipeline.is_some();
        self.shared.provider.is_some() && (self.shared.prefer_model || !has_code)
    }

    /// The skill's validators read the answer; the first that fails names
    /// the failure.
    pub(super) fn validate(
        &self,
        skill: &Skill,
        task: &str,
        validators: &[crate::learn::Validator],
        outcome: &mut RunOutcome,
    ) {
        let Some(output) = &outcome.output else {
            return;
        };
        let facts = Facts {
            task,
            skill: &skill.name,
            context: &outcome.context,
            output: Some(&output.body),
            failure: None,
        };
        if let Some(v) = validators.iter().find(|v| v.fails(&facts)) {
            outcome.failure = Some(Failure::new(v.class.clone(), v.message.clone()));
            outcome.rejected_output = outcome.output.take().map(|o| o.body);
        }
    }
}
