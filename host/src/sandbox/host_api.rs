//! The `skillhost:skill/host` interface as the handler sees it. Every call
//! is checked against the effective grants at the moment it is made; the
//! services behind it (tools, model, key-value store) are injected so that
//! the sandbox does not depend on the stages that provide them.

use std::sync::Arc;

use super::bindings::skillhost::skill::host::{self, HostError, Level};
use super::state::HostState;

use crate::types::{BoxFuture, ServiceError};

/// Host tools a handler can call. One is made per call, bound to the
/// calling skill and its grants, so it needs no skill argument.
pub trait ToolHost: Send + Sync {
    /// Runs `name` with JSON `args`; the result is JSON text.
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: &'a str,
    ) -> BoxFuture<'a, Result<String, ServiceError>>;
}

/// The configured model (the llm stage implements this).
pub trait ModelHost: Send + Sync {
    fn complete<'a>(
        &'a self,
        system: Option<&'a str>,
        prompt: &'a str,
    ) -> BoxFuture<'a, Result<String, ServiceError>>;
}

/// Per-skill key-value storage (the store implements this).
pub trait KvHost: Send + Sync {
    fn get(&self, skill: &str, key: &str) -> Result<Option<Vec<u8>>, ServiceError>;
    fn set(&self, skill: &str, key: &str, value: &[u8]) -> Result<(), ServiceError>;
    fn delete(&self, skill: &str, key: &str) -> Result<(), ServiceError>;
}

impl From<ServiceError> for HostError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Denied(m) => HostError::Denied(m),
            ServiceError::NotFound(m) => HostError::NotFound(m),
            ServiceError::Failed(m) => HostError::Failed(m),
            ServiceError::Limit(m) => HostError::Limit(m),
        }
    }
}

/// What the host offers handlers; any part may be absent.
#[derive(Clone, Default)]
pub struct Services {
    pub tools: Option<Arc<dyn ToolHost>>,
    pub model: Option<Arc<dyn ModelHost>>,
    pub kv: Option<Arc<dyn KvHost>>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("tools", &self.tools.is_some())
            .field("model", &self.model.is_some())
            .field("kv", &self.kv.is_some())
            .finish()
    }
}

/// Size limits on what a handler can push through the host interface.
pub(crate) const MAX_LOG_LINE: usize = 4 * 1024;
pub(crate) const MAX_KV_KEY: usize = 256;
pub(crate) const MAX_KV_VALUE: usize = 64 * 1024;
pub(crate) const MAX_TOOL_ARGS: usize = 1024 * 1024;
pub(crate) const MAX_PROMPT: usize = 256 * 1024;

/// One line a handler logged.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogLine {
    pub level: &'static str,
    pub message: String,
}

fn level_name(l: Level) -> &'static str {
    match l {
        Level::Trace => "trace",
        Level::Debug => "debug",
        Level::Info => "info",
        Level::Warn => "warn",
        Level::Error => "error",
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [truncated {} bytes]", &s[..end], s.len() - end)
}

impl HostState {
    fn deny(&mut self, what: String) -> HostError {
        self.event(format!("denied: {what}"));
        HostError::Denied(what)
    }
}

impl super::bindings::skillhost::skill::types::Host for HostState {}

impl host::Host for HostState {
    async fn log(&mut self, level: Level, message: String) {
        let message = truncate(&message, MAX_LOG_LINE);
        if self.log_budget < message.len() {
            if !self.log_truncated {
                self.log_truncated = true;
                self.log.push(LogLine {
                    level: "warn",
                    message: "log budget exhausted; further lines dropped".into(),
                });
            }
            return;
        }
        self.log_budget -= message.len();
        self.log.push(LogLine {
            level: level_name(level),
            message,
        });
    }

    async fn call_tool(&mut self, name: String, args_json: String) -> Result<String, HostError> {
        if !self.capabilities.tools.contains(&name) {
            let skill = self.skill.clone();
            return Err(self.deny(format!(
                "tool `{}` is not granted to skill `{skill}`",
                truncate(&name, 64)
            )));
        }
        if args_json.len() > MAX_TOOL_ARGS {
            return Err(HostError::Limit(format!(
                "tool arguments are {} bytes, the limit is {MAX_TOOL_ARGS}",
                args_json.len()
            )));
        }
        let Some(tools) = self.services.tools.clone() else {
            return Err(HostError::NotFound(format!(
                "no tool `{name}` on this host"
            )));
        };
        let result = tools.call(&name, &args_json).await;
        self.event(format!(
            "tool {name}: {}",
            if result.is_ok() { "ok" } else { "error" }
        ));
        result.map_err(HostError::from)
    }

    async fn complete(
        &mut self,
        system: Option<String>,
        prompt: String,
    ) -> Result<String, HostError> {
        if !self.capabilities.llm {
            let skill = self.skill.clone();
            return Err(self.deny(format!(
                "the model is not granted to skill `{skill}` (capability `llm`)"
            )));
        }
        if prompt.len() + system.as_ref().map_or(0, String::len) > MAX_PROMPT {
            return Err(HostError::Limit(format!(
                "prompt is over {MAX_PROMPT} bytes"
            )));
        }
        let Some(model) = self.services.model.clone() else {
            return Err(HostError::NotFound("no model is configured".into()));
        };
        model
            .complete(system.as_deref(), &prompt)
            .await
            .map_err(HostError::from)
    }

    async fn kv_get(&mut self, key: String) -> Result<Option<Vec<u8>>, HostError> {
        let kv = self.kv_access(&key)?;
        let skill = self.skill.clone();
        off_the_runtime(move || kv.get(&skill, &key)).await
    }

    async fn kv_set(&mut self, key: String, value: Vec<u8>) -> Result<(), HostError> {
        let kv = self.kv_access(&key)?;
        if value.len() > MAX_KV_VALUE {
            return Err(HostError::Limit(format!(
                "value is {} bytes, the limit is {MAX_KV_VALUE}",
                value.len()
            )));
        }
        let skill = self.skill.clone();
        off_the_runtime(move || kv.set(&skill, &key, &value)).await
    }

    async fn kv_delete(&mut self, key: String) -> Result<(), HostError> {
        let kv = self.kv_access(&key)?;
        let skill = self.skill.clone();
        off_the_runtime(move || kv.delete(&skill, &key)).await
    }
}

/// Runs a key-value call on the blocking pool: the store may wait for
/// another process's write lock (SQLite's busy timeout), which must not
/// hold an async worker that other calls and clients need.
async fn off_the_runtime<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, ServiceError> + Send + 'static,
) -> Result<T, HostError> {
    match tokio::task::spawn_blocking(call).await {
        Ok(result) => result.map_err(HostError::from),
        Err(e) => Err(HostError::Failed(format!(
            "the key-value call stopped: {e}"
        ))),
    }
}

impl HostState {
    fn kv_access(&mut self, key: &str) -> Result<Arc<dyn KvHost>, HostError> {
        if !self.capabilities.kv {
            let skill = self.skill.clone();
            return Err(self.deny(format!(
                "the key-value store is not granted to skill `{skill}` (capability `kv`)"
            )));
        }
        if key.is_empty() || key.len() > MAX_KV_KEY {
            return Err(HostError::Limit(format!(
                "keys must be 1 to {MAX_KV_KEY} bytes"
            )));
        }
        self.services
            .kv
            .clone()
            .ok_or_else(|| HostError::NotFound("no key-value store on this host".into()))
    }
}
