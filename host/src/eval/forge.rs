//! `skillhost eval forge`: what a forged skill saves. A notes workspace
//! (one note per quarter and topic) and a task family ("turn the Q3 sales
//! notes into a brief in out/") that takes several tool calls: find the
//! note, read it, summarize it with the bundled `text-summarizer`, write
//! the brief. Per seed, in a scratch workspace:
//!
//! - **before**: the evaluation tasks with no forged skill (the forge off,
//!   the forged root empty);
//! - **training**: a stream of other tasks, on other notes (Q1, Q2), run
//!   with recording and `[forge.create]` on; forging happens the normal
//!   way, on the run writer's thread, and swaps the skill into the
//!   runner's catalog (the harness waits with `flush`);
//! - **after**: the same evaluation tasks (Q3, Q4 notes, phrasings not
//!   used in training) and the same seed, on the swapped catalog, with
//!   recording off so the tools offered stay fixed.
//!
//! Every task runs the scenario's `note-briefs` skill in the real model
//! loop; a forged skill is reached only as one of the `skill_*` tools the
//! loop offers. Success is by ground truth ([`check`]): the brief is at
//! `out/<note>.md`, alone there, and is a summary of the right note.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Map;

use super::ablation::{Rng, ci95, mean_interval};
use super::forge_agent::SimulatedBriefAgent;
use crate::config::Config;
use crate::exec::{Extras, RunOutcome, Runner, Step};
use crate::llm::{ChatRequest, ChatResponse, LlmError, Provider};
use crate::paths::Paths;
use crate::skill::{Catalog, LoadOptions, Source};
use crate::types::BoxFuture;

/// The skill every task runs.
pub const SKILL: &str = "note-briefs";
const SKILL_MD: &str = include_str!("forge_scenario/note-briefs.md");
/// The shipped evaluation phrasings (see that file for the format).
pub const PHRASINGS: &str = include_str!("forge_scenario/tasks.jsonl");
const SUMMARIZER: &str = "text-summarizer";

const TOPICS: [&str; 5] = ["sales", "hiring", "support", "marketing", "finance"];
const TRAIN_QUARTERS: [u8; 2] = [1, 2];
const EVAL_QUARTERS: [u8; 2] = [3, 4];

const TRAIN_PHRASINGS: &[&str] = &[
    "Turn the Q{q} {t} notes into a brief in out/",
    "Make a brief of the {t} notes from Q{q} in out/",
    "Write a brief of the Q{q} {t} notes to out/",
    "Summarize the {t} notes of Q{q} into a brief in out/",
];
const EVAL_PHRASINGS: &[&str] = &[
    "Please produce a brief of the Q{q} {t} notes and put it in out/",
    "The Q{q} {t} notes need a brief in out/",
    "Brief the {t} notes for Q{q} into out/",
    "Can you write a short brief on the Q{q} {t} notes in out/?",
    "Condense the Q{q} {t} notes into a brief stored in out/",
    "Create a brief from Q{q} {t} notes, saved under out/",
];

/// One evaluation task and the note its brief must come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalTask {
    pub task: String,
    /// `q3-sales` for notes/q3-sales.md (brief: out/q3-sales.md).
    pub source: String,
}

