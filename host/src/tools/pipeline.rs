//! `execute_pipeline`: a list of tool steps, later steps using earlier
//! results through `{{step[N].result}}`. Everything that can be checked is
//! checked before the first step runs, so a refused step never leaves the
//! side effects of the steps before it: the step count, every tool against
//! the pipeline allowlist, every reference (only to earlier steps), and
//! every step against every policy layer (global, the skill's
//! `allowed-tools`, its trust, its grants). A step whose arguments use an
//! earlier result gets the grant check on its final arguments only when it
//! runs (they do not exist before), and every step passes the full policy
//! again when it runs. Values are substituted in one pass, and a
//! substituted value has any `{{` removed first, so a result cannot inject
//! a reference of its own.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::{Value, json};

use super::builtin::{Builtin, no_grant_needed};
use super::{CallContext, Caller, Denial, MAX_DEPTH, Offer, ToolError, Toolbox};

pub const NAME: &str = "execute_pipeline";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    pub steps: Vec<Step>,
    #[serde(default)]
    pub parallel: bool,
    #[serde(default)]
    pub result: ResultMode,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub tool: String,
    #[serde(default = "empty_object")]
    pub args: Value,
}

fn empty_object() -> Value {
    json!({})
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultMode {
    #[default]
    All,
    Last,
}

pub(super) const EXECUTE_PIPELINE: Builtin = Builtin {
    name: NAME,
    description: "Run several tool calls as one pipeline. A step's string arguments may use {{step[N].result}} for the result of an earlier step N (0-based). With parallel=true, steps that do not depend on each other run at the same time.",
    parameters: || {
        json!({
            "type": "object",
            "properties": {
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": { "tool": { "type": "string" }, "args": { "type": "object" } },
                        "required": ["tool"]
                    }
                },
                "parallel": { "type": "boolean", "default": false },
                "result": { "type": "string", "enum": ["all", "last"], "default": "all" }
            },
            "required": ["steps"]
        })
    },
    confined: false,
    offer: Offer::Declared,
    authorize: no_grant_needed,
    call: |tools, cx, args| Box::pin(parse_and_run(tools, cx, args)),
};

/// A call of `execute_pipeline`: its arguments are the pipeline.
async fn parse_and_run(
    tools: &Toolbox,
    cx: &CallContext<'_>,
    args: Value,
) -> Result<Value, ToolError> {
    let pipeline: Pipeline = serde_json::from_value(args)
        .map_err(|e| ToolError::InvalidArguments(format!("pipeline: {e}")))?;
    run(tools, cx, &pipeline).await
}

/// Validates, then runs a pipeline for the skill in `cx`.
pub async fn run(
    tools: &Toolbox,
    cx: &CallContext<'_>,
    pipeline: &Pipeline,
) -> Result<Value, ToolError> {
    let deps = validate(tools, pipeline)?;
    if cx.depth >= MAX_DEPTH {
        return Err(ToolError::Pipeline(format!(
            "pipelines nested {MAX_DEPTH} levels deep"
        )));
    }
    let step_cx = CallContext {
        caller: Caller::Pipeline,
        depth: cx.depth + 1,
        ..cx.clone()
    };
    authorize_all(tools, &step_cx, pipeline, &deps)?;
    let mut results: Vec<Option<Value>> = vec![None; pipeline.steps.len()];
    if pipeline.parallel {
        run_in_waves(tools, &step_cx, pipeline, &deps, &mut results).await?;
    } else {
        for (i, step) in pipeline.steps.iter().enumerate() {
            let args = interpolate(&step.args, &results);
            let r = tools.call(&step.tool, args, &step_cx).await;
            results[i] = Some(r.map_err(|e| step_error(i, &step.tool, e))?);
        }
    }
    Ok(pipeline_result(pipeline, results))
}

/// Waves: every step whose references are all done runs together.
async fn run_in_waves(
    tools: &Toolbox,
    step_cx: &CallContext<'_>,
    pipeline: &Pipeline,
    deps: &[BTreeSet<usize>],
    results: &mut [Option<Value>],
) -> Result<(), ToolError> {
    let n = pipeline.steps.len();
    let mut done = 0;
    while done < n {
        let ready: Vec<usize> = (0..n)
            .filter(|&i| results[i].is_none() && deps[i].iter().all(|&d| results[d].is_some()))
            .collect();
        let calls = ready.iter().map(|&i| {
            let args = interpolate(&pipeline.steps[i].args, results);
            let name = pipeline.steps[i].tool.as_str();
            async move { (i, tools.call(name, args, step_cx).await) }
        });
        for (i, r) in futures::future::join_all(calls).await {
            results[i] = Some(r.map_err(|e| step_error(i, &pipeline.steps[i].tool, e))?);
            done += 1;
        }
    }
    Ok(())
}

/// The last step's result, or every step's with its number and tool.
fn pipeline_result(pipeline: &Pipeline, results: Vec<Option<Value>>) -> Value {
    let results: Vec<Value> = results
        .into_iter()
        .map(|r| r.unwrap_or(Value::Null))
        .collect();
    match pipeline.result {
        ResultMode::Last => results.into_iter().last().unwrap_or(Value::Null),
        ResultMode::All => Value::Array(
            results
                .into_iter()
                .enumerate()
                .map(|(i, r)| json!({ "step": i, "tool": pipeline.steps[i].tool, "result": r }))
                .collect(),
        ),
    }
}

