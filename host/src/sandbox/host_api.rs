//! The `skillhost:skill/host` interface as the handler sees it: `log` is
//! the sandbox's own; every other function is handed to its capability's
//! per-call state (`grants::KvCall`, `LlmCall`, `ToolsCall`), which checks
//! the effective grant at the moment of the call and reaches the host
//! service injected for it. A capability with an interface of its own is
//! linked through `grants::link_host_interfaces` instead.

use std::sync::Arc;

use super::bindings::skillhost::skill::host::{self, HostError, Level};
use super::state::HostState;

use crate::grants::{
    CallStates, CapabilityHost, KvCall, KvHost, LlmCall, Refusal, ToolsCall, truncated,
};
use crate::types::ServiceError;

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

/// Bytes of one log line a handler may write.
pub(crate) const MAX_LOG_LINE: usize = 4 * 1024;

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

impl HostState {
    /// A refusal as the guest sees it; a denial is noted among the events.
    fn refused(&mut self, refusal: Refusal) -> HostError {
        match refusal {
            Refusal::Denied(what) => {
                self.event(format!("denied: {what}"));
                HostError::Denied(what)
            }
            Refusal::Limit(m) => HostError::Limit(m),
            Refusal::NotFound(m) => HostError::NotFound(m),
        }
    }

    /// The state of capability state type `T` (every registered
    /// capability's state is made when the call starts).
    fn capability<T: std::any::Any>(&self) -> Result<&T, HostError> {
        self.calls
            .get::<T>()
            .ok_or_else(|| HostError::Failed("the capability is not set up for this call".into()))
    }
}

impl CapabilityHost for HostState {
    fn call_states(&mut self) -> &mut CallStates {
        &mut self.calls
    }

    fn event(&mut self, event: String) {
        HostState::event(self, event);
    }
}

impl super::bindings::skillhost::skill::types::Host for HostState {}

impl host::Host for HostState {
    async fn log(&mut self, level: Level, message: String) {
        let message = truncated(&message, MAX_LOG_LINE);
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
        let access = self
            .capability::<ToolsCall>()?
            .access(&name, args_json.len());
        let tools = access.map_err(|r| self.refused(r))?;
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
        let bytes = prompt.len() + system.as_ref().map_or(0, String::len);
        let access = self.capability::<LlmCall>()?.access(bytes);
        let model = access.map_err(|r| self.refused(r))?;
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
        KvCall::check_value(value.len()).map_err(|r| self.refused(r))?;
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
        let access = self.capability::<KvCall>()?.access(key);
        access.map_err(|r| self.refused(r))
    }
}
