//! The task pipeline: pick the skill, build the context, run the first tier
//! that can answer (handler, model, template), and report what happened.
//!
//! Rules (prevention before, validation after) and recording plug in here
//! at the marked seams; the model tier plugs in through [`ModelTier`].

pub mod context;
pub mod template;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::Config;
use crate::paths::Paths;
use crate::sandbox::{
    self, CallOutcome, CallRequest, Failure, FileRoots, KvHost, LogLine, Output, Sandbox,
    SandboxOptions, ServiceError, Services,
};
use crate::skill::{Catalog, Skill, SkillFileError};
use crate::store::Store;

pub use context::ContextError;

/// Biggest handler component read from disk (interpreter-based components
/// for JavaScript and Python are 10-20 MB).
const MAX_HANDLER_BYTES: u64 = 128 << 20;
const MAX_SKILL_MD_BYTES: u64 = 4 << 20;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("no skill named `{0}`; see `skillhost skills list`")]
    UnknownSkill(String),
    #[error(
        "no skill matches this task; name one with --skill (see `skillhost skills search \"TASK\"`)"
    )]
    NoMatch,
    #[error(transparent)]
    Context(#[from] ContextError),
    #[error("{0}")]
    Sandbox(#[from] sandbox::SandboxError),
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
    /// Tier 2: the model loop.
    Model,
    /// Tier 3: the skill's template.
    Template,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    pub select_us: u64,
    pub load_us: u64,
    pub instantiate_us: u64,
    pub call_us: u64,
    pub total_us: u64,
}

/// Everything a run produced; `--json` prints this.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutcome {
    pub skill: String,
    pub skill_version: String,
    /// Why this skill was chosen.
    pub selected_by: String,
    pub tier: Tier,
    pub output: Option<Output>,
    pub failure: Option<Failure>,
    pub context: Map<String, Value>,
    /// How the handler's capabilities were decided.
    pub grants: Option<String>,
    /// Things the user should know (e.g. a stale grant).
    pub notices: Vec<String>,
    pub log: Vec<LogLine>,
    pub events: Vec<String>,
    pub timings: Timings,
}

impl RunOutcome {
    pub fn succeeded(&self) -> bool {
        self.failure.is_none()
    }
}

/// Tier 2, filled by the model loop when a model is configured.
pub trait ModelTier: Send + Sync {
    fn run<'a>(
        &'a self,
        skill: &'a Skill,
        task: &'a str,
        context: &'a Map<String, Value>,
    ) -> sandbox::BoxFuture<'a, Result<Output, Failure>>;
}

/// Runs tasks against one catalog and configuration. Cheap to keep around:
/// the sandbox (and its compiled handlers) is created on first use.
pub struct Runner {
    paths: Paths,
    config: Config,
    catalog: Catalog,
    sandbox: OnceLock<Result<Arc<Sandbox>, String>>,
    model: Option<Arc<dyn ModelTier>>,
}

impl Runner {
    pub fn new(paths: Paths, config: Config, catalog: Catalog) -> Self {
        Runner {
            paths,
            config,
            catalog,
            sandbox: OnceLock::new(),
            model: None,
        }
    }

