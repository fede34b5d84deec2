//! A hostile handler, built from source in `tests/guests/hostile`, attacks
//! its sandbox. Every attack must be refused or stopped with a clear,
//! classified failure, and a normal call right after must succeed.

use crate::harness;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use harness::{Workspace, guest, run};
use serde_json::json;
use skillhost::config::Config;
use skillhost::exec::{RunOutcome, Runner};

const HOSTILE_FRONT: &str = r#"metadata:
  skillhost:
    handler: handler.wasm
    capabilities:
      files: { read: [data] }
      http: ["127.0.0.1", "[::1]", "169.254.169.254", "10.0.0.1", "localhost", "2130706433", "0177.0.0.1"]
      tools: [web_search]
      kv: true"#;

/// The hostile skill, granted everything it declares (the worst case: the
/// operator trusted it, and the sandbox must still hold).
fn hostile(configure: impl FnOnce(&mut Config)) -> (Workspace, Runner) {
    hostile_with(HOSTILE_FRONT, configure)
}

/// The hostile handler under other front matter, granted what it declares.
fn hostile_with(front: &str, configure: impl FnOnce(&mut Config)) -> (Workspace, Runner) {
    let ws = Workspace::new();
    let dir = ws.add_skill("hostile", front, Some(&guest("hostile-guest")));
    std::fs::create_dir_all(dir.join("data")).expect("mkdir");
    std::fs::write(dir.join("data/ok.txt"), "inside").expect("write");
    let mut config = Config::default();
    ws.grant_declared(&mut config, "hostile");
    // Each attack must be stopped by the budget it attacks, however slowly
    // a loaded machine runs it: with the default 5 s, a debug build of a
    // header flood under a full CI load hit the time limit first. A test
    // about the time limit sets its own.
    config.limits.timeout_ms = 120_000;
    configure(&mut config);
    let runner = ws.runner(config);
    (ws, runner)
}

fn attack(runner: &Runner, what: &str, target: &str) -> RunOutcome {
    run(runner, "hostile", what, json!({ "target": target }))
}

/// The attack failed with `class`, its message mentions `needle`, and the
/// sandbox still serves a normal call.
fn assert_stopped(runner: &Runner, outcome: &RunOutcome, class: &str, needle: &str) {
    if let Some(o) = &outcome.output {
        panic!("attack succeeded: {}", o.body);
    }
    let f = outcome.failure.as_ref().expect("a failure");
    assert_eq!(f.class, class, "{f:?}\nevents: {:?}", outcome.events);
    assert!(
        f.message.to_lowercase().contains(&needle.to_lowercase()),
        "message {:?} should mention {needle:?}",
        f.message
    );
    let next = attack(runner, "ok", "");
    assert_eq!(
        next.output.map(|o| o.body).as_deref(),
        Some("fine"),
        "next call: {:?}",
        next.failure
    );
}

#[test]
fn control_reads_inside_the_granted_folder() {
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "read-file", "data/ok.txt");
    assert_eq!(o.failure, None);
    assert!(
        o.output
            .expect("output")
            .body
            .starts_with("ESCAPED read data/ok.txt: 6")
    );
}

#[test]
fn reading_etc_passwd_is_refused() {
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "read-file", "/etc/passwd");
    assert_stopped(&runner, &o, "Blocked", "read");
}

#[test]
fn dotdot_escape_from_a_preopen_is_refused() {
    let (_ws, runner) = hostile(|_| {});
    for target in [
        "data/../../../../../../etc/passwd",
        "data/../SKILL.md",
        "../etc/passwd",
    ] {
        let o = attack(&runner, "read-file", target);
        assert_stopped(&runner, &o, "Blocked", "read");
    }
}

#[test]
fn symlink_escape_from_a_preopen_is_refused() {
    let (ws, runner) = hostile(|_| {});
    let data = ws.skills.join("hostile/data");
    std::os::unix::fs::symlink("/etc/passwd", data.join("passwd")).expect("symlink");
    std::os::unix::fs::symlink("/etc", data.join("etc")).expect("symlink");
    for target in ["data/passwd", "data/etc/passwd"] {
        let o = attack(&runner, "read-file", target);
        assert_stopped(&runner, &o, "Blocked", "read");
    }
}

