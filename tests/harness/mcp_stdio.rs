//! A raw MCP client over a `skillhost mcp` child's stdio: newline-delimited
//! JSON-RPC, for tests that need the server as a desktop client starts it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

use serde_json::{Value, json};

pub struct StdioClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl StdioClient {
    /// Starts `server` (a `skillhost ... mcp` command; its stderr as the
    /// caller set it) with piped stdin and stdout.
    pub fn start(mut server: Command) -> Self {
        let mut child = server
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start skillhost mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        StdioClient {
            child,
            stdin,
            stdout,
        }
    }

    /// `initialize` (answered without an error) and `notifications/initialized`.
    pub fn initialize(&mut self) {
        let init = self.request(
            0,
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "test", "version": "0" } }),
        );
        assert!(init.get("error").is_none(), "{init}");
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `msg` as one line, in one write.
    pub fn send(&mut self, msg: &Value) {
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .expect("write to the server");
    }

    /// The answer to request `id` (notifications and others skipped).
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.answer(id, method)
    }

    /// The answer to request `id`, sent already (`awaited` names it if the
    /// server ends first); notifications and other answers are skipped.
    pub fn answer(&mut self, id: u64, awaited: &str) -> Value {
        loop {
            let v = self.next_message(awaited);
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// The next `n` answers (messages with an id), in the order they come.
    pub fn answers(&mut self, n: usize) -> Vec<Value> {
        let mut got = Vec::new();
        while got.len() < n {
            let v = self.next_message("the requests sent");
            if v.get("id").is_some() {
                got.push(v);
            }
        }
        got
    }

    fn next_message(&mut self, awaited: &str) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read");
        assert!(n > 0, "the server closed stdout before answering {awaited}");
        serde_json::from_str(&line).expect("JSON-RPC line")
    }

    /// Closes stdin, which ends the server, and waits for it.
    pub fn finish(self) -> Output {
        drop(self.stdin);
        self.child.wait_with_output().expect("the server ends")
    }
}
