//! From one run to any such task: each argument becomes the task, a
//! context value or an earlier result where it is one, and the
//! capabilities become the least the steps used.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::Call;
use crate::skill::{Capabilities, ContextField, FieldKind};

/// Results shorter than this are not looked for inside later arguments
/// (a short result such as `ok` would match by chance).
const MIN_REF_LEN: usize = 8;
/// Constants this short are not treated as coming from the task.
const MIN_TASK_WORD: usize = 3;

/// The run's steps as a pipeline with references, and the context fields
/// it reads; `None` when some argument is specific to this task.
pub(super) fn replay(
    steps: &[Call],
    task: &str,
    context: &Map<String, Value>,
) -> Option<(Value, BTreeMap<String, ContextField>)> {
    if steps.iter().any(|c| c.tool == crate::tools::pipeline::NAME) {
        return None;
    }
    let mut fields = BTreeMap::new();
    let mut out = Vec::new();
    for (i, call) in steps.iter().enumerate() {
        let args = generalize(&call.arguments, task, context, &steps[..i], &mut fields)?;
        out.push(json!({ "tool": call.tool, "args": args }));
    }
    Some((json!({ "steps": out, "result": "last" }), fields))
}

fn generalize(
    v: &Value,
    task: &str,
    context: &Map<String, Value>,
    earlier: &[Call],
    fields: &mut BTreeMap<String, ContextField>,
) -> Option<Value> {
    Some(match v {
        Value::String(s) => Value::String(generalize_str(s, task, context, earlier, fields)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| generalize(i, task, context, earlier, fields))
                .collect::<Option<_>>()?,
        ),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| Some((k.clone(), generalize(v, task, context, earlier, fields)?)))
                .collect::<Option<_>>()?,
        ),
        other => other.clone(),
    })
}

fn generalize_str(
    s: &str,
    task: &str,
    context: &Map<String, Value>,
    earlier: &[Call],
    fields: &mut BTreeMap<String, ContextField>,
) -> Option<String> {
    if s.is_empty() {
        return Some(String::new());
    }
    if s == task {
        return Some("{{task}}".into());
    }
    if let Some((k, _)) = context
        .iter()
        .find(|(_, v)| v.as_str().is_some_and(|c| !c.is_empty() && c == s))
    {
        fields.insert(k.clone(), required_string());
        return Some(format!("{{{{context.{k}}}}}"));
    }
    if let Some(referenced) = with_step_reference(s, earlier) {
        return Some(referenced);
    }
    let lower_task = task.to_lowercase();
    let from_task = s.len() >= MIN_TASK_WORD && lower_task.contains(&s.to_lowercase());
    // A value that came from this task's words would not fit the next one.
    (!from_task && !s.contains("{{")).then(|| s.to_owned())
}

/// A required text field of the context.
fn required_string() -> ContextField {
    ContextField {
        kind: FieldKind::String,
        default: None,
        description: None,
        required: true,
    }
}

/// `s` with the latest earlier result found in it standing for it as a
/// reference (`{{step[N].result}}`); `None` when none is in it.
fn with_step_reference(s: &str, earlier: &[Call]) -> Option<String> {
    for (j, call) in earlier.iter().enumerate().rev() {
        let Some(result) = &call.result else { continue };
        let text = crate::tools::pipeline::as_text(result);
        if text.is_empty() {
            continue;
        }
        let reference = format!("{{{{step[{j}].result}}}}");
        if s == text {
            return Some(reference);
        }
        if text.len() >= MIN_REF_LEN && s.contains(&text) {
            return Some(s.replace(&text, &reference));
        }
    }
    None
}

/// The part of `bound` the steps used: file grants covering the paths
/// read and written, HTTP hosts fetched.
pub(super) fn least_capabilities(steps: &[Call], bound: &Capabilities) -> Capabilities {
    let mut out = Capabilities::default();
    let covers = |entry: &str, path: &str| {
        entry.strip_prefix("workspace:").is_some_and(|dir| {
            let dir = dir.trim_end_matches('/');
            let dir = if dir == "." { "" } else { dir };
            Path::new(path).strip_prefix(dir).is_ok()
        })
    };
    let keep = |list: &[String], into: &mut Vec<String>, path: &str| {
        if let Some(e) = list.iter().find(|e| covers(e, path))
            && !into.contains(e)
        {
            into.push(e.clone());
            return true;
        }
        false
    };
    for c in steps {
        let arg = |k: &str| c.arguments.get(k).and_then(Value::as_str).unwrap_or("");
        match c.tool.as_str() {
            "read_file" => {
                let path = arg("path");
                if !keep(&bound.files.read, &mut out.files.read, path) {
                    keep(&bound.files.write, &mut out.files.write, path);
                }
            }
            "write_file" => {
                keep(&bound.files.write, &mut out.files.write, arg("path"));
            }
            "http_fetch" => keep_host(&bound.http, &mut out.http, arg("url")),
            _ => {}
        }
    }
    out
}

/// The entry of `bound` that lets `url`'s host be fetched, kept once.
fn keep_host(bound: &[String], into: &mut Vec<String>, url: &str) {
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    if let Some(h) = bound.iter().find(|h| host_matches(h, &host))
        && !into.contains(h)
    {
        into.push(h.clone());
    }
}

fn host_matches(pattern: &str, host: &str) -> bool {
    let (p, h) = (pattern.to_ascii_lowercase(), host.to_ascii_lowercase());
    match p.strip_prefix("*.") {
        Some(suffix) => h.ends_with(&format!(".{suffix}")),
        None => p == h,
    }
}
