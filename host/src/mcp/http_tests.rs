//! `serve_http` in-process, driven with raw HTTP: what the shorter path
//! for plain `tools/call` (sessions.rs) must keep of rmcp's sessions.

use std::time::Duration;

use serde_json::{Value, json};

use super::tests::fixture;
use super::*;

/// A guard against a hang, never a measurement.
const GUARD: Duration = Duration::from_secs(60);

struct Served {
    url: String,
    runner: Runner,
    rt: tokio::runtime::Runtime,
    _fixture: super::tests::Fixture,
}

fn serve(session_config: SessionConfig) -> Served {
    serve_with(HttpOptions::new(loopback()), session_config)
}

fn loopback() -> std::net::SocketAddr {
    "127.0.0.1:0".parse().expect("addr")
}

fn serve_with(options: HttpOptions, session_config: SessionConfig) -> Served {
    let f = fixture();
    let runner = f.server.runner().clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (tx, rx) = std::sync::mpsc::channel();
    let serving = runner.clone();
    rt.spawn(async move {
        let _ = serve_http_with(serving, options, session_config, move |a, _| {
            let _ = tx.send(a);
        })
        .await;
    });
    let addr = rx.recv_timeout(GUARD).expect("the server binds");
    Served {
        url: format!("http://{addr}{HTTP_PATH}"),
        runner,
        rt,
        _fixture: f,
    }
}

struct Session {
    client: reqwest::Client,
    url: String,
    id: String,
    token: Option<String>,
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "skillhost-test", "version": "0" }
        }
    })
}

impl Session {
    async fn open(url: &str) -> Session {
        Session::open_with(url, None).await
    }

    /// A session whose requests carry `token`, if any.
    async fn open_with(url: &str, token: Option<&str>) -> Session {
        let client = reqwest::Client::new();
        let mut s = Session {
            client,
            url: url.to_owned(),
            id: String::new(),
            token: token.map(str::to_owned),
        };
        let init = s.post(&initialize()).await;
        assert_eq!(init.status(), 200);
        s.id = init
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_owned();
        let _ = init.text().await;
        let ack = s
            .post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        assert_eq!(ack.status(), 202);
        s
    }

    async fn post(&self, msg: &Value) -> reqwest::Response {
        let mut req = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(msg);
        if !self.id.is_empty() {
            req = req.header("mcp-session-id", &self.id);
        }
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        tokio::time::timeout(GUARD, req.send())
            .await
            .expect("an answer in time")
            .expect("POST")
    }

    /// The HTTP status and the SSE body of a `tools/call` of `tool`.
    async fn call(&self, id: u64, tool: &str, meta: Option<Value>) -> (u16, String) {
        let mut params = json!({ "name": tool, "arguments": { "task": "hi" } });
        if let Some(m) = meta {
            params["_meta"] = m;
        }
        let resp = self
            .post(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }))
            .await;
        let status = resp.status().as_u16();
        (status, resp.text().await.expect("body"))
    }
}

