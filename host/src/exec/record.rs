//! Recording a finished run: its stored form (context redacted, steps
//! kept), queued for the store's writer (see `recorder`).

use serde_json::Value;

use super::Runner;
use super::outcome::{RunOutcome, Step, operator_note};
use crate::types::FailureClass;

impl Runner {
    /// Queues the run (context redacted) for the store; see `recorder`.
    pub(super) async fn record(&self, task: &str, outcome: &mut RunOutcome) {
        let store = match self.shared.store.handle() {
            Ok(s) => s,
            Err(e) => {
                operator_note(
                    outcome,
                    format!("run not recorded: {e} (opening is tried again on the next use)"),
                );
                return;
            }
        };
        match self
            .shared
            .recorder
            .record(store, run_record(task, outcome))
            .await
        {
            Ok((id, notice)) => {
                outcome.run_id = Some(id);
                if let Some(n) = notice {
                    operator_note(outcome, n);
                }
            }
            Err(e) => operator_note(outcome, format!("run not recorded: {e}")),
        }
    }
}

/// The stored form of a run: context redacted, tool steps kept.
pub(super) fn run_record(task: &str, o: &RunOutcome) -> crate::store::RunRecord {
    use crate::store::{AppliedRecord, RunRecord, StepRecord};
    let steps = o
        .trajectory
        .iter()
        .map(|s| match s {
            Step::Model {
                duration_us,
                error,
                error_class,
                ..
            } => StepRecord {
                kind: "model".into(),
                tool: None,
                detail: serde_json::to_value(s).unwrap_or(Value::Null),
                error: error.clone(),
                error_class: error.as_ref().map(|_| {
                    error_class
                        .clone()
                        .unwrap_or(FailureClass::ModelError)
                        .to_string()
                }),
                duration_us: *duration_us as i64,
            },
            Step::Tool {
                tool,
                error,
                error_class,
                duration_us,
                ..
            } => StepRecord {
                kind: "tool".into(),
                tool: Some(tool.clone()),
                detail: serde_json::to_value(s).unwrap_or(Value::Null),
                error: error.clone(),
                error_class: error_class.as_ref().map(ToString::to_string),
                duration_us: *duration_us as i64,
            },
        })
        .collect();
    RunRecord {
        id: 0,
        at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
        skill: o.skill.clone(),
        skill_version: o.skill_version.clone(),
        task: task.to_owned(),
        tier: o.tier.as_str().to_owned(),
        success: o.failure.is_none(),
        failure_class: o.failure.as_ref().map(|f| f.class.to_string()),
        failure_message: o.failure.as_ref().map(|f| f.message.clone()),
        context: Value::Object(crate::learn::redact::redact(&o.context)),
        output: o
            .output
            .as_ref()
            .map(|x| x.body.clone())
            .or_else(|| o.rejected_output.clone()),
        duration_us: o.timings.total_us as i64,
        model_calls: i64::from(o.model_calls),
        origin: o.selected_by.clone(),
        steps,
        rules_applied: o
            .rules_applied
            .iter()
            .map(|a| AppliedRecord {
                rule_id: a.id.clone(),
                kind: a.kind.to_string(),
                effect: a.effect.clone(),
            })
            .collect(),
    }
}
