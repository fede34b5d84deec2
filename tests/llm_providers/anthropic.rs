//! The Anthropic Messages provider: answers, tool calls, retries and errors.

use super::*;

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
