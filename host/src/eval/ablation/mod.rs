//! Ablation as a command: train on one task stream, learn rules, then run
//! the same evaluation stream under five arms ([`arms`]) through the real
//! run pipeline, per seed and per compliance of the simulated model.
//!
//! Success is judged twice: by the skill's validators (what the host
//! sees), and by ground truth: the task's hand-written labels, checked by
//! [`super::truth`], which shares no code with the validators. The report
//! gives both, how often they agree, and per class where they do not.
//! Retries whose prompt is byte-identical to the first attempt's are
//! counted: a remedy that adds nothing is only a second draw.
//!
//! Scenarios: `email` (the bundled email-writer; rules from the shipped
//! patterns) and `support` (a support-reply skill shipped with the
//! scenario, whose classes no pattern knows: rules come only from a model
//! proposal replayed over the recorded runs, for failures a validator saw
//! or a reviewer marked with `runs mark`). The reviewer is simulated from
//! the labels and is wrong on a set share of the answers it reads.
//!
//! With `model` set (a real model), there is no compliance to sweep; the
//! ground truth still applies wherever the tasks carry labels.

pub mod arms;
pub mod report;
mod review;
pub mod stats;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

pub use arms::{ARMS, Arm, feedback_rules};
pub use report::{
    ArmResult, ArmSummary, ClassTruth, JudgedAnswer, Marks, Report, SeedResult, Sweep,
};
pub use stats::{Rng, ci95, mean_interval};

use super::proposer::EvidenceProposer;
use super::simulated::SimulatedEmailModel;
use super::simulated_support::SimulatedSupportModel;
use super::tasks::{self, LabelledTask, Vocabulary};
use super::truth::{self, Miss};
use crate::config::Config;
use crate::exec::{Extras, RunOutcome, Runner};
use crate::learn::condition::Facts;
use crate::learn::cycle::{self, Thresholds};
use crate::learn::patterns::Library;
use crate::learn::rules::RuleSet;
use crate::learn::{Learning, Validator};
use crate::llm::{ChatRequest, ChatResponse, LlmError, Message, Provider};
use crate::paths::Paths;
use crate::skill::{Catalog, LoadOptions, Root, Source};
use crate::types::BoxFuture;

pub const SKILL: &str = "email-writer";
/// The compliances swept by default.
pub const COMPLIANCE: [f64; 3] = [0.5, 0.7, 0.9];
/// Share of the reviewer's verdicts that are wrong, by default.
pub const MARK_NOISE: f64 = 0.1;
/// Failed and successful runs shown to the proposer (each), so that it
/// sees right answers to tasks like the failed ones (with the host's
/// default of 6 it rarely does).
pub const PROPOSAL_EXAMPLES: usize = 50;

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

    /// The classes a reviewer marks a training answer with.
    fn marked_classes(self) -> &'static [&'static str] {
        match self {
            Scenario::Email => &super::simulated::CLASSES,
            Scenario::Support => &[truth::TONE, truth::ESCALATION],
        }
    }

    pub fn tasks(self, seed: u64, n: usize) -> Vec<LabelledTask> {
        match self {
            Scenario::Email => tasks::email_tasks(seed, n),
            Scenario::Support => tasks::support_tasks(seed, n, Vocabulary::Usual),
        }
    }

    fn model(self, seed: u64, compliance: f64) -> Arc<dyn Provider> {
        match self {
            Scenario::Email => Arc::new(SimulatedEmailModel::new(seed, compliance)),
            Scenario::Support => Arc::new(SimulatedSupportModel::new(seed, compliance)),
        }
    }

    /// The ground-truth criteria an answer with these labels is judged by.
    fn criteria(self, labels: &tasks::Labels) -> Vec<truth::Criterion> {
        match self {
            Scenario::Email => truth::email_criteria(labels),
            Scenario::Support => truth::reply_criteria(labels),
        }
    }

    /// The ground-truth checker's misses for an answer.
    pub fn check(self, labels: &tasks::Labels, answer: &str) -> Vec<Miss> {
        match self {
            Scenario::Email => truth::check_email(labels, answer),
            Scenario::Support => truth::check_reply(labels, answer),
        }
    }
}

/// See [`Options::edit_rules`].
pub type EditRules = Arc<dyn Fn(&mut RuleSet) + Send + Sync>;

/// A real model for [`Options::model`]: the provider each seed's runs use,
/// so that a seed can be a sampling seed sent to the server.
#[derive(Clone)]
pub struct RealModel(Arc<dyn Fn(u64) -> Arc<dyn Provider> + Send + Sync>);

