//! Tier 3: the skill's template, which always answers within the skill's
//! output limit. `{{task}}` and `{{context.FIELD}}` are replaced in one
//! pass (a missing field is empty); any other `{{...}}` is kept as written,
//! so a template never fails on its placeholders.

use serde_json::{Map, Value};

use super::call::Call;
use super::outcome::RunOutcome;
use crate::skill::Skill;
use crate::types::{Failure, FailureClass, Output};

/// The answer would be longer than the output limit. Rendering stops at
/// the limit: a template that repeats a large task never gets built whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the template's answer is over the output limit of {limit} bytes")]
pub struct TooLarge {
    pub limit: usize,
}

/// Tier 3: the template answers with the task and context it is given,
/// so it gets the handler's output limit: the call's `output_bytes`,
/// counting body, content type and flags.
pub(super) fn answer(call: &Call<'_, ()>, outcome: &mut RunOutcome) {
    let (skill, limit) = (call.skill, call.limits.output_bytes);
    let content_type = skill
        .meta
        .output_type
        .clone()
        .unwrap_or_else(|| "text/plain".into());
    let flags = vec![String::from("template")];
    let overhead = content_type.len() + flags.iter().map(String::len).sum::<usize>();
    match render(
        skill,
        call.task,
        &call.context,
        limit.saturating_sub(overhead),
    ) {
        Ok(body) => {
            outcome.output = Some(Output {
                body,
                content_type,
                flags,
            })
        }
        Err(TooLarge { .. }) => {
            outcome.failure = Some(Failure::new(
                FailureClass::OutputTooLarge,
                format!(
                    "the template's answer is over the output limit of {limit} bytes (body, content type and flags together)"
                ),
            ))
        }
    }
}

/// Renders the skill's declared template, or a default that hands the
/// skill's own instructions back with the task, in at most `max_bytes`.
#[tracing::instrument(name = "tier", skip_all, fields(tier = "template", skill = %skill.name))]
pub fn render(
    skill: &Skill,
    task: &str,
    context: &Map<String, Value>,
    max_bytes: usize,
) -> Result<String, TooLarge> {
    let out = match &skill.meta.skillhost.template {
        Some(t) => fill_with(t, task, context, |v| v.to_owned(), max_bytes)?,
        None => format!(
            "No handler or model is available to run skill `{}`; here are its instructions for the task.\n\nTask: {task}\n\n{}",
            skill.name,
            skill.body.trim()
        ),
    };
    if out.len() > max_bytes {
        return Err(TooLarge { limit: max_bytes });
    }
    Ok(out)
}

/// Fills `{{task}}` and `{{context.FIELD}}` in every string of a JSON
/// value (a declared pipeline). Substituted text has `{{` removed, so the
/// user's words cannot smuggle in a `{{step[N].result}}` reference.
pub fn fill_value(value: &Value, task: &str, context: &Map<String, Value>) -> Value {
    match value {
        Value::String(s) => Value::String(
            fill_with(s, task, context, |v| v.replace("{{", ""), usize::MAX).unwrap_or_default(),
        ),
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| fill_value(i, task, context)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill_value(v, task, context)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// One pass over `template`; `clean` processes each substituted value.
/// Fails as soon as the result would pass `max_bytes`.
fn fill_with(
    template: &str,
    task: &str,
    context: &Map<String, Value>,
    clean: impl Fn(&str) -> String,
    max_bytes: usize,
) -> Result<String, TooLarge> {
    let mut out = String::with_capacity(template.len().min(max_bytes));
    let push = |out: &mut String, piece: &str| {
        if out.len().saturating_add(piece.len()) > max_bytes {
            return Err(TooLarge { limit: max_bytes });
        }
        out.push_str(piece);
        Ok(())
    };
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        push(&mut out, &rest[..start])?;
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            push(&mut out, &rest[start..])?;
            return Ok(out);
        };
        let key = after[..end].trim();
        if key == "task" {
            push(&mut out, &clean(task))?;
        } else if let Some(field) = key.strip_prefix("context.") {
            push(&mut out, &clean(&display(context.get(field))))?;
        } else {
            // Not ours (e.g. a pipeline's step reference): keep it as written.
            push(&mut out, &rest[start..start + 2 + end + 2])?;
        }
        rest = &after[end + 2..];
    }
    push(&mut out, rest)?;
    Ok(out)
}

fn display(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| display(Some(i)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(template: &str, task: &str, context: &Map<String, Value>) -> String {
        fill_with(template, task, context, |v| v.to_owned(), usize::MAX).expect("no limit")
    }

    #[test]
    fn rendering_stops_at_the_output_limit() {
        let c = Map::new();
        let t = "{{task}}".repeat(1000);
        assert_eq!(
            fill_with(&t, &"x".repeat(1 << 20), &c, |v| v.to_owned(), 1 << 20),
            Err(TooLarge { limit: 1 << 20 })
        );
        assert_eq!(
            fill_with("a{{task}}b", "xy", &c, |v| v.to_owned(), 4).as_deref(),
            Ok("axyb")
        );
        assert!(fill_with("a{{task}}b", "xyz", &c, |v| v.to_owned(), 4).is_err());
        assert!(fill_with("abcde", "", &c, |v| v.to_owned(), 4).is_err());
    }

    #[test]
    fn fills_in_one_pass() {
        let mut c = Map::new();
        c.insert("who".into(), Value::from("Ana"));
        c.insert("files".into(), serde_json::json!(["a", "b"]));
        // A task containing a placeholder is not expanded again.
        let out = fill(
            "To {{context.who}}: {{ task }} [{{context.files}}] {{context.none}}{{unknown}}",
            "{{context.who}}",
            &c,
        );
        assert_eq!(out, "To Ana: {{context.who}} [a, b] {{unknown}}");
        assert_eq!(
            fill("open {{ never closed", "t", &c),
            "open {{ never closed"
        );
    }
}
