//! Futures: the boxed future every stage passes, and running one on this
//! thread when it ends at once.

pub use futures::future::BoxFuture;

/// Polls `work` once on this thread: its output if that finished it, else
/// the rest, boxed, for the caller to spawn where it should go on. For work
/// that usually ends at once, which spawning would cost a task and a
/// thread wake-up. The poll's waker does nothing; that is enough, because
/// a spawned task is polled again whoever woke it.
pub fn poll_here_first<F: std::future::Future>(
    work: F,
) -> Result<F::Output, std::pin::Pin<Box<F>>> {
    use futures::FutureExt;
    let mut work = Box::pin(work);
    (&mut work).now_or_never().ok_or(work)
}