#[test]
fn writing_where_only_read_is_granted_is_refused() {
    let (ws, runner) = hostile(|_| {});
    let o = attack(&runner, "write-file", "data/new.txt");
    assert_stopped(&runner, &o, "Blocked", "write");
    assert!(!ws.skills.join("hostile/data/new.txt").exists());
    let o = attack(&runner, "write-file", "data/ok.txt");
    assert_stopped(&runner, &o, "Blocked", "write");
    assert_eq!(
        std::fs::read_to_string(ws.skills.join("hostile/data/ok.txt")).expect("read"),
        "inside"
    );
}

#[test]
fn environment_and_arguments_are_empty() {
    // The host process has an environment (PATH, cargo's CARGO_* at the
    // least); none of it may reach the guest. Not set here: changing the
    // environment while other tests' threads spawn processes is unsound.
    assert!(
        std::env::vars_os().next().is_some(),
        "the test needs a host environment to leak"
    );
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "env", "");
    assert_stopped(&runner, &o, "Blocked", "no env, no args");
}

#[test]
fn raw_sockets_are_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr").to_string();
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "socket", &addr);
    assert_stopped(&runner, &o, "Blocked", "socket");
    assert!(
        listener.accept().is_err(),
        "the guest must not have connected"
    );
}

/// A loopback HTTP server that counts the requests it answers.
fn counting_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 2048];
            let _ = stream.read(&mut buf);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
        }
    });
    (port.to_string(), hits)
}

#[test]
fn http_to_internal_addresses_is_refused_even_when_granted() {
    let (port, hits) = counting_server();
    let (_ws, runner) = hostile(|_| {});
    let cases = [
        (format!("http://127.0.0.1:{port}/"), "loopback"),
        (format!("http://[::1]:{port}/"), "loopback"),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "metadata",
        ),
        ("http://10.0.0.1/".to_owned(), "private"),
        (format!("http://localhost:{port}/"), "loopback"),
        (format!("http://2130706433:{port}/"), "unusual encoding"),
        (format!("http://0177.0.0.1:{port}/"), "unusual encoding"),
        ("http://example.com/".to_owned(), "not granted"),
    ];
    for (url, reason) in cases {
        let o = attack(&runner, "http", &url);
        assert_stopped(&runner, &o, "Blocked", "HttpRequestDenied");
        assert!(
            o.events
                .iter()
                .any(|e| e.contains("denied") && e.contains(reason)),
            "{url}: events should give the reason {reason:?}: {:?}",
            o.events
        );
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "no request may reach the server"
    );
}

#[test]
fn http_reaches_a_private_address_only_when_the_operator_allows_it() {
    let (port, hits) = counting_server();
    let (_ws, runner) =
        hostile(|c| c.network.allow_private = vec!["127.0.0.1".parse().expect("ip")]);
    let o = attack(
        &runner,
        "http-allowed",
        &format!("http://127.0.0.1:{port}/"),
    );
    assert_eq!(o.failure, None, "events: {:?}", o.events);
    assert_eq!(o.output.expect("output").body, "status 200");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    // The allowance is for that address only.
    let o = attack(&runner, "http", &format!("http://[::1]:{port}/"));
    assert_stopped(&runner, &o, "Blocked", "HttpRequestDenied");
}

#[test]
fn spinning_forever_hits_the_time_limit() {
    let (_ws, runner) = hostile(|c| c.limits.timeout_ms = 300);
    let o = attack(&runner, "spin", "");
    assert_stopped(&runner, &o, "LimitExceeded", "time");
}

/// CPU time the calling thread has used.
fn thread_cpu() -> std::time::Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill in.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime");
    std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// With a server's setting (`[sandbox] dedicated_threads`), a call starts
/// on the caller's thread and a handler still running at its first tick
/// moves to the guest threads: of a spin to its 300 ms limit, the caller's
/// thread (which serves the protocol) runs about a tick, not the spin.
/// Without the move, it would run all 300 ms.
#[test]
fn a_spin_leaves_the_callers_thread_after_its_first_tick() {
    let (_ws, runner) = hostile(|c| {
        c.limits.timeout_ms = 300;
        c.sandbox.dedicated_threads = true;
    });
    // Compiled and the guest threads started before anything is counted.
    let warm = run(&runner, "hostile", "ok", json!({}));
    assert!(warm.failure.is_none(), "{:?}", warm.failure);
    let before = thread_cpu();
    let o = attack(&runner, "spin", "");
    let spent = thread_cpu() - before;
    assert_stopped(&runner, &o, "LimitExceeded", "time");
    assert!(
        spent < std::time::Duration::from_millis(150),
        "the caller's thread ran {spent:?} of a 300 ms spin"
    );
}

