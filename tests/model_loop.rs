//! The model loop (tier 2) against a real HTTP server on loopback that
//! speaks the OpenAI and Anthropic wire formats, and a scripted end-to-end
//! run through the CLI with two tools and a pipeline.

use crate::harness;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use harness::{Workspace, run};
use serde_json::{Value, json};
use skillhost::config::Config;
use skillhost::exec::{RunOutcome, Runner, Step};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One canned HTTP answer; `None` never answers (for timeouts).
type Reply = Option<(u16, Vec<(&'static str, String)>, Value)>;

/// A loopback HTTP/1.1 server answering requests with canned replies in
/// order and recording each request body.
struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Value>>>,
    _rt: tokio::runtime::Runtime,
}

impl Server {
    fn start(replies: Vec<Reply>) -> Server {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let queue = Arc::new(Mutex::new(VecDeque::from(replies)));
        let recorded = requests.clone();
        rt.spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(answer_one(sock, recorded.clone(), queue.clone()));
            }
        });
        Server {
            url,
            requests,
            _rt: rt,
        }
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().expect("lock").clone()
    }

    /// The last message of the `n`th request: what the model was just told.
    fn last_message(&self, n: usize) -> Value {
        self.requests()[n]["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .unwrap_or_else(|| panic!("request {n} has no messages"))
    }
}

/// Reads one request on `sock`, records its body (JSON, or null) and sends
/// the next canned reply, or never answers when it is `None` or gone.
async fn answer_one(
    mut sock: tokio::net::TcpStream,
    recorded: Arc<Mutex<Vec<Value>>>,
    queue: Arc<Mutex<VecDeque<Reply>>>,
) {
    let Some(body) = read_body(&mut sock).await else {
        return;
    };
    recorded.lock().expect("lock").push(body);
    let reply = queue.lock().expect("lock").pop_front().flatten();
    let Some((status, headers, json)) = reply else {
        // Never answer: the client must time out.
        tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        return;
    };
    let _ = sock
        .write_all(response(status, &headers, &json).as_bytes())
        .await;
}

/// The body of one request (head, then `content-length` bytes) as JSON,
/// null where it is not; `None` if the client goes away first.
async fn read_body(sock: &mut tokio::net::TcpStream) -> Option<Value> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let body_start = loop {
        let n = sock.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..body_start]).to_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < body_start + len {
        let n = sock.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(serde_json::from_slice(&buf[body_start..body_start + len]).unwrap_or(Value::Null))
}

/// An HTTP/1.1 response carrying `json`, closing the connection.
fn response(status: u16, headers: &[(&str, String)], json: &Value) -> String {
    let text = json.to_string();
    let mut resp = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        text.len()
    );
    for (k, v) in headers {
        resp.push_str(&format!("{k}: {v}\r\n"));
    }
    resp.push_str("\r\n");
    resp.push_str(&text);
    resp
}

fn ok(v: Value) -> Reply {
    Some((200, vec![], v))
}

fn openai_text(text: &str) -> Reply {
    ok(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    }))
}

