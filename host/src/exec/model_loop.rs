//! Tier 2: the model loop. Bounded by `max_steps` and by the run's model
//! budget (tokens and time, over all its model calls); every tool call goes
//! through the same toolbox and policy as handlers and pipelines; several
//! tool calls in one turn run concurrently; each turn and call lands in the
//! run's trajectory. A tool error goes back to the model as the tool's
//! result, after learned recovery rules had their chance to fix the context.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::call::Call;
use super::outcome::micros;
use super::{RunOutcome, Step};
use crate::config::AgentConfig;
use crate::learn::{Applied, Learning};
use crate::llm::{ChatRequest, ChatResponse, Message, Provider, ToolCall, ToolSpec};
use crate::skill::{Catalog, Skill};
use crate::tools::pipeline::as_text;
use crate::tools::{CallContext, Caller, ToolError, Toolbox};
use crate::types::{Failure, FailureClass, Output};

/// Largest tool result handed back to the model.
const MAX_TOOL_RESULT: usize = 64 * 1024;

/// What the model loop reaches beyond its call.
pub(super) struct Model<'a> {
    pub provider: &'a dyn Provider,
    pub toolbox: Arc<Toolbox>,
    /// `[model] max_skill_tools`, and the catalog whose search picks
    /// them; `None` offers every skill tool.
    pub skill_offer: Option<(usize, Arc<Catalog>)>,
    pub max_steps: u32,
    pub budget: Budget,
    /// Learned recovery rules, and the defaults they may fill in.
    pub recovery: Option<(&'a Learning, &'a Map<String, Value>)>,
}

impl Model<'_> {
    /// A tool error: the learned recovery rule for it, if any, edits the
    /// context.
    fn recover(
        &self,
        skill: &Skill,
        task: &str,
        error: &ToolError,
        context: &mut Map<String, Value>,
    ) -> Option<Applied> {
        let (learning, defaults) = self.recovery?;
        learning.recover(
            &skill.name,
            task,
            error.class().as_str(),
            &error.to_string(),
            context,
            Some(defaults),
        )
    }
}

/// What all model calls of one run may use (`[agent]`), counted in the
/// run's timings so that a retried attempt spends from the same budget.
#[derive(Debug, Clone, Copy)]
pub(super) struct Budget {
    pub tokens: u64,
    pub time_ms: u64,
}

impl Budget {
    pub(super) fn of(agent: &AgentConfig) -> Budget {
        Budget {
            tokens: agent.max_run_tokens,
            time_ms: agent.max_run_model_ms,
        }
    }

    /// The time model calls may still take, having taken `used_us`.
    fn time_left(&self, used_us: u64) -> Duration {
        Duration::from_millis(self.time_ms).saturating_sub(Duration::from_micros(used_us))
    }

    fn time_spent(&self) -> Failure {
        Failure::new(
            FailureClass::ModelBudgetExceeded,
            format!(
                "the run's model calls took their whole time budget of {} ms (raise [agent] max_run_model_ms)",
                self.time_ms
            ),
        )
    }

    /// `Some` once `used` tokens are over the budget.
    fn tokens_spent(&self, used: u64) -> Option<Failure> {
        (used > self.tokens).then(|| {
            Failure::new(
                FailureClass::ModelBudgetExceeded,
                format!(
                    "the run's model calls used {used} tokens, over its budget of {} (raise [agent] max_run_tokens)",
                    self.tokens
                ),
            )
        })
    }
}

fn system_prompt(skill: &Skill, instructions: &[String], context: &Map<String, Value>) -> String {
    let mut s = format!(
        "You are carrying out a task with the skill \"{}\": {}\n\
         Follow the skill's instructions. Use the tools when they help. When you are done, \
         reply with the final result only.\n\n<skill_instructions>\n{}\n</skill_instructions>\n",
        skill.name,
        skill.description,
        skill.body.trim()
    );
    s.push_str(&context_block(context));
    // Other skills are not listed: a skill reads only its own files, and the
    // skills it may run are its `skill_<name>` tools, each described there.
    if !instructions.is_empty() {
        s.push_str(
            "\nLessons learned from earlier runs of this skill; follow them:\n<learned_rules>\n",
        );
        for i in instructions {
            s.push_str(&format!("- {i}\n"));
        }
        s.push_str("</learned_rules>\n");
    }
    s
}

