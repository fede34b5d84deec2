//! The task pipeline: pick the skill, build the context, run the first tier
//! that can answer, and report what happened.
//!
//! Tier 1 is the skill's own code: its sandboxed handler, or the tool
//! pipeline it declares. Tier 2 is the model loop, when a model is
//! configured. Tier 3 is the skill's template, which always answers.
//! Learned rules act at three points: prevention before a tier runs,
//! validation after it, recovery when a model-loop tool call fails.
//!
//! Every caller comes in through `Runner::run_via` (`entry`). The runner
//! keeps construction and the run's steps (`flow`); each tier is a
//! function of the `Call` it is handed (`call`, `tiers`).

mod admit;
mod call;
mod catalog_cell;
pub mod context;
mod effective;
mod entry;
mod files;
mod flow;
mod handler;
mod model_loop;
mod outcome;
mod pipeline;
mod progress;
mod record;
mod recorder;
mod select;
mod services;
pub mod shared;
pub mod template;
mod tiers;
mod usage;

use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Instant;

use serde_json::{Map, Value};

use crate::config::Config;
use crate::learn::Learning;
use crate::llm::Provider;
use crate::paths::Paths;
use crate::sandbox::{self, Sandbox};
use crate::skill::{Catalog, Skill};
use crate::store::{RunStore, StoreError};
use crate::tools::{SkillInvoker, Toolbox};
use crate::types::{BoxFuture, Chain, Failure, FailureClass, Output};
pub use catalog_cell::CatalogCell;
pub use context::ContextError;
pub use entry::Via;
use files::FileCache;
pub(crate) use files::MAX_SKILL_MD_BYTES;
pub use files::read_skill_and_handler;
pub use model_loop::{context_block, context_from_prompt};
pub use outcome::{RunError, RunOutcome, Step, Tier, Timings};
pub use progress::{Progress, ProgressSink, with_progress};
use recorder::{CycleInputs, Recorder};
pub use recorder::{ID_BLOCK as RUN_ID_BLOCK, open_store};
use services::LazyStore;
pub use usage::skill_usage;

/// One task to run.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    pub task: String,
    /// Run this skill instead of choosing one.
    pub skill: Option<String>,
    /// Caller-given context values (over the declared defaults).
    pub context: Map<String, Value>,
}

/// Runs tasks against one catalog and configuration. Cheap to clone; the
/// sandbox (and its compiled handlers), the toolbox and the store are made
/// on first use and shared by clones. A runner made by a `with_*` method
/// keeps the sandbox and the store; only the toolbox, which runs nested
/// skills through its own runner, is made anew.
#[derive(Clone)]
pub struct Runner {
    shared: Arc<Shared>,
}

struct Shared {
    paths: Paths,
    config: Config,
    /// Swapped whole when the forge adds or changes a skill; a run keeps
    /// the catalog it started with.
    catalog: Arc<CatalogCell>,
    provider: Option<Arc<dyn Provider>>,
    learning: Option<Arc<Learning>>,
    /// Use the model even when the skill has a handler (ablations).
    prefer_model: bool,
    sandbox: OnceLock<Result<Arc<Sandbox>, sandbox::SandboxError>>,
    /// The toolbox (its `skill_<name>` tools come from the catalog) and
    /// the catalog generation it was made for.
    toolbox: Mutex<Option<(u64, Arc<Toolbox>)>>,
    /// The host's own paths, resolved once (see `Paths::control_paths`).
    control: OnceLock<Arc<crate::paths::ControlPaths>>,
    store: Arc<LazyStore>,
    recorder: Recorder,
    /// What this runner read of its skills' files.
    files: Arc<FileCache>,
    /// The operator grants in force: the config's, with those of a store
    /// the hosts share over them (see [`Runner::catch_up`]).
    grants: RwLock<Arc<crate::grants::Grants>>,
    /// How far this runner has followed a shared store.
    follower: crate::shared::follow::Follower,
    me: Weak<Shared>,
}