/// Every policy layer for every step, before any step runs. A step's
/// grant check needs its arguments: a step that takes an earlier result has
/// them only when it runs, and is checked then (by `Toolbox::call`).
fn authorize_all(
    tools: &Toolbox,
    cx: &CallContext<'_>,
    pipeline: &Pipeline,
    deps: &[BTreeSet<usize>],
) -> Result<(), ToolError> {
    for (i, (step, refs)) in pipeline.steps.iter().zip(deps).enumerate() {
        let checked = if refs.is_empty() {
            tools.check(&step.tool, &step.args, cx)
        } else {
            tools.check_tool(&step.tool, cx).map(|_| ())
        };
        checked.map_err(|e| match e {
            ToolError::Denied(d) => ToolError::Denied(Denial {
                step: Some((i, step.tool.clone())),
                ..d
            }),
            other => step_error(i, &step.tool, other),
        })?;
    }
    Ok(())
}

fn step_error(i: usize, tool: &str, e: ToolError) -> ToolError {
    ToolError::Failed {
        class: e.class().to_owned(),
        message: format!("pipeline step {i} ({tool}) failed: {e}"),
    }
}

/// Checks the whole pipeline before anything runs; returns each step's
/// references (the steps it depends on).
pub fn validate(tools: &Toolbox, pipeline: &Pipeline) -> Result<Vec<BTreeSet<usize>>, ToolError> {
    let max = tools.policy.config.pipeline_max_steps;
    if pipeline.steps.len() > max {
        return Err(ToolError::TooManySteps(format!(
            "the pipeline has {} steps, the limit is {max}",
            pipeline.steps.len()
        )));
    }
    if pipeline.steps.is_empty() {
        return Err(ToolError::InvalidArguments(
            "the pipeline has no steps".into(),
        ));
    }
    let mut deps = Vec::with_capacity(pipeline.steps.len());
    for (i, step) in pipeline.steps.iter().enumerate() {
        if step.tool == NAME {
            return Err(ToolError::Pipeline(format!(
                "step {i}: a pipeline cannot call {NAME}"
            )));
        }
        if tools.get(&step.tool).is_none() || !tools.policy.pipeline_allows(&step.tool) {
            return Err(ToolError::UnknownTool(format!(
                "step {i}: `{}` is not a tool pipelines may use",
                step.tool
            )));
        }
        let mut refs = BTreeSet::new();
        collect_refs(&step.args, &mut refs);
        if let Some(&bad) = refs.iter().find(|&&r| r >= i) {
            return Err(ToolError::Pipeline(if bad < pipeline.steps.len() {
                format!("step {i} refers to step {bad}, which has not run yet (only earlier steps)")
            } else {
                format!("step {i} refers to step {bad}, which does not exist")
            }));
        }
        deps.push(refs);
    }
    Ok(deps)
}

const OPEN: &str = "{{step[";
const CLOSE: &str = "].result}}";

/// Yields (start, end, step) for each well-formed reference in `s`.
fn references(s: &str) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(pos) = s[from..].find(OPEN) {
            let start = from + pos;
            let digits_at = start + OPEN.len();
            let digits = s[digits_at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .count();
            from = digits_at;
            if digits > 0
                && s[digits_at + digits..].starts_with(CLOSE)
                && let Ok(n) = s[digits_at..digits_at + digits].parse::<usize>()
            {
                let end = digits_at + digits + CLOSE.len();
                from = end;
                return Some((start, end, n));
            }
        }
        None
    })
}

fn collect_refs(v: &Value, out: &mut BTreeSet<usize>) {
    match v {
        Value::String(s) => out.extend(references(s).map(|(_, _, n)| n)),
        Value::Array(items) => items.iter().for_each(|i| collect_refs(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_refs(i, out)),
        _ => {}
    }
}

/// The text a tool result contributes when substituted or shown to a model.
pub(crate) fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Replaces references in every string of `args` with earlier results, in
/// one pass; `{{` is removed from substituted values first.
pub fn interpolate(args: &Value, results: &[Option<Value>]) -> Value {
    match args {
        Value::String(s) => {
            let mut out = String::with_capacity(s.len());
            let mut last = 0;
            for (start, end, n) in references(s) {
                out.push_str(&s[last..start]);
                if let Some(Some(v)) = results.get(n) {
                    out.push_str(&as_text(v).replace("{{", ""));
                }
                last = end;
            }
            out.push_str(&s[last..]);
            Value::String(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| interpolate(i, results)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), interpolate(v, results)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_is_single_pass_and_strips_injected_braces() {
        let results = vec![
            Some(json!("{{step[0].result}} and {{step[1].result}}")),
            Some(json!({"k": 1})),
        ];
        let args = json!({ "a": "x={{step[0].result}};", "b": ["{{step[1].result}}"], "n": 3 });
        let out = interpolate(&args, &results);
        assert_eq!(out["a"], "x=step[0].result}} and step[1].result}};");
        assert_eq!(out["b"][0], "{\"k\":1}");
        assert_eq!(out["n"], 3);
    }

    #[test]
    fn references_are_parsed_strictly() {
        let found: Vec<usize> = references(
            "{{step[2].result}} {{step[].result}} {{step[x].result}} {{step[10].result}}",
        )
        .map(|(_, _, n)| n)
        .collect();
        assert_eq!(found, vec![2, 10]);
    }
}
