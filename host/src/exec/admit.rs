//! What runs in tier 1: the skill's handler read (or found unchanged),
//! admitted by the gate's approvals and compiled (or found compiled), with
//! the grants and host services its call gets.

use std::sync::Arc;

use super::Runner;
use super::files::{HandlerFiles, SkillFiles};
use super::outcome::{RunError, RunOutcome};
use super::progress::{PROGRESS, Progress};
use super::services::{HandlerTools, ProviderModelHost};
use crate::grants::{Effective, KvHost, ModelHost, ToolHost};
use crate::sandbox::{self, Handler, Sandbox, SandboxOptions, Services};
use crate::skill::{Skill, SkillFileError};
use crate::types::{Chain, Failure, FailureClass};

/// Why a handler did not get as far as its call; the run's failure.
pub(super) type Stopped = Failure;

impl Runner {
    /// The handler, compiled, with the grants it runs with; or why it
    /// cannot run (unreadable, not approved, does not compile).
    pub(super) async fn load_handler(
        &self,
        skill: &Skill,
        handler_rel: &str,
        outcome: &mut RunOutcome,
    ) -> Result<Result<(Handler, Effective), Stopped>, RunError> {
        let unavailable = |message: String| Failure::new(FailureClass::HandlerUnavailable, message);
        let files = match self.read_files_off_the_workers(skill, handler_rel).await {
            Ok(f) => f,
            Err(e) => {
                return Ok(Err(unavailable(format!(
                    "cannot read handler `{handler_rel}` of skill `{}`: {e}",
                    skill.name
                ))));
            }
        };
        // The folder is pinned only when an approval or a grant needs it.
        let pin = match self.needs_pin(skill) {
            true => Some(self.shared.files.skill_pin_off_the_workers(skill).await),
            false => None,
        };
        let grants = match &pin {
            Some(Ok(pin)) => self.effective_grants(skill, pin),
            Some(Err(e)) => self.effective_grants(skill, &format!("unpinned ({e})")),
            None => self.effective_grants(skill, ""),
        };
        self.note_grants(skill, &grants, outcome);
        // Before compiling: an unapproved artifact gets no further.
        if let Err(refusal) = self.admitted(skill, files.artifact.as_deref(), pin.as_ref()) {
            return Ok(Err(Failure::new(
                FailureClass::HandlerNotApproved,
                refusal.to_string(),
            )));
        }
        let handler = match files.handler {
            Some(HandlerFiles::Loaded(h)) => {
                let latest = self.sandbox()?.latest(&h);
                if latest.tier != h.tier {
                    self.shared
                        .files
                        .remember_handler(skill, &files.fingerprint, &latest);
                }
                latest
            }
            Some(HandlerFiles::Read(wasm)) => match self.compile(skill, wasm).await? {
                Ok(h) => {
                    self.shared
                        .files
                        .remember_handler(skill, &files.fingerprint, &h);
                    h
                }
                Err(e) => {
                    return Ok(Err(Failure::new(
                        e.class(),
                        format!(
                            "handler `{handler_rel}` of skill `{}`: {}",
                            skill.name,
                            Chain(&e)
                        ),
                    )));
                }
            },
            None => return Ok(Err(unavailable("the skill declares no handler".into()))),
        };
        Ok(Ok((handler, grants)))
    }

    /// The skill's files: unchanged ones from memory; a changed handler
    /// (up to 128 MiB) is read and hashed on the blocking pool, off the
    /// async workers.
    async fn read_files_off_the_workers(
        &self,
        skill: &Skill,
        handler_rel: &str,
    ) -> Result<SkillFiles, SkillFileError> {
        if let Some(files) = self.shared.files.unchanged_files(skill) {
            return Ok(files);
        }
        let (cache, owned) = (self.shared.files.clone(), skill.clone());
        tokio::task::spawn_blocking(move || cache.skill_files(&owned))
            .await
            .unwrap_or_else(|e| {
                Err(SkillFileError::Io {
                    path: handler_rel.to_owned(),
                    source: std::io::Error::other(e),
                })
            })
    }

    /// Compiles a handler read from disk, telling the caller's progress
    /// sink that it waits for a compile.
    async fn compile(
        &self,
        skill: &Skill,
        wasm: sandbox::Artifact,
    ) -> Result<Result<Handler, sandbox::SandboxError>, RunError> {
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
        Ok(self.sandbox()?.load_async_with(wasm, on_compile).await)
    }

    /// The host services a call of `skill` reaches: tools through this
    /// runner (nested runs one level deeper), the model, and the store's
    /// key-value data.
    pub(super) fn services(&self, skill: &Skill, grants: &Effective, depth: u32) -> Services {
        let tools: Arc<dyn ToolHost> = Arc::new(HandlerTools {
            runner: self.clone(),
            skill: skill.name.clone(),
            grants: grants.clone(),
            depth,
        });
        let kv: Arc<dyn KvHost> = self.shared.store.clone();
        let services = Services::default().with(tools).with(kv);
        match self.shared.provider.clone() {
            Some(p) => {
                let model: Arc<dyn ModelHost> = Arc::new(ProviderModelHost(p));
                services.with(model)
            }
            None => services,
        }
    }
}

impl Runner {
    /// The shared sandbox, created on first use.
    pub fn sandbox(&self) -> Result<Arc<Sandbox>, sandbox::SandboxError> {
        let s = &self.shared;
        s.sandbox
            .get_or_init(|| {
                let options = SandboxOptions {
                    net: crate::grants::netguard::NetPolicy::new(
                        s.config.network.allow_private.clone(),
                    ),
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
}
