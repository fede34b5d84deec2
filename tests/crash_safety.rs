//! `kill -9` in the middle of writes: runs being recorded (an MCP server
//! under calls), a `rules.json` update (`rules disable|enable`), a grant
//! written to `skillhost.toml` (`skills grant|revoke`). After each kill
//! every file parses, the store opens, no run whose answer a client got is
//! lost, and the next command works without repair. (The forge's writer
//! has its own: `forge::processes::kill_9_in_the_middle_of_improvement_writes...`.)
//!
//! Kills per test: `SKILLHOST_TEST_KILLS` (5 by default; the full check is
//! `SKILLHOST_TEST_KILLS=100 cargo test -p skillhost --test integration
//! crash_safety::`). The moments of the kills spread over the command's
//! lifetime (measured on an unkilled run first) by a low-discrepancy
//! sequence, so that a few kills still land early, midway and late.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillhost::store::RunLog;

use crate::harness::mcp_http::{McpHttpServer, McpSession};
use crate::harness::{Workspace, guest};

fn kills() -> usize {
    std::env::var("SKILLHOST_TEST_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

/// The `i`-th moment in `[0, lifetime)`: the golden-ratio sequence, which
/// covers the interval evenly for any count.
fn moment(i: usize, lifetime: Duration) -> Duration {
    let frac = ((i as f64 + 1.0) * 0.618_033_988_75).fract();
    lifetime.mul_f64(frac)
}

/// Spawns `cmd` and kills it (SIGKILL) after `after`, or lets it end
/// first. Returns whether it ended on its own with success.
fn kill_after(mut cmd: Command, after: Duration) -> bool {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn skillhost");
    let started = Instant::now();
    while started.elapsed() < after {
        if let Some(status) = child.try_wait().expect("wait") {
            return status.success();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// How long `args` takes to run to its end.
fn lifetime(ws: &Workspace, args: &[&str]) -> Duration {
    let started = Instant::now();
    let r = ws.run_cli(args);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    started.elapsed()
}

fn hostile_workspace() -> Workspace {
    let ws = Workspace::new();
    ws.add_skill(
        "hostile",
        "metadata:\n  skillhost:\n    handler: handler.wasm\n    limits: { timeout_ms: 1000 }",
        Some(&guest("hostile-guest")),
    );
    ws
}

/// The store opens (journals of ended processes replayed, as the next
/// host does) and holds this many runs.
fn stored_runs(ws: &Workspace) -> u64 {
    let state = ws.workspace.join(".skillhost");
    let store = skillhost::store::SqliteStore::open_in(&state).expect("the store opens");
    skillhost::store::journal::replay(&state.join("journal"), &store).expect("journals replay");
    store.run_count().expect("count")
}

/// Every file the host keeps in the workspace parses: the configuration,
/// rules, journal lines but a last one cut short.
fn every_file_parses(ws: &Workspace) {
    skillhost::config::Config::load(&ws.paths()).expect("skillhost.toml parses");
    let rules = ws.workspace.join(".skillhost/learning/rules.json");
    if let Ok(text) = std::fs::read_to_string(&rules) {
        serde_json::from_str::<Value>(&text)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}\n{text}", rules.display()));
    }
    let journal = ws.workspace.join(".skillhost/journal");
    for entry in std::fs::read_dir(&journal).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("read journal");
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            // Only the last line may be cut short by the kill.
            if n + 1 < lines.len() {
                serde_json::from_str::<Value>(line)
                    .unwrap_or_else(|e| panic!("{} line {}: {e}", entry.path().display(), n + 1));
            }
        }
    }
}

#[test]
fn kill_9_while_an_mcp_server_records_runs_loses_no_answered_run() {
    let ws = hostile_workspace();
    let skills = ws.skills.display().to_string();
    let answered = Arc::new(AtomicUsize::new(0));
    let rt = crate::harness::runtime();
    let kills = kills();
    for i in 0..kills {
        let server = McpHttpServer::start(&ws, &["--skills", &skills]);
        let url = server.url.clone();
        let clients: Vec<_> = (0..4)
            .map(|c| {
                let (url, answered) = (url.clone(), answered.clone());
                rt.spawn(async move {
                    let session = McpSession::open(&url).await;
                    for k in 0u64.. {
                        let msg = json!({
                            "jsonrpc": "2.0", "id": k, "method": "tools/call",
                            "params": { "name": "skill_hostile", "arguments": { "task": "ok" } }
                        });
                        let resp = match tokio::time::timeout(
                            Duration::from_secs(30),
                            session.try_post_raw(&msg),
                        )
                        .await
                        {
                            Ok(Ok(r)) => r,
                            // The server is gone.
                            _ => return,
                        };
                        let Ok(body) = resp.text().await else { return };
                        if body.contains("\"fine\"") {
                            answered.fetch_add(1, Ordering::SeqCst);
                        } else if body.contains("\"error\"") || body.contains("\"isError\":true") {
                            panic!("client {c}: unexpected answer {body}");
                        }
                        // Anything else: cut short by the kill.
                    }
                })
            })
            .collect();
        // Runs are being answered and recorded; kill somewhere in the
        // next half second.
        let before = answered.load(Ordering::SeqCst);
        while answered.load(Ordering::SeqCst) == before {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(moment(i, Duration::from_millis(500)));
        drop(server); // SIGKILL
        for c in clients {
            rt.block_on(c).expect("client");
        }
        every_file_parses(&ws);
    }
    let answered = answered.load(Ordering::SeqCst) as u64;
    eprintln!("{kills} kills, {answered} calls answered");
    // The next command works, and its run is recorded beside the others.
    let next = ws.run_cli(&["--skills", &skills, "run", "ok", "--skill", "hostile"]);
    assert_eq!(next.code, 0, "{}", next.stderr);
    let stored = stored_runs(&ws);
    // A run killed after recording but before its answer may be there too.
    assert!(
        stored > answered,
        "{answered} calls answered (+1 command) but {stored} runs stored"
    );
    every_file_parses(&ws);
}

/// The rule's `enabled`, read through the CLI (which must work).
fn rule_enabled(ws: &Workspace) -> bool {
    let r = ws.run_cli(&["rules", "list", "--json"]);
    assert_eq!(r.code, 0, "rules list: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).expect("rules list --json");
    v["rules"][0]["enabled"]
        .as_bool()
        .expect("the rule is there")
}

#[test]
fn kill_9_in_a_rules_json_update_leaves_the_old_or_the_new_rules() {
    let ws = Workspace::new();
    ws.write_harmful_summarizer_rule();
    let id = "prevent-bad-text-summarizer";
    let life = lifetime(&ws, &["rules", "disable", id]);
    lifetime(&ws, &["rules", "enable", id]);
    for i in 0..kills() {
        let before = rule_enabled(&ws);
        let verb = if before { "disable" } else { "enable" };
        let mut cmd = ws.cli();
        cmd.args(["rules", verb, id]);
        let finished = kill_after(cmd, moment(i, life));
        every_file_parses(&ws);
        let after = rule_enabled(&ws);
        if finished {
            assert_eq!(after, !before, "kill {i}: the finished {verb} holds");
        }
        // Killed: the old state or the new, both parse (checked above).
    }
    // The next update works.
    let verb = if rule_enabled(&ws) {
        "disable"
    } else {
        "enable"
    };
    let r = ws.run_cli(&["rules", verb, id]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(stored_runs(&ws), 0, "and the store opens");
}

/// Whether `skillhost.toml` grants `hostile` anything (it must parse).
fn granted(ws: &Workspace) -> bool {
    let config = skillhost::config::Config::load(&ws.paths()).expect("skillhost.toml parses");
    config.grants.contains_key("hostile")
}

#[test]
fn kill_9_in_a_grant_write_leaves_a_parsing_skillhost_toml() {
    let ws = hostile_workspace();
    // Something of the operator's own that no grant write may lose.
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[agent]\nmax_steps = 7\n",
    )
    .expect("config");
    let skills = ws.skills.display().to_string();
    let grant = [
        "--skills",
        skills.as_str(),
        "skills",
        "grant",
        "hostile",
        "--kv",
    ];
    let revoke = ["--skills", skills.as_str(), "skills", "revoke", "hostile"];
    let life = lifetime(&ws, &grant);
    lifetime(&ws, &revoke);
    for i in 0..kills() {
        let before = granted(&ws);
        let mut cmd = ws.cli();
        cmd.args(if before { &revoke[..] } else { &grant[..] });
        let finished = kill_after(cmd, moment(i, life));
        every_file_parses(&ws);
        let after = granted(&ws);
        if finished {
            assert_eq!(after, !before, "kill {i}: the finished write holds");
        }
        let config = skillhost::config::Config::load(&ws.paths()).expect("parses");
        assert_eq!(
            config.agent.max_steps, 7,
            "kill {i}: the operator's setting kept"
        );
    }
    let r = ws.run_cli(if granted(&ws) {
        &revoke[..]
    } else {
        &grant[..]
    });
    assert_eq!(r.code, 0, "{}", r.stderr);
    every_file_parses(&ws);
}

/// Keeps `dir` out of the way of a failed assertion: unmounted on drop.
struct Mounted<'a>(&'a Path);

impl Drop for Mounted<'_> {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0).status();
    }
}

/// Mounts a tmpfs of `size` on `dir`; `None` (with the reason printed)
/// where this process may not mount (not root, no `mount`).
fn mount_tmpfs<'a>(dir: &'a Path, size: &str) -> Option<Mounted<'a>> {
    let out = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(dir)
        .output();
    let why = match out {
        Ok(o) if o.status.success() => return Some(Mounted(dir)),
        Ok(o) => format!(
            "cannot mount a tmpfs on {} (needs root): {}",
            dir.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("cannot run mount: {e}"),
    };
    // CI runs as root: there a skip would hide a fault test that never ran.
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("SKIPPED: {why}");
    None
}

