//! Peak resident memory of the host process while one hostile call floods
//! what it can make the host hold (issue 9's floods), against the same
//! process answering a trivial call, measured in the same run. Each flood
//! must stay within the per-call budget: the guest's memory limit plus the
//! host allowance (`[limits] memory_mb` + `host_mb`, 64 + 32 MiB by
//! default). Prints `RATIO flood-rss: ...` lines.
//!
//! Run: `cargo bench -p skillhost --bench flood_rss` (release profile).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

#[path = "../../tests/harness/mod.rs"]
mod harness;

use std::process::Stdio;

const FRONT: &str = "metadata:
  skillhost:
    handler: handler.wasm
    capabilities:
      files: { read: [data], write: [out] }
      kv: true";

/// Runs `skillhost run ACTION` to the end; its peak RSS in KiB.
// The child is reaped by `wait4`, which also reports its peak RSS.
#[allow(clippy::zombie_processes)]
fn peak_rss_kib(ws: &harness::Workspace, action: &str, context: &[&str]) -> i64 {
    let mut cmd = ws.cli();
    cmd.args(["run", action, "--skill", "hostile", "--json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for c in context {
        cmd.args(["-c", c]);
    }
    let child = cmd.spawn().expect("spawn skillhost");
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; the pointers are
    // to live locals.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    usage.ru_maxrss
}

/// The hostile skill as a workspace skill (trusted with what it
/// declares, no grant needed), with a file to read and a folder to write.
fn add_hostile_skill(ws: &harness::Workspace) -> std::path::PathBuf {
    let root = ws.workspace.join(".agents/skills");
    std::fs::create_dir_all(&root).expect("mkdir");
    let dir = root.join("hostile");
    std::fs::create_dir_all(dir.join("data")).expect("mkdir");
    std::fs::create_dir_all(dir.join("out")).expect("mkdir");
    std::fs::write(dir.join("data/ok.txt"), "inside").expect("write");
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: hostile\ndescription: Floods.\n{FRONT}\n---\n\nFloods.\n"),
    )
    .expect("write SKILL.md");
    std::fs::copy(harness::guest("hostile-guest"), dir.join("handler.wasm")).expect("copy");
    dir
}

fn main() {
    let ws = harness::Workspace::new();
    let dir = add_hostile_skill(&ws);
    // Compile once, so every measured run loads from the cache.
    peak_rss_kib(&ws, "ok", &[]);

    let budget_mib = 64.0 + 32.0;
    let baseline = (0..3)
        .map(|_| peak_rss_kib(&ws, "ok", &[]))
        .max()
        .unwrap_or(0);
    println!(
        "RATIO flood-rss: baseline (an ok call) peak RSS {:.1} MiB; per-call budget {budget_mib} MiB",
        baseline as f64 / 1024.0
    );
    let floods: &[(&str, &[&str])] = &[
        ("deny-flood", &["n=3000000"]),
        ("fields-flood", &[]),
        ("path-flood", &[]),
        ("big-content-type", &["mb=40"]),
        ("big-flags", &["mb=40"]),
        ("big-failure-message", &["mb=40"]),
        ("big-failure-class", &["mb=40"]),
        ("kv-flood", &["max_mb=200"]),
        ("open-files", &["target=data/ok.txt"]),
        ("write-flood", &["target=out"]),
    ];
    for (action, context) in floods {
        let peak = peak_rss_kib(&ws, action, context);
        let over = (peak - baseline) as f64 / 1024.0;
        println!(
            "RATIO flood-rss: {action}: peak RSS {:.1} MiB, {over:.1} MiB over the ok call = {:.2}x the per-call budget",
            peak as f64 / 1024.0,
            over / budget_mib
        );
        let _ = std::fs::remove_dir_all(dir.join("out"));
        std::fs::create_dir_all(dir.join("out")).expect("mkdir");
    }
}
