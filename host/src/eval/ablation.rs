//! Ablation as a command: train on one task stream, learn rules, then run
//! the same evaluation stream under four arms through the real run
//! pipeline, per seed: no rules (baseline), retry-only (no rules; an
//! answer the validators refuse is asked for once more with the same
//! prompt), prevention rules only, and all rules. The all-rules arm is
//! worth what it beats retry-only by.
//!
//! Success is judged twice: by the skill's validators (what the host
//! sees), and by ground truth (the mistakes the simulated model really
//! made, from a side channel only this harness reads). Their gap, per
//! class, is the validators' miss rate. Retries whose prompt is
//! byte-identical to the first attempt's are counted: a remedy that adds
//! nothing is only a second draw.
//!
//! Scenarios: `email` (the bundled email-writer; rules from the shipped
//! patterns) and `support` (a support-reply skill shipped with the
//! scenario, whose classes no pattern knows: rules come only from a model
//! proposal replayed over the recorded runs, for failures a validator saw
//! or a person marked with `runs mark`, which the harness does by ground
//! truth, as a user reviewing the training answers would).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use serde_json::Map;

use super::simulated::{SimulatedEmailModel, Truth, TruthLog};
use super::simulated_support::{SimulatedProposer, SimulatedSupportModel};
use crate::config::Config;
use crate::exec::{Extras, Runner};
use crate::learn::condition::Facts;
use crate::learn::cycle::{self, Thresholds};
use crate::learn::patterns::Library;
use crate::learn::rules::RuleSet;
use crate::learn::{Learning, RuleFilter};
use crate::llm::{ChatRequest, ChatResponse, LlmError, Message, Provider};
use crate::paths::Paths;
use crate::skill::{Catalog, LoadOptions, Root, Source};
use crate::types::{BoxFuture, FailureClass};

pub const SKILL: &str = "email-writer";

/// Which scenario an ablation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    Email,
    Support,
}

impl Scenario {
    pub const ALL: [Scenario; 2] = [Scenario::Email, Scenario::Support];

    pub fn parse(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Email => "email",
            Scenario::Support => "support",
        }
    }

    pub fn skill(self) -> &'static str {
        match self {
            Scenario::Email => SKILL,
            Scenario::Support => super::simulated_support::SKILL,
        }
    }

    fn classes(self) -> &'static [&'static str] {
        match self {
            Scenario::Email => &super::simulated::CLASSES,
            Scenario::Support => &super::simulated_support::CLASSES,
        }
    }

    fn tasks(self, seed: u64, n: usize) -> Vec<String> {
        match self {
            Scenario::Email => generate_tasks(seed, n),
            Scenario::Support => super::simulated_support::generate_tasks(seed, n),
        }
    }

    fn model(self, seed: u64, truth: TruthLog) -> Arc<dyn Provider> {
        match self {
            Scenario::Email => Arc::new(SimulatedEmailModel::new(seed).with_truth(truth)),
            Scenario::Support => Arc::new(SimulatedSupportModel::new(seed).with_truth(truth)),
        }
    }
}

#[derive(Clone)]
pub struct Options {
    pub scenario: Scenario,
    pub train: usize,
    pub eval: usize,
    pub seeds: u64,
    /// Replaces the generated evaluation tasks.
    pub eval_tasks: Option<Vec<String>>,
    /// A real model instead of the simulated one (no ground truth then).
    pub model: Option<Arc<dyn Provider>>,
    /// Told the number of seeds finished after each one (a caller's
    /// progress display; the library prints nothing).
    pub on_seed: Option<Arc<dyn Fn(u64) + Send + Sync>>,
}