/// Fills the file system of `dir` to the last byte.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).expect("filler");
    let block = vec![0u8; 64 << 10];
    while f.write_all(&block).is_ok() {}
    let small = [0u8; 512];
    while f.write_all(&small).is_ok() {}
    while f.write_all(&[0u8]).is_ok() {}
    let _ = f.flush();
}

/// What a command says when the disk is full or read-only: it fails with
/// an error that names the path inside `root` it could not write, or it
/// succeeds and says what it could not do, naming the path (a run is
/// answered, with a note that it was not recorded); it never crashes.
fn fails_naming_a_path_or_degrades(r: &crate::harness::CliResult, root: &Path, what: &str) {
    assert!(
        r.code == 0 || r.code == 1,
        "{what}: exit {} (a crash?): {}",
        r.code,
        r.stderr
    );
    assert!(
        r.stderr.contains(&*root.to_string_lossy()),
        "{what}: the error or note must name the path under {}: {}",
        root.display(),
        r.stderr
    );
}

/// The commands that write: a recorded run, a grant, a rules update.
fn writing_commands(skills: &str) -> Vec<(&'static str, Vec<String>)> {
    let s = skills.to_owned();
    vec![
        (
            "run",
            vec![
                "--skills".into(),
                s.clone(),
                "run".into(),
                "ok".into(),
                "--skill".into(),
                "hostile".into(),
            ],
        ),
        (
            "grant",
            vec![
                "--skills".into(),
                s.clone(),
                "skills".into(),
                "grant".into(),
                "hostile".into(),
                "--kv".into(),
            ],
        ),
        (
            "rules disable",
            vec![
                "rules".into(),
                "disable".into(),
                "prevent-bad-text-summarizer".into(),
            ],
        ),
    ]
}

