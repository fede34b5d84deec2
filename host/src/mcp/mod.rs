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
mod sessions;

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::SessionConfig;

use crate::exec::Runner;

pub use server::{
    LIST_SKILLS, MAX_READ_BYTES, PAGE_SIZE, READ_SKILL, SkillServer, failure_result,
    outcome_result, page,
};

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("the MCP session did not start")]
    Start(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("the MCP server stopped abnormally")]
    Stopped(#[source] tokio::task::JoinError),
    #[error(
        "refusing to serve MCP on {0}: it is not a loopback address and anyone who can reach it could run skills; pass --allow-remote if that is intended"
    )]
    RemoteBind(SocketAddr),
    #[error("cannot serve MCP on {0}")]
    Bind(SocketAddr, #[source] std::io::Error),
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
        .map_err(|e| McpError::Start(e.into()))?;
    running.waiting().await.map_err(McpError::Stopped)?;
    Ok(())
}

/// The path the streamable-HTTP transport serves MCP on.
pub const HTTP_PATH: &str = "/mcp";

/// Serves `runner`'s catalog over MCP streamable HTTP at
/// `http://ADDR/mcp` until the process is stopped; `ready` gets the bound
/// address (useful with port 0). Must run inside a tokio runtime with IO
/// enabled.
///
/// Browsers are kept out: a request whose `Host` is not a loopback name is
/// refused (DNS rebinding) unless remote clients are allowed, and any
/// request carrying an `Origin` header is refused (a web page cannot drive
/// the server from the user's browser). MCP clients send neither.
pub async fn serve_http(
    runner: Runner,
    addr: SocketAddr,
    allow_remote: bool,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), McpError> {
    serve_http_with(runner, addr, allow_remote, SessionConfig::default(), ready).await
}

/// [`serve_http`] with sessions kept as `session_config` says.
async fn serve_http_with(
    runner: Runner,
    addr: SocketAddr,
    allow_remote: bool,
    session_config: SessionConfig,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), McpError> {
    check_bind(addr, allow_remote)?;
    let bind_err = |e: std::io::Error| McpError::Bind(addr, e);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(bind_err)?;
    ready(listener.local_addr().map_err(bind_err)?);

    let mcp = http_service(SkillServer::new(runner), allow_remote, session_config);
    loop {
        let (stream, _peer) = match listener.accept().await {
            Ok(conn) => conn,
            // Out of file descriptors and the like: keep serving the
            // connections we have and try again shortly.
            Err(e) => {
                tracing::warn!("cannot accept a connection: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        // Responses go out as several small writes (headers, SSE events):
        // without this, Nagle's algorithm meets the client's delayed ACK and
        // every call waits ~40 ms.
        let _ = stream.set_nodelay(true);
        let mcp = mcp.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let mut mcp = mcp.clone();
                async move {
                    if req.uri().path() != HTTP_PATH {
                        return Ok(not_found());
                    }
                    tower_service::Service::call(&mut mcp, req).await
                }
            });
            // A client that goes away mid-request is its own business.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

type HttpService =
    rmcp::transport::StreamableHttpService<SkillServer, sessions::DirectCallSessions>;

/// rmcp's streamable-HTTP service over `server`, with its Host and Origin
/// checks, and sessions kept as `session_config` says.
fn http_service(
    server: SkillServer,
    allow_remote: bool,
    session_config: SessionConfig,
) -> HttpService {
    use rmcp::transport::StreamableHttpServerConfig;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

    let mut config = StreamableHttpServerConfig::default().enforce_origin_validation();
    if allow_remote {
        // The operator chose to serve every client that reaches the port,
        // whatever name it uses for this host.
        config = config.disable_allowed_hosts();
    }
    let mut sessions = LocalSessionManager::default();
    sessions.session_config = session_config;
    let sessions = sessions::DirectCallSessions::new(sessions, server.clone());
    rmcp::transport::StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(sessions),
        config,
    )
}

type HttpResponse =
    http::Response<http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>>;

fn not_found() -> HttpResponse {
    use http_body_util::BodyExt;
    let body = format!("skillhost serves MCP on {HTTP_PATH}\n");
    let mut resp = http::Response::new(http_body_util::Full::new(bytes::Bytes::from(body)).boxed());
    *resp.status_mut() = http::StatusCode::NOT_FOUND;
    resp
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
mod http_tests;
#[cfg(test)]
mod tests;