/// Optional parts of a runner.
#[derive(Clone, Default)]
pub struct Extras {
    pub provider: Option<Arc<dyn Provider>>,
    pub learning: Option<Arc<Learning>>,
    pub prefer_model: bool,
    /// The store, already open (else it is opened on first use).
    pub store: Option<Arc<dyn RunStore>>,
}

impl Runner {
    pub fn new(paths: Paths, config: Config, catalog: Catalog) -> Self {
        Self::build(paths, config, Arc::new(catalog), Extras::default())
    }

    /// A runner sharing a catalog that is already behind an `Arc`.
    pub fn with_catalog(
        paths: Paths,
        config: Config,
        catalog: Arc<Catalog>,
        extras: Extras,
    ) -> Self {
        Self::build(paths, config, catalog, extras)
    }

    fn build(paths: Paths, config: Config, catalog: Arc<Catalog>, extras: Extras) -> Self {
        let catalog = Arc::new(CatalogCell::new(catalog));
        let store = Arc::new(LazyStore::new(
            paths.state_dir(),
            config.store.clone(),
            config.kv_quota(),
            extras.store.clone(),
        ));
        Self::assemble(paths, config, catalog, extras, store)
    }

    fn assemble(
        paths: Paths,
        config: Config,
        catalog: Arc<CatalogCell>,
        extras: Extras,
        store: Arc<LazyStore>,
    ) -> Self {
        // Only kept rules take batching; in-memory rules count at once.
        let kept_learning = extras.learning.clone().filter(|l| l.is_kept());
        let recorder = Recorder::new(
            CycleInputs {
                paths: paths.clone(),
                catalog: catalog.clone(),
                config: config.learning.clone(),
                store: config.store.clone(),
                provider: extras.provider.clone(),
                #[cfg(feature = "forge")]
                forge: config.forge_inputs(&paths),
            },
            kept_learning,
        );
        Runner {
            shared: Arc::new_cyclic(|me| Shared {
                recorder,
                files: Default::default(),
                grants: RwLock::new(Arc::new(config.grants.clone())),
                follower: Default::default(),
                paths,
                config,
                catalog,
                provider: extras.provider,
                learning: extras.learning,
                prefer_model: extras.prefer_model,
                sandbox: OnceLock::new(),
                toolbox: Mutex::new(None),
                control: OnceLock::new(),
                store,
                me: me.clone(),
            }),
        }
    }

    fn extras(&self) -> Extras {
        let s = &self.shared;
        Extras {
            provider: s.provider.clone(),
            learning: s.learning.clone(),
            prefer_model: s.prefer_model,
            store: None,
        }
    }

    fn rebuild(&self, extras: Extras) -> Self {
        let s = &self.shared;
        let runner = Self::assemble(
            s.paths.clone(),
            s.config.clone(),
            s.catalog.clone(),
            extras,
            s.store.clone(),
        );
        let new = &runner.shared;
        if let Some(sandbox) = s.sandbox.get() {
            let _ = new.sandbox.set(sandbox.clone());
        }
        if let Some(control) = s.control.get() {
            let _ = new.control.set(control.clone());
        }
        runner
    }

    /// The same runner with a model for tier 2.
    pub fn with_provider(self, provider: Arc<dyn Provider>) -> Self {
        self.rebuild(Extras {
            provider: Some(provider),
            ..self.extras()
        })
    }

    /// The same runner applying these learned rules.
    pub fn with_learning(self, learning: Arc<Learning>) -> Self {
        self.rebuild(Extras {
            learning: Some(learning),
            ..self.extras()
        })
    }

    /// The workspace store (opened on first use), once every run this
    /// runner recorded so far is in it.
    pub fn store(&self) -> Result<&dyn RunStore, StoreError> {
        self.flush();
        self.shared.store.get_store()
    }

    /// Waits (up to a minute) until every run recorded so far is in the
    /// database; false if some are still queued (they are in the journal),
    /// sooner if the store keeps failing.
    pub fn flush(&self) -> bool {
        self.shared
            .recorder
            .flush(std::time::Duration::from_secs(60))
    }

    /// The learned rules in force, if any.
    pub fn learning(&self) -> Option<&Arc<Learning>> {
        self.shared.learning.as_ref()
    }

