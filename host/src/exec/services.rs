//! The services a handler reaches through the host interface, adapted
//! from the stages that provide them: tools from the toolbox, `complete`
//! from the model provider, key-value storage from the workspace store.
//! Each capability defines the service it needs (`grants::ToolHost`,
//! `ModelHost`, `KvHost`); the stages know nothing of the sandbox.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tracing::Instrument;

use super::{Invoker, Runner};
use crate::grants::{Effective, KvHost, ModelHost, ToolHost};
use crate::llm::{ChatRequest, Message, Provider};
use crate::store::{KvQuota, KvStore, RunStore, StoreConfig, StoreError};
use crate::tools::{CallContext, Caller, Policy, SkillInvoker, ToolError, Toolbox};
use crate::types::{BoxFuture, ServiceError, lock};

/// A handler's `call-tool`: the same toolbox and policy as everyone else.
pub(super) struct HandlerTools {
    pub runner: Runner,
    pub skill: String,
    pub grants: Effective,
    pub depth: u32,
}

impl ToolHost for HandlerTools {
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: &'a str,
    ) -> BoxFuture<'a, Result<String, ServiceError>> {
        Box::pin(async move {
            let catalog = self.runner.catalog();
            let skill = catalog
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
                Err(ToolError::Denied(d)) => Err(ServiceError::Denied(d.to_string())),
                Err(ToolError::UnknownTool(m)) => Err(ServiceError::NotFound(m)),
                Err(e) => Err(ServiceError::Failed(e.to_string())),
            }
        })
    }
}

/// Lets a handler's `complete` import use the configured provider: one user
/// message, no tools, the text of the answer.
pub(super) struct ProviderModelHost(pub Arc<dyn Provider>);

impl ModelHost for ProviderModelHost {
    fn complete<'a>(
        &'a self,
        system: Option<&'a str>,
        prompt: &'a str,
    ) -> BoxFuture<'a, Result<String, ServiceError>> {
        let span =
            tracing::debug_span!("model_call", provider = %self.0.name(), caller = "handler");
        Box::pin(
            async move {
                let req = ChatRequest {
                    system: system.map(str::to_string),
                    messages: vec![Message::User(prompt.to_string())],
                    tools: Vec::new(),
                    max_tokens: None,
                };
                let resp = self
                    .0
                    .chat(&req)
                    .await
                    .map_err(|e| ServiceError::Failed(e.to_string()))?;
                Ok(resp.text.unwrap_or_default())
            }
            .instrument(span),
        )
    }
}

/// The workspace store, opened the first time a run needs it (a handler's
/// key-value call, or recording the run) rather than when the runner is
/// made, so commands that never touch it do not pay for opening it.
///
/// Only success is kept. A failure to open is often transient (the process
/// is out of file descriptors because a handler held them, the folder was
/// briefly unwritable), so the next use tries again. There is no backoff
/// between tries: every way opening fails is either a few failing system
/// calls (missing or unwritable folder, no descriptors, not a database, a
/// newer schema), far cheaper than the handler call or run that needs the
/// store, or SQLite's busy timeout, which any write to an open store would
/// wait out just the same. A backoff would only make calls fail for a
/// while after the cause is gone. Attempts are made one at a time.
pub(super) struct LazyStore {
    dir: PathBuf,
    config: StoreConfig,
    kv_quota: KvQuota,
    store: OnceLock<Arc<dyn RunStore>>,
    opening: std::sync::Mutex<()>,
}

impl LazyStore {
    /// `opened`: the store, when the caller opened it already.
    pub(super) fn new(
        dir: PathBuf,
        config: StoreConfig,
        kv_quota: KvQuota,
        opened: Option<Arc<dyn RunStore>>,
    ) -> Self {
        let store = OnceLock::new();
        if let Some(opened) = opened {
            let _ = store.set(opened);
        }
        LazyStore {
            dir,
            config,
            kv_quota,
            store,
            opening: std::sync::Mutex::new(()),
        }
    }

    pub(super) fn get_store(&self) -> Result<&dyn RunStore, StoreError> {
        self.handle().map(|store| store.as_ref())
    }

    /// [`LazyStore::get_store`] as a handle another thread can hold.
    pub(super) fn handle(&self) -> Result<&Arc<dyn RunStore>, StoreError> {
        if let Some(store) = self.store.get() {
            return Ok(store);
        }
        // Nothing is left half-done by a panic while opening.
        let _one_at_a_time = self.opening.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = self.store.get() {
            return Ok(store);
        }
        let store = self.config.open(&self.dir, self.kv_quota)?;
        Ok(self.store.get_or_init(|| store))
    }

    /// The store, unless there is none yet: reading must not create one.
    pub(super) fn existing_store(&self) -> Option<Result<&dyn RunStore, StoreError>> {
        if self.store.get().is_none() && !self.config.exists(&self.dir) {
            return None;
        }
        Some(self.get_store())
    }

    /// The store for a handler's key-value call.
    fn kv_store(&self) -> Result<&dyn KvStore, ServiceError> {
        let store = self.get_store().map_err(|e| {
            ServiceError::Failed(format!("{e} (opening is tried again on the next use)"))
        })?;
        Ok(store)
    }
}

impl KvHost for LazyStore {
    fn get(&self, skill: &str, key: &str) -> Result<Option<Vec<u8>>, ServiceError> {
        self.kv_store()?.kv_get(skill, key).map_err(kv_error)
    }
    fn set(&self, skill: &str, key: &str, value: &[u8]) -> Result<(), ServiceError> {
        self.kv_store()?.kv_set(skill, key, value).map_err(kv_error)
    }
    fn delete(&self, skill: &str, key: &str) -> Result<(), ServiceError> {
        self.kv_store()?.kv_delete(skill, key).map_err(kv_error)
    }
}

/// A quota is a limit the handler hit; anything else is the store failing.
fn kv_error(e: StoreError) -> ServiceError {
    match e {
        StoreError::KvQuota { .. } => ServiceError::Limit(e.to_string()),
        e => ServiceError::Failed(e.to_string()),
    }
}

impl Runner {
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
        tb.net = crate::grants::netguard::NetPolicy::new(s.config.network.allow_private.clone());
        tb.control = self.control_paths().clone();
        let tb = Arc::new(tb);
        *cached = Some((generation, tb.clone()));
        tb
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ScriptTurn, ScriptedProvider};

    #[tokio::test]
    async fn model_host_adapter_returns_text() {
        let p = ScriptedProvider::from_turns(
            "inline",
            vec![ScriptTurn {
                text: Some("hi".into()),
                ..Default::default()
            }],
        );
        let p = Arc::new(p);
        let host = ProviderModelHost(p.clone());
        let out = host.complete(Some("sys"), "hello").await;
        assert_eq!(out, Ok("hi".to_string()));
        let seen = p.requests();
        assert_eq!(seen[0].system.as_deref(), Some("sys"));
        assert_eq!(seen[0].messages, vec![Message::User("hello".into())]);
    }
}
