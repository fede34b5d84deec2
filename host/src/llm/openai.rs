//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`).
//!
//! The same wire format is served by OpenAI, Ollama, vLLM, llama.cpp's
//! server, LM Studio and OpenRouter, so the parser is lenient where those
//! servers are known to differ from OpenAI: `arguments` sent as an object
//! instead of a string, a missing call id, `content` as a list of parts, the
//! legacy `function_call` field.

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::http::{HttpClient, HttpOptions};
use super::{
    ChatRequest, ChatResponse, LlmError, Message, Provider, Sampling, ToolCall, ToolSpec, Usage,
    excerpt,
};
use crate::types::BoxFuture;

/// A Chat Completions endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    label: String,
    model: String,
    url: String,
    headers: HeaderMap,
    sampling: Sampling,
    /// `max_completion_tokens` for OpenAI's own API, whose reasoning
    /// models refuse `max_tokens`; `max_tokens` for every other server
    /// (llama.cpp, Ollama, vLLM...), which all read it.
    tokens_key: &'static str,
    http: HttpClient,
}

/// The host whose API names the length cap `max_completion_tokens`.
const OPENAI_HOST: &str = "api.openai.com";

/// The name of the length cap at `base_url`.
fn tokens_key(base_url: &str) -> &'static str {
    let official = reqwest::Url::parse(base_url).is_ok_and(|u| u.host_str() == Some(OPENAI_HOST));
    if official {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

impl OpenAiProvider {
    /// `base_url` is the API root (`https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`); `api_key`, when given, is sent as
    /// `Authorization: Bearer` and nowhere else.
    pub fn new(
        model: impl Into<String>,
        base_url: &str,
        api_key: Option<&str>,
        http: HttpOptions,
    ) -> Result<Self, LlmError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = api_key {
            let mut v = HeaderValue::from_str(&format!("Bearer {}", key.trim())).map_err(|_| {
                LlmError::Config(
                    "the API key contains characters that cannot be sent in an HTTP header".into(),
                )
            })?;
            // Keeps the value out of any Debug output of the headers.
            v.set_sensitive(true);
            headers.insert(AUTHORIZATION, v);
        }
        Ok(OpenAiProvider {
            label: "openai".into(),
            model: model.into(),
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            headers,
            sampling: Sampling::default(),
            tokens_key: tokens_key(base_url),
            http: HttpClient::new(http, api_key)?,
        })
    }

    /// The prefix of [`Provider::name`] (`openai` by default; `ollama`
    /// when configured through that preset).
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// `max_tokens` for requests that do not set their own (`None`: the
    /// default, [`super::DEFAULT_MAX_TOKENS`]).
    pub fn with_max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.sampling = self.sampling.with_max_tokens(max_tokens);
        self
    }

    /// The sampling seed every request is sent with; `None` (the default)
    /// sends none.
    pub fn with_seed(mut self, seed: Option<u64>) -> Self {
        self.sampling.seed = seed;
        self
    }

    /// The temperature every request is sent with; `None` (the default)
    /// sends none, so the server's own default applies.
    pub fn with_temperature(mut self, temperature: Option<f64>) -> Self {
        self.sampling.temperature = temperature;
        self
    }

    /// The full endpoint URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> String {
        format!("{}:{}", self.label, self.model)
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let sampling = self.sampling.for_request(req);
            let body = request_body(&self.model, sampling, self.tokens_key, req);
            self.http
                .chat(&self.url, &self.headers, &body, parse_response)
                .await
        })
    }
}

/// The JSON body of a Chat Completions request; the length cap is sent
/// as `tokens_key`.
pub(crate) fn request_body(
    model: &str,
    sampling: Sampling,
    tokens_key: &str,
    req: &ChatRequest,
) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.extend(req.messages.iter().map(message_json));
    let mut body = json!({"model": model, "messages": messages});
    if !req.tools.is_empty() {
        body["tools"] = req.tools.iter().map(tool_json).collect();
    }
    body[tokens_key] = json!(sampling.max_tokens);
    if let Some(t) = sampling.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(seed) = sampling.seed {
        body["seed"] = json!(seed);
    }
    body
}

