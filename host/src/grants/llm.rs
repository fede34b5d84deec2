//! `llm`: the handler may ask the configured model for completions
//! (`complete` of the host interface).

use std::sync::Arc;

use super::{CallSetup, Capability, Flag, Permit, Refusal};
use crate::skill::Capabilities;
use crate::types::{BoxFuture, ServiceError};

/// Bytes of a prompt and system prompt together.
pub const MAX_PROMPT: usize = 256 * 1024;

/// The configured model: the host service behind `complete` (`exec`
/// offers the run's provider through it).
pub trait ModelHost: Send + Sync {
    fn complete<'a>(
        &'a self,
        system: Option<&'a str>,
        prompt: &'a str,
    ) -> BoxFuture<'a, Result<String, ServiceError>>;
}

/// One call's view of the model.
pub struct LlmCall {
    skill: String,
    granted: bool,
    model: Option<Arc<dyn ModelHost>>,
}

impl LlmCall {
    /// The model, if the call may send it `prompt_bytes`.
    pub fn access(&self, prompt_bytes: usize) -> Result<Arc<dyn ModelHost>, Refusal> {
        if !self.granted {
            return Err(Refusal::Denied(format!(
                "the model is not granted to skill `{}` (capability `llm`)",
                self.skill
            )));
        }
        if prompt_bytes > MAX_PROMPT {
            return Err(Refusal::Limit(format!("prompt is over {MAX_PROMPT} bytes")));
        }
        self.model
            .clone()
            .ok_or_else(|| Refusal::NotFound("no model is configured".into()))
    }
}

pub struct Llm;

impl Capability for Llm {
    fn key(&self) -> &'static str {
        "llm"
    }

    fn flags(&self) -> &'static [Flag] {
        &[Flag {
            name: "llm",
            value_name: None,
            help: "Let the handler ask the configured model",
        }]
    }

    fn grant_from_flag(&self, _flag: &str, _values: &[String], into: &mut Capabilities) {
        into.llm = true;
    }

    fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities) {
        into.llm = declared.llm && granted.llm;
    }

    fn describe(&self, c: &Capabilities) -> Vec<String> {
        if c.llm {
            vec!["llm".into()]
        } else {
            Vec::new()
        }
    }

    fn imports(&self) -> &'static [Permit] {
        &[Permit {
            interface: "skillhost:skill/host",
            functions: &["complete"],
        }]
    }

    fn call_state(&self, call: &CallSetup<'_>) -> Option<Box<dyn std::any::Any + Send>> {
        Some(Box::new(LlmCall {
            skill: call.skill.to_owned(),
            granted: call.granted.llm,
            model: call.services.get::<dyn ModelHost>(),
        }))
    }
}
