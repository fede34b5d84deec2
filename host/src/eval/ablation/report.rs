//! What the ablation reports: per arm, success by the validators and by
//! ground truth, how often the two verdicts agree, per class where they
//! differ, and what the arm cost in model calls.

use std::collections::BTreeMap;

use serde::Serialize;

use super::arms::Arm;
use super::stats::ci95;
use crate::types::FailureClass;

/// Per class, over final answers with labels: the checker's misses, the
/// validators' flags, the misses no validator flagged, and the flags
/// without a miss.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClassTruth {
    pub truth_misses: u64,
    pub validator_flags: u64,
    pub missed: u64,
    pub false_alarms: u64,
}

impl ClassTruth {
    /// Share of the checker's misses the validators did not flag.
    pub fn miss_rate(&self) -> f64 {
        if self.truth_misses == 0 {
            0.0
        } else {
            self.missed as f64 / self.truth_misses as f64
        }
    }

    fn add(&mut self, other: &ClassTruth) {
        self.truth_misses += other.truth_misses;
        self.validator_flags += other.validator_flags;
        self.missed += other.missed;
        self.false_alarms += other.false_alarms;
    }
}

/// One ground-truth criterion over an arm's answers: the labelled tasks it
/// applies to, and those whose last answer (delivered or rejected) meets
/// it. A run with no answer meets none.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct CriterionScore {
    pub applies: u64,
    pub met: u64,
}

impl CriterionScore {
    pub fn rate(&self) -> Option<f64> {
        (self.applies > 0).then(|| self.met as f64 / self.applies as f64)
    }

    fn add(&mut self, other: &CriterionScore) {
        self.applies += other.applies;
        self.met += other.met;
    }
}

/// One judged answer, for reading by hand (`eval ablation --answers`):
/// the task with its context and labels (a line is also a task line),
/// the last answer (delivered or rejected), the validators' verdict and
/// the checker's misses.
#[derive(Debug, Clone, Serialize)]
pub struct JudgedAnswer {
    pub task: String,
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub context: serde_json::Map<String, serde_json::Value>,
    pub truth: crate::eval::tasks::Labels,
    pub answer: Option<String>,
    pub validated: bool,
    pub misses: Vec<crate::eval::truth::Miss>,
}

/// One arm on one seed's evaluation tasks.
#[derive(Debug, Clone, Serialize)]
pub struct ArmResult {
    pub arm: Arm,
    pub tasks: usize,
    /// Runs that ended without a failure (what the host sees).
    pub validated: usize,
    pub validator_success: f64,
    /// Tasks with labels, and those whose run delivered an answer the
    /// ground-truth checker passes.
    pub judged: usize,
    pub truth_succeeded: usize,
    pub truth_success: Option<f64>,
    /// Labelled tasks on which the validators' verdict on the final
    /// answer equals the checker's.
    pub agreed: usize,
    pub agreement: Option<f64>,
    pub failures_by_class: BTreeMap<FailureClass, u64>,
    pub by_class: BTreeMap<String, ClassTruth>,
    /// Success per ground-truth criterion (see [`CriterionScore`]).
    pub criteria: BTreeMap<String, CriterionScore>,
    pub model_calls: u64,
    pub model_calls_per_task: f64,
    pub rules_applied: u64,
    /// Runs tried a second time, and how many of those second prompts
    /// were byte-identical to the first.
    pub retries: u64,
    pub identical_retries: u64,
    /// The first few failures by ground truth: task, class and why.
    pub sample_misses: Vec<String>,
    /// Every labelled answer, judged (not in the JSON report).
    #[serde(skip)]
    pub answers: Vec<JudgedAnswer>,
}

impl ArmResult {
    pub fn new(arm: Arm) -> Self {
        ArmResult {
            arm,
            tasks: 0,
            validated: 0,
            validator_success: 0.0,
            judged: 0,
            truth_succeeded: 0,
            truth_success: None,
            agreed: 0,
            agreement: None,
            failures_by_class: BTreeMap::new(),
            by_class: BTreeMap::new(),
            criteria: BTreeMap::new(),
            model_calls: 0,
            model_calls_per_task: 0.0,
            rules_applied: 0,
            retries: 0,
            identical_retries: 0,
            sample_misses: Vec::new(),
            answers: Vec::new(),
        }
    }

