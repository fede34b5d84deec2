//! Anthropic Messages API (`POST {base}/v1/messages`).
//!
//! Differences from Chat Completions that the mapping takes care of: the
//! system prompt is a top-level field; tool calls are `tool_use` content
//! blocks whose `input` is a JSON object (not a string); tool results are
//! `tool_result` blocks inside a *user* message, and all the results for
//! one assistant turn must arrive together in the next user message, first
//! in its content; `max_tokens` is required.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::http::{HttpClient, HttpOptions};
use super::openai::schema_or_empty;
use super::{
    ChatRequest, ChatResponse, LlmError, Message, Provider, Sampling, ToolCall, Usage, excerpt,
};
use crate::types::BoxFuture;

/// The API version this mapping follows.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The key under which tool-call arguments that are not a JSON object are
/// sent back in a `tool_use` block, whose `input` must be an object.
pub const RAW_ARGUMENTS_KEY: &str = "_raw_arguments";

/// A Messages API endpoint.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    model: String,
    url: String,
    headers: HeaderMap,
    sampling: Sampling,
    http: HttpClient,
}

impl AnthropicProvider {
    /// `base_url` is the API root (`https://api.anthropic.com`; a trailing
    /// `/v1` is accepted too); `api_key`, when given, is sent as
    /// `x-api-key` and nowhere else.
    pub fn new(
        model: impl Into<String>,
        base_url: &str,
        api_key: Option<&str>,
        http: HttpOptions,
    ) -> Result<Self, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = api_key {
            let mut v = HeaderValue::from_str(key.trim()).map_err(|_| {
                LlmError::Config(
                    "the API key contains characters that cannot be sent in an HTTP header".into(),
                )
            })?;
            v.set_sensitive(true);
            headers.insert(HeaderName::from_static("x-api-key"), v);
        }
        let base = base_url.trim_end_matches('/');
        let url = if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        Ok(AnthropicProvider {
            model: model.into(),
            url,
            headers,
            sampling: Sampling::default(),
            http: HttpClient::new(http, api_key)?,
        })
    }

    /// `max_tokens` for requests that do not set their own (`None`: the
    /// default, [`super::DEFAULT_MAX_TOKENS`]; the API has none).
    pub fn with_max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.sampling = self.sampling.with_max_tokens(max_tokens);
        self
    }

    /// The temperature every request is sent with; `None` (the default)
    /// sends none, so the API's own default applies.
    pub fn with_temperature(mut self, temperature: Option<f64>) -> Self {
        self.sampling.temperature = temperature;
        self
    }

    /// The full endpoint URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> String {
        format!("anthropic:{}", self.model)
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let body = request_body(&self.model, self.sampling.for_request(req), req);
            self.http
                .chat(&self.url, &self.headers, &body, parse_response)
                .await
        })
    }
}

/// The JSON body of a Messages request.
pub(crate) fn request_body(model: &str, sampling: Sampling, req: &ChatRequest) -> Value {
    let messages: Vec<Value> = turns(&req.messages)
        .into_iter()
        .map(|(role, mut blocks)| {
            // tool_result blocks must lead a user message's content.
            blocks.sort_by_key(|b| b.get("type").and_then(Value::as_str) != Some("tool_result"));
            json!({"role": role, "content": blocks})
        })
        .collect();

    let mut body = json!({"model": model, "max_tokens": sampling.max_tokens, "messages": messages});
    if let Some(t) = sampling.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(system) = &req.system {
        body["system"] = json!(system);
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": schema_or_empty(&t.parameters),
                })
            })
            .collect();
    }
    body
}

/// (role, content blocks) of the conversation; consecutive turns of one
/// role are merged, which is what makes several tool results one user
/// message.
fn turns(messages: &[Message]) -> Vec<(&'static str, Vec<Value>)> {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for m in messages {
        let (role, blocks) = role_and_blocks(m);
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
}

/// One message as a role and its content blocks.
fn role_and_blocks(m: &Message) -> (&'static str, Vec<Value>) {
    match m {
        Message::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
        Message::Assistant { text, tool_calls } => {
            let mut blocks = Vec::new();
            // The API rejects empty or whitespace-only text blocks.
            if let Some(t) = text.as_ref().filter(|t| !t.trim().is_empty()) {
                blocks.push(json!({"type": "text", "text": t}));
            }
            for c in tool_calls {
                blocks.push(json!({
                    "type": "tool_use",
                    "id": c.id,
                    "name": c.name,
                    "input": input_object(&c.arguments),
                }));
            }
            ("assistant", blocks)
        }
        Message::ToolResult {
            call_id,
            content,
            is_error,
            note,
            ..
        } => {
            let mut block = json!({
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": super::tool_result_text(note.as_deref(), "", content),
            });
            if *is_error {
                block["is_error"] = json!(true);
            }
            ("user", vec![block])
        }
    }
}

