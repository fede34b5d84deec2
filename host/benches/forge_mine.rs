//! Mining 100,000 recorded runs for recurring tool sequences, against just
//! reading those runs' tool steps, measured in the same run.
//!
//! The runs are synthesised into a real SQLite store through the store's
//! own insert API: each has 1 to 8 tool calls drawn from 24 tools with a
//! skewed (Zipf-like) mix, model turns in between, results of a few
//! hundred bytes, 5% failed runs, and, in a share of the runs, one of four
//! planted sequences (3 to 5 calls). The bench fails if mining does not
//! find every planted sequence.
//!
//! `cargo bench -p skillhost --bench forge_mine` (release profile).
//! `FORGE_MINE_RUNS=N` changes the run count (for a quick check).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};
use skillhost::eval::ablation::Rng;
use skillhost::forge::mine::{self, MineConfig, MineReport};
use skillhost::store::{RunLog, RunRecord, SqliteStore, StepRecord};

/// The tools of the mix, with how their arguments are written. A tool
/// keeps its shape from call to call, as real ones do.
const TOOLS: [(&str, &str); 24] = [
    ("read_file", "path"),
    ("list_files", "dir"),
    ("write_file", "path+text"),
    ("http_fetch", "url"),
    ("skill_text-summarizer", "text+max"),
    ("search_web", "query+limit"),
    ("extract_json", "body+path"),
    ("notify", "channel+message"),
    ("db_query", "sql"),
    ("to_csv", "rows"),
    ("send_email", "to+subject+body"),
    ("log_event", "kind"),
    ("grep", "pattern+dir"),
    ("run_tests", "filter"),
    ("git_diff", "rev"),
    ("calendar_lookup", "date"),
    ("translate", "text+lang"),
    ("ocr", "path"),
    ("resize_image", "path+width"),
    ("kv_get", "key"),
    ("kv_set", "key+value"),
    ("parse_date", "text"),
    ("format_table", "rows"),
    ("skill_email-writer", "text"),
];

/// Planted sequences (indexes into TOOLS) and the share of runs each is in.
const PLANTED: [(&[usize], f64); 4] = [
    (&[1, 0, 4], 0.20),
    (&[3, 6, 2, 7], 0.10),
    (&[5, 3, 4], 0.08),
    (&[8, 9, 2, 10, 11], 0.05),
];

fn arguments(tool: usize, rng: &mut Rng) -> Value {
    let n = rng.below(1000);
    match TOOLS[tool].1 {
        "path" => json!({"path": format!("notes/file{n}.md")}),
        "dir" => json!({"dir": format!("notes/{}", n % 7)}),
        "path+text" => json!({"path": format!("out/{n}.md"), "text": "Brief: sales rose in Q3."}),
        "url" => json!({"url": format!("https://api.example.com/v1/items/{n}")}),
        "text+max" => json!({"text": "Quarterly notes...", "max_sentences": 3}),
        "query+limit" => json!({"query": format!("topic {n}"), "limit": 5}),
        "body+path" => json!({"body": "{\"items\": []}", "path": "$.items"}),
        "channel+message" => json!({"channel": "#ops", "message": format!("done {n}")}),
        "sql" => json!({"sql": format!("SELECT * FROM sales WHERE q = {}", n % 4)}),
        "rows" => json!({"rows": [[1, 2], [3, 4]]}),
        "to+subject+body" => json!({"to": ["dana@example.com"], "subject": "Q3", "body": "..."}),
        "kind" => json!({"kind": "report"}),
        "pattern+dir" => json!({"pattern": "TODO", "dir": "src"}),
        "filter" => json!({"filter": format!("test_{n}")}),
        "rev" => json!({"rev": "HEAD~1"}),
        "date" => json!({"date": "2026-03-01"}),
        "text+lang" => json!({"text": "hello", "lang": "fr"}),
        "path+width" => json!({"path": "a.png", "width": 640}),
        "key" => json!({"key": format!("k{n}")}),
        "key+value" => json!({"key": format!("k{n}"), "value": n}),
        "text" => json!({"text": format!("meeting at {}pm", n % 12)}),
        _ => json!({}),
    }
}

fn tool_step(step: u32, tool: usize, rng: &mut Rng, failed: bool) -> StepRecord {
    let name = TOOLS[tool].0;
    let result = "x".repeat(120 + rng.below(400));
    let detail = json!({
        "kind": "tool", "step": step, "caller": "model", "tool": name,
        "arguments": arguments(tool, rng), "result": {"text": result},
        "duration_us": 800,
    });
    StepRecord {
        kind: "tool".into(),
        tool: Some(name.into()),
        detail,
        error: failed.then(|| "upstream timed out".into()),
        error_class: failed.then(|| "ToolError".into()),
        duration_us: 800,
    }
}

fn model_step(step: u32) -> StepRecord {
    StepRecord {
        kind: "model".into(),
        tool: None,
        detail: json!({"kind": "model", "step": step, "request_bytes": 2400,
                       "response_bytes": 300, "tool_calls": 1, "duration_us": 90000}),
        error: None,
        error_class: None,
        duration_us: 90_000,
    }
}

/// A tool of the skewed mix: low indexes are much more common.
fn noise_tool(rng: &mut Rng) -> usize {
    let u = rng.unit();
    ((TOOLS.len() as f64) * u * u * u) as usize % TOOLS.len()
}