/// One message of the conversation as the API takes it.
fn message_json(m: &Message) -> Value {
    match m {
        Message::User(text) => json!({"role": "user", "content": text}),
        Message::Assistant { text, tool_calls } => assistant_json(text.as_deref(), tool_calls),
        Message::ToolResult {
            call_id,
            content,
            is_error,
            note,
            ..
        } => json!({
            "role": "tool",
            "tool_call_id": call_id,
            // The format has no error flag; say it in the content.
            "content": super::tool_result_text(
                note.as_deref(),
                if *is_error { "Error: " } else { "" },
                content,
            ),
        }),
    }
}

fn assistant_json(text: Option<&str>, tool_calls: &[ToolCall]) -> Value {
    let mut msg = json!({
        "role": "assistant",
        // `null` is how the API spells "only tool calls".
        "content": match (text, tool_calls.is_empty()) {
            (Some(t), _) => Value::String(t.to_owned()),
            (None, false) => Value::Null,
            (None, true) => Value::String(String::new()),
        },
    });
    if !tool_calls.is_empty() {
        msg["tool_calls"] = tool_calls
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": "function",
                    // Sent back verbatim, even when invalid: the
                    // model should see what it actually sent.
                    "function": {"name": c.name, "arguments": c.arguments},
                })
            })
            .collect();
    }
    msg
}

fn tool_json(t: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": t.name,
            "description": t.description,
            "parameters": schema_or_empty(&t.parameters),
        },
    })
}

/// Servers reject a tool whose `parameters` is not a schema object; a tool
/// without arguments is described as an empty object schema.
pub(crate) fn schema_or_empty(schema: &Value) -> Value {
    if schema.is_object() {
        schema.clone()
    } else {
        json!({"type": "object", "properties": {}})
    }
}

/// Maps a Chat Completions response to a [`ChatResponse`] (sizes left 0).
pub(crate) fn parse_response(url: &str, body: &[u8]) -> Result<ChatResponse, LlmError> {
    let protocol = |what: String| LlmError::Protocol {
        url: url.to_string(),
        what,
    };
    let v = response_json(body).map_err(protocol)?;
    let message = v
        .pointer("/choices/0/message")
        .filter(|m| m.is_object())
        .ok_or_else(|| protocol("no choices[0].message in the response".into()))?;
    let text = message_text(message);
    let tool_calls = message_tool_calls(message).map_err(protocol)?;
    let tokens = |k: &str| {
        v.pointer(&format!("/usage/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: Usage {
            input_tokens: tokens("prompt_tokens"),
            output_tokens: tokens("completion_tokens"),
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
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        let msg = err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| err.to_string());
        return Err(format!(
            "the server returned an error: {}",
            excerpt(&msg, 300)
        ));
    }
    Ok(v)
}

/// The message's text; some servers send it as a list of parts.
fn message_text(message: &Value) -> Option<String> {
    match message.get("content") {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let joined: String = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!joined.is_empty()).then_some(joined)
        }
        _ => None,
    }
}

/// The message's `tool_calls`, or its deprecated single `function_call`,
/// still produced by some servers.
fn message_tool_calls(message: &Value) -> Result<Vec<ToolCall>, String> {
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, call) in calls.iter().enumerate() {
            let func = call
                .get("function")
                .ok_or_else(|| format!("choices[0].message.tool_calls[{i}] has no function"))?;
            tool_calls.push(tool_call(func, call.get("id"), i).ok_or_else(|| {
                format!("choices[0].message.tool_calls[{i}].function.name is missing")
            })?);
        }
    } else if let Some(func) = message.get("function_call").filter(|f| f.is_object()) {
        tool_calls.push(
            tool_call(func, None, 0)
                .ok_or_else(|| "choices[0].message.function_call.name is missing".to_owned())?,
        );
    }
    Ok(tool_calls)
}

