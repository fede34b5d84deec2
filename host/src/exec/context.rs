//! The context a handler or template reads: the skill's declared field
//! defaults, overridden by what the caller gave, typed by the declaration.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::skill::{ContextField, FieldKind};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    #[error("context argument `{0}` must look like KEY=VALUE")]
    NotAPair(String),
    #[error("context field `{field}` must be {expected}, got `{value}`")]
    WrongType {
        field: String,
        expected: &'static str,
        value: String,
    },
    #[error("context field `{0}` is required by the skill and was not given")]
    Missing(String),
}

/// Parses `KEY=VALUE` arguments, typing each value by its declared field:
/// booleans accept true/false/yes/no/1/0, lists accept JSON or
/// comma-separated text, objects need JSON. Undeclared keys are kept: JSON
/// if the value parses as JSON, text otherwise.
pub fn parse_pairs(
    pairs: &[String],
    fields: &BTreeMap<String, ContextField>,
) -> Result<Map<String, Value>, ContextError> {
    type_text(fields, split_pairs(pairs)?)
}

/// `KEY=VALUE` arguments as text values by key, untyped (a later pair
/// for a key wins).
pub fn split_pairs(pairs: &[String]) -> Result<Map<String, Value>, ContextError> {
    let mut out = Map::new();
    for pair in pairs {
        let (key, raw) = pair
            .split_once('=')
            .ok_or_else(|| ContextError::NotAPair(pair.clone()))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(ContextError::NotAPair(pair.clone()));
        }
        out.insert(key.to_owned(), Value::String(raw.to_owned()));
    }
    Ok(out)
}

/// Types text values (from [`split_pairs`]) as [`parse_pairs`] does;
/// a value that is not text is kept as it is.
pub fn type_text(
    fields: &BTreeMap<String, ContextField>,
    given: Map<String, Value>,
) -> Result<Map<String, Value>, ContextError> {
    let mut out = Map::new();
    for (key, value) in given {
        let value = match (fields.get(&key), value) {
            (Some(f), Value::String(raw)) => typed(&key, &raw, f.kind)?,
            (None, Value::String(raw)) => serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
            (_, v) => v,
        };
        out.insert(key, value);
    }
    Ok(out)
}

fn typed(key: &str, raw: &str, kind: FieldKind) -> Result<Value, ContextError> {
    let wrong = |expected| ContextError::WrongType {
        field: key.to_owned(),
        expected,
        value: raw.to_owned(),
    };
    let t = raw.trim();
    Ok(match kind {
        FieldKind::String => Value::String(raw.to_owned()),
        FieldKind::Bool => match t.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "on" => Value::Bool(true),
            "false" | "no" | "0" | "off" | "" => Value::Bool(false),
            _ => return Err(wrong("a boolean (true/false)")),
        },
        FieldKind::Integer => t
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| wrong("an integer"))?,
        FieldKind::Number => {
            let n = t.parse::<f64>().map_err(|_| wrong("a number"))?;
            serde_json::Number::from_f64(n)
                .map(Value::Number)
                .ok_or_else(|| wrong("a finite number"))?
        }
        FieldKind::List => {
            if t.starts_with('[') {
                match serde_json::from_str::<Value>(t) {
                    Ok(v @ Value::Array(_)) => v,
                    _ => return Err(wrong("a list (JSON array or comma-separated)")),
                }
            } else if t.is_empty() {
                Value::Array(Vec::new())
            } else {
                Value::Array(
                    t.split(',')
                        .map(|s| Value::String(s.trim().to_owned()))
                        .collect(),
                )
            }
        }
        FieldKind::Object => match serde_json::from_str::<Value>(t) {
            Ok(v @ Value::Object(_)) => v,
            _ => return Err(wrong("a JSON object")),
        },
    })
}

/// Types a JSON object of context values (an MCP tool call's arguments) by
/// the declared fields. Clients send JSON typed by the input schema, but
/// some send every value as text (prompt-style): text for a non-text field
/// is parsed as [`parse_pairs`] parses it. Undeclared keys pass through.
pub fn coerce_json(
    fields: &BTreeMap<String, ContextField>,
    args: Map<String, Value>,
) -> Result<Map<String, Value>, ContextError> {
    let mut out = Map::new();
    for (key, value) in args {
        let value = match (fields.get(&key), value) {
            (Some(f), Value::String(s)) if f.kind != FieldKind::String => typed(&key, &s, f.kind)?,
            (Some(f), v) if !v.is_null() && !fits(f.kind, &v) => {
                return Err(ContextError::WrongType {
                    field: key,
                    expected: f.kind.json_type(),
                    value: v.to_string(),
                });
            }
            (_, v) => v,
        };
        out.insert(key, value);
    }
    Ok(out)
}