/// Puts one planted sequence into `tools` at a random place, each with
/// its share of the runs; which one, if any.
fn plant(tools: &mut Vec<usize>, rng: &mut Rng) -> Option<usize> {
    let mut u = rng.unit();
    for (p, (seq, share)) in PLANTED.iter().enumerate() {
        if u < *share {
            let at = rng.below(tools.len() + 1);
            tools.splice(at..at, seq.iter().copied());
            return Some(p);
        }
        u -= share;
    }
    None
}

/// The recorded steps: a model step before every second tool call, and
/// a tool error now and then, mostly in runs that failed.
fn steps(tools: &[usize], success: bool, rng: &mut Rng) -> Vec<StepRecord> {
    let mut steps = Vec::new();
    for (n, &t) in tools.iter().enumerate() {
        let n = n as u32;
        if n.is_multiple_of(2) {
            steps.push(model_step(n));
        }
        let failed = rng.unit() < if success { 0.005 } else { 0.2 };
        steps.push(tool_step(n, t, rng, failed));
    }
    steps
}

/// One run; the planted sequence it holds, if any.
fn synth_run(i: usize, rng: &mut Rng) -> (RunRecord, Option<usize>) {
    let mut tools: Vec<usize> = (0..1 + rng.below(8)).map(|_| noise_tool(rng)).collect();
    let planted = plant(&mut tools, rng);
    let success = rng.unit() >= 0.05;
    let steps = steps(&tools, success, rng);
    let run = RunRecord {
        skill_version: "sha256:0".into(),
        task: format!("turn the notes {i} into a brief"),
        tier: "model".into(),
        failure_class: (!success).then(|| "ToolError".into()),
        failure_message: (!success).then(|| "a step failed".into()),
        context: json!({"folder": "notes"}),
        output: success.then(|| "Brief written to out/brief.md".into()),
        duration_us: 400_000,
        model_calls: i64::from(tools.len().div_ceil(2) as u32),
        origin: "bench".into(),
        steps,
        ..RunRecord::new(
            format!("skill-{}", i % 12),
            success,
            1_700_000_000 + i as i64,
        )
    };
    (run, planted)
}

fn bench_mine(c: &mut Criterion) {
    let runs: usize = std::env::var("FORGE_MINE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(&dir.path().join("bench.db")).expect("store");
    let planted_runs = synthesise(&store, runs);
    let config = MineConfig {
        max_candidates: 200,
        ..MineConfig::default()
    };
    let mine_once = || {
        black_box(mine::mine(&store, &config).expect("mine"));
    };
    let read_once = || {
        let mut bytes = 0usize;
        let n = store
            .for_each_tool_step(0, &mut |row| {
                bytes += row.tool.len() + row.detail_json.len()
            })
            .expect("read");
        black_box((n, bytes));
    };
    check_planted_found(&mine::mine(&store, &config).expect("mine"), planted_runs);

    // The ratio first, from the mean of a few passes each; then criterion's
    // own samples of both.
    let (tm, tr) = (mean_of_5(&mine_once), mean_of_5(&read_once));
    println!(
        "RATIO forge-mine: mining {runs} runs {tm:?} / reading their tool steps {tr:?} = {:.2}x",
        tm.as_secs_f64() / tr.as_secs_f64()
    );
    let mut g = c.benchmark_group("forge_mine_100k_runs");
    g.sample_size(10);
    g.bench_function("mine", |b| b.iter(mine_once));
    g.bench_function("baseline_read_tool_steps", |b| b.iter(read_once));
    g.finish();
}

fn mean_of_5(f: &dyn Fn()) -> Duration {
    let t = harness::call_times(5, f);
    t.iter().sum::<Duration>() / t.len() as u32
}

/// Records `runs` synthetic runs in batches; returns how many runs hold
/// each planted sequence.
fn synthesise(store: &SqliteStore, runs: usize) -> [u64; PLANTED.len()] {
    let mut rng = Rng(0x5eed);
    let mut planted_runs = [0u64; PLANTED.len()];
    let mut steps = 0;
    let started = Instant::now();
    for chunk in (0..runs).collect::<Vec<_>>().chunks(10_000) {
        let batch: Vec<RunRecord> = chunk
            .iter()
            .map(|&i| {
                let (run, planted) = synth_run(i, &mut rng);
                if let Some(p) = planted {
                    planted_runs[p] += 1;
                }
                steps += run.steps.len();
                run
            })
            .collect();
        store.record_runs(&batch).expect("insert");
    }
    println!(
        "synthesised {runs} runs ({steps} steps) in {:?}; planted in {planted_runs:?} runs",
        started.elapsed()
    );
    planted_runs
}

/// The planted sequences must be found, with at least their runs.
fn check_planted_found(report: &MineReport, planted_runs: [u64; PLANTED.len()]) {
    for ((seq, _), planted) in PLANTED.iter().zip(planted_runs) {
        let tools: Vec<&str> = seq.iter().map(|&t| TOOLS[t].0).collect();
        let rank = report
            .candidates
            .iter()
            .position(|c| c.tools == tools)
            .unwrap_or_else(|| panic!("planted {tools:?} not found"));
        let found = &report.candidates[rank];
        assert!(
            found.support >= planted,
            "{tools:?}: support {} < {planted} planted",
            found.support
        );
        println!(
            "planted {} found: rank {}, support {}, success {:.2}, steps saved {}",
            tools.join(" → "),
            rank + 1,
            found.support,
            found.success_rate,
            found.steps_saved
        );
    }
    println!(
        "{} candidates from {} runs, {} tool steps, {} distinct sequences, undercount bound {:?}",
        report.candidates.len(),
        report.runs,
        report.steps,
        report.sequences,
        report.undercount_bound
    );
}

criterion_group!(benches, bench_mine);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