fn openai_calls(calls: &[(&str, &str, &str)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    ok(json!({
        "id": "chatcmpl-2", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": calls}}]
    }))
}

/// A workspace skill (trusted) without a handler, so tier 2 runs, and a
/// runner whose model is the local server.
fn runner_for(
    server: &Server,
    provider: &str,
    configure: impl FnOnce(&mut Config),
) -> (Workspace, Runner) {
    let ws = Workspace::new();
    ws.add_skill(
        "helper",
        "allowed-tools: [read_skill_file, list_skill_files]",
        None,
    );
    let mut config = Config::default();
    config.model.provider = Some(provider.into());
    config.model.model = Some("test-model".into());
    config.model.base_url = Some(server.url.clone());
    config.model.max_retries = Some(2);
    configure(&mut config);
    let provider = config.model.build().expect("provider").expect("configured");
    let runner = ws.runner(config).with_provider(provider);
    (ws, runner)
}

fn tool_steps(o: &RunOutcome) -> Vec<(String, Option<String>)> {
    o.trajectory
        .iter()
        .filter_map(|s| match s {
            Step::Tool { tool, error, .. } => Some((tool.clone(), error.clone())),
            Step::Model { .. } => None,
        })
        .collect()
}

#[test]
fn openai_plain_answer() {
    let server = Server::start(vec![openai_text("Hello there.")]);
    let (_ws, runner) = runner_for(&server, "openai", |_| {});
    let o = run(&runner, "helper", "say hello", json!({}));
    assert_eq!(o.failure, None);
    assert_eq!(o.output.expect("output").body, "Hello there.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let system = reqs[0]["messages"][0]["content"]
        .as_str()
        .expect("system prompt");
    assert!(system.contains("<skill_instructions>"), "{system}");
    assert!(
        !system.contains("<available_skills>"),
        "a skill reads only its own files, so other skills are not offered for reading: {system}"
    );
    assert_eq!(
        reqs[0].get("tools"),
        None,
        "a folder with only its SKILL.md has nothing for the file readers to read"
    );
}

#[test]
fn a_skill_is_offered_only_the_allowed_tools_it_can_use() {
    let server = Server::start(vec![openai_text("Hello there.")]);
    let (ws, runner) = runner_for(&server, "openai", |_| {});
    std::fs::write(ws.skills.join("helper/reference.md"), "# notes\n").expect("write");
    let o = run(&runner, "helper", "say hello", json!({}));
    assert_eq!(o.failure, None);
    let reqs = server.requests();
    let tools: Vec<&str> = reqs[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(tools, vec!["list_skill_files", "read_skill_file"]);
    let prompt_tokens: Vec<u64> = o
        .trajectory
        .iter()
        .filter_map(|s| match s {
            Step::Model { prompt_tokens, .. } => Some(*prompt_tokens),
            Step::Tool { .. } => None,
        })
        .collect();
    assert_eq!(
        prompt_tokens,
        vec![10],
        "the server's prompt_tokens, per request"
    );
}

#[test]
fn openai_several_tool_calls_in_one_turn() {
    let server = Server::start(vec![
        openai_calls(&[
            ("c1", "read_skill_file", r#"{"path": "SKILL.md"}"#),
            ("c2", "list_skill_files", "{}"),
        ]),
        openai_text("Read it."),
    ]);
    let (_ws, runner) = runner_for(&server, "openai", |_| {});
    let o = run(&runner, "helper", "look at yourself", json!({}));
    assert_eq!(o.failure, None, "{:?}", o.trajectory);
    assert_eq!(
        tool_steps(&o),
        vec![
            ("read_skill_file".into(), None),
            ("list_skill_files".into(), None)
        ]
    );
    let second = &server.requests()[1]["messages"];
    let tool_msgs: Vec<&Value> = second
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(tool_msgs.len(), 2);
    assert_eq!(tool_msgs[0]["tool_call_id"], "c1");
    assert!(
        tool_msgs[0]["content"]
            .as_str()
            .unwrap_or("")
            .contains("Test skill helper")
    );
    assert_eq!(tool_msgs[1]["content"], "[\"SKILL.md\"]");
}

#[test]
fn invalid_tool_arguments_are_told_to_the_model_and_the_loop_goes_on() {
    let server = Server::start(vec![
        openai_calls(&[("c1", "read_skill_file", "{\"path\": SKILL.md")]),
        openai_calls(&[("c2", "read_skill_file", "{\"path\": \"SKILL.md\"}")]),
        openai_text("Fixed it."),
    ]);
    let (_ws, runner) = runner_for(&server, "openai", |_| {});
    let o = run(&runner, "helper", "read", json!({}));
    assert_eq!(o.output.as_ref().expect("output").body, "Fixed it.");
    let steps = tool_steps(&o);
    assert!(
        steps[0]
            .1
            .as_deref()
            .unwrap_or("")
            .contains("not valid JSON"),
        "{steps:?}"
    );
    assert_eq!(steps[1].1, None);
    let last = server.last_message(1);
    assert_eq!(last["role"], "tool");
    assert!(
        last["content"]
            .as_str()
            .unwrap_or("")
            .contains("not valid JSON"),
        "{last}"
    );
}

#[test]
fn a_tool_error_becomes_a_recovery_rule_that_the_model_is_told_about() {
    let bad_call = || openai_calls(&[("c1", "read_skill_file", "{\"path\": SKILL.md")]);
    let server = Server::start(vec![
        bad_call(),
        openai_text("Gave up."),
        bad_call(),
        openai_text("Retried."),
    ]);
    let (ws, runner) = runner_for(&server, "openai", |_| {});
    // Run 1: no rules yet; the tool error is recorded with its class.
    let o = run(&runner, "helper", "read yourself", json!({}));
    assert!(o.rules_applied.is_empty());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let report = rt
        .block_on(skillhost::learn::cycle::learn_from_store(
            runner.store().expect("store"),
            skillhost::store::SharedStore::of(runner.store().expect("store")),
            &ws.paths(),
            &runner.catalog(),
            &skillhost::learn::LearningConfig::default(),
            None,
        ))
        .expect("learn");
    let rule = "recover-invalidarguments-helper";
    assert!(
        report.groups.iter().any(|g| g.rules_added == [rule]),
        "{report:?}"
    );

    // Run 2: the recovery rule fires on the same error, and the model reads
    // what was done before the error itself.
    let path = skillhost::learn::rules_path(&ws.paths().state_dir());
    let (learning, warnings) =
        skillhost::learn::Learning::open(&path, skillhost::learn::RuleFilter::All).expect("rules");
    assert!(warnings.is_empty(), "{warnings:?}");
    let runner = runner.with_learning(Arc::new(learning));
    let o = run(&runner, "helper", "read yourself", json!({}));
    assert_eq!(o.rules_applied.len(), 1, "{:?}", o.rules_applied);
    assert_eq!(o.rules_applied[0].id, rule);
    let last = server.last_message(3);
    let content = last["content"].as_str().unwrap_or_default();
    assert!(
        content.starts_with(
            "[Recovery applied: instruction: Check each tool's parameters: send one JSON object with every required field.] Error: "
        ) && content.contains("not valid JSON"),
        "{content}"
    );
    let recovered = o.trajectory.iter().any(|s| {
        matches!(s, Step::Tool { recovery: Some(r), .. } if r.contains("Check each tool's parameters"))
    });
    assert!(recovered, "the trajectory records the recovery");
}

#[test]
fn the_step_cap_ends_the_loop_with_a_clear_failure() {
    let looping: Vec<Reply> = (0..10)
        .map(|i| openai_calls(&[(if i % 2 == 0 { "a" } else { "b" }, "list_skill_files", "{}")]))
        .collect();
    let server = Server::start(looping);
    let (_ws, runner) = runner_for(&server, "openai", |c| c.agent.max_steps = 3);
    let o = run(&runner, "helper", "loop", json!({}));
    let f = o.failure.expect("failure");
    assert_eq!(f.class, "StepLimitExceeded");
    assert!(f.message.contains("3 steps"), "{}", f.message);
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn rate_limit_then_success() {
    let server = Server::start(vec![
        Some((
            429,
            vec![("retry-after", "0".into())],
            json!({"error": {"message": "slow down"}}),
        )),
        openai_text("after the wait"),
    ]);
    let (_ws, runner) = runner_for(&server, "openai", |_| {});
    let o = run(&runner, "helper", "hi", json!({}));
    assert_eq!(o.output.expect("output").body, "after the wait");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn server_errors_three_times_fail_clearly() {
    let err = || Some((500, vec![], json!({"error": {"message": "boom"}})));
    let server = Server::start(vec![err(), err(), err()]);
    let (_ws, runner) = runner_for(&server, "openai", |_| {});
    let o = run(&runner, "helper", "hi", json!({}));
    let f = o.failure.expect("failure");
    assert_eq!(f.class, "ModelError");
    assert!(f.message.contains("500"), "{}", f.message);
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_model_that_never_answers_times_out() {
    let server = Server::start(vec![None, None, None]);
    let (_ws, runner) = runner_for(&server, "openai", |c| {
        c.model.timeout_ms = Some(300);
        c.model.max_retries = Some(0);
    });
    let o = run(&runner, "helper", "hi", json!({}));
    let f = o.failure.expect("failure");
    assert_eq!(f.class, "ModelError");
    assert!(
        f.message.contains("did not answer within 300ms"),
        "{}",
        f.message
    );
}

/// A runner whose whole configuration is read from the workspace's
/// skillhost.toml: `[model]` for the local server, then `extra`.
fn runner_from_toml(server: &Server, extra: &str) -> (Workspace, Runner) {
    let ws = Workspace::new();
    ws.add_skill("helper", "allowed-tools: [list_skill_files]", None);
    let toml = format!(
        "[model]\nprovider = \"openai\"\nmodel = \"small\"\nbase_url = \"{}\"\n{extra}",
        server.url
    );
    std::fs::write(ws.workspace.join("skillhost.toml"), toml).expect("write skillhost.toml");
    let config = Config::load(&ws.paths()).expect("skillhost.toml");
    let provider = config.model.build().expect("provider").expect("configured");
    let runner = ws.runner(config).with_provider(provider);
    (ws, runner)
}

/// A tool call whose usage reports `prompt` + `completion` tokens.
fn call_costing(prompt: u64, completion: u64) -> Reply {
    let Some((status, headers, mut body)) = openai_calls(&[("c", "list_skill_files", "{}")]) else {
        unreachable!("openai_calls answers")
    };
    body["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion});
    Some((status, headers, body))
}

fn model_steps(o: &RunOutcome) -> Vec<Option<String>> {
    o.trajectory
        .iter()
        .filter_map(|s| match s {
            Step::Model { error, .. } => Some(error.clone()),
            Step::Tool { .. } => None,
        })
        .collect()
}

#[test]
fn a_model_slower_than_the_timeout_is_asked_once_not_four_times() {
    let server = Server::start(vec![None, None, None, None]);
    let (_ws, runner) = runner_from_toml(&server, "timeout_ms = 300\nmax_retries = 3\n");
    let o = run(&runner, "helper", "ramble", json!({}));
    assert_eq!(o.failure.expect("failure").class, "ModelError");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(o.timings.model_retries, 0);
}

#[test]
fn every_request_of_a_run_carries_the_default_max_tokens() {
    let server = Server::start(vec![call_costing(1, 1), openai_text("done")]);
    let (_ws, runner) = runner_from_toml(&server, "");
    let o = run(&runner, "helper", "ramble", json!({}));
    assert_eq!(o.failure, None);
    let caps: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r["max_tokens"].clone())
        .collect();
    assert_eq!(caps, vec![json!(skillhost::llm::DEFAULT_MAX_TOKENS); 2]);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.get("temperature").is_none())
    );
}

#[test]
fn the_token_budget_stops_the_run_after_the_call_that_crossed_it() {
    // 1100 tokens a call: the second call brings the run to 2200 > 2000.
    let server = Server::start((0..5).map(|_| call_costing(600, 500)).collect());
    let (_ws, runner) = runner_from_toml(&server, "\n[agent]\nmax_run_tokens = 2000\n");
    let o = run(&runner, "helper", "loop", json!({}));
    let f = o.failure.as_ref().expect("failure");
    assert_eq!(f.class, "ModelBudgetExceeded");
    assert!(
        f.message.contains("2200 tokens") && f.message.contains("[agent] max_run_tokens"),
        "{}",
        f.message
    );
    assert_eq!(
        server.requests().len(),
        2,
        "no call after the one that crossed it"
    );
    assert_eq!(model_steps(&o), vec![None, None]);
    assert_eq!(
        tool_steps(&o).len(),
        1,
        "the crossing call's tools are not run"
    );
    assert_eq!(o.timings.model_tokens, 2200);
}

#[test]
fn the_time_budget_cuts_the_call_that_crosses_it() {
    // Every call after the first hangs; the budget, not the 60 s
    // timeout, ends the run.
    let server = Server::start(vec![call_costing(1, 1), None, None]);
    let (_ws, runner) = runner_from_toml(
        &server,
        "timeout_ms = 60000\n[agent]\nmax_run_model_ms = 1500\n",
    );
    let o = run(&runner, "helper", "loop", json!({}));
    let f = o.failure.as_ref().expect("failure");
    assert_eq!(f.class, "ModelBudgetExceeded");
    assert!(
        f.message.contains("[agent] max_run_model_ms"),
        "{}",
        f.message
    );
    let steps = model_steps(&o);
    // The call that crossed the budget is the last one, and carries it.
    let last = steps.last().cloned().flatten().unwrap_or_default();
    assert!(last.contains("max_run_model_ms"), "{steps:?}");
    assert!(steps.len() <= 2, "{steps:?}");
    let last_class = o.trajectory.iter().rev().find_map(|s| match s {
        Step::Model { error_class, .. } => Some(error_class.clone()),
        Step::Tool { .. } => None,
    });
    assert_eq!(
        last_class.flatten().map(|c| c.to_string()).as_deref(),
        Some("ModelBudgetExceeded")
    );
    assert_eq!(server.requests().len(), steps.len());
}

#[test]
fn anthropic_tool_use_round_trip() {
    let server = Server::start(vec![
        ok(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_1", "name": "list_skill_files", "input": {}}
            ],
            "usage": {"input_tokens": 5, "output_tokens": 5}
        })),
        ok(json!({
            "id": "msg_2", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "One file."}],
            "usage": {"input_tokens": 9, "output_tokens": 2}
        })),
    ]);
    let (_ws, runner) = runner_for(&server, "anthropic", |_| {});
    let o = run(&runner, "helper", "count files", json!({}));
    assert_eq!(o.output.expect("output").body, "One file.");
    let second = &server.requests()[1];
    assert!(
        second["system"]
            .as_str()
            .unwrap_or("")
            .contains("<skill_instructions>")
    );
    let last = server.last_message(1);
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["tool_use_id"], "toolu_1");
}

