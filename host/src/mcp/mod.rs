//! `skillhost mcp`: the skills served over the Model Context Protocol, with
//! the official Rust SDK (`rmcp`).
//!
//! - Tools: `list_skills` and `read_skill` (progressive disclosure), then
//!   one `skill_<name>` tool per skill that answers without a model
//!   (handler, pipeline or template). Its input is the task text plus the
//!   skill's context fields. A call is [`Runner::run_via`], the very path
//!   of `skillhost run`: same selection, grants, limits, tool policy and
//!   recording.
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

mod lanes;
pub mod names;
pub mod resources;
mod server;
mod sessions;

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::SessionConfig;

use crate::exec::Runner;
use crate::mcp_admission::{
    CallGate, CallPermit, HeldPlace, HostCapacity, Limits, McpConfig, RETRY_AFTER_SECS,
};

pub use server::{
    BUSY_CODE, LIST_SKILLS, MAX_READ_BYTES, PAGE_SIZE, READ_SKILL, SkillServer, busy_error,
    failure_result, outcome_result, page,
};

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("the MCP session did not start")]
    Start(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("cannot start the threads HTTP connections are served on")]
    Lanes(#[source] std::io::Error),
    #[error("the MCP server stopped abnormally")]
    Stopped(#[source] tokio::task::JoinError),
    #[error(
        "refusing to serve MCP on {0}: it is not a loopback address and anyone who can reach it could run skills; pass --allow-remote and --token-env VAR if that is intended"
    )]
    RemoteBind(SocketAddr),
    #[error(
        "refusing to serve MCP on {0} without a token: pass --token-env VAR, VAR holding the token clients must send as `Authorization: Bearer <token>`"
    )]
    RemoteWithoutToken(SocketAddr),
    #[error("the MCP bearer token is missing: environment variable {0} is unset or empty")]
    TokenEnv(String),
    #[error("invalid MCP limits: {0}")]
    Limits(#[source] crate::mcp_admission::AdmissionError),
    #[error("cannot serve MCP on {0}")]
    Bind(SocketAddr, #[source] std::io::Error),
}

/// Serves `runner`'s catalog on stdin/stdout until the client closes the
/// stream. Must run inside a tokio runtime with IO enabled.
pub async fn serve_stdio(runner: Runner) -> Result<(), McpError> {
    follow_other_hosts(&runner);
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

/// The place the HTTP front took for a request (see `Front::handle`),
/// from the request parts rmcp hands on in its extensions; None over
/// stdio, or once taken.
fn held_place(extensions: &rmcp::model::Extensions) -> Option<CallPermit> {
    extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<HeldPlace>()?
        .take()
}

/// On a store other hosts share, takes in their changes as they are
/// announced, not only at the next call: a skill forged elsewhere swaps the
/// catalog, and the clients hear `tools/list_changed`.
fn follow_other_hosts(runner: &Runner) {
    let Some(mut changes) = runner.shared_changes() else {
        return;
    };
    let runner = runner.clone();
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            let runner = runner.clone();
            // Reads the store and writes skill folders: off the workers.
            let _ = tokio::task::spawn_blocking(move || runner.catch_up()).await;
        }
    });
}

/// The path the streamable-HTTP transport serves MCP on.
pub const HTTP_PATH: &str = "/mcp";

/// How `skillhost mcp --http` serves.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Serve a non-loopback address (it also needs `token`).
    pub allow_remote: bool,
    /// The bearer token every request must carry; required off loopback.
    pub token: Option<BearerToken>,
    /// Limits set by flags, over the `[mcp]` section of the configuration.
    pub limits: McpConfig,
    /// Threads connections are served on, each its own runtime (see
    /// `lanes`); one per core by default, at least one.
    pub lanes: usize,
}

impl HttpOptions {
    /// Loopback-style defaults: no token, the configured limits, a lane
    /// per core.
    pub fn new(addr: SocketAddr) -> Self {
        HttpOptions {
            addr,
            allow_remote: false,
            token: None,
            limits: McpConfig::default(),
            lanes: lanes::count(),
        }
    }
}

/// A bearer token, never printed.
#[derive(Clone)]
pub struct BearerToken(String);

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

impl BearerToken {
    /// The token in environment variable `var`: set and not empty.
    pub fn from_env(var: &str) -> Result<Self, McpError> {
        match std::env::var(var) {
            Ok(t) if !t.trim().is_empty() => Ok(BearerToken(t.trim().to_owned())),
            _ => Err(McpError::TokenEnv(var.to_owned())),
        }
    }

    /// Whether `authorization` (the header's value) is `Bearer` and this
    /// token, compared in constant time.
    fn admits(&self, authorization: Option<&http::HeaderValue>) -> bool {
        use subtle::ConstantTimeEq;
        let Some(given) = authorization
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        else {
            return false;
        };
        bool::from(given.trim().as_bytes().ct_eq(self.0.as_bytes()))
    }
}

