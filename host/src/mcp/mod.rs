//! `skillhost mcp`: the skills served over the Model Context Protocol, with
//! the official Rust SDK (`rmcp`).
//!
//! - Tools: `list_skills` and `read_skill` (progressive disclosure), then
//!   one `skill_<name>` tool per skill that answers without a model
//!   (handler, pipeline or template). Its input is the task text plus the
//!   skill's context fields. A call is [`Runner::run_skill`], the very path
//!   of `skillhost run`: same grants, limits, tool policy and recording.
//!   Skills marked `disable-model-invocation` stay tools (the client's user
//!   can ask for them) but say so in their description and in
//!   `list_skills`.
//! - Resources: every file of every skill as `skill://NAME/PATH`, read
//!   through [`Skill::read_file`](crate::skill::Skill::read_file) (inside
//!   the folder, size-capped).
//! - Prompts: one per user-invocable skill, giving the client's model the
//!   skill's instructions and the task.
//!
//! A handler failure, trap or limit is an error *result* naming its class
//! (`LimitExceeded: ...`); the server keeps serving. Stdout is the protocol:
//! nothing else may print there.

pub mod names;
pub mod resources;
mod server;

use std::net::SocketAddr;

use rmcp::ServiceExt;

use crate::exec::Runner;

pub use server::{
    LIST_SKILLS, MAX_READ_BYTES, READ_SKILL, SkillServer, coerce_context, failure_result,
    outcome_result,
};

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("the MCP session did not start: {0}")]
    Start(String),
    #[error("the MCP server stopped abnormally: {0}")]
    Stopped(String),
    #[error(
        "refusing to serve MCP on {0}: it is not a loopback address and anyone who can reach it could run skills; pass --allow-remote if that is intended"
    )]
    RemoteBind(SocketAddr),
}

/// Serves `runner`'s catalog on stdin/stdout until the client closes the
/// stream. Must run inside a tokio runtime with IO enabled.
pub async fn serve_stdio(runner: Runner) -> Result<(), McpError> {
    let server = SkillServer::new(runner);
    // Non-blocking pipes when the client launched us with pipes (the usual
    // case); plain blocking stdio otherwise.
    let running = server
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|e| McpError::Start(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| McpError::Stopped(e.to_string()))?;
    Ok(())
}

/// A network transport runs skills for whoever connects, so only loopback
/// is served unless the operator explicitly allows remote clients.
pub fn check_bind(addr: SocketAddr, allow_remote: bool) -> Result<(), McpError> {
    if addr.ip().is_loopback() || allow_remote {
        Ok(())
    } else {
        Err(McpError::RemoteBind(addr))
    }
}

#[cfg(test)]
mod tests;
