//! The task pipeline: pick the skill, build the context, run the first tier
//! that can answer, and report what happened.
//!
//! Tier 1 is the skill's own code: its sandboxed handler, or the tool
//! pipeline it declares. Tier 2 is the model loop, when a model is
//! configured. Tier 3 is the skill's template, which always answers.
//! Rules (prevention before, validation after) and recording plug in at the
//! marked seams; recovery plugs in through [`RecoveryHook`].

pub mod context;
mod model_loop;
pub mod template;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::Config;
use crate::llm::Provider;
use crate::paths::Paths;
use crate::sandbox::{
    self, BoxFuture, CallOutcome, CallRequest, Effective, Failure, FileRoots, KvHost, LogLine,
    Output, Sandbox, SandboxOptions, ServiceError, Services, ToolHost,
};
use crate::skill::{Catalog, Skill, SkillFileError};
use crate::store::Store;
use crate::tools::{self, CallContext, Caller, Policy, SkillInvoker, ToolError, Toolbox};

pub use context::ContextError;
pub use model_loop::RecoveryHook;

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
    /// Tier 1: the tool pipeline the skill declares as its handler.
    Pipeline,
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
        recovery: Option<String>,
        duration_us: u64,
    },
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
    /// How the skill's capabilities were decided.
    pub grants: Option<String>,
    /// Things the user should know (e.g. a stale grant).
    pub notices: Vec<String>,
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
/// sandbox (and its compiled handlers) and the toolbox are created on first
/// use and shared by clones.
#[derive(Clone)]
pub struct Runner {
    shared: Arc<Shared>,
}

struct Shared {
    paths: Paths,
    config: Config,
    catalog: Arc<Catalog>,
    provider: Option<Arc<dyn Provider>>,
    recovery: Option<Arc<dyn RecoveryHook>>,
    sandbox: OnceLock<Result<Arc<Sandbox>, String>>,
    toolbox: OnceLock<Arc<Toolbox>>,
    kv: Arc<LazyStore>,
    me: Weak<Shared>,
}

impl Runner {
    pub fn new(paths: Paths, config: Config, catalog: Catalog) -> Self {
        Self::build(paths, config, Arc::new(catalog), None, None)
    }

    fn build(
        paths: Paths,
        config: Config,
        catalog: Arc<Catalog>,
        provider: Option<Arc<dyn Provider>>,
        recovery: Option<Arc<dyn RecoveryHook>>,
    ) -> Self {
        let kv = Arc::new(LazyStore::new(paths.state_dir()));
        Runner {
            shared: Arc::new_cyclic(|me| Shared {
                paths,
                config,
                catalog,
                provider,
                recovery,
                sandbox: OnceLock::new(),
                toolbox: OnceLock::new(),
                kv,
                me: me.clone(),
            }),
        }
    }

    fn rebuild(
        &self,
        provider: Option<Arc<dyn Provider>>,
        recovery: Option<Arc<dyn RecoveryHook>>,
    ) -> Self {
        let s = &self.shared;
        Self::build(
            s.paths.clone(),
            s.config.clone(),
            s.catalog.clone(),
            provider,
            recovery,
        )
    }

    /// The same runner with a model for tier 2.
    pub fn with_provider(self, provider: Arc<dyn Provider>) -> Self {
        let recovery = self.shared.recovery.clone();
        self.rebuild(Some(provider), recovery)
    }

    /// The same runner with a recovery hook for tool errors in the model loop.
    pub fn with_recovery(self, hook: Arc<dyn RecoveryHook>) -> Self {
        let provider = self.shared.provider.clone();
        self.rebuild(provider, Some(hook))
    }

