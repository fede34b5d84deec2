//! The cases a handler must answer: every recorded run of its skill (task
//! and context → answer, or → failure class) and the cases shipped in the
//! skill folder's `tests/cases.jsonl`, one JSON object a line:
//!
//! ```text
//! {"task": "convert 5 km to mi", "output": "5 km = 3.1069 mi"}
//! {"task": "list it", "context": {"format": "json"}, "output": {"items": []}, "compare": "json"}
//! {"task": "convert 5 furlong to mi", "failure": "UnknownUnit"}
//! ```
//!
//! `task` (required) and `context` (an object, default `{}`, filled with
//! the skill's declared defaults like a run's) are the input; exactly one
//! of `output` (the expected answer) or `failure` (the expected failure
//! class, with an optional exact `message`). `compare` says how an answer
//! is compared: `exact` (the default for `output`: the same text), `json`
//! (both parse as JSON and are equal; `output` may then be any JSON
//! value), or `class` (for `output`: any answer; for `failure`, the
//! default: the same class). `name` is an optional label for the report.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::store::RunRecord;
use crate::types::{Failure, FailureClass, Output};

/// Where the shipped cases are, inside the skill folder.
pub const CASES_FILE: &str = "tests/cases.jsonl";

/// Largest cases file read.
pub(super) const MAX_CASES_BYTES: u64 = 4 << 20;

/// How an answer is compared with the expected one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compare {
    Exact,
    Json,
    Class,
}

impl Compare {
    pub fn name(self) -> &'static str {
        match self {
            Compare::Exact => "exact",
            Compare::Json => "json",
            Compare::Class => "class",
        }
    }
}

/// What a case expects.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    Output(Value),
    Failure {
        class: String,
        message: Option<String>,
    },
}

/// One case, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// `run 42`, `tests/cases.jsonl:3` or its `name`.
    pub origin: String,
    pub task: String,
    /// What the caller gave; the skill's defaults are filled in when it runs.
    pub context: Map<String, Value>,
    pub expected: Expected,
    pub compare: Compare,
}

impl Case {
    /// Whether `got` is what the case expects.
    pub fn matches(&self, got: &Result<Output, Failure>) -> bool {
        match (&self.expected, got) {
            (Expected::Output(_), Ok(_)) if self.compare == Compare::Class => true,
            (Expected::Output(Value::String(want)), Ok(o)) if self.compare == Compare::Exact => {
                o.body == *want
            }
            (Expected::Output(want), Ok(o)) if self.compare == Compare::Json => {
                let want = match want {
                    Value::String(s) => serde_json::from_str::<Value>(s).ok(),
                    other => Some(other.clone()),
                };
                let got = serde_json::from_str::<Value>(&o.body).ok();
                want.is_some() && want == got
            }
            (Expected::Failure { class, message }, Err(f)) => {
                f.class == class.as_str() && message.as_ref().is_none_or(|m| *m == f.message)
            }
            _ => false,
        }
    }

    /// Whether it pins an answer down: an expected output compared
    /// exactly or as JSON. A failure class, or `class` on an output,
    /// accepts answers a handler can give whatever it does.
    pub fn compares_answer(&self) -> bool {
        matches!(self.expected, Expected::Output(_))
            && matches!(self.compare, Compare::Exact | Compare::Json)
    }

    /// The expected answer in words, for the report.
    pub fn expected_text(&self) -> String {
        match &self.expected {
            Expected::Output(_) if self.compare == Compare::Class => "any answer".into(),
            Expected::Output(Value::String(s)) => s.clone(),
            Expected::Output(v) => v.to_string(),
            Expected::Failure {
                class,
                message: Some(m),
            } => format!("{class}: {m}"),
            Expected::Failure { class, .. } => format!("failure {class}"),
        }
    }
}

/// One line of `tests/cases.jsonl` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    task: String,
    #[serde(default)]
    context: Map<String, Value>,
    output: Option<Value>,
    failure: Option<String>,
    message: Option<String>,
    compare: Option<Compare>,
    name: Option<String>,
}

