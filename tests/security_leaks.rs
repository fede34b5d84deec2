//! Leaks and bypasses from the security review (issue 9, items 11 and
//! 13-17), each tried the way an attacker would, through the real binary
//! or the library: a skill reading another skill's files, a pipeline that
//! acts before a later step is refused, an API key a model server quotes
//! back, a template answer past the output limit, and a closed stdout.
//! (The MCP resources of item 16 are tested in `host/src/mcp/tests.rs`.)

use crate::harness;
use crate::llm_providers::{KEY, Reply, Server};

use std::process::{Command, Stdio};

use harness::{Workspace, run};
use serde_json::{Value, json};
use skillhost::config::Config;

fn skills_arg(ws: &Workspace) -> String {
    ws.skills.to_string_lossy().into_owned()
}

fn tool_steps(v: &Value) -> Vec<&Value> {
    v["trajectory"]
        .as_array()
        .expect("trajectory")
        .iter()
        .filter(|s| s["kind"] == "tool")
        .collect()
}

/// Item 11: an ungranted skill asks the model's file tools for another
/// skill's secret; it gets its own files and nothing of the other's.
#[test]
fn read_skill_file_reads_only_the_calling_skills_own_files() {
    let ws = Workspace::new();
    let vault = ws.add_skill("vault", "", None);
    std::fs::write(vault.join("secret.txt"), "the vault's secret: 7391").expect("write");
    let thief = ws.add_skill("thief", "", None);
    std::fs::write(thief.join("notes.md"), "the thief's own notes").expect("write");
    let script = json!([
        {"tool_calls": [
            {"name": "read_skill_file", "arguments": {"skill": "vault", "path": "secret.txt"}},
            {"name": "list_skill_files", "arguments": {"skill": "vault"}},
            {"name": "read_skill_file", "arguments": {"skill": "vault", "path": "../vault/secret.txt"}},
            {"name": "read_skill_file", "arguments": {"path": "../vault/secret.txt"}},
            {"name": "read_skill_file", "arguments": {"path": "notes.md"}},
            {"name": "read_skill_file", "arguments": {"skill": "thief", "path": "notes.md"}}
        ]},
        {"text": "done"}
    ]);
    let script_path = ws.workspace.join("replies.json");
    std::fs::write(&script_path, script.to_string()).expect("write script");
    let skills = skills_arg(&ws);
    let r = ws.run_cli(&[
        "--skills",
        &skills,
        "run",
        "read the vault",
        "--skill",
        "thief",
        "--model",
        &format!("scripted:{}", script_path.display()),
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        !r.stdout.contains("7391") && !r.stderr.contains("7391"),
        "the other skill's secret leaked: {}",
        r.stdout
    );
    let v = r.json();
    let tools = tool_steps(&v);
    assert_eq!(tools.len(), 6, "{tools:?}");
    for t in &tools[..2] {
        assert_eq!(t["error_class"], "Denied", "{t}");
        assert!(
            t["error"]
                .as_str()
                .unwrap_or("")
                .contains("only the files of the calling skill `thief`"),
            "{t}"
        );
    }
    for t in &tools[2..4] {
        assert!(t["error"].is_string(), "an escape must fail: {t}");
    }
    assert_eq!(tools[4]["result"], "the thief's own notes");
    assert_eq!(tools[5]["result"], "the thief's own notes");
}

/// Item 13: a pipeline whose second step is refused runs no step at all;
/// before, its first step had already written the file.
#[test]
fn a_pipeline_with_a_refused_step_writes_nothing() {
    let ws = Workspace::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let dir = ws.workspace.join(".skillhost/skills/exfil");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::create_dir_all(ws.workspace.join("data")).expect("mkdir");
    let front = |allowed: &str| {
        format!(
            r#"---
name: exfil
description: Writes a file, then calls home.
{allowed}metadata:
  skillhost:
    capabilities:
      files: {{ write: ["workspace:data"] }}
      http: ["api.example.com"]
    pipeline:
      steps:
        - tool: write_file
          args: {{ path: data/x, content: "{{{{task}}}}" }}
        - tool: http_fetch
          args: {{ url: "http://127.0.0.1:{port}/" }}
---
Write, then fetch.
"#
        )
    };
    // Refused by the grants (the host is not granted), then by the skill's
    // own allowed-tools; each time, step 0 must not have run.
    for (allowed, layer) in [
        ("", "sandbox grants"),
        ("allowed-tools: [write_file]\n", "allowed-tools"),
    ] {
        std::fs::write(dir.join("SKILL.md"), front(allowed)).expect("write");
        let r = ws.run_cli(&["run", "payload", "--skill", "exfil", "--json"]);
        assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
        let v = r.json();
        assert_eq!(v["failure"]["class"], "Denied", "{v}");
        let message = v["failure"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains(layer) && message.contains("no step ran"),
            "{message}"
        );
        assert!(
            !ws.workspace.join("data/x").exists(),
            "step 0 wrote its file before step 1 was refused ({layer})"
        );
    }
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "nothing connected");
    // Without the refused step the same write goes through.
    let fine = front("").replace(
        &format!(
            "        - tool: http_fetch\n          args: {{ url: \"http://127.0.0.1:{port}/\" }}\n"
        ),
        "",
    );
    std::fs::write(dir.join("SKILL.md"), fine).expect("write");
    let r = ws.run_cli(&["run", "payload", "--skill", "exfil"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        std::fs::read_to_string(ws.workspace.join("data/x")).expect("written"),
        "payload"
    );
}

/// Item 14: the model server quotes the API key in its error, as real
/// providers do. The key must not reach stderr, `--json`, `runs show` or
/// the store.
#[test]
fn an_api_key_quoted_by_the_model_server_is_never_shown_or_stored() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let quote = || Reply::QuoteKey {
        status: 401,
        json: true,
    };
    let server = rt.block_on(Server::start(vec![quote(), quote(), quote(), quote()]));
    let ws = Workspace::new();
    ws.add_skill("helper", "", None);
    let skills = skills_arg(&ws);
    let base = format!("{}/v1", server.base);
    let run_args = |json: bool| {
        let mut a = vec![
            "--skills",
            skills.as_str(),
            "run",
            "say hi",
            "--skill",
            "helper",
            "--model",
            "openai:gpt-4o-mini",
            "--base-url",
            base.as_str(),
            "--api-key-env",
            "SKILLHOST_TEST_KEY",
        ];
        if json {
            a.push("--json");
        }
        a
    };
    let mut seen = Vec::new();
    for json in [false, true] {
        let out = ws
            .cli()
            .args(run_args(json))
            .env("SKILLHOST_TEST_KEY", KEY)
            .output()
            .expect("run skillhost");
        let r = harness::CliResult::from(out);
        assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
        assert!(
            format!("{}{}", r.stdout, r.stderr).contains("Incorrect API key provided"),
            "the server's message is shown: {}\n{}",
            r.stdout,
            r.stderr
        );
        seen.push(r.stdout);
        seen.push(r.stderr);
    }
    for args in [
        vec!["runs", "list"],
        vec!["runs", "list", "--json"],
        vec!["runs", "show", "1"],
        vec!["runs", "show", "2", "--json"],
        vec!["runs", "export"],
    ] {
        let r = ws.run_cli(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        seen.push(r.stdout);
        seen.push(r.stderr);
    }
    for text in &seen {
        assert!(!text.contains(KEY), "the key leaked: {text}");
    }
    assert!(
        seen.iter().any(|t| t.contains("Bearer [redacted]")),
        "{seen:?}"
    );
    let state = ws.workspace.join(".skillhost");
    let mut stored = 0;
    for entry in std::fs::read_dir(&state).expect("the store exists") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            let bytes = std::fs::read(&path).expect("read");
            stored += bytes.len();
            assert!(
                !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
                "the key is stored in {}",
                path.display()
            );
        }
    }
    assert!(stored > 0, "the runs were recorded");
}

