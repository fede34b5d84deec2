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
        crate::mcp::check_bind(addr, args.allow_remote)?;
        anyhow::bail!(
            "the streamable HTTP transport is not available in this build; run `skillhost mcp` without --http to serve over stdio"
        );
    }
    let runner = ctx.runner()?;
    let rt = super::runtime()?;
    rt.block_on(crate::mcp::serve_stdio(runner))?;
    Ok(ExitCode::SUCCESS)
}