#[test]
fn a_full_disk_fails_each_write_naming_the_path_and_corrupts_nothing() {
    let ws = hostile_workspace();
    let Some(_ws_mount) = mount_tmpfs(&ws.workspace, "4m") else {
        return;
    };
    let skills = ws.skills.display().to_string();
    ws.write_harmful_summarizer_rule();
    // Some state to keep: three recorded runs.
    for _ in 0..3 {
        let r = ws.run_cli(&["--skills", &skills, "run", "ok", "--skill", "hostile"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let runs = stored_runs(&ws);
    assert_eq!(runs, 3);
    fill(&ws.workspace);
    for (what, args) in writing_commands(&skills) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = ws.run_cli(&args);
        fails_naming_a_path_or_degrades(&r, &ws.workspace, what);
    }
    // Room again: nothing stored was damaged, and commands work.
    std::fs::remove_file(ws.workspace.join("filler")).expect("free the disk");
    every_file_parses(&ws);
    assert!(stored_runs(&ws) >= runs, "no stored run lost");
    let r = ws.run_cli(&["--skills", &skills, "run", "ok", "--skill", "hostile"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn a_read_only_workspace_fails_each_write_naming_the_path() {
    let ws = hostile_workspace();
    let Some(_ws_mount) = mount_tmpfs(&ws.workspace, "16m") else {
        return;
    };
    let skills = ws.skills.display().to_string();
    ws.write_harmful_summarizer_rule();
    let r = ws.run_cli(&["--skills", &skills, "run", "ok", "--skill", "hostile"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let remount = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&ws.workspace)
        .status()
        .expect("mount");
    assert!(remount.success(), "remount read-only");
    for (what, args) in writing_commands(&skills) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = ws.run_cli(&args);
        fails_naming_a_path_or_degrades(&r, &ws.workspace, what);
    }
    every_file_parses(&ws);
}
