//! The model loop against a real model: llama.cpp's OpenAI-compatible
//! server with SmolLM2-135M-Instruct (`.ci/install-local-model.sh`,
//! `.ci/local-model.sh`), at SKILLHOST_TEST_MODEL_URL. Without it a test
//! says it was skipped, except under CI, where that is a failure.
//!
//! These tests assert what the host does with whatever the model says:
//! the tools it offers, bounded turns and tokens, a recorded trajectory,
//! the failure class. Never the model's prose.

use std::sync::Mutex;

use serde_json::json;
use skillhost::config::Config;
use skillhost::exec::{RunOutcome, Runner, Step};

use crate::harness::{Workspace, run};

/// One server with one slot: the tests take turns, so that no test's
/// timeout counts time spent queued behind another's request.
static SERVER: Mutex<()> = Mutex::new(());

/// The server's base URL; `None` (said on stderr) without one, a panic
/// under CI.
fn model_url(test: &str) -> Option<String> {
    match std::env::var("SKILLHOST_TEST_MODEL_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{test}: SKILLHOST_TEST_MODEL_URL is not set, and CI must test the real model")
        }
        _ => {
            eprintln!(
                "{test}: skipped (set SKILLHOST_TEST_MODEL_URL=http://127.0.0.1:8089/v1; see docs/local-model.md)"
            );
            None
        }
    }
}

/// A workspace with skill `writer` (only its SKILL.md, no tools declared)
/// and skill `reader` (a reference file and its file readers), and a
/// runner on the real model with `configure` applied.
fn real_runner(url: &str, configure: impl FnOnce(&mut Config)) -> (Workspace, Runner) {
    let ws = Workspace::new();
    ws.add_skill("writer", "", None);
    let reader = ws.add_skill(
        "reader",
        "allowed-tools: [read_skill_file, list_skill_files]",
        None,
    );
    std::fs::write(reader.join("notes.md"), "The code word is heron.\n").expect("write notes");
    let mut config = Config::default();
    config.model.provider = Some("openai".into());
    config.model.model = Some("smollm2".into());
    config.model.base_url = Some(url.to_owned());
    config.model.temperature = Some(0.0);
    configure(&mut config);
    let provider = config.model.build().expect("provider").expect("configured");
    let runner = ws.runner(config).with_provider(provider);
    (ws, runner)
}

/// Each model turn's (prompt tokens, output tokens).
fn model_turns(o: &RunOutcome) -> Vec<(u64, u64)> {
    o.trajectory
        .iter()
        .filter_map(|s| match s {
            Step::Model {
                prompt_tokens,
                output_tokens,
                ..
            } => Some((*prompt_tokens, *output_tokens)),
            Step::Tool { .. } => None,
        })
        .collect()
}

#[test]
fn a_skill_with_only_its_skill_md_gets_one_bounded_turn_and_is_recorded() {
    let Some(url) = model_url("real_model::skill_md_only") else {
        return;
    };
    let _turn = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let (_ws, runner) = real_runner(&url, |_| {});
    let o = run(
        &runner,
        "writer",
        "Write a haiku about autumn rain.",
        json!({}),
    );
    assert_eq!(o.failure, None, "{:?}", o.trajectory);
    let turns = model_turns(&o);
    assert_eq!(
        turns.len(),
        1,
        "no tool was offered, so one turn: {turns:?}"
    );
    let (prompt, output) = turns[0];
    assert!(prompt > 0, "the server counts the prompt");
    assert!(
        (1..=1024).contains(&output),
        "within the default max_tokens: {output}"
    );
    assert!(o.run_id.is_some(), "the run is recorded");
}

#[test]
fn a_request_for_a_long_text_stops_at_the_default_token_budget() {
    let Some(url) = model_url("real_model::long_text") else {
        return;
    };
    let _turn = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let (_ws, runner) = real_runner(&url, |_| {});
    let task = "Write a very long essay of at least 5000 words on the history of rain, \
                with many sections. Do not stop early.";
    let o = run(&runner, "writer", task, json!({}));
    let turns = model_turns(&o);
    assert_eq!(turns.len(), 1, "{turns:?}");
    assert!(
        turns[0].1 <= 1024,
        "no request runs past the default max_tokens: {turns:?}"
    );
    assert_eq!(o.timings.model_retries, 0);
}

