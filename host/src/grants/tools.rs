//! `tools`: host tools the handler may call by name through `call-tool`
//! (the tool policy applies on top).

use std::sync::Arc;

use super::call::truncated;
use super::{CallSetup, Capability, Flag, Permit, Refusal};
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

/// One call's view of the host tools.
pub struct ToolsCall {
    skill: String,
    granted: Vec<String>,
    host: Option<Arc<dyn ToolHost>>,
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
}

pub struct Tools;

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

    fn call_state(&self, call: &CallSetup<'_>) -> Option<Box<dyn std::any::Any + Send>> {
        Some(Box::new(ToolsCall {
            skill: call.skill.to_owned(),
            granted: call.granted.tools.clone(),
            host: call.services.get::<dyn ToolHost>(),
        }))
    }
}
