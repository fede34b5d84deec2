//! Connection lanes for `skillhost mcp --http`: one current-thread runtime
//! per core, each serving whole the connections dealt to it.
//!
//! On one multi-thread runtime a request crossed workers (the connection's
//! task, rmcp's service, the answer's stream), and each crossing woke a
//! parked worker: 1.6 voluntary context switches per call, which on this
//! VM cost more than the handler's run. In a lane, a connection's requests,
//! their runs (until the first tick, see `Sandbox::call`) and their answers
//! stay on one thread (figures at `count`).
//!
//! A lane's thread only does protocol work and short runs: a handler still
//! running at its first tick moves to the guest threads, and compiles and
//! store work go to blocking pools, as on the multi-thread runtime. What a
//! lane gives up is work stealing: a connection stays on its lane, and
//! connections are dealt round-robin. A session opened through one lane
//! may be used through a connection on another: rmcp's session worker
//! lives on the lane that opened it and talks to the others over channels,
//! which work across runtimes.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::Front;

/// How many lanes: one per core this process may use. Each is one thread
/// that sleeps while its connections are idle.
///
/// Release, 2 cores, against one multi-thread runtime, alternating runs:
/// - echo `tools/call` over HTTP, one client (`benches/mcp.rs`): median
///   161 µs against 263-271 µs; server CPU per call 139 µs against
///   224-228 µs; 0.16 voluntary context switches per call against 1.57;
/// - the load test (`benches/load.rs`, 1% of calls spinning to 100 ms):
///   1,757-1,778 answered/s against 1,673-1,720 at 8 sessions (p50 517-537
///   µs against 732-803 µs), 5,311-5,357 against 4,884-5,816 at 64;
/// - 8 clients calling as fast as they can (`benches/compile_contention.rs`,
///   4 runs against 2): their p99 was 3.8-4.4 ms against 2.4-2.6 ms, the price
///   of no work stealing on a saturated machine, and 6.2-8.0 ms against
///   5.8-5.9 ms while a large component compiled (1.46-1.93x their idle
///   p99, against 2.24-2.43x).
pub(super) fn count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The lanes' inboxes, and where a connection goes when no lane takes it.
pub(super) struct Lanes {
    inboxes: Vec<mpsc::UnboundedSender<std::net::TcpStream>>,
    next: usize,
    front: Arc<Front>,
}

impl Lanes {
    /// Starts `count` lanes (at least one). They stop once `Lanes` is
    /// dropped, closing the connections they serve.
    pub(super) fn start(front: Arc<Front>, count: usize) -> std::io::Result<Lanes> {
        let mut inboxes = Vec::new();
        for n in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (tx, rx) = mpsc::unbounded_channel();
            let front = front.clone();
            std::thread::Builder::new()
                .name(format!("skillhost-lane-{n}"))
                .spawn(move || serve_lane(&runtime, front, rx))?;
            inboxes.push(tx);
        }
        Ok(Lanes {
            inboxes,
            next: 0,
            front,
        })
    }

    /// Hands `stream` to the next lane; serves it on the calling runtime
    /// if that lane is gone (its thread panicked) or it cannot be moved.
    pub(super) fn serve(&mut self, stream: tokio::net::TcpStream) {
        let stream = match stream.into_std() {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("cannot hand a connection to a lane: {e}");
                return;
            }
        };
        let lane = self.next % self.inboxes.len();
        self.next = self.next.wrapping_add(1);
        let Err(mpsc::error::SendError(stream)) = self.inboxes[lane].send(stream) else {
            return;
        };
        tracing::warn!("connection lane {lane} has stopped; serving its connection elsewhere");
        super::serve_connection(self.front.clone(), stream);
    }
}

/// Serves the connections that arrive in `inbox` until it closes; the
/// runtime, dropped by the caller, then ends those still open.
fn serve_lane(
    runtime: &tokio::runtime::Runtime,
    front: Arc<Front>,
    mut inbox: mpsc::UnboundedReceiver<std::net::TcpStream>,
) {
    runtime.block_on(async move {
        while let Some(stream) = inbox.recv().await {
            super::serve_connection(front.clone(), stream);
        }
    });
}
