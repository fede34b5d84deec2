//! After runs are stored, on the run writer's thread (never inside a
//! call): a qualifying run becomes a skill, and a successful use of a
//! forged, user or workspace skill may improve it when a model is
//! configured. The run recorder calls it (`exec`'s recorder); see
//! docs/forge.md.

use crate::forge::{self, CreateOutcome, ForgeConfig, ImproveOutcome, SkillWriter};
use crate::grants::{Grants, TrustConfig};
use crate::llm::Provider;
use crate::paths::Paths;
use crate::skill::{Capabilities, Catalog, Skill, Source};
use crate::store::{RunRecord, RunStore};

/// What forging needs of the host's settings.
#[derive(Clone)]
pub struct Inputs {
    config: ForgeConfig,
    trust: TrustConfig,
    grants: Grants,
    writer: SkillWriter,
}

impl Inputs {
    /// `config` is `[forge]`; `trust` and `grants` decide what a skill
    /// has in effect.
    pub fn new(paths: &Paths, config: ForgeConfig, trust: TrustConfig, grants: Grants) -> Self {
        Inputs {
            config,
            trust,
            grants,
            writer: SkillWriter::new(paths),
        }
    }

    /// Whether any of `runs` may lead to a write (cheap; no file read).
    pub fn wants(&self, runs: &[RunRecord], has_model: bool) -> bool {
        runs.iter().any(|r| {
            (self.config.create.enabled && forge::create::qualifies(r, &self.config.create))
                || (has_model && self.config.improve.enabled && r.success)
        })
    }

    /// `[forge.mine] auto_every`, or 0 when the forge writes no new skills.
    pub fn mine_every(&self) -> u64 {
        if self.config.create.enabled {
            self.config.mine.auto_every
        } else {
            0
        }
    }

    /// What `skill` has in effect: declared ∩ granted, with trust.
    fn effective(&self, skill: &Skill) -> Option<Capabilities> {
        // The folder is pinned only when a grant names the skill: only
        // then does the pin decide anything.
        let fingerprint = if self.grants.contains_key(&skill.name) {
            skill.pin().ok()?
        } else {
            String::new()
        };
        let e = crate::grants::effective(
            &skill.name,
            skill.source,
            &skill.meta.skillhost.capabilities,
            &skill.meta.skillhost.limits,
            &fingerprint,
            &self.trust,
            &self.grants,
        );
        Some(e.capabilities)
    }
}

/// Forges from `runs`; true when a skill was written or changed.
pub async fn after_runs(
    inputs: &Inputs,
    runs: &[RunRecord],
    catalog: &Catalog,
    store: &dyn RunStore,
    provider: Option<&dyn Provider>,
) -> bool {
    let mut changed = false;
    for run in runs {
        let Some(skill) = catalog.get(&run.skill) else {
            continue;
        };
        // A forged skill's own runs improve it; they do not spawn another.
        if inputs.config.create.enabled
            && skill.source != Source::Forged
            && forge::create::qualifies(run, &inputs.config.create)
        {
            changed |= create(inputs, run, skill, catalog, store, provider).await;
        }
        if let Some(provider) = provider
            && inputs.config.improve.enabled
            && run.success
            && matches!(
                skill.source,
                Source::Forged | Source::User | Source::Workspace
            )
        {
            changed |= improve(inputs, run, skill, provider).await;
        }
    }
    changed
}

async fn create(
    inputs: &Inputs,
    run: &RunRecord,
    skill: &Skill,
    catalog: &Catalog,
    store: &dyn RunStore,
    provider: Option<&dyn Provider>,
) -> bool {
    let Some(bound) = inputs.effective(skill) else {
        return false;
    };
    let Some(mut draft) = forge::create::draft_from_run(run, &bound, &inputs.config.create) else {
        return false;
    };
    if let Some(p) = provider {
        forge::create::name_with_model(&mut draft, run, p).await;
    }
    let last_used = last_used_in(store);
    let around = forge::create::Neighbours {
        catalog,
        last_used: &last_used,
    };
    match forge::create::write(
        &inputs.writer,
        &draft,
        (&bound, skill.meta.allowed_tools.as_deref()),
        &inputs.config.create,
        &around,
    ) {
        Ok(CreateOutcome::Written { .. }) => true,
        Ok(CreateOutcome::NearDuplicate { .. }) => false,
        // Logged by the writer where it happened.
        Err(_) => false,
    }
}

async fn improve(inputs: &Inputs, run: &RunRecord, skill: &Skill, provider: &dyn Provider) -> bool {
    let outcome = forge::improve::improve(
        &inputs.writer,
        skill,
        std::slice::from_ref(run),
        provider,
        &inputs.config.improve,
    )
    .await;
    match outcome {
        Ok(ImproveOutcome::Improved { .. }) => {
            if inputs.grants.contains_key(&skill.name) {
                tracing::warn!(
                    skill = %skill.name,
                    "forge: skill `{}` was improved: its grant is pinned to the old fingerprint and no longer applies; `skillhost skills grant {}` grants the new version (`skillhost skills rollback {}` restores the old one)",
                    skill.name, skill.name, skill.name
                );
            }
            true
        }
        Ok(_) => false,
        Err(e) => {
            tracing::warn!(skill = %skill.name, "forge: improvement not written: {e}");
            false
        }
    }
}

