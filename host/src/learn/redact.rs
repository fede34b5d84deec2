//! Redaction before anything is stored: context values under
//! secret-looking keys, and values that look like credentials, become
//! `[redacted]`.

use regex::Regex;
use serde_json::{Map, Value};
use std::sync::OnceLock;

use crate::types::constant_regex;

pub const REDACTED: &str = "[redacted]";

fn secret_key() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        constant_regex(r"(?i)(pass(word|wd)?|secret|token|api[_-]?key|auth|credential|private[_-]?key|cookie|session)")
    })
}

fn secret_value() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        constant_regex(concat!(
            r"^(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}",
            r"|xox[abpr]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
            r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*)$"
        ))
    })
}

/// Whether a string value looks like a credential on its own.
pub fn looks_like_secret(v: &str) -> bool {
    secret_value().is_match(v.trim())
}

/// A copy of `context` with secrets replaced, recursively.
pub fn redact(context: &Map<String, Value>) -> Map<String, Value> {
    context
        .iter()
        .map(|(k, v)| {
            let v = if secret_key().is_match(k) && !v.is_null() {
                Value::from(REDACTED)
            } else {
                redact_value(v)
            };
            (k.clone(), v)
        })
        .collect()
}

fn redact_value(v: &Value) -> Value {
    match v {
        Value::String(s) if looks_like_secret(s) => Value::from(REDACTED),
        Value::Object(m) => Value::Object(redact(m)),
        Value::Array(items) => Value::Array(items.iter().map(redact_value).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_and_values_that_look_secret_are_redacted() {
        let ctx = json!({
            "api_key": "abc",
            "timezone": "UTC",
            "note": "sk-proj-abcdefghijklmnopqrstuv",
            "nested": {"password": "hunter2", "list": ["ghp_abcdefghijklmnopqrstuvwxyz012345", "fine"]},
            "attachments": ["report.pdf"]
        });
        let out = Value::Object(redact(ctx.as_object().expect("object")));
        assert_eq!(out["api_key"], REDACTED);
        assert_eq!(out["timezone"], "UTC");
        assert_eq!(out["note"], REDACTED);
        assert_eq!(out["nested"]["password"], REDACTED);
        assert_eq!(out["nested"]["list"], json!([REDACTED, "fine"]));
        assert_eq!(out["attachments"], json!(["report.pdf"]));
    }
}
