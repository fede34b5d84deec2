//! `kv`: the handler may use its own key-value store (per skill, within
//! the `[limits]` quota), through `kv-get`, `kv-set` and `kv-delete` of
//! the shared host interface, which this capability links.

use std::sync::Arc;

use wasmtime::component::{Linker, LinkerInstance};

use super::{
    CallSetup, Capability, Events, Flag, HOST_INTERFACE, HostCapability, HostError, Offer, Permit,
    Refusal, Services,
};
use crate::skill::Capabilities;
use crate::types::ServiceError;

/// Bytes of a key and of a value a handler may pass.
pub const MAX_KV_KEY: usize = 256;
pub const MAX_KV_VALUE: usize = 64 * 1024;

/// Per-skill key-value storage: the host service behind `kv-get`,
/// `kv-set` and `kv-delete` (`exec` offers the workspace store through
/// it; the gate, a scratch store of its own).
pub trait KvHost: Send + Sync {
    fn get(&self, skill: &str, key: &str) -> Result<Option<Vec<u8>>, ServiceError>;
    fn set(&self, skill: &str, key: &str, value: &[u8]) -> Result<(), ServiceError>;
    fn delete(&self, skill: &str, key: &str) -> Result<(), ServiceError>;
}

impl Offer for Arc<dyn KvHost> {
    fn offer(self, to: &mut Services) {
        to.kv = Some(self);
    }
}

/// One call's view of the key-value store.
pub struct KvCall {
    skill: String,
    granted: bool,
    store: Option<Arc<dyn KvHost>>,
    events: Events,
}

impl KvCall {
    /// The store, if the call may use `key` in it.
    pub fn access(&self, key: &str) -> Result<Arc<dyn KvHost>, Refusal> {
        if !self.granted {
            return Err(Refusal::Denied(format!(
                "the key-value store is not granted to skill `{}` (capability `kv`)",
                self.skill
            )));
        }
        if key.is_empty() || key.len() > MAX_KV_KEY {
            return Err(Refusal::Limit(format!(
                "keys must be 1 to {MAX_KV_KEY} bytes"
            )));
        }
        self.store
            .clone()
            .ok_or_else(|| Refusal::NotFound("no key-value store on this host".into()))
    }

    /// Whether a value of `len` bytes may be written.
    pub fn check_value(len: usize) -> Result<(), Refusal> {
        if len > MAX_KV_VALUE {
            return Err(Refusal::Limit(format!(
                "value is {len} bytes, the limit is {MAX_KV_VALUE}"
            )));
        }
        Ok(())
    }

    /// The store and the skill whose keys to use, if the call may use
    /// `key` (and write `value_len` bytes); a denial is noted.
    fn reach(&self, key: &str, value_len: usize) -> Result<(Arc<dyn KvHost>, String), HostError> {
        let checked = self
            .access(key)
            .and_then(|kv| KvCall::check_value(value_len).map(|()| kv));
        match checked {
            Ok(kv) => Ok((kv, self.skill.clone())),
            Err(refusal) => Err(refusal.to_guest(&self.events)),
        }
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

type KvGet = Result<Option<Vec<u8>>, HostError>;
type KvDone = Result<(), HostError>;

pub struct Kv;

impl HostCapability for Kv {
    type Service = Option<Arc<dyn KvHost>>;
    type State = KvCall;

    fn call_state(call: &CallSetup<'_>, store: &Self::Service) -> KvCall {
        KvCall {
            skill: call.skill.to_owned(),
            granted: call.granted.kv,
            store: store.clone(),
            events: call.events.clone(),
        }
    }

    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        project: fn(&mut T) -> &mut KvCall,
    ) -> wasmtime::Result<()> {
        let mut host = linker.instance(HOST_INTERFACE)?;
        link_get(&mut host, project)?;
        link_set(&mut host, project)?;
        link_delete(&mut host, project)
    }
}

type Project<T> = fn(&mut T) -> &mut KvCall;

fn link_get<T: Send + 'static>(
    host: &mut LinkerInstance<'_, T>,
    project: Project<T>,
) -> wasmtime::Result<()> {
    host.func_wrap_async("kv-get", move |mut store, (key,): (String,)| {
        let reached = project(store.data_mut()).reach(&key, 0);
        Box::new(async move {
            let answer: KvGet = match reached {
                Ok((kv, skill)) => off_the_runtime(move || kv.get(&skill, &key)).await,
                Err(e) => Err(e),
            };
            Ok((answer,))
        })
    })
}

fn link_set<T: Send + 'static>(
    host: &mut LinkerInstance<'_, T>,
    project: Project<T>,
) -> wasmtime::Result<()> {
    host.func_wrap_async(
        "kv-set",
        move |mut store, (key, value): (String, Vec<u8>)| {
            let reached = project(store.data_mut()).reach(&key, value.len());
            Box::new(async move {
                let answer: KvDone = match reached {
                    Ok((kv, skill)) => off_the_runtime(move || kv.set(&skill, &key, &value)).await,
                    Err(e) => Err(e),
                };
                Ok((answer,))
            })
        },
    )
}

fn link_delete<T: Send + 'static>(
    host: &mut LinkerInstance<'_, T>,
    project: Project<T>,
) -> wasmtime::Result<()> {
    host.func_wrap_async("kv-delete", move |mut store, (key,): (String,)| {
        let reached = project(store.data_mut()).reach(&key, 0);
        Box::new(async move {
            let answer: KvDone = match reached {
                Ok((kv, skill)) => off_the_runtime(move || kv.delete(&skill, &key)).await,
                Err(e) => Err(e),
            };
            Ok((answer,))
        })
    })
}

impl Capability for Kv {
    fn key(&self) -> &'static str {
        "kv"
    }

    fn flags(&self) -> &'static [Flag] {
        &[Flag {
            name: "kv",
            value_name: None,
            help: "Let the handler use its key-value store",
        }]
    }

    fn grant_from_flag(&self, _flag: &str, _values: &[String], into: &mut Capabilities) {
        into.kv = true;
    }

    fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities) {
        into.kv = declared.kv && granted.kv;
    }

    fn describe(&self, c: &Capabilities) -> Vec<String> {
        if c.kv { vec!["kv".into()] } else { Vec::new() }
    }

    fn imports(&self) -> &'static [Permit] {
        &[Permit {
            interface: "skillhost:skill/host",
            functions: &["kv-get", "kv-set", "kv-delete"],
        }]
    }
}
