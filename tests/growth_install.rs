//! Issue 30, findings 6 and 7, through the real binary: a registry's
//! redirect never reaches another place on this machine, and text from a
//! skill never drives the terminal it is printed to. (Finding 8, a folder
//! swapped for a link during a folder install, is driven by a hook inside
//! the walk: see the tests of `install/extract.rs`.)

use crate::harness::Workspace;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A one-thread HTTP server on 127.0.0.1 answering every request with
/// `answer`, recording each request line.
struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start(answer: String) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, stopped) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                seen.lock().expect("lock").push(line);
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        Server {
            addr,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then sees `stop`.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn redirect_to(location: &str) -> String {
    format!(
        "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

/// Installed skills, by folder name (the staging folder aside).
fn installed(ws: &Workspace) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(ws.home.join("installed")) else {
        return Vec::new();
    };
    entries
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".staging")
        .collect()
}

#[test]
fn a_registry_redirect_to_another_local_port_is_not_followed() {
    let ws = Workspace::new();
    // What a redirect would reach: a service on this machine.
    let service = Server::start(
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}".to_owned(),
    );
    let target = format!("{}/admin/flush?all=1", service.base());
    let registry = Server::start(redirect_to(&target));
    let out = ws.run_cli(&[
        "skills",
        "install",
        "alice/demo",
        "--registry",
        &registry.base(),
    ]);
    assert_ne!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        registry.requests(),
        ["GET /api/v1/skills/demo?ownerHandle=alice HTTP/1.1"],
        "the operator's own registry is asked"
    );
    assert!(
        service.requests().is_empty(),
        "the redirect reached {target}: {:?}",
        service.requests()
    );
    assert!(
        out.stderr.contains(&target) && out.stderr.contains("refused"),
        "the error names the refused URL: {}",
        out.stderr
    );
    assert!(out.stderr.contains("loopback"), "{}", out.stderr);
    assert!(installed(&ws).is_empty(), "{:?}", installed(&ws));
}

#[test]
fn a_registry_on_this_machine_named_only_in_skillhost_toml_is_not_asked() {
    let ws = Workspace::new();
    let registry = Server::start(redirect_to("http://127.0.0.1:1/"));
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        format!("[install]\nregistry = \"{}\"\n", registry.base()),
    )
    .expect("write skillhost.toml");
    let out = ws.run_cli(&["skills", "install", "alice/demo"]);
    assert_ne!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        registry.requests().is_empty(),
        "a workspace's config sent a request to a local port: {:?}",
        registry.requests()
    );
    assert!(
        out.stderr.contains(&registry.base()) && out.stderr.contains("--registry"),
        "{}",
        out.stderr
    );
    assert!(installed(&ws).is_empty(), "{:?}", installed(&ws));
}

// ---------------------------------------------------------------------------
// Finding 7: what a skill says is printed, never obeyed.

/// OSC 52 (sets the clipboard to "hi"), then a carriage return and a
/// cursor-up that would rewrite the line above, a C1 CSI and a bidi override.
const HOSTILE_YAML: &str = r#"\e]52;c;aGk=\a\r\e[1Apassed enabled \u009B2J \u202Eexe.txt"#;

/// The same, raw, for the body (YAML allows no raw controls; Markdown does).
const HOSTILE_RAW: &str = "\x1b]52;c;aGk=\x07\r\x1b[1Apassed enabled \u{9b}2J \u{202e}exe.txt";

fn assert_inert(what: &str, stdout: &str) {
    for c in ['\x1b', '\x07', '\r', '\u{9b}', '\u{202e}'] {
        assert!(
            !stdout.contains(c),
            "{what}: {c:?} reached the terminal: {stdout:?}"
        );
    }
    // (A list row folds whitespace, `\r` included, into spaces.)
    assert!(
        stdout.contains(r"\u001b]52;c;aGk=\u0007") && stdout.contains(r"\u001b[1Apassed"),
        "{what}: the escaped form is shown: {stdout}"
    );
}

#[test]
fn a_skills_hostile_text_is_shown_escaped_by_list_show_and_run() {
    let ws = Workspace::new();
    let dir = ws.skills.join("osc");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: osc\ndescription: \"{HOSTILE_YAML} Formats text.\"\nmetadata:\n  skillhost:\n    template: \"{HOSTILE_YAML} {{{{task}}}}\"\n---\n\n# osc\n\n{HOSTILE_RAW} Formats text.\n"
        ),
    )
    .expect("write SKILL.md");
    // Its bidi override is a high finding of the skill text audit, which
    // holds it back from `run`; the operator allows it, so that what it
    // says reaches the terminal to be escaped.
    // An allowance names the text it vouches for: `osc@sha256:…`.
    let pin = skillhost::audit::audit_folder(&dir).expect("audit").pin;
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        format!("[audit]\nallow = [\"osc@{pin}\"]\n"),
    )
    .expect("write skillhost.toml");
    let skills = ws.skills.to_string_lossy().into_owned();
    for args in [
        vec!["--skills", &skills, "skills", "list"],
        vec!["--skills", &skills, "skills", "show", "osc"],
        vec!["--skills", &skills, "run", "say hi", "--skill", "osc"],
    ] {
        let out = ws.run_cli(&args);
        let what = args[2..].join(" ");
        assert_eq!(out.code, 0, "{what}: {}\n{}", out.stdout, out.stderr);
        assert_inert(&what, &out.stdout);
        assert!(!out.stderr.contains('\x1b'), "{what}: {:?}", out.stderr);
    }
    // JSON stays JSON, with the description exactly as written.
    let out = ws.run_cli(&["--skills", &skills, "skills", "list", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for c in ['\x1b', '\x07', '\r', '\u{9b}', '\u{202e}'] {
        assert!(!out.stdout.contains(c), "{c:?} in {:?}", out.stdout);
    }
    let listed = out.json();
    let osc = listed
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == "osc"))
        .unwrap_or_else(|| panic!("osc is listed: {listed}"));
    let description = osc["description"].as_str().expect("a description");
    assert!(
        description
            .starts_with("\x1b]52;c;aGk=\x07\r\x1b[1Apassed enabled \u{9b}2J \u{202e}exe.txt"),
        "{description:?}"
    );
}