#[test]
fn growing_memory_to_4_gib_hits_the_memory_limit() {
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "memory", "");
    assert_stopped(&runner, &o, "LimitExceeded", "memory");
}

#[test]
fn unbounded_recursion_is_stopped() {
    let (_ws, runner) = hostile(|_| {});
    // Recursion on the wasm stack hits wasmtime's stack limit.
    let o = attack(&runner, "recurse", "");
    assert_stopped(&runner, &o, "LimitExceeded", "stack");
    // Recursion with frames in linear memory (Rust's shadow stack) runs off
    // the bottom of memory.
    let o = attack(&runner, "recurse-shadow", "");
    assert_stopped(&runner, &o, "Trap", "stack overflowed");
}

#[test]
fn a_100_mb_output_is_refused() {
    // Enough memory to build the string, so the output cap is what stops it.
    let (_ws, runner) = hostile(|c| c.limits.memory_mb = 512);
    let o = attack(&runner, "big-output", "");
    // 100 MiB of body and 10 bytes of `text/plain`: everything counts.
    assert_stopped(&runner, &o, "OutputTooLarge", "104857610 bytes");
    // Within the default memory limit it cannot even be built.
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "big-output", "");
    assert_stopped(&runner, &o, "LimitExceeded", "memory");
}

#[test]
fn a_panic_is_a_trap_of_that_call_only() {
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "panic", "");
    assert_stopped(&runner, &o, "Trap", "panicked on purpose");
}

#[test]
fn calling_an_ungranted_tool_is_denied() {
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "tool", "shell");
    assert_stopped(&runner, &o, "Denied", "tool `shell` is not granted");
    // A declared and granted tool passes the grant check (this host has no
    // such tool, which is a different, honest answer).
    let o = attack(&runner, "tool", "web_search");
    assert_stopped(&runner, &o, "NotFound", "web_search");
}

#[test]
fn asking_the_model_without_the_grant_is_denied() {
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "model", "");
    assert_stopped(&runner, &o, "Denied", "capability `llm`");
}

#[test]
fn a_changed_skill_loses_its_grant() {
    let (ws, runner) = hostile(|_| {});
    let o = attack(&runner, "kv", "");
    assert_eq!(
        o.output.map(|o| o.body).as_deref(),
        Some("42"),
        "granted kv works: {:?}",
        o.failure
    );
    assert_eq!(o.grants.as_deref(), Some("granted"));

    // The skill changes (one more line); the old grant stays in the config.
    let md = ws.skills.join("hostile/SKILL.md");
    let mut text = std::fs::read_to_string(&md).expect("read");
    text.push_str("\nOne more line.\n");
    std::fs::write(&md, text).expect("write");
    let stale = ws.runner(runner.config().clone());
    let o = attack(&stale, "kv", "");
    assert_stopped(&stale, &o, "Denied", "capability `kv`");
    assert!(
        o.grants.as_deref().unwrap_or("").contains("stale"),
        "{:?}",
        o.grants
    );
    assert!(
        o.notices
            .iter()
            .any(|n| n.contains("skillhost skills grant hostile")),
        "run must say how to renew: {:?}",
        o.notices
    );
}

#[test]
fn an_untrusted_skill_without_a_grant_gets_nothing() {
    let ws = Workspace::new();
    let dir = ws.add_skill("hostile", HOSTILE_FRONT, Some(&guest("hostile-guest")));
    std::fs::create_dir_all(dir.join("data")).expect("mkdir");
    std::fs::write(dir.join("data/ok.txt"), "inside").expect("write");
    let runner = ws.runner(Config::default());
    let o = attack(&runner, "read-file", "data/ok.txt");
    assert_stopped(&runner, &o, "Blocked", "read");
    let o = attack(&runner, "kv", "");
    assert_stopped(&runner, &o, "Denied", "kv");
    assert!(
        o.notices.iter().any(|n| n.contains("not granted")),
        "{:?}",
        o.notices
    );
}

// ---- Budgets: what a call can make the host hold or do (issue 9) ----

fn attack_with(runner: &Runner, what: &str, context: serde_json::Value) -> RunOutcome {
    run(runner, "hostile", what, context)
}

