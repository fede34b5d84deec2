//! Tiered compiling (`[sandbox] compiler = "tiered"`): a first load
//! compiles with Winch and says so; Cranelift's code replaces Winch's in
//! the background and is what the disk cache keeps; a cache hit never
//! compiles; and every limit holds on Winch's code as on Cranelift's.

use crate::harness;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness::guest;
use serde_json::Map;
use skillhost::sandbox::{
    CallOutcome, CallRequest, CompileNotice, Compiler, Effective, FileRoots, Handler,
    HandlerOrigin, Limits, Sandbox, SandboxOptions, Services, Tier,
};

fn sandbox(cache: &std::path::Path, compiler: Compiler) -> Sandbox {
    Sandbox::new(&SandboxOptions {
        cache_dir: Some(cache.to_path_buf()),
        compiler,
        ..SandboxOptions::default()
    })
    .expect("sandbox")
}

/// Loads `wasm`, recording the compile notices.
fn load(sandbox: &Sandbox, wasm: &Arc<[u8]>) -> (Handler, Vec<CompileNotice>) {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let seen = notices.clone();
    let h = harness::runtime()
        .block_on(
            sandbox.load_async_with(skillhost::sandbox::Artifact::new(wasm.clone()), move |n| {
                seen.lock().expect("notices").push(n)
            }),
        )
        .expect("load");
    let n = notices.lock().expect("notices").clone();
    (h, n)
}

fn call(sandbox: &Sandbox, handler: &Handler, what: &str, limits: Limits) -> CallOutcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let roots = FileRoots {
        skill_dir: dir.path().to_path_buf(),
        workspace: dir.path().to_path_buf(),
        skill_files: Vec::new(),
        control: Default::default(),
    };
    let grants = Effective::none();
    let context = Map::new();
    let req = CallRequest {
        skill: "guest",
        description: what,
        context: &context,
        grants: &grants,
        limits,
        roots: &roots,
        services: Services::default(),
        entropy: Default::default(),
    };
    harness::runtime().block_on(sandbox.call(handler, &req))
}

fn files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

#[test]
fn a_miss_says_it_compiles_and_a_hit_does_not() {
    let wasm: Arc<[u8]> = Arc::from(std::fs::read(guest("echo-guest")).expect("read"));
    let cache = tempfile::tempdir().expect("tempdir");
    let s = sandbox(cache.path(), Compiler::Tiered);
    let (h, notices) = load(&s, &wasm);
    assert_eq!(
        (h.origin, h.tier),
        (HandlerOrigin::Compiled, Tier::Baseline)
    );
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].bytes, wasm.len());
    assert_eq!(notices[0].tier, Tier::Baseline);
    assert_eq!(
        call(&s, &h, "hi", Limits::default()).result.map(|o| o.body),
        Ok("hi".to_owned())
    );
    // Cranelift's code replaces Winch's, in memory and on disk.
    assert!(s.wait_optimised(Duration::from_secs(600)), "Cranelift done");
    let (h, notices) = load(&s, &wasm);
    assert_eq!(
        (h.origin, h.tier),
        (HandlerOrigin::MemoryCache, Tier::Optimized)
    );
    assert!(notices.is_empty(), "a memory hit: {notices:?}");
    assert_eq!(files(cache.path()), 1, "only Cranelift's code is kept");
    // A new process starts from Cranelift's code, without a compile.
    let again = sandbox(cache.path(), Compiler::Tiered);
    let (h, notices) = load(&again, &wasm);
    assert_eq!(
        (h.origin, h.tier),
        (HandlerOrigin::DiskCache, Tier::Optimized)
    );
    assert!(notices.is_empty(), "a disk hit: {notices:?}");
    // Cranelift only: one notice, for Cranelift.
    let other = tempfile::tempdir().expect("tempdir");
    let (h, notices) = load(&sandbox(other.path(), Compiler::Cranelift), &wasm);
    assert_eq!(h.tier, Tier::Optimized);
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].tier, Tier::Optimized);
}