#[derive(Clone)]
pub struct Options {
    pub seeds: u64,
    pub train: usize,
    pub eval: usize,
    /// Replaces the generated evaluation tasks.
    pub eval_tasks: Option<Vec<EvalTask>>,
    /// A real model instead of the simulated agent.
    pub model: Option<Arc<dyn Provider>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seeds: 10,
            train: 8,
            eval: 12,
            eval_tasks: None,
            model: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ForgeEvalError {
    #[error("the bundled `{SUMMARIZER}` skill is not available (bundled skills off?)")]
    NoSummarizer,
    #[error("the scenario skill `{SKILL}` did not load: {0}")]
    NoSkill(String),
    #[error("cannot prepare the scratch workspace {path}: {source}")]
    Scratch {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("tasks file, line {line}: {reason}")]
    Tasks { line: usize, reason: String },
    #[error("run failed")]
    Run(#[from] crate::exec::RunError),
}

/// Why a brief fails the ground truth.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Miss {
    #[error("no brief at {0}")]
    Missing(String),
    #[error("out/ holds other files: {0}")]
    WrongPlace(String),
    #[error("the brief is empty")]
    Empty,
    #[error("sentence not in the right note: {0}")]
    NotFromSource(String),
    #[error("the brief is the whole note, not a summary")]
    NotASummary,
    #[error("cannot read {0}")]
    Unreadable(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct ArmResult {
    pub arm: &'static str,
    pub tasks: usize,
    /// Briefs that pass the ground truth.
    pub succeeded: usize,
    pub success_rate: f64,
    /// Runs the loop itself counted as successful.
    pub run_success_rate: f64,
    pub model_calls_per_task: f64,
    /// Tool calls the agent made (one per forged-tool call).
    pub tool_steps_per_task: f64,
    /// Tool calls executed, counting each step of a forged pipeline.
    pub executed_calls_per_task: f64,
    pub ms_per_task: f64,
    /// Tasks in which the agent called a forged skill.
    pub forged_tool_tasks: usize,
    /// Tool calls the model made that its request did not offer.
    pub calls_not_offered: u64,
    pub sample_misses: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeedResult {
    pub seed: u64,
    pub forged_skills: Vec<String>,
    pub arms: Vec<ArmResult>,
}

/// Mean over seeds with its 95% interval (Student's t).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Stat {
    pub mean: f64,
    pub ci95: (f64, f64),
}

#[derive(Debug, Clone, Serialize)]
pub struct ArmSummary {
    pub arm: &'static str,
    pub success: Stat,
    pub model_calls_per_task: Stat,
    pub tool_steps_per_task: Stat,
    pub executed_calls_per_task: Stat,
    pub ms_per_task: Stat,
    pub calls_not_offered: u64,
}

/// After against before, from the means.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// after / before.
    pub model_calls_ratio: f64,
    /// 1 - after / before.
    pub tool_steps_reduction: f64,
    /// after - before.
    pub success_change: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scenario: &'static str,
    pub model: String,
    pub train: usize,
    pub eval: usize,
    pub tasks: String,
    pub seeds: Vec<SeedResult>,
    pub summary: Vec<ArmSummary>,
    pub comparison: Comparison,
    pub seconds: f64,
}

/// The notes of the scenario: (file stem, text).
pub fn notes() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for q in TRAIN_QUARTERS.iter().chain(&EVAL_QUARTERS) {
        for t in TOPICS {
            out.push((format!("q{q}-{t}"), note(*q, t)));
        }
    }
    out
}

fn note(q: u8, topic: &str) -> String {
    // Figures differ per note, so no sentence is in two notes.
    let n = |k: u64| {
        let mut h = u64::from(q) * 1000 + k;
        for b in topic.bytes() {
            h = h.wrapping_mul(31).wrapping_add(u64::from(b));
        }
        10 + h % 89
    };
    let lines = match topic {
        "sales" => sales_lines(q, n),
        "hiring" => hiring_lines(q, n),
        "support" => support_lines(q, n),
        "marketing" => marketing_lines(q, n),
        _ => finance_lines(q, n),
    };
    format!("# Q{q} {topic} notes\n\n{}\n", lines.join("\n"))
}

fn sales_lines(q: u8, n: impl Fn(u64) -> u64) -> [String; 6] {
    [
        format!(
            "Q{q} revenue closed at {} million euros across all regions.",
            n(1)
        ),
        format!(
            "The EMEA team signed {} new enterprise contracts in Q{q}.",
            n(2)
        ),
        format!(
            "Average deal size in Q{q} moved to {} thousand euros.",
            n(3)
        ),
        format!("Pipeline coverage after Q{q} stands at {} percent.", n(4)),
        format!(
            "Renewals in Q{q} reached {} percent of the contracts due.",
            n(5)
        ),
        format!(
            "Sales cycles in Q{q} averaged {} days from first call to signature.",
            n(6)
        ),
    ]
}

fn hiring_lines(q: u8, n: impl Fn(u64) -> u64) -> [String; 6] {
    [
        format!(
            "We hired {} engineers in Q{q}, against a plan of {}.",
            n(1),
            n(1) + 4
        ),
        format!("Time to hire in Q{q} averaged {} days.", n(2)),
        format!("Offer acceptance in Q{q} was {} percent.", n(3)),
        format!("Referrals brought {} of the Q{q} hires.", n(4) % 20),
        format!(
            "In Q{q} the recruiting team screened {} candidates a week.",
            n(5)
        ),
        format!("Onboarding surveys in Q{q} scored {} out of 100.", n(6)),
    ]
}

fn support_lines(q: u8, n: impl Fn(u64) -> u64) -> [String; 6] {
    [
        format!("Support handled {} hundred tickets in Q{q}.", n(1)),
        format!(
            "First response time in Q{q} was {} minutes on average.",
            n(2)
        ),
        format!(
            "Customer satisfaction for Q{q} came in at {} percent.",
            n(3)
        ),
        format!("The Q{q} backlog ended at {} open tickets.", n(4)),
        format!(
            "Self-service articles deflected {} percent of Q{q} contacts.",
            n(5)
        ),
        format!("Escalations to engineering in Q{q} numbered {}.", n(6)),
    ]
}

fn marketing_lines(q: u8, n: impl Fn(u64) -> u64) -> [String; 6] {
    [
        format!("Q{q} campaigns produced {} hundred qualified leads.", n(1)),
        format!("Website traffic in Q{q} grew {} percent.", n(2)),
        format!(
            "The Q{q} webinar series drew {} attendees per session.",
            n(3)
        ),
        format!("Cost per lead in Q{q} fell to {} euros.", n(4)),
        format!("Email open rates in Q{q} held at {} percent.", n(5)),
        format!("Marketing spent {} thousand euros on events in Q{q}.", n(6)),
    ]
}

fn finance_lines(q: u8, n: impl Fn(u64) -> u64) -> [String; 6] {
    [
        format!("Operating costs in Q{q} came to {} million euros.", n(1)),
        format!("Gross margin for Q{q} was {} percent.", n(2)),
        format!(
            "Cash at the end of Q{q} covered {} months of spending.",
            n(3)
        ),
        format!(
            "Receivables older than sixty days in Q{q} were {} thousand euros.",
            n(4)
        ),
        format!("Q{q} capital spending reached {} thousand euros.", n(5)),
        format!("The Q{q} forecast was revised by {} percent.", n(6)),
    ]
}

/// Writes the scenario into `workspace`: the notes and the `note-briefs`
/// skill (in `.skillhost/skills`, a workspace skill).
pub fn write_workspace(workspace: &Path) -> std::io::Result<()> {
    let notes_dir = workspace.join("notes");
    std::fs::create_dir_all(&notes_dir)?;
    for (stem, text) in notes() {
        std::fs::write(notes_dir.join(format!("{stem}.md")), text)?;
    }
    std::fs::create_dir_all(workspace.join("out"))?;
    let skill = workspace.join(".skillhost").join("skills").join(SKILL);
    std::fs::create_dir_all(&skill)?;
    std::fs::write(skill.join("SKILL.md"), SKILL_MD)
}

/// Sentences as the bundled summarizer splits them (the same rule as its
/// handler, which is a guest crate this one cannot call).
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|(_, n)| *n);
        let boundary = matches!(c, '.' | '!' | '?' | '\n') && next.is_none_or(char::is_whitespace);
        if boundary || next.is_none() {
            let end = i + c.len_utf8();
            let s = text[start..end].trim();
            if s.chars().any(char::is_alphanumeric) {
                out.push(s);
            }
            start = end;
        }
    }
    out
}