#[derive(Debug, thiserror::Error)]
pub enum AblationError {
    #[error("the {0} skill is not in the catalog")]
    NoSkill(&'static str),
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
    #[error("learning: {0}")]
    Learn(#[from] crate::learn::cycle::LearnError),
    #[error("rules: {0}")]
    Rules(#[from] crate::learn::rules::RulesError),
}

/// Per class: answers that really had the mistake, how many of those the
/// class's validators missed, and answers they flagged without it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClassTruth {
    pub mistakes: u64,
    pub missed: u64,
    pub false_alarms: u64,
}

impl ClassTruth {
    /// Share of real mistakes the validators did not flag.
    pub fn miss_rate(&self) -> f64 {
        if self.mistakes == 0 {
            0.0
        } else {
            self.missed as f64 / self.mistakes as f64
        }
    }

    fn add(&mut self, other: &ClassTruth) {
        self.mistakes += other.mistakes;
        self.missed += other.missed;
        self.false_alarms += other.false_alarms;
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ArmResult {
    pub arm: RuleFilter,
    pub tasks: usize,
    /// Judged by the skill's validators.
    pub succeeded: usize,
    pub success_rate: f64,
    /// Judged by ground truth: an answer was delivered and it has none of
    /// the mistakes the model really made (None: no ground truth, a real
    /// model).
    pub truth_succeeded: Option<usize>,
    pub truth_success_rate: Option<f64>,
    pub failures_by_class: BTreeMap<FailureClass, u64>,
    /// Ground truth on every final answer (delivered or refused), by class.
    pub truth_by_class: BTreeMap<String, ClassTruth>,
    pub model_calls_per_task: f64,
    pub rules_applied: u64,
    /// Runs tried a second time, and how many of those second prompts
    /// were byte-identical to the first.
    pub retries: u64,
    pub identical_retries: u64,
    /// The first few failures: task, class and message.
    pub sample_failures: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeedResult {
    pub seed: u64,
    pub rules_learned: Vec<String>,
    /// Training runs the harness marked failed (`runs mark`), by ground
    /// truth, because no validator had failed them.
    pub runs_marked: u64,
    pub arms: Vec<ArmResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArmSummary {
    pub arm: RuleFilter,
    pub mean_success: f64,
    pub ci95: (f64, f64),
    pub mean_truth_success: Option<f64>,
    pub truth_ci95: Option<(f64, f64)>,
    pub failures_by_class: BTreeMap<FailureClass, u64>,
    pub truth_by_class: BTreeMap<String, ClassTruth>,
    pub model_calls_per_task: f64,
    pub rules_applied: u64,
    pub retries: u64,
    pub identical_retries: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scenario: &'static str,
    pub model: String,
    pub train: usize,
    pub eval: usize,
    pub seeds: Vec<SeedResult>,
    pub summary: Vec<ArmSummary>,
    /// The rules of the last seed, with their origin (for the report),
    /// and the training runs the harness marked failed in that seed.
    pub last_rules: Vec<crate::learn::rules::Rule>,
    pub last_marked: Vec<i64>,
    pub seconds: f64,
}

pub const ARMS: [RuleFilter; 4] = [
    RuleFilter::None,
    RuleFilter::RetryOnly,
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

/// Passes requests on and keeps a copy of each: the harness compares a
/// retry's prompt with the first attempt's.
struct Recording {
    inner: Arc<dyn Provider>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl Recording {
    fn take(&self) -> Vec<ChatRequest> {
        std::mem::take(&mut *self.requests.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Provider for Recording {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(req.clone());
        self.inner.chat(req)
    }
}

/// Retries in one run's requests, and how many repeat the first attempt's
/// prompt byte for byte. An attempt starts with a request holding only the
/// task (later requests of the same attempt carry the model's turns).
pub fn identical_retries(requests: &[ChatRequest]) -> (u64, u64) {
    let starts: Vec<&ChatRequest> = requests
        .iter()
        .filter(|r| r.messages.len() == 1 && matches!(r.messages[0], Message::User(_)))
        .collect();
    let Some((first, rest)) = starts.split_first() else {
        return (0, 0);
    };
    let same = rest.iter().filter(|r| *r == first).count() as u64;
    (rest.len() as u64, same)
}

/// The scenario's skill, and the catalog it runs from: the bundled
/// email-writer, or the support-reply skill written into `workspace`.
fn scenario_catalog(
    scenario: Scenario,
    catalog: Arc<Catalog>,
    workspace: &std::path::Path,
) -> Result<Arc<Catalog>, AblationError> {
    let catalog = match scenario {
        Scenario::Email => catalog,
        Scenario::Support => {
            let dir = workspace.join("scenario-skills");
            let skill = dir.join(super::simulated_support::SKILL);
            let scratch = |source| AblationError::Scratch {
                path: skill.clone(),
                source,
            };
            std::fs::create_dir_all(&skill).map_err(scratch)?;
            std::fs::write(skill.join("SKILL.md"), super::simulated_support::SKILL_MD)
                .map_err(scratch)?;
            Arc::new(Catalog::load(
                &[Root::new(dir, Source::Workspace)],
                &LoadOptions::default(),
            ))
        }
    };
    if catalog.get(scenario.skill()).is_none() {
        return Err(AblationError::NoSkill(scenario.skill()));
    }
    Ok(catalog)
}

/// Runs `opts.scenario`. For `email`, `paths.home` and the catalog provide
/// the bundled `email-writer`; each seed gets a scratch workspace.
pub async fn run(
    paths: &Paths,
    catalog: Arc<Catalog>,
    config: &Config,
    opts: &Options,
) -> Result<Report, AblationError> {
    let scenario = opts.scenario;
    let started = Instant::now();
    let mut seeds = Vec::new();
    let mut last_rules = Vec::new();
    let mut last_marked = Vec::new();
    for seed in 0..opts.seeds {
        let dir = std::env::temp_dir().join(format!(
            "skillhost-ablation-{}-{}-{seed}",
            scenario.name(),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|source| AblationError::Scratch {
            path: dir.clone(),
            source,
        })?;
        let _cleanup = Scratch(dir.clone());
        let scratch = Paths {
            workspace: dir.clone(),
            ..paths.clone()
        };
        let catalog = scenario_catalog(scenario, catalog.clone(), &dir)?;
        let truth = TruthLog::default();
        let model = |salt: u64| -> Arc<dyn Provider> {
            match &opts.model {
                Some(m) => m.clone(),
                None => scenario.model(seed.wrapping_mul(1000).wrapping_add(salt), truth.clone()),
            }
        };
        let has_truth = opts.model.is_none();

        // Train: record every run, no rules.
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
        let mut marks = Vec::new();
        for task in scenario.tasks(seed * 2 + 1, opts.train) {
            let o = run_one(&trainer, scenario, &task).await?;
            let made = last_truth(&truth);
            // A person reviewing the answers marks the ones with a mistake
            // no validator failed (only for the scenario whose classes
            // have no pattern: there, feedback is how rules start).
            if scenario == Scenario::Support
                && o.failure.is_none()
                && let (Some(id), Some(made)) = (o.run_id, made)
                && let Some(class) = made.mistakes.first()
            {
                marks.push((id, *class));
            }
        }
        let store = trainer.store().map_err(AblationError::StoreUnavailable)?;
        for (id, class) in &marks {
            store.mark_run(
                *id,
                &crate::store::Verdict {
                    ok: false,
                    class: Some((*class).to_owned()),
                    note: Some("marked by the ablation harness from ground truth".into()),
                    at: 0,
                },
            )?;
        }
        let mut rules = match scenario {
            Scenario::Email => {
                let groups = store.failure_groups(Thresholds::default().window)?;
                let library = Library::shipped().unwrap_or_default();
                let mut rules = RuleSet::default();
                cycle::run(
                    &groups,
                    &|_: &str| library.clone(),
                    &mut rules,
                    &config.learning.thresholds,
                );
                rules
            }
            Scenario::Support => {
                // The real learning cycle, with the simulated proposer as
                // the configured model (or the real one).
                let proposer: Arc<dyn Provider> = match &opts.model {
                    Some(m) => m.clone(),
                    None => Arc::new(SimulatedProposer),
                };
                let mut learning = config.learning.clone();
                learning.proposals.enabled = true;
                cycle::learn_from_store(
                    store,
                    &scratch,
                    &catalog,
                    &learning,
                    Some(proposer.as_ref()),
                )
                .await?;
                RuleSet::load(&crate::learn::rules_path(&scratch.state_dir()))?
            }
        };
        rules.sort();
        truth.lock().unwrap_or_else(|p| p.into_inner()).clear();

        // Evaluate the same stream under each arm.
        let eval_tasks = opts
            .eval_tasks
            .clone()
            .unwrap_or_else(|| scenario.tasks(seed * 2 + 2, opts.eval));
        let skill = catalog
            .get(scenario.skill())
            .ok_or(AblationError::NoSkill(scenario.skill()))?;
        let (validators, _) = crate::learn::validators(&skill.meta.skillhost.validators);
        let mut arms = Vec::new();
        for arm in ARMS {
            let (learning, _) = Learning::from_set(rules.clone(), arm);
            let mut eval_cfg = config.clone();
            eval_cfg.learning.record = false;
            let recording = Arc::new(Recording {
                inner: model(2),
                requests: Mutex::new(Vec::new()),
            });
            let runner = Runner::with_catalog(
                scratch.clone(),
                eval_cfg,
                catalog.clone(),
                Extras {
                    provider: Some(recording.clone()),
                    prefer_model: true,
                    learning: Some(Arc::new(learning)),
                    store: None,
                },
            );
            let mut failures = BTreeMap::new();
            let mut by_class: BTreeMap<String, ClassTruth> = scenario
                .classes()
                .iter()
                .map(|c| ((*c).to_owned(), ClassTruth::default()))
                .collect();
            let (mut ok, mut truth_ok, mut calls, mut applied) = (0usize, 0usize, 0u64, 0u64);
            let (mut retries, mut identical) = (0u64, 0u64);
            let mut samples = Vec::new();
            for task in &eval_tasks {
                recording.take();
                let o = run_one(&runner, scenario, task).await?;
                let reqs = recording.take();
                let (r, same) = identical_retries(&reqs);
                retries += r;
                identical += same;
                calls += u64::from(o.model_calls);
                applied += o.rules_applied.len() as u64;
                let made = last_truth(&truth);
                let answer = o
                    .output
                    .as_ref()
                    .map(|x| x.body.as_str())
                    .or(o.rejected_output.as_deref());
                if let (Some(made), Some(answer)) = (&made, answer) {
                    let facts = Facts {
                        task,
                        skill: scenario.skill(),
                        context: &o.context,
                        output: Some(answer),
                        failure: None,
                    };
                    for (class, t) in by_class.iter_mut() {
                        let really = made.mistakes.contains(&class.as_str());
                        let flagged = validators
                            .iter()
                            .any(|v| &v.class == class && v.fails(&facts));
                        t.mistakes += u64::from(really);
                        t.missed += u64::from(really && !flagged);
                        t.false_alarms += u64::from(!really && flagged);
                    }
                }
                match &o.failure {
                    None => {
                        ok += 1;
                        if made.is_some_and(|m| m.mistakes.is_empty()) {
                            truth_ok += 1;
                        }
                    }
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
                truth_succeeded: has_truth.then_some(truth_ok),
                truth_success_rate: has_truth.then_some(truth_ok as f64 / n as f64),
                failures_by_class: failures,
                truth_by_class: if has_truth { by_class } else { BTreeMap::new() },
                model_calls_per_task: calls as f64 / n as f64,
                rules_applied: applied,
                retries,
                identical_retries: identical,
                sample_failures: samples,
            });
        }
        seeds.push(SeedResult {
            seed,
            rules_learned: rules
                .rules
                .iter()
                .filter(|r| r.enabled && !r.rejected)
                .map(|r| r.id.clone())
                .collect(),
            runs_marked: marks.len() as u64,
            arms,
        });
        last_rules = rules.rules;
        last_marked = marks.iter().map(|(id, _)| *id).collect();
        if let Some(on_seed) = &opts.on_seed {
            on_seed(seed + 1);
        }
    }
    let summary = ARMS
        .iter()
        .enumerate()
        .map(|(i, arm)| summarize(*arm, seeds.iter().map(|s| &s.arms[i])))
        .collect();
    Ok(Report {
        scenario: scenario.name(),
        model: opts.model.as_ref().map(|m| m.name()).unwrap_or_else(|| {
            format!(
                "simulated-{} (test device; see eval::simulated{})",
                scenario.name(),
                if scenario == Scenario::Support {
                    "_support"
                } else {
                    ""
                }
            )
        }),
        train: opts.train,
        eval: opts.eval_tasks.as_ref().map(Vec::len).unwrap_or(opts.eval),
        seeds,
        summary,
        last_rules,
        last_marked,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn summarize<'a>(
    arm: RuleFilter,
    results: impl Iterator<Item = &'a ArmResult> + Clone,
) -> ArmSummary {
    let rates: Vec<f64> = results.clone().map(|a| a.success_rate).collect();
    let (mean, lo, hi) = ci95(&rates);
    let truth: Option<Vec<f64>> = results.clone().map(|a| a.truth_success_rate).collect();
    let truth = truth.filter(|t| !t.is_empty()).map(|t| ci95(&t));
    let mut failures = BTreeMap::new();
    let mut by_class: BTreeMap<String, ClassTruth> = BTreeMap::new();
    let (mut calls, mut applied, mut retries, mut identical, mut n) = (0.0, 0, 0, 0, 0usize);
    for a in results {
        for (k, v) in &a.failures_by_class {
            *failures.entry(k.clone()).or_insert(0) += v;
        }
        for (k, v) in &a.truth_by_class {
            by_class.entry(k.clone()).or_default().add(v);
        }
        calls += a.model_calls_per_task;
        applied += a.rules_applied;
        retries += a.retries;
        identical += a.identical_retries;
        n += 1;
    }
    ArmSummary {
        arm,
        mean_success: mean,
        ci95: (lo, hi),
        mean_truth_success: truth.map(|t| t.0),
        truth_ci95: truth.map(|t| (t.1, t.2)),
        failures_by_class: failures,
        truth_by_class: by_class,
        model_calls_per_task: calls / n.max(1) as f64,
        rules_applied: applied,
        retries,
        identical_retries: identical,
    }
}

/// The model's last answer (the one the run ended with), and clears the log.
fn last_truth(log: &TruthLog) -> Option<Truth> {
    let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
    let last = l.last().cloned();
    l.clear();
    last
}

async fn run_one(
    runner: &Runner,
    scenario: Scenario,
    task: &str,
) -> Result<crate::exec::RunOutcome, AblationError> {
    let catalog = runner.catalog();
    let skill = catalog
        .get(scenario.skill())
        .ok_or(AblationError::NoSkill(scenario.skill()))?;
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