#[test]
fn a_process_that_exits_early_keeps_winchs_code() {
    let wasm: Arc<[u8]> = Arc::from(std::fs::read(guest("echo-guest")).expect("read"));
    let cache = tempfile::tempdir().expect("tempdir");
    let first = sandbox(cache.path(), Compiler::Tiered);
    let (h, _) = load(&first, &wasm);
    assert_eq!(h.tier, Tier::Baseline);
    // A new sandbox loads Winch's code from disk (or Cranelift's, if its
    // background compile was quicker) rather than compiling again.
    let second = sandbox(cache.path(), Compiler::Tiered);
    let (h, notices) = load(&second, &wasm);
    assert!(notices.is_empty(), "compiled again: {notices:?}");
    assert_eq!(h.origin, HandlerOrigin::DiskCache);
    assert!(first.wait_optimised(Duration::from_secs(600)));
    assert!(second.wait_optimised(Duration::from_secs(600)));
}

#[test]
fn limits_hold_on_winchs_code() {
    let wasm: Arc<[u8]> = Arc::from(std::fs::read(guest("hostile-guest")).expect("read"));
    let cache = tempfile::tempdir().expect("tempdir");
    let s = sandbox(cache.path(), Compiler::Tiered);
    let (h, _) = load(&s, &wasm);
    assert_eq!(h.tier, Tier::Baseline);
    let short = Limits {
        timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    for (what, class, needle) in [
        ("spin", "LimitExceeded", "time"),
        ("memory", "LimitExceeded", "memory"),
        ("recurse", "LimitExceeded", "stack"),
        ("panic", "Trap", "aborted"),
    ] {
        let f = call(&s, &h, what, short).result.expect_err(what);
        assert_eq!(f.class, class, "{what}: {f}");
        assert!(f.message.contains(needle), "{what}: {f}");
    }
    assert_eq!(
        call(&s, &h, "ok", short).result.map(|o| o.body),
        Ok("fine".to_owned())
    );
}

/// An MCP client that sends a progress token hears, before the answer,
/// that the call waits for its handler to compile; a second call, served
/// from the cache, says nothing.
#[test]
fn a_first_mcp_call_that_compiles_sends_progress_to_a_client_that_asked() {
    use harness::mcp_http::{McpHttpServer, McpSession};
    use serde_json::{Value, json};

    let ws = harness::Workspace::new();
    // A custom section makes these bytes new to every cache.
    let mut wasm = std::fs::read(guest("echo-guest")).expect("echo");
    let name = format!("skillhost-test-{}", std::process::id());
    let payload = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_nanos()
        .to_string();
    let body_len = 1 + name.len() + payload.len();
    assert!(
        name.len() < 128 && body_len < 128,
        "one-byte LEB128 lengths"
    );
    wasm.extend([0u8, body_len as u8, name.len() as u8]);
    wasm.extend(name.as_bytes());
    wasm.extend(payload.as_bytes());
    let dir = ws.add_skill(
        "fresh",
        "metadata:\n  skillhost:\n    handler: handler.wasm",
        None,
    );
    std::fs::write(dir.join("handler.wasm"), &wasm).expect("write handler");
    let skills = ws.skills.display().to_string();
    let server = McpHttpServer::start(&ws, &["--skills", &skills]);

    let call = |id: u64| {
        json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {
                "name": "skill_fresh",
                "arguments": { "task": "hi" },
                "_meta": { "progressToken": format!("p{id}") }
            }
        })
    };
    harness::runtime().block_on(async {
        let s = McpSession::open(&server.url).await;
        let first = s.send(&call(1)).await;
        let progress: Vec<&Value> = first
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .collect();
        assert_eq!(progress.len(), 1, "{first:?}");
        assert_eq!(progress[0]["params"]["progressToken"], "p1");
        let message = progress[0]["params"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains("compiling the handler of `fresh`"),
            "{message}"
        );
        let answer = first.iter().position(|m| m["id"] == 1).expect("an answer");
        let notice = first
            .iter()
            .position(|m| m["method"] == "notifications/progress")
            .expect("a notice");
        assert!(notice < answer, "the notice comes first: {first:?}");
        assert_eq!(first[answer]["result"]["isError"], false, "{first:?}");

        let second = s.send(&call(2)).await;
        assert!(
            second
                .iter()
                .all(|m| m["method"] != "notifications/progress"),
            "{second:?}"
        );
    });
}