impl RealModel {
    /// The same provider for every seed.
    pub fn fixed(provider: Arc<dyn Provider>) -> Self {
        RealModel(Arc::new(move |_| provider.clone()))
    }

    /// `build(seed)` for each seed.
    pub fn per_seed(build: impl Fn(u64) -> Arc<dyn Provider> + Send + Sync + 'static) -> Self {
        RealModel(Arc::new(build))
    }

    pub fn for_seed(&self, seed: u64) -> Arc<dyn Provider> {
        (self.0)(seed)
    }
}

#[derive(Clone)]
pub struct Options {
    pub scenario: Scenario,
    pub train: usize,
    pub eval: usize,
    pub seeds: u64,
    /// The first seed (seeds run from it): a long real-model run can be
    /// split into processes, each seed judged as in one run.
    pub first_seed: u64,
    /// The arms to run, in this order (default [`ARMS`]).
    pub arms: Vec<Arm>,
    /// The simulated model's compliances to sweep.
    pub compliance: Vec<f64>,
    /// Share of the reviewer's verdicts on training answers that are wrong.
    pub mark_noise: f64,
    /// Replace the generated training / evaluation tasks.
    pub train_tasks: Option<Vec<LabelledTask>>,
    pub eval_tasks: Option<Vec<LabelledTask>>,
    /// A real model instead of the simulated one.
    pub model: Option<RealModel>,
    /// Email learns from the shipped pattern library (false: as support
    /// does, from model proposals and the reviewer's marks alone; the
    /// ablation then shows what learning itself adds).
    pub shipped_patterns: bool,
    /// The proposer for rules no pattern gives (default: the model, else
    /// the simulated [`EvidenceProposer`]).
    pub proposer: Option<Arc<dyn Provider>>,
    /// Edits the learned rules before the evaluation (tests: the same
    /// rules said in other words).
    pub edit_rules: Option<EditRules>,
    /// Told the number of (compliance, seed) runs finished after each one
    /// (a caller's progress display; the library prints nothing).
    pub on_seed: Option<Arc<dyn Fn(u64) + Send + Sync>>,
}

impl Options {
    /// The defaults of `skillhost eval ablation`. Support trains on 150
    /// tickets: its rules come from proposals, which need several failures
    /// per phrasing before a word is evidence rather than chance.
    pub fn new(scenario: Scenario) -> Self {
        Options {
            scenario,
            train: match scenario {
                Scenario::Email => 50,
                Scenario::Support => 150,
            },
            eval: 50,
            seeds: 10,
            first_seed: 0,
            arms: ARMS.to_vec(),
            compliance: COMPLIANCE.to_vec(),
            mark_noise: MARK_NOISE,
            train_tasks: None,
            eval_tasks: None,
            model: None,
            shipped_patterns: true,
            proposer: None,
            edit_rules: None,
            on_seed: None,
        }
    }