/// The fields of the call's context that hold a value, one `name: value`
/// line each, for the system prompt: the instructions refer to them by
/// name. The user turn is the task alone: a small model handed a JSON
/// object there answers in JSON (SmolLM2-135M did, every time). A value
/// is written as JSON unless it is a one-line string that JSON would not
/// read as something else, so that the line reads back exactly.
pub fn context_block(context: &Map<String, Value>) -> String {
    let lines: Vec<String> = context
        .iter()
        .filter(|(_, v)| !is_empty_value(v))
        .map(|(k, v)| format!("{k}: {}\n", context_value(v)))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nThe task's context, the values the instructions name:\n<context>\n{}</context>\n",
        lines.concat()
    )
}

/// The context [`context_block`] wrote into a system prompt (empty when
/// it holds none): how a simulated model reads it back.
pub fn context_from_prompt(system: &str) -> Map<String, Value> {
    let Some(block) = system
        .split_once("<context>\n")
        .and_then(|(_, rest)| rest.split_once("</context>"))
        .map(|(block, _)| block)
    else {
        return Map::new();
    };
    block
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| {
            let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned()));
            (k.to_owned(), value)
        })
        .collect()
}

fn is_empty_value(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn context_value(v: &Value) -> String {
    match v {
        Value::String(s) if !s.contains('\n') && serde_json::from_str::<Value>(s).is_err() => {
            s.clone()
        }
        other => other.to_string(),
    }
}

/// `tools` with at most `[model] max_skill_tools` of the `skill_<name>`
/// tools: those the catalog's search ranks best for `task`, in its order
/// (the rest of the offer as it was). A call to a skill not offered still
/// passes the same policy; this only keeps definitions out of a small
/// context.
fn fitted_skill_tools(model: &Model<'_>, mut tools: Vec<ToolSpec>, task: &str) -> Vec<ToolSpec> {
    let Some((k, catalog)) = &model.skill_offer else {
        return tools;
    };
    let k = *k;
    let is_skill = |t: &ToolSpec| t.name.starts_with("skill_");
    if tools.iter().filter(|t| is_skill(t)).count() <= k {
        return tools;
    }
    let ranked: Vec<String> = catalog
        .search(task, catalog.len())
        .iter()
        .map(|m| format!("skill_{}", m.skill.name))
        .filter(|name| tools.iter().any(|t| &t.name == name))
        .take(k)
        .collect();
    tools.retain(|t| !is_skill(t) || ranked.contains(&t.name));
    tools
}

#[tracing::instrument(name = "tier", skip_all, fields(tier = "model", skill = %call.skill.name, depth = call.depth))]
pub(super) async fn run(call: &mut Call<'_, Model<'_>>, outcome: &mut RunOutcome) {
    let Call {
        skill,
        task,
        context,
        instructions,
        depth,
        grants,
        services: model,
        ..
    } = call;
    let (skill, task): (&Skill, &str) = (skill, task);
    let cx = CallContext {
        skill,
        grants: &grants.capabilities,
        trusted: grants.is_trusted(),
        caller: Caller::Model,
        depth: *depth,
    };
    let mut request = ChatRequest {
        system: Some(system_prompt(skill, instructions, context)),
        messages: vec![Message::User(task.to_owned())],
        tools: fitted_skill_tools(model, model.toolbox.offered(&cx), task),
        max_tokens: None,
    };
    let mut tool_step = 0u32;
    for step in 0..model.max_steps {
        let Some(reply) = ask(model.provider, &request, step, model.budget, outcome).await else {
            return;
        };
        if reply.tool_calls.is_empty() {
            outcome.output = Some(Output {
                body: reply.text.unwrap_or_default(),
                content_type: skill
                    .meta
                    .output_type
                    .clone()
                    .unwrap_or_else(|| "text/markdown".into()),
                flags: vec!["model".into()],
            });
            return;
        }
        // Run this turn's calls concurrently; results keep the call order.
        let calls = reply.tool_calls.iter().map(|tool| {
            let (toolbox, cx) = (&model.toolbox, &cx);
            async move {
                let started = Instant::now();
                let result = match parse_arguments(tool) {
                    Ok(args) => (args.clone(), toolbox.call(&tool.name, args, cx).await),
                    Err(e) => (Value::String(tool.arguments.clone()), Err(e)),
                };
                (result, micros(started))
            }
        });
        let results = futures::future::join_all(calls).await;
        request.messages.push(Message::Assistant {
            text: reply.text.clone(),
            tool_calls: reply.tool_calls.clone(),
        });
        for (tool, (result, duration_us)) in reply.tool_calls.iter().zip(results) {
            let recovering = Recovering {
                model,
                skill,
                task,
                context,
            };
            let answer = tool_result(recovering, tool, result, (tool_step, duration_us), outcome);
            request.messages.push(answer);
            tool_step += 1;
        }
    }
    outcome.failure = Some(Failure::new(
        FailureClass::StepLimitExceeded,
        format!(
            "the model did not finish within {} steps (raise [agent] max_steps or --max-steps)",
            model.max_steps
        ),
    ));
}

/// What a failed tool call's learned recovery reads and edits.
struct Recovering<'c> {
    model: &'c Model<'c>,
    skill: &'c Skill,
    task: &'c str,
    context: &'c mut Map<String, Value>,
}

