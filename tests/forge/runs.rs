//! End to end through a runner: a run becomes a skill, mining, MCP clients told of new tools.

use super::*;

/// A runner with `provider` that forges (and does not improve).
fn forging_runner(ws: &Workspace, provider: Arc<ScriptedProvider>) -> skillhost::exec::Runner {
    let mut config = Config::default();
    config.forge.improve.enabled = false;
    skillhost::exec::Runner::new(ws.paths(), config, catalog(ws)).with_provider(provider)
}

/// Runs `notes-helper` copying notes/a.md to out/a.md; waits for the
/// forging that follows.
fn copy_a(runner: &skillhost::exec::Runner) -> skillhost::exec::RunOutcome {
    let out = harness::run(
        runner,
        SKILL,
        "copy the note over",
        json!({"src": "notes/a.md", "dst": "out/a.md"}),
    );
    assert!(out.succeeded(), "{:?}", out.failure);
    assert!(runner.flush());
    out
}

#[test]
fn a_run_becomes_a_pipeline_skill_that_the_next_run_in_the_same_process_uses() {
    let ws = workspace();
    let mut turns = copy_turns("notes/a.md", "out/a.md", "Alpha note: sales grew.");
    turns.push(naming(
        "copy-note",
        "Copies a note from notes/ to out/ and reads the copy back.",
    ));
    let provider = Arc::new(ScriptedProvider::from_turns("test", turns));
    let paths = ws.paths();
    let runner = forging_runner(&ws, provider.clone());
    let rx = runner.catalog_cell().subscribe();
    let out = copy_a(&runner);
    let path = paths.forged_root().join("copy-note/SKILL.md");
    let text = std::fs::read_to_string(&path).expect("forged SKILL.md");
    let parsed = parse_skill(text.as_bytes(), "copy-note").expect("parses");
    let sh = &parsed.meta.skillhost;
    assert_eq!(sh.source.as_deref(), Some("forged"));
    assert_eq!(sh.runs, vec![out.run_id.expect("recorded")]);
    assert_eq!(sh.uses, vec!["read_file", "write_file", "read_file"]);
    assert!(sh.created_at.is_some());
    assert_eq!(sh.capabilities, caps(), "the least the steps needed");
    let steps = sh.pipeline.as_ref().expect("a pipeline")["steps"].clone();
    assert_eq!(steps[0]["args"]["path"], "{{context.src}}");
    assert_eq!(steps[1]["args"]["content"], "{{step[0].result}}");
    assert_eq!(steps[1]["args"]["path"], "{{context.dst}}");
    assert!(parsed.meta.context_fields.contains_key("src"));

    // In the catalog of the same runner, now, and announced.
    assert!(rx.has_changed().unwrap_or(false), "the swap is announced");
    let catalog = runner.catalog();
    let forged = catalog.get("copy-note").expect("in the catalog");
    assert_eq!(forged.source, Source::Forged);
    let out = harness::run(
        &runner,
        "copy-note",
        "copy it",
        json!({"src": "notes/b.md", "dst": "out/b.md"}),
    );
    assert!(out.succeeded(), "{:?}", out.failure);
    assert_eq!(out.tier, skillhost::exec::Tier::Pipeline);
    assert_eq!(
        std::fs::read_to_string(ws.workspace.join("out/b.md")).expect("written"),
        "Beta note: costs fell."
    );
    assert_eq!(provider.requests().len(), 5, "four turns and the naming");
    // `skills list` shows its source.
    let l = ws.run_cli(&["skills", "list", "--format", "json"]);
    let listed = l.json();
    let row = listed
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == "copy-note"))
        .cloned()
        .expect("listed");
    assert_eq!(row["source"], "forged");
}

#[test]
fn a_model_answer_that_is_not_a_usable_name_falls_back_to_the_task() {
    let ws = workspace();
    let mut turns = copy_turns("notes/a.md", "out/a.md", "Alpha note: sales grew.");
    turns.push(text(
        r#"{"name": "../../etc", "description": "x", "instructions": "y"}"#,
    ));
    let runner = forging_runner(&ws, Arc::new(ScriptedProvider::from_turns("test", turns)));
    copy_a(&runner);
    let writer = SkillWriter::new(&ws.paths());
    assert_eq!(writer.forged_slugs(), vec!["copy-note-over"]);
    assert!(!ws.workspace.join(".skillhost/etc").exists());
}

