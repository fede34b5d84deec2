//! `tools`: host tools the handler may call by name through `call-tool`
//! of the shared host interface, which this capability links (the tool
//! policy applies on top).

use std::sync::Arc;

use wasmtime::component::Linker;

use super::call::truncated;
use super::{
    CallSetup, Capability, Events, Flag, HOST_INTERFACE, HostCapability, HostError, Offer, Permit,
    Refusal, Services,
};
use crate::skill::Capabilities;
use crate::types::{BoxFuture, ServiceError};

/// Bytes of one tool call's arguments.
pub const MAX_TOOL_ARGS: usize = 1024 * 1024;

/// Host tools a handler can call: the host service behind `call-tool`.
/// One is made per call, bound to the calling skill and its grants, so it
/// needs no skill argument.
pub trait ToolHost: Send + Sync {
    /// Runs `name` with JSON `args`; the result is JSON text.
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: &'a str,
    ) -> BoxFuture<'a, Result<String, ServiceError>>;
}

impl Offer for Arc<dyn ToolHost> {
    fn offer(self, to: &mut Services) {
        to.tools = Some(self);
    }
}

/// One call's view of the host tools.
pub struct ToolsCall {
    skill: String,
    granted: Vec<String>,
    host: Option<Arc<dyn ToolHost>>,
    events: Events,
}

impl ToolsCall {
    /// The tools, if the call may run `name` with `args_bytes` of arguments.
    pub fn access(&self, name: &str, args_bytes: usize) -> Result<Arc<dyn ToolHost>, Refusal> {
        if !self.granted.iter().any(|t| t == name) {
            return Err(Refusal::Denied(format!(
                "tool `{}` is not granted to skill `{}`",
                truncated(name, 64),
                self.skill
            )));
        }
        if args_bytes > MAX_TOOL_ARGS {
            return Err(Refusal::Limit(format!(
                "tool arguments are {args_bytes} bytes, the limit is {MAX_TOOL_ARGS}"
            )));
        }
        self.host
            .clone()
            .ok_or_else(|| Refusal::NotFound(format!("no tool `{name}` on this host")))
    }

    /// Runs `name` if the call may; the run (or denial) is noted.
    async fn run(
        reached: Result<(Arc<dyn ToolHost>, Events), HostError>,
        name: String,
        args: String,
    ) -> Result<String, HostError> {
        let (tools, events) = reached?;
        let result = tools.call(&name, &args).await;
        let how = if result.is_ok() { "ok" } else { "error" };
        events.note(format!("tool {name}: {how}"));
        result.map_err(HostError::from)
    }
}

pub struct Tools;

impl HostCapability for Tools {
    type Service = Option<Arc<dyn ToolHost>>;
    type State = ToolsCall;

    fn call_state(call: &CallSetup<'_>, host: &Self::Service) -> ToolsCall {
        ToolsCall {
            skill: call.skill.to_owned(),
            granted: call.granted.tools.clone(),
            host: host.clone(),
            events: call.events.clone(),
        }
    }

    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        project: fn(&mut T) -> &mut ToolsCall,
    ) -> wasmtime::Result<()> {
        linker.instance(HOST_INTERFACE)?.func_wrap_async(
            "call-tool",
            move |mut store, (name, args): (String, String)| {
                let call = project(store.data_mut());
                let reached = match call.access(&name, args.len()) {
                    Ok(tools) => Ok((tools, call.events.clone())),
                    Err(refusal) => Err(refusal.to_guest(&call.events)),
                };
                Box::new(async move { Ok((ToolsCall::run(reached, name, args).await,)) })
            },
        )
    }
}

impl Capability for Tools {
    fn key(&self) -> &'static str {
        "tools"
    }

    fn flags(&self) -> &'static [Flag] {
        &[Flag {
            name: "tool",
            value_name: Some("NAME"),
            help: "Host tool the handler may call (repeatable)",
        }]
    }

    fn grant_from_flag(&self, _flag: &str, values: &[String], into: &mut Capabilities) {
        into.tools.extend_from_slice(values);
    }

    fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities) {
        into.tools = declared
            .tools
            .iter()
            .filter(|t| granted.tools.contains(t))
            .cloned()
            .collect();
    }

    fn describe(&self, c: &Capabilities) -> Vec<String> {
        if c.tools.is_empty() {
            return Vec::new();
        }
        vec![format!("tools {}", c.tools.join(", "))]
    }

    fn imports(&self) -> &'static [Permit] {
        &[Permit {
            interface: "skillhost:skill/host",
            functions: &["call-tool"],
        }]
    }
}