/// Serves `runner`'s catalog over MCP streamable HTTP at
/// `http://ADDR/mcp` until the process is stopped; `ready` gets the bound
/// address (useful with port 0) and the limits in force. Must run inside a
/// tokio runtime with IO enabled.
///
/// Browsers are kept out: a request whose `Host` is not a loopback name is
/// refused (DNS rebinding) unless remote clients are allowed, and any
/// request carrying an `Origin` header is refused (a web page cannot drive
/// the server from the user's browser). MCP clients send neither. With a
/// token, a request without it is refused (401). Past the limits, a new
/// session or a skill call is refused at once: HTTP 503 with `Retry-After`
/// and [`busy_error`] as the body.
pub async fn serve_http(
    runner: Runner,
    options: HttpOptions,
    ready: impl FnOnce(SocketAddr, &Limits),
) -> Result<(), McpError> {
    serve_http_with(runner, options, SessionConfig::default(), ready).await
}

/// The limits in force: `flags` over the configuration's `[mcp]`, the rest
/// derived from this machine and the memory a call is given by default:
/// `[limits] memory_mb` as the sandbox resolves it (never above
/// `max_memory_mb`), plus `host_mb`.
pub fn resolve_limits(runner: &Runner, flags: &McpConfig) -> Result<Limits, McpError> {
    use crate::sandbox::limits::{Limits as CallLimits, POOL_CALLS};
    let config = runner.config();
    let none = crate::skill::LimitSpec::default();
    let call = CallLimits::resolve(&none, &none, &config.limits);
    let call_bytes =
        u64::try_from(call.memory_bytes.saturating_add(call.host_bytes)).unwrap_or(u64::MAX);
    let host = HostCapacity::of_this_machine(call_bytes, POOL_CALLS as usize);
    flags
        .over(&config.mcp)
        .resolve(host)
        .map_err(McpError::Limits)
}

/// [`serve_http`] with sessions kept as `session_config` says.
async fn serve_http_with(
    runner: Runner,
    options: HttpOptions,
    session_config: SessionConfig,
    ready: impl FnOnce(SocketAddr, &Limits),
) -> Result<(), McpError> {
    let addr = options.addr;
    check_bind(addr, options.allow_remote, options.token.is_some())?;
    let limits = resolve_limits(&runner, &options.limits)?;
    let bind_err = |e: std::io::Error| McpError::Bind(addr, e);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(bind_err)?;
    ready(listener.local_addr().map_err(bind_err)?, &limits);
    follow_other_hosts(&runner);

    // The front admits skill calls (see `Front::handle`); the server
    // behind it takes every call the front let through.
    let calls = Arc::new(CallGate::new(&limits));
    let server = SkillServer::new(runner);
    let (mcp, sessions) = http_service(server, options.allow_remote, session_config);
    let front = Arc::new(Front {
        mcp,
        sessions,
        calls,
        max_sessions: limits.sessions,
        opening: tokio::sync::Mutex::new(()),
        token: options.token,
        max_body: rmcp::transport::StreamableHttpServerConfig::default().max_request_body_bytes,
    });
    let mut lanes = lanes::Lanes::start(front, options.lanes).map_err(McpError::Lanes)?;
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
        lanes.serve(stream);
    }
}

/// Serves one accepted connection on the current runtime, whose reactor
/// it is registered with here.
fn serve_connection(front: Arc<Front>, stream: std::net::TcpStream) {
    let stream = match tokio::net::TcpStream::from_std(stream) {
        Ok(stream) => stream,
        Err(e) => {
            tracing::warn!("cannot serve a connection: {e}");
            return;
        }
    };
    tokio::spawn(async move {
        let service = hyper::service::service_fn(move |req| front.clone().handle(req));
        // A client that goes away mid-request is its own business.
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
            .await;
    });
}

type HttpService =
    rmcp::transport::StreamableHttpService<SkillServer, sessions::DirectCallSessions>;

/// What every request meets before rmcp: the token, the path, and the
/// limits on sessions and calls.
struct Front {
    mcp: HttpService,
    sessions: Arc<sessions::DirectCallSessions>,
    calls: Arc<CallGate>,
    max_sessions: usize,
    /// Held while a session is opened, so that two opened at once cannot
    /// both take the last place.
    opening: tokio::sync::Mutex<()>,
    token: Option<BearerToken>,
    max_body: usize,
}

/// What the front reads of a POSTed message.
#[derive(serde::Deserialize)]
struct Peek {
    #[serde(default)]
    id: serde_json::Value,
    #[serde(default)]
    method: String,
    #[serde(default)]
    params: PeekParams,
}

#[derive(serde::Deserialize, Default)]
struct PeekParams {
    #[serde(default)]
    name: String,
}

