//! `skillhost mcp --http` under more than it takes: past its places to run
//! calls and its queue, or past its sessions, a request is refused at once
//! (HTTP 503 with `Retry-After`) and served again once there is room; off
//! loopback it refuses to start without a bearer token, and with a token
//! every request must carry it.

use crate::harness::Workspace;
use crate::harness::mcp_http::{McpSession, hostile_server_with};

use serde_json::{Value, json};

/// A `tools/call` of the hostile skill.
fn call(id: u64, task: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "skill_hostile", "arguments": { "task": task } }
    })
}

/// The messages of an SSE (or plain JSON) body.
fn messages(body: &str) -> Vec<Value> {
    body.lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn spins_past_the_places_and_the_queue_are_refused_and_calls_run_again_after() {
    // Two places, one in the queue: of six spins sent at once, three run
    // (two at once, then the queued one) and three are refused. The spins
    // last their 3 s time limit, far longer than six requests take to
    // arrive over loopback.
    let (_ws, server) = hostile_server_with(3000, &["--max-calls", "2", "--max-queued", "1"], &[]);
    let rt = crate::harness::runtime();
    rt.block_on(async {
        let session = McpSession::open(&server.url).await;
        // Compile the handler first, so the spins start together.
        let warm = session.call_skill(1, "hostile", "ok").await;
        assert_eq!(warm["isError"], false, "{warm}");

        let mut spins = Vec::new();
        for id in 100..106u64 {
            let s = session.clone();
            spins.push(tokio::spawn(async move {
                let resp = s.post_raw(&call(id, "spin")).await;
                let status = resp.status().as_u16();
                let retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                (id, status, retry_after, resp.text().await.expect("body"))
            }));
        }
        let (mut ran, mut refused) = (0, 0);
        for spin in spins {
            let (id, status, retry_after, body) = spin.await.expect("spin task");
            let answer = messages(&body)
                .into_iter()
                .find(|m| m["id"] == json!(id))
                .unwrap_or_else(|| panic!("call {id} got no answer: {status} {body}"));
            // A refusal is always HTTP 503 with Retry-After, the JSON-RPC
            // Busy error as its body: calls are admitted at the front.
            if answer["error"]["data"]["class"] == "Busy" {
                assert_eq!(status, 503, "call {id}: {body}");
                assert_eq!(retry_after.as_deref(), Some("1"), "call {id}");
                let message = answer["error"]["message"].as_str().unwrap_or_default();
                assert!(message.starts_with("Busy:"), "{message}");
                refused += 1;
            } else {
                assert_eq!(status, 200, "call {id}: {body}");
                let text = answer["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default();
                assert!(
                    text.contains("LimitExceeded") && text.contains("time"),
                    "call {id} should have spun to its limit: {answer}"
                );
                ran += 1;
            }
        }
        assert_eq!((ran, refused), (3, 3));

        // All places free again: calls run.
        for id in 200..203u64 {
            let r = session.call_skill(id, "hostile", "ok").await;
            assert_eq!(r["isError"], false, "{r}");
        }
    });
}

#[test]
fn a_session_past_the_limit_is_refused_with_retry_after() {
    let (_ws, server) = hostile_server_with(1000, &["--max-sessions", "1"], &[]);
    let rt = crate::harness::runtime();
    rt.block_on(async {
        let first = McpSession::open(&server.url).await;
        let unopened = McpSession::unopened(&server.url);
        let resp = unopened
            .post_raw(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "t", "version": "0" }
                }
            }))
            .await;
        assert_eq!(resp.status(), 503);
        assert_eq!(resp.headers()["retry-after"], "1");
        // The open one is served as before.
        let r = first.call_skill(1, "hostile", "ok").await;
        assert_eq!(r["isError"], false, "{r}");
    });
}

