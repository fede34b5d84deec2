//! The compiler led to host files and secrets shows them to no one; no box, no build.

use super::*;
use crate::support::model_server::ModelServer;

// Issue 30, finding 1: the compiler reads host files and hands them to the
// model. A `macro_rules!` taking `path`, a file and a module name
// (`#[$a = $f] mod $n;`) made rustc read any file the operator could, and
// its error quoted the file into the build log, the model's next prompt
// and the operator's terminal.

/// The trick of the finding: each `read!` makes rustc read a file as a
/// module of the handler.
fn path_trick(files: &[&str]) -> String {
    let mut src = String::from(
        "macro_rules! read { ($a:ident, $f:literal, $n:ident) => { #[$a = $f] mod $n; } }\n",
    );
    for (i, f) in files.iter().enumerate() {
        src.push_str(&format!("read!(path, \"{f}\", m{i});\n"));
    }
    src + GOOD_RUST
}

/// Every file under `dir` whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    snapshot(dir)
        .into_iter()
        .filter(|(_, bytes)| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        .map(|(p, _)| p)
        .collect()
}

/// Builds `source` as the forge would, but without the source check (as
/// if the check had missed a spelling), `build_box` as given. Returns the
/// error's text and `build.log`.
fn build_unchecked(
    ws: &Workspace,
    source: &str,
    build_box: skillhost::forge::buildbox::BuildBox,
) -> (String, String) {
    use skillhost::forge::handler::{self as forge_handler, BuildSettings};
    let mut config = config().forge.handler;
    config.build_box = build_box;
    let settings = BuildSettings::new(&config, &harness::cache_dir());
    let slot = ws
        .workspace
        .join(".skillhost/quarantine/unchecked")
        .join(build_box.name());
    std::fs::create_dir_all(&slot).expect("mkdir");
    forge_handler::write_project(&slot, source, HandlerLang::Rust, &settings).expect("project");
    let err = match forge_handler::build(&slot, HandlerLang::Rust, &settings) {
        Ok(_) => panic!("it built"),
        Err(e) => e,
    };
    assert!(
        matches!(err, forge_handler::BuildError::Failed { .. }),
        "a build failure, not {err:?}"
    );
    let log = std::fs::read_to_string(slot.join("build.log")).expect("build.log");
    (err.to_string(), log)
}

/// A process of the operator's with a secret in its environment, which
/// rustc could read as `/proc/PID/environ` (same user).
struct SecretHolder(std::process::Child);

impl SecretHolder {
    fn start(marker: &str) -> SecretHolder {
        SecretHolder(
            std::process::Command::new("sleep")
                .arg("120")
                .env("SKILLHOST_OPERATOR_SECRET", marker)
                .spawn()
                .expect("run sleep"),
        )
    }
}

impl Drop for SecretHolder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_path_trick_reads_nothing_of_the_host_even_past_the_source_check() {
    use skillhost::forge::buildbox::{BuildBox, WITHHELD};
    use skillhost::forge::handler::check_source;
    let (ws, _) = workspace();
    let marker = format!("PLANTED_SECRET_{}_{}", std::process::id(), line!());
    // Outside everything the forge uses: beside the workspace.
    let secret = ws.home.join("credentials");
    std::fs::write(&secret, format!("{marker} = 1\n")).expect("plant");
    let holder = SecretHolder::start(&marker);
    let source = path_trick(&[
        &secret.display().to_string(),
        "/proc/self/environ",
        &format!("/proc/{}/environ", holder.0.id()),
    ]);
    // The cheap filter refuses it...
    assert!(check_source(&source, HandlerLang::Rust).is_err());

    // ...but nothing relies on it. In the box the files are not there:
    // rustc says it cannot read the first, about the handler's own line.
    let (err, log) = build_unchecked(&ws, &source, BuildBox::Bwrap);
    for text in [&err, &log] {
        assert!(!text.contains(&marker), "the secret leaked:\n{text}");
        assert!(!text.contains("SKILLHOST_OPERATOR_SECRET"), "{text}");
    }
    assert!(
        log.contains(&format!("couldn't read `{}`", secret.display())),
        "{log}"
    );
    assert!(log.contains("--> src/lib.rs"), "{log}");

    // Unboxed (the operator's unsafe choice), rustc does read them; what
    // it says about them is withheld, in the log as in the error.
    let (err, log) = build_unchecked(&ws, &source, BuildBox::None);
    for text in [&err, &log] {
        assert!(!text.contains(&marker), "the secret leaked:\n{text}");
        assert!(!text.contains("SKILLHOST_OPERATOR_SECRET"), "{text}");
    }
    assert!(log.contains(WITHHELD), "the read was withheld: {log}");
    drop(holder);
}