/// The cases of a `tests/cases.jsonl` file; a line that is not a case is
/// an error naming the line and what is wrong with it. Blank lines and
/// lines starting with `//` are skipped.
pub fn parse_cases_file(text: &str) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{CASES_FILE}:{}", i + 1);
        let raw = raw.trim();
        if raw.is_empty() || raw.starts_with("//") {
            continue;
        }
        match serde_json::from_str::<Line>(raw)
            .map_err(|e| e.to_string())
            .and_then(|l| case_of(l, &at))
        {
            Ok(c) => cases.push(c),
            Err(e) => errors.push(format!("{at}: {e}")),
        }
    }
    (cases, errors)
}

fn case_of(l: Line, at: &str) -> Result<Case, String> {
    let (expected, default_compare) = match (l.output, l.failure) {
        (Some(_), Some(_)) => return Err("give `output` or `failure`, not both".into()),
        (None, None) => return Err("give the expected `output` or `failure`".into()),
        (Some(o), None) => {
            if l.message.is_some() {
                return Err("`message` goes with `failure`".into());
            }
            (Expected::Output(o), Compare::Exact)
        }
        (None, Some(class)) => (
            Expected::Failure {
                class,
                message: l.message,
            },
            Compare::Class,
        ),
    };
    let compare = l.compare.unwrap_or(default_compare);
    match (&expected, compare) {
        (Expected::Output(v), Compare::Exact) if !v.is_string() => {
            return Err(
                "an `exact` output is a string; use `\"compare\": \"json\"` for JSON".into(),
            );
        }
        (Expected::Failure { .. }, Compare::Json) => {
            return Err("a failure is compared by `class`".into());
        }
        _ => {}
    }
    Ok(Case {
        origin: l
            .name
            .map_or_else(|| at.to_owned(), |n| format!("{at} ({n})")),
        task: l.task,
        context: l.context,
        expected,
        compare,
    })
}

/// Recorded runs as cases: newest first, one per distinct task and
/// context. Left out: runs whose context was redacted before it was
/// stored (it cannot be replayed), and failures of a class the host
/// raises itself (a limit, a refusal, a missing model), which say what
/// happened to the run, not what the skill answers. `compare` is how
/// answers are compared. The second value counts what was left out.
pub fn recorded_cases(runs: &[RunRecord], compare: Compare, max: usize) -> (Vec<Case>, usize) {
    let mut seen = HashSet::new();
    let mut cases = Vec::new();
    let mut left_out = 0;
    for run in runs {
        if cases.len() >= max {
            break;
        }
        let context = match &run.context {
            Value::Object(m) => m.clone(),
            _ => Map::new(),
        };
        if context_redacted(&context) {
            left_out += 1;
            continue;
        }
        let expected = match (&run.failure_class, &run.output) {
            (None, Some(body)) if run.success => Expected::Output(Value::String(body.clone())),
            (Some(class), _) if !run.success => {
                if !matches!(FailureClass::parse(class), FailureClass::Other(_)) {
                    left_out += 1;
                    continue;
                }
                Expected::Failure {
                    class: class.clone(),
                    message: None,
                }
            }
            _ => {
                left_out += 1;
                continue;
            }
        };
        // A map's keys serialise in order: equal contexts, equal text.
        let key = (run.task.clone(), Value::Object(context.clone()).to_string());
        if !seen.insert(key) {
            continue;
        }
        let compare = match expected {
            Expected::Failure { .. } => Compare::Class,
            Expected::Output(_) => compare,
        };
        cases.push(Case {
            origin: format!("run {}", run.id),
            task: run.task.clone(),
            context,
            expected,
            compare,
        });
    }
    (cases, left_out)
}

