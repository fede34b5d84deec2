//! The task pipeline: pick the skill, build the context, run the first tier
//! that can answer, and report what happened.
//!
//! Tier 1 is the skill's own code: its sandboxed handler, or the tool
//! pipeline it declares. Tier 2 is the model loop, when a model is
//! configured. Tier 3 is the skill's template, which always answers.
//! Learned rules act at three points: prevention before a tier runs,
//! validation after it, recovery when a model-loop tool call fails.

mod catalog_cell;
pub mod context;
#[cfg(feature = "forge")]
mod forging;
pub mod grant_command;
mod model_loop;
mod recorder;
mod services;
pub mod shared;
pub mod shared_skills;
pub mod template;
mod usage;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::approval::Refusal;
use crate::config::Config;
use crate::grants::Effective;
use crate::learn::condition::Facts;
use crate::learn::{Applied, Learning};
use crate::llm::Provider;
use crate::paths::Paths;
use crate::sandbox::{
    self, CallOutcome, CallRequest, FileRoots, Handler, LogLine, Sandbox, SandboxOptions, Services,
};
use crate::skill::{Catalog, FileIdentity, LimitSpec, SearchOptions, Skill, SkillFileError};
use crate::store::{KvQuota, RunStore, StoreError};
use crate::tools::{self, CallContext, Caller, Policy, SkillInvoker, ToolError, Toolbox};
use crate::types::{BoxFuture, Chain, Failure, FailureClass, Output};
pub use catalog_cell::CatalogCell;
#[cfg(feature = "forge")]
pub use forging::{MinedOutcome, write_mined};
use grant_command::{GrantFile, grant_command};
use recorder::{CycleInputs, Recorder};
pub use recorder::{ID_BLOCK as RUN_ID_BLOCK, open_store};
use services::{HandlerTools, LazyStore, ProviderModelHost};
pub use usage::skill_usage;

pub use context::ContextError;

/// Biggest handler component read from disk (interpreter-based components
/// for JavaScript and Python are 10-20 MB).
const MAX_HANDLER_BYTES: u64 = 128 << 20;
pub(crate) const MAX_SKILL_MD_BYTES: u64 = 4 << 20;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("no skill named `{0}`; see `skillhost skills list`")]
    UnknownSkill(String),
    /// The skill text audit flagged it and `[audit] allow` does not name it.
    #[error("{0}")]
    HeldBack(String),
    #[error(
        "no skill matches this task; name one with --skill (see `skillhost skills search \"TASK\"`)"
    )]
    NoMatch,
    #[error(transparent)]
    Context(#[from] ContextError),
    #[error(transparent)]
    Sandbox(#[from] sandbox::SandboxError),
}

impl RunError {
    /// The failure class a client sees when a run cannot start.
    pub fn class(&self) -> FailureClass {
        match self {
            RunError::UnknownSkill(_) => FailureClass::UnknownSkill,
            RunError::HeldBack(_) => FailureClass::Denied,
            RunError::NoMatch => FailureClass::NoMatch,
            RunError::Context(_) => FailureClass::InvalidContext,
            RunError::Sandbox(_) => FailureClass::SandboxError,
        }
    }
}

/// What a run tells its caller while it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// The skill's handler is in no cache: this call waits for a compile
    /// (seconds for a 12 MB JavaScript or Python component).
    Compiling {
        skill: String,
        bytes: usize,
        tier: sandbox::Tier,
    },
}

/// Where a caller wants [`Progress`]: a terminal line, an MCP notification.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

tokio::task_local! {
    static PROGRESS: ProgressSink;
}

/// Runs `work` (a run, or anything that runs skills) telling `sink` how it
/// goes. Scoped to the task, so concurrent requests each get their own.
pub async fn with_progress<F: std::future::Future>(sink: ProgressSink, work: F) -> F::Output {
    PROGRESS.scope(sink, work).await
}

/// One task to run.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    pub task: String,
    /// Run this skill instead of choosing one.
    pub skill: Option<String>,
    /// Caller-given context values (over the declared defaults).
    pub context: Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Tier 1: the skill's sandboxed handler.
    Handler,
    /// Tier 1: the tool pipeline the skill declares as its handler.
    Pipeline,
    /// Tier 2: the model loop.
    Model,
    /// Tier 3: the skill's template.
    Template,
}

impl Tier {
    /// Its name as stored and logged (its serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Handler => "handler",
            Tier::Pipeline => "pipeline",
            Tier::Model => "model",
            Tier::Template => "template",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    pub select_us: u64,
    pub load_us: u64,
    pub instantiate_us: u64,
    pub call_us: u64,
    pub total_us: u64,
    /// Model calls repeated after a 429 or 5xx answer, over the run.
    pub model_retries: u32,
}

/// One step of a run's trajectory: a model turn or a tool call.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Step {
    Model {
        step: u32,
        request_bytes: usize,
        response_bytes: usize,
        tool_calls: usize,
        duration_us: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    Tool {
        step: u32,
        caller: Caller,
        tool: String,
        arguments: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_class: Option<FailureClass>,
        #[serde(skip_serializing_if = "Option::is_none")]
        recovery: Option<String>,
        duration_us: u64,
    },
}

