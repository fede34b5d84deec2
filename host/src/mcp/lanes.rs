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
//! lane gives up is work stealing: a connection stays on its lane. So each
//! new connection goes to the lane with the fewest open (lanes that tie
//! take turns): dealt in turn regardless, connections that close would
//! leave the long-lived ones piled on whichever lanes their turns fell to.
//! A session opened through one lane may be used through a connection on
//! another: rmcp's session worker lives on the lane that opened it and
//! talks to the others over channels, which work across runtimes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    inboxes: Vec<mpsc::UnboundedSender<(std::net::TcpStream, Seat)>>,
    dealer: Dealer,
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
            dealer: Dealer::new(inboxes.len()),
            inboxes,
            front,
        })
    }

    /// Hands `stream` to the lane with the fewest open connections; serves
    /// it on the calling runtime if that lane is gone (its thread
    /// panicked: it is dealt nothing more) or it cannot be moved.
    pub(super) fn serve(&mut self, stream: tokio::net::TcpStream) {
        let stream = match stream.into_std() {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("cannot hand a connection to a lane: {e}");
                return;
            }
        };
        let Some((lane, seat)) = self.dealer.deal() else {
            super::serve_connection(self.front.clone(), stream, None);
            return;
        };
        let Err(mpsc::error::SendError((stream, _seat))) = self.inboxes[lane].send((stream, seat))
        else {
            return;
        };
        tracing::warn!("connection lane {lane} has stopped; its connections are served elsewhere");
        self.dealer.retire(lane);
        super::serve_connection(self.front.clone(), stream, None);
    }
}

/// Serves the connections that arrive in `inbox` until it closes; the
/// runtime, dropped by the caller, then ends those still open.
fn serve_lane(
    runtime: &tokio::runtime::Runtime,
    front: Arc<Front>,
    mut inbox: mpsc::UnboundedReceiver<(std::net::TcpStream, Seat)>,
) {
    runtime.block_on(async move {
        while let Some((stream, seat)) = inbox.recv().await {
            super::serve_connection(front.clone(), stream, Some(seat));
        }
    });
}

/// A connection's place on its lane: the lane counts it as open until the
/// seat is dropped, which its connection's task does when it ends.
pub(super) struct Seat(Arc<AtomicUsize>);

impl Drop for Seat {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Which lane a new connection goes to: the one with the fewest open;
/// among those that tie, the first at or after the one after the last
/// dealt, so that equal lanes take turns.
struct Dealer {
    /// Open connections per lane; `None` for a lane that has stopped.
    open: Vec<Option<Arc<AtomicUsize>>>,
    next: usize,
}

impl Dealer {
    fn new(lanes: usize) -> Dealer {
        Dealer {
            open: (0..lanes)
                .map(|_| Some(Arc::new(AtomicUsize::new(0))))
                .collect(),
            next: 0,
        }
    }

    /// The lane for a new connection and its seat there; `None` once every
    /// lane has stopped.
    fn deal(&mut self) -> Option<(usize, Seat)> {
        let lanes = self.open.len();
        let (lane, open) = (0..lanes)
            .map(|i| (self.next + i) % lanes)
            .filter_map(|lane| Some((lane, self.open[lane].as_ref()?)))
            .min_by_key(|(_, open)| open.load(Ordering::Relaxed))?;
        open.fetch_add(1, Ordering::Relaxed);
        self.next = (lane + 1) % lanes;
        Some((lane, Seat(open.clone())))
    }

    /// `lane` has stopped: nothing more is dealt to it.
    fn retire(&mut self, lane: usize) {
        if let Some(open) = self.open.get_mut(lane) {
            *open = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes_of(dealer: &mut Dealer, n: usize) -> (Vec<usize>, Vec<Seat>) {
        (0..n).map(|_| dealer.deal().expect("a lane")).unzip()
    }

    #[test]
    fn lanes_with_as_many_open_connections_take_turns() {
        let mut dealer = Dealer::new(3);
        let (lanes, seats) = lanes_of(&mut dealer, 6);
        assert_eq!(lanes, [0, 1, 2, 0, 1, 2]);
        drop(seats);
        // All closed: the turns go on from where they were.
        let (lanes, _seats) = lanes_of(&mut dealer, 3);
        assert_eq!(lanes, [0, 1, 2]);
    }

    #[test]
    fn a_new_connection_goes_to_the_lane_whose_connections_closed() {
        let mut dealer = Dealer::new(2);
        let (first, long_lived) = dealer.deal().expect("a lane");
        let (second, short) = dealer.deal().expect("a lane");
        assert_eq!((first, second), (0, 1));
        drop(short);
        // In turn it would be lane 0 again, beside the long-lived one.
        let (third, _another) = dealer.deal().expect("a lane");
        assert_eq!(third, 1);
        drop(long_lived);
        let (fourth, _) = dealer.deal().expect("a lane");
        assert_eq!(fourth, 0, "lane 0 is empty now, lane 1 holds one");
    }

    #[test]
    fn a_stopped_lane_is_dealt_nothing_and_none_is_left_when_all_stopped() {
        let mut dealer = Dealer::new(2);
        dealer.retire(0);
        let (lanes, _seats) = lanes_of(&mut dealer, 3);
        assert_eq!(lanes, [1, 1, 1]);
        dealer.retire(1);
        assert!(dealer.deal().is_none());
    }
}