/// The ground truth: `out/SOURCE.md` is the only file in `out/`, and is a
/// summary of `notes/SOURCE.md` (every sentence from that note, fewer
/// sentences than the note).
pub fn check(workspace: &Path, source: &str) -> Result<(), Miss> {
    let want = format!("{source}.md");
    let out_dir = workspace.join("out");
    let others = others_in(&out_dir, &want);
    let brief = match std::fs::read_to_string(out_dir.join(&want)) {
        Ok(b) => b,
        Err(_) => return Err(Miss::Missing(format!("out/{want}"))),
    };
    if !others.is_empty() {
        return Err(Miss::WrongPlace(others.join(", ")));
    }
    let note_path = workspace.join("notes").join(&want);
    let note = std::fs::read_to_string(&note_path)
        .map_err(|_| Miss::Unreadable(note_path.display().to_string()))?;
    let in_note = sentences(&note);
    if sentences_used(brief.trim(), &in_note)? >= in_note.len() {
        return Err(Miss::NotASummary);
    }
    Ok(())
}

/// The files in `dir` other than `want`, sorted.
fn others_in(dir: &Path, want: &str) -> Vec<String> {
    let mut others: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != want)
                .collect()
        })
        .unwrap_or_default();
    others.sort();
    others
}

/// How many of the note's sentences the brief is made of. The summarizer
/// joins the sentences it keeps with spaces: the brief must be such a run
/// of the note's sentences, each at most once.
fn sentences_used(brief: &str, in_note: &[&str]) -> Result<usize, Miss> {
    let mut rest = brief;
    if rest.is_empty() {
        return Err(Miss::Empty);
    }
    let mut used = Vec::new();
    while !rest.is_empty() {
        let Some(s) = in_note
            .iter()
            .filter(|s| rest.starts_with(**s) && !used.contains(*s))
            .max_by_key(|s| s.len())
        else {
            let head = sentences(rest).first().copied().unwrap_or(rest);
            return Err(Miss::NotFromSource(head.to_owned()));
        };
        used.push(*s);
        rest = rest[s.len()..].trim_start();
    }
    Ok(used.len())
}

