//! Tools: the registry, the one policy every call goes through (whoever
//! triggers it: the model, a handler's `call-tool`, a pipeline step), the
//! built-in tools and `execute_pipeline`.

mod builtin;
mod find;
mod http_fetch;
pub mod pipeline;
pub mod policy;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::skill::{Capabilities, Catalog, Skill};
use crate::types::{BoxFuture, Failure, FailureClass, Output, ToolSpec};

pub use builtin::skill_parameters;
pub use http_fetch::UrlError;
pub use policy::{Denial, Denied, Layer, Policy, ToolsConfig};

/// How deep skills may call skills (a handler tool whose handler calls a
/// tool...) before the chain is cut.
pub const MAX_DEPTH: u32 = 4;

/// Who asked for a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Caller {
    Model,
    Handler,
    Pipeline,
}

/// The skill on whose behalf a tool runs, and what it may do.
#[derive(Debug, Clone)]
pub struct CallContext<'a> {
    pub skill: &'a Skill,
    /// The skill's effective sandbox grants.
    pub grants: &'a Capabilities,
    /// Whether the skill is trusted (by source) or explicitly granted.
    pub trusted: bool,
    pub caller: Caller,
    /// Nesting of skill and pipeline calls.
    pub depth: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "class", content = "message")]
pub enum ToolError {
    #[error("UnknownTool: {0}")]
    UnknownTool(String),
    #[error("Denied: {0}")]
    Denied(Denial),
    #[error("InvalidArguments: {0}")]
    InvalidArguments(String),
    #[error("TooManySteps: {0}")]
    TooManySteps(String),
    #[error("PipelineError: {0}")]
    Pipeline(String),
    #[error("{class}: {message}")]
    Failed {
        class: FailureClass,
        message: String,
    },
}

impl ToolError {
    pub fn failed(class: impl Into<FailureClass>, message: impl Into<String>) -> Self {
        ToolError::Failed {
            class: class.into(),
            message: message.into(),
        }
    }

    /// The failure class, for learning and for the model.
    pub fn class(&self) -> FailureClass {
        match self {
            ToolError::UnknownTool(_) => FailureClass::UnknownTool,
            ToolError::Denied(_) => FailureClass::Denied,
            ToolError::InvalidArguments(_) => FailureClass::InvalidArguments,
            ToolError::TooManySteps(_) => FailureClass::TooManySteps,
            ToolError::Pipeline(_) => FailureClass::PipelineError,
            ToolError::Failed { class, .. } => class.clone(),
        }
    }
}

impl From<Denied> for ToolError {
    fn from(reason: Denied) -> Self {
        ToolError::Denied(reason.into())
    }
}

/// A tool the host offers.
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> String;
    /// JSON Schema of the arguments object.
    fn parameters(&self) -> Value;
    /// Whether the tool only reads the calling skill's own files. Untrusted
    /// skills get these tools and nothing else.
    fn confined(&self) -> bool {
        false
    }
    /// When the model is offered this tool (see [`Offer`]).
    fn offer(&self) -> Offer {
        Offer::Declared
    }
    /// The sandbox-grant layer: what this call needs from the skill's
    /// grants (a folder, a host). `Err` names what is missing.
    fn authorize(&self, _cx: &CallContext<'_>, _args: &Value) -> Result<(), Denied> {
        Ok(())
    }
    fn call<'a>(
        &'a self,
        tools: &'a Toolbox,
        cx: &'a CallContext<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
}

/// When a tool is put in front of the model. Every call still passes the
/// whole policy; this only keeps tools a skill cannot use, or did not ask
/// for, out of its prompt (a small model is confused by ten tools it has
/// no use for, and every definition costs context).
#[derive(Debug, Clone, Copy)]
pub enum Offer {
    /// Reads the skill's own folder: offered when that folder holds a
    /// file for the model besides SKILL.md and the handler.
    OwnFiles,
    /// Acts within the skill's sandbox grants: offered when the grants
    /// allow some call (a granted host, a granted workspace folder).
    Granted(fn(&Capabilities) -> bool),
    /// Reaches beyond the skill (other skills, pipelines): offered when
    /// the skill's `allowed-tools` names it, or, with no `allowed-tools`,
    /// when the skill declares capabilities: a workflow skill. A skill that
    /// declares neither works from its text alone.
    Declared,
}

impl Offer {
    fn admits(self, tool: &str, cx: &CallContext<'_>) -> bool {
        match self {
            Offer::OwnFiles => has_files_for_the_model(cx.skill),
            Offer::Granted(usable) => usable(cx.grants),
            Offer::Declared => match cx.skill.meta.allowed_tools {
                Some(_) => policy::declares(cx.skill, tool),
                None => cx.skill.meta.skillhost.capabilities != Capabilities::default(),
            },
        }
    }
}

/// Whether a skill folder holds a file for the model to read: anything
/// but its SKILL.md (already in the prompt), its handler component and
/// the handler's source folder `handler/` (the host builds and runs
/// those; the model has no use for them), and hidden files.
fn has_files_for_the_model(skill: &Skill) -> bool {
    let component = skill
        .meta
        .skillhost
        .handler
        .as_deref()
        .map(std::path::Path::new);
    let hosts_own = |name: &std::ffi::OsStr| {
        name == "SKILL.md"
            || name == "handler"
            || component.is_some_and(|c| c.as_os_str() == name)
            || name.to_string_lossy().starts_with('.')
    };
    std::fs::read_dir(&skill.dir)
        .is_ok_and(|entries| entries.flatten().any(|e| !hosts_own(&e.file_name())))
}

