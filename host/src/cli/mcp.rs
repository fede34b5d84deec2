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
}

pub fn run(args: McpArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    if let Some(addr) = args.http {
        // Refuse a remote bind before loading anything.
        crate::mcp::check_bind(addr, args.allow_remote)?;
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
        Some(addr) => rt.block_on(crate::mcp::serve_http(
            runner,
            addr,
            args.allow_remote,
            |bound| {
                tracing::info!(
                    "skillhost: serving MCP (streamable HTTP) at http://{bound}{}",
                    crate::mcp::HTTP_PATH
                )
            },
        ))?,
        None => rt.block_on(crate::mcp::serve_stdio(runner))?,
    }
    Ok(ExitCode::SUCCESS)
}
