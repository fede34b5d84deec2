//! The model providers against a real HTTP server on 127.0.0.1 that speaks
//! the OpenAI Chat Completions and Anthropic Messages wire formats: plain
//! answers, one and several tool calls, arguments that are not JSON,
//! retries on 429 / 5xx (with `Retry-After`), timeouts and unreachable
//! servers. The server records every request so the tests can check the
//! JSON the providers sent.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillhost::llm::{
    AnthropicProvider, ChatRequest, HttpOptions, LlmError, Message, ModelConfig, OpenAiProvider,
    Provider, ToolCall, ToolSpec,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub(crate) const KEY: &str = "sk-test-secret-0123456789";

// ---------------------------------------------------------------------------
// A tiny scripted HTTP/1.1 server.

/// What the server does with the next request.
#[derive(Clone)]
pub(crate) enum Reply {
    Json {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// Reads the request and never answers.
    Hang,
    /// Answers `status` with an error that quotes the credential the request
    /// carried (`Authorization` or `x-api-key`), as real providers do for a
    /// wrong key; as the API's JSON error, or as a raw text body.
    QuoteKey { status: u16, json: bool },
}

fn ok(body: Value) -> Reply {
    Reply::Json {
        status: 200,
        headers: vec![],
        body: body.to_string(),
    }
}

fn status(code: u16, body: &str) -> Reply {
    Reply::Json {
        status: code,
        headers: vec![],
        body: body.to_string(),
    }
}

#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    at: Instant,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the provider sent JSON")
    }
}

pub(crate) struct Server {
    /// `http://127.0.0.1:PORT`
    pub(crate) base: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    pub(crate) async fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(replies);
        let next = Arc::new(AtomicUsize::new(0));
        let recorded = requests.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (replies, next, recorded) = (replies.clone(), next.clone(), recorded.clone());
                tokio::spawn(async move {
                    serve(stream, &replies, &next, &recorded).await;
                });
            }
        });
        Server { base, requests }
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }
}

/// Serves requests on one connection until the client closes it.
async fn serve(
    mut stream: TcpStream,
    replies: &[Reply],
    next: &AtomicUsize,
    recorded: &Mutex<Vec<Recorded>>,
) {
    let mut buf = Vec::new();
    loop {
        let Some(req) = read_request(&mut stream, &mut buf).await else {
            return;
        };
        let credential = req
            .header("authorization")
            .or_else(|| req.header("x-api-key"))
            .unwrap_or("")
            .to_owned();
        recorded.lock().expect("lock").push(req);
        let mut reply = replies
            .get(next.fetch_add(1, Ordering::SeqCst))
            .cloned()
            .unwrap_or_else(|| status(599, "test server: no more scripted replies"));
        if let Reply::QuoteKey { status, json } = reply {
            let message = format!(
                "Incorrect API key provided: {credential}. You can find your API key at https://example.invalid/keys."
            );
            reply = Reply::Json {
                status,
                headers: vec![],
                body: if json {
                    serde_json::json!({"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}}).to_string()
                } else {
                    format!(
                        "<html><body>{}{message}</body></html>",
                        "padding ".repeat(30)
                    )
                },
            };
        }
        match reply {
            Reply::QuoteKey { .. } => unreachable!("turned into Json above"),
            Reply::Hang => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                return;
            }
            Reply::Json {
                status,
                headers,
                body,
            } => {
                let mut head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
                    body.len()
                );
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(body.as_bytes()).await;
                let _ = stream.flush().await;
            }
        }
    }
}

/// Reads one request (head, then `content-length` bytes of body).
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Recorded> {
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buf.len() < body_start + len {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[body_start..body_start + len].to_vec();
    buf.drain(..body_start + len);
    Some(Recorded {
        method,
        path,
        headers,
        body,
        at: Instant::now(),
    })
}

/// A port nothing listens on: bind, note the port, close.
async fn closed_port_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = l.local_addr().expect("addr");
    drop(l);
    format!("http://{addr}")
}

// ---------------------------------------------------------------------------
// Wire-format fixtures, as the public API references document them.

fn openai_text(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": null},
                     "logprobs": null, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
    })
}

fn openai_calls(calls: &[(&str, &str, &str)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": calls},
                     "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
    })
}

fn anthropic_reply(content: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": 15, "output_tokens": 4},
    })
}

