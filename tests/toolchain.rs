//! `skillhost doctor`, `skillhost toolchain install` and the errors of
//! `skillhost handler build` on a machine that lacks the tools: each names
//! the exact command that installs what is missing. (Building and running
//! each language's scaffold is in `examples`.)

use crate::harness::{CliResult, Workspace};

use std::path::Path;
use std::process::Command;

/// The real binary with nothing to find: an empty PATH, no checkout tools,
/// a wasi-libc sysroot that does not exist.
fn bare(ws: &Workspace, empty: &Path) -> Command {
    let mut cmd = ws.cli();
    cmd.env("PATH", empty)
        .env("SKILLHOST_EXAMPLE_TOOLS", "")
        .env("WASI_SYSROOT", empty.join("no-sysroot"))
        .env_remove("CC_WASM");
    cmd
}

fn sudo() -> &'static str {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        ""
    } else {
        "sudo "
    }
}

#[test]
fn doctor_on_a_machine_without_toolchains_names_each_install_command() {
    let ws = Workspace::new();
    let empty = ws.workspace.join("empty-path");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let out = CliResult::from(bare(&ws, &empty).arg("doctor").output().expect("run"));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let sudo = sudo();
    for line in [
        "Rust: missing tools".to_owned(),
        "  MISSING  cargo".to_owned(),
        "  install: curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --target wasm32-wasip2".to_owned(),
        "JavaScript: missing tools".to_owned(),
        "  MISSING  componentize-js".to_owned(),
        format!("  install: {sudo}apt-get install -y nodejs npm && skillhost toolchain install js"),
        "Python: missing tools".to_owned(),
        format!("  install: {sudo}apt-get install -y python3 python3-venv && skillhost toolchain install python"),
        "C: missing tools".to_owned(),
        "  MISSING  wasi-libc".to_owned(),
        format!("  install: {sudo}apt-get install -y clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc"),
    ] {
        assert!(out.stdout.lines().any(|l| l == line), "no line {line:?} in:\n{}", out.stdout);
    }
    // One language: exits 1 when it is not ready; --json carries the command.
    let c = CliResult::from(
        bare(&ws, &empty)
            .args(["doctor", "c", "--json"])
            .output()
            .expect("run"),
    );
    assert_eq!(c.code, 1, "{}{}", c.stdout, c.stderr);
    let v = c.json();
    assert_eq!(v[0]["lang"], "c");
    assert_eq!(
        v[0]["install"],
        format!("{sudo}apt-get install -y clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc")
    );
}

/// With python3 present but no componentize-py anywhere, the one command
/// is skillhost's own install into $SKILLHOST_HOME/tools (a venv: Debian's
/// Python refuses a bare `pip install`), and a Python build says so.
#[test]
fn a_python_build_without_componentize_py_names_the_install_command() {
    let ws = Workspace::new();
    let bin = ws.workspace.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let python = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("python3"))
        .find(|p| p.is_file());
    let Some(python) = python else {
        panic!("python3 is not installed (.ci/install-example-toolchains.sh needs it too)");
    };
    std::os::unix::fs::symlink(&python, bin.join("python3")).expect("symlink");
    let new = ws.run_cli(&[
        "handler",
        "new",
        "hello-py",
        "--lang",
        "python",
        "--dir",
        &ws.skills.display().to_string(),
    ]);
    assert_eq!(new.code, 0, "{}", new.stderr);
    let doctor = CliResult::from(
        bare(&ws, &bin)
            .args(["doctor", "python"])
            .output()
            .expect("run"),
    );
    assert_eq!(doctor.code, 1, "{}", doctor.stdout);
    assert!(
        doctor.stdout.contains("  MISSING  componentize-py\n"),
        "{}",
        doctor.stdout
    );
    assert!(
        doctor
            .stdout
            .contains("  install: skillhost toolchain install python\n")
            || doctor.stdout.contains(
                "apt-get install -y python3-venv && skillhost toolchain install python\n"
            ),
        "{}",
        doctor.stdout
    );
    let folder = ws.skills.join("hello-py");
    let build = CliResult::from(
        bare(&ws, &bin)
            .args(["handler", "build"])
            .arg(&folder)
            .output()
            .expect("run"),
    );
    assert_eq!(build.code, 1, "{}{}", build.stdout, build.stderr);
    assert!(
        build
            .stderr
            .contains("componentize-py is not installed (looked in ")
            && build.stderr.contains("skillhost toolchain install python"),
        "{}",
        build.stderr
    );
    assert!(
        !folder.join("handler.wasm").exists(),
        "no component from a failed build"
    );
    assert!(
        !folder.join("handler.wasm.partial").exists(),
        "nothing half-written is left"
    );
}

#[test]
fn handler_build_refuses_a_folder_it_cannot_build() {
    let ws = Workspace::new();
    let notes = ws.skills.join("notes");
    std::fs::create_dir_all(&notes).expect("mkdir");
    std::fs::write(notes.join("README.md"), "just notes").expect("write");
    let out = ws.run_cli(&["handler", "build", &notes.display().to_string()]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("cannot tell the handler's language"),
        "{}",
        out.stderr
    );

    // A C file but no SKILL.md: nowhere to put the component.
    std::fs::write(notes.join("handler.c"), "int x;").expect("write");
    let out = ws.run_cli(&["handler", "build", &notes.display().to_string()]);
    assert!(out.stderr.contains("has no SKILL.md"), "{}", out.stderr);

    // A handler path that leaves the folder is refused before any build.
    std::fs::write(
        notes.join("SKILL.md"),
        "---\nname: notes\ndescription: d\nmetadata:\n  skillhost:\n    handler: ../escape.wasm\n---\n",
    )
    .expect("write");
    let out = ws.run_cli(&["handler", "build", &notes.display().to_string()]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("must be a relative path inside the skill folder"),
        "{}",
        out.stderr
    );
    assert!(!ws.skills.join("escape.wasm").exists());

    let out = ws.run_cli(&["handler", "build", "/no/such/folder"]);
    assert!(
        out.stderr.contains("does not exist or is not a folder"),
        "{}",
        out.stderr
    );
}