/// A tool call's raw arguments as the object `tool_use.input` must be.
/// Arguments that are not an object (only possible when the transcript
/// came from elsewhere) are kept under [`RAW_ARGUMENTS_KEY`] so the model
/// still sees what was sent.
fn input_object(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({ RAW_ARGUMENTS_KEY: arguments }),
    }
}

/// Maps a Messages response to a [`ChatResponse`] (sizes left 0).
pub(crate) fn parse_response(url: &str, body: &[u8]) -> Result<ChatResponse, LlmError> {
    let protocol = |what: String| LlmError::Protocol {
        url: url.to_string(),
        what,
    };
    let v = response_json(body).map_err(protocol)?;
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| protocol("no content array in the response".into()))?;
    let (text, tool_calls) = read_content(content).map_err(protocol)?;
    let tokens = |k: &str| {
        v.pointer(&format!("/usage/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(ChatResponse {
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage: Usage {
            // Cached prompt tokens are reported apart; they are input too.
            input_tokens: tokens("input_tokens")
                + tokens("cache_creation_input_tokens")
                + tokens("cache_read_input_tokens"),
            output_tokens: tokens("output_tokens"),
        },
        request_bytes: 0,
        response_bytes: 0,
        retries: 0,
    })
}

/// The body as JSON, unless it is not JSON or is the server's error.
fn response_json(body: &[u8]) -> Result<Value, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        format!(
            "the body is not JSON ({e}): {}",
            excerpt(&String::from_utf8_lossy(body), 200)
        )
    })?;
    if v.get("type").and_then(Value::as_str) == Some("error") {
        let msg = v
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Err(format!(
            "the server returned an error: {}",
            excerpt(msg, 300)
        ));
    }
    Ok(v)
}

/// The text and tool calls of the content blocks. Thinking, redacted
/// thinking and server tool blocks are not ours.
fn read_content(content: &[Value]) -> Result<(String, Vec<ToolCall>), String> {
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for (i, block) in content.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = block.get("text").and_then(Value::as_str) {
                    text.push_str(t);
                }
            }
            Some("tool_use") => tool_calls.push(tool_use(block, i)?),
            _ => {}
        }
    }
    Ok((text, tool_calls))
}

