//! `skillhost mcp` driven by a real MCP client written by others: the
//! official Python SDK (`mcp` on PyPI), through `tests/mcp/client.py`.
//! The client initializes, lists tools, calls a handler tool (success and
//! classified failures, including a hostile handler hitting its limits),
//! reads resources and gets a prompt; this test asserts on what it saw.
//!
//! Needs `python3` with the `mcp` package (`.ci/install-mcp-client.sh`);
//! without it the test fails and says so, it does not skip.

use crate::harness;

use std::process::Command;
use std::sync::OnceLock;

use harness::{Workspace, cache_dir, guest, repo_root};
use serde_json::Value;

/// Template skills added to the session's catalog: with the fixed tools
/// and the bundled skills, more than one page of tools, resources and
/// prompts.
const PAGED_SKILLS: usize = skillhost::mcp::PAGE_SIZE + 20;

/// How the client reaches the server.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

/// One client session against a workspace whose `--skills` root holds the
/// hostile test guest as skill `hostile` (300 ms time limit), run once per
/// transport and shared by the tests below.
fn session_over(transport: Transport) -> &'static Value {
    static STDIO: OnceLock<Value> = OnceLock::new();
    static HTTP: OnceLock<Value> = OnceLock::new();
    let cell = match transport {
        Transport::Stdio => &STDIO,
        Transport::Http => &HTTP,
    };
    cell.get_or_init(|| {
        let ws = session_workspace();
        run_client(&ws, transport)
    })
}

/// The hostile guest as skill `hostile`, a symlink out of its folder, and
/// more skills than one page holds.
fn session_workspace() -> Workspace {
    let ws = Workspace::new();
    let dir = ws.add_skill(
        "hostile",
        "metadata:\n  skillhost:\n    handler: handler.wasm\n    limits: { timeout_ms: 300 }",
        Some(&guest("hostile-guest")),
    );
    // A file outside the skill folder, reachable only through a symlink
    // inside it: resource reads must refuse to follow it.
    let secret = ws.workspace.join("secret.txt");
    std::fs::write(&secret, "secret").expect("write secret");
    std::os::unix::fs::symlink(&secret, dir.join("outside.txt")).expect("symlink");
    // More skills than one page holds, so the client must follow cursors.
    for i in 0..PAGED_SKILLS {
        ws.add_skill(
            &format!("zz-paged-{i:03}"),
            "metadata:\n  skillhost:\n    template: \"ok {{task}}\"",
            None,
        );
    }
    ws
}

/// Runs `tests/mcp/client.py` against `skillhost mcp` on `ws` over
/// `transport`; what the client saw, as it printed it.
fn run_client(ws: &Workspace, transport: Transport) -> Value {
    let script = repo_root().join("tests/mcp/client.py");
    let mut client = Command::new("python3");
    client.arg(&script);
    if transport == Transport::Http {
        client.arg("--http");
    }
    let out = client
        .arg(env!("CARGO_BIN_EXE_skillhost"))
        .arg("--skills")
        .arg(&ws.skills)
        .current_dir(&ws.workspace)
        .env("SKILLHOST_HOME", &ws.home)
        .env("SKILLHOST_CACHE_DIR", cache_dir())
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}); install Python 3 and `pip install mcp`")
        });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        panic!(
            "the MCP Python SDK is missing: `pip install 'mcp>=1.9,<2'` (or run .ci/install-mcp-client.sh)\n{stderr}"
        );
    }
    assert!(
        out.status.success(),
        "the MCP client failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("the client's output is not JSON ({e}):\n{stdout}\nstderr:\n{stderr}")
    })
}

fn session() -> &'static Value {
    session_over(Transport::Stdio)
}

fn call(name: &str) -> &'static Value {
    let c = &session()["calls"][name];
    assert!(!c.is_null(), "no call `{name}` in {}", session()["calls"]);
    c
}