#[test]
fn everything_a_handler_returns_counts_against_the_output_limit() {
    let (_ws, runner) = hostile(|_| {});
    for what in ["big-content-type", "big-flags", "big-failure-message"] {
        let o = attack_with(&runner, what, json!({ "mb": 2 }));
        assert_stopped(&runner, &o, "OutputTooLarge", "limit is 1048576 bytes");
    }
    // A class is a short identifier, not a place for data.
    let o = attack_with(&runner, "big-failure-class", json!({ "mb": 2 }));
    assert_stopped(&runner, &o, "InvalidFailure", "not an identifier");
    let f = o.failure.expect("failure");
    assert!(f.message.len() < 1024, "{} bytes", f.message.len());
}

#[test]
fn host_objects_are_capped_per_call() {
    let (_ws, runner) = hostile(|c| c.limits.resources = 100);
    let o = attack(&runner, "fields-flood", "");
    assert_stopped(&runner, &o, "LimitExceeded", "host objects");
}

#[test]
fn denied_calls_keep_a_bounded_event_log() {
    let (_ws, runner) = hostile(|_| {});
    let o = attack_with(&runner, "deny-flood", json!({ "n": 50_000 }));
    assert_eq!(o.output.map(|o| o.body).as_deref(), Some("denied 50000"));
    assert!(o.events.len() <= 257, "{} events kept", o.events.len());
    let last = o.events.last().expect("events");
    assert!(last.contains("more events not kept"), "{last}");
}

#[test]
fn http_header_fields_are_charged_to_the_call() {
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "fields-flood", "");
    assert_stopped(&runner, &o, "LimitExceeded", "host memory");
}

#[test]
fn http_request_paths_are_charged_to_the_call() {
    let (_ws, runner) = hostile(|_| {});
    let o = attack(&runner, "path-flood", "");
    assert_stopped(&runner, &o, "LimitExceeded", "host memory");
}

#[test]
fn a_skill_raises_its_limits_only_with_a_grant() {
    let front = HOSTILE_FRONT.replace(
        "      kv: true",
        "      kv: true\n    limits: { memory_mb: 512, timeout_ms: 10000000 }",
    );
    // Granted its capabilities, not its limits: the defaults hold.
    let (_ws, runner) = hostile_with(&front, |_| {});
    let o = attack(&runner, "memory", "");
    assert!(
        o.notices
            .iter()
            .any(|n| n.contains("asks for limits above the defaults")),
        "{:?}",
        o.notices
    );
    assert_stopped(&runner, &o, "LimitExceeded", "the limit is 64 MiB");
    // Granted its limits too: up to what it asks, within the ceilings.
    let (_ws, runner) = hostile_with(&front, |c| {
        if let Some(g) = c.grants.get_mut("hostile") {
            g.limits.memory_mb = Some(512);
        }
    });
    let o = attack(&runner, "memory", "");
    assert_stopped(&runner, &o, "LimitExceeded", "the limit is 512 MiB");
}

#[test]
fn open_descriptors_are_capped_per_call() {
    let (_ws, runner) = hostile(|c| c.limits.open_files = 16);
    let o = attack(&runner, "open-files", "data/ok.txt");
    assert_stopped(&runner, &o, "Blocked", "after 16 files");
}

const WRITER_FRONT: &str = r#"metadata:
  skillhost:
    handler: handler.wasm
    capabilities:
      files: { write: [out] }"#;

fn folder_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[test]
fn writes_stop_at_the_skills_file_quota() {
    let (ws, runner) = hostile_with(WRITER_FRONT, |c| c.limits.file_quota_mb = 3);
    let out = ws.skills.join("hostile/out");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::write(out.join("before"), vec![0u8; 1 << 20]).expect("write");
    let o = attack(&runner, "write-flood", "out");
    assert_stopped(&runner, &o, "Blocked", "after 2 MiB");
    assert!(
        folder_bytes(&out) <= 3 << 20,
        "{} bytes",
        folder_bytes(&out)
    );
    // The quota is the skill's, not the call's: the next call has no room.
    let o = attack(&runner, "write-flood", "out");
    assert_stopped(&runner, &o, "Blocked", "after 0 MiB");
}

#[test]
fn links_in_a_writable_folder_are_refused() {
    let (ws, runner) = hostile_with(WRITER_FRONT, |_| {});
    let out = ws.skills.join("hostile/out");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::write(out.join("ok.txt"), "inside").expect("write");
    for what in ["symlink", "hardlink"] {
        let o = attack(&runner, what, "out");
        assert_stopped(&runner, &o, "Blocked", "link");
        assert!(
            o.events
                .iter()
                .any(|e| e.contains("denied:") && e.contains("link")),
            "{:?}",
            o.events
        );
    }
    assert!(std::fs::symlink_metadata(out.join("evil-link")).is_err());
    assert!(std::fs::symlink_metadata(out.join("evil-hard-link")).is_err());
}

