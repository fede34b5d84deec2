//! The OpenAI Chat Completions provider: answers, tool calls, retries, errors, configuration.

use super::*;

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
