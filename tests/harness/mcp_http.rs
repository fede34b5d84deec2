//! A raw MCP client over streamable HTTP (reqwest, async) and the
//! `skillhost mcp --http` server it talks to, for tests and benchmarks
//! that need concurrent requests on one session.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use serde_json::{Value, json};

use super::{Workspace, guest};

/// `skillhost mcp --http 127.0.0.1:0` in a workspace; killed when dropped.
pub struct McpHttpServer {
    child: Child,
    pub url: String,
}

impl McpHttpServer {
    /// Starts the server with `args` before `mcp` (e.g. `--skills DIR`).
    pub fn start(ws: &Workspace, args: &[&str]) -> Self {
        Self::start_with(ws, args, &[], &[])
    }

    /// [`McpHttpServer::start`] with `mcp_args` after `mcp --http ADDR`
    /// (limits, `--token-env`) and `env` set for the server.
    pub fn start_with(
        ws: &Workspace,
        args: &[&str],
        mcp_args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let mut child = ws
            .cli()
            .args(args)
            .args(["mcp", "--http", "127.0.0.1:0"])
            .args(mcp_args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn skillhost mcp --http");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        let url = loop {
            line.clear();
            let n = stderr.read_line(&mut line).expect("read stderr");
            assert!(n > 0, "skillhost mcp --http exited before serving");
            if line.contains("serving MCP") {
                break line
                    .trim()
                    .rsplit(' ')
                    .next()
                    .unwrap_or_default()
                    .to_owned();
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in stderr.lines() {});
        McpHttpServer { child, url }
    }
}

impl McpHttpServer {
    /// The server's process id (for its /proc entries).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for McpHttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server over a workspace with one skill, `hostile` (the hostile test
/// guest) under a `limit_ms` time limit: below the default, so it needs no
/// grant. The workspace must outlive the server.
pub fn hostile_server(limit_ms: u64) -> (Workspace, McpHttpServer) {
    hostile_server_with(limit_ms, &[], &[])
}

/// [`hostile_server`] with `mcp_args` and `env` as in
/// [`McpHttpServer::start_with`].
pub fn hostile_server_with(
    limit_ms: u64,
    mcp_args: &[&str],
    env: &[(&str, &str)],
) -> (Workspace, McpHttpServer) {
    let ws = hostile_workspace(limit_ms);
    let server = start_hostile(&ws, mcp_args, env);
    (ws, server)
}

/// A workspace with the `hostile` skill of [`hostile_server`], to be
/// configured before [`start_hostile`] serves it.
pub fn hostile_workspace(limit_ms: u64) -> Workspace {
    let ws = Workspace::new();
    ws.add_skill(
        "hostile",
        &format!(
            "metadata:\n  skillhost:\n    handler: handler.wasm\n    limits: {{ timeout_ms: {limit_ms} }}"
        ),
        Some(&guest("hostile-guest")),
    );
    ws
}

/// Serves a [`hostile_workspace`] as [`hostile_server_with`] does.
pub fn start_hostile(ws: &Workspace, mcp_args: &[&str], env: &[(&str, &str)]) -> McpHttpServer {
    let skills = ws.skills.display().to_string();
    McpHttpServer::start_with(ws, &["--skills", &skills], mcp_args, env)
}

/// One initialised MCP session; requests may run concurrently.
#[derive(Clone)]
pub struct McpSession {
    client: reqwest::Client,
    url: String,
    session: Option<String>,
}

impl McpSession {
    pub async fn open(url: &str) -> Self {
        Self::open_with(url, None).await
    }

