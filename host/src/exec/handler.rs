//! Tier 1: the skill's handler, admitted and compiled (see `admit`),
//! called in the sandbox with the call's context, grants and limits.

use std::sync::Arc;

use super::call::Call;
use super::outcome::RunOutcome;
use crate::sandbox::{self, CallRequest, FileRoots, Handler, Sandbox, Services};

/// What a handler's call reaches: the sandbox, the compiled handler, the
/// files it may open and the host services behind its imports.
pub(super) struct HandlerCode {
    pub sandbox: Arc<Sandbox>,
    pub handler: Handler,
    pub roots: FileRoots,
    pub host: Services,
}

/// Calls the handler in the sandbox; its output or failure, log, events
/// and times go into the outcome.
pub(super) async fn call(call: &mut Call<'_, HandlerCode>, outcome: &mut RunOutcome) {
    let code = &mut call.services;
    let request = CallRequest {
        skill: &call.skill.name,
        description: call.task,
        context: &call.context,
        grants: &call.grants,
        limits: call.limits,
        roots: &code.roots,
        services: std::mem::take(&mut code.host),
        // The clocks and random numbers every call gets, a gate case's
        // too, drawn from the host's random numbers (docs/gate.md).
        entropy: sandbox::Entropy::Host,
    };
    let done = code.sandbox.call(&code.handler, &request).await;
    outcome.timings.instantiate_us = done.instantiate_us;
    outcome.timings.call_us = done.call_us;
    outcome.log = done.log;
    outcome.events = done.events;
    match done.result {
        Ok(o) => outcome.output = Some(o),
        Err(f) => outcome.failure = Some(f),
    }
}