fn weather_tool() -> ToolSpec {
    ToolSpec {
        name: "get_weather".into(),
        description: "Current weather for a city".into(),
        parameters: json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        }),
    }
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        system: Some("You are terse.".into()),
        messages: vec![Message::User(text.into())],
        tools: vec![weather_tool()],
        max_tokens: Some(256),
    }
}

fn fast_http() -> HttpOptions {
    HttpOptions {
        timeout: Duration::from_secs(5),
        max_retries: 2,
        backoff_base: Duration::from_millis(10),
        backoff_cap: Duration::from_millis(50),
        retry_after_cap: Duration::from_secs(5),
    }
}

fn openai(server_base: &str, http: HttpOptions) -> OpenAiProvider {
    OpenAiProvider::new("gpt-4o-mini", &format!("{server_base}/v1"), Some(KEY), http)
        .expect("provider")
}

fn anthropic(server_base: &str, http: HttpOptions) -> AnthropicProvider {
    AnthropicProvider::new("claude-test", server_base, Some(KEY), http).expect("provider")
}

fn assert_no_key(e: &LlmError) {
    assert!(!e.to_string().contains(KEY), "error leaks the key: {e}");
    assert!(
        !format!("{e:?}").contains(KEY),
        "error leaks the key: {e:?}"
    );
}

// ---------------------------------------------------------------------------
// OpenAI Chat Completions

#[tokio::test]
async fn openai_plain_answer() {
    let server = Server::start(vec![ok(openai_text("Paris."))]).await;
    let p = openai(&server.base, fast_http());
    let r = p.chat(&ask("Capital of France?")).await.expect("answer");
    assert_eq!(r.text.as_deref(), Some("Paris."));
    assert!(r.tool_calls.is_empty());
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (11, 3));

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(r.request_bytes, req.body.len());
    assert_eq!(r.response_bytes, openai_text("Paris.").to_string().len());
    let body = req.json();
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Capital of France?"},
        ])
    );
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        }}])
    );
}

#[tokio::test]
async fn openai_one_tool_call() {
    let server = Server::start(vec![ok(openai_calls(&[(
        "call_abc",
        "get_weather",
        r#"{"city":"Paris"}"#,
    )]))])
    .await;
    let r = openai(&server.base, fast_http())
        .chat(&ask("Weather in Paris?"))
        .await
        .expect("answer");
    assert_eq!(r.text, None);
    assert_eq!(
        r.tool_calls,
        vec![ToolCall {
            id: "call_abc".into(),
            name: "get_weather".into(),
            arguments: r#"{"city":"Paris"}"#.into(),
        }]
    );
}

#[tokio::test]
async fn openai_several_tool_calls_and_their_results_go_back() {
    let server = Server::start(vec![
        ok(openai_calls(&[
            ("call_1", "get_weather", r#"{"city":"Paris"}"#),
            ("call_2", "get_weather", r#"{"city":"Rome"}"#),
        ])),
        ok(openai_text("Paris is sunnier.")),
    ])
    .await;
    let p = openai(&server.base, fast_http());
    let mut req = ask("Paris or Rome, which is sunnier?");
    let first = p.chat(&req).await.expect("turn 1");
    let names: Vec<_> = first.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(names, ["call_1", "call_2"]);

    req.messages.push(Message::Assistant {
        text: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
    });
    req.messages.push(Message::ToolResult {
        call_id: "call_1".into(),
        name: "get_weather".into(),
        content: "sunny, 24C".into(),
        is_error: false,
        note: None,
    });
    req.messages.push(Message::ToolResult {
        call_id: "call_2".into(),
        name: "get_weather".into(),
        content: "service unavailable".into(),
        is_error: true,
        note: None,
    });
    let second = p.chat(&req).await.expect("turn 2");
    assert_eq!(second.text.as_deref(), Some("Paris is sunnier."));

    let sent = server.requests()[1].json();
    let msgs = sent["messages"].as_array().expect("messages");
    assert_eq!(msgs.len(), 5);
    assert_eq!(
        msgs[2],
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Rome\"}"}},
        ]})
    );
    assert_eq!(
        msgs[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny, 24C"})
    );
    assert_eq!(
        msgs[4],
        json!({"role": "tool", "tool_call_id": "call_2", "content": "Error: service unavailable"})
    );
}

