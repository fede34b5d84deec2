//! The model loop's own overhead per step, with the scripted provider (no
//! network) and a cheap confined tool, minus the tool's own time. Baseline
//! in the same run: the same number of bare `Provider::chat` calls.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::json;
use skillhost::config::Config;
use skillhost::exec::{RunRequest, Step};
use skillhost::llm::{
    ChatRequest, Message, Provider, ScriptToolCall, ScriptTurn, ScriptedProvider,
};

const STEPS: usize = 20;

fn script() -> Vec<ScriptTurn> {
    let mut turns: Vec<ScriptTurn> = (0..STEPS - 1)
        .map(|_| ScriptTurn {
            tool_calls: vec![ScriptToolCall {
                name: "list_skill_files".into(),
                arguments: json!({}),
                ..ScriptToolCall::default()
            }],
            ..ScriptTurn::default()
        })
        .collect();
    turns.push(ScriptTurn {
        text: Some("done".into()),
        ..ScriptTurn::default()
    });
    turns
}

fn bench_loop(c: &mut Criterion) {
    let ws = harness::Workspace::new();
    ws.add_skill("looper", "", None);
    let mut config = Config::default();
    config.agent.max_steps = STEPS as u32 + 5;
    config.learning.record = false;
    let base = ws.runner(config);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("rt");
    let run_once = || loop_time(&rt, &base);
    let bare_once = || bare_chat_time(&rt);

    let mut g = c.benchmark_group("model_loop");
    g.bench_function("run_20_steps_scripted", |b| {
        b.iter(|| black_box(run_once()))
    });
    g.bench_function("bare_20_chat_calls", |b| b.iter(|| black_box(bare_once())));
    g.finish();

    let rounds = 30;
    let (mut loop_time, mut bare_time) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        loop_time += run_once();
        bare_time += bare_once();
    }
    let per_step = loop_time / (rounds * STEPS as u32);
    let bare_per_call = bare_time / (rounds * STEPS as u32);
    println!(
        "RATIO loop: {per_step:?} per step excluding tool time (target well under 1 ms) vs bare scripted chat {bare_per_call:?} per call = {:.1}x",
        per_step.as_secs_f64() / bare_per_call.as_secs_f64()
    );
}

/// One run of `STEPS` scripted model steps: its time minus the tools' own.
fn loop_time(rt: &tokio::runtime::Runtime, base: &skillhost::exec::Runner) -> Duration {
    let req = RunRequest {
        task: "loop".into(),
        skill: Some("looper".into()),
        ..RunRequest::default()
    };
    let provider: Arc<dyn Provider> = Arc::new(ScriptedProvider::from_turns("bench", script()));
    let runner = base.clone().with_provider(provider);
    let started = Instant::now();
    let outcome = rt.block_on(runner.run(&req)).expect("run");
    let total = started.elapsed();
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    let tool_time: u64 = outcome
        .trajectory
        .iter()
        .map(|s| match s {
            Step::Tool { duration_us, .. } => *duration_us,
            Step::Model { .. } => 0,
        })
        .sum();
    total.saturating_sub(Duration::from_micros(tool_time))
}

/// `STEPS` bare scripted chat calls.
fn bare_chat_time(rt: &tokio::runtime::Runtime) -> Duration {
    let provider = ScriptedProvider::from_turns("bench", script());
    let request = ChatRequest {
        system: Some("s".into()),
        messages: vec![Message::User("loop".into())],
        tools: vec![],
        max_tokens: None,
    };
    let started = Instant::now();
    for _ in 0..STEPS {
        black_box(rt.block_on(provider.chat(&request)).expect("chat"));
    }
    started.elapsed()
}

criterion_group!(benches, bench_loop);

fn main() {
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