/// Parses a tasks file: JSON Lines of [`EvalTask`]; blank lines and lines
/// starting with `#` are skipped. Each source must be a note of the
/// scenario.
pub fn parse_tasks(text: &str) -> Result<Vec<EvalTask>, ForgeEvalError> {
    let known: Vec<String> = notes().into_iter().map(|(s, _)| s).collect();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let t: EvalTask = serde_json::from_str(line).map_err(|e| ForgeEvalError::Tasks {
            line: i + 1,
            reason: e.to_string(),
        })?;
        if !known.contains(&t.source) {
            return Err(ForgeEvalError::Tasks {
                line: i + 1,
                reason: format!("`{}` is not a note of the scenario", t.source),
            });
        }
        out.push(t);
    }
    if out.is_empty() {
        return Err(ForgeEvalError::Tasks {
            line: 0,
            reason: "no tasks".into(),
        });
    }
    Ok(out)
}

fn generate(seed: u64, n: usize, phrasings: &[&str], quarters: &[u8]) -> Vec<EvalTask> {
    let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0xf0_12e);
    (0..n)
        .map(|_| {
            let mut below = |n: usize| (rng.next_u64() % n as u64) as usize;
            let q = quarters[below(quarters.len())];
            let t = TOPICS[below(TOPICS.len())];
            EvalTask {
                task: phrasings[below(phrasings.len())]
                    .replace("{q}", &q.to_string())
                    .replace("{t}", t),
                source: format!("q{q}-{t}"),
            }
        })
        .collect()
}

/// Training tasks: Q1 and Q2 notes, training phrasings.
pub fn training_tasks(seed: u64, n: usize) -> Vec<EvalTask> {
    generate(seed * 2 + 1, n, TRAIN_PHRASINGS, &TRAIN_QUARTERS)
}

/// Evaluation tasks: Q3 and Q4 notes, other phrasings.
pub fn evaluation_tasks(seed: u64, n: usize) -> Vec<EvalTask> {
    generate(seed * 2 + 2, n, EVAL_PHRASINGS, &EVAL_QUARTERS)
}

/// Counts the tool calls a model makes that its request did not offer.
struct OfferCheck {
    inner: Arc<dyn Provider>,
    not_offered: AtomicU64,
}

impl Provider for OfferCheck {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let reply = self.inner.chat(req).await?;
            let stray = reply
                .tool_calls
                .iter()
                .filter(|c| !req.tools.iter().any(|t| t.name == c.name))
                .count();
            self.not_offered.fetch_add(stray as u64, Ordering::Relaxed);
            Ok(reply)
        })
    }
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch_error(path: &Path) -> impl FnOnce(std::io::Error) -> ForgeEvalError {
    let path = path.to_path_buf();
    move |source| ForgeEvalError::Scratch { path, source }
}