#[tokio::test]
async fn openai_invalid_json_arguments_pass_through_unchanged() {
    let raw = r#"{"city": "Paris",,}"#;
    let server = Server::start(vec![ok(openai_calls(&[("call_x", "get_weather", raw)]))]).await;
    let r = openai(&server.base, fast_http())
        .chat(&ask("Weather?"))
        .await
        .expect("a response with broken arguments is still a response");
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].arguments, raw);
    assert!(serde_json::from_str::<Value>(&r.tool_calls[0].arguments).is_err());
}

#[tokio::test]
async fn openai_429_then_success_honours_retry_after() {
    let server = Server::start(vec![
        Reply::Json {
            status: 429,
            headers: vec![("retry-after", "1".into())],
            body: json!({"error": {"message": "Rate limit reached", "type": "requests"}})
                .to_string(),
        },
        ok(openai_text("finally")),
    ])
    .await;
    // The backoff alone would wait ~10 ms; only Retry-After explains 1 s.
    let p = openai(&server.base, fast_http());
    let started = Instant::now();
    let r = p.chat(&ask("hi")).await.expect("second attempt succeeds");
    let elapsed = started.elapsed();
    assert_eq!(r.text.as_deref(), Some("finally"));
    assert_eq!(r.retries, 1, "the 429 is counted");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(elapsed >= Duration::from_secs(1), "waited only {elapsed:?}");
    let gap = reqs[1].at.duration_since(reqs[0].at);
    assert!(gap >= Duration::from_millis(990), "retried after {gap:?}");
    assert_eq!(
        reqs[0].body, reqs[1].body,
        "the retry resends the same request"
    );
}

