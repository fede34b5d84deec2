//! A handler that attacks its sandbox. The task description names the
//! attack, the context its target. Each attack that the sandbox stops must
//! come back as an error; an `Ok` answer starting with `ESCAPED` means the
//! sandbox let it through, and the tests fail on it.

use std::hint::black_box;

use skillhost_guest::{Failure, HandlerResult, Output, Task, kv, model, tools};

fn blocked(what: &str, e: impl std::fmt::Display) -> Failure {
    Failure::new("Blocked", format!("{what}: {e}"))
}

fn attack(task: Task) -> HandlerResult {
    let target = task.str("target").to_owned();
    match task.description.as_str() {
        "ok" => Ok(Output::text("fine")),
        "read-file" => match std::fs::read_to_string(&target) {
            Ok(s) => Ok(Output::text(format!("ESCAPED read {target}: {}", s.len()))),
            Err(e) => Err(blocked("read", e)),
        },
        "write-file" => match std::fs::write(&target, b"pwned") {
            Ok(()) => Ok(Output::text(format!("ESCAPED wrote {target}"))),
            Err(e) => Err(blocked("write", e)),
        },
        "env" => {
            let vars: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
            let args: Vec<String> = std::env::args().collect();
            let cwd = std::env::current_dir().map(|p| p.display().to_string());
            if vars.is_empty() && args.is_empty() {
                Err(blocked("env", format!("no env, no args, cwd {cwd:?}")))
            } else {
                Ok(Output::text(format!("ESCAPED env {vars:?} args {args:?}")))
            }
        }
        "socket" => match std::net::TcpStream::connect(&target) {
            Ok(_) => Ok(Output::text(format!("ESCAPED connected to {target}"))),
            Err(e) => Err(blocked("socket", e)),
        },
        "http" => match http_get(&target) {
            Ok(status) => Ok(Output::text(format!("ESCAPED http {target} -> {status}"))),
            Err(e) => Err(blocked("http", e)),
        },
        "http-allowed" => match http_get(&target) {
            Ok(status) => Ok(Output::text(format!("status {status}"))),
            Err(e) => Err(blocked("http", e)),
        },
        "spin" => {
            let mut n: u64 = 0;
            loop {
                n = black_box(n.wrapping_add(1));
            }
        }
        "memory" => {
            // Touch every page so the allocation is real, up to 4 GiB.
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            for _ in 0..64 {
                hoard.push(vec![7u8; 64 << 20]);
            }
            Ok(Output::text(format!(
                "ESCAPED allocated {} chunks",
                black_box(hoard.len())
            )))
        }
        "recurse" => Ok(Output::text(format!("ESCAPED {}", recurse(black_box(1))))),
        "recurse-shadow" => Ok(Output::text(format!(
            "ESCAPED {}",
            recurse_shadow(black_box(1))
        ))),
        "big-output" => {
            let mb: usize = task.field_opt("mb")?.unwrap_or(100);
            Ok(Output::text("x".repeat(mb << 20)))
        }
        "tool" => {
            let v = tools::call(&target, &serde_json::json!({}))?;
            Ok(Output::text(format!("ESCAPED tool {target} -> {v}")))
        }
        "model" => {
            let v = model::complete(None, "say hi")?;
            Ok(Output::text(format!("ESCAPED model -> {v}")))
        }
        "kv" => {
            kv::set("counter", b"42")?;
            let v = kv::get("counter")?.unwrap_or_default();
            Ok(Output::text(String::from_utf8_lossy(&v).into_owned()))
        }
        "panic" => panic!("the handler panicked on purpose"),
        other => Err(Failure::new(
            "InvalidInput",
            format!("unknown attack `{other}`"),
        )),
    }
}

skillhost_guest::export_handler!(attack);

/// Deep recursion whose frames live on the wasm stack.
#[allow(unconditional_recursion)]
fn recurse(n: u64) -> u64 {
    black_box(recurse(black_box(n + 1))).wrapping_add(n)
}

/// Deep recursion whose frames hold an array, which Rust keeps on its
/// shadow stack in linear memory.
#[allow(unconditional_recursion)]
fn recurse_shadow(n: u64) -> u64 {
    let pad = black_box([n; 64]);
    recurse_shadow(black_box(n + 1)).wrapping_add(pad[n as usize % 64])
}

/// A GET over wasi:http; returns the status code or the error the host gave.
fn http_get(url: &str) -> Result<u16, String> {
    use wasi::http::outgoing_handler;
    use wasi::http::types::{Fields, OutgoingRequest, Scheme};

    let (scheme, rest) = if let Some(r) = url.strip_prefix("https://") {
        (Scheme::Https, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (Scheme::Http, r)
    } else {
        return Err(format!("not an http url: {url}"));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let request = OutgoingRequest::new(Fields::new());
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| "bad scheme")?;
    request
        .set_authority(Some(authority))
        .map_err(|()| format!("bad authority {authority}"))?;
    request
        .set_path_with_query(Some(path))
        .map_err(|()| "bad path")?;
    let response = outgoing_handler::handle(request, None).map_err(|e| format!("{e:?}"))?;
    response.subscribe().block();
    match response.get() {
        Some(Ok(Ok(r))) => Ok(r.status()),
        Some(Ok(Err(e))) => Err(format!("{e:?}")),
        Some(Err(())) => Err("response already taken".into()),
        None => Err("no response".into()),
    }
}