/// The finding end to end, through the real binary: a model answers with
/// the path trick aimed at a planted file, at the skillhost process's own
/// environment (which holds a secret) and at another process's, then with
/// a handler that builds (in the box). The secret is nowhere: not on the
/// terminal, not in what the model was sent, not in the slot's build log
/// or gate report, not anywhere under the workspace.
#[test]
fn the_cli_never_shows_the_model_or_the_operator_a_host_secret() {
    let (ws, _) = workspace();
    let marker = format!("CLI_SECRET_{}_{}", std::process::id(), line!());
    let secret = ws.home.join("planted-credentials");
    std::fs::write(&secret, format!("{marker} = 1\n")).expect("plant");
    let holder = SecretHolder::start(&marker);
    let skillhost_pid = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let trick = {
        let (secret, other, pid) = (
            secret.display().to_string(),
            holder.0.id(),
            skillhost_pid.clone(),
        );
        move || {
            let own = format!(
                "/proc/{}/environ",
                pid.load(std::sync::atomic::Ordering::SeqCst)
            );
            let source = path_trick(&[
                &secret,
                "/proc/self/environ",
                &own,
                &format!("/proc/{other}/environ"),
            ]);
            format!("Here it is.\n\n```rust\n{source}```\n")
        }
    };
    let good = || format!("```rust\n{GOOD_RUST}```\n");
    let server = ModelServer::start(vec![Box::new(trick), Box::new(good)]);
    let mut cmd = ws.cli();
    cmd.args([
        "forge",
        "handler",
        SKILL,
        "--model",
        "openai:test-model",
        "--base-url",
        &server.base,
        "--api-key-env",
        "SKILLHOST_TEST_MODEL_KEY",
    ])
    .env("SKILLHOST_TEST_MODEL_KEY", "sk-not-a-secret")
    .env("SKILLHOST_OPERATOR_SECRET", &marker)
    .env("RUST_LOG", "debug")
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("run skillhost");
    skillhost_pid.store(child.id(), std::sync::atomic::Ordering::SeqCst);
    let out = harness::CliResult::from(child.wait_with_output().expect("wait"));
    let bodies = server.bodies();
    assert_eq!(
        bodies.len(),
        2,
        "two attempts: {}\n{}",
        out.stdout,
        out.stderr
    );
    // The trick was asked for with the skillhost process's own pid.
    assert!(
        out.stdout.contains("attempt 1: refused before building"),
        "{}",
        out.stdout
    );
    for (what, text) in [
        ("stdout", &out.stdout),
        ("stderr", &out.stderr),
        ("the second request (the feedback)", &bodies[1]),
    ] {
        assert!(
            !text.contains(&marker),
            "the secret reached {what}:\n{text}"
        );
        assert!(
            !text.contains("SKILLHOST_OPERATOR_SECRET"),
            "the environment reached {what}:\n{text}"
        );
    }
    for body in &bodies {
        assert!(!body.contains(&marker), "the model was sent the secret");
    }
    assert_eq!(
        files_holding(&ws.workspace, &marker),
        Vec::<PathBuf>::new(),
        "a file of the workspace (build.log, gate report, store) holds the secret"
    );
    // The second attempt was built, in the box, and gated.
    let slot = out
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("slot: "))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("a slot: {}", out.stdout));
    assert!(slot.join("build.log").is_file());
    assert!(slot.join("gate-report.json").is_file(), "{}", out.stdout);
    drop(holder);
}

/// Without bubblewrap the forge builds nothing (fail closed) and says what
/// installs it; `build_box = "none"` in the user's own file is the
/// operator's explicit way out, and it warns; in a workspace file it is
/// refused.
#[test]
fn without_bubblewrap_the_build_fails_closed() {
    let (ws, _) = workspace();
    let script = ws.workspace.join("author.json");
    let turns = json!([{"text": format!("```rust\n{GOOD_RUST}```\n")}]);
    std::fs::write(&script, turns.to_string()).expect("write script");
    let model = format!("scripted:{}", script.display());
    // A PATH with cargo and rustc but no bwrap; the system folders are
    // searched too, so hide them by pointing at a bwrap that cannot start
    // a box: a PATH entry whose `bwrap` fails.
    let fake = ws.workspace.join("fake-bin");
    std::fs::create_dir_all(&fake).expect("mkdir");
    let bwrap = fake.join("bwrap");
    std::fs::write(
        &bwrap,
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
    )
    .expect("write");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = std::env::join_paths(std::iter::once(fake.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let out = harness::CliResult::from(
        ws.cli()
            .args(["forge", "handler", SKILL, "--model", &model])
            .env("PATH", &path)
            .output()
            .expect("run"),
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("bubblewrap (bwrap) is not available")
            && out.stderr.contains("could not start the build's box")
            && out
                .stderr
                .contains("No permissions to create new namespace"),
        "{}",
        out.stderr
    );
    let handler = ws
        .workspace
        .join(".agents/skills")
        .join(SKILL)
        .join("handler.wasm");
    assert!(!handler.exists());
    let quarantine = ws.workspace.join(".skillhost/quarantine");
    if quarantine.exists() {
        assert!(
            snapshot(&quarantine)
                .iter()
                .all(|(p, _)| p.file_name() != Some(std::ffi::OsStr::new("handler.wasm"))),
            "nothing was built"
        );
    }
    // Issue 39, finding 11: a workspace's skillhost.toml, which comes with
    // a cloned repository, unboxed the build. It is refused, naming the
    // file and where the operator may choose it; nothing is built.
    let unbox = "[forge.handler]\nbuild_box = \"none\"\n";
    std::fs::write(ws.workspace.join("skillhost.toml"), unbox).expect("config");
    let out = harness::CliResult::from(
        ws.cli()
            .args(["forge", "handler", SKILL, "--model", &model])
            .env("PATH", &path)
            .output()
            .expect("run"),
    );
    assert_ne!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("build_box = \"none\" is refused in a workspace's skillhost.toml")
            && out
                .stderr
                .contains(&ws.home.join("skillhost.toml").display().to_string()),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("  slot: "), "{}", out.stdout);
    std::fs::remove_file(ws.workspace.join("skillhost.toml")).expect("rm");
    // The operator's explicit choice, in the user's own file: unboxed, with
    // a warning each build.
    std::fs::write(ws.home.join("skillhost.toml"), unbox).expect("config");
    let out = harness::CliResult::from(
        ws.cli()
            .args(["forge", "handler", SKILL, "--model", &model])
            .env("PATH", &path)
            .output()
            .expect("run"),
    );
    assert!(
        out.stderr
            .contains("warning: building a model's rust handler without a box"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stdout.contains("  slot: "),
        "it was built: {}",
        out.stdout
    );
}
