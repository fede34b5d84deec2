//! DNS rebinding: a granted name answers an allowed address to the guard's
//! lookup and a forbidden one (127.0.0.1) to any later lookup. Every
//! outbound path must look the name up once and connect to the address it
//! checked: the wasi:http sender (HTTP and HTTPS, through the real sandbox
//! and the hostile guest) and the `http_fetch` tool (HTTP, HTTPS, and a
//! name with a trailing dot).
//!
//! Linux loopback answers on all of 127/8: the allowed address is
//! 127.0.0.2:P (allowed by the operator's `allow_private`) and the
//! forbidden one is 127.0.0.1:P, the same port, so a connection sent to the
//! second answer would land there.

use crate::harness;

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use harness::{Workspace, guest};
use serde_json::{Map, Value, json};
use skillhost::grants::netguard::{NetPolicy, Resolve};
use skillhost::sandbox::{
    Basis, BoxFuture as HostFuture, CallOutcome, CallRequest, Effective, Failure, FileRoots,
    Limits, Output, Sandbox, SandboxOptions, Services,
};
use skillhost::skill::{Capabilities, Catalog, LoadOptions};
use skillhost::tools::{
    CallContext, Caller, Policy, SkillInvoker, ToolError, Toolbox, ToolsConfig,
};

/// The granted name. The test's resolver answers it with 127.0.0.2 first;
/// the system resolver, and the test's resolver asked again, answer
/// 127.0.0.1: a second lookup anywhere lands on the forbidden listener.
const NAME: &str = "localhost";

/// Answers the first lookup with `first`, every later one with `then`, and
/// counts the lookups.
struct Rebinder {
    first: SocketAddr,
    then: SocketAddr,
    lookups: AtomicUsize,
}

impl Resolve for Rebinder {
    fn lookup<'a>(
        &'a self,
        _host: &'a str,
        _port: u16,
    ) -> BoxFuture<'a, std::io::Result<Vec<SocketAddr>>> {
        let n = self.lookups.fetch_add(1, Ordering::SeqCst);
        let answer = if n == 0 { self.first } else { self.then };
        Box::pin(async move { Ok(vec![answer]) })
    }
}

/// The allowed listener (served: it counts connections and answers every
/// request with `200 ok`) and the forbidden one on the same port (never
/// accepted from: whatever connects stays in its backlog).
struct Targets {
    port: u16,
    allowed_hits: Arc<AtomicUsize>,
    forbidden: TcpListener,
    rebinder: Arc<Rebinder>,
}

impl Targets {
    fn new() -> Self {
        let (allowed, forbidden) = (0..50)
            .find_map(|_| {
                let allowed = TcpListener::bind("127.0.0.2:0").expect("bind 127.0.0.2");
                let port = allowed.local_addr().expect("addr").port();
                TcpListener::bind(("127.0.0.1", port))
                    .ok()
                    .map(|f| (allowed, f))
            })
            .expect("a port free on both 127.0.0.2 and 127.0.0.1");
        let port = allowed.local_addr().expect("addr").port();
        let allowed_hits = Arc::new(AtomicUsize::new(0));
        let hits = allowed_hits.clone();
        std::thread::spawn(move || serve_allowed(&allowed, &hits));
        forbidden.set_nonblocking(true).expect("nonblocking");
        let rebinder = Arc::new(Rebinder {
            first: SocketAddr::from(([127, 0, 0, 2], port)),
            then: SocketAddr::from(([127, 0, 0, 1], port)),
            lookups: AtomicUsize::new(0),
        });
        Targets {
            port,
            allowed_hits,
            forbidden,
            rebinder,
        }
    }

    fn policy(&self) -> NetPolicy {
        NetPolicy::new(vec![IpAddr::from([127, 0, 0, 2])]).with_resolver(self.rebinder.clone())
    }

    /// One lookup, one connection to the allowed address, none to the
    /// forbidden one.
    fn assert_pinned(&self, what: &str) {
        assert_eq!(
            self.rebinder.lookups.load(Ordering::SeqCst),
            1,
            "{what}: the name must be looked up exactly once"
        );
        assert_eq!(
            self.allowed_hits.load(Ordering::SeqCst),
            1,
            "{what}: the checked address must get the connection"
        );
        // The connection is established (in the backlog) before the
        // client can send, so by now any connection would be there.
        match self.forbidden.accept() {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Ok((_, from)) => panic!("{what}: 127.0.0.1 was reached (from {from})"),
            Err(e) => panic!("{what}: accept on the forbidden listener: {e}"),
        }
    }
}

/// Answers every connection to `allowed` with `200 ok`, counting each in
/// `hits`.
fn serve_allowed(allowed: &TcpListener, hits: &AtomicUsize) {
    for stream in allowed.incoming() {
        let Ok(mut s) = stream else { continue };
        // Counted before anything is answered, so a client that
        // got an answer (or a failed handshake) sees the count.
        hits.fetch_add(1, Ordering::SeqCst);
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // Read the request head; a TLS hello (0x16) gets the same
        // plain answer, which fails the handshake.
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if seen[0] == 0x16 || seen.windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    }
}

