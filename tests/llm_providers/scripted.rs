//! The scripted provider, no model configured, and `run --json` counting retried calls.

use super::*;

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