#[test]
fn a_write_grant_never_reaches_the_hosts_control_files() {
    let front = r#"metadata:
  skillhost:
    handler: handler.wasm
    capabilities:
      files: { write: ["workspace:."] }"#;
    let (ws, runner) = hostile_with(front, |_| {});
    let config = ws.workspace.join("skillhost.toml");
    std::fs::write(&config, "# operator settings\n").expect("write");
    let o = attack(&runner, "write-file", "/workspace/skillhost.toml");
    assert_refused_grant(&o);
    assert_eq!(
        std::fs::read_to_string(&config).expect("read"),
        "# operator settings\n"
    );
    // A skill root inside the workspace is covered the same way.
    let front = r#"metadata:
  skillhost:
    handler: handler.wasm
    capabilities:
      files: { write: ["workspace:.agents"] }"#;
    let (ws, runner) = hostile_with(front, |_| {});
    std::fs::create_dir_all(ws.workspace.join(".agents/skills")).expect("mkdir");
    let o = attack(
        &runner,
        "write-file",
        "/workspace/.agents/skills/evil/SKILL.md",
    );
    assert_refused_grant(&o);
    assert!(!ws.workspace.join(".agents/skills/evil").exists());
}

/// Every call of a skill whose grant covers a control path is refused,
/// naming the grant and why.
fn assert_refused_grant(o: &RunOutcome) {
    assert!(o.output.is_none(), "{:?}", o.output);
    let f = o.failure.as_ref().expect("failure");
    assert_eq!(f.class, "Denied", "{f:?}");
    assert!(
        f.message.contains("covers skillhost's own"),
        "{}",
        f.message
    );
}

