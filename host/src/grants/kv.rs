//! `kv`: the handler may use its own key-value store (per skill, within
//! the `[limits]` quota).

use std::sync::Arc;

use super::{CallSetup, Capability, Flag, Permit, Refusal};
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

/// One call's view of the key-value store.
pub struct KvCall {
    skill: String,
    granted: bool,
    store: Option<Arc<dyn KvHost>>,
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
}

pub struct Kv;

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

    fn call_state(&self, call: &CallSetup<'_>) -> Option<Box<dyn std::any::Any + Send>> {
        Some(Box::new(KvCall {
            skill: call.skill.to_owned(),
            granted: call.granted.kv,
            store: call.services.get::<dyn KvHost>(),
        }))
    }
}
