//! What the validation gate costs: `gate::check` of the bundled
//! email-writer handler with 50 cases in its `tests/cases.jsonl`, against
//! 50 plain calls of the same handler in the same sandbox, measured in the
//! same run. The gate runs every case twice (other clock and random
//! seeds), applies the skill's validators, and does its static checks,
//! the recorded-runs query and the report's write once. Prints
//! `RATIO gate: ...`.
//!
//! `cargo bench -p skillhost --bench gate` (release profile).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::{Map, Value};
use skillhost::config::Config;
use skillhost::exec::Runner;
use skillhost::gate::{self, Subject};
use skillhost::grants::Effective;
use skillhost::paths::Paths;
use skillhost::sandbox::{CallRequest, Entropy, FileRoots, Limits, Services};
use skillhost::skill::{Catalog, LoadOptions};

const CASES: usize = 50;
/// Best (least disturbed) of interleaved rounds.
const ROUNDS: usize = 5;

fn task(i: usize) -> String {
    format!("Write an email to Dana about the budget review, item {i}")
}

fn context() -> Map<String, Value> {
    let mut c = Map::new();
    c.insert("recipient".into(), "Dana".into());
    c.insert("sender".into(), "Sam".into());
    c
}

/// Copies the bundled email-writer into `root`, which a runner of
/// `paths` then lists.
fn copy_skill(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.join("tests")).expect("mkdir");
    for f in ["SKILL.md", "handler.wasm"] {
        std::fs::copy(from.join(f), to.join(f)).expect("copy");
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    runner: Runner,
    roots: FileRoots,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let bundled = skillhost::bundled::materialize(&home).expect("bundled skills");
        let skills = dir.path().join("skills");
        let skill_dir = skills.join("email-writer");
        copy_skill(&bundled.join("email-writer"), &skill_dir);
        let paths = Paths {
            home,
            workspace: dir.path().join("ws"),
            bundled: None,
            extra_skills: vec![skills],
            cache_override: Some(harness::cache_dir()),
            workspace_origin: Default::default(),
        };
        std::fs::create_dir_all(&paths.workspace).expect("mkdir");
        let catalog = Catalog::load(&paths.roots(), &LoadOptions::default());
        let runner = Runner::new(paths.clone(), Config::default(), catalog);
        let roots = FileRoots {
            skill_dir: skill_dir.clone(),
            workspace: paths.workspace.clone(),
            skill_files: Vec::new(),
            control: Default::default(),
        };
        Setup {
            _dir: dir,
            runner,
            roots,
        }
    }

    fn handler(&self) -> skillhost::sandbox::Handler {
        let catalog = self.runner.catalog();
        let skill = catalog.get("email-writer").expect("email-writer");
        let wasm = std::fs::read(skill.dir.join("handler.wasm")).expect("handler");
        self.runner
            .sandbox()
            .expect("sandbox")
            .load(&wasm)
            .expect("load")
    }

    /// One plain call: what a run's tier 1 does in the sandbox.
    async fn call(&self, handler: &skillhost::sandbox::Handler, task: &str) -> String {
        let context = context();
        let out = self
            .runner
            .sandbox()
            .expect("sandbox")
            .call(
                handler,
                &CallRequest {
                    skill: "email-writer",
                    description: task,
                    context: &context,
                    grants: &Effective::none(),
                    limits: Limits::default(),
                    roots: &self.roots,
                    services: Services::default(),
                    entropy: Entropy::Host,
                },
            )
            .await;
        out.result.expect("an email").body
    }
}

fn bench_gate(c: &mut Criterion) {
    let setup = Setup::new();
    let rt = harness::runtime();
    let handler = setup.handler();
    write_cases(&setup, &rt, &handler);
    let subject = Subject::catalog(&setup.runner, "email-writer").expect("subject");

    let gate_once = || {
        let (_, report) = rt
            .block_on(gate::check(&setup.runner, &subject))
            .expect("gate");
        assert!(report.passed(), "{report:#?}");
        assert_eq!(report.cases.len(), CASES);
        black_box(report);
    };
    let plain_calls = || {
        rt.block_on(async {
            for i in 0..CASES {
                black_box(setup.call(&handler, &task(i)).await);
            }
        })
    };
    gate_once();
    plain_calls();

    let [tg, tp] = best_means([&gate_once, &plain_calls]);
    println!(
        "RATIO gate: gate of email-writer with {CASES} cases {tg:?} / {CASES} plain calls {tp:?} = {:.2}x",
        tg.as_secs_f64() / tp.as_secs_f64()
    );

    let mut g = c.benchmark_group("gate_email_writer");
    g.sample_size(10);
    g.bench_function("gate_50_cases", |b| b.iter(gate_once));
    g.bench_function("plain_50_calls", |b| b.iter(plain_calls));
    g.finish();
}

/// The cases: each task with the handler's own answer, so every case
/// passes and the gate does all of its work.
fn write_cases(setup: &Setup, rt: &tokio::runtime::Runtime, handler: &skillhost::sandbox::Handler) {
    let lines: Vec<String> = (0..CASES)
        .map(|i| {
            let body = rt.block_on(setup.call(handler, &task(i)));
            serde_json::json!({ "task": task(i), "context": context(), "output": body }).to_string()
        })
        .collect();
    let skill_dir = setup.roots.skill_dir.clone();
    std::fs::write(skill_dir.join("tests/cases.jsonl"), lines.join("\n")).expect("cases");
}

/// Each call's best (least disturbed) mean of three, over `ROUNDS`
/// interleaved rounds.
fn best_means<const N: usize>(calls: [&dyn Fn(); N]) -> [Duration; N] {
    let mut best = [Duration::MAX; N];
    for _ in 0..ROUNDS {
        for (call, best) in calls.iter().zip(&mut best) {
            *best = (*best).min(mean_of_3(*call));
        }
    }
    best
}

/// The mean time of three calls of `f`.
fn mean_of_3(f: &dyn Fn()) -> Duration {
    let t = Instant::now();
    for _ in 0..3 {
        f();
    }
    t.elapsed() / 3
}

criterion_group!(benches, bench_gate);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