/// One call from a `function` object; `None` when it has no name.
fn tool_call(func: &Value, id: Option<&Value>, index: usize) -> Option<ToolCall> {
    let name = func.get("name").and_then(Value::as_str)?.to_string();
    let arguments = match func.get("arguments") {
        // The spec: a string, passed through untouched even if not JSON.
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        // Ollama and some vLLM parsers send the object itself.
        Some(other) => other.to_string(),
    };
    let id = match id.and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => format!("call_{index}"),
    };
    Some(ToolCall {
        id,
        name,
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolSpec;

    fn conversation() -> ChatRequest {
        ChatRequest {
            system: Some("be brief".into()),
            messages: vec![
                Message::User("weather in Paris?".into()),
                Message::Assistant {
                    text: None,
                    tool_calls: vec![ToolCall {
                        id: "call_1".into(),
                        name: "weather".into(),
                        arguments: r#"{"city":"Paris"}"#.into(),
                    }],
                },
                Message::ToolResult {
                    call_id: "call_1".into(),
                    name: "weather".into(),
                    content: "sunny".into(),
                    is_error: false,
                    note: None,
                },
            ],
            tools: vec![ToolSpec {
                name: "weather".into(),
                description: "Current weather".into(),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
            }],
            max_tokens: Some(100),
        }
    }

    #[test]
    fn request_maps_a_tool_round_trip() {
        let sampling = Sampling::default().for_request(&conversation());
        let body = request_body("gpt-4o-mini", sampling, "max_tokens", &conversation());
        assert_eq!(
            body,
            json!({
                "model": "gpt-4o-mini",
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "weather in Paris?"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "weather", "description": "Current weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                }}],
                "max_tokens": 100,
            })
        );
    }

    #[test]
    fn request_without_tools_or_system_omits_them_and_flags_errors() {
        let req = ChatRequest {
            messages: vec![
                Message::User("hi".into()),
                Message::Assistant {
                    text: Some("calling".into()),
                    tool_calls: vec![ToolCall {
                        id: "a".into(),
                        name: "t".into(),
                        arguments: "{not json".into(),
                    }],
                },
                Message::ToolResult {
                    call_id: "a".into(),
                    name: "t".into(),
                    content: "bad arguments".into(),
                    is_error: true,
                    note: None,
                },
            ],
            ..Default::default()
        };
        let body = request_body("m", Sampling::default(), "max_tokens", &req);
        assert!(body.get("tools").is_none());
        // Bounded by default; no temperature unless configured.
        assert_eq!(body["max_tokens"], super::super::DEFAULT_MAX_TOKENS);
        assert!(body.get("temperature").is_none());
        assert!(body.get("seed").is_none());
        assert_eq!(body["messages"][0]["role"], "user");
        assert_eq!(body["messages"][1]["content"], "calling");
        assert_eq!(
            body["messages"][1]["tool_calls"][0]["function"]["arguments"],
            "{not json"
        );
        assert_eq!(body["messages"][2]["content"], "Error: bad arguments");
    }

    #[test]
    fn a_configured_seed_is_sent_with_every_request() {
        let seeded = OpenAiProvider::new("m", "http://127.0.0.1:8080/v1", None, Default::default())
            .expect("provider")
            .with_seed(Some(3));
        let req = ChatRequest::default();
        let body = request_body("m", seeded.sampling.for_request(&req), "max_tokens", &req);
        assert_eq!(body["seed"], 3);
    }

    #[test]
    fn openai_itself_gets_max_completion_tokens_and_a_configured_temperature() {
        let official =
            OpenAiProvider::new("m", "https://api.openai.com/v1", None, Default::default())
                .expect("provider")
                .with_temperature(Some(0.2));
        let local = OpenAiProvider::new("m", "http://127.0.0.1:8080/v1", None, Default::default())
            .expect("provider")
            .with_max_tokens(Some(64));
        assert_eq!(official.tokens_key, "max_completion_tokens");
        assert_eq!(local.tokens_key, "max_tokens");
        let req = ChatRequest::default();
        let body = request_body(
            "m",
            official.sampling.for_request(&req),
            official.tokens_key,
            &req,
        );
        assert_eq!(body["max_completion_tokens"], 1024);
        assert_eq!(body["temperature"], 0.2);
        assert!(body.get("max_tokens").is_none());
        let body = request_body(
            "m",
            local.sampling.for_request(&req),
            local.tokens_key,
            &req,
        );
        assert_eq!(body["max_tokens"], 64);
        assert!(body.get("temperature").is_none());
    }

    #[test]
    fn tool_without_schema_gets_an_empty_object_schema() {
        let req = ChatRequest {
            tools: vec![ToolSpec {
                name: "now".into(),
                description: "time".into(),
                parameters: Value::Null,
            }],
            ..Default::default()
        };
        let body = request_body("m", Sampling::default(), "max_tokens", &req);
        assert_eq!(
            body["tools"][0]["function"]["parameters"],
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn response_with_text_and_usage() {
        let r = parse_response(
            "u",
            br#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#,
        )
        .expect("parse");
        assert_eq!(r.text.as_deref(), Some("Hello"));
        assert!(r.tool_calls.is_empty());
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 9,
                output_tokens: 2
            }
        );
    }

    #[test]
    fn response_tool_calls_keep_raw_arguments_and_tolerate_variants() {
        let r = parse_response(
            "u",
            br#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
                {"id":"c1","type":"function","function":{"name":"a","arguments":"{\"x\": 1}"}},
                {"id":"c2","type":"function","function":{"name":"b","arguments":"{oops"}},
                {"type":"function","function":{"name":"c","arguments":{"y":2}}}
            ]},"finish_reason":"tool_calls"}]}"#,
        )
        .expect("parse");
        assert_eq!(r.text, None);
        assert_eq!(r.usage, Usage::default());
        let calls: Vec<_> = r
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("c1", "a", "{\"x\": 1}"),
                ("c2", "b", "{oops"),
                ("call_2", "c", "{\"y\":2}")
            ]
        );
    }

    #[test]
    fn response_legacy_function_call_and_content_parts() {
        let r = parse_response(
            "u",
            br#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"function_call":{"name":"f","arguments":"{}"}}}]}"#,
        )
        .expect("parse");
        assert_eq!(r.text.as_deref(), Some("ab"));
        assert_eq!(r.tool_calls[0].name, "f");
        assert_eq!(r.tool_calls[0].id, "call_0");
    }

    #[test]
    fn malformed_responses_say_what_is_missing() {
        let err = |b: &[u8]| {
            parse_response("http://h/v1/chat/completions", b)
                .expect_err("must fail")
                .to_string()
        };
        let e = err(b"<html>oops</html>");
        assert!(
            e.contains("not JSON") && e.contains("http://h/v1/chat/completions"),
            "{e}"
        );
        assert!(err(br#"{"choices":[]}"#).contains("choices[0].message"));
        assert!(err(br#"{"choices":[{"message":{"tool_calls":[{"id":"x","function":{"arguments":"{}"}}]}}]}"#)
            .contains("tool_calls[0].function.name"));
        assert!(err(br#"{"error":{"message":"model overloaded"}}"#).contains("model overloaded"));
    }

    #[test]
    fn name_and_url() {
        let p = OpenAiProvider::new(
            "llama3.2",
            "http://localhost:11434/v1/",
            None,
            HttpOptions::default(),
        )
        .expect("provider")
        .with_label("ollama");
        assert_eq!(p.name(), "ollama:llama3.2");
        assert_eq!(p.url(), "http://localhost:11434/v1/chat/completions");
        assert!(p.headers.get(AUTHORIZATION).is_none());
    }

    #[test]
    fn key_is_not_in_debug_output() {
        let p = OpenAiProvider::new(
            "m",
            "http://x/v1",
            Some("sk-secret-123"),
            HttpOptions::default(),
        )
        .expect("provider");
        assert!(!format!("{p:?}").contains("sk-secret-123"));
        assert_eq!(
            p.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()),
            Some("Bearer sk-secret-123")
        );
    }
}