/// Content block `i`, a `tool_use`, as a call.
fn tool_use(block: &Value, i: usize) -> Result<ToolCall, String> {
    let field = |k: &str| {
        block
            .get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("content[{i}] (tool_use) has no {k}"))
    };
    let arguments = match block.get("input") {
        // A non-conforming server sending text: keep it raw.
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => "{}".to_string(),
        Some(other) => other.to_string(),
    };
    Ok(ToolCall {
        id: field("id")?,
        name: field("name")?,
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolSpec;

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        }
    }

    fn result(id: &str, content: &str, is_error: bool) -> Message {
        Message::ToolResult {
            call_id: id.into(),
            name: "t".into(),
            content: content.into(),
            is_error,
            note: None,
        }
    }

    #[test]
    fn system_is_top_level_and_tool_results_merge_into_one_user_turn() {
        let req = ChatRequest {
            system: Some("be brief".into()),
            messages: vec![
                Message::User("compare Paris and Rome".into()),
                Message::Assistant {
                    text: Some("Checking both.".into()),
                    tool_calls: vec![
                        call("toolu_1", "weather", r#"{"city":"Paris"}"#),
                        call("toolu_2", "weather", r#"{"city":"Rome"}"#),
                    ],
                },
                result("toolu_1", "sunny", false),
                result("toolu_2", "city not found", true),
            ],
            tools: vec![ToolSpec {
                name: "weather".into(),
                description: "Current weather".into(),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            }],
            max_tokens: None,
        };
        assert_eq!(
            request_body(
                "claude-x",
                Sampling::default().with_max_tokens(Some(512)),
                &req
            ),
            json!({
                "model": "claude-x",
                "max_tokens": 512,
                "system": "be brief",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "compare Paris and Rome"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Checking both."},
                        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
                        {"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {"city": "Rome"}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
                        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "city not found", "is_error": true},
                    ]},
                ],
                "tools": [{
                    "name": "weather",
                    "description": "Current weather",
                    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                }],
            })
        );
    }

    #[test]
    fn user_text_after_results_joins_their_turn_after_them() {
        let req = ChatRequest {
            messages: vec![
                Message::User("go".into()),
                Message::Assistant {
                    text: None,
                    tool_calls: vec![call("a", "t", "{}")],
                },
                result("a", "ok", false),
                Message::User("now summarise".into()),
            ],
            ..Default::default()
        };
        let body = request_body("m", Sampling::default(), &req);
        let msgs = body["messages"].as_array().expect("messages");
        assert_eq!(msgs.len(), 3);
        assert_eq!(
            msgs[1]["content"].as_array().map(Vec::len),
            Some(1),
            "no empty text block"
        );
        assert_eq!(msgs[2]["content"][0]["type"], "tool_result");
        assert_eq!(msgs[2]["content"][1]["text"], "now summarise");
        assert!(body.get("system").is_none());
        assert!(body.get("tools").is_none());
    }

    #[test]
    fn invalid_arguments_are_wrapped_not_lost() {
        assert_eq!(input_object("{oops"), json!({RAW_ARGUMENTS_KEY: "{oops"}));
        assert_eq!(input_object("[1]"), json!({RAW_ARGUMENTS_KEY: "[1]"}));
        assert_eq!(input_object("  "), json!({}));
        assert_eq!(input_object(r#"{"a":1}"#), json!({"a": 1}));
    }

    #[test]
    fn response_text_tool_use_and_usage() {
        let r = parse_response(
            "u",
            br#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-x",
                "content":[{"type":"text","text":"Let me check."},
                           {"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris"}},
                           {"type":"tool_use","id":"toolu_2","name":"clock","input":{}}],
                "stop_reason":"tool_use","stop_sequence":null,
                "usage":{"input_tokens":20,"output_tokens":7,"cache_read_input_tokens":5}}"#,
        )
        .expect("parse");
        assert_eq!(r.text.as_deref(), Some("Let me check."));
        assert_eq!(
            r.tool_calls,
            vec![
                call("toolu_1", "weather", r#"{"city":"Paris"}"#),
                call("toolu_2", "clock", "{}"),
            ]
        );
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 25,
                output_tokens: 7
            }
        );
    }

    #[test]
    fn response_ignores_thinking_and_keeps_string_input_raw() {
        let r = parse_response(
            "u",
            br#"{"content":[{"type":"thinking","thinking":"hmm","signature":"s"},
                           {"type":"tool_use","id":"t","name":"n","input":"{broken"}]}"#,
        )
        .expect("parse");
        assert_eq!(r.text, None);
        assert_eq!(r.tool_calls[0].arguments, "{broken");
    }

    #[test]
    fn malformed_responses_say_what_is_missing() {
        let err = |b: &[u8]| {
            parse_response("http://h/v1/messages", b)
                .expect_err("must fail")
                .to_string()
        };
        assert!(err(b"nope").contains("not JSON"));
        assert!(err(br#"{"type":"message"}"#).contains("no content array"));
        assert!(
            err(br#"{"content":[{"type":"tool_use","name":"x","input":{}}]}"#)
                .contains("content[0] (tool_use) has no id")
        );
        assert!(
            err(br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
                .contains("Overloaded")
        );
    }

    #[test]
    fn url_and_headers() {
        let p = AnthropicProvider::new(
            "claude-x",
            "https://api.anthropic.com/",
            Some("sk-ant-secret"),
            HttpOptions::default(),
        )
        .expect("provider");
        assert_eq!(p.url(), "https://api.anthropic.com/v1/messages");
        assert_eq!(p.name(), "anthropic:claude-x");
        assert_eq!(p.headers["anthropic-version"], ANTHROPIC_VERSION);
        assert!(!format!("{p:?}").contains("sk-ant-secret"));
        let p = AnthropicProvider::new("m", "http://127.0.0.1:9/v1", None, HttpOptions::default())
            .expect("provider");
        assert_eq!(p.url(), "http://127.0.0.1:9/v1/messages");
        assert!(p.headers.get("x-api-key").is_none());
    }
}