/// The JSON-RPC messages of an SSE body.
fn messages(sse: &str) -> Vec<Value> {
    sse.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

#[test]
fn a_plain_call_skips_the_session_worker_and_list_changed_still_arrives() {
    let s = serve(SessionConfig::default());
    let runner = s.runner.clone();
    s.rt.block_on(async {
        let session = Session::open(&s.url).await;
        // The standalone stream, on which tools/list_changed comes.
        let get = session
            .client
            .get(&s.url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .header("mcp-session-id", &session.id)
            .send()
            .await
            .expect("GET");
        assert_eq!(get.status(), 200);

        let (status, plain) = session.call(1, "skill_manual-only", None).await;
        assert_eq!(status, 200);
        let answer = messages(&plain);
        assert_eq!(answer.len(), 1, "{plain}");
        assert_eq!(answer[0]["id"], 1);
        assert_eq!(answer[0]["result"]["content"][0]["text"], "done: hi");
        // Answered here, not by the worker, which primes every stream it
        // makes with a retry hint (what tells the two apart on the wire).
        assert!(!plain.contains("retry:"), "{plain}");

        // A call with a progress token goes through the worker.
        let (_, worker) = session
            .call(
                2,
                "skill_manual-only",
                Some(json!({ "progressToken": "p" })),
            )
            .await;
        assert!(worker.contains("retry:"), "{worker}");
        assert_eq!(
            messages(&worker)[0]["result"]["content"][0]["text"],
            "done: hi"
        );

        // An unknown tool is a protocol error, as through the worker.
        let (_, unknown) = session.call(3, "skill_nope", None).await;
        let unknown = messages(&unknown);
        assert_eq!(unknown[0]["id"], 3);
        assert!(
            unknown[0]["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("unknown tool `skill_nope`")),
            "{unknown:?}"
        );

        runner.reload_catalog();
        let mut get = get;
        let mut seen = String::new();
        while !seen.contains("notifications/tools/list_changed") {
            let chunk = tokio::time::timeout(GUARD, get.chunk())
                .await
                .expect("an event in time")
                .expect("the stream")
                .expect("a chunk");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        // Calls keep working after the change.
        let (status, again) = session.call(4, "skill_manual-only", None).await;
        assert_eq!(status, 200);
        assert_eq!(messages(&again)[0]["id"], 4);
    });
}

/// Connections are dealt round-robin to the lanes: a session opened on one
/// connection is used from new connections on every other lane, with calls
/// answered there and calls that go through the session's worker (a
/// progress token), which lives on the lane that opened it.
#[test]
fn a_session_is_served_from_connections_on_every_lane() {
    let mut options = HttpOptions::new(loopback());
    options.lanes = 3;
    let s = serve_with(options, SessionConfig::default());
    s.rt.block_on(async {
        let opened = Session::open(&s.url).await;
        for (n, id) in (1..=6).step_by(2).enumerate() {
            // A client of its own: a new connection, on the next lane.
            let session = Session {
                client: reqwest::Client::new(),
                url: s.url.clone(),
                id: opened.id.clone(),
                token: None,
            };
            let (status, plain) = session.call(id, "skill_manual-only", None).await;
            assert_eq!(status, 200, "connection {n}: {plain}");
            assert_eq!(
                messages(&plain)[0]["result"]["content"][0]["text"],
                "done: hi",
                "connection {n}: {plain}"
            );
            let progress = Some(json!({ "progressToken": n }));
            let (status, worker) = session.call(id + 1, "skill_manual-only", progress).await;
            assert_eq!(status, 200, "connection {n}: {worker}");
            let answer = messages(&worker);
            let answer = answer.iter().find(|m| m["id"] == id + 1);
            assert_eq!(
                answer.map(|m| m["result"]["content"][0]["text"].clone()),
                Some(json!("done: hi")),
                "connection {n}: {worker}"
            );
        }
    });
}

#[test]
fn a_plain_call_needs_a_live_session() {
    let s = serve(SessionConfig::default());
    s.rt.block_on(async {
        let mut session = Session::open(&s.url).await;
        session.id = "no-such-session".into();
        let (status, _) = session.call(1, "skill_manual-only", None).await;
        assert_eq!(status, 404);

        let session = Session::open(&s.url).await;
        let closed = session
            .client
            .delete(&s.url)
            .header("mcp-session-id", &session.id)
            .send()
            .await
            .expect("DELETE");
        assert!(closed.status().is_success(), "{}", closed.status());
        let (status, _) = session.call(2, "skill_manual-only", None).await;
        assert_eq!(status, 404);
    });
}

#[test]
fn calls_answered_without_the_worker_keep_their_session_alive() {
    // The worker closes a session it has not heard from for `keep_alive`.
    let keep_alive = Duration::from_millis(600);
    let mut config = SessionConfig::default();
    config.keep_alive = Some(keep_alive);
    let s = serve(config);
    s.rt.block_on(async {
        let session = Session::open(&s.url).await;
        // Plain calls for several idle timeouts: the session must live on.
        let until = tokio::time::Instant::now() + keep_alive * 4;
        let mut id = 1;
        while tokio::time::Instant::now() < until {
            let (status, body) = session.call(id, "skill_manual-only", None).await;
            assert_eq!(status, 200, "call {id}: {body}");
            id += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Silence past the timeout still ends it.
        tokio::time::sleep(keep_alive * 3).await;
        let (status, _) = session.call(id, "skill_manual-only", None).await;
        assert_eq!(status, 404);
    });
}

/// An unauthenticated POST of `msg`, with `authorization` if given.
async fn post_as(url: &str, authorization: Option<&str>, msg: &Value) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(msg);
    if let Some(a) = authorization {
        req = req.header("authorization", a);
    }
    tokio::time::timeout(GUARD, req.send())
        .await
        .expect("an answer in time")
        .expect("POST")
}

#[test]
fn with_a_token_every_request_must_carry_it() {
    let mut options = HttpOptions::new(loopback());
    options.token = Some(BearerToken("s3cret-token".into()));
    let s = serve_with(options, SessionConfig::default());
    s.rt.block_on(async {
        for authorization in [
            None,
            Some("Bearer wrong"),
            Some("Bearer s3cret-toke"),
            Some("s3cret-token"),
        ] {
            let resp = post_as(&s.url, authorization, &initialize()).await;
            assert_eq!(resp.status(), 401, "{authorization:?}");
            assert_eq!(resp.headers()["www-authenticate"], "Bearer");
        }
        // Other paths too: nothing is said without the token.
        let other = s.url.replace(HTTP_PATH, "/elsewhere");
        assert_eq!(post_as(&other, None, &initialize()).await.status(), 401);

        let session = Session::open_with(&s.url, Some("s3cret-token")).await;
        let (status, body) = session.call(1, "skill_manual-only", None).await;
        assert_eq!(status, 200);
        assert_eq!(
            messages(&body)[0]["result"]["content"][0]["text"],
            "done: hi"
        );
        // An established session's ID is no substitute for the token.
        let stolen = Session {
            token: None,
            ..session
        };
        let (status, _) = stolen.call(2, "skill_manual-only", None).await;
        assert_eq!(status, 401);
    });
}

#[test]
fn a_session_past_the_limit_is_busy_until_one_closes() {
    let mut options = HttpOptions::new(loopback());
    options.limits.max_sessions = Some(2);
    let s = serve_with(options, SessionConfig::default());
    s.rt.block_on(async {
        let first = Session::open(&s.url).await;
        let _second = Session::open(&s.url).await;
        let refused = post_as(&s.url, None, &initialize()).await;
        assert_eq!(refused.status(), 503);
        assert_eq!(
            refused.headers()["retry-after"],
            crate::mcp_admission::RETRY_AFTER_SECS.to_string().as_str()
        );
        let body: Value = serde_json::from_str(&refused.text().await.expect("body")).expect("JSON");
        assert_eq!(body["id"], 0);
        assert_eq!(body["error"]["code"], BUSY_CODE.0);
        assert_eq!(body["error"]["data"]["class"], "Busy");
        // Sessions already open are served.
        let (status, _) = first.call(1, "skill_manual-only", None).await;
        assert_eq!(status, 200);
        // Closing one makes room.
        let closed = first
            .client
            .delete(&s.url)
            .header("mcp-session-id", &first.id)
            .send()
            .await
            .expect("DELETE");
        assert!(closed.status().is_success(), "{}", closed.status());
        let third = Session::open(&s.url).await;
        let (status, _) = third.call(1, "skill_manual-only", None).await;
        assert_eq!(status, 200);
    });
}