    pub fn with_model(mut self, model: Arc<dyn ModelTier>) -> Self {
        self.model = Some(model);
        self
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The shared sandbox, created on first use.
    pub fn sandbox(&self) -> Result<Arc<Sandbox>, sandbox::SandboxError> {
        self.sandbox
            .get_or_init(|| {
                let options = SandboxOptions {
                    cache_dir: self
                        .config
                        .sandbox
                        .cache
                        .then(|| self.paths.cache_dir().join("components")),
                    pooling: self.config.sandbox.pooling,
                };
                let services = Services {
                    kv: Some(Arc::new(LazyStore::new(self.paths.state_dir()))),
                    ..Services::default()
                };
                Sandbox::new(&options)
                    .map(|s| {
                        Arc::new(
                            s.with_services(services)
                                .with_allow_private(self.config.network.allow_private.clone()),
                        )
                    })
                    .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(sandbox::SandboxError::Engine)
    }

    /// Picks the skill for a request: the named one, or the best match.
    pub fn select(&self, req: &RunRequest) -> Result<(&Skill, String), RunError> {
        if let Some(name) = &req.skill {
            return self
                .catalog
                .get(name)
                .map(|s| (s, "--skill".to_owned()))
                .ok_or_else(|| RunError::UnknownSkill(name.clone()));
        }
        self.catalog
            .search(&req.task, 1)
            .into_iter()
            .next()
            .map(|m| (m.skill, format!("{} (score {:.2})", m.why, m.score)))
            .ok_or(RunError::NoMatch)
    }

    /// Selects the skill for `req` and runs it.
    pub async fn run(&self, req: &RunRequest) -> Result<RunOutcome, RunError> {
        let started = Instant::now();
        let (skill, selected_by) = self.select(req)?;
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
        let context = context::build(&skill.meta.context_fields, given)?;
        let select_us = micros(started);
        // Seam: prevention rules edit `context` here.

        let mut outcome = RunOutcome {
            skill: skill.name.clone(),
            skill_version: skill.version.clone(),
            selected_by,
            tier: Tier::Template,
            output: None,
            failure: None,
            context,
            grants: None,
            notices: Vec::new(),
            log: Vec::new(),
            events: Vec::new(),
            timings: Timings {
                select_us,
                ..Timings::default()
            },
        };

        if let Some(handler) = skill.meta.skillhost.handler.clone() {
            outcome.tier = Tier::Handler;
            self.run_handler(skill, &handler, task, &mut outcome)
                .await?;
        } else if let Some(model) = &self.model {
            outcome.tier = Tier::Model;
            match model.run(skill, task, &outcome.context).await {
                Ok(o) => outcome.output = Some(o),
                Err(f) => outcome.failure = Some(f),
            }
        } else {
            outcome.output = Some(Output {
                body: template::render(skill, task, &outcome.context),
                content_type: skill
                    .meta
                    .output_type
                    .clone()
                    .unwrap_or_else(|| "text/plain".into()),
                flags: vec!["template".into()],
            });
        }
        // Seams: validation rules check `outcome.output`; the run is recorded.
        outcome.timings.total_us = micros(started);
        Ok(outcome)
    }

    async fn run_handler(
        &self,
        skill: &Skill,
        handler_rel: &str,
        task: &str,
        outcome: &mut RunOutcome,
    ) -> Result<(), RunError> {
        let load_started = Instant::now();
        let (skill_md, wasm) = match read_skill_and_handler(skill) {
            Ok((md, Some(wasm))) => (md, wasm),
            Ok((_, None)) => {
                outcome.failure = Some(Failure::new(
                    "HandlerUnavailable",
                    "the skill declares no handler",
                ));
                return Ok(());
            }
            Err(e) => {
                outcome.failure = Some(Failure::new(
                    "HandlerUnavailable",
                    format!(
                        "cannot read handler `{handler_rel}` of skill `{}`: {e}",
                        skill.name
                    ),
                ));
                return Ok(());
            }
        };
        let fingerprint = sandbox::fingerprint(&skill_md, Some(&wasm));
        let grants = sandbox::grants::effective(
            &skill.name,
            skill.source,
            &skill.meta.skillhost.capabilities,
            &fingerprint,
            &self.config,
        );
        outcome.grants = Some(grants.basis.to_string());
        if let Some(n) = grants.notice(&skill.name, &skill.meta.skillhost.capabilities) {
            outcome.notices.push(n);
        }
        let sandbox = self.sandbox()?;
        let loaded = sandbox.load(&wasm);
        outcome.timings.load_us = micros(load_started);
        let handler = match loaded {
            Ok(h) => h,
            Err(e) => {
                outcome.failure = Some(Failure::new(
                    "HandlerUnavailable",
                    format!("handler `{handler_rel}` of skill `{}`: {e}", skill.name),
                ));
                return Ok(());
            }
        };
        let roots = FileRoots {
            skill_dir: skill.dir.clone(),
            workspace: self.paths.workspace.clone(),
        };
        let call: CallOutcome = sandbox
            .call(
                &handler,
                &CallRequest {
                    skill: &skill.name,
                    description: task,
                    context: &outcome.context,
                    grants: &grants,
                    limits: sandbox::Limits::resolve(
                        &skill.meta.skillhost.limits,
                        &self.config.limits,
                    ),
                    roots: &roots,
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

fn micros(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The workspace store, opened the first time a handler uses its key-value
/// store, so runs that never do leave no files behind.
struct LazyStore {
    dir: PathBuf,
    store: OnceLock<Result<Store, String>>,
}

impl LazyStore {
    fn new(dir: PathBuf) -> Self {
        LazyStore {
            dir,
            store: OnceLock::new(),
        }
    }

    fn get_store(&self) -> Result<&Store, ServiceError> {
        self.store
            .get_or_init(|| Store::open_in(&self.dir).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| ServiceError::Failed(e.clone()))
    }
}

impl KvHost for LazyStore {
    fn get(&self, skill: &str, key: &str) -> Result<Option<Vec<u8>>, ServiceError> {
        self.get_store()?.get(skill, key)
    }
    fn set(&self, skill: &str, key: &str, value: &[u8]) -> Result<(), ServiceError> {
        self.get_store()?.set(skill, key, value)
    }
    fn delete(&self, skill: &str, key: &str) -> Result<(), ServiceError> {
        self.get_store()?.delete(skill, key)
    }
}