#[tokio::test]
async fn openai_500_three_times_fails_naming_status_and_url() {
    let server = Server::start(vec![
        status(500, r#"{"error":{"message":"internal failure"}}"#),
        status(500, r#"{"error":{"message":"internal failure"}}"#),
        status(500, r#"{"error":{"message":"internal failure"}}"#),
        ok(openai_text("too late")),
    ])
    .await;
    let p = openai(&server.base, fast_http()); // max_retries = 2: 3 attempts
    let e = p.chat(&ask("hi")).await.expect_err("three 500s");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(e.retries(), 2);
    let url = format!("{}/v1/chat/completions", server.base);
    match &e {
        LlmError::Status {
            status,
            url: u,
            attempts,
            excerpt,
        } => {
            assert_eq!((*status, u.as_str(), *attempts), (500, url.as_str(), 3));
            assert_eq!(excerpt, "internal failure");
        }
        other => panic!("expected a status error, got {other:?}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("500") && msg.contains(&url), "{msg}");
    assert_no_key(&e);
}

#[tokio::test]
async fn openai_400_is_not_retried_and_quotes_the_api_message() {
    let server = Server::start(vec![
        status(
            400,
            r#"{"error":{"message":"The model `gpt-9` does not exist","type":"invalid_request_error"}}"#,
        ),
        ok(openai_text("never")),
    ])
    .await;
    let e = openai(&server.base, fast_http())
        .chat(&ask("hi"))
        .await
        .expect_err("400");
    assert_eq!(server.requests().len(), 1);
    let msg = e.to_string();
    assert!(msg.contains("HTTP 400") && msg.contains("gpt-9"), "{msg}");
}

/// A server that quotes the key it was sent: no error carries the key, not
/// even the piece of it an excerpt would cut.
#[tokio::test]
async fn a_server_quoting_the_key_gets_an_error_without_it() {
    let quoting = |status, json| Reply::QuoteKey { status, json };
    let server = Server::start(vec![
        quoting(401, true),
        quoting(401, false),
        // A success status whose body is the API's error.
        quoting(200, true),
        quoting(429, true),
        quoting(429, true),
        quoting(429, true),
        quoting(401, true),
        quoting(401, false),
    ])
    .await;
    let p = openai(&server.base, fast_http());
    let mut errors = Vec::new();
    for _ in 0..4 {
        errors.push(p.chat(&ask("hi")).await.expect_err("refused"));
    }
    let a = anthropic(&server.base, fast_http());
    for _ in 0..2 {
        errors.push(a.chat(&ask("hi")).await.expect_err("refused"));
    }
    let sent: Vec<String> = server
        .requests()
        .iter()
        .filter_map(|r| r.header("authorization").or(r.header("x-api-key")))
        .map(str::to_owned)
        .collect();
    assert_eq!(sent.len(), 8, "the server saw the key every time");
    assert!(sent.iter().all(|k| k.contains(KEY)));
    for e in &errors {
        assert_no_key(e);
        let msg = e.to_string();
        assert!(
            msg.contains("Incorrect API key provided") && msg.contains("[redacted]"),
            "the server's message is kept, without the key: {msg}"
        );
        assert!(!msg.contains(&KEY[..12]), "a cut piece of the key: {msg}");
    }
    assert!(
        errors[0].to_string().contains("Bearer [redacted]"),
        "{}",
        errors[0]
    );
}

#[tokio::test]
async fn openai_429_every_time_is_rate_limited() {
    let limited = Reply::Json {
        status: 429,
        headers: vec![("retry-after-ms", "20".into())],
        body: r#"{"error":{"message":"slow down"}}"#.into(),
    };
    let server = Server::start(vec![limited.clone(), limited.clone(), limited]).await;
    let e = openai(&server.base, fast_http())
        .chat(&ask("hi"))
        .await
        .expect_err("429s");
    assert!(
        matches!(e, LlmError::RateLimited { attempts: 3, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("429") && e.to_string().contains("slow down"));
}

#[tokio::test]
async fn openai_timeout_is_a_clear_error() {
    let server = Server::start(vec![Reply::Hang]).await;
    let p = openai(
        &server.base,
        HttpOptions {
            timeout: Duration::from_millis(300),
            ..fast_http()
        },
    );
    let started = Instant::now();
    let e = p.chat(&ask("hi")).await.expect_err("times out");
    let elapsed = started.elapsed();
    // Not before the timeout; and the server hangs for 30 s, so a Timeout
    // error (not an answer) shows the client gave up on its own.
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    assert!(matches!(e, LlmError::Timeout { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&server.base) && msg.contains("300ms"), "{msg}");
    assert_eq!(server.requests().len(), 1, "a timeout is not retried");
    assert_no_key(&e);
}

#[tokio::test]
async fn openai_unreachable_names_the_url() {
    let base = closed_port_url().await;
    let p = openai(&base, fast_http());
    let e = p.chat(&ask("hi")).await.expect_err("refused");
    assert!(matches!(e, LlmError::Unreachable { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("{base}/v1/chat/completions")),
        "{msg}"
    );
    assert!(msg.to_lowercase().contains("refused"), "{msg}");
    assert_no_key(&e);
}

#[tokio::test]
async fn openai_malformed_success_is_a_protocol_error() {
    let server = Server::start(vec![ok(json!({"id": "x", "choices": []}))]).await;
    let e = openai(&server.base, fast_http())
        .chat(&ask("hi"))
        .await
        .expect_err("no choices");
    assert!(matches!(e, LlmError::Protocol { .. }), "{e:?}");
    assert!(e.to_string().contains("choices[0].message"), "{e}");
}

#[tokio::test]
async fn configured_local_server_gets_no_key() {
    // An Ollama-style server: base URL set, no api_key_env.
    let server = Server::start(vec![ok(openai_text("local answer"))]).await;
    let config = ModelConfig {
        provider: Some("openai".into()),
        model: Some("llama3.2".into()),
        base_url: Some(format!("{}/v1", server.base)),
        timeout_ms: Some(5000),
        ..Default::default()
    };
    let p = config.build().expect("builds").expect("a provider");
    assert_eq!(p.name(), "openai:llama3.2");
    let r = p.chat(&ask("hi")).await.expect("answer");
    assert_eq!(r.text.as_deref(), Some("local answer"));
    let req = &server.requests()[0];
    assert_eq!(req.header("authorization"), None);
    assert_eq!(req.json()["model"], "llama3.2");
}

#[tokio::test]
async fn flags_override_the_file_to_reach_a_server() {
    let server = Server::start(vec![ok(anthropic_reply(
        json!([{"type": "text", "text": "via flags"}]),
        "end_turn",
    ))])
    .await;
    let file: ModelConfig =
        toml::from_str("provider = \"openai\"\nmodel = \"gpt-4o-mini\"\n").expect("toml");
    let config = file
        .with_overrides(Some("anthropic:claude-test"), Some(&server.base), None)
        .expect("overrides");
    let p = config.build().expect("builds").expect("a provider");
    assert_eq!(p.name(), "anthropic:claude-test");
    let r = p.chat(&ask("hi")).await.expect("answer");
    assert_eq!(r.text.as_deref(), Some("via flags"));
    assert_eq!(server.requests()[0].path, "/v1/messages");
}

// ---------------------------------------------------------------------------
// Anthropic Messages

#[tokio::test]
async fn anthropic_plain_answer() {
    let server = Server::start(vec![ok(anthropic_reply(
        json!([{"type": "text", "text": "Paris."}]),
        "end_turn",
    ))])
    .await;
    let r = anthropic(&server.base, fast_http())
        .chat(&ask("Capital of France?"))
        .await
        .expect("answer");
    assert_eq!(r.text.as_deref(), Some("Paris."));
    assert!(r.tool_calls.is_empty());
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (15, 4));

    let req = &server.requests()[0];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(req.header("x-api-key"), Some(KEY));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(req.header("authorization"), None);
    assert_eq!(r.request_bytes, req.body.len());
    let body = req.json();
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(body["system"], "You are terse.");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]}])
    );
    assert_eq!(
        body["tools"],
        json!([{
            "name": "get_weather",
            "description": "Current weather for a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        }])
    );
}

#[tokio::test]
async fn anthropic_one_tool_call() {
    let server = Server::start(vec![ok(anthropic_reply(
        json!([
            {"type": "text", "text": "I'll check."},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
        ]),
        "tool_use",
    ))])
    .await;
    let r = anthropic(&server.base, fast_http())
        .chat(&ask("Weather in Paris?"))
        .await
        .expect("answer");
    assert_eq!(r.text.as_deref(), Some("I'll check."));
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(
        (r.tool_calls[0].id.as_str(), r.tool_calls[0].name.as_str()),
        ("toolu_01", "get_weather")
    );
    let args: Value = serde_json::from_str(&r.tool_calls[0].arguments).expect("JSON text");
    assert_eq!(args, json!({"city": "Paris"}));
}

#[tokio::test]
async fn anthropic_several_tool_calls_and_results_in_one_user_message() {
    let server = Server::start(vec![
        ok(anthropic_reply(
            json!([
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}},
            ]),
            "tool_use",
        )),
        ok(anthropic_reply(json!([{"type": "text", "text": "Paris."}]), "end_turn")),
    ])
    .await;
    let p = anthropic(&server.base, fast_http());
    let mut req = ask("Paris or Rome?");
    let first = p.chat(&req).await.expect("turn 1");
    assert_eq!(first.tool_calls.len(), 2);
    req.messages.push(Message::Assistant {
        text: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
    });
    for (call, (content, is_error)) in first
        .tool_calls
        .iter()
        .zip([("sunny", false), ("no such city", true)])
    {
        req.messages.push(Message::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: content.into(),
            is_error,
            note: None,
        });
    }
    let second = p.chat(&req).await.expect("turn 2");
    assert_eq!(second.text.as_deref(), Some("Paris."));

    let sent = server.requests()[1].json();
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Paris or Rome?"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "no such city", "is_error": true},
            ]},
        ])
    );
}