/// Runs a skill as a tool (`skill_<name>`); implemented by the exec stage.
pub trait SkillInvoker: Send + Sync {
    fn invoke<'a>(
        &'a self,
        skill: &'a str,
        task: &'a str,
        context: Map<String, Value>,
        depth: u32,
    ) -> BoxFuture<'a, Result<Output, Failure>>;
}

/// The registry plus the policy and the host facts tools need.
pub struct Toolbox {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    pub policy: Policy,
    pub workspace: PathBuf,
    /// How outbound HTTP is judged and where names are looked up.
    pub net: crate::grants::netguard::NetPolicy,
    /// The host's own paths, which no file grant reaches.
    pub control: Arc<crate::paths::ControlPaths>,
    pub catalog: Arc<Catalog>,
}

impl Toolbox {
    /// An empty toolbox (no tools) with a policy.
    pub fn new(policy: Policy, workspace: PathBuf, catalog: Arc<Catalog>) -> Self {
        Toolbox {
            tools: BTreeMap::new(),
            policy,
            workspace,
            net: crate::grants::netguard::NetPolicy::default(),
            control: Arc::default(),
            catalog,
        }
    }

    /// The built-in tools, `execute_pipeline`, and one `skill_<name>` tool
    /// per skill that can run without a model.
    pub fn standard(
        policy: Policy,
        workspace: PathBuf,
        catalog: Arc<Catalog>,
        invoker: Arc<dyn SkillInvoker>,
    ) -> Self {
        let mut tb = Toolbox::new(policy, workspace, catalog.clone());
        for t in builtin::all() {
            tb.register(t);
        }
        tb.register(Arc::new(http_fetch::HTTP_FETCH));
        tb.register(Arc::new(pipeline::EXECUTE_PIPELINE));
        for skill in catalog.skills() {
            if skill.meta.skillhost.handler.is_some() || skill.meta.skillhost.pipeline.is_some() {
                tb.register(Arc::new(builtin::SkillTool::new(skill, invoker.clone())));
            }
        }
        tb
    }

    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.name().to_owned(), tool);
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// The tools this caller may use, for a model's tool list.
    pub fn allowed(&self, cx: &CallContext<'_>) -> Vec<ToolSpec> {
        self.tools
            .values()
            .filter(|t| self.policy.check(t.as_ref(), cx).is_ok())
            .map(|t| ToolSpec {
                name: t.name().to_owned(),
                description: t.description(),
                parameters: t.parameters(),
            })
            .collect()
    }

    /// The tools put in front of the model for this caller: those the
    /// policy allows ([`Toolbox::allowed`]) that the skill can use and
    /// asked for ([`Offer`]).
    pub fn offered(&self, cx: &CallContext<'_>) -> Vec<ToolSpec> {
        let offered = |t: &&Arc<dyn Tool>| t.offer().admits(t.name(), cx);
        self.tools
            .values()
            .filter(offered)
            .filter(|t| self.policy.check(t.as_ref(), cx).is_ok())
            .map(|t| ToolSpec {
                name: t.name().to_owned(),
                description: t.description(),
                parameters: t.parameters(),
            })
            .collect()
    }

    /// Whether the caller may use the tool at all: global allow/deny, the
    /// skill's `allowed-tools`, its trust (layers 1-3).
    pub fn check_tool(&self, name: &str, cx: &CallContext<'_>) -> Result<&dyn Tool, ToolError> {
        let tool = self
            .tools
            .get(name)
            .ok_or_else(|| ToolError::UnknownTool(format!("no tool named `{name}`")))?;
        self.policy.check(tool.as_ref(), cx)?;
        Ok(tool.as_ref())
    }

    /// Every policy layer for one call with these arguments, without
    /// running it: layers 1-3, then the tool's grant check.
    pub fn check(&self, name: &str, args: &Value, cx: &CallContext<'_>) -> Result<(), ToolError> {
        Ok(self.check_tool(name, cx)?.authorize(cx, args)?)
    }

    /// Every tool call goes through here: global allow/deny, the skill's
    /// `allowed-tools`, its trust, then the tool's grant check.
    #[tracing::instrument(name = "tool_call", level = "debug", skip_all, fields(tool = name, skill = %cx.skill.name, caller = ?cx.caller))]
    pub async fn call(
        &self,
        name: &str,
        args: Value,
        cx: &CallContext<'_>,
    ) -> Result<Value, ToolError> {
        let tool = self.check_tool(name, cx)?;
        tool.authorize(cx, &args)?;
        if !args.is_object() {
            return Err(ToolError::InvalidArguments(format!(
                "arguments of `{name}` must be a JSON object"
            )));
        }
        tool.call(self, cx, args).await
    }
}

/// A required string argument.
pub(crate) fn str_arg<'v>(args: &'v Value, key: &str) -> Result<&'v str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidArguments(format!("`{key}` (a string) is required")))
}

#[cfg(test)]
mod tests;
