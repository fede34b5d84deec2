//! A provider that replays a file of answers, for tests and offline demos.
//!
//! The file is a JSON array of turns, answered in order, one per `chat`
//! call, whatever the request says:
//!
//! ```json
//! [
//!   {"text": "Let me look that up.",
//!    "tool_calls": [{"name": "web_search", "arguments": {"query": "rust"}},
//!                   {"id": "c2", "name": "clock", "arguments": "{not json"}]},
//!   {"error": "simulated outage"},
//!   {"text": "Done.", "usage": {"input_tokens": 12, "output_tokens": 3}}
//! ]
//! ```
//!
//! - `text`: the answer's text (optional);
//! - `tool_calls`: calls with a `name`, `arguments` as a JSON object (sent
//!   as its compact JSON text) or as a string (sent verbatim, so invalid
//!   JSON can be scripted), and an optional `id` (default
//!   `call_TURN_INDEX`, both from 1);
//! - `usage`: optional token counts;
//! - `error`: makes this turn fail with [`LlmError::Scripted`].
//!
//! Unknown keys are rejected so that a typo does not silently change a
//! test. Asking for more turns than the file has is
//! [`LlmError::ScriptExhausted`]. Every request is kept, so a test can
//! check what the loop sent back (see [`ScriptedProvider::requests`]).

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ChatRequest, ChatResponse, LlmError, Provider, ToolCall, Usage};
use crate::types::BoxFuture;

/// Largest script file read; scripts are hand-written, so anything larger
/// is a wrong path.
const MAX_SCRIPT_BYTES: u64 = 16 * 1024 * 1024;

/// One scripted answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptTurn {
    pub text: Option<String>,
    pub tool_calls: Vec<ScriptToolCall>,
    pub usage: Option<ScriptUsage>,
    /// When set, the turn fails with this message instead of answering.
    pub error: Option<String>,
}

/// One scripted tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptToolCall {
    pub id: Option<String>,
    pub name: String,
    /// A JSON value (sent as its JSON text) or a string (sent verbatim).
    pub arguments: Value,
}