/// 64 handlers spinning to their deadline hold every instance slot of the
/// pool. A call that arrives then waits for a slot: past its own time limit
/// it fails, classified and naming the pool; with time to spare it runs
/// once a slot is free. Nothing crashes and no call is lost.
#[test]
fn a_full_instance_pool_makes_calls_wait_then_serves_them() {
    let ws = Workspace::new();
    let spin = "metadata:\n  skillhost:\n    handler: handler.wasm";
    let quick =
        "metadata:\n  skillhost:\n    handler: handler.wasm\n    limits: { timeout_ms: 50 }";
    ws.add_skill("spinner", spin, Some(&guest("hostile-guest")));
    ws.add_skill("quick", quick, Some(&guest("hostile-guest")));
    let mut config = Config::default();
    // The spinners must all hold their slots at once: on a loaded 2-core
    // machine starting 64 of them took more than 3 s, so the first ones
    // timed out before the last ones started. They hold them this long.
    config.limits.timeout_ms = 10_000;
    let runner = ws.runner(config);
    // Warm: the sandbox exists and the handler is compiled.
    assert!(run(&runner, "quick", "ok", json!({})).failure.is_none());
    let sandbox = runner.sandbox_if_made().expect("sandbox");
    let slots = sandbox.free_pool_slots().expect("pooling is the default");

    let spinners: Vec<_> = (0..slots)
        .map(|_| {
            let runner = runner.clone();
            std::thread::spawn(move || run(&runner, "spinner", "spin", json!({})))
        })
        .collect();
    // The spinners take their slots at once; they hold them for seconds.
    while sandbox.free_pool_slots() != Some(0) {
        if spinners.iter().all(|s| s.is_finished()) {
            let outcomes: Vec<_> = spinners
                .into_iter()
                .map(|s| s.join().expect("spinner thread").failure)
                .collect();
            panic!("spinners ended before filling the pool: {outcomes:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let refused = run(&runner, "quick", "ok", json!({}));
    let waiter = {
        let runner = runner.clone();
        std::thread::spawn(move || run(&runner, "spinner", "ok", json!({})))
    };
    let f = refused.failure.expect("no slot within 50 ms");
    assert_eq!(f.class, "LimitExceeded", "{f:?}");
    assert!(f.message.contains("instance slots"), "{}", f.message);

    for s in spinners {
        let o = s.join().expect("spinner thread");
        let f = o.failure.expect("spinning stops at the deadline");
        assert_eq!(f.class, "LimitExceeded", "{f:?}");
        assert!(f.message.contains("time"), "{}", f.message);
    }
    let served = waiter.join().expect("waiter thread");
    assert_eq!(
        served.output.map(|o| o.body).as_deref(),
        Some("fine"),
        "{:?}",
        served.failure
    );
    assert_eq!(sandbox.free_pool_slots(), Some(slots));
}

/// Issue 15: a handler that traps, spins, hoards memory or floods output
/// while fifty ordinary calls run. Every ordinary call finishes with its
/// answer, and all of them before the spinner is stopped: the hostile
/// calls hold only their own sandbox, never the host's workers.
#[test]
fn fifty_calls_finish_normally_while_hostile_handlers_trap_spin_hoard_and_flood() {
    // The spinner's time limit is far longer than fifty trivial calls
    // take, so "finished before it was stopped" shows nothing waited on it.
    let (_ws, runner) = hostile(|c| {
        c.limits.timeout_ms = 10_000;
        c.limits.memory_mb = 512;
    });
    // Compile (and cache) the component first: the race is about running.
    assert_eq!(
        attack(&runner, "ok", "").output.map(|o| o.body).as_deref(),
        Some("fine")
    );
    let hostile_calls: [(&str, serde_json::Value, &str, &str); 6] = [
        ("spin", json!({}), "LimitExceeded", "time"),
        ("memory", json!({}), "LimitExceeded", "memory"),
        ("panic", json!({}), "Trap", "panicked on purpose"),
        ("recurse", json!({}), "LimitExceeded", "stack"),
        ("big-output", json!({}), "OutputTooLarge", "104857610 bytes"),
        ("deny-flood", json!({ "n": 200_000 }), "", "denied 200000"),
    ];
    let ordinary_done = Arc::new(AtomicUsize::new(0));
    let rt = harness::runtime();
    let (hostile_outcomes, ordinary) = rt.block_on(async {
        let call = |task: &str, context: serde_json::Value| {
            let runner = runner.clone();
            let req = skillhost::exec::RunRequest {
                task: task.to_owned(),
                skill: Some("hostile".to_owned()),
                context: context.as_object().cloned().unwrap_or_default(),
            };
            async move { runner.run(&req).await.expect("run") }
        };
        let hostile: Vec<_> = hostile_calls
            .iter()
            .map(|(task, context, ..)| {
                let run = call(task, context.clone());
                let done = ordinary_done.clone();
                tokio::spawn(async move {
                    let outcome = run.await;
                    (outcome, done.load(Ordering::SeqCst))
                })
            })
            .collect();
        let ordinary: Vec<_> = (0..50)
            .map(|_| {
                let run = call("ok", json!({}));
                let done = ordinary_done.clone();
                tokio::spawn(async move {
                    let outcome = run.await;
                    done.fetch_add(1, Ordering::SeqCst);
                    outcome
                })
            })
            .collect();
        let mut hostile_outcomes = Vec::new();
        for h in hostile {
            hostile_outcomes.push(h.await.expect("hostile task"));
        }
        let mut outcomes = Vec::new();
        for o in ordinary {
            outcomes.push(o.await.expect("ordinary task"));
        }
        (hostile_outcomes, outcomes)
    });
    for (i, o) in ordinary.iter().enumerate() {
        assert_eq!(
            o.output.as_ref().map(|o| o.body.as_str()),
            Some("fine"),
            "ordinary call {i}: {:?}",
            o.failure
        );
    }
    for ((task, _, class, needle), (outcome, done_before)) in
        hostile_calls.iter().zip(&hostile_outcomes)
    {
        if class.is_empty() {
            let body = outcome.output.as_ref().map(|o| o.body.as_str());
            assert_eq!(body, Some(*needle), "{task}: {:?}", outcome.failure);
        } else {
            let f = outcome.failure.as_ref().unwrap_or_else(|| {
                panic!(
                    "{task} succeeded: {:?}",
                    outcome.output.as_ref().map(|o| o.body.len())
                )
            });
            assert_eq!(f.class, *class, "{task}: {f:?}");
            assert!(
                f.message.to_lowercase().contains(&needle.to_lowercase()),
                "{task}: {:?} should mention {needle:?}",
                f.message
            );
        }
        if *task == "spin" {
            assert_eq!(
                *done_before, 50,
                "every ordinary call finished before the spinner was stopped"
            );
        }
    }
    // And the host serves on.
    assert_eq!(
        attack(&runner, "ok", "").output.map(|o| o.body).as_deref(),
        Some("fine")
    );
}