    /// The (compliance, seed) runs [`run`] makes.
    pub fn runs(&self) -> u64 {
        let sweeps = if self.model.is_some() {
            1
        } else {
            self.compliance.len() as u64
        };
        sweeps * self.seeds
    }
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
    workspace: &Path,
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

/// Runs `opts.scenario`: for each compliance, each seed in a scratch
/// workspace. For `email`, `paths.home` and the catalog provide the
/// bundled `email-writer`.
pub async fn run(
    paths: &Paths,
    catalog: Arc<Catalog>,
    config: &Config,
    opts: &Options,
) -> Result<Report, AblationError> {
    let started = Instant::now();
    let compliances: Vec<Option<f64>> = if opts.model.is_some() {
        vec![None]
    } else {
        opts.compliance.iter().copied().map(Some).collect()
    };
    let mut sweeps = Vec::new();
    let mut last = (Vec::new(), Vec::new());
    let mut done = 0;
    for compliance in compliances {
        let mut seeds = Vec::new();
        for seed in opts.first_seed..opts.first_seed + opts.seeds {
            let one = SeedRun {
                paths,
                catalog: catalog.clone(),
                config,
                opts,
                seed,
                compliance,
                real: opts.model.as_ref().map(|m| m.for_seed(seed)),
            };
            let (result, rules, marked) = one.run().await?;
            seeds.push(result);
            last = (rules.rules, marked);
            done += 1;
            if let Some(on_seed) = &opts.on_seed {
                on_seed(done);
            }
        }
        let summary = (0..opts.arms.len())
            .filter_map(|i| report::summarize(&seeds, i))
            .collect();
        sweeps.push(Sweep {
            compliance,
            seeds,
            summary,
        });
    }
    let scenario = opts.scenario;
    Ok(Report {
        scenario: scenario.name(),
        model: opts
            .model
            .as_ref()
            .map(|m| m.for_seed(opts.first_seed).name())
            .unwrap_or_else(|| {
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
        train: opts.train_tasks.as_ref().map_or(opts.train, Vec::len),
        eval: opts.eval_tasks.as_ref().map_or(opts.eval, Vec::len),
        mark_noise: opts.mark_noise,
        shipped_patterns: opts.shipped_patterns,
        sweeps,
        last_rules: last.0,
        last_marked: last.1,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// One seed at one compliance: train, review, learn, evaluate every arm.
struct SeedRun<'a> {
    paths: &'a Paths,
    catalog: Arc<Catalog>,
    config: &'a Config,
    opts: &'a Options,
    seed: u64,
    compliance: Option<f64>,
    /// The real model's provider for this seed, built once.
    real: Option<Arc<dyn Provider>>,
}

impl SeedRun<'_> {
    fn scenario(&self) -> Scenario {
        self.opts.scenario
    }

    /// The model answering, a fresh one per use (training, each arm);
    /// every arm gets the same `salt`, so the same luck on the same task
    /// and attempt, and the arms differ only by what the model was told.
    fn model(&self, salt: u64) -> Arc<dyn Provider> {
        match (&self.real, self.compliance) {
            (Some(m), _) => m.clone(),
            (None, compliance) => self.scenario().model(
                self.seed.wrapping_mul(1000).wrapping_add(salt),
                compliance.unwrap_or(COMPLIANCE[1]),
            ),
        }
    }

    async fn run(&self) -> Result<(SeedResult, RuleSet, Vec<i64>), AblationError> {
        let scenario = self.scenario();
        // Unique per call: ablations may run side by side in one process.
        static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "skillhost-ablation-{}-{}-{}-{}",
            scenario.name(),
            std::process::id(),
            RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            self.seed
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|source| AblationError::Scratch {
            path: dir.clone(),
            source,
        })?;
        let _cleanup = Scratch(dir.clone());
        let scratch = Paths {
            workspace: dir.clone(),
            ..self.paths.clone()
        };
        let catalog = scenario_catalog(scenario, self.catalog.clone(), &dir)?;
        let trainer = self.trainer(&scratch, &catalog);
        let (marks, marked) = self.train(&trainer).await?;
        let store = trainer.store().map_err(AblationError::StoreUnavailable)?;
        let (mut rules, rejected) = self.learn(store, &scratch, &catalog).await?;
        rules.sort();
        if let Some(edit) = &self.opts.edit_rules {
            edit(&mut rules);
        }

        let eval_tasks = self
            .opts
            .eval_tasks
            .clone()
            .unwrap_or_else(|| scenario.tasks(self.seed * 2 + 2, self.opts.eval));
        let skill = catalog
            .get(scenario.skill())
            .ok_or(AblationError::NoSkill(scenario.skill()))?;
        let raw_validators = &skill.meta.skillhost.validators;
        let feedback = feedback_rules(scenario.skill(), raw_validators);
        let (validators, _) = crate::learn::validators(raw_validators);
        let mut arms = Vec::new();
        for &arm in &self.opts.arms {
            let learning = arm.learning(&rules, &feedback);
            let eval = Evaluation {
                scenario,
                validators: &validators,
                tasks: &eval_tasks,
            };
            arms.push(
                eval.arm(
                    arm,
                    learning,
                    &scratch,
                    &catalog,
                    self.config,
                    self.model(2),
                )
                .await?,
            );
        }
        let in_force = |r: &&crate::learn::rules::Rule| r.enabled && !r.rejected;
        let result = SeedResult {
            seed: self.seed,
            rules_learned: rules
                .rules
                .iter()
                .filter(in_force)
                .map(|r| r.id.clone())
                .collect(),
            rules_rejected: rejected,
            marks,
            arms,
        };
        Ok((result, rules, marked))
    }

    /// The runner of the training tasks: every run recorded, no rules.
    fn trainer(&self, scratch: &Paths, catalog: &Arc<Catalog>) -> Runner {
        let mut cfg = self.config.clone();
        cfg.learning.record = true;
        cfg.learning.auto_every = 0;
        Runner::with_catalog(
            scratch.clone(),
            cfg,
            catalog.clone(),
            Extras {
                provider: Some(self.model(1)),
                prefer_model: true,
                ..Extras::default()
            },
        )
    }

    /// Runs the training tasks; a reviewer reads the answers the
    /// validators passed and marks those it finds wrong (support; see
    /// [`review`]).
    async fn train(&self, trainer: &Runner) -> Result<(Marks, Vec<i64>), AblationError> {
        let scenario = self.scenario();
        let tasks = self
            .opts
            .train_tasks
            .clone()
            .unwrap_or_else(|| scenario.tasks(self.seed * 2 + 1, self.opts.train));
        let mut reviewer =
            review::Reviewer::new(self.seed, self.opts.mark_noise, scenario.marked_classes());
        let mut marks = Vec::new();
        for task in &tasks {
            let o = run_one(trainer, scenario, task).await?;
            let answer = o.output.as_ref().map(|x| x.body.as_str());
            if scenario != Scenario::Support || o.failure.is_some() {
                continue;
            }
            let (Some(id), Some(answer), Some(labels)) = (o.run_id, answer, &task.truth) else {
                continue;
            };
            if let Some(class) = reviewer.read(&scenario.check(labels, answer)) {
                marks.push((id, class));
            }
        }
        let store = trainer.store().map_err(AblationError::StoreUnavailable)?;
        for (id, class) in &marks {
            store.mark_run(
                *id,
                &crate::store::Verdict {
                    ok: false,
                    class: Some((*class).to_owned()),
                    note: Some("marked by the ablation's simulated reviewer".into()),
                    at: 0,
                },
            )?;
        }
        Ok((reviewer.marks, marks.iter().map(|(id, _)| *id).collect()))
    }

    /// One learning cycle over the recorded training runs: the shipped
    /// patterns (email), or proposals replayed over the runs (support, or
    /// email without the shipped patterns).
    /// Returns the rules and the ids of rejected proposals.
    async fn learn(
        &self,
        store: &dyn crate::store::RunStore,
        scratch: &Paths,
        catalog: &Arc<Catalog>,
    ) -> Result<(RuleSet, Vec<String>), AblationError> {
        let rules = if self.scenario() == Scenario::Email && self.opts.shipped_patterns {
            let groups = store.failure_groups(Thresholds::default().window)?;
            let library = Library::shipped().unwrap_or_default();
            let mut rules = RuleSet::default();
            cycle::run(
                &groups,
                &|_: &str| library.clone(),
                &mut rules,
                &self.config.learning.thresholds,
            );
            rules
        } else {
            self.learn_from_proposals(store, scratch, catalog).await?
        };
        let rejected = rules
            .rules
            .iter()
            .filter(|r| r.rejected)
            .map(|r| r.id.clone())
            .collect();
        Ok((rules, rejected))
    }

    /// Rules from the proposer, replayed over the recorded runs, with the
    /// reviewer's marks among the failures; the shipped patterns only where
    /// [`Options::shipped_patterns`] says so.
    async fn learn_from_proposals(
        &self,
        store: &dyn crate::store::RunStore,
        scratch: &Paths,
        catalog: &Arc<Catalog>,
    ) -> Result<RuleSet, AblationError> {
        let proposer: Arc<dyn Provider> = self
            .opts
            .proposer
            .clone()
            .or_else(|| self.real.clone())
            .unwrap_or_else(|| Arc::new(EvidenceProposer));
        let mut learning = self.config.learning.clone();
        learning.proposals.enabled = true;
        learning.proposals.examples = PROPOSAL_EXAMPLES;
        learning.shipped_patterns = self.opts.shipped_patterns;
        cycle::learn_from_store(
            store,
            crate::store::SharedStore::of(store),
            scratch,
            catalog,
            &learning,
            Some(proposer.as_ref()),
        )
        .await?;
        Ok(RuleSet::load(&crate::learn::rules_path(
            &scratch.state_dir(),
        ))?)
    }
}

/// The evaluation tasks of one seed, judged the same way in every arm.
struct Evaluation<'a> {
    scenario: Scenario,
    validators: &'a [Validator],
    tasks: &'a [LabelledTask],
}

impl Evaluation<'_> {
    async fn arm(
        &self,
        arm: Arm,
        learning: Learning,
        scratch: &Paths,
        catalog: &Arc<Catalog>,
        config: &Config,
        model: Arc<dyn Provider>,
    ) -> Result<ArmResult, AblationError> {
        let mut cfg = config.clone();
        cfg.learning.record = false;
        let recording = Arc::new(Recording {
            inner: model,
            requests: Mutex::new(Vec::new()),
        });
        let runner = Runner::with_catalog(
            scratch.clone(),
            cfg,
            catalog.clone(),
            Extras {
                provider: Some(recording.clone()),
                prefer_model: true,
                learning: Some(Arc::new(learning)),
                store: None,
            },
        );
        let mut result = ArmResult::new(arm);
        for class in self.scenario.classes() {
            result
                .by_class
                .insert((*class).to_owned(), ClassTruth::default());
        }
        for task in self.tasks {
            recording.take();
            let o = run_one(&runner, self.scenario, task).await?;
            let (retries, same) = identical_retries(&recording.take());
            result.retries += retries;
            result.identical_retries += same;
            self.judge(task, &o, &mut result);
        }
        result.finish();
        Ok(result)
    }

    /// Counts one run: the validators' verdict, the checker's, and per
    /// class where they differ on the final answer.
    fn judge(&self, task: &LabelledTask, o: &RunOutcome, result: &mut ArmResult) {
        result.tasks += 1;
        result.model_calls += u64::from(o.model_calls);
        result.rules_applied += o.rules_applied.len() as u64;
        let validated = o.failure.is_none();
        result.validated += usize::from(validated);
        if let Some(f) = &o.failure {
            *result.failures_by_class.entry(f.class.clone()).or_insert(0) += 1;
        }
        let Some(labels) = &task.truth else {
            return;
        };
        let answer = o
            .output
            .as_ref()
            .map(|x| x.body.as_str())
            .or(o.rejected_output.as_deref());
        let misses = match answer {
            Some(a) => self.scenario.check(labels, a),
            None => vec![Miss {
                class: "NoAnswer",
                why: "no answer".into(),
            }],
        };
        for criterion in self.scenario.criteria(labels) {
            let score = result
                .criteria
                .entry(criterion.name.to_owned())
                .or_default();
            score.applies += 1;
            score.met += u64::from(answer.is_some() && criterion.met(&misses));
        }
        result.answers.push(JudgedAnswer {
            task: task.task.clone(),
            context: task.context.clone(),
            truth: labels.clone(),
            answer: answer.map(str::to_owned),
            validated,
            misses: misses.clone(),
        });
        let truth_ok = misses.is_empty();
        result.judged += 1;
        result.truth_succeeded += usize::from(validated && truth_ok);
        result.agreed += usize::from(validated == truth_ok);
        if (!validated || !truth_ok)
            && let (Some(m), true) = (misses.first(), result.sample_misses.len() < 5)
        {
            result
                .sample_misses
                .push(format!("{} -> {}: {}", task.task, m.class, m.why));
        }
        if let Some(answer) = answer {
            self.compare_classes(task, o, answer, &misses, result);
        }
    }

    /// Per class, on the final answer: the checker's misses beside the
    /// validators' flags.
    fn compare_classes(
        &self,
        task: &LabelledTask,
        o: &RunOutcome,
        answer: &str,
        misses: &[Miss],
        result: &mut ArmResult,
    ) {
        let facts = Facts {
            task: &task.task,
            skill: self.scenario.skill(),
            context: &o.context,
            output: Some(answer),
            failure: None,
        };
        let flagged: Vec<&str> = self
            .validators
            .iter()
            .filter(|v| v.fails(&facts))
            .map(|v| v.class.as_str())
            .collect();
        let classes: std::collections::BTreeSet<&str> = misses
            .iter()
            .map(|m| m.class)
            .chain(flagged.iter().copied())
            .collect();
        for class in classes {
            let t = result.by_class.entry(class.to_owned()).or_default();
            let really = misses.iter().any(|m| m.class == class);
            let flag = flagged.contains(&class);
            t.truth_misses += u64::from(really);
            t.validator_flags += u64::from(flag);
            t.missed += u64::from(really && !flag);
            t.false_alarms += u64::from(!really && flag);
        }
    }
}

async fn run_one(
    runner: &Runner,
    scenario: Scenario,
    task: &LabelledTask,
) -> Result<RunOutcome, AblationError> {
    let catalog = runner.catalog();
    let skill = catalog
        .get(scenario.skill())
        .ok_or(AblationError::NoSkill(scenario.skill()))?;
    Ok(runner
        .run_skill(
            skill,
            "ablation".into(),
            &task.task,
            &task.context,
            Instant::now(),
        )
        .await?)
}