#[test]
fn a_call_slower_than_the_timeout_fails_as_a_model_error_after_one_try() {
    let Some(url) = model_url("real_model::timeout") else {
        return;
    };
    let _turn = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let (_ws, runner) = real_runner(&url, |c| {
        c.model.timeout_ms = Some(50);
        // What the server goes on generating after the client left.
        c.model.max_tokens = Some(64);
    });
    let o = run(
        &runner,
        "writer",
        "Write a long story about a lighthouse.",
        json!({}),
    );
    let failure = o.failure.clone().expect("a timed-out run fails");
    assert_eq!(failure.class, "ModelError", "{}", failure.message);
    assert!(
        failure.message.contains("did not answer within"),
        "{}",
        failure.message
    );
    assert_eq!(o.timings.model_retries, 0, "a timeout is not retried");
    assert_eq!(model_turns(&o).len(), 1);
    // Let the abandoned generation finish before the next test's clock.
    std::thread::sleep(std::time::Duration::from_secs(3));
}

#[test]
fn tool_calls_of_the_real_model_pass_the_policy_and_the_loop_stays_within_max_steps() {
    let Some(url) = model_url("real_model::tools") else {
        return;
    };
    let _turn = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let (_ws, runner) = real_runner(&url, |c| {
        c.agent.max_steps = 2;
        c.model.max_tokens = Some(256);
    });
    let task = "Use the read_skill_file tool to read notes.md, then say the code word.";
    let o = run(&runner, "reader", task, json!({}));
    let turns = model_turns(&o);
    assert!(
        (1..=2).contains(&turns.len()),
        "at most max_steps turns: {turns:?}"
    );
    for step in &o.trajectory {
        if let Step::Tool {
            tool,
            result,
            error_class,
            ..
        } = step
        {
            // Whatever the model asked for: a result, or an error the
            // model was told about (an unknown tool, bad arguments, a
            // denial), never a crash.
            assert!(
                result.is_some() || error_class.is_some(),
                "tool step {tool} recorded without outcome"
            );
        }
    }
    match &o.failure {
        None => assert!(o.output.is_some()),
        Some(f) => assert_eq!(
            f.class, "StepLimitExceeded",
            "only the step cap may end this run: {f:?}"
        ),
    }
}

/// The CI sample of the ablation on the real model: 2 open-world tasks,
/// 1 training run, one seed, answers capped at 160 tokens (an email fits).
/// The full run is in docs/learning-eval.md.
#[test]
fn a_small_ablation_on_the_real_model_reports_every_arm_by_criterion() {
    let Some(url) = model_url("real_model::ablation_sample") else {
        return;
    };
    let _turn = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let ws = Workspace::new();
    let all = std::fs::read_to_string(
        crate::harness::repo_root().join("tests/data/learning/email-open-world.jsonl"),
    )
    .expect("tasks");
    let sample: Vec<&str> = all.lines().filter(|l| l.starts_with('{')).take(2).collect();
    let tasks = ws.workspace.join("sample.jsonl");
    std::fs::write(&tasks, sample.join("\n") + "\n").expect("write sample");
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[model]\nmax_tokens = 160\ntemperature = 0.0\n",
    )
    .expect("write skillhost.toml");
    let out = ws.run_ok(&[
        "eval",
        "ablation",
        "--scenario",
        "email",
        "--model",
        "openai:smollm2",
        "--base-url",
        &url,
        "--tasks",
        tasks.to_str().expect("utf8"),
        "--train",
        "1",
        "--seeds",
        "1",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("json");
    let summary = report["sweeps"][0]["summary"].as_array().expect("summary");
    let arms: Vec<&str> = summary.iter().filter_map(|a| a["arm"].as_str()).collect();
    assert_eq!(
        arms,
        [
            "baseline",
            "retry-only",
            "feedback-retry",
            "prevention",
            "all-rules",
            "rules+feedback"
        ]
    );
    for arm in summary {
        let subject = &arm["criteria"]["subject line"];
        assert_eq!(subject["applies"].as_u64(), Some(2), "{arm}");
        let calls = arm["model_calls_per_task"].as_f64().unwrap_or(f64::MAX);
        // At most two runs a task (a retry arm), each within max_steps.
        assert!(calls <= 2.0 * 10.0, "{calls}");
    }
}