    /// The catalog as it is now (see [`Runner::reload_catalog`]).
    pub fn catalog(&self) -> Arc<Catalog> {
        self.shared.catalog.get()
    }

    /// The swappable catalog: its generation, and a receiver that hears
    /// of every swap (the MCP server's `tools/list_changed`).
    pub fn catalog_cell(&self) -> &Arc<CatalogCell> {
        &self.shared.catalog
    }

    /// Loads the catalog from the roots again and swaps it in: later runs,
    /// in this process too, see skills added or changed on disk. Runs
    /// under way keep the catalog they started with.
    pub fn reload_catalog(&self) -> u64 {
        let roots = self.shared.paths.roots();
        let cache = crate::audit::FindingsCache::open(&self.shared.paths.audit_cache());
        let catalog = Catalog::load_audited(
            &roots,
            &crate::skill::LoadOptions::default(),
            &self.shared.config.audit,
            Some(&cache),
        );
        if let Err(e) = cache.save() {
            tracing::debug!("cannot keep the audit's findings: {e}");
        }
        self.shared.catalog.swap(catalog)
    }

    /// The skill's validators, compiled once per runner (their regular
    /// expressions took milliseconds per run), with what did not compile.
    /// The gate reads a handler's answers through them too.
    pub fn validators(&self, skill: &Skill) -> Arc<ValidatorSet> {
        self.shared.files.validators(skill)
    }

    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    pub fn paths(&self) -> &Paths {
        &self.shared.paths
    }

    /// Runs an already selected skill; `started` is when selection began.
    pub async fn run_skill(
        &self,
        skill: &Skill,
        selected_by: String,
        task: &str,
        given: &Map<String, Value>,
        started: Instant,
    ) -> Result<RunOutcome, RunError> {
        // Boxed: the run's state is large, and a caller's future (an MCP
        // request is a spawned task) is moved whole when it is spawned;
        // a pointer moves for less than the state would.
        Box::pin(self.run_at_depth(skill, selected_by, task, given, started, 0)).await
    }
}

/// Runs `skill_<name>` tools: a nested run of that skill.
struct Invoker(Weak<Shared>);

impl SkillInvoker for Invoker {
    fn invoke<'a>(
        &'a self,
        skill: &'a str,
        task: &'a str,
        context: Map<String, Value>,
        depth: u32,
    ) -> BoxFuture<'a, Result<Output, Failure>> {
        Box::pin(async move {
            let shared = self.0.upgrade().ok_or_else(|| {
                Failure::new(FailureClass::Unavailable, "the runner is shutting down")
            })?;
            let runner = Runner { shared };
            let catalog = runner.catalog();
            if let Some(why) = catalog.held_back_reason(skill) {
                return Err(Failure::new(FailureClass::Denied, why));
            }
            let s = catalog.get(skill).ok_or_else(|| {
                Failure::new(
                    FailureClass::UnknownSkill,
                    format!("no skill named `{skill}`"),
                )
            })?;
            let outcome = Box::pin(runner.run_at_depth(
                s,
                "tool".into(),
                task,
                &context,
                Instant::now(),
                depth,
            ))
            .await
            .map_err(|e| Failure::new(FailureClass::RunError, Chain(&e).to_string()))?;
            match (outcome.output, outcome.failure) {
                (_, Some(f)) => Err(f),
                (Some(o), None) => Ok(o),
                (None, None) => Err(Failure::new(
                    FailureClass::NoOutput,
                    format!("skill `{skill}` gave no output"),
                )),
            }
        })
    }
}

/// A skill's validators and the problems of those that did not compile.
pub type ValidatorSet = (Vec<crate::learn::Validator>, Vec<String>);

#[cfg(test)]
mod tests {
    use super::Tier;

    #[test]
    fn a_tier_is_stored_and_logged_by_its_serde_name() {
        for tier in [Tier::Handler, Tier::Pipeline, Tier::Model, Tier::Template] {
            assert_eq!(
                serde_json::to_value(tier).expect("a tier serialises"),
                tier.as_str(),
                "{tier:?}"
            );
        }
    }
}
