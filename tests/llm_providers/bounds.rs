//! Every model request is bounded: a length cap sent by default, a
//! temperature only when configured, a timeout that is not retried, and a
//! budget for the whole call that no retry outlives. Counts and classes
//! are asserted, never elapsed times.

use super::*;

/// A config for the test server, as `[model]` in skillhost.toml reads.
fn configured(base: &str, provider: &str, extra: &str) -> Arc<dyn Provider> {
    let text =
        format!("provider = \"{provider}\"\nmodel = \"small\"\nbase_url = \"{base}\"\n{extra}");
    let config: ModelConfig = toml::from_str(&text).expect("[model]");
    config.build().expect("builds").expect("a provider")
}

/// A request that sets no `max_tokens` of its own.
fn unbounded_ask() -> ChatRequest {
    ChatRequest {
        max_tokens: None,
        ..ask("Tell me everything you know.")
    }
}

#[tokio::test]
async fn an_openai_compatible_server_gets_max_tokens_by_default_and_no_temperature() {
    // A llama.cpp-style server: without a cap, a small model would ramble
    // until its context is full.
    let server = Server::start(vec![ok(openai_text("..."))]).await;
    let p = configured(&format!("{}/v1", server.base), "openai", "");
    p.chat(&unbounded_ask()).await.expect("answer");
    let body = server.requests()[0].json();
    assert_eq!(body["max_tokens"], skillhost::llm::DEFAULT_MAX_TOKENS);
    assert!(body.get("temperature").is_none(), "{body}");
    assert!(body.get("max_completion_tokens").is_none(), "{body}");
}

#[tokio::test]
async fn configured_max_tokens_and_temperature_are_sent_and_a_request_overrides_the_cap() {
    let server = Server::start(vec![ok(openai_text("a")), ok(openai_text("b"))]).await;
    let extra = "max_tokens = 64\ntemperature = 0.25\n";
    let p = configured(&format!("{}/v1", server.base), "openai", extra);
    p.chat(&unbounded_ask()).await.expect("answer");
    p.chat(&ask("short")).await.expect("answer");
    let reqs = server.requests();
    let (first, second) = (reqs[0].json(), reqs[1].json());
    assert_eq!(
        (&first["max_tokens"], &first["temperature"]),
        (&json!(64), &json!(0.25))
    );
    assert_eq!(second["max_tokens"], 256, "the request's own cap wins");
}

#[tokio::test]
async fn anthropic_gets_the_same_default_cap_and_a_temperature_only_when_set() {
    let reply = || {
        ok(anthropic_reply(
            json!([{"type": "text", "text": "hi"}]),
            "end_turn",
        ))
    };
    let server = Server::start(vec![reply(), reply()]).await;
    configured(&server.base, "anthropic", "")
        .chat(&unbounded_ask())
        .await
        .expect("answer");
    configured(&server.base, "anthropic", "temperature = 0.5")
        .chat(&unbounded_ask())
        .await
        .expect("answer");
    let reqs = server.requests();
    let (first, second) = (reqs[0].json(), reqs[1].json());
    assert_eq!(first["max_tokens"], skillhost::llm::DEFAULT_MAX_TOKENS);
    assert!(first.get("temperature").is_none(), "{first}");
    assert_eq!(second["temperature"], 0.5);
}

#[tokio::test]
async fn a_slow_streaming_answer_past_the_timeout_is_asked_once() {
    let http = HttpOptions {
        timeout: Duration::from_millis(300),
        max_retries: 3,
        ..fast_http()
    };
    let (e, server) = failed_call(vec![Reply::Trickle, Reply::Trickle, Reply::Trickle], http).await;
    assert!(
        matches!(
            e,
            LlmError::Timeout {
                setting: "timeout_ms",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "a timed-out call is not retried"
    );
}

#[tokio::test]
async fn a_timeout_after_a_server_error_ends_the_retries() {
    let http = HttpOptions {
        timeout: Duration::from_millis(300),
        max_retries: 3,
        ..fast_http()
    };
    let (e, server) = failed_call(vec![status(500, "boom"), Reply::Hang, Reply::Hang], http).await;
    assert!(matches!(e, LlmError::Timeout { .. }), "{e:?}");
    assert_eq!(
        server.requests().len(),
        2,
        "the 500 is retried, the timeout is not"
    );
}

#[tokio::test]
async fn no_retry_waits_past_the_total_budget() {
    // The server asks for 5 s; the whole call may take 300 ms.
    let busy = Reply::Json {
        status: 503,
        headers: vec![("retry-after", "5".into())],
        body: json!({"error": {"message": "busy"}}).to_string(),
    };
    let http = HttpOptions {
        total_timeout: Duration::from_millis(300),
        max_retries: 3,
        ..fast_http()
    };
    let (e, server) = failed_call(vec![busy, ok(openai_text("late"))], http).await;
    assert!(
        matches!(
            e,
            LlmError::Status {
                status: 503,
                attempts: 1,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn the_total_budget_cuts_a_retry_short_and_names_its_key() {
    let http = HttpOptions {
        timeout: Duration::from_secs(20),
        total_timeout: Duration::from_millis(400),
        max_retries: 3,
        ..fast_http()
    };
    let (e, server) = failed_call(vec![status(500, "boom"), Reply::Hang, Reply::Hang], http).await;
    assert!(
        matches!(
            e,
            LlmError::Timeout {
                setting: "total_timeout_ms",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("[model] total_timeout_ms"), "{e}");
    assert_eq!(server.requests().len(), 2);
}

/// `replies` served, one chat asked with `http`, which must fail: its error
/// and the server (for the requests it received).
async fn failed_call(replies: Vec<Reply>, http: HttpOptions) -> (LlmError, Server) {
    let server = Server::start(replies).await;
    let e = openai(&server.base, http)
        .chat(&ask("hi"))
        .await
        .expect_err("the call fails");
    (e, server)
}