/// Scripted token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Replays [`ScriptTurn`]s in order.
#[derive(Debug)]
pub struct ScriptedProvider {
    source: String,
    turns: Vec<ScriptTurn>,
    next: AtomicUsize,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedProvider {
    /// Reads and checks a script file now, so that a broken script is a
    /// configuration error rather than a failure in the middle of a run.
    pub fn from_file(path: &Path) -> Result<Self, LlmError> {
        let shown = path.display().to_string();
        let invalid = |reason: String| LlmError::InvalidScript {
            path: shown.clone(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|e| invalid(format!("cannot read it: {e}")))?;
        if meta.len() > MAX_SCRIPT_BYTES {
            return Err(invalid(format!(
                "it is {} bytes, more than the {MAX_SCRIPT_BYTES} allowed",
                meta.len()
            )));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| invalid(format!("cannot read it: {e}")))?;
        Self::from_json_str(&shown, &text)
    }

    /// Parses a script from JSON text; `source` names it in errors.
    pub fn from_json_str(source: &str, json: &str) -> Result<Self, LlmError> {
        let invalid = |reason: String| LlmError::InvalidScript {
            path: source.to_string(),
            reason,
        };
        let turns: Vec<ScriptTurn> = serde_json::from_str(json).map_err(|e| {
            invalid(format!(
                "{e} (expected a JSON array of turns like {{\"text\": \"...\", \"tool_calls\": [{{\"name\": \"...\", \"arguments\": {{}}}}]}})"
            ))
        })?;
        for (t, turn) in turns.iter().enumerate() {
            for (c, call) in turn.tool_calls.iter().enumerate() {
                if call.name.trim().is_empty() {
                    return Err(invalid(format!(
                        "turn {} tool call {} has no name",
                        t + 1,
                        c + 1
                    )));
                }
            }
        }
        Ok(Self::from_turns(source, turns))
    }

    /// A script built in code; `source` names it in [`Provider::name`].
    pub fn from_turns(source: impl Into<String>, turns: Vec<ScriptTurn>) -> Self {
        ScriptedProvider {
            source: source.into(),
            turns,
            next: AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    /// Turns not yet replayed.
    pub fn remaining(&self) -> usize {
        self.turns
            .len()
            .saturating_sub(self.next.load(Ordering::SeqCst))
    }

    fn answer(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        match self.requests.lock() {
            Ok(mut r) => r.push(req.clone()),
            Err(poisoned) => poisoned.into_inner().push(req.clone()),
        }
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let turn = self
            .turns
            .get(index)
            .ok_or_else(|| LlmError::ScriptExhausted {
                path: self.source.clone(),
                turns: self.turns.len(),
            })?;
        if let Some(e) = &turn.error {
            return Err(LlmError::Scripted(e.clone()));
        }
        let tool_calls = turn
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| tool_call(c, index, i))
            .collect();
        let usage = turn.usage.unwrap_or_default();
        Ok(ChatResponse {
            text: turn.text.clone(),
            tool_calls,
            usage: Usage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
            },
            request_bytes: 0,
            response_bytes: 0,
            retries: 0,
        })
    }
}

/// Call `i` of turn `index`, as a model would send it; without an id of
/// its own it gets `call_TURN_CALL` (counted from 1).
fn tool_call(c: &ScriptToolCall, index: usize, i: usize) -> ToolCall {
    ToolCall {
        id: c
            .id
            .clone()
            .unwrap_or_else(|| format!("call_{}_{}", index + 1, i + 1)),
        name: c.name.clone(),
        arguments: match &c.arguments {
            Value::String(raw) => raw.clone(),
            Value::Null => "{}".to_string(),
            other => other.to_string(),
        },
    }
}

impl Provider for ScriptedProvider {
    fn name(&self) -> String {
        format!("scripted:{}", self.source)
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move { self.answer(req) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    const SCRIPT: &str = r#"[
        {"text": "Let me look.", "tool_calls": [
            {"name": "search", "arguments": {"q": "rust"}},
            {"id": "own", "name": "clock", "arguments": "{not json"},
            {"name": "noargs"}
        ]},
        {"error": "simulated outage"},
        {"text": "Done.", "usage": {"input_tokens": 12, "output_tokens": 3}}
    ]"#;

    fn req(text: &str) -> ChatRequest {
        ChatRequest {
            messages: vec![Message::User(text.into())],
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn replays_in_order_then_is_exhausted() {
        let p = ScriptedProvider::from_json_str("demo.json", SCRIPT).expect("script");
        assert_eq!(p.name(), "scripted:demo.json");
        assert_eq!(p.remaining(), 3);

        let r = p.chat(&req("one")).await.expect("turn 1");
        assert_eq!(r.text.as_deref(), Some("Let me look."));
        let calls: Vec<_> = r
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("call_1_1", "search", r#"{"q":"rust"}"#),
                ("own", "clock", "{not json"),
                ("call_1_3", "noargs", "{}"),
            ]
        );

        let e = p.chat(&req("two")).await.expect_err("turn 2 fails");
        assert_eq!(e.to_string(), "scripted model error: simulated outage");

        let r = p.chat(&req("three")).await.expect("turn 3");
        assert_eq!(r.text.as_deref(), Some("Done."));
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 3
            }
        );
        assert_eq!(p.remaining(), 0);

        let e = p.chat(&req("four")).await.expect_err("exhausted");
        assert!(
            matches!(e, LlmError::ScriptExhausted { turns: 3, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("demo.json"), "{e}");

        let seen: Vec<_> = p.requests().into_iter().map(|r| r.messages).collect();
        assert_eq!(seen.len(), 4);
        assert_eq!(seen[3], vec![Message::User("four".into())]);
    }

    #[test]
    fn invalid_scripts_are_rejected_with_the_reason() {
        let e = ScriptedProvider::from_json_str("s.json", r#"{"text": "not an array"}"#)
            .expect_err("object");
        assert!(
            e.to_string().contains("s.json") && e.to_string().contains("JSON array"),
            "{e}"
        );
        let e = ScriptedProvider::from_json_str("s.json", r#"[{"txt": "typo"}]"#)
            .expect_err("unknown key");
        assert!(e.to_string().contains("txt"), "{e}");
        let e =
            ScriptedProvider::from_json_str("s.json", r#"[{"tool_calls": [{"arguments": {}}]}]"#)
                .expect_err("no name");
        assert!(
            e.to_string().contains("turn 1 tool call 1 has no name"),
            "{e}"
        );
    }

    #[test]
    fn from_file_reports_missing_file() {
        let e = ScriptedProvider::from_file(Path::new("/nonexistent/script.json"))
            .expect_err("missing");
        assert!(e.to_string().contains("/nonexistent/script.json"), "{e}");
    }
}