fn context_redacted(context: &Map<String, Value>) -> bool {
    fn any(v: &Value) -> bool {
        match v {
            Value::String(s) => s == crate::learn::redact::REDACTED,
            Value::Array(items) => items.iter().any(any),
            Value::Object(m) => m.values().any(any),
            _ => false,
        }
    }
    context.values().any(any)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(body: &str) -> Result<Output, Failure> {
        Ok(Output {
            body: body.into(),
            content_type: "text/plain".into(),
            flags: Vec::new(),
        })
    }

    #[test]
    fn the_cases_file_format() {
        let text = r#"
// a comment
{"task": "a", "output": "A"}
{"task": "b", "context": {"x": 1}, "output": {"k": [1, 2]}, "compare": "json", "name": "json one"}
{"task": "c", "failure": "UnknownUnit"}
{"task": "d", "failure": "InvalidInput", "message": "bad"}
{"task": "e", "output": "anything", "compare": "class"}
{"task": "f"}
{"task": "g", "output": "x", "failure": "Y"}
{"task": "h", "output": {"k": 1}}
{"task": "i", "failure": "Y", "compare": "json"}
{"task": "j", "output": "x", "surprise": 1}
not json
"#;
        let (cases, errors) = parse_cases_file(text);
        assert_eq!(cases.len(), 5, "{errors:?}");
        assert_eq!(cases[0].origin, "tests/cases.jsonl:3");
        assert!(cases[0].matches(&out("A")));
        assert!(!cases[0].matches(&out("A ")));
        assert_eq!(cases[1].origin, "tests/cases.jsonl:4 (json one)");
        assert_eq!(cases[1].context["x"], 1);
        assert!(cases[1].matches(&out("{ \"k\" : [1,2] }")));
        assert!(!cases[1].matches(&out("{\"k\": [2, 1]}")));
        assert!(!cases[1].matches(&out("not json")));
        assert!(cases[2].matches(&Err(Failure::new("UnknownUnit", "whatever"))));
        assert!(!cases[2].matches(&Err(Failure::new("Other", "whatever"))));
        assert!(!cases[2].matches(&out("UnknownUnit")));
        assert!(cases[3].matches(&Err(Failure::new("InvalidInput", "bad"))));
        assert!(!cases[3].matches(&Err(Failure::new("InvalidInput", "worse"))));
        assert!(cases[4].matches(&out("something else")));
        assert!(!cases[4].matches(&Err(Failure::new("X", "y"))));
        let lines: Vec<&str> = errors
            .iter()
            .map(|e| e.split(": ").next().unwrap_or(""))
            .collect();
        assert_eq!(
            lines,
            [
                "tests/cases.jsonl:8",
                "tests/cases.jsonl:9",
                "tests/cases.jsonl:10",
                "tests/cases.jsonl:11",
                "tests/cases.jsonl:12",
                "tests/cases.jsonl:13"
            ],
            "{errors:?}"
        );
        assert!(
            errors[0].contains("expected `output` or `failure`"),
            "{errors:?}"
        );
        assert!(errors[3].contains("compare"), "{errors:?}");
        assert!(errors[4].contains("surprise"), "{errors:?}");
    }

    fn run(id: i64, task: &str, ctx: Value, result: Result<&str, &str>) -> RunRecord {
        let mut r = RunRecord::new("s", result.is_ok(), 0);
        r.id = id;
        r.task = task.into();
        r.context = ctx;
        match result {
            Ok(body) => r.output = Some(body.into()),
            Err(class) => r.failure_class = Some(class.into()),
        }
        r
    }

    #[test]
    fn recorded_runs_become_cases_newest_first_once_each() {
        let runs = vec![
            run(9, "a", serde_json::json!({"x": 1}), Ok("new")),
            run(8, "a", serde_json::json!({"x": 1}), Ok("old")),
            run(7, "a", serde_json::json!({"x": 2}), Ok("other context")),
            run(6, "b", serde_json::json!({}), Err("TimezoneError")),
            run(5, "c", serde_json::json!({}), Err("LimitExceeded")),
            run(4, "d", serde_json::json!({"key": "[redacted]"}), Ok("x")),
            run(3, "e", serde_json::json!({}), Err("HandlerNotApproved")),
        ];
        let (cases, left_out) = recorded_cases(&runs, Compare::Exact, 10);
        let origins: Vec<&str> = cases.iter().map(|c| c.origin.as_str()).collect();
        assert_eq!(origins, ["run 9", "run 7", "run 6"]);
        assert!(cases[0].matches(&out("new")));
        assert_eq!(cases[2].compare, Compare::Class);
        assert!(cases[2].matches(&Err(Failure::new("TimezoneError", "m"))));
        assert_eq!(left_out, 3);
        let (cases, _) = recorded_cases(&runs, Compare::Json, 1);
        assert_eq!(cases.len(), 1);
        assert_eq!(cases[0].compare, Compare::Json);
    }
}