impl Front {
    async fn handle(
        self: Arc<Self>,
        req: http::Request<hyper::body::Incoming>,
    ) -> Result<HttpResponse, std::convert::Infallible> {
        use http_body_util::BodyExt;
        if let Some(token) = &self.token
            && !token.admits(req.headers().get(http::header::AUTHORIZATION))
        {
            return Ok(unauthorized());
        }
        if req.uri().path() != HTTP_PATH {
            return Ok(not_found());
        }
        let (parts, body) = req.into_parts();
        let body = match http_body_util::Limited::new(body, self.max_body)
            .collect()
            .await
        {
            Ok(b) => b.to_bytes(),
            Err(_) => {
                return Ok(plain(
                    http::StatusCode::PAYLOAD_TOO_LARGE,
                    "request too large\n",
                ));
            }
        };
        if parts.method != http::Method::POST {
            let req = http::Request::from_parts(parts, http_body_util::Full::new(body));
            return self.forward(req).await;
        }
        // Unparsed (rmcp will say why): checked as if it were a new session
        // or a call, so that no shape of body slips past the limits.
        let peek = serde_json::from_slice::<Peek>(&body).ok();
        let id = peek
            .as_ref()
            .map_or(serde_json::Value::Null, |p| p.id.clone());
        let req = http::Request::from_parts(parts, http_body_util::Full::new(body));
        if !req.headers().contains_key("mcp-session-id") {
            // Opening a session: checked and opened one at a time.
            let _opening = self.opening.lock().await;
            let open = self.sessions.open();
            if open >= self.max_sessions {
                let message = format!(
                    "Busy: {open} sessions are open, the most this server takes; retry after {RETRY_AFTER_SECS} s"
                );
                return Ok(busy(&id, message));
            }
            return self.forward(req).await;
        }
        let skill_call = peek.as_ref().is_none_or(|p| {
            p.method == "tools/call" && p.params.name != LIST_SKILLS && p.params.name != READ_SKILL
        });
        if !skill_call {
            return self.forward(req).await;
        }
        // Admitted here, not behind rmcp: a call past the places and the
        // queue is always refused the same way, 503 with Retry-After. The
        // place goes with the request to whoever runs the call, who holds
        // it until the run ends (see `held_place`); until then, and if no
        // one takes it, the response holds it until it has been sent.
        let place = match self.calls.enter().await {
            Ok(place) => HeldPlace::new(place),
            Err(b) => return Ok(busy(&id, b.to_string())),
        };
        let mut req = req;
        req.extensions_mut().insert(place.clone());
        let resp = self.forward(req).await?;
        Ok(resp.map(|body| {
            use http_body_util::BodyExt;
            body.map_frame(move |frame| {
                let _held = &place;
                frame
            })
            .boxed()
        }))
    }

    async fn forward(
        &self,
        req: http::Request<http_body_util::Full<bytes::Bytes>>,
    ) -> Result<HttpResponse, std::convert::Infallible> {
        let mut mcp = self.mcp.clone();
        tower_service::Service::call(&mut mcp, req).await
    }
}

/// rmcp's streamable-HTTP service over `server`, with its Host and Origin
/// checks, and sessions kept as `session_config` says; and its sessions.
fn http_service(
    server: SkillServer,
    allow_remote: bool,
    session_config: SessionConfig,
) -> (HttpService, Arc<sessions::DirectCallSessions>) {
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
    let sessions = Arc::new(sessions::DirectCallSessions::new(sessions, server.clone()));
    let service = rmcp::transport::StreamableHttpService::new(
        move || Ok(server.clone()),
        sessions.clone(),
        config,
    );
    (service, sessions)
}

type HttpResponse =
    http::Response<http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>>;

fn plain(status: http::StatusCode, body: impl Into<String>) -> HttpResponse {
    use http_body_util::BodyExt;
    let body = bytes::Bytes::from(body.into());
    let mut resp = http::Response::new(http_body_util::Full::new(body).boxed());
    *resp.status_mut() = status;
    resp
}

fn not_found() -> HttpResponse {
    plain(
        http::StatusCode::NOT_FOUND,
        format!("skillhost serves MCP on {HTTP_PATH}\n"),
    )
}

fn unauthorized() -> HttpResponse {
    let mut resp = plain(
        http::StatusCode::UNAUTHORIZED,
        "this server needs `Authorization: Bearer <token>`\n",
    );
    resp.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer"),
    );
    resp
}

/// 503 with `Retry-After`, and the JSON-RPC busy error for request `id` as
/// the body, so that a client reading either learns the same.
fn busy(id: &serde_json::Value, message: String) -> HttpResponse {
    let error = busy_error(message);
    let body = serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": error });
    let mut resp = plain(http::StatusCode::SERVICE_UNAVAILABLE, body.to_string());
    let headers = resp.headers_mut();
    headers.insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from(RETRY_AFTER_SECS),
    );
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// A network transport runs skills for whoever connects, so only loopback
/// is served unless the operator explicitly allows remote clients and
/// gives the token they must present.
pub fn check_bind(addr: SocketAddr, allow_remote: bool, has_token: bool) -> Result<(), McpError> {
    if addr.ip().is_loopback() {
        Ok(())
    } else if !allow_remote {
        Err(McpError::RemoteBind(addr))
    } else if !has_token {
        Err(McpError::RemoteWithoutToken(addr))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod http_tests;
#[cfg(test)]
mod tests;
