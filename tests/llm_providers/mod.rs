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

mod anthropic;
mod bounds;
mod openai;
mod scripted;

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
    /// Answers 200 and then trickles the body a byte every 100 ms, as a
    /// model streaming a long answer does: never done within the test.
    Trickle,
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
    headers: Headers,
    body: Vec<u8>,
    at: Instant,
}

/// A request's headers, names in lower case, in the order sent.
type Headers = Vec<(String, String)>;

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
            reply = quoting_key(status, json, &credential);
        }
        if !send(&mut stream, reply).await {
            return;
        }
    }
}

/// An error that quotes the credential the client sent, as some servers
/// do: in an OpenAI-style JSON error, or in an HTML page.
fn quoting_key(status: u16, json: bool, credential: &str) -> Reply {
    let message = format!(
        "Incorrect API key provided: {credential}. You can find your API key at https://example.invalid/keys."
    );
    Reply::Json {
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
    }
}

/// Sends `reply`; whether the connection stays open for another request.
async fn send(stream: &mut TcpStream, reply: Reply) -> bool {
    match reply {
        Reply::QuoteKey { .. } => unreachable!("turned into Json above"),
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            false
        }
        Reply::Trickle => {
            trickle(stream).await;
            false
        }
        Reply::Json {
            status,
            headers,
            body,
        } => {
            send_json(stream, status, &headers, &body).await;
            true
        }
    }
}

/// Promises 100000 bytes of JSON and sends one byte every 100 ms.
async fn trickle(stream: &mut TcpStream) {
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{";
    let _ = stream.write_all(head.as_bytes()).await;
    for _ in 0..300 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if stream.write_all(b" ").await.is_err() {
            return;
        }
    }
}

async fn send_json(stream: &mut TcpStream, status: u16, headers: &[(&str, String)], body: &str) {
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

/// Reads one request (head, then `content-length` bytes of body).
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Recorded> {
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        read_more(stream, buf).await?;
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let (method, path, headers) = parse_head(&head)?;
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buf.len() < body_start + len {
        read_more(stream, buf).await?;
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

/// Appends what the stream has to `buf`; `None` once it is closed or fails.
async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<()> {
    let mut chunk = [0u8; 4096];
    let n = stream.read(&mut chunk).await.ok()?;
    if n == 0 {
        return None;
    }
    buf.extend_from_slice(&chunk[..n]);
    Some(())
}

/// A request head's method, path and headers (names in lower case).
fn parse_head(head: &str) -> Option<(String, String, Headers)> {
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some((method, path, headers))
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
        total_timeout: Duration::from_secs(10),
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