/// Runs the scenario. `paths.bundled` provides the bundled summarizer;
/// everything else lives in a scratch folder per seed.
pub async fn run(paths: &Paths, config: &Config, opts: &Options) -> Result<Report, ForgeEvalError> {
    let started = Instant::now();
    let mut seeds = Vec::new();
    for seed in 0..opts.seeds {
        seeds.push(run_seed(paths, config, opts, seed).await?);
    }
    let summary = summarize(&seeds);
    let comparison = compare(&summary);
    Ok(Report {
        scenario: "notes-brief",
        model: opts
            .model
            .as_ref()
            .map(|m| m.name())
            .unwrap_or_else(|| "simulated-brief (test device; see eval::forge_agent)".into()),
        train: opts.train,
        eval: opts.eval_tasks.as_ref().map_or(opts.eval, Vec::len),
        tasks: if opts.eval_tasks.is_some() {
            "file".into()
        } else {
            "generated".into()
        },
        seeds,
        summary,
        comparison,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Each arm's means over the seeds, with their intervals.
fn summarize(seeds: &[SeedResult]) -> Vec<ArmSummary> {
    ["before", "after"]
        .iter()
        .enumerate()
        .map(|(i, arm)| {
            let of = |f: &dyn Fn(&ArmResult) -> f64| -> Vec<f64> {
                seeds.iter().map(|s| f(&s.arms[i])).collect()
            };
            let stat = |(mean, lo, hi): (f64, f64, f64)| Stat {
                mean,
                ci95: (lo, hi),
            };
            ArmSummary {
                arm,
                success: stat(ci95(&of(&|a| a.success_rate))),
                model_calls_per_task: stat(mean_interval(&of(&|a| a.model_calls_per_task))),
                tool_steps_per_task: stat(mean_interval(&of(&|a| a.tool_steps_per_task))),
                executed_calls_per_task: stat(mean_interval(&of(&|a| a.executed_calls_per_task))),
                ms_per_task: stat(mean_interval(&of(&|a| a.ms_per_task))),
                calls_not_offered: seeds.iter().map(|s| s.arms[i].calls_not_offered).sum(),
            }
        })
        .collect()
}

/// After (`summary[1]`) against before (`summary[0]`).
fn compare(summary: &[ArmSummary]) -> Comparison {
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    Comparison {
        model_calls_ratio: ratio(
            summary[1].model_calls_per_task.mean,
            summary[0].model_calls_per_task.mean,
        ),
        tool_steps_reduction: 1.0
            - ratio(
                summary[1].tool_steps_per_task.mean,
                summary[0].tool_steps_per_task.mean,
            ),
        success_change: summary[1].success.mean - summary[0].success.mean,
    }
}

async fn run_seed(
    paths: &Paths,
    config: &Config,
    opts: &Options,
    seed: u64,
) -> Result<SeedResult, ForgeEvalError> {
    let dir = std::env::temp_dir().join(format!(
        "skillhost-forge-eval-{}-{seed}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let _cleanup = Scratch(dir.clone());
    let scratch = scratch_paths(paths, &dir)?;
    let catalog = scenario_catalog(&scratch)?;
    let arms = SeedArms {
        scratch: &scratch,
        config,
        opts,
        seed,
    };
    let eval_tasks = opts
        .eval_tasks
        .clone()
        .unwrap_or_else(|| evaluation_tasks(seed, opts.eval));

    let before = arms.measure("before", catalog.clone(), &eval_tasks).await?;
    let forged_catalog = arms.train(catalog).await?;
    let forged_skills = forged_names(&forged_catalog);
    let after = arms.measure("after", forged_catalog, &eval_tasks).await?;
    Ok(SeedResult {
        seed,
        forged_skills,
        arms: vec![before, after],
    })
}

/// A seed's scratch home and notes workspace under `dir`; compiled
/// handlers are shared with the caller's cache.
fn scratch_paths(paths: &Paths, dir: &Path) -> Result<Paths, ForgeEvalError> {
    let workspace = dir.join("ws");
    std::fs::create_dir_all(dir.join("home")).map_err(scratch_error(dir))?;
    write_workspace(&workspace).map_err(scratch_error(&workspace))?;
    Ok(Paths {
        home: dir.join("home"),
        workspace,
        bundled: paths.bundled.clone(),
        extra_skills: Vec::new(),
        cache_override: Some(paths.cache_dir()),
        workspace_origin: Default::default(),
    })
}

/// The scratch catalog, which must hold the summarizer and the scenario skill.
fn scenario_catalog(scratch: &Paths) -> Result<Arc<Catalog>, ForgeEvalError> {
    let catalog = Arc::new(Catalog::load(&scratch.roots(), &LoadOptions::default()));
    if catalog.get(SUMMARIZER).is_none() {
        return Err(ForgeEvalError::NoSummarizer);
    }
    if catalog.get(SKILL).is_none() {
        let why: Vec<String> = catalog.warnings().iter().map(|w| w.to_string()).collect();
        return Err(ForgeEvalError::NoSkill(why.join("; ")));
    }
    Ok(catalog)
}

fn forged_names(catalog: &Catalog) -> Vec<String> {
    catalog
        .skills()
        .iter()
        .filter(|s| s.source == Source::Forged)
        .map(|s| s.name.clone())
        .collect()
}

/// What one seed's arms and training share.
struct SeedArms<'a> {
    scratch: &'a Paths,
    config: &'a Config,
    opts: &'a Options,
    seed: u64,
}

impl SeedArms<'_> {
    /// A fresh model for one arm, counting calls to tools not offered.
    fn model(&self) -> Arc<OfferCheck> {
        Arc::new(OfferCheck {
            inner: self
                .opts
                .model
                .clone()
                .unwrap_or_else(|| Arc::new(SimulatedBriefAgent::new(self.seed))),
            not_offered: AtomicU64::new(0),
        })
    }

    /// A runner on `catalog`; `train` turns recording and forging on.
    fn runner(&self, catalog: Arc<Catalog>, train: bool, model: Arc<OfferCheck>) -> Runner {
        let mut cfg = self.config.clone();
        cfg.learning.record = train;
        cfg.learning.auto_every = 0;
        cfg.forge.create.enabled = train;
        // Improvement is not what is measured, and would change skills
        // between the arms.
        cfg.forge.improve.enabled = false;
        // The scenario's skill and the skills forged from it need their
        // declared file access.
        cfg.trust.workspace = true;
        cfg.trust.forged = true;
        Runner::with_catalog(
            self.scratch.clone(),
            cfg,
            catalog,
            Extras {
                provider: Some(model),
                ..Extras::default()
            },
        )
    }

    /// The evaluation tasks on `catalog`, recording off.
    async fn measure(
        &self,
        label: &'static str,
        catalog: Arc<Catalog>,
        tasks: &[EvalTask],
    ) -> Result<ArmResult, ForgeEvalError> {
        let m = self.model();
        let runner = self.runner(catalog, false, m.clone());
        arm(label, &runner, &self.scratch.workspace, tasks, &m).await
    }

    /// The training stream with forging on; returns the catalog it left.
    async fn train(&self, catalog: Arc<Catalog>) -> Result<Arc<Catalog>, ForgeEvalError> {
        let trainer = self.runner(catalog, true, self.model());
        for t in training_tasks(self.seed, self.opts.train) {
            clear_out(&self.scratch.workspace)?;
            run_one(&trainer, &t.task).await?;
        }
        if !trainer.flush() {
            tracing::warn!("eval forge: some training runs were not stored in time");
        }
        Ok(trainer.catalog())
    }
}

fn clear_out(workspace: &Path) -> Result<(), ForgeEvalError> {
    let out = workspace.join("out");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(scratch_error(&out))
}

async fn run_one(runner: &Runner, task: &str) -> Result<RunOutcome, ForgeEvalError> {
    let catalog = runner.catalog();
    let skill = catalog
        .get(SKILL)
        .ok_or_else(|| ForgeEvalError::NoSkill("gone from the catalog".into()))?;
    Ok(runner
        .run_skill(
            skill,
            "eval forge".into(),
            task,
            &Map::new(),
            Instant::now(),
        )
        .await?)
}

async fn arm(
    name: &'static str,
    runner: &Runner,
    workspace: &Path,
    tasks: &[EvalTask],
    model: &OfferCheck,
) -> Result<ArmResult, ForgeEvalError> {
    let pipelines = pipeline_steps(&runner.catalog());
    let mut tally = Tally::default();
    let started = Instant::now();
    for t in tasks {
        clear_out(workspace)?;
        let o = run_one(runner, &t.task).await?;
        tally.count_run(&o, &pipelines);
        match check(workspace, &t.source) {
            Ok(()) => tally.ok += 1,
            Err(m) if tally.misses.len() < 5 => tally.misses.push(format!("{} -> {m}", t.task)),
            Err(_) => {}
        }
    }
    let n = tasks.len().max(1) as f64;
    Ok(ArmResult {
        arm: name,
        tasks: tasks.len(),
        succeeded: tally.ok,
        success_rate: tally.ok as f64 / n,
        run_success_rate: tally.run_ok as f64 / n,
        model_calls_per_task: tally.calls as f64 / n,
        tool_steps_per_task: tally.steps as f64 / n,
        executed_calls_per_task: tally.executed as f64 / n,
        ms_per_task: started.elapsed().as_secs_f64() * 1000.0 / n,
        forged_tool_tasks: tally.forged,
        calls_not_offered: model.not_offered.load(Ordering::Relaxed),
        sample_misses: tally.misses,
    })
}

/// Steps each forged pipeline runs, by its tool name.
fn pipeline_steps(catalog: &Catalog) -> BTreeMap<String, usize> {
    catalog
        .skills()
        .iter()
        .filter(|s| s.source == Source::Forged)
        .filter_map(|s| {
            let steps = s
                .meta
                .skillhost
                .pipeline
                .as_ref()?
                .get("steps")?
                .as_array()?;
            Some((format!("skill_{}", s.name), steps.len()))
        })
        .collect()
}

/// Counts over one arm's tasks.
#[derive(Default)]
struct Tally {
    ok: usize,
    run_ok: usize,
    calls: u64,
    steps: u64,
    executed: u64,
    forged: usize,
    misses: Vec<String>,
}

impl Tally {
    /// Adds a run's model calls and tool steps; a forged pipeline's call
    /// counts each of its steps as executed.
    fn count_run(&mut self, o: &RunOutcome, pipelines: &BTreeMap<String, usize>) {
        self.run_ok += usize::from(o.succeeded());
        self.calls += u64::from(o.model_calls);
        let mut used_forged = false;
        for s in &o.trajectory {
            if let Step::Tool { tool, .. } = s {
                self.steps += 1;
                match pipelines.get(tool) {
                    Some(n) => {
                        self.executed += *n as u64;
                        used_forged = true;
                    }
                    None => self.executed += 1,
                }
            }
        }
        self.forged += usize::from(used_forged);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_phrasings_parse_are_new_and_name_only_evaluation_notes() {
        let tasks = parse_tasks(PHRASINGS).expect("shipped file");
        assert!(tasks.len() >= 20);
        let train: Vec<EvalTask> = (0..20).flat_map(|s| training_tasks(s, 20)).collect();
        for t in &tasks {
            assert!(
                EVAL_QUARTERS
                    .iter()
                    .any(|q| t.source.starts_with(&format!("q{q}-")))
            );
            assert!(train.iter().all(|x| x.task != t.task), "{}", t.task);
        }
        for t in evaluation_tasks(3, 50) {
            assert!(
                train
                    .iter()
                    .all(|x| x.task != t.task && x.source != t.source)
            );
        }
    }

    #[test]
    fn no_sentence_is_in_two_notes() {
        let all = notes();
        let mut seen = std::collections::BTreeSet::new();
        for (_, text) in &all {
            for s in sentences(text) {
                assert!(seen.insert(s.to_owned()), "{s}");
            }
        }
    }

    #[test]
    fn bad_task_lines_are_refused() {
        assert!(parse_tasks("{\"task\": \"x\", \"source\": \"q9-none\"}").is_err());
        assert!(parse_tasks("not json").is_err());
        assert!(parse_tasks("# only a comment\n").is_err());
    }
}
