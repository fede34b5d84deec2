//! Tier 3: the skill's template, which always answers. `{{task}}` and
//! `{{context.FIELD}}` are replaced in one pass (a missing field is empty);
//! any other `{{...}}` is kept as written, so a template never fails.

use serde_json::{Map, Value};

use crate::skill::Skill;

/// Renders the skill's declared template, or a default that hands the
/// skill's own instructions back with the task.
pub fn render(skill: &Skill, task: &str, context: &Map<String, Value>) -> String {
    match &skill.meta.skillhost.template {
        Some(t) => fill(t, task, context),
        None => format!(
            "No handler or model is available to run skill `{}`; here are its instructions for the task.\n\nTask: {task}\n\n{}",
            skill.name,
            skill.body.trim()
        ),
    }
}

/// Fills `{{task}}` and `{{context.FIELD}}` in every string of a JSON
/// value (a declared pipeline). Substituted text has `{{` removed, so the
/// user's words cannot smuggle in a `{{step[N].result}}` reference.
pub fn fill_value(value: &Value, task: &str, context: &Map<String, Value>) -> Value {
    match value {
        Value::String(s) => Value::String(fill_with(s, task, context, |v| v.replace("{{", ""))),
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

fn fill(template: &str, task: &str, context: &Map<String, Value>) -> String {
    fill_with(template, task, context, |v| v.to_owned())
}

/// One pass over `template`; `clean` processes each substituted value.
fn fill_with(
    template: &str,
    task: &str,
    context: &Map<String, Value>,
    clean: impl Fn(&str) -> String,
) -> String {
    let mut out = String::with_capacity(template.len() + task.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let key = after[..end].trim();
        if key == "task" {
            out.push_str(&clean(task));
        } else if let Some(field) = key.strip_prefix("context.") {
            out.push_str(&clean(&display(context.get(field))));
        } else {
            // Not ours (e.g. a pipeline's step reference): keep it as written.
            out.push_str(&rest[start..start + 2 + end + 2]);
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
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