/// What became of one mined candidate.
#[derive(Debug)]
pub enum MinedOutcome {
    Created(CreateOutcome),
    /// Not written, and why (its run is gone, its skill is not in the
    /// catalog, the sequence does not replay, or the writer refused).
    Skipped(String),
}

/// Writes mined candidates as skills through the same writer, checks and
/// near-duplicate rule as forging from one run: each from its first
/// supporting run, cut to the candidate's own calls.
pub fn write_mined(
    inputs: &Inputs,
    catalog: &Catalog,
    store: &dyn RunStore,
    candidates: &[forge::mine::Candidate],
) -> Vec<MinedOutcome> {
    write_candidates(inputs, catalog, store, candidates)
}

/// The automatic mining pass: mines the latest `auto_window` runs and
/// writes the candidates; true when a skill was written. What became of
/// each candidate is logged (a near-duplicate of a skill forged earlier is
/// the usual outcome once a sequence has its skill).
pub fn mine_latest(inputs: &Inputs, catalog: &Catalog, store: &dyn RunStore) -> bool {
    let config = &inputs.config.mine;
    let report = match forge::mine::mine_latest(store, config, config.auto_window) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(
                "forge: automatic mining failed: {}",
                crate::types::Chain(&e)
            );
            return false;
        }
    };
    tracing::debug!(
        runs = report.runs,
        candidates = report.candidates.len(),
        "forge: mined the latest runs"
    );
    let mut written = false;
    let outcomes = write_candidates(inputs, catalog, store, &report.candidates);
    for (c, outcome) in report.candidates.iter().zip(outcomes) {
        let tools = c.tools.join(" → ");
        match outcome {
            MinedOutcome::Created(CreateOutcome::Written { name, .. }) => {
                written = true;
                tracing::info!(skill = %name, support = c.support, "forge: mined {tools} into skill `{name}`");
            }
            MinedOutcome::Created(CreateOutcome::NearDuplicate { of, similarity }) => {
                tracing::debug!("forge: mined {tools}: near-duplicate of `{of}` ({similarity:.2})");
            }
            MinedOutcome::Skipped(why) => tracing::debug!("forge: mined {tools}: skipped: {why}"),
        }
    }
    written
}

fn write_candidates(
    inputs: &Inputs,
    catalog: &Catalog,
    store: &dyn RunStore,
    candidates: &[forge::mine::Candidate],
) -> Vec<MinedOutcome> {
    let last_used = last_used_in(store);
    let around = forge::create::Neighbours {
        catalog,
        last_used: &last_used,
    };
    candidates
        .iter()
        .map(|c| match write_one(inputs, catalog, store, &around, c) {
            Ok(outcome) => MinedOutcome::Created(outcome),
            Err(why) => MinedOutcome::Skipped(why),
        })
        .collect()
}

fn write_one(
    inputs: &Inputs,
    catalog: &Catalog,
    store: &dyn RunStore,
    around: &forge::create::Neighbours<'_>,
    candidate: &forge::mine::Candidate,
) -> Result<CreateOutcome, String> {
    let id = *candidate.run_ids.first().ok_or("no supporting run")?;
    let run = store
        .get_run(id)
        .map_err(|e| e.to_string())?
        .ok_or(format!("run {id} is no longer stored"))?;
    let skill = catalog
        .get(&run.skill)
        .ok_or(format!("skill `{}` is not in the catalog", run.skill))?;
    let bound = inputs
        .effective(skill)
        .ok_or(format!("cannot read skill `{}`", skill.name))?;
    let cut = cut_to(&run, &candidate.tools).ok_or(format!(
        "run {id} does not hold the sequence as successful calls"
    ))?;
    let create = forge::CreateConfig {
        min_tool_calls: candidate.tools.len(),
        ..inputs.config.create.clone()
    };
    let mut draft = forge::create::draft_from_run(&cut, &bound, &create)
        .ok_or(format!("run {id}'s calls do not make a skill"))?;
    draft.runs = candidate.run_ids.clone();
    forge::create::write(
        &inputs.writer,
        &draft,
        (&bound, skill.meta.allowed_tools.as_deref()),
        &create,
        around,
    )
    .map_err(|e| e.to_string())
}

/// `run` with only the successful tool calls that form `tools`, in order
/// and contiguous among its successful calls.
fn cut_to(run: &RunRecord, tools: &[String]) -> Option<RunRecord> {
    let ok: Vec<&crate::store::StepRecord> = run
        .steps
        .iter()
        .filter(|s| s.kind == "tool" && s.error.is_none())
        .collect();
    let start = ok.windows(tools.len()).position(|w| {
        w.iter()
            .zip(tools)
            .all(|(s, t)| s.tool.as_deref() == Some(t.as_str()))
    })?;
    let mut cut = run.clone();
    cut.steps = ok[start..start + tools.len()]
        .iter()
        .map(|s| (*s).clone())
        .collect();
    Some(cut)
}

/// When a skill was last used: its latest recorded run.
fn last_used_in(store: &dyn RunStore) -> impl Fn(&str) -> Option<i64> + '_ {
    |name: &str| {
        store
            .recent_runs_of(name, 1)
            .ok()
            .and_then(|r| r.first().map(|r| r.at))
    }
}
