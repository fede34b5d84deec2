//! A newcomer's first hour (issue 14): grant commands that work as
//! printed, a mistyped `--skills` folder named, and an MCP server started
//! the way docs/mcp.md tells a desktop client to start it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use crate::harness::mcp_stdio::StdioClient;
use crate::harness::{self, Workspace};

const KV_SKILL: &str =
    "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities:\n      kv: true";

/// Writes skill `name` (the hostile guest, declaring `kv`) into `root`.
fn kv_skill(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Counts in its store.\n{KV_SKILL}\n---\n\nCounts.\n"
        ),
    )
    .expect("write SKILL.md");
    std::fs::copy(harness::guest("hostile-guest"), dir.join("handler.wasm")).expect("copy");
    dir
}

/// The command inside the first `` `skillhost skills grant ...` `` of `text`.
fn printed_grant_command(text: &str) -> String {
    let start = text
        .find("`skillhost ")
        .unwrap_or_else(|| panic!("no command printed: {text}"));
    let rest = &text[start + 1..];
    let end = rest.find('`').expect("closing backtick");
    let cmd = rest[..end].to_owned();
    assert!(cmd.contains(" skills grant "), "{cmd}");
    cmd
}

/// Runs `command` through the shell exactly as printed, with the binary
/// under test first on PATH, from `cwd`.
fn run_as_printed(ws: &Workspace, cwd: &Path, command: &str) -> harness::CliResult {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_skillhost"))
        .parent()
        .expect("bin dir")
        .to_owned();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env("PATH", path)
        .env("SKILLHOST_HOME", &ws.home)
        .env("SKILLHOST_CACHE_DIR", harness::cache_dir())
        .output()
        .expect("run sh");
    harness::CliResult::from(out)
}

/// The grant note of a skill loaded with `--skills` (from a folder with a
/// space in its name) prints a command that, run as printed, grants it;
/// after the skill changes, the stale-grant note's command renews it.
#[test]
fn grant_notes_print_commands_that_work_as_printed() {
    let ws = Workspace::new();
    let root = ws.home.parent().expect("tempdir").join("my skills");
    let skill = kv_skill(&root, "counter");
    let root_arg = root.to_string_lossy().into_owned();
    let run = |ws: &Workspace| {
        ws.run_cli(&[
            "--skills", &root_arg, "run", "kv", "--skill", "counter", "--json",
        ])
    };

    let first = run(&ws);
    assert_eq!(first.code, 1, "ungranted kv is refused: {}", first.stdout);
    let notices = first.json()["notices"].to_string();
    let cmd = printed_grant_command(&notices);
    assert!(
        cmd.contains("--skills '"),
        "the root is named, quoted: {cmd}"
    );
    let granted = run_as_printed(&ws, &ws.workspace, &cmd);
    assert_eq!(granted.code, 0, "{cmd}: {}", granted.stderr);
    assert!(
        granted
            .stdout
            .contains(&ws.workspace.join("skillhost.toml").display().to_string())
            && granted.stdout.contains("read by"),
        "names the file it wrote and who reads it: {}",
        granted.stdout
    );
    let second = run(&ws);
    assert_eq!(second.code, 0, "granted: {}", second.stderr);
    assert_eq!(second.json()["output"]["body"], "42");

    // The skill changes: its grant is stale, and the note says how to renew it.
    let md = skill.join("SKILL.md");
    let text = std::fs::read_to_string(&md).expect("read");
    std::fs::write(&md, format!("{text}\nNow with more words.\n")).expect("write");
    let stale = run(&ws);
    assert_eq!(stale.code, 1, "{}", stale.stdout);
    let notices = stale.json()["notices"].to_string();
    assert!(
        notices.contains("changed since it was granted"),
        "{notices}"
    );
    let renew = printed_grant_command(&notices);
    let renewed = run_as_printed(&ws, &ws.workspace, &renew);
    assert_eq!(renewed.code, 0, "{renew}: {}", renewed.stderr);
    let third = run(&ws);
    assert_eq!(third.code, 0, "renewed: {}", third.stderr);
}