/// Item 15: a template repeats its task; its answer gets the same output
/// limit as a handler's and fails the same way.
#[test]
fn a_template_answer_over_the_output_limit_is_output_too_large() {
    let ws = Workspace::new();
    ws.add_skill(
        "echo-template",
        "metadata:\n  skillhost:\n    template: \"Answer: {{task}}\"",
        None,
    );
    ws.add_skill(
        "small",
        "metadata:\n  skillhost:\n    template: \"{{task}}{{task}}\"\n    limits: { output_kb: 1 }",
        None,
    );
    let runner = ws.runner(Config::default());
    // 1 MiB of task: over the default 1 MiB limit once the template adds to it.
    let o = run(&runner, "echo-template", &"x".repeat(1 << 20), json!({}));
    let f = o.failure.expect("over the limit");
    assert_eq!(f.class, "OutputTooLarge", "{}", f.message);
    assert!(f.message.contains("1048576 bytes"), "{}", f.message);
    assert!(o.output.is_none());
    let o = run(&runner, "echo-template", "short", json!({}));
    assert_eq!(o.failure, None);
    assert_eq!(o.output.expect("answer").body, "Answer: short");
    // The skill's own, smaller limit holds too, through the binary.
    let skills = skills_arg(&ws);
    let task = "y".repeat(600);
    let r = ws.run_cli(&["--skills", &skills, "run", &task, "--skill", "small"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("OutputTooLarge"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout.len());
}

/// Item 17: whoever reads stdout goes away first (`skillhost runs list |
/// head -1`). The binary ends quietly with status 0, without a panic.
#[test]
fn a_closed_stdout_ends_the_binary_quietly() {
    let ws = Workspace::new();
    ws.add_skill(
        "greeter",
        "metadata:\n  skillhost:\n    template: \"Hello: {{task}}\"",
        None,
    );
    let skills = skills_arg(&ws);
    assert_eq!(
        ws.run_cli(&["--skills", &skills, "run", "first", "--skill", "greeter"])
            .code,
        0
    );
    for args in [
        vec!["runs", "list"],
        vec!["runs", "list", "--json"],
        vec!["runs", "show", "1"],
        vec!["runs", "export"],
        vec!["skills", "list"],
        vec!["skills", "prompt"],
        vec!["skills", "show", "greeter"],
        vec!["run", "again", "--skill", "greeter"],
        vec!["run", "again", "--skill", "greeter", "--json"],
        vec!["completions", "bash"],
    ] {
        // The read end is closed before the child starts, so its first
        // write fails, whatever the timing.
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_skillhost"))
            .current_dir(&ws.workspace)
            .env("SKILLHOST_HOME", &ws.home)
            .env("SKILLHOST_CACHE_DIR", harness::cache_dir())
            .env_remove("RUST_BACKTRACE")
            .arg("--skills")
            .arg(&ws.skills)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .expect("run skillhost");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}