    pub fn catalog(&self) -> &Catalog {
        &self.shared.catalog
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
                    cache_dir: s
                        .config
                        .sandbox
                        .cache
                        .then(|| s.paths.cache_dir().join("components")),
                    pooling: s.config.sandbox.pooling,
                };
                Sandbox::new(&options)
                    .map(|sb| {
                        Arc::new(sb.with_allow_private(s.config.network.allow_private.clone()))
                    })
                    .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(sandbox::SandboxError::Engine)
    }

    /// The tool registry with the configured policy, created on first use.
    pub fn toolbox(&self) -> Arc<Toolbox> {
        let s = &self.shared;
        s.toolbox
            .get_or_init(|| {
                let invoker: Arc<dyn SkillInvoker> = Arc::new(Invoker(s.me.clone()));
                let mut tb = Toolbox::standard(
                    Policy::new(s.config.tools.clone()),
                    s.paths.workspace.clone(),
                    s.catalog.clone(),
                    invoker,
                );
                tb.allow_private = s.config.network.allow_private.clone();
                Arc::new(tb)
            })
            .clone()
    }

    /// Picks the skill for a request: the named one, or the best match.
    pub fn select(&self, req: &RunRequest) -> Result<(&Skill, String), RunError> {
        if let Some(name) = &req.skill {
            return self
                .catalog()
                .get(name)
                .map(|s| (s, "--skill".to_owned()))
                .ok_or_else(|| RunError::UnknownSkill(name.clone()));
        }
        self.catalog()
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
            trajectory: Vec::new(),
            log: Vec::new(),
            events: Vec::new(),
            timings: Timings {
                select_us,
                ..Timings::default()
            },
        };

        if let Some(handler) = skill.meta.skillhost.handler.clone() {
            outcome.tier = Tier::Handler;
            self.run_handler(skill, &handler, task, &mut outcome, depth)
                .await?;
        } else if let Some(pipeline) = skill.meta.skillhost.pipeline.clone() {
            outcome.tier = Tier::Pipeline;
            self.run_declared_pipeline(skill, &pipeline, task, &mut outcome, depth)
                .await;
        } else if let Some(provider) = self.shared.provider.clone() {
            outcome.tier = Tier::Model;
            let grants = self.grants_for(skill, &mut outcome);
            let max_steps = self.config().agent.max_steps;
            model_loop::run(
                self,
                provider.as_ref(),
                skill,
                task,
                &grants,
                max_steps,
                depth,
                &mut outcome,
            )
            .await;
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

    /// The skill's effective grants, noted in the outcome.
    fn grants_for(&self, skill: &Skill, outcome: &mut RunOutcome) -> Effective {
        let effective = match skill_fingerprint(skill) {
            Ok(fp) => sandbox::grants::effective(
                &skill.name,
                skill.source,
                &skill.meta.skillhost.capabilities,
                &fp,
                self.config(),
            ),
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
        if let Some(n) = effective.notice(&skill.name, &skill.meta.skillhost.capabilities) {
            outcome.notices.push(n);
        }
    }

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
                    "InvalidPipeline",
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

    async fn run_handler(
        &self,
        skill: &Skill,
        handler_rel: &str,
        task: &str,
        outcome: &mut RunOutcome,
        depth: u32,
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
            self.config(),
        );
        self.note_grants(skill, &grants, outcome);
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
            workspace: self.paths().workspace.clone(),
        };
        let services =
            Services {
                tools: Some(Arc::new(HandlerTools {
                    runner: self.clone(),
                    skill: skill.name.clone(),
                    grants: grants.clone(),
                    depth,
                })),
                model: self.shared.provider.clone().map(|p| {
                    Arc::new(crate::llm::ProviderModelHost(p)) as Arc<dyn sandbox::ModelHost>
                }),
                kv: Some(self.shared.kv.clone()),
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
                        &self.config().limits,
                    ),
                    roots: &roots,
                    services,
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

/// A handler's `call-tool`: the same toolbox and policy as everyone else.
struct HandlerTools {
    runner: Runner,
    skill: String,
    grants: Effective,
    depth: u32,
}

impl ToolHost for HandlerTools {
    fn call<'a>(
        &'a self,
        _skill: &'a str,
        name: &'a str,
        args: &'a str,
    ) -> BoxFuture<'a, Result<String, ServiceError>> {
        Box::pin(async move {
            let skill = self
                .runner
                .catalog()
                .get(&self.skill)
                .ok_or_else(|| ServiceError::NotFound(format!("skill `{}`", self.skill)))?;
            let args: Value = serde_json::from_str(args)
                .map_err(|e| ServiceError::Failed(format!("arguments are not JSON: {e}")))?;
            let cx = CallContext {
                skill,
                grants: &self.grants.capabilities,
                trusted: self.grants.is_trusted(),
                caller: Caller::Handler,
                depth: self.depth,
            };
            let toolbox = self.runner.toolbox();
            match toolbox.call(name, args, &cx).await {
                Ok(v) => Ok(v.to_string()),
                Err(ToolError::Denied(m)) => Err(ServiceError::Denied(m)),
                Err(ToolError::UnknownTool(m)) => Err(ServiceError::NotFound(m)),
                Err(e) => Err(ServiceError::Failed(e.to_string())),
            }
        })
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
            let shared = self
                .0
                .upgrade()
                .ok_or_else(|| Failure::new("Unavailable", "the runner is shutting down"))?;
            let runner = Runner { shared };
            let s = runner
                .catalog()
                .get(skill)
                .ok_or_else(|| Failure::new("UnknownSkill", format!("no skill named `{skill}`")))?;
            let outcome = Box::pin(runner.run_at_depth(
                s,
                "tool".into(),
                task,
                &context,
                Instant::now(),
                depth,
            ))
            .await
            .map_err(|e| Failure::new("RunError", e.to_string()))?;
            match (outcome.output, outcome.failure) {
                (_, Some(f)) => Err(f),
                (Some(o), None) => Ok(o),
                (None, None) => Err(Failure::new(
                    "NoOutput",
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