    /// A session whose requests carry `Authorization: Bearer <token>`.
    pub async fn open_with(url: &str, token: Option<&str>) -> Self {
        let mut s = Self::unopened_with(url, token);
        let (session, init) = s
            .post(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": { "name": "skillhost-test", "version": "0" }
                }
            }))
            .await;
        assert!(init.iter().any(|m| m["id"] == 0), "{init:?}");
        s.session = session;
        s.post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        s
    }

    /// Ends the session (HTTP DELETE); true if the server agreed.
    pub async fn close(&self) -> bool {
        let Some(id) = &self.session else {
            return false;
        };
        self.client
            .delete(&self.url)
            .header("mcp-session-id", id)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
    }

    /// Uses session `id` (from an `initialize` sent by hand).
    pub fn set_session(&mut self, id: String) {
        self.session = Some(id);
    }

    /// A client with no session yet (to send `initialize` by hand).
    pub fn unopened(url: &str) -> Self {
        Self::unopened_with(url, None)
    }

    /// [`McpSession::unopened`], its requests carrying `token`.
    pub fn unopened_with(url: &str, token: Option<&str>) -> Self {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(t) = token {
            let value = format!("Bearer {t}").parse().expect("a header value");
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .expect("client");
        McpSession {
            client,
            url: url.to_owned(),
            session: None,
        }
    }

    /// Posts one JSON-RPC message and returns the HTTP response, whatever
    /// its status.
    pub async fn post_raw(&self, msg: &Value) -> reqwest::Response {
        self.try_post_raw(msg).await.expect("POST")
    }

    /// [`McpSession::post_raw`], a failure to send (the server is gone)
    /// returned rather than a panic.
    pub async fn try_post_raw(&self, msg: &Value) -> reqwest::Result<reqwest::Response> {
        let mut req = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(msg);
        if let Some(id) = &self.session {
            req = req.header("mcp-session-id", id);
        }
        req.send().await
    }

    async fn post(&self, msg: &Value) -> (Option<String>, Vec<Value>) {
        let mut req = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(msg);
        if let Some(id) = &self.session {
            req = req.header("mcp-session-id", id);
        }
        let resp = req.send().await.expect("POST");
        assert!(resp.status().is_success(), "HTTP {}", resp.status());
        let session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = resp.text().await.expect("body");
        let messages = body
            .lines()
            .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (session, messages)
    }

    /// Posts one JSON-RPC message; returns the messages of the answer
    /// (plain JSON or the `data:` lines of an SSE stream).
    pub async fn send(&self, msg: &Value) -> Vec<Value> {
        self.post(msg).await.1
    }

    /// Cancels each of `calls` (request ID, the task awaiting its
    /// answer), again and again until every task has ended: a cancel that
    /// arrives while the session worker is registering a call names a
    /// request unknown to both the worker and the server's memory of early
    /// cancels (see `mcp/sessions.rs`), and MCP lets a server ignore it.
    /// Panics if a call still runs after a minute.
    pub async fn cancel_until_ended<T>(&self, calls: &[(u64, &tokio::task::JoinHandle<T>)]) {
        let guard = std::time::Instant::now();
        loop {
            let running: Vec<u64> = calls
                .iter()
                .filter(|(_, task)| !task.is_finished())
                .map(|(id, _)| *id)
                .collect();
            if running.is_empty() {
                return;
            }
            for id in running {
                self.cancel(id).await;
            }
            assert!(
                guard.elapsed().as_secs() < 60,
                "a cancelled call's stream never ended"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Sends `notifications/cancelled` for request `id` (a notification:
    /// nothing answers it).
    pub async fn cancel(&self, id: u64) {
        let cancel = json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": id, "reason": "test" }
        });
        assert!(self.send(&cancel).await.is_empty());
    }

    /// Sends a request and returns the response with its id.
    pub async fn request(&self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await
            .into_iter()
            .find(|m| m["id"] == json!(id))
            .expect("a response to the request")
    }

    /// `tools/call` of a skill's tool; returns the result.
    pub async fn call_skill(&self, id: u64, skill: &str, task: &str) -> Value {
        let r = self
            .request(
                id,
                "tools/call",
                json!({ "name": format!("skill_{skill}"), "arguments": { "task": task } }),
            )
            .await;
        r["result"].clone()
    }
}