// --- wasi:http, through the sandbox and the hostile guest ---

/// Granted wasi:http to `NAME`, and nothing else.
fn http_granted() -> Effective {
    Effective {
        capabilities: Capabilities {
            http: vec![NAME.into()],
            ..Capabilities::default()
        },
        basis: Basis::Granted,
        ..Effective::none()
    }
}

/// Runs the hostile guest's `action` on `url`, with wasi:http granted to
/// `NAME` under the targets' rebinding resolver.
fn sandbox_call(targets: &Targets, action: &str, url: &str) -> CallOutcome {
    let options = SandboxOptions {
        net: targets.policy(),
        ..SandboxOptions::from_config(
            &skillhost::config::SandboxConfig::default(),
            Some(harness::cache_dir()),
        )
    };
    let sandbox = Sandbox::new(&options).expect("sandbox");
    let wasm = std::fs::read(guest("hostile-guest")).expect("read guest");
    let handler = sandbox.load(&wasm).expect("load the hostile guest");
    let dir = tempfile::tempdir().expect("tempdir");
    let roots = FileRoots {
        skill_dir: dir.path().to_path_buf(),
        workspace: dir.path().to_path_buf(),
        skill_files: Vec::new(),
        control: Default::default(),
    };
    let grants = http_granted();
    let context: Map<String, Value> = json!({ "target": url })
        .as_object()
        .cloned()
        .expect("object");
    let req = CallRequest {
        skill: "hostile",
        description: action,
        context: &context,
        grants: &grants,
        limits: Limits::default(),
        roots: &roots,
        services: Services::default(),
        entropy: Default::default(),
    };
    harness::runtime().block_on(sandbox.call(&handler, &req))
}

#[test]
fn wasi_http_connects_to_the_checked_address() {
    let t = Targets::new();
    let o = sandbox_call(&t, "http-allowed", &format!("http://{NAME}:{}/", t.port));
    t.assert_pinned("wasi:http http://");
    assert_eq!(
        o.result.as_ref().map(|o| o.body.as_str()),
        Ok("status 200"),
        "events: {:?}",
        o.events
    );
    let via = format!("via 127.0.0.2:{}", t.port);
    assert!(o.events.iter().any(|e| e.contains(&via)), "{:?}", o.events);
}

#[test]
fn wasi_https_connects_to_the_checked_address() {
    let t = Targets::new();
    // The listener speaks no TLS: the handshake fails, after the TCP
    // connection went to the checked address.
    let o = sandbox_call(&t, "http", &format!("https://{NAME}:{}/", t.port));
    t.assert_pinned("wasi:http https://");
    let f = o.result.as_ref().expect_err("no TLS server there");
    assert_eq!(f.class, "Blocked", "{f:?}");
}

// --- the http_fetch tool ---

struct NoSkills;

impl SkillInvoker for NoSkills {
    fn invoke<'a>(
        &'a self,
        skill: &'a str,
        _task: &'a str,
        _context: Map<String, Value>,
        _depth: u32,
    ) -> HostFuture<'a, Result<Output, Failure>> {
        Box::pin(async move { Err(Failure::new("NoSkill", skill)) })
    }
}

fn fetch(targets: &Targets, url: &str) -> Result<Value, ToolError> {
    let ws = Workspace::new();
    ws.add_skill("fetcher", "", None);
    let catalog = Arc::new(Catalog::load(&ws.paths().roots(), &LoadOptions::default()));
    let mut tools = Toolbox::standard(
        Policy::new(ToolsConfig::default()),
        ws.workspace.clone(),
        catalog.clone(),
        Arc::new(NoSkills),
    );
    tools.net = targets.policy();
    let skill = catalog.get("fetcher").expect("fetcher skill");
    let grants = Capabilities {
        http: vec![NAME.into()],
        ..Capabilities::default()
    };
    let cx = CallContext {
        skill,
        grants: &grants,
        trusted: true,
        caller: Caller::Model,
        depth: 0,
    };
    harness::runtime().block_on(tools.call("http_fetch", json!({ "url": url }), &cx))
}

#[test]
fn http_fetch_connects_to_the_checked_address() {
    let t = Targets::new();
    let r = fetch(&t, &format!("http://{NAME}:{}/", t.port));
    t.assert_pinned("http_fetch http://");
    let r = r.expect("fetch");
    assert_eq!(r["status"], 200, "{r}");
    assert_eq!(r["body"], "ok", "{r}");
}

#[test]
fn http_fetch_to_a_name_with_a_trailing_dot_is_looked_up_once() {
    let t = Targets::new();
    let r = fetch(&t, &format!("http://{NAME}.:{}/", t.port));
    t.assert_pinned("http_fetch http://NAME./");
    let r = r.expect("fetch");
    assert_eq!(r["status"], 200, "{r}");
}

#[test]
fn http_fetch_https_connects_to_the_checked_address() {
    let t = Targets::new();
    let r = fetch(&t, &format!("https://{NAME}:{}/", t.port));
    t.assert_pinned("http_fetch https://");
    let e = r.expect_err("no TLS server there");
    assert!(matches!(e, ToolError::Failed { .. }), "{e:?}");
}