#[test]
fn scripted_run_with_two_tools_and_a_pipeline_through_the_cli() {
    let ws = Workspace::new();
    let skill_dir = ws.workspace.join(".skillhost/skills/notes-digest");
    std::fs::create_dir_all(&skill_dir).expect("mkdir");
    std::fs::write(
        skill_dir.join("SKILL.md"),
        "---\nname: notes-digest\ndescription: Digests the team's notes.\nmetadata:\n  skillhost:\n    capabilities:\n      files: { read: [\"workspace:notes\"] }\n---\n\nRead the notes and summarize them.\n",
    )
    .expect("write skill");
    std::fs::create_dir_all(ws.workspace.join("notes")).expect("mkdir");
    std::fs::write(
        ws.workspace.join("notes/a.txt"),
        "Ship the sandbox on Friday.",
    )
    .expect("write");
    std::fs::write(
        ws.workspace.join("notes/b.txt"),
        "The sandbox blocks loopback. Lunch was pizza. The sandbox caches compiled handlers.",
    )
    .expect("write");
    let script = json!([
        {"text": "Reading the notes.", "tool_calls": [
            {"name": "read_file", "arguments": {"path": "notes/a.txt"}},
            {"name": "list_skill_files", "arguments": {}}
        ]},
        {"tool_calls": [{"name": "execute_pipeline", "arguments": {
            "steps": [
                {"tool": "read_file", "args": {"path": "notes/b.txt"}},
                {"tool": "skill_text-summarizer", "args": {"task": "summarize", "text": "{{step[0].result}}", "sentences": 2}}
            ],
            "result": "last"
        }}]},
        {"text": "Digest: ship on Friday; the sandbox blocks loopback and caches handlers."}
    ]);
    let script_path = ws.workspace.join("replies.json");
    std::fs::write(&script_path, script.to_string()).expect("write script");

    let r = ws.run_cli(&[
        "run",
        "digest the notes",
        "--skill",
        "notes-digest",
        "--model",
        &format!("scripted:{}", script_path.display()),
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["tier"], "model");
    assert!(
        v["output"]["body"]
            .as_str()
            .unwrap_or("")
            .starts_with("Digest:")
    );
    let traj = v["trajectory"].as_array().expect("trajectory");
    let models = traj.iter().filter(|s| s["kind"] == "model").count();
    assert_eq!(models, 3);
    let tools: Vec<&Value> = traj.iter().filter(|s| s["kind"] == "tool").collect();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["tool"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        vec!["read_file", "list_skill_files", "execute_pipeline"]
    );
    assert_eq!(tools[0]["result"], "Ship the sandbox on Friday.");
    assert_eq!(tools[0]["arguments"]["path"], "notes/a.txt");
    let summary = tools[2]["result"].as_str().expect("pipeline result");
    assert!(
        summary.contains("sandbox") && !summary.contains("pizza"),
        "{summary}"
    );
    assert!(
        tools
            .iter()
            .all(|t| t["error"].is_null() && t["duration_us"].is_u64())
    );
}

#[test]
fn a_declared_pipeline_runs_as_the_skills_handler() {
    let ws = Workspace::new();
    let dir = ws.workspace.join(".skillhost/skills/brief");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        r#"---
name: brief
description: Summarizes a text and emails the summary.
metadata:
  context_fields:
    text: { type: string, default: "" }
  skillhost:
    pipeline:
      steps:
        - tool: skill_text-summarizer
          args: { task: "{{task}}", text: "{{context.text}}", sentences: 1 }
        - tool: skill_email-writer
          args: { task: "Email the team about {{step[0].result}}" }
      result: last
---
Summarize, then email.
"#,
    )
    .expect("write");
    let text = "Sandboxed handlers ship in the next release of the sandboxed handlers host. Cats nap. {{step[0].result}}";
    let r = ws.run_cli(&[
        "run",
        "summarize",
        "--skill",
        "brief",
        "-c",
        &format!("text={text}"),
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["tier"], "pipeline");
    let body = v["output"]["body"].as_str().expect("body");
    assert!(
        body.starts_with("Subject:") && body.contains("andboxed handlers"),
        "{body}"
    );
    assert!(
        !body.contains("{{"),
        "injected references are stripped: {body}"
    );
    assert_eq!(v["trajectory"][0]["tool"], "execute_pipeline");
}

/// The skill tools of the first request of a run of `planner`, which may
/// call four other skills, with `[model] max_skill_tools` set to `cap`.
fn skill_tools_offered(cap: Option<usize>) -> Vec<String> {
    let server = Server::start(vec![openai_text("Done.")]);
    let ws = planner_workspace();
    let mut config = Config::default();
    config.model.provider = Some("openai".into());
    config.model.model = Some("test-model".into());
    config.model.base_url = Some(server.url.clone());
    config.model.max_skill_tools = cap;
    // Calling another skill is for a granted skill only.
    ws.grant_declared(&mut config, "planner");
    let provider = config.model.build().expect("provider").expect("configured");
    let runner = ws.runner(config).with_provider(provider);
    let o = run(
        &runner,
        "planner",
        "what is the weather in Paris tomorrow",
        json!({}),
    );
    assert_eq!(o.failure, None);
    skill_tool_names(&server.requests()[0]["tools"])
}

/// A workspace with four skills that are tools and `planner`, which may
/// call them all.
fn planner_workspace() -> Workspace {
    let ws = Workspace::new();
    // A skill is a tool when it runs without a model: a pipeline here.
    let pipeline = "metadata:\n  skillhost:\n    pipeline:\n      steps:\n        - tool: list_skill_files\n          args: {}\n      result: last";
    for name in ["weather", "invoice", "recipes", "translate"] {
        ws.add_skill(name, pipeline, None);
    }
    ws.add_skill(
        "planner",
        "allowed-tools: [skill_weather, skill_invoice, skill_recipes, skill_translate]",
        None,
    );
    ws
}

/// The names of the skill tools in an OpenAI `tools` list.
fn skill_tool_names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .filter(|n| n.starts_with("skill_"))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_small_context_is_offered_only_the_skills_search_ranks_best_for_the_task() {
    assert_eq!(
        skill_tools_offered(None).len(),
        4,
        "no cap: every skill allowed"
    );
    assert_eq!(skill_tools_offered(Some(1)), ["skill_weather"]);
    assert_eq!(skill_tools_offered(Some(4)).len(), 4);
}