/// One model turn within the run's budget, recorded in the trajectory;
/// `None` (and the run's failure) when the model could not be asked, or
/// the budget is spent (the call that spent it is still recorded).
async fn ask(
    provider: &dyn Provider,
    request: &ChatRequest,
    step: u32,
    budget: Budget,
    outcome: &mut RunOutcome,
) -> Option<ChatResponse> {
    let left = budget.time_left(outcome.timings.model_us);
    if left.is_zero() {
        outcome.failure = Some(budget.time_spent());
        return None;
    }
    let started = Instant::now();
    let call = tracing::Instrument::instrument(
        provider.chat(request),
        tracing::debug_span!("model_call", provider = %provider.name(), step),
    );
    // Dropping the call on time cuts its HTTP request.
    let reply = tokio::time::timeout(left, call).await;
    let duration_us = micros(started);
    outcome.timings.model_us = outcome.timings.model_us.saturating_add(duration_us);
    let answered = match reply {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => {
            outcome.timings.model_retries += e.retries();
            Err(Failure::new(FailureClass::ModelError, e.to_string()))
        }
        Err(_elapsed) => Err(budget.time_spent()),
    };
    record_turn(step, &answered, duration_us, outcome);
    match answered {
        Ok(reply) => charge(budget, &reply, outcome).then_some(reply),
        Err(failure) => {
            outcome.failure = Some(failure);
            None
        }
    }
}

/// A model turn in the trajectory.
fn record_turn(
    step: u32,
    answered: &Result<ChatResponse, Failure>,
    duration_us: u64,
    outcome: &mut RunOutcome,
) {
    let (request_bytes, response_bytes, tool_calls) = match answered {
        Ok(r) => (r.request_bytes, r.response_bytes, r.tool_calls.len()),
        Err(_) => (0, 0, 0),
    };
    let usage = answered.as_ref().map(|r| r.usage).unwrap_or_default();
    outcome.trajectory.push(Step::Model {
        step,
        request_bytes,
        response_bytes,
        prompt_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        tool_calls,
        duration_us,
        error: answered.as_ref().err().map(|f| f.message.clone()),
        error_class: answered.as_ref().err().map(|f| f.class.clone()),
    });
}