    /// Fills in the rates from the counts.
    pub fn finish(&mut self) {
        let n = self.tasks.max(1) as f64;
        self.validator_success = self.validated as f64 / n;
        self.model_calls_per_task = self.model_calls as f64 / n;
        if self.judged > 0 {
            let judged = self.judged as f64;
            self.truth_success = Some(self.truth_succeeded as f64 / judged);
            self.agreement = Some(self.agreed as f64 / judged);
        }
    }
}

/// Review of the training answers by a person (simulated, with noise).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Marks {
    /// Training runs the validators passed and the reviewer read.
    pub reviewed: u64,
    /// Marked failed, and of those, wrongly (the answer was right).
    pub marked: u64,
    pub wrong: u64,
    /// Answers with a mistake the reviewer let pass.
    pub overlooked: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeedResult {
    pub seed: u64,
    pub rules_learned: Vec<String>,
    /// Proposals the replay rejected (support).
    pub rules_rejected: Vec<String>,
    pub marks: Marks,
    pub arms: Vec<ArmResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArmSummary {
    pub arm: Arm,
    pub validator_success: f64,
    pub validator_ci95: (f64, f64),
    pub truth_success: Option<f64>,
    pub truth_ci95: Option<(f64, f64)>,
    /// Pooled over seeds.
    pub agreement: Option<f64>,
    pub model_calls_per_task: f64,
    pub rules_applied: u64,
    pub retries: u64,
    pub identical_retries: u64,
    pub failures_by_class: BTreeMap<FailureClass, u64>,
    pub by_class: BTreeMap<String, ClassTruth>,
    /// Pooled over seeds.
    pub criteria: BTreeMap<String, CriterionScore>,
}

/// All seeds at one compliance of the simulated model (None: a real
/// model).
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    pub compliance: Option<f64>,
    pub seeds: Vec<SeedResult>,
    pub summary: Vec<ArmSummary>,
}

impl Sweep {
    pub fn arm(&self, arm: Arm) -> Option<&ArmSummary> {
        self.summary.iter().find(|a| a.arm == arm)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scenario: &'static str,
    pub model: String,
    pub train: usize,
    pub eval: usize,
    /// Share of the reviewer's marks that are wrong (support).
    pub mark_noise: f64,
    /// Whether learning started from the shipped pattern library.
    pub shipped_patterns: bool,
    pub sweeps: Vec<Sweep>,
    /// The rules of the last seed of the last sweep, with their origin,
    /// and the training runs the reviewer marked failed there.
    pub last_rules: Vec<crate::learn::rules::Rule>,
    pub last_marked: Vec<i64>,
    pub seconds: f64,
}

/// The mean over seeds of one arm (the `index`-th of every seed).
pub fn summarize(seeds: &[SeedResult], index: usize) -> Option<ArmSummary> {
    let results: Vec<&ArmResult> = seeds.iter().filter_map(|s| s.arms.get(index)).collect();
    let first = results.first()?;
    let rates: Vec<f64> = results.iter().map(|a| a.validator_success).collect();
    let (mean, lo, hi) = ci95(&rates);
    let truth: Option<Vec<f64>> = results.iter().map(|a| a.truth_success).collect();
    let truth = truth.filter(|t| !t.is_empty()).map(|t| ci95(&t));
    let (judged, agreed) = results
        .iter()
        .fold((0, 0), |(j, a), r| (j + r.judged, a + r.agreed));
    let mut s = ArmSummary {
        arm: first.arm,
        validator_success: mean,
        validator_ci95: (lo, hi),
        truth_success: truth.map(|t| t.0),
        truth_ci95: truth.map(|t| (t.1, t.2)),
        agreement: (judged > 0).then(|| agreed as f64 / judged as f64),
        model_calls_per_task: results.iter().map(|a| a.model_calls_per_task).sum::<f64>()
            / results.len() as f64,
        rules_applied: 0,
        retries: 0,
        identical_retries: 0,
        failures_by_class: BTreeMap::new(),
        by_class: BTreeMap::new(),
        criteria: BTreeMap::new(),
    };
    for a in &results {
        for (k, v) in &a.failures_by_class {
            *s.failures_by_class.entry(k.clone()).or_insert(0) += v;
        }
        for (k, v) in &a.by_class {
            s.by_class.entry(k.clone()).or_default().add(v);
        }
        for (k, v) in &a.criteria {
            s.criteria.entry(k.clone()).or_default().add(v);
        }
        s.rules_applied += a.rules_applied;
        s.retries += a.retries;
        s.identical_retries += a.identical_retries;
    }
    Some(s)
}
