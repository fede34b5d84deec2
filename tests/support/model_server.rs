//! A scripted model served over HTTP/1.1 on 127.0.0.1, as llama.cpp's
//! server, Ollama or a proxy would serve one: every request's body is kept
//! (the model log) and answered with status 200 and a JSON body the test
//! makes of it.

use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;

/// A model server on 127.0.0.1; it stops accepting when dropped.
pub struct ModelServer {
    /// `http://127.0.0.1:PORT` and the path it was started with.
    pub base: String,
    bodies: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

/// One reply's text, made when its request comes.
pub type Reply = Box<dyn Fn() -> String + Send + Sync>;

impl ModelServer {
    /// A server speaking OpenAI's chat completions at `base` (which ends in
    /// `/v1`). Each request is answered by the next of `replies` (called
    /// then, so that a reply can name the pid of the process asking).
    pub fn start(replies: Vec<Reply>) -> ModelServer {
        let next = AtomicUsize::new(0);
        ModelServer::answering("/v1", move |_request| {
            let text = replies
                .get(next.fetch_add(1, Ordering::SeqCst))
                .map(|f| f())
                .unwrap_or_else(|| "no more replies".to_owned());
            json!({
                "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            })
            .to_string()
        })
    }

    /// A server whose `base` is `http://127.0.0.1:PORT` + `path`; it
    /// answers each request (any method, any path) with the JSON body
    /// `respond` makes of the request's body. Every connection is served
    /// on a thread of its own, one request after another.
    pub fn answering(
        path: &str,
        respond: impl Fn(&str) -> String + Send + Sync + 'static,
    ) -> ModelServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let base = format!("http://{}{path}", listener.local_addr().expect("addr"));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let respond = Arc::new(respond);
        let (bodies2, stop2) = (bodies.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop2.load(Ordering::SeqCst) {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                };
                let (bodies, respond) = (bodies2.clone(), respond.clone());
                std::thread::spawn(move || serve(stream, &bodies, &*respond));
            }
        });
        ModelServer { base, bodies, stop }
    }

    /// The bodies of the requests so far, in the order they came.
    pub fn bodies(&self) -> Vec<String> {
        self.bodies.lock().expect("lock").clone()
    }

    /// Leaves the server answering until the test process ends.
    pub fn detach(self) {
        std::mem::forget(self);
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Serves one connection, one request after another, until the client
/// closes it or a read or write fails: keeps each body in `bodies` and
/// answers it with what `respond` makes of it.
fn serve(
    stream: std::net::TcpStream,
    bodies: &Mutex<Vec<String>>,
    respond: &dyn Fn(&str) -> String,
) {
    stream.set_nonblocking(false).expect("blocking");
    let mut r = BufReader::new(stream.try_clone().expect("clone"));
    let mut w = stream;
    while let Some(body) = read_request(&mut r) {
        bodies.lock().expect("lock").push(body.clone());
        let reply = respond(&body);
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            reply.len()
        );
        if w.write_all(head.as_bytes()).is_err() || w.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// The body of the next request (head, then `content-length` bytes); `None`
/// once the connection ends.
fn read_request(r: &mut impl BufRead) -> Option<String> {
    let mut len = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    Some(String::from_utf8_lossy(&body).into_owned())
}