/// Asserts an error result whose text is `CLASS: ...` and whose structured
/// content names the same class.
fn assert_failure(c: &Value, class: &str, words: &str) {
    assert_eq!(c["is_error"], true, "{c}");
    let text = c["text"].as_str().unwrap_or_default();
    assert!(text.starts_with(&format!("{class}: ")), "{c}");
    assert!(text.contains(words), "`{words}` not in {c}");
    assert_eq!(c["structured"]["class"], class, "{c}");
}

#[test]
fn initialize_advertises_tools_resources_and_prompts() {
    let init = &session()["initialize"];
    assert_eq!(init["server"], "skillhost");
    assert_eq!(init["tools"], true);
    assert_eq!(init["resources"], true);
    assert_eq!(init["prompts"], true);
    assert!(init["protocol"].as_str().is_some_and(|p| !p.is_empty()));
}

#[test]
fn tools_are_the_fixed_pair_plus_one_per_runnable_skill() {
    let tools = session()["tools"].as_object().expect("tools");
    for name in [
        "list_skills",
        "read_skill",
        "skill_hostile",
        "skill_email-writer",
    ] {
        assert!(
            tools.contains_key(name),
            "{name} missing: {:?}",
            tools.keys()
        );
    }
    let schema = &tools["skill_hostile"]["schema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["task"]["type"], "string");
    assert_eq!(schema["required"], serde_json::json!(["task"]));
    let email = &tools["skill_email-writer"]["schema"]["properties"];
    assert_eq!(email["rephrase_spam"]["type"], "boolean");
    assert_eq!(email["attachments"]["type"], "array");
}

#[test]
fn a_handler_tool_call_succeeds() {
    let ok = call("ok");
    assert_eq!(ok["is_error"], false, "{ok}");
    assert_eq!(ok["text"], "fine");
}

#[test]
fn handler_failures_are_classified_tool_errors() {
    assert_failure(call("invalid"), "InvalidInput", "unknown attack");
    assert_failure(call("panic"), "Trap", "panicked on purpose");
    assert_failure(call("missing_task"), "InvalidArguments", "task");
}

#[test]
fn a_hostile_handler_hits_its_limits_and_the_server_keeps_serving() {
    let spin = call("spin");
    // The spin never ends on its own: a LimitExceeded answer is the time
    // limit's doing.
    assert_failure(spin, "LimitExceeded", "time");
    assert_failure(call("memory"), "LimitExceeded", "memory");
    let after = call("after");
    assert_eq!(
        after["is_error"], false,
        "the server must keep serving: {after}"
    );
    assert_eq!(after["text"], "fine");
}

#[test]
fn an_unknown_tool_is_a_protocol_error_not_a_crash() {
    let c = call("unknown_tool");
    assert!(
        c["protocol_error"]
            .as_str()
            .is_some_and(|m| m.contains("skill_does-not-exist")),
        "{c}"
    );
}

#[test]
fn list_and_read_skill_disclose_progressively() {
    let list = call("list_skills");
    assert_eq!(list["is_error"], false, "{list}");
    let skills = list["structured"]["skills"].as_array().expect("skills");
    let hostile = skills
        .iter()
        .find(|s| s["name"] == "hostile")
        .expect("hostile listed");
    assert_eq!(hostile["tool"], "skill_hostile");
    assert_eq!(hostile["source"], "path");
    assert_eq!(hostile["runnable"], true);
    let read = call("read_skill");
    assert!(
        read["text"]
            .as_str()
            .is_some_and(|t| t.contains("description: Test skill hostile.")),
        "{read}"
    );
    assert_failure(call("read_escape"), "Denied", "outside");
}

#[test]
fn skill_files_are_resources() {
    let resources = session()["resources"].as_array().expect("resources");
    let md = resources
        .iter()
        .find(|r| r["uri"] == "skill://hostile/SKILL.md")
        .expect("SKILL.md listed");
    assert_eq!(md["mime"], "text/markdown");
    assert!(
        resources
            .iter()
            .any(|r| r["uri"] == "skill://hostile/handler.wasm")
    );
    assert!(
        !resources
            .iter()
            .any(|r| r["uri"] == "skill://hostile/outside.txt"),
        "a symlink leading out of the skill is not listed"
    );
    let read = &session()["read_resource"][0];
    assert_eq!(read["uri"], "skill://hostile/SKILL.md");
    assert!(
        read["text"]
            .as_str()
            .is_some_and(|t| t.contains("# hostile")),
        "{read}"
    );
    let escape = session()["read_resource_escape"].as_str().unwrap_or("");
    assert!(
        escape.contains("leads outside"),
        "a resource read must not follow a symlink out of the skill: {escape}"
    );
}

#[test]
fn user_invocable_skills_are_prompts() {
    let prompts = session()["prompts"].as_object().expect("prompts");
    let hostile = prompts["hostile"].as_array().expect("hostile prompt");
    assert_eq!(hostile[0]["name"], "task");
    assert_eq!(hostile[0]["required"], true);
    let messages = session()["get_prompt"].as_array().expect("messages");
    assert_eq!(messages[0]["role"], "user");
    let text = messages[0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Task: check the sandbox"), "{text}");
    assert!(text.contains("Test skill."), "{text}");
}

#[test]
fn the_same_session_works_over_streamable_http() {
    let http = session_over(Transport::Http);
    let stdio = session();
    assert!(
        http["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("http://127.0.0.1:") && u.ends_with("/mcp")),
        "{}",
        http["url"]
    );
    assert_eq!(http["initialize"], stdio["initialize"]);
    let names = |v: &Value| {
        let mut n: Vec<String> = v["tools"]
            .as_object()
            .expect("tools")
            .keys()
            .cloned()
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(http), names(stdio));
    let calls = &http["calls"];
    assert_eq!(calls["ok"]["text"], "fine", "{}", calls["ok"]);
    assert_failure(&calls["invalid"], "InvalidInput", "unknown attack");
    assert_failure(&calls["spin"], "LimitExceeded", "time");
    assert_failure(&calls["memory"], "LimitExceeded", "memory");
    assert_eq!(calls["after"]["text"], "fine", "the server keeps serving");
    assert_failure(&calls["read_escape"], "Denied", "outside");
    assert_eq!(http["read_resource"], stdio["read_resource"]);
    assert_eq!(http["get_prompt"], stdio["get_prompt"]);
}

#[test]
fn the_http_server_refuses_browsers_and_other_paths() {
    let guards = &session_over(Transport::Http)["http_guards"];
    assert_eq!(
        guards["plain"], 200,
        "a plain MCP client is served: {guards}"
    );
    assert_eq!(guards["other_path"], 404, "{guards}");
    assert_eq!(
        guards["browser_origin"], 403,
        "a web page must not drive the server: {guards}"
    );
    assert_eq!(
        guards["foreign_host"], 403,
        "DNS rebinding: a foreign Host is refused: {guards}"
    );
}

#[test]
fn a_non_loopback_bind_is_refused_without_allow_remote() {
    let ws = Workspace::new();
    let r = ws.run_cli(&["mcp", "--http", "0.0.0.0:0"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("not a loopback address") && r.stderr.contains("--allow-remote"),
        "{}",
        r.stderr
    );
}

#[test]
fn long_lists_come_in_pages_and_a_client_gets_every_item() {
    let s = session();
    for list in ["tools", "resources", "prompts"] {
        assert_eq!(s["pages"][list], 2, "{list}: {}", s["pages"]);
    }
    let tools = s["tools"].as_object().expect("tools");
    let paged = tools
        .keys()
        .filter(|k| k.starts_with("skill_zz-paged-"))
        .count();
    assert_eq!(paged, PAGED_SKILLS, "every skill is a tool, across pages");
    let prompts = s["prompts"].as_object().expect("prompts");
    assert!(prompts.contains_key("hostile") && prompts.contains_key("zz-paged-519"));
}