#[test]
fn a_non_loopback_bind_is_refused_without_a_token() {
    let ws = Workspace::new();
    let r = ws.run_cli(&["mcp", "--http", "0.0.0.0:0", "--allow-remote"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("--token-env"), "{}", r.stderr);

    // A token variable that is unset or empty is named, and nothing starts.
    let var = "SKILLHOST_TEST_MCP_TOKEN";
    for value in [None, Some(""), Some("   ")] {
        let mut cmd = ws.cli();
        cmd.args([
            "mcp",
            "--http",
            "0.0.0.0:0",
            "--allow-remote",
            "--token-env",
            var,
        ]);
        match value {
            Some(v) => cmd.env(var, v),
            None => cmd.env_remove(var),
        };
        let r = crate::harness::CliResult::from(cmd.output().expect("run skillhost"));
        assert_eq!(r.code, 1, "{value:?}: {}", r.stderr);
        assert!(r.stderr.contains(var), "{value:?}: {}", r.stderr);
    }
}

#[test]
fn with_a_token_requests_without_it_get_401_and_with_it_are_served() {
    let token = "a-long-random-token-for-the-test";
    let (_ws, server) = hostile_server_with(
        1000,
        &["--token-env", "SKILLHOST_TEST_MCP_TOKEN"],
        &[("SKILLHOST_TEST_MCP_TOKEN", token)],
    );
    let rt = crate::harness::runtime();
    rt.block_on(async {
        let init = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "t", "version": "0" }
            }
        });
        for wrong in [None, Some("wrong"), Some(&token[1..])] {
            let resp = McpSession::unopened_with(&server.url, wrong)
                .post_raw(&init)
                .await;
            assert_eq!(resp.status(), 401, "{wrong:?}");
        }
        let session = McpSession::open_with(&server.url, Some(token)).await;
        let r = session.call_skill(1, "hostile", "ok").await;
        assert_eq!(r["isError"], false, "{r}");
    });
}

/// A call keeps its place until its run ends, even after its client
/// stopped waiting (`notifications/cancelled`; the run goes on to be
/// recorded): otherwise clients that cancel could make the server run more
/// than `--max-calls` at once.
#[test]
fn a_cancelled_call_keeps_its_place_until_its_run_ends() {
    let (_ws, server) = hostile_server_with(4000, &["--max-calls", "1", "--max-queued", "0"], &[]);
    let rt = crate::harness::runtime();
    rt.block_on(async {
        let session = McpSession::open(&server.url).await;
        let warm = session.call_skill(1, "hostile", "ok").await;
        assert_eq!(warm["isError"], false, "{warm}");
        let start_spin = || {
            let s = session.clone();
            tokio::spawn(async move {
                let resp = s.post_raw(&call(100, "spin")).await;
                (
                    resp.status().as_u16(),
                    resp.text().await.unwrap_or_default(),
                )
            })
        };
        // Until a probe is refused, the spin does not hold the place yet
        // (or a probe took it first and the spin was refused: sent again).
        // The waits are guards, not measures; the spin lasts 4 s.
        let guard = std::time::Instant::now();
        let mut spin = start_spin();
        let mut id = 200;
        loop {
            id += 1;
            let resp = session.post_raw(&call(id, "ok")).await;
            if resp.status() == 503 {
                break;
            }
            if spin.is_finished() {
                let (status, body) = spin.await.expect("spin task");
                assert_eq!(status, 503, "the spin ended early: {body}");
                spin = start_spin();
            }
            assert!(
                guard.elapsed().as_secs() < 60,
                "the spin never held the place"
            );
        }
        // The probe's 503 says the spin took the place at the HTTP front,
        // not that the server has registered the call yet.
        session.cancel_until_ended(&[(100, &spin)]).await;
        let (status, body) = spin.await.expect("spin task");
        assert_eq!(status, 200, "{body}");
        assert!(
            messages(&body).iter().all(|m| m["id"] != json!(100)),
            "cancelled, so unanswered: {body}"
        );
        // The spin still runs: its place is still taken.
        let resp = session.post_raw(&call(300, "ok")).await;
        assert_eq!(
            resp.status(),
            503,
            "{}",
            resp.text().await.unwrap_or_default()
        );
        // Once the spin's time limit ends it, calls run again.
        loop {
            id += 1;
            let resp = session.post_raw(&call(id, "ok")).await;
            if resp.status() == 200 {
                let body = resp.text().await.unwrap_or_default();
                assert!(body.contains("fine"), "{body}");
                break;
            }
            assert!(guard.elapsed().as_secs() < 120, "the place never came free");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    });
}