#[test]
fn a_skills_folder_that_does_not_exist_is_an_error_naming_it() {
    let ws = Workspace::new();
    let r = ws.run_cli(&["--skills", "no-such-folder", "skills", "list"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr.contains("--skills") && r.stderr.contains("no-such-folder: no such folder"),
        "{}",
        r.stderr
    );
    let r = ws.run_cli(&["--workspace", "nowhere", "runs", "list"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr.contains("--workspace") && r.stderr.contains("nowhere"),
        "{}",
        r.stderr
    );
}

/// The server as docs/mcp.md has a desktop client start it: `skillhost mcp
/// --skills DIR`, the grant made beforehand with `skills grant --user`
/// from another folder, the environment a client gives (HOME and PATH; the
/// compiled-component cache is the one test-only addition), and a working
/// folder where the server cannot write.
///
/// Tests may run as root, where a read-only folder is still writable, so
/// the working folder is made unwritable in a way that binds root too: its
/// `.skillhost` is a regular file (and the folder is read-only as well).
#[test]
fn a_desktop_client_launch_records_runs_applies_user_grants_and_keeps_notes_out() {
    let ws = Workspace::new();
    let tmp = ws.home.parent().expect("tempdir").to_owned();
    let user_home = tmp.join("user-home");
    let skills = tmp.join("my-skills");
    let cwd = tmp.join("client-cwd");
    for d in [&user_home, &skills, &cwd] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    kv_skill(&skills, "counter");
    std::fs::write(cwd.join(".skillhost"), "not a folder").expect("write");
    let skills_arg = skills.to_string_lossy().into_owned();
    let client_env = |c: &mut Command| {
        c.env_clear()
            .env("HOME", &user_home)
            .env("PATH", "/usr/bin:/bin")
            .env("SKILLHOST_CACHE_DIR", harness::cache_dir());
    };

    // The operator grants from their own shell, somewhere else.
    let mut grant = Command::new(env!("CARGO_BIN_EXE_skillhost"));
    client_env(&mut grant);
    let grant = grant
        .current_dir(&ws.workspace)
        .args([
            "skills",
            "grant",
            "counter",
            "--skills",
            &skills_arg,
            "--user",
        ])
        .output()
        .expect("grant");
    let grant = harness::CliResult::from(grant);
    assert_eq!(grant.code, 0, "{}", grant.stderr);
    let user_file = user_home.join(".skillhost").join("skillhost.toml");
    assert!(
        grant.stdout.contains(&user_file.display().to_string()),
        "{}",
        grant.stdout
    );

    set_read_only(&cwd, true);
    let mut server = Command::new(env!("CARGO_BIN_EXE_skillhost"));
    client_env(&mut server);
    server
        .current_dir(&cwd)
        .args(["mcp", "--skills", &skills_arg])
        .stderr(Stdio::piped());
    let mut client = StdioClient::start(server);
    client.initialize();
    for id in [2u64, 3] {
        let r = client.request(
            id,
            "tools/call",
            json!({ "name": "skill_counter", "arguments": { "task": "kv" } }),
        );
        let result = &r["result"];
        assert_eq!(result["isError"], false, "the --user grant applies: {r}");
        let texts: Vec<&str> = result["content"]
            .as_array()
            .expect("content")
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect();
        assert_eq!(texts, ["42"], "the answer and nothing else: {r}");
    }
    let out = client.finish();
    set_read_only(&cwd, false);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let fallback = user_home.join(".skillhost").join("workspace");
    assert!(
        log.contains("cannot write") && log.contains(&fallback.display().to_string()),
        "the log says where runs went: {log}"
    );
    assert!(!log.contains("run not recorded"), "{log}");

    // The runs are recorded in the fallback workspace the log named.
    let mut list = Command::new(env!("CARGO_BIN_EXE_skillhost"));
    client_env(&mut list);
    let list = list
        .current_dir(&ws.workspace)
        .args([
            "--workspace",
            &fallback.to_string_lossy(),
            "runs",
            "list",
            "--json",
        ])
        .output()
        .expect("runs list");
    let list = harness::CliResult::from(list);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let runs = list.json();
    let runs = runs.as_array().expect("array");
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(
        runs.iter()
            .all(|r| r["skill"] == "counter" && r["success"] == true),
        "{runs:?}"
    );
}

fn set_read_only(dir: &Path, read_only: bool) {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = if read_only { 0o555 } else { 0o755 };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).expect("chmod");
}
