//! The condition language shared by rules, patterns and skill validators:
//! `field op value`, with fields `task.*`, `context.*` and `output.*`.

use std::sync::Arc;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    Equals,
    NotEquals,
    /// Case-sensitive regex (use `(?i)` for insensitive).
    Matches,
    /// Substring of a string, or element of a list.
    Contains,
    /// Present, not null, and not an empty string or list.
    Exists,
    /// The opposite of `exists`.
    Missing,
    Gt,
    Lt,
    /// The field's value is one of the listed values.
    In,
}

/// One test on one field. `not: true` inverts it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub field: String,
    pub op: Op,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub value: Value,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not: bool,
}

/// What conditions are evaluated against.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub task: &'a str,
    pub skill: &'a str,
    pub context: &'a Map<String, Value>,
    /// The answer's body, once there is one.
    pub output: Option<&'a str>,
    /// The failure class, once there is one.
    pub failure: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConditionError {
    #[error(
        "unknown field `{0}`: use task.description, task.skill, context.NAME, output.body or output.failure"
    )]
    UnknownField(String),
    #[error("invalid regex `{pattern}`: {message}")]
    Regex { pattern: String, message: String },
    #[error("operator {op:?} on `{field}` needs {needs}")]
    BadValue {
        field: String,
        op: Op,
        needs: &'static str,
    },
}

/// A condition checked once (regex compiled), ready to evaluate often.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub source: Condition,
    regex: Option<Arc<Regex>>,
}

impl Condition {
    pub fn compile(&self) -> Result<Compiled, ConditionError> {
        if !known_field(&self.field) {
            return Err(ConditionError::UnknownField(self.field.clone()));
        }
        let bad_value = |needs| ConditionError::BadValue {
            field: self.field.clone(),
            op: self.op,
            needs,
        };
        let regex = match self.op {
            Op::Matches => {
                let pattern = self
                    .value
                    .as_str()
                    .ok_or_else(|| bad_value("a regex string"))?;
                Some(Arc::new(compile_regex(pattern)?))
            }
            Op::In if !self.value.is_array() => return Err(bad_value("a list")),
            Op::Gt | Op::Lt if !self.value.is_number() => return Err(bad_value("a number")),
            _ => None,
        };
        Ok(Compiled {
            source: self.clone(),
            regex,
        })
    }
}

/// A field a condition may test: the task, its skill, the output, its
/// failure, or a context value.
fn known_field(field: &str) -> bool {
    matches!(
        field,
        "task" | "task.description" | "task.skill" | "output" | "output.body" | "output.failure"
    ) || field
        .strip_prefix("context.")
        .is_some_and(|name| !name.is_empty())
}

/// A condition's regex, its compiled size bounded.
fn compile_regex(pattern: &str) -> Result<Regex, ConditionError> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| ConditionError::Regex {
            pattern: pattern.to_owned(),
            message: e.to_string(),
        })
}

fn lookup(field: &str, facts: &Facts<'_>) -> Option<Value> {
    if let Some(key) = field.strip_prefix("context.") {
        return facts.context.get(key).cloned();
    }
    match field {
        "task.description" | "task" => Some(Value::from(facts.task)),
        "task.skill" => Some(Value::from(facts.skill)),
        "output.body" | "output" => facts.output.map(Value::from),
        "output.failure" => facts.failure.map(Value::from),
        _ => None,
    }
}