#[tokio::test]
async fn anthropic_non_object_input_passes_through_unchanged() {
    // The API documents `input` as an object; a non-conforming server (or
    // proxy) that sends text must not have it "repaired" behind the loop.
    let server = Server::start(vec![ok(anthropic_reply(
        json!([{"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": "{\"city\": Paris}"}]),
        "tool_use",
    ))])
    .await;
    let r = anthropic(&server.base, fast_http())
        .chat(&ask("Weather?"))
        .await
        .expect("answer");
    assert_eq!(r.tool_calls[0].arguments, "{\"city\": Paris}");
}

#[tokio::test]
async fn anthropic_429_then_success_honours_retry_after() {
    let server = Server::start(vec![
        Reply::Json {
            status: 429,
            headers: vec![("retry-after", "1".into())],
            body: json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}})
                .to_string(),
        },
        ok(anthropic_reply(json!([{"type": "text", "text": "ok"}]), "end_turn")),
    ])
    .await;
    let started = Instant::now();
    let r = anthropic(&server.base, fast_http())
        .chat(&ask("hi"))
        .await
        .expect("retried");
    assert_eq!(r.text.as_deref(), Some("ok"));
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].at.duration_since(reqs[0].at) >= Duration::from_millis(990));
}

#[tokio::test]
async fn anthropic_overloaded_529_is_retried() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = Server::start(vec![
        status(529, overloaded),
        ok(anthropic_reply(
            json!([{"type": "text", "text": "back"}]),
            "end_turn",
        )),
    ])
    .await;
    let r = anthropic(&server.base, fast_http())
        .chat(&ask("hi"))
        .await
        .expect("retried");
    assert_eq!(r.text.as_deref(), Some("back"));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn anthropic_500_three_times_fails_naming_status_and_url() {
    let body = r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#;
    let server = Server::start(vec![
        status(500, body),
        status(500, body),
        status(500, body),
    ])
    .await;
    let e = anthropic(&server.base, fast_http())
        .chat(&ask("hi"))
        .await
        .expect_err("three 500s");
    assert_eq!(server.requests().len(), 3);
    let msg = e.to_string();
    let url = format!("{}/v1/messages", server.base);
    assert!(
        matches!(
            e,
            LlmError::Status {
                status: 500,
                attempts: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        msg.contains("500") && msg.contains(&url) && msg.contains("Internal server error"),
        "{msg}"
    );
    assert_no_key(&e);
}

#[tokio::test]
async fn anthropic_timeout_is_a_clear_error() {
    let server = Server::start(vec![Reply::Hang]).await;
    let p = anthropic(
        &server.base,
        HttpOptions {
            timeout: Duration::from_millis(300),
            ..fast_http()
        },
    );
    let e = p.chat(&ask("hi")).await.expect_err("times out");
    assert!(matches!(e, LlmError::Timeout { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains(&format!("{}/v1/messages", server.base)),
        "{e}"
    );
    assert_no_key(&e);
}

#[tokio::test]
async fn anthropic_unreachable_names_the_url() {
    let base = closed_port_url().await;
    let e = anthropic(&base, fast_http())
        .chat(&ask("hi"))
        .await
        .expect_err("refused");
    assert!(matches!(e, LlmError::Unreachable { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&format!("{base}/v1/messages")), "{msg}");
    assert!(msg.to_lowercase().contains("refused"), "{msg}");
    assert_no_key(&e);
}

// ---------------------------------------------------------------------------
// Scripted

#[tokio::test]
async fn scripted_provider_from_config_replays_then_runs_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("answers.json");
    std::fs::write(
        &path,
        r#"[
            {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                            {"name": "get_weather", "arguments": "{\"city\": oops"}]},
            {"text": "It is sunny."}
        ]"#,
    )
    .expect("write");
    let config: ModelConfig = toml::from_str(&format!(
        "provider = \"scripted\"\nscript = {:?}\n",
        path.display().to_string()
    ))
    .expect("toml");
    let p = config.build().expect("builds").expect("a provider");

    let r = p.chat(&ask("weather")).await.expect("turn 1");
    let args: Vec<_> = r.tool_calls.iter().map(|c| c.arguments.as_str()).collect();
    assert_eq!(args, [r#"{"city":"Paris"}"#, r#"{"city": oops"#]);
    let r = p.chat(&ask("weather")).await.expect("turn 2");
    assert_eq!(r.text.as_deref(), Some("It is sunny."));
    let e = p.chat(&ask("weather")).await.expect_err("exhausted");
    assert!(
        matches!(e, LlmError::ScriptExhausted { turns: 2, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("answers.json"), "{e}");
}

#[tokio::test]
async fn no_model_configured_is_not_an_error() {
    let config: ModelConfig = toml::from_str("").expect("empty table");
    assert!(config.build().expect("no error").is_none());
}

/// `run --json` counts the model's retried calls in its timings: a 429
/// and a 503 before the answer are two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_json_counts_model_retries_in_its_timings() {
    let busy = |code: u16| Reply::Json {
        status: code,
        headers: vec![("retry-after-ms", "10".into())],
        body: json!({"error": {"message": "busy"}}).to_string(),
    };
    let server = Server::start(vec![busy(429), busy(503), ok(openai_text("done"))]).await;
    let ws = crate::harness::Workspace::new();
    ws.add_skill("notes", "", None);
    let base = format!("{}/v1", server.base);
    let out = tokio::task::spawn_blocking(move || {
        let skills = ws.skills.to_string_lossy().into_owned();
        let out = ws
            .cli()
            .env("RETRY_TEST_KEY", KEY)
            .args([
                "--skills",
                &skills,
                "run",
                "take a note",
                "--skill",
                "notes",
                "--json",
            ])
            .args(["--model", "openai:gpt-4o-mini", "--base-url", &base])
            .args(["--api-key-env", "RETRY_TEST_KEY"])
            .output()
            .expect("run skillhost");
        crate::harness::CliResult::from(out)
    })
    .await
    .expect("cli task");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = out.json();
    assert_eq!(v["output"]["body"], "done", "{v}");
    assert_eq!(v["timings"]["model_retries"], 2, "{v}");
    assert_eq!(server.requests().len(), 3);
}