/// A runner whose only automatic forging is mining every `every` runs.
fn mining_runner(ws: &Workspace, every: u64) -> skillhost::exec::Runner {
    let mut config = Config::default();
    config.forge.improve.enabled = false;
    config.forge.mine.auto_every = every;
    let provider = ScriptedProvider::from_turns("test", vec![text("nothing to copy")]);
    skillhost::exec::Runner::new(ws.paths(), config, catalog(ws)).with_provider(Arc::new(provider))
}

/// One run of `notes-helper` that makes no tool call (so it forges
/// nothing itself); waits for what follows it on the writer.
fn idle_run(runner: &skillhost::exec::Runner) {
    let out = harness::run(runner, SKILL, "anything to copy?", json!({}));
    assert!(out.succeeded(), "{:?}", out.failure);
    assert!(runner.flush());
}

#[test]
fn mining_runs_by_itself_every_n_runs_and_writes_a_recurring_sequence_once() {
    let ws = workspace();
    let store = skillhost::exec::open_store(&ws.paths(), &Default::default()).expect("store");
    let seq = ["read_file", "write_file", "read_file"];
    let planted: Vec<RunRecord> = (0..5).map(|_| run_of(0, "copy a note", &seq)).collect();
    let ids = store.record_runs(&planted).expect("record");
    drop(store);
    let writer = SkillWriter::new(&ws.paths());

    // Off: six runs stored, no pass.
    idle_run(&mining_runner(&ws, 0));
    assert!(writer.forged_slugs().is_empty());

    // Every 7 runs: the seventh crosses it.
    let runner = mining_runner(&ws, 7);
    let rx = runner.catalog_cell().subscribe();
    idle_run(&runner);
    let slugs = writer.forged_slugs();
    assert_eq!(slugs.len(), 1, "{slugs:?}");
    let text = std::fs::read_to_string(writer.forged_root().join(&slugs[0]).join("SKILL.md"))
        .expect("forged");
    let parsed = parse_skill(text.as_bytes(), &slugs[0]).expect("parses");
    assert_eq!(parsed.meta.skillhost.uses, seq);
    assert_eq!(
        parsed.meta.skillhost.runs, ids,
        "cites every supporting run"
    );
    assert!(
        rx.has_changed().unwrap_or(false),
        "the new catalog is announced"
    );
    assert!(runner.catalog().get(&slugs[0]).is_some());

    // The next pass finds the same sequence: a near-duplicate, not a second skill.
    drop(runner);
    idle_run(&mining_runner(&ws, 1));
    assert_eq!(writer.forged_slugs(), slugs);
}

#[test]
fn mcp_clients_hear_tools_list_changed_when_a_skill_is_forged() {
    use std::io::{BufRead, BufReader, Write};
    let ws = workspace();
    // A template makes it an MCP tool; with a model configured it runs
    // the model loop.
    let md = skill_md(&ws);
    let text = std::fs::read_to_string(&md).expect("read");
    let text = text.replace(
        "  skillhost:\n",
        "  skillhost:\n    template: \"{{task}}\"\n",
    );
    std::fs::write(&md, text).expect("write");
    write_script(
        &ws,
        "script.json",
        "copy-note",
        "Copies a note and reads it back.",
        "notes/a.md",
        "out/a.md",
    );
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[model]\nprovider = \"scripted\"\nscript = \"script.json\"\n[forge.improve]\nenabled = false\n",
    )
    .expect("config");
    let mut child = ws
        .cli()
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line)
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });
    let mut send = move |v: Value| {
        writeln!(stdin, "{v}").expect("send");
        stdin.flush().expect("flush");
    };
    // A guard against a hang, not a measurement.
    let next = || {
        rx.recv_timeout(std::time::Duration::from_secs(120))
            .expect("a message from the server")
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "forge-test", "version": "1"}}}),
    );
    let init = next();
    assert_eq!(
        init["result"]["capabilities"]["tools"]["listChanged"], true,
        "{init}"
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "skill_notes-helper",
        "arguments": {"task": "copy the note over", "src": "notes/a.md", "dst": "out/a.md"}}}),
    );
    let (mut answered, mut changed) = (false, false);
    while !(answered && changed) {
        let m = next();
        if m["id"] == 2 {
            assert_eq!(m["result"]["isError"], false, "{m}");
            answered = true;
        } else if m["method"] == "notifications/tools/list_changed" {
            changed = true;
        }
    }
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}));
    let list = loop {
        let m = next();
        if m["id"] == 3 {
            break m;
        }
    };
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"skill_copy-note"), "{names:?}");
    drop(send); // closes stdin: the server ends
    let _ = child.wait();
}
