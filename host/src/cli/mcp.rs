//! `skillhost mcp`: serve the skills to an MCP client. Stdout carries the
//! protocol, so everything human-readable goes to stderr.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Args;

use super::Ctx;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve streamable HTTP on this address instead of stdio
    /// (loopback only unless --allow-remote).
    #[arg(long, value_name = "ADDR:PORT")]
    http: Option<SocketAddr>,
    /// Allow --http on a non-loopback address: anyone who reaches it can run skills.
    #[arg(long, requires = "http")]
    allow_remote: bool,
    /// Require `Authorization: Bearer <token>`, the token read from this
    /// environment variable (required with --allow-remote).
    #[arg(long, value_name = "VAR", requires = "http")]
    token_env: Option<String>,
    /// Skill calls running at once (default: from cores and memory; [mcp] max_calls).
    #[arg(long, value_name = "N", requires = "http")]
    max_calls: Option<usize>,
    /// Skill calls waiting for a place; past them a call is busy (HTTP 503) ([mcp] max_queued).
    #[arg(long, value_name = "N", requires = "http")]
    max_queued: Option<usize>,
    /// Open sessions; past them a new session is busy (HTTP 503) ([mcp] max_sessions).
    #[arg(long, value_name = "N", requires = "http")]
    max_sessions: Option<usize>,
}

pub fn run(args: McpArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let token = match &args.token_env {
        Some(var) => Some(crate::mcp::BearerToken::from_env(var)?),
        None => None,
    };
    if let Some(addr) = args.http {
        // Refuse a remote bind before loading anything.
        crate::mcp::check_bind(addr, args.allow_remote, token.is_some())?;
    }
    // A desktop client starts the server in a folder of its choosing,
    // often `/`; runs are recorded where they can be, and the log says so.
    let mut paths = ctx.paths.clone();
    if let Some(why) = paths.settle_server_workspace() {
        tracing::info!("{why}");
    }
    let runner = super::Ctx { paths }.server_runner()?;
    let rt = super::runtime()?;
    match args.http {
        Some(addr) => {
            let options = crate::mcp::HttpOptions {
                addr,
                allow_remote: args.allow_remote,
                token,
                limits: crate::admission::McpConfig {
                    max_calls: args.max_calls,
                    max_queued: args.max_queued,
                    max_sessions: args.max_sessions,
                },
            };
            rt.block_on(crate::mcp::serve_http(runner, options, |bound, limits| {
                tracing::info!(
                    "skillhost: {} calls at once, {} queued, {} sessions",
                    limits.calls,
                    limits.queued,
                    limits.sessions
                );
                tracing::info!(
                    "skillhost: serving MCP (streamable HTTP) at http://{bound}{}",
                    crate::mcp::HTTP_PATH
                )
            }))?
        }
        None => rt.block_on(crate::mcp::serve_stdio(runner))?,
    }
    Ok(ExitCode::SUCCESS)
}
