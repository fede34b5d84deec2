//! `eval ablation --model PROVIDER:MODEL`: the ablation against a model
//! served over HTTP, here a scripted local server speaking the OpenAI
//! Chat Completions and Anthropic Messages wire formats (as llama.cpp's
//! server, Ollama or a proxy would). Nothing is downloaded.
//!
//! The server writes an email without a subject line unless the prompt
//! carries the validator's message from a rejected first answer: so the
//! feedback-retry arm must do better than the baseline, and ground truth
//! comes from the task file's labels, not from the model.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::harness::{self, Workspace};
use crate::support::model_server::ModelServer;

/// Serves every connection on a thread until the process ends; counts the
/// requests.
fn serve(anthropic: bool) -> (String, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    let server = ModelServer::answering("", move |request| {
        seen.fetch_add(1, Ordering::SeqCst);
        answer(request, anthropic)
    });
    let base = server.base.clone();
    server.detach();
    (base, count)
}

/// The reply to `request`: an email without a subject line unless the
/// prompt carries the validator's message from a rejected first answer.
fn answer(request: &str, anthropic: bool) -> String {
    let text = if request.contains("Your previous answer was rejected") {
        "Subject: Your request\n\nHello,\n\nWe meet at 3pm (timezone not given).\nPlease find attached: the requested document.\n\nBest regards,\n"
    } else {
        "Hello,\n\nWe meet at 3pm (timezone not given).\nPlease find attached: the requested document.\n\nBest regards,\n"
    };
    if anthropic {
        json!({"id": "m", "type": "message", "role": "assistant",
               "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
               "usage": {"input_tokens": 10, "output_tokens": 10}})
    } else {
        json!({"id": "c", "object": "chat.completion",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
    }
    .to_string()
}

fn arm<'a>(sweep: &'a Value, name: &str) -> &'a Value {
    sweep["summary"]
        .as_array()
        .expect("summary")
        .iter()
        .find(|a| a["arm"] == name)
        .expect("arm")
}

#[test]
fn the_ablation_runs_against_openai_and_anthropic_compatible_servers() {
    let tasks = harness::repo_root().join("tests/data/learning/email-open-world.jsonl");
    let tasks = tasks.to_str().expect("utf8");
    for (provider, anthropic, base_suffix) in
        [("ollama:tiny", false, "/v1"), ("anthropic:tiny", true, "")]
    {
        let (base, count) = serve(anthropic);
        let ws = Workspace::new();
        let out = ws.run_ok(&[
            "eval",
            "ablation",
            "--model",
            provider,
            "--base-url",
            &format!("{base}{base_suffix}"),
            "--tasks",
            tasks,
            "--seeds",
            "1",
            "--train",
            "3",
            "--json",
        ]);
        let report: Value = serde_json::from_str(&out).expect("json");
        let sweeps = report["sweeps"].as_array().expect("sweeps");
        assert_eq!(sweeps.len(), 1, "a real model: no compliance to sweep");
        assert!(sweeps[0]["compliance"].is_null());
        assert!(
            report["model"].as_str().unwrap_or("").contains("tiny"),
            "{}",
            report["model"]
        );
        let base_arm = arm(&sweeps[0], "baseline");
        let feedback = arm(&sweeps[0], "feedback-retry");
        assert_eq!(base_arm["validator_success"].as_f64(), Some(0.0));
        assert_eq!(feedback["validator_success"].as_f64(), Some(1.0));
        assert!(feedback["model_calls_per_task"].as_f64().unwrap_or(0.0) >= 1.99);
        // Ground truth from the labels: the fixed answer says 3pm and
        // attaches "the requested document", which most tasks did not ask
        // for (7 of the 32 tasks it answers right).
        let truth = feedback["truth_success"]
            .as_f64()
            .expect("labels give truth");
        assert!((truth - 7.0 / 32.0).abs() < 1e-9, "{truth}");
        assert!(feedback["agreement"].as_f64().expect("agreement") < 1.0);
        // 3 training runs, then 32 tasks in five arms (retries included).
        assert!(
            count.load(Ordering::SeqCst) > 3 + 5 * 32,
            "{}",
            count.load(Ordering::SeqCst)
        );
    }
}