fn present(v: &Option<Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(_) => true,
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Equal as JSON, or as text (`"3"` and `3`).
fn same(a: &Value, b: &Value) -> bool {
    a == b || text(a) == text(b)
}

/// `v > value` (`Op::Gt`) or `v < value`, as numbers (a number, or text
/// that reads as one); false when either is not.
fn compare(op: Op, v: Option<&Value>, value: &Value) -> bool {
    let lhs = v.and_then(|v| v.as_f64().or_else(|| text(v).trim().parse().ok()));
    match (lhs, value.as_f64()) {
        (Some(a), Some(b)) if op == Op::Gt => a > b,
        (Some(a), Some(b)) => a < b,
        _ => false,
    }
}

impl Compiled {
    pub fn eval(&self, facts: &Facts<'_>) -> bool {
        let c = &self.source;
        let v = lookup(&c.field, facts);
        let result = match c.op {
            Op::Exists => present(&v),
            Op::Missing => !present(&v),
            Op::Equals => v.as_ref().is_some_and(|v| same(v, &c.value)),
            Op::NotEquals => !v.as_ref().is_some_and(|v| same(v, &c.value)),
            Op::Matches => match (&self.regex, &v) {
                (Some(re), Some(v)) => re.is_match(&text(v)),
                _ => false,
            },
            Op::Contains => match &v {
                Some(Value::Array(items)) => items.iter().any(|i| same(i, &c.value)),
                Some(other) => text(other).contains(&text(&c.value)),
                None => false,
            },
            Op::Gt | Op::Lt => compare(c.op, v.as_ref(), &c.value),
            Op::In => match (&v, c.value.as_array()) {
                (Some(v), Some(list)) => list.iter().any(|i| same(i, v)),
                _ => false,
            },
        };
        result != c.not
    }
}

impl Compiled {
    /// What a positive `matches` condition found in its field (each match,
    /// in order): the evidence a remedy can quote. Empty for other
    /// operators and for negated conditions, which find an absence.
    pub fn evidence(&self, facts: &Facts<'_>) -> Vec<String> {
        let (Some(re), false) = (&self.regex, self.source.not) else {
            return Vec::new();
        };
        let Some(v) = lookup(&self.source.field, facts) else {
            return Vec::new();
        };
        re.find_iter(&text(&v))
            .map(|m| m.as_str().trim().to_owned())
            .filter(|m| !m.is_empty())
            .collect()
    }
}

/// All conditions hold (an empty list always holds).
pub fn all(conditions: &[Compiled], facts: &Facts<'_>) -> bool {
    conditions.iter().all(|c| c.eval(facts))
}

pub fn compile_all(conditions: &[Condition]) -> Result<Vec<Compiled>, ConditionError> {
    conditions.iter().map(Condition::compile).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(field: &str, op: Op, value: Value, facts: &Facts<'_>) -> bool {
        Condition {
            field: field.into(),
            op,
            value,
            not: false,
        }
        .compile()
        .expect("compiles")
        .eval(facts)
    }

    #[test]
    fn every_operator() {
        let ctx = json!({"tz": "UTC", "n": 5, "files": ["a.pdf"], "empty": "", "none": null})
            .as_object()
            .cloned()
            .expect("object");
        let f = Facts {
            task: "Meet at 3pm",
            skill: "email-writer",
            context: &ctx,
            output: Some("Subject: hi"),
            failure: None,
        };
        assert!(check("context.tz", Op::Equals, json!("UTC"), &f));
        assert!(!check("context.tz", Op::Equals, json!("CET"), &f));
        assert!(check("context.tz", Op::NotEquals, json!("CET"), &f));
        assert!(check(
            "task.description",
            Op::Matches,
            json!("(?i)\\d+pm"),
            &f
        ));
        assert!(!check(
            "task.description",
            Op::Matches,
            json!("^Subject"),
            &f
        ));
        assert!(check("output.body", Op::Contains, json!("Subject"), &f));
        assert!(check("context.files", Op::Contains, json!("a.pdf"), &f));
        assert!(check("context.tz", Op::Exists, Value::Null, &f));
        assert!(!check("context.empty", Op::Exists, Value::Null, &f));
        assert!(check("context.none", Op::Missing, Value::Null, &f));
        assert!(check("context.absent", Op::Missing, Value::Null, &f));
        assert!(check("context.n", Op::Gt, json!(4), &f));
        assert!(!check("context.n", Op::Lt, json!(4), &f));
        assert!(check("context.tz", Op::In, json!(["UTC", "GMT"]), &f));
        assert!(!check("context.tz", Op::In, json!(["CET"]), &f));
        assert!(check("task.skill", Op::Equals, json!("email-writer"), &f));
        let negated = Condition {
            field: "output.body".into(),
            op: Op::Matches,
            value: json!("^Subject:"),
            not: true,
        };
        assert!(!negated.compile().expect("compiles").eval(&f));
    }

    #[test]
    fn bad_conditions_are_rejected_with_reasons() {
        let bad = |field: &str, op, value| {
            Condition {
                field: field.into(),
                op,
                value,
                not: false,
            }
            .compile()
            .expect_err("invalid")
        };
        for field in ["env.HOME", "task.descripton", "output.text", "context."] {
            assert!(
                matches!(
                    bad(field, Op::Exists, Value::Null),
                    ConditionError::UnknownField(_)
                ),
                "{field}"
            );
        }
        assert!(matches!(
            bad("task.description", Op::Matches, json!("(")),
            ConditionError::Regex { .. }
        ));
        assert!(matches!(
            bad("context.n", Op::Gt, json!("x")),
            ConditionError::BadValue { .. }
        ));
        assert!(matches!(
            bad("context.n", Op::In, json!("x")),
            ConditionError::BadValue { .. }
        ));
    }
}
