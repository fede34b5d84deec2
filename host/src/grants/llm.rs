//! `llm`: the handler may ask the configured model for completions
//! (`complete` of the shared host interface, which this capability links).

use std::sync::Arc;

use wasmtime::component::Linker;

use super::{
    CallSetup, Capability, Events, Flag, HOST_INTERFACE, HostCapability, HostError, Offer, Permit,
    Refusal, Services,
};
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

impl Offer for Arc<dyn ModelHost> {
    fn offer(self, to: &mut Services) {
        to.llm = Some(self);
    }
}

/// One call's view of the model.
pub struct LlmCall {
    skill: String,
    granted: bool,
    model: Option<Arc<dyn ModelHost>>,
    events: Events,
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

impl HostCapability for Llm {
    type Service = Option<Arc<dyn ModelHost>>;
    type State = LlmCall;

    fn call_state(call: &CallSetup<'_>, model: &Self::Service) -> LlmCall {
        LlmCall {
            skill: call.skill.to_owned(),
            granted: call.granted.llm,
            model: model.clone(),
            events: call.events.clone(),
        }
    }

    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        project: fn(&mut T) -> &mut LlmCall,
    ) -> wasmtime::Result<()> {
        linker.instance(HOST_INTERFACE)?.func_wrap_async(
            "complete",
            move |mut store, (system, prompt): (Option<String>, String)| {
                let call = project(store.data_mut());
                let bytes = prompt.len() + system.as_ref().map_or(0, String::len);
                let reached = call.access(bytes).map_err(|r| r.to_guest(&call.events));
                Box::new(async move {
                    let answer = match reached {
                        Ok(model) => model
                            .complete(system.as_deref(), &prompt)
                            .await
                            .map_err(HostError::from),
                        Err(e) => Err(e),
                    };
                    Ok((answer,))
                })
            },
        )
    }
}

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
}
