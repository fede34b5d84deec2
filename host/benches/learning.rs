//! Learning benchmarks, each with a baseline from the same run:
//! - a learning cycle over 100,000 recorded runs vs reading those runs;
//! - what the writer reads for an automatic cycle (every `auto_every`
//!   runs, over the default window) vs storing the runs between two;
//! - prevention with 1,000 rules per task vs with 1 rule.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::{Map, Value, json};
use skillhost::learn::condition::{Condition, Op};
use skillhost::learn::cycle::{self, Thresholds};
use skillhost::learn::patterns::Library;
use skillhost::learn::rules::{Action, Kind, Origin, Rule, RuleSet};
use skillhost::learn::{Learning, RuleFilter};
use skillhost::store::{RunLog, RunRecord, SqliteStore};

const CLASSES: [&str; 5] = [
    "TimezoneError",
    "SpamTriggerError",
    "AttachmentError",
    "FormatError",
    "WeirdError",
];

fn run(i: usize) -> RunRecord {
    let failed = i.is_multiple_of(3);
    RunRecord {
        id: 0,
        at: i as i64,
        skill: format!("skill-{}", i % 20),
        skill_version: "sha256:0".into(),
        task: format!("task number {i} at 3pm"),
        tier: "model".into(),
        success: !failed,
        failure_class: failed.then(|| CLASSES[i % CLASSES.len()].to_owned()),
        failure_message: failed.then(|| "failed".to_owned()),
        context: json!({"timezone": ""}),
        output: (!failed).then(|| "Subject: ok".to_owned()),
        duration_us: 10,
        model_calls: 1,
        origin: "bench".into(),
        steps: vec![],
        rules_applied: vec![],
    }
}

fn rule(i: usize) -> Rule {
    Rule::new(
        format!("prevent-{i}"),
        Kind::Prevention,
        "X",
        "*",
        vec![
            Condition {
                field: "task.description".into(),
                op: Op::Matches,
                value: json!(format!("(?i)\\bword{i}\\b")),
                not: false,
            },
            Condition {
                field: "context.timezone".into(),
                op: Op::Missing,
                value: Value::Null,
                not: false,
            },
        ],
        vec![Action::AddInstruction {
            text: format!("rule {i}"),
        }],
        Origin::default(),
    )
}

fn bench_cycle(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(&dir.path().join("bench.db")).expect("store");
    let runs: Vec<RunRecord> = (0..100_000).map(run).collect();
    store.record_runs(&runs).expect("insert");
    let lib = Library::shipped().expect("patterns");
    let t = Thresholds {
        window: 100_000,
        ..Thresholds::default()
    };
    let cycle_once = || {
        let groups = store.failure_groups(t.window).expect("groups");
        let mut rules = RuleSet::default();
        black_box(cycle::run(&groups, &|_: &str| lib.clone(), &mut rules, &t));
    };
    let read_once = || {
        black_box(store.all_runs().expect("runs").len());
    };
    let mut g = c.benchmark_group("learning_cycle_100k_runs");
    g.sample_size(10);
    g.bench_function("cycle", |b| b.iter(cycle_once));
    g.bench_function("baseline_read_all_runs", |b| b.iter(read_once));
    g.finish();
    let time = |f: &dyn Fn(), n: u32| {
        let s = Instant::now();
        for _ in 0..n {
            f();
        }
        s.elapsed() / n
    };
    let tc = time(&cycle_once, 5);
    let tr = time(&read_once, 5);
    println!(
        "RATIO cycle: learning cycle over 100,000 runs {tc:?} / reading them {tr:?} = {:.2}x",
        tc.as_secs_f64() / tr.as_secs_f64()
    );
}

/// The automatic cycle's read of the store (`failure_groups` over the
/// default window, in a store four windows deep) against storing the
/// `auto_every` runs it follows in one transaction, as the writer does:
/// with every run a success, and with one in three failed.
fn bench_auto_cycle(_c: &mut Criterion) {
    let t = Thresholds::default();
    let every = skillhost::learn::LearningConfig::default().auto_every as usize;
    for (name, failing) in [("no failures", false), ("1 in 3 failed", true)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SqliteStore::open(&dir.path().join("bench.db")).expect("store");
        let make = |i: usize| {
            let mut r = run(i);
            if !failing {
                r.success = true;
                r.failure_class = None;
            }
            r
        };
        let runs: Vec<RunRecord> = (0..4 * t.window).map(make).collect();
        store.record_runs(&runs).expect("insert");
        let batch: Vec<RunRecord> = (0..every).map(make).collect();
        let (mut read, mut write) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            let s = Instant::now();
            black_box(store.failure_groups(t.window).expect("groups"));
            read.push(s.elapsed());
            let s = Instant::now();
            store.record_runs(&batch).expect("store");
            write.push(s.elapsed());
        }
        read.sort();
        write.sort();
        let (r, w) = (read[read.len() / 2], write[write.len() / 2]);
        println!(
            "RATIO auto-cycle ({name}): reading a {}-run window {r:?} / storing the {every} runs between cycles {w:?} = {:.2}x",
            t.window,
            r.as_secs_f64() / w.as_secs_f64()
        );
    }
}

fn bench_rules(c: &mut Criterion) {
    let make = |n: usize| {
        let set = RuleSet {
            rules: (0..n).map(rule).collect(),
        };
        Learning::from_set(set, RuleFilter::All).0
    };
    let many = make(1000);
    let one = make(1);
    let mut g = c.benchmark_group("prevention_per_task");
    g.bench_function("1000_rules", |b| b.iter(|| apply(&many)));
    g.bench_function("1_rule", |b| b.iter(|| apply(&one)));
    g.finish();
    let time = |l: &Learning| {
        let n = 2000;
        let s = Instant::now();
        for _ in 0..n {
            apply(l);
        }
        s.elapsed() / n
    };
    let (tm, t1): (Duration, Duration) = (time(&many), time(&one));
    println!(
        "RATIO rules: 1,000 rules {tm:?} per task / 1 rule {t1:?} = {:.0}x ({:?} per rule)",
        tm.as_secs_f64() / t1.as_secs_f64(),
        tm / 1000
    );
}

/// Prevention for one task, whose context lacks the time zone.
fn apply(l: &Learning) {
    let mut ctx = Map::new();
    ctx.insert("timezone".into(), json!(""));
    let mut instr = Vec::new();
    black_box(l.prevent(
        "email-writer",
        "Write to Dana about word500 at 3pm",
        &mut ctx,
        &mut instr,
        &skillhost::learn::rules::Setting::default(),
    ));
}

criterion_group!(benches, bench_cycle, bench_auto_cycle, bench_rules);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