/// Counts the reply's tokens and retries into the run; `false` (and the
/// run's failure) once the tokens are over the budget.
fn charge(budget: Budget, reply: &ChatResponse, outcome: &mut RunOutcome) -> bool {
    let t = &mut outcome.timings;
    t.model_retries += reply.retries;
    t.model_tokens = t
        .model_tokens
        .saturating_add(reply.usage.input_tokens)
        .saturating_add(reply.usage.output_tokens);
    match budget.tokens_spent(t.model_tokens) {
        Some(failure) => {
            outcome.failure = Some(failure);
            false
        }
        None => true,
    }
}

/// A tool call's result as the model gets it back, recorded in the
/// trajectory: a tool error first gives learned recovery rules their
/// chance to fix the context, and the model is told what they did.
fn tool_result(
    r: Recovering<'_>,
    call: &ToolCall,
    (arguments, result): (Value, Result<Value, ToolError>),
    (tool_step, duration_us): (u32, u64),
    outcome: &mut RunOutcome,
) -> Message {
    let (content, is_error, recovery) = match &result {
        Ok(v) => (truncate(as_text(v)), false, None),
        Err(e) => {
            let applied = r.model.recover(r.skill, r.task, e, r.context);
            let recovery = applied.as_ref().map(|a| a.effect.clone());
            if let Some(a) = applied {
                outcome.rules_applied.push(a);
            }
            (e.to_string(), true, recovery)
        }
    };
    let note = recovery.as_ref().map(|r| format!("Recovery applied: {r}"));
    outcome.trajectory.push(Step::Tool {
        step: tool_step,
        caller: Caller::Model,
        tool: call.name.clone(),
        arguments,
        result: result.as_ref().ok().cloned(),
        error: result.as_ref().err().map(ToString::to_string),
        error_class: result.as_ref().err().map(ToolError::class),
        recovery,
        duration_us,
    });
    Message::ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        content,
        is_error,
        note,
    }
}

/// The model's arguments as a JSON object; empty text counts as `{}`.
fn parse_arguments(call: &ToolCall) -> Result<Value, ToolError> {
    if call.arguments.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str::<Value>(&call.arguments).map_err(|e| {
        ToolError::InvalidArguments(format!(
            "the arguments for `{}` are not valid JSON ({e}); send one JSON object",
            call.name
        ))
    })
}

fn truncate(mut s: String) -> String {
    if s.len() > MAX_TOOL_RESULT {
        let mut end = MAX_TOOL_RESULT;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let dropped = s.len() - end;
        s.truncate(end);
        s.push_str(&format!("\n[truncated {dropped} bytes]"));
    }
    s
}

#[cfg(test)]
mod context_tests {
    use serde_json::{Map, Value, json};

    use super::{context_block, context_from_prompt};

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_context_reads_back_exactly_and_empty_fields_are_left_out() {
        let ctx = map(json!({
            "timezone": "America/New_York",
            "attachments": ["report.pdf"],
            "rephrase_spam": false,
            "count": "5",
            "note": "two\nlines",
            "recipient": "",
            "cc": [],
        }));
        let block = context_block(&ctx);
        assert!(block.contains("timezone: America/New_York\n"), "{block}");
        assert!(
            !block.contains("recipient"),
            "an empty field is noise: {block}"
        );
        let back = context_from_prompt(&format!("instructions\n{block}"));
        let mut want = ctx.clone();
        want.remove("recipient");
        want.remove("cc");
        assert_eq!(back, want, "a string that reads as a number stays a string");
    }

    #[test]
    fn no_context_no_block() {
        assert_eq!(context_block(&map(json!({"recipient": ""}))), "");
        assert!(context_from_prompt("no block here").is_empty());
    }
}