/// Everything a run produced; `--json` prints this.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutcome {
    /// The run's id in the store, when it was recorded.
    pub run_id: Option<i64>,
    pub skill: String,
    pub skill_version: String,
    /// Why this skill was chosen.
    pub selected_by: String,
    pub tier: Tier,
    pub output: Option<Output>,
    pub failure: Option<Failure>,
    /// The answer a validator refused, kept for the run record: learning
    /// needs to see what was wrong with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected_output: Option<String>,
    pub context: Map<String, Value>,
    /// How the skill's capabilities were decided.
    pub grants: Option<String>,
    /// Things the user should know (e.g. a stale grant).
    pub notices: Vec<String>,
    /// Things only the host's operator can act on (the run could not be
    /// recorded): logged where they happen, and never part of an answer
    /// to a client.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operator_notes: Vec<String>,
    /// Learned rules that fired, and what they changed.
    pub rules_applied: Vec<Applied>,
    /// 1, or 2 when a validation rule retried the run.
    pub attempts: u32,
    pub model_calls: u32,
    /// Model turns and tool calls, in order.
    pub trajectory: Vec<Step>,
    pub log: Vec<LogLine>,
    pub events: Vec<String>,
    pub timings: Timings,
}

impl RunOutcome {
    pub fn succeeded(&self) -> bool {
        self.failure.is_none()
    }
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
    /// What this runner read of each skill's files, by SKILL.md path.
    known: Mutex<HashMap<PathBuf, KnownFiles>>,
    /// Each skill's compiled validators, by SKILL.md path (the catalog
    /// does not change under a runner).
    validators: Mutex<HashMap<PathBuf, Arc<ValidatorSet>>>,
    /// The operator grants in force: the config's, with those of a store
    /// the hosts share over them (see [`Runner::catch_up`]).
    grants: RwLock<Arc<crate::grants::Grants>>,
    /// The shared store's generation this runner last caught up with.
    shared_seen: Mutex<Option<i64>>,
    /// Hears the shared store's announcements of changes (made on first
    /// use; None before, or where the store makes none).
    shared_heard: Mutex<Option<tokio::sync::watch::Receiver<u64>>>,
    me: Weak<Shared>,
}