fn fits(kind: FieldKind, v: &Value) -> bool {
    match kind {
        FieldKind::String => v.is_string(),
        FieldKind::Bool => v.is_boolean(),
        FieldKind::Number => v.is_number(),
        FieldKind::Integer => v.is_i64() || v.is_u64(),
        FieldKind::List => v.is_array(),
        FieldKind::Object => v.is_object(),
    }
}

/// Declared defaults, then `given` over them. A declared field that is
/// required, has no default and was not given is an error.
pub fn build(
    fields: &BTreeMap<String, ContextField>,
    given: &Map<String, Value>,
) -> Result<Map<String, Value>, ContextError> {
    let mut ctx = Map::new();
    for (name, field) in fields {
        if let Some(d) = &field.default {
            ctx.insert(name.clone(), d.clone());
        }
    }
    for (k, v) in given {
        ctx.insert(k.clone(), v.clone());
    }
    for (name, field) in fields {
        if field.required && ctx.get(name).is_none_or(Value::is_null) {
            return Err(ContextError::Missing(name.clone()));
        }
    }
    Ok(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> BTreeMap<String, ContextField> {
        let f = |kind, default: Option<Value>, required| ContextField {
            kind,
            default,
            description: None,
            required,
        };
        BTreeMap::from([
            (
                "tz".to_string(),
                f(FieldKind::String, Some(Value::from("")), false),
            ),
            (
                "rephrase".to_string(),
                f(FieldKind::Bool, Some(Value::from(false)), false),
            ),
            (
                "files".to_string(),
                f(FieldKind::List, Some(Value::Array(vec![])), false),
            ),
            ("n".to_string(), f(FieldKind::Integer, None, false)),
            ("must".to_string(), f(FieldKind::String, None, true)),
        ])
    }

    #[test]
    fn pairs_are_typed_by_declaration() {
        let m = parse_pairs(
            &[
                "rephrase=yes".into(),
                "files=a.pdf, b.pdf".into(),
                "n=3".into(),
                "tz=Europe/Paris".into(),
                "extra={\"a\":1}".into(),
                "note=a=b".into(),
            ],
            &fields(),
        )
        .expect("parse");
        assert_eq!(m["rephrase"], Value::Bool(true));
        assert_eq!(m["files"], serde_json::json!(["a.pdf", "b.pdf"]));
        assert_eq!(m["n"], Value::from(3));
        assert_eq!(m["tz"], Value::from("Europe/Paris"));
        assert_eq!(m["extra"], serde_json::json!({"a": 1}));
        assert_eq!(m["note"], Value::from("a=b"));
    }

    #[test]
    fn bad_values_name_the_field() {
        let e = parse_pairs(&["n=three".into()], &fields()).expect_err("not an int");
        assert_eq!(
            e.to_string(),
            "context field `n` must be an integer, got `three`"
        );
        assert!(matches!(
            parse_pairs(&["novalue".into()], &fields()),
            Err(ContextError::NotAPair(_))
        ));
        assert!(matches!(
            parse_pairs(&["=x".into()], &fields()),
            Err(ContextError::NotAPair(_))
        ));
    }

    #[test]
    fn json_arguments_are_typed_and_text_is_parsed_for_typed_fields() {
        let args = |v: Value| match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let m = coerce_json(
            &fields(),
            args(serde_json::json!({
                "rephrase": "yes",
                "n": 3,
                "files": "a.pdf, b.pdf",
                "tz": "UTC",
                "extra": {"a": 1},
                "must": null,
            })),
        )
        .expect("coerce");
        assert_eq!(m["rephrase"], Value::Bool(true));
        assert_eq!(m["n"], Value::from(3));
        assert_eq!(m["files"], serde_json::json!(["a.pdf", "b.pdf"]));
        assert_eq!(m["tz"], Value::from("UTC"));
        assert_eq!(m["extra"], serde_json::json!({"a": 1}));
        assert_eq!(m["must"], Value::Null);
        let e = coerce_json(&fields(), args(serde_json::json!({"n": 1.5}))).expect_err("float");
        assert!(
            matches!(e, ContextError::WrongType { ref field, .. } if field == "n"),
            "{e}"
        );
        let e = coerce_json(&fields(), args(serde_json::json!({"n": "three"}))).expect_err("text");
        assert_eq!(
            e.to_string(),
            "context field `n` must be an integer, got `three`"
        );
    }

    #[test]
    fn defaults_then_given_then_required() {
        let e = build(&fields(), &Map::new()).expect_err("must is required");
        assert_eq!(e, ContextError::Missing("must".into()));
        let mut given = Map::new();
        given.insert("must".into(), Value::from("x"));
        given.insert("tz".into(), Value::from("UTC"));
        let c = build(&fields(), &given).expect("build");
        assert_eq!(c["tz"], Value::from("UTC"));
        assert_eq!(c["rephrase"], Value::Bool(false));
        assert!(!c.contains_key("n"), "no default, not given: absent");
    }
}
