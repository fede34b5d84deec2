//! Under `mcp --http` and over stdio, handlers that spin until their
//! deadline neither stretch each other's deadlines nor hold up the
//! protocol: each ends with its time-limit failure, and a ping sent
//! meanwhile is answered first.

use crate::harness::mcp_http::{McpSession, hostile_server, hostile_workspace};
use crate::harness::mcp_stdio::StdioClient;

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn a_ping_is_answered_while_eight_handlers_spin() {
    let (_ws, server) = hostile_server(1000);
    let rt = crate::harness::runtime();
    rt.block_on(async {
        let session = McpSession::open(&server.url).await;
        // Compile the handler first, so the spins start together.
        let warm = session.call_skill(1, "hostile", "ok").await;
        assert_eq!(warm["isError"], false, "{warm}");

        let order = Arc::new(AtomicUsize::new(0));
        let mut spins = Vec::new();
        for i in 0..8u64 {
            let (s, order) = (session.clone(), order.clone());
            spins.push(tokio::spawn(async move {
                let r = s.call_skill(100 + i, "hostile", "spin").await;
                (order.fetch_add(1, Ordering::SeqCst), r)
            }));
        }
        // Let the spins reach the server before the ping (ordering of the
        // sends only; nothing is asserted about time).
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let ping = session.request(2, "ping", serde_json::json!({})).await;
        let ping_place = order.fetch_add(1, Ordering::SeqCst);
        assert!(ping.get("error").is_none(), "{ping}");
        for spin in spins {
            let (place, r) = spin.await.expect("spin task");
            assert!(place > ping_place, "a spin answered before the ping");
            assert_eq!(r["isError"], true, "{r}");
            let text = r["content"][0]["text"].as_str().unwrap_or_default();
            assert!(
                text.contains("LimitExceeded") && text.contains("time"),
                "{text}"
            );
        }
        assert_eq!(ping_place, 0, "the ping is answered first");
    });
}

/// Over stdio, served on one protocol thread (cli/mcp.rs), spins do not
/// hold up the protocol either: a ping is answered while four handlers
/// spin, and every spin still ends at its own time limit.
#[test]
fn over_stdio_a_ping_is_answered_while_four_handlers_spin() {
    let ws = hostile_workspace(1000);
    let skills = ws.skills.display().to_string();
    let mut server = ws.cli();
    server
        .args(["--skills", &skills, "mcp"])
        .stderr(Stdio::null());
    let mut client = StdioClient::start(server);
    client.initialize();
    // Compile the handler first, so the spins start together.
    let warm = client.request(
        1,
        "tools/call",
        serde_json::json!({ "name": "skill_hostile", "arguments": { "task": "ok" } }),
    );
    assert_eq!(warm["result"]["isError"], false, "{warm}");

    for id in 100..104u64 {
        client.send(&spin_call(id, false));
    }
    // Let the spins reach the server before the ping (ordering of the
    // sends only; nothing is asserted about time).
    std::thread::sleep(std::time::Duration::from_millis(200));
    client.send(&serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" }));
    let order = client.answers(5);
    assert_eq!(order[0]["id"], 2, "the ping is answered first: {order:?}");
    for spin in &order[1..] {
        let text = spin["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            spin["result"]["isError"] == true
                && text.contains("LimitExceeded")
                && text.contains("time"),
            "{spin}"
        );
    }
    client.finish();
}

/// A `tools/call` of the hostile handler's spin, plain or with a progress
/// token (which takes it through rmcp's session worker).
fn spin_call(id: u64, progress: bool) -> serde_json::Value {
    let mut params = serde_json::json!({
        "name": "skill_hostile", "arguments": { "task": "spin" }
    });
    if progress {
        params["_meta"] = serde_json::json!({ "progressToken": format!("p{id}") });
    }
    serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params })
}

/// `notifications/cancelled` for a running `tools/call` ends its stream
/// without an answer, whichever path the call took (sessions.rs answers
/// plain calls without rmcp's session worker), and the session serves on.
#[test]
fn a_cancelled_call_gets_no_answer_and_the_session_serves_on() {
    let (_ws, server) = hostile_server(1500);
    let rt = crate::harness::runtime();
    rt.block_on(async {
        let session = McpSession::open(&server.url).await;
        let warm = session.call_skill(1, "hostile", "ok").await;
        assert_eq!(warm["isError"], false, "{warm}");
        // A plain call, and one with a progress token (through the worker).
        let mut spins = Vec::new();
        for (id, meta) in [(100u64, false), (101, true)] {
            let s = session.clone();
            let msg = spin_call(id, meta);
            spins.push((id, tokio::spawn(async move { s.send(&msg).await })));
        }
        // Let the calls reach the server first (ordering of the sends only).
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let calls: Vec<_> = spins.iter().map(|(id, spin)| (*id, spin)).collect();
        session.cancel_until_ended(&calls).await;
        for (id, spin) in spins {
            let answer = spin.await.expect("call task");
            assert!(
                answer.iter().all(|m| m["id"] != serde_json::json!(id)),
                "call {id} was answered after its cancellation: {answer:?}"
            );
        }
        let after = session.call_skill(2, "hostile", "ok").await;
        assert_eq!(after["isError"], false, "{after}");
    });
}

/// A cancel may overtake its call (each is its own HTTP request): a call
/// whose cancel came first gets no answer and does not run, whichever path
/// it takes, and the session serves on.
#[test]
fn a_call_cancelled_before_it_arrives_gets_no_answer_and_does_not_run() {
    let (ws, server) = hostile_server(1500);
    let rt = crate::harness::runtime();
    rt.block_on(async {
        let session = McpSession::open(&server.url).await;
        let warm = session.call_skill(1, "hostile", "ok").await;
        assert_eq!(warm["isError"], false, "{warm}");
        // A plain call, and one with a progress token (through the worker).
        for (id, meta) in [(100u64, false), (101, true)] {
            session.cancel(id).await;
            let answer = session.send(&spin_call(id, meta)).await;
            assert!(
                answer.iter().all(|m| m["id"] != serde_json::json!(id)),
                "call {id} was answered although its cancel came first: {answer:?}"
            );
        }
        let after = session.call_skill(2, "hostile", "ok").await;
        assert_eq!(after["isError"], false, "{after}");
    });
    // The spins never ran: the store has the two other calls only.
    drop(server);
    let listed = ws.run_cli(&["runs", "list", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let runs: Vec<serde_json::Value> = serde_json::from_str(&listed.stdout).expect("JSON runs");
    let tasks: Vec<&str> = runs.iter().filter_map(|r| r["task"].as_str()).collect();
    assert_eq!(tasks, ["ok", "ok"], "{runs:?}");
}
