//! After runs are stored, on the run writer's thread (never inside a
//! call): a qualifying run becomes a skill, and a successful use of a
//! forged, user or workspace skill may improve it when a model is
//! configured. See the forge module and docs/forge.md.

use crate::config::Config;
use crate::forge::{self, CreateOutcome, ForgeConfig, ImproveOutcome, SkillWriter};
use crate::grants::{Grants, TrustConfig};
use crate::llm::Provider;
use crate::paths::Paths;
use crate::skill::{Capabilities, Catalog, Skill, Source};
use crate::store::{RunRecord, Store};

/// What forging needs of the runner's settings.
#[derive(Clone)]
pub(crate) struct Inputs {
    config: ForgeConfig,
    trust: TrustConfig,
    grants: Grants,
    writer: SkillWriter,
}

impl Inputs {
    pub fn new(paths: &Paths, config: &Config) -> Self {
        Inputs {
            config: config.forge.clone(),
            trust: config.trust.clone(),
            grants: config.grants.clone(),
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

    /// What `skill` has in effect: declared ∩ granted, with trust.
    fn effective(&self, skill: &Skill) -> Option<Capabilities> {
        let fingerprint = super::skill_fingerprint(skill).ok()?;
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
pub(super) async fn after_runs(
    inputs: &Inputs,
    runs: &[RunRecord],
    catalog: &Catalog,
    store: &Store,
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
    store: &Store,
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
    let last_used = |name: &str| {
        store
            .recent_runs_of(name, 1)
            .ok()
            .and_then(|r| r.first().map(|r| r.at))
    };
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
