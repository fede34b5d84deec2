//! Tier 1 without code: the tool pipeline a skill declares as its handler.

use std::time::Instant;

use serde_json::Value;

use std::sync::Arc;

use super::call::Call;
use super::outcome::{RunOutcome, Step, micros};
use super::template;
use crate::tools::{self, CallContext, Caller, ToolError, Toolbox};
use crate::types::{Failure, FailureClass, Output};

/// Runs the declared pipeline `pipeline` of the call's skill with the
/// call's tools.
#[tracing::instrument(name = "tier", skip_all, fields(tier = "pipeline", skill = %call.skill.name, depth = call.depth))]
pub(super) async fn run(call: &Call<'_, Arc<Toolbox>>, pipeline: &Value, outcome: &mut RunOutcome) {
    let (skill, grants) = (call.skill, &call.grants);
    let args = template::fill_value(pipeline, call.task, &call.context);
    let parsed: tools::pipeline::Pipeline = match serde_json::from_value(args) {
        Ok(p) => p,
        Err(e) => {
            outcome.failure = Some(Failure::new(
                FailureClass::InvalidPipeline,
                format!("metadata.skillhost.pipeline of skill `{}`: {e}", skill.name),
            ));
            return;
        }
    };
    let cx = CallContext {
        skill,
        grants: &grants.capabilities,
        trusted: grants.is_trusted(),
        caller: Caller::Pipeline,
        depth: call.depth,
    };
    let toolbox = &call.services;
    let call_started = Instant::now();
    let result = tools::pipeline::run(toolbox, &cx, &parsed).await;
    outcome.timings.call_us = micros(call_started);
    outcome.trajectory.push(Step::Tool {
        step: 0,
        caller: Caller::Pipeline,
        tool: tools::pipeline::NAME.into(),
        arguments: serde_json::to_value(pipeline).unwrap_or(Value::Null),
        result: result.as_ref().ok().cloned(),
        error: result.as_ref().err().map(ToString::to_string),
        error_class: result.as_ref().err().map(ToolError::class),
        recovery: None,
        duration_us: outcome.timings.call_us,
    });
    match result {
        Ok(v) => {
            outcome.output = Some(Output {
                body: match v {
                    Value::String(s) => s,
                    other => serde_json::to_string_pretty(&other).unwrap_or_default(),
                },
                content_type: skill
                    .meta
                    .output_type
                    .clone()
                    .unwrap_or_else(|| "text/plain".into()),
                flags: vec!["pipeline".into()],
            })
        }
        Err(e) => outcome.failure = Some(Failure::new(e.class(), e.to_string())),
    }
}
