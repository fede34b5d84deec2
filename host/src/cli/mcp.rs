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
    match args.http {
        Some(addr) => serve_http(runner, http_options(&args, addr, token))?,
        None => one_thread_runtime()?.block_on(crate::mcp::serve_stdio(runner))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn http_options(
    args: &McpArgs,
    addr: SocketAddr,
    token: Option<crate::mcp::BearerToken>,
) -> crate::mcp::HttpOptions {
    crate::mcp::HttpOptions {
        addr,
        allow_remote: args.allow_remote,
        token,
        limits: crate::mcp_admission::McpConfig {
            max_calls: args.max_calls,
            max_queued: args.max_queued,
            max_sessions: args.max_sessions,
        },
        ..crate::mcp::HttpOptions::new(addr)
    }
}

/// Serves MCP over streamable HTTP: the connections are served on their
/// own lanes (see `mcp::lanes`); this thread accepts them.
fn serve_http(runner: crate::exec::Runner, options: crate::mcp::HttpOptions) -> anyhow::Result<()> {
    one_thread_runtime()?.block_on(crate::mcp::serve_http(runner, options, |bound, limits| {
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
    }))?;
    Ok(())
}

/// The runtime stdio is served on, and HTTP connections accepted on (each
/// is then served on a lane of its own, see `mcp::lanes`): one thread.
/// Stdio has one client on one pair of pipes, and its protocol work
/// (parse, dispatch, a call's first tick) is light: a handler still
/// running at its first tick moves to the guest runtime's own threads
/// (`server_runner`), and compiles and store work go to blocking pools, so
/// calls still run in parallel. What the single thread saves is the
/// hand-off: on a multi-thread runtime each message woke a second worker.
/// Release, echo handler, Python raw client, 6 alternating rounds of
/// 10,000 calls: 1.4 voluntary context switches per call against 2.4, 0.2
/// preemptions against 0.7, and 218-236 µs of server CPU per call against
/// 236-284 µs.
fn one_thread_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}
