//! Ablation as a command: train on one task stream, learn rules, then run
//! the same evaluation stream under three arms (no rules, prevention only,
//! all rules) through the real run pipeline, per seed, and report success
//! with 95% intervals, failures by class, rules learned and applied, and
//! model calls per task.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::Map;

use super::simulated::SimulatedEmailModel;
use crate::config::Config;
use crate::exec::{Extras, Runner};
use crate::learn::cycle::{self, Thresholds};
use crate::learn::patterns::Library;
use crate::learn::rules::RuleSet;
use crate::learn::{Learning, RuleFilter};
use crate::llm::Provider;
use crate::paths::Paths;
use crate::skill::Catalog;
use crate::types::FailureClass;

pub const SKILL: &str = "email-writer";

#[derive(Clone)]
pub struct Options {
    pub train: usize,
    pub eval: usize,
    pub seeds: u64,
    /// Replaces the generated evaluation tasks.
    pub eval_tasks: Option<Vec<String>>,
    /// A real model instead of the simulated one.
    pub model: Option<Arc<dyn Provider>>,
    /// Told the number of seeds finished after each one (a caller's
    /// progress display; the library prints nothing).
    pub on_seed: Option<Arc<dyn Fn(u64) + Send + Sync>>,
}

#[derive(Debug, thiserror::Error)]
pub enum AblationError {
    #[error("the {SKILL} skill is not in the catalog")]
    NoSkill,
    #[error("cannot use a scratch folder {path}: {source}")]
    Scratch {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("run failed")]
    Run(#[from] crate::exec::RunError),
    #[error("store: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("store unavailable")]
    StoreUnavailable(#[source] crate::store::StoreError),
}

#[derive(Debug, Clone, Serialize)]
pub struct ArmResult {
    pub arm: RuleFilter,
    pub tasks: usize,
    pub succeeded: usize,
    pub success_rate: f64,
    pub failures_by_class: BTreeMap<FailureClass, u64>,
    pub model_calls_per_task: f64,
    pub rules_applied: u64,
    /// The first few failures: task, class and message.
    pub sample_failures: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeedResult {
    pub seed: u64,
    pub rules_learned: Vec<String>,
    pub arms: Vec<ArmResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArmSummary {
    pub arm: RuleFilter,
    pub mean_success: f64,
    pub ci95: (f64, f64),
    pub failures_by_class: BTreeMap<FailureClass, u64>,
    pub model_calls_per_task: f64,
    pub rules_applied: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scenario: &'static str,
    pub model: String,
    pub train: usize,
    pub eval: usize,
    pub seeds: Vec<SeedResult>,
    pub summary: Vec<ArmSummary>,
    pub seconds: f64,
}

const ARMS: [RuleFilter; 3] = [
    RuleFilter::None,
    RuleFilter::PreventionOnly,
    RuleFilter::All,
];

/// A small deterministic generator (SplitMix64), for scenarios and
/// benchmarks that must be the same from run to run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// Email requests where a time, spam words and an attachment each appear
/// in about a third of the tasks.
pub fn generate_tasks(seed: u64, n: usize) -> Vec<String> {
    const PEOPLE: &[&str] = &[
        "Dana",
        "the team",
        "Marco",
        "our customers",
        "Priya",
        "the board",
        "Sam",
        "the vendor",
    ];
    const TOPICS: &[&str] = &[
        "the quarterly budget review",
        "the product launch",
        "next week's workshop",
        "the hiring plan",
        "the office move",
        "the pricing update",
        "the support backlog",
        "the partner summit",
    ];
    const INTENTS: &[&str] = &[
        "Write an email to {p} about {t}",
        "Draft a short email to {p} regarding {t}",
        "Email {p} about {t}",
        "Compose a message to {p} on {t}",
    ];
    const TIMES: &[&str] = &["at 3pm", "at 10:30", "at noon", "at 9 a.m.", "at 4:15 pm"];
    const SPAM: &[&str] = &[
        "our free upgrade",
        "an urgent change",
        "an exclusive preview",
        "a free trial",
    ];
    const ATTACH: &[&str] = &[
        "and attach the report",
        "with the document attached",
        "and include the file",
        "attaching the slides",
    ];
    let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5eed);
    (0..n)
        .map(|_| {
            let mut t = rng
                .pick(INTENTS)
                .replace("{p}", rng.pick(PEOPLE))
                .replace("{t}", rng.pick(TOPICS));
            if rng.chance(1.0 / 3.0) {
                t = format!("{t} {}", rng.pick(TIMES));
            }
            if rng.chance(1.0 / 3.0) {
                t = format!("{t}, mentioning {}", rng.pick(SPAM));
            }
            if rng.chance(1.0 / 3.0) {
                t = format!("{t} {}", rng.pick(ATTACH));
            }
            t
        })
        .collect()
}

/// 95% interval of the mean of `xs` (Student's t), for a rate: clamped
/// to [0, 1].
pub fn ci95(xs: &[f64]) -> (f64, f64, f64) {
    let (mean, lo, hi) = mean_interval(xs);
    (mean, lo.max(0.0), hi.min(1.0))
}

/// 95% interval of the mean of `xs` (Student's t), unclamped.
pub fn mean_interval(xs: &[f64]) -> (f64, f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, mean, mean);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    let t = T.get(n - 2).copied().unwrap_or(1.96);
    let half = t * (var / n as f64).sqrt();
    (mean, mean - half, mean + half)
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the email scenario. `paths.home` and the catalog provide the
/// bundled `email-writer`; each seed gets a scratch workspace.
pub async fn run_email(
    paths: &Paths,
    catalog: Arc<Catalog>,
    config: &Config,
    opts: &Options,
) -> Result<Report, AblationError> {
    if catalog.get(SKILL).is_none() {
        return Err(AblationError::NoSkill);
    }
    let started = Instant::now();
    let mut seeds = Vec::new();
    for seed in 0..opts.seeds {
        let dir =
            std::env::temp_dir().join(format!("skillhost-ablation-{}-{seed}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|source| AblationError::Scratch {
            path: dir.clone(),
            source,
        })?;
        let _cleanup = Scratch(dir.clone());
        let scratch = Paths {
            workspace: dir,
            ..paths.clone()
        };
        let model = |salt: u64| -> Arc<dyn Provider> {
            match &opts.model {
                Some(m) => m.clone(),
                None => Arc::new(SimulatedEmailModel::new(
                    seed.wrapping_mul(1000).wrapping_add(salt),
                )),
            }
        };

        // Train: record every run, no rules, then one learning cycle.
        let mut train_cfg = config.clone();
        train_cfg.learning.record = true;
        train_cfg.learning.auto_every = 0;
        let trainer = Runner::with_catalog(
            scratch.clone(),
            train_cfg,
            catalog.clone(),
            Extras {
                provider: Some(model(1)),
                prefer_model: true,
                ..Extras::default()
            },
        );
        for task in generate_tasks(seed * 2 + 1, opts.train) {
            run_one(&trainer, &task).await?;
        }
        let store = trainer.store().map_err(AblationError::StoreUnavailable)?;
        let groups = store.failure_groups(Thresholds::default().window)?;
        let library = Library::shipped().unwrap_or_default();
        let mut rules = RuleSet::default();
        cycle::run(
            &groups,
            &|_: &str| library.clone(),
            &mut rules,
            &config.learning.thresholds,
        );
        rules.sort();

        // Evaluate the same stream under each arm.
        let eval_tasks = opts
            .eval_tasks
            .clone()
            .unwrap_or_else(|| generate_tasks(seed * 2 + 2, opts.eval));
        let mut arms = Vec::new();
        for arm in ARMS {
            let (learning, _) = Learning::from_set(rules.clone(), arm);
            let mut eval_cfg = config.clone();
            eval_cfg.learning.record = false;
            let runner = Runner::with_catalog(
                scratch.clone(),
                eval_cfg,
                catalog.clone(),
                Extras {
                    provider: Some(model(2)),
                    prefer_model: true,
                    learning: Some(Arc::new(learning)),
                },
            );
            let mut failures = BTreeMap::new();
            let (mut ok, mut calls, mut applied) = (0usize, 0u64, 0u64);
            let mut samples = Vec::new();
            for task in &eval_tasks {
                let o = run_one(&runner, task).await?;
                calls += u64::from(o.model_calls);
                applied += o.rules_applied.len() as u64;
                match &o.failure {
                    None => ok += 1,
                    Some(f) => {
                        *failures.entry(f.class.clone()).or_insert(0) += 1;
                        if samples.len() < 5 {
                            samples.push(format!("{task} -> {}: {}", f.class, f.message));
                        }
                    }
                }
            }
            let n = eval_tasks.len().max(1);
            arms.push(ArmResult {
                arm,
                tasks: eval_tasks.len(),
                succeeded: ok,
                success_rate: ok as f64 / n as f64,
                failures_by_class: failures,
                model_calls_per_task: calls as f64 / n as f64,
                rules_applied: applied,
                sample_failures: samples,
            });
        }
        seeds.push(SeedResult {
            seed,
            rules_learned: rules.rules.iter().map(|r| r.id.clone()).collect(),
            arms,
        });
        if let Some(on_seed) = &opts.on_seed {
            on_seed(seed + 1);
        }
    }
    let summary = ARMS
        .iter()
        .enumerate()
        .map(|(i, arm)| {
            let rates: Vec<f64> = seeds.iter().map(|s| s.arms[i].success_rate).collect();
            let (mean, lo, hi) = ci95(&rates);
            let mut failures = BTreeMap::new();
            for s in &seeds {
                for (k, v) in &s.arms[i].failures_by_class {
                    *failures.entry(k.clone()).or_insert(0) += v;
                }
            }
            let calls = seeds
                .iter()
                .map(|s| s.arms[i].model_calls_per_task)
                .sum::<f64>()
                / seeds.len().max(1) as f64;
            ArmSummary {
                arm: *arm,
                mean_success: mean,
                ci95: (lo, hi),
                failures_by_class: failures,
                model_calls_per_task: calls,
                rules_applied: seeds.iter().map(|s| s.arms[i].rules_applied).sum(),
            }
        })
        .collect();
    Ok(Report {
        scenario: "email",
        model: opts
            .model
            .as_ref()
            .map(|m| m.name())
            .unwrap_or_else(|| "simulated-email (test device; see eval::simulated)".into()),
        train: opts.train,
        eval: opts.eval_tasks.as_ref().map(Vec::len).unwrap_or(opts.eval),
        seeds,
        summary,
        seconds: started.elapsed().as_secs_f64(),
    })
}

async fn run_one(runner: &Runner, task: &str) -> Result<crate::exec::RunOutcome, AblationError> {
    let catalog = runner.catalog();
    let skill = catalog.get(SKILL).ok_or(AblationError::NoSkill)?;
    Ok(runner
        .run_skill(skill, "ablation".into(), task, &Map::new(), Instant::now())
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tasks_are_deterministic_with_each_feature_in_about_a_third() {
        let a = generate_tasks(3, 600);
        assert_eq!(a, generate_tasks(3, 600));
        assert_ne!(a, generate_tasks(4, 600));
        let share = |needle: &[&str]| {
            a.iter()
                .filter(|t| needle.iter().any(|n| t.contains(n)))
                .count() as f64
                / 600.0
        };
        for s in [
            share(&["3pm", "10:30", "noon", "9 a.m.", "4:15"]),
            share(&["free", "urgent", "exclusive"]),
            share(&["attach", "document", "file"]),
        ] {
            assert!((s - 1.0 / 3.0).abs() < 0.07, "{s}");
        }
    }

    #[test]
    fn interval_of_the_mean() {
        let (m, lo, hi) = ci95(&[0.7, 0.8, 0.75, 0.65, 0.8]);
        assert!((m - 0.74).abs() < 1e-9);
        assert!(lo < m && m < hi && (hi - m - (m - lo)).abs() < 1e-9);
        let (_, _, hi) = ci95(&[0.9, 1.0, 1.0]);
        assert!(hi <= 1.0);
    }
}