/// The key-value quota `[limits]` sets for every skill.
pub fn kv_quota(config: &Config) -> KvQuota {
    KvQuota {
        max_bytes: config.limits.kv_quota_kb.saturating_mul(1024),
        max_keys: config.limits.kv_max_keys,
    }
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
            kv_quota(&config),
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
                forge: forging::Inputs::new(&paths, &config),
            },
            kept_learning,
        );
        Runner {
            shared: Arc::new_cyclic(|me| Shared {
                recorder,
                known: Mutex::new(HashMap::new()),
                validators: Mutex::new(HashMap::new()),
                grants: RwLock::new(Arc::new(config.grants.clone())),
                shared_seen: Mutex::new(None),
                shared_heard: Mutex::new(None),
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

    /// A tool error in the model loop: the learned recovery rule for it, if
    /// any, edits the context.
    pub(crate) fn recover(
        &self,
        skill: &Skill,
        task: &str,
        error: &ToolError,
        context: &mut Map<String, Value>,
    ) -> Option<Applied> {
        self.shared.learning.as_ref()?.recover(
            &skill.name,
            task,
            error.class().as_str(),
            &error.to_string(),
            context,
            Some(&self.config().defaults),
        )
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

    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    pub fn paths(&self) -> &Paths {
        &self.shared.paths
    }

    /// The shared sandbox, created on first use.
    pub fn sandbox(&self) -> Result<Arc<Sandbox>, sandbox::SandboxError> {
        let s = &self.shared;
        s.sandbox
            .get_or_init(|| {
                let options = SandboxOptions {
                    net: crate::netguard::NetPolicy::new(s.config.network.allow_private.clone()),
                    ..SandboxOptions::from_config(
                        &s.config.sandbox,
                        Some(s.paths.cache_dir().join("components")),
                    )
                };
                Sandbox::new(&options).map(Arc::new)
            })
            .clone()
    }

    /// The sandbox, if a run has made it.
    pub fn sandbox_if_made(&self) -> Option<Arc<Sandbox>> {
        self.shared
            .sandbox
            .get()
            .and_then(|s| s.as_ref().ok().cloned())
    }

    /// The tool registry with the configured policy, created on first use
    /// and again after the catalog changed.
    pub fn toolbox(&self) -> Arc<Toolbox> {
        let s = &self.shared;
        let generation = s.catalog.generation();
        let mut cached = lock(&s.toolbox);
        if let Some((g, tb)) = cached.as_ref()
            && *g == generation
        {
            return tb.clone();
        }
        let invoker: Arc<dyn SkillInvoker> = Arc::new(Invoker(s.me.clone()));
        let mut tb = Toolbox::standard(
            Policy::new(s.config.tools.clone()),
            s.paths.workspace.clone(),
            s.catalog.get(),
            invoker,
        );
        tb.net = crate::netguard::NetPolicy::new(s.config.network.allow_private.clone());
        tb.control = self.control_paths().clone();
        let tb = Arc::new(tb);
        *cached = Some((generation, tb.clone()));
        tb
    }

    /// Picks the skill for a request from `catalog` (see
    /// [`Runner::catalog`]): the named one, or the best match (pinned
    /// skills first, usage breaking ties; see `skill::search`).
    pub fn select<'c>(
        &self,
        catalog: &'c Catalog,
        req: &RunRequest,
    ) -> Result<(&'c Skill, String), RunError> {
        if let Some(name) = &req.skill {
            if let Some(why) = catalog.held_back_reason(name) {
                return Err(RunError::HeldBack(why));
            }
            return catalog
                .get(name)
                .map(|s| (s, "--skill".to_owned()))
                .ok_or_else(|| RunError::UnknownSkill(name.clone()));
        }
        let usage = usage::LazyUsage::new(&self.shared.store);
        let opts = SearchOptions {
            pinned: &self.shared.config.catalog.pinned,
            tags: &[],
            usage: &usage,
        };
        catalog
            .search_with(&req.task, 1, &opts)
            .into_iter()
            .next()
            .map(|m| (m.skill, format!("{} (score {:.2})", m.why, m.score)))
            .ok_or(RunError::NoMatch)
    }

    /// Selects the skill for `req` and runs it.
    pub async fn run(&self, req: &RunRequest) -> Result<RunOutcome, RunError> {
        let started = Instant::now();
        self.catch_up();
        let catalog = self.catalog();
        let (skill, selected_by) = self.select(&catalog, req)?;
        self.run_skill(skill, selected_by, &req.task, &req.context, started)
            .await
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
        self.run_at_depth(skill, selected_by, task, given, started, 0)
            .await
    }

    async fn run_at_depth(
        &self,
        skill: &Skill,
        selected_by: String,
        task: &str,
        given: &Map<String, Value>,
        started: Instant,
        depth: u32,
    ) -> Result<RunOutcome, RunError> {
        let context = context::build(&skill.meta.context_fields, given)?;
        let select_us = micros(started);
        let mut outcome = RunOutcome {
            run_id: None,
            skill: skill.name.clone(),
            skill_version: skill.version.clone(),
            selected_by,
            tier: Tier::Template,
            output: None,
            failure: None,
            rejected_output: None,
            context,
            grants: None,
            notices: Vec::new(),
            operator_notes: Vec::new(),
            rules_applied: Vec::new(),
            attempts: 0,
            model_calls: 0,
            trajectory: Vec::new(),
            log: Vec::new(),
            events: Vec::new(),
            timings: Timings {
                select_us,
                ..Timings::default()
            },
        };
        let learning = self.shared.learning.clone();
        let mut instructions = Vec::new();

        // Prevention: rules edit the context and the model's instructions.
        let mut refused = None;
        let setting = crate::learn::rules::Setting {
            defaults: Some(&self.config().defaults),
            model_answers: self.model_answers(skill),
            given: Some(given),
        };
        if let Some(l) = &learning {
            let prevented = l.prevent(
                &skill.name,
                task,
                &mut outcome.context,
                &mut instructions,
                &setting,
            );
            outcome.rules_applied.extend(prevented.applied);
            outcome.notices.extend(prevented.notices);
            refused = prevented.refused;
        }
        let validators = self.validators(skill);
        let (validators, invalid) = (&validators.0, &validators.1);
        outcome.notices.extend(
            invalid
                .iter()
                .map(|w| format!("skill `{}`: {w}", skill.name)),
        );

        if let Some(message) = refused {
            outcome.failure = Some(Failure::new(FailureClass::RequiredField, message));
        } else {
            self.attempt(skill, task, &instructions, depth, &mut outcome)
                .await?;
            self.validate(skill, task, validators, &mut outcome);
            // Validation: a rule whose conditions find its failure in the
            // answer (one a validator refused, or one every validator
            // passed: a learned rule can see a mistake no validator knows)
            // applies its remedy and the run is tried once more.
            let validated = outcome
                .output
                .as_ref()
                .map(|o| o.body.clone())
                .or(outcome.rejected_output.clone());
            let remedy = match (&learning, &validated) {
                (Some(l), Some(body)) => l.validation_for(&Facts {
                    task,
                    skill: &skill.name,
                    context: &outcome.context,
                    output: Some(body),
                    failure: outcome.failure.as_ref().map(|f| f.class.as_str()),
                }),
                _ => None,
            };
            if let Some((id, class, actions)) = remedy {
                let effect = crate::learn::rules::apply(
                    &actions,
                    &mut outcome.context,
                    &mut instructions,
                    &setting,
                );
                outcome.notices.extend(effect.notices);
                if let Some(message) = effect.refused {
                    // The remedy needs a value nobody gave: no retry that
                    // could only repeat the failure or guess; the fix is said.
                    outcome.rules_applied.push(Applied {
                        id,
                        kind: crate::learn::rules::Kind::Validation,
                        effect: format!("caught {class}; not retried: {message}"),
                    });
                    outcome.failure = Some(Failure::new(FailureClass::RequiredField, message));
                } else {
                    outcome.rules_applied.push(Applied {
                        id: id.clone(),
                        kind: crate::learn::rules::Kind::Validation,
                        effect: format!(
                            "caught {class}; retried after: {}",
                            effect.changes.join("; ")
                        ),
                    });
                    outcome.output = None;
                    outcome.failure = None;
                    outcome.rejected_output = None;
                    self.attempt(skill, task, &instructions, depth, &mut outcome)
                        .await?;
                    self.validate(skill, task, validators, &mut outcome);
                    // The validators passed the retry: the rule that caught
                    // the first answer reads this one too.
                    if let (Some(l), None, Some(o)) = (&learning, &outcome.failure, &outcome.output)
                        && l.finds(
                            &id,
                            &Facts {
                                task,
                                skill: &skill.name,
                                context: &outcome.context,
                                output: Some(&o.body),
                                failure: None,
                            },
                        )
                    {
                        outcome.failure = Some(Failure::new(
                            class.clone(),
                            format!("learned rule {id} still finds a {class} in the answer"),
                        ));
                        outcome.rejected_output = outcome.output.take().map(|o| o.body);
                    }
                }
            } else if learning.as_ref().is_some_and(|l| l.retries_unchanged())
                && outcome.rejected_output.is_some()
            {
                // The retry-only control: a validator refused the answer;
                // ask again with exactly the same prompt.
                outcome.output = None;
                outcome.failure = None;
                outcome.rejected_output = None;
                self.attempt(skill, task, &instructions, depth, &mut outcome)
                    .await?;
                self.validate(skill, task, validators, &mut outcome);
            }
        }
        outcome.model_calls = outcome
            .trajectory
            .iter()
            .filter(|s| matches!(s, Step::Model { .. }))
            .count() as u32;
        outcome.timings.total_us = micros(started);
        let recorded = depth == 0 && self.config().learning.record;
        if recorded {
            self.record(task, &mut outcome).await;
        }
        if let Some(l) = &learning {
            if !l.is_kept() {
                if let Err(e) = l.record(&outcome.rules_applied, outcome.failure.is_none()) {
                    outcome
                        .notices
                        .push(format!("rule statistics not saved: {e}"));
                }
            } else if !recorded {
                // A recorded run carries its rules to the writer.
                self.shared.recorder.rules_only(crate::learn::RuleOutcome {
                    rules: outcome.rules_applied.iter().map(|a| a.id.clone()).collect(),
                    success: outcome.failure.is_none(),
                });
            }
        }
        // Backpressure: an answer waits while the writer is far behind.
        self.shared.recorder.room().await;
        Ok(outcome)
    }

    /// Whether [`attempt`](Self::attempt) hands `skill` to the model (and
    /// not to its handler, pipeline or template).
    fn model_answers(&self, skill: &Skill) -> bool {
        let has_code =
            skill.meta.skillhost.handler.is_some() || skill.meta.skillhost.pipeline.is_some();
        self.shared.provider.is_some() && (self.shared.prefer_model || !has_code)
    }

    /// One go at the first tier that can answer.
    async fn attempt(
        &self,
        skill: &Skill,
        task: &str,
        instructions: &[String],
        depth: u32,
        outcome: &mut RunOutcome,
    ) -> Result<(), RunError> {
        outcome.attempts += 1;
        let model = self.shared.provider.clone();
        let prefer_model = self.shared.prefer_model && model.is_some();
        if let (Some(handler), false) = (skill.meta.skillhost.handler.clone(), prefer_model) {
            outcome.tier = Tier::Handler;
            self.run_handler(skill, &handler, task, outcome, depth)
                .await?;
        } else if let (Some(pipeline), false) =
            (skill.meta.skillhost.pipeline.clone(), prefer_model)
        {
            outcome.tier = Tier::Pipeline;
            self.run_declared_pipeline(skill, &pipeline, task, outcome, depth)
                .await;
        } else if let Some(provider) = model {
            outcome.tier = Tier::Model;
            let grants = self.grants_for(skill, outcome);
            let max_steps = self.config().agent.max_steps;
            model_loop::run(
                self,
                provider.as_ref(),
                model_loop::Turn {
                    skill,
                    task,
                    grants: &grants,
                    instructions,
                    max_steps,
                    depth,
                },
                outcome,
            )
            .await;
        } else {
            // A template answers with the task and context it is given, so
            // it gets the handler's output limit: the skill's resolved
            // `output_bytes`, counting body, content type and flags.
            // Only a skill that declares limits can be raised above the
            // defaults, so only then are its files read for the grant.
            let raise = if skill.meta.skillhost.limits.is_empty() {
                LimitSpec::default()
            } else {
                self.skill_files(skill)
                    .map(|f| self.effective_grants(skill, &f.fingerprint).limits)
                    .unwrap_or_default()
            };
            let limit = self.limits(skill, &raise).output_bytes;
            let content_type = skill
                .meta
                .output_type
                .clone()
                .unwrap_or_else(|| "text/plain".into());
            let flags = vec![String::from("template")];
            let overhead = content_type.len() + flags.iter().map(String::len).sum::<usize>();
            match template::render(
                skill,
                task,
                &outcome.context,
                limit.saturating_sub(overhead),
            ) {
                Ok(body) => {
                    outcome.output = Some(Output {
                        body,
                        content_type,
                        flags,
                    })
                }
                Err(template::TooLarge { .. }) => {
                    outcome.failure = Some(Failure::new(
                        FailureClass::OutputTooLarge,
                        format!(
                            "the template's answer is over the output limit of {limit} bytes (body, content type and flags together)"
                        ),
                    ))
                }
            }
        }
        Ok(())
    }

    /// The skill's validators read the answer; the first that fails names
    /// the failure.
    fn validate(
        &self,
        skill: &Skill,
        task: &str,
        validators: &[crate::learn::Validator],
        outcome: &mut RunOutcome,
    ) {
        let Some(output) = &outcome.output else {
            return;
        };
        let facts = Facts {
            task,
            skill: &skill.name,
            context: &outcome.context,
            output: Some(&output.body),
            failure: None,
        };
        if let Some(v) = validators.iter().find(|v| v.fails(&facts)) {
            outcome.failure = Some(Failure::new(v.class.clone(), v.message.clone()));
            outcome.rejected_output = outcome.output.take().map(|o| o.body);
        }
    }

    /// Queues the run (context redacted) for the store; see `recorder`.
    async fn record(&self, task: &str, outcome: &mut RunOutcome) {
        let store = match self.shared.store.handle() {
            Ok(s) => s,
            Err(e) => {
                operator_note(
                    outcome,
                    format!("run not recorded: {e} (opening is tried again on the next use)"),
                );
                return;
            }
        };
        match self
            .shared
            .recorder
            .record(store, run_record(task, outcome))
            .await
        {
            Ok((id, notice)) => {
                outcome.run_id = Some(id);
                if let Some(n) = notice {
                    operator_note(outcome, n);
                }
            }
            Err(e) => operator_note(outcome, format!("run not recorded: {e}")),
        }
    }

    /// The fingerprint of `skill`'s files and its handler, read and hashed
    /// only when a file changed since this runner last saw it (see
    /// [`FileIdentity`](crate::skill::FileIdentity)): a run of an unchanged
    /// skill neither reads its handler nor hashes it.
    fn skill_files(&self, skill: &Skill) -> Result<SkillFiles, SkillFileError> {
        if let Some(files) = self.unchanged_files(skill) {
            return Ok(files);
        }
        // The fingerprint covers both files, so both are read.
        let read_at = std::time::SystemTime::now();
        let (md, md_id) = skill.read_file_identified(&skill.file_name(), MAX_SKILL_MD_BYTES)?;
        let wasm = match skill.meta.skillhost.handler.as_deref() {
            Some(rel) => Some(skill.read_file_identified(rel, MAX_HANDLER_BYTES)?),
            None => None,
        };
        let fingerprint = sandbox::fingerprint(&md, wasm.as_ref().map(|(b, _)| b.as_slice()));
        let handler = wasm
            .as_ref()
            .map(|(bytes, _)| sandbox::Artifact::new(Arc::from(bytes.as_slice())));
        let artifact = handler.as_ref().map(|a| a.hash().to_owned());
        lock(&self.shared.known).insert(
            skill.path.clone(),
            KnownFiles {
                md: md_id,
                wasm: wasm.as_ref().map(|(_, id)| *id),
                read_at,
                fingerprint: fingerprint.clone(),
                artifact: artifact.clone(),
                handler: None,
            },
        );
        Ok(SkillFiles {
            fingerprint,
            artifact,
            handler: handler.map(HandlerFiles::Read),
        })
    }

    /// What [`Runner::skill_files`] would answer, when no file changed:
    /// two `stat`s, no reading, so it may run on an async worker. `None`
    /// when something must be read, which is also where whatever is wrong
    /// with a file (missing, too large, outside the folder) is reported.
    fn unchanged_files(&self, skill: &Skill) -> Option<SkillFiles> {
        let known = self.trusted_known(skill)?;
        if skill.current_identity(&skill.file_name())? != known.md {
            return None;
        }
        let wasm = match skill.meta.skillhost.handler.as_deref() {
            Some(rel) => Some(skill.current_identity(rel)?),
            None => None,
        };
        if wasm != known.wasm {
            return None;
        }
        let handler = match (wasm, known.handler) {
            (None, _) => None,
            (Some(_), Some(h)) => Some(HandlerFiles::Loaded(h)),
            // Read by a call that is still compiling it (concurrent first
            // calls): this call reads too, then finds the compile's result
            // in the sandbox's cache or waits for it.
            (Some(_), None) => return None,
        };
        Some(SkillFiles {
            fingerprint: known.fingerprint,
            artifact: known.artifact,
            handler,
        })
    }

    /// The skill's validators, compiled once per runner (their regular
    /// expressions took milliseconds per run), with what did not compile.
    /// The gate reads a handler's answers through them too.
    pub fn validators(&self, skill: &Skill) -> Arc<ValidatorSet> {
        if let Some(v) = lock(&self.shared.validators).get(&skill.path) {
            return v.clone();
        }
        let compiled = Arc::new(crate::learn::validators(&skill.meta.skillhost.validators));
        lock(&self.shared.validators).insert(skill.path.clone(), compiled.clone());
        compiled
    }

    /// What this runner read of `skill`, if it may stand for the files (see
    /// [`FileIdentity::trusted_if_read_at`]).
    fn trusted_known(&self, skill: &Skill) -> Option<KnownFiles> {
        let known = lock(&self.shared.known).get(&skill.path).cloned()?;
        let trusted = known.md.trusted_if_read_at(known.read_at)
            && known
                .wasm
                .is_none_or(|w| w.trusted_if_read_at(known.read_at));
        trusted.then_some(known)
    }

    /// Keeps the handler compiled from the files fingerprinted `fingerprint`.
    fn remember_handler(&self, skill: &Skill, fingerprint: &str, handler: &Handler) {
        if let Some(k) = lock(&self.shared.known).get_mut(&skill.path)
            && k.fingerprint == fingerprint
        {
            k.handler = Some(handler.clone());
        }
    }

    /// declared ∩ granted for the skill at this fingerprint (see
    /// `grants::fingerprint`): what a call of it runs with. The gate asks
    /// this too, so that it judges the call that will run.
    pub(crate) fn effective_grants(&self, skill: &Skill, fingerprint: &str) -> Effective {
        crate::grants::effective(
            &skill.name,
            skill.source,
            &skill.meta.skillhost.capabilities,
            &skill.meta.skillhost.limits,
            fingerprint,
            &self.config().trust,
            &self.grants(),
        )
    }

    /// Whether the handler of `skill` (its bytes hashing to `artifact`)
    /// may run: always, unless `[gate] sources` gates the skill's source
    /// or a model wrote the handler; then only as approved (see `approval`). A gated handler that is not
    /// approved fails the run rather than falling back to the model or the
    /// template: an answer from another tier would pass for the skill's
    /// own while its code was refused, and would hide a changed artifact.
    fn admitted(&self, skill: &Skill, artifact: Option<&str>) -> Result<(), Refusal> {
        if !self.config().gate.gates_skill(skill) {
            return Ok(());
        }
        let Some(artifact) = artifact else {
            return Ok(());
        };
        let store = self
            .shared
            .store
            .get_store()
            .map_err(|e| Refusal::Unreadable {
                skill: skill.name.clone(),
                reason: e.to_string(),
            })?;
        crate::approval::admission(
            store,
            &skill.name,
            artifact,
            &crate::approval::skill_pin(skill),
        )
    }

    /// The host's own paths, which no file grant reaches.
    fn control_paths(&self) -> &Arc<crate::paths::ControlPaths> {
        let s = &self.shared;
        s.control.get_or_init(|| Arc::new(s.paths.control_paths()))
    }

    /// The limits a call of `skill` runs under, raised as far as `raise`
    /// allows (see `Limits::resolve`).
    fn limits(&self, skill: &Skill, raise: &LimitSpec) -> sandbox::Limits {
        sandbox::Limits::resolve(&skill.meta.skillhost.limits, raise, &self.config().limits)
    }

    fn grants_for(&self, skill: &Skill, outcome: &mut RunOutcome) -> Effective {
        let effective = match self.skill_files(skill) {
            Ok(f) => self.effective_grants(skill, &f.fingerprint),
            Err(e) => {
                outcome.notices.push(format!(
                    "cannot read skill `{}`: {e}; it runs without grants",
                    skill.name
                ));
                Effective::none()
            }
        };
        self.note_grants(skill, &effective, outcome);
        effective
    }

    fn note_grants(&self, skill: &Skill, effective: &Effective, outcome: &mut RunOutcome) {
        outcome.grants = Some(effective.basis.to_string());
        let which = match effective.basis {
            crate::grants::Basis::StaleGrant { .. } => GrantFile::Renew,
            _ => GrantFile::New,
        };
        let command = || grant_command(self.paths(), skill, which, &[]);
        if let Some(n) = effective.notice(&skill.name, &skill.meta.skillhost.capabilities, command)
        {
            outcome.notices.push(n);
        }
    }

    #[tracing::instrument(name = "tier", skip_all, fields(tier = "pipeline", skill = %skill.name, depth = depth))]
    async fn run_declared_pipeline(
        &self,
        skill: &Skill,
        pipeline: &Value,
        task: &str,
        outcome: &mut RunOutcome,
        depth: u32,
    ) {
        let grants = self.grants_for(skill, outcome);
        let args = template::fill_value(pipeline, task, &outcome.context);
        let parsed: tools::pipeline::Pipeline = match serde_json::from_value(args) {
            Ok(p) => p,
            Err(e) => {
                outcome.failure = Some(Failure::new(
                    FailureClass::InvalidPipeline,
                    format!("metadata.skillhost.pipeline of skill `{}`: {e}", skill.name),
                ));
                return;
            }
        };
        let cx = CallContext {
            skill,
            grants: &grants.capabilities,
            trusted: grants.is_trusted(),
            caller: Caller::Pipeline,
            depth,
        };
        let toolbox = self.toolbox();
        let call_started = Instant::now();
        let result = tools::pipeline::run(&toolbox, &cx, &parsed).await;
        outcome.timings.call_us = micros(call_started);
        outcome.trajectory.push(Step::Tool {
            step: 0,
            caller: Caller::Pipeline,
            tool: tools::pipeline::NAME.into(),
            arguments: serde_json::to_value(pipeline).unwrap_or(Value::Null),
            result: result.as_ref().ok().cloned(),
            error: result.as_ref().err().map(ToString::to_string),
            error_class: result.as_ref().err().map(ToolError::class),
            recovery: None,
            duration_us: outcome.timings.call_us,
        });
        match result {
            Ok(v) => {
                outcome.output = Some(Output {
                    body: match v {
                        Value::String(s) => s,
                        other => serde_json::to_string_pretty(&other).unwrap_or_default(),
                    },
                    content_type: skill
                        .meta
                        .output_type
                        .clone()
                        .unwrap_or_else(|| "text/plain".into()),
                    flags: vec!["pipeline".into()],
                })
            }
            Err(e) => outcome.failure = Some(Failure::new(e.class(), e.to_string())),
        }
    }

    #[tracing::instrument(name = "tier", skip_all, fields(tier = "handler", skill = %skill.name, depth = depth))]
    async fn run_handler(
        &self,
        skill: &Skill,
        handler_rel: &str,
        task: &str,
        outcome: &mut RunOutcome,
        depth: u32,
    ) -> Result<(), RunError> {
        let load_started = Instant::now();
        let unavailable =
            |message: String| Some(Failure::new(FailureClass::HandlerUnavailable, message));
        // Reading and hashing a changed handler (up to 128 MiB) is blocking
        // work: off the async workers.
        let files = match self.unchanged_files(skill) {
            Some(files) => Ok(files),
            None => {
                let (runner, owned) = (self.clone(), skill.clone());
                tokio::task::spawn_blocking(move || runner.skill_files(&owned))
                    .await
                    .unwrap_or_else(|e| {
                        Err(SkillFileError::Io {
                            path: handler_rel.to_owned(),
                            source: std::io::Error::other(e),
                        })
                    })
            }
        };
        let files = match files {
            Ok(f) => f,
            Err(e) => {
                outcome.failure = unavailable(format!(
                    "cannot read handler `{handler_rel}` of skill `{}`: {e}",
                    skill.name
                ));
                return Ok(());
            }
        };
        let grants = self.effective_grants(skill, &files.fingerprint);
        self.note_grants(skill, &grants, outcome);
        // Before compiling: an unapproved artifact gets no further.
        if let Err(refusal) = self.admitted(skill, files.artifact.as_deref()) {
            outcome.timings.load_us = micros(load_started);
            outcome.failure = Some(Failure::new(
                FailureClass::HandlerNotApproved,
                refusal.to_string(),
            ));
            return Ok(());
        }
        let handler = match files.handler {
            Some(HandlerFiles::Loaded(h)) => {
                let latest = self.sandbox()?.latest(&h);
                if latest.tier != h.tier {
                    self.remember_handler(skill, &files.fingerprint, &latest);
                }
                latest
            }
            Some(HandlerFiles::Read(wasm)) => {
                let sink = PROGRESS.try_with(Arc::clone).ok();
                let name = skill.name.clone();
                let on_compile = move |n: sandbox::CompileNotice| {
                    if let Some(sink) = sink {
                        sink(Progress::Compiling {
                            skill: name,
                            bytes: n.bytes,
                            tier: n.tier,
                        });
                    }
                };
                let loaded = self.sandbox()?.load_async_with(wasm, on_compile).await;
                match loaded {
                    Ok(h) => {
                        self.remember_handler(skill, &files.fingerprint, &h);
                        h
                    }
                    Err(e) => {
                        outcome.timings.load_us = micros(load_started);
                        outcome.failure = Some(Failure::new(
                            e.class(),
                            format!(
                                "handler `{handler_rel}` of skill `{}`: {}",
                                skill.name,
                                Chain(&e)
                            ),
                        ));
                        return Ok(());
                    }
                }
            }
            None => {
                outcome.failure = unavailable("the skill declares no handler".into());
                return Ok(());
            }
        };
        outcome.timings.load_us = micros(load_started);
        let sandbox = self.sandbox()?;
        let limits = self.limits(skill, &grants.limits);
        if let Some(n) = limits_notice(skill, &limits, &self.config().limits, || {
            grant_command(self.paths(), skill, GrantFile::Renew, &["--limits"])
        }) {
            outcome.notices.push(n);
        }
        let roots = FileRoots {
            skill_dir: skill.dir.clone(),
            workspace: self.paths().workspace.clone(),
            skill_files: vec![skill.path.clone(), skill.dir.join(handler_rel)],
            control: self.control_paths().clone(),
        };
        let services = Services {
            tools: Some(Arc::new(HandlerTools {
                runner: self.clone(),
                skill: skill.name.clone(),
                grants: grants.clone(),
                depth,
            })),
            model: self
                .shared
                .provider
                .clone()
                .map(|p| Arc::new(ProviderModelHost(p)) as Arc<dyn sandbox::ModelHost>),
            kv: Some(self.shared.store.clone()),
        };
        let call: CallOutcome = sandbox
            .call(
                &handler,
                &CallRequest {
                    skill: &skill.name,
                    description: task,
                    context: &outcome.context,
                    grants: &grants,
                    limits,
                    roots: &roots,
                    services,
                    entropy: sandbox::Entropy::Host,
                },
            )
            .await;
        outcome.timings.instantiate_us = call.instantiate_us;
        outcome.timings.call_us = call.call_us;
        outcome.log = call.log;
        outcome.events = call.events;
        match call.result {
            Ok(o) => outcome.output = Some(o),
            Err(f) => outcome.failure = Some(f),
        }
        Ok(())
    }
}

/// A line for the user when the skill asked for more than a default and
/// runs with less, because its raise is not granted.
fn limits_notice(
    skill: &Skill,
    limits: &sandbox::Limits,
    defaults: &crate::config::LimitDefaults,
    grant_command: impl FnOnce() -> String,
) -> Option<String> {
    let asked = &skill.meta.skillhost.limits;
    let short =
        |asked: Option<u64>, got: u64, default: u64| asked.is_some_and(|a| a > default && got < a);
    let memory_mb = (limits.memory_bytes >> 20) as u64;
    let timeout_ms = u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX);
    let output_kb = (limits.output_bytes / 1024) as u64;
    let raised_less = short(asked.memory_mb, memory_mb, defaults.memory_mb)
        || short(asked.timeout_ms, timeout_ms, defaults.timeout_ms)
        || short(asked.output_kb, output_kb, defaults.output_kb);
    raised_less.then(|| {
        format!(
            "skill `{}` asks for limits above the defaults; it runs with memory {memory_mb} MiB, time {timeout_ms} ms, output {output_kb} KiB (`{}` grants what it declares, up to the `[limits] max_*` ceilings)",
            skill.name,
            grant_command()
        )
    })
}

/// Logs a note for the host's operator and keeps it with the run.
fn operator_note(outcome: &mut RunOutcome, note: String) {
    tracing::warn!("{note}");
    outcome.operator_notes.push(note);
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

/// The bytes a grant is pinned to: the SKILL.md file and, if the skill has
/// one, its handler component (read inside the skill folder, size-capped).
pub fn read_skill_and_handler(skill: &Skill) -> Result<(Vec<u8>, Option<Vec<u8>>), SkillFileError> {
    let md = skill.read_file(&skill.file_name(), MAX_SKILL_MD_BYTES)?;
    let wasm = match &skill.meta.skillhost.handler {
        Some(rel) => Some(skill.read_file(rel, MAX_HANDLER_BYTES)?),
        None => None,
    };
    Ok((md, wasm))
}

/// The fingerprint operator grants are pinned to.
pub fn skill_fingerprint(skill: &Skill) -> Result<String, SkillFileError> {
    let (md, wasm) = read_skill_and_handler(skill)?;
    Ok(sandbox::fingerprint(&md, wasm.as_deref()))
}

/// The stored form of a run: context redacted, tool steps kept.
fn run_record(task: &str, o: &RunOutcome) -> crate::store::RunRecord {
    use crate::store::{AppliedRecord, RunRecord, StepRecord};
    let steps = o
        .trajectory
        .iter()
        .map(|s| match s {
            Step::Model {
                duration_us, error, ..
            } => StepRecord {
                kind: "model".into(),
                tool: None,
                detail: serde_json::to_value(s).unwrap_or(Value::Null),
                error: error.clone(),
                error_class: error.as_ref().map(|_| FailureClass::ModelError.to_string()),
                duration_us: *duration_us as i64,
            },
            Step::Tool {
                tool,
                error,
                error_class,
                duration_us,
                ..
            } => StepRecord {
                kind: "tool".into(),
                tool: Some(tool.clone()),
                detail: serde_json::to_value(s).unwrap_or(Value::Null),
                error: error.clone(),
                error_class: error_class.as_ref().map(ToString::to_string),
                duration_us: *duration_us as i64,
            },
        })
        .collect();
    RunRecord {
        id: 0,
        at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
        skill: o.skill.clone(),
        skill_version: o.skill_version.clone(),
        task: task.to_owned(),
        tier: o.tier.as_str().to_owned(),
        success: o.failure.is_none(),
        failure_class: o.failure.as_ref().map(|f| f.class.to_string()),
        failure_message: o.failure.as_ref().map(|f| f.message.clone()),
        context: Value::Object(crate::learn::redact::redact(&o.context)),
        output: o
            .output
            .as_ref()
            .map(|x| x.body.clone())
            .or_else(|| o.rejected_output.clone()),
        duration_us: o.timings.total_us as i64,
        model_calls: i64::from(o.model_calls),
        origin: o.selected_by.clone(),
        steps,
        rules_applied: o
            .rules_applied
            .iter()
            .map(|a| AppliedRecord {
                rule_id: a.id.clone(),
                kind: a.kind.to_string(),
                effect: a.effect.clone(),
            })
            .collect(),
    }
}

fn micros(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// A skill's validators and the problems of those that did not compile.
pub type ValidatorSet = (Vec<crate::learn::Validator>, Vec<String>);

/// The files of a skill as a runner last read them.
#[derive(Clone)]
struct KnownFiles {
    md: FileIdentity,
    wasm: Option<FileIdentity>,
    /// When the read that saw them started.
    read_at: std::time::SystemTime,
    fingerprint: String,
    /// `sha256:` of the handler's bytes.
    artifact: Option<String>,
    /// Compiled from exactly these files, once a run loaded it.
    handler: Option<Handler>,
}

struct SkillFiles {
    fingerprint: String,
    /// `sha256:` of the handler's bytes, what a gate approval is pinned to.
    artifact: Option<String>,
    handler: Option<HandlerFiles>,
}

enum HandlerFiles {
    /// Unchanged since it was compiled.
    Loaded(Handler),
    /// Read now; to be loaded.
    Read(sandbox::Artifact),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every holder leaves the map whole.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

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
