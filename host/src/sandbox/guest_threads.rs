//! Where guest code runs when `dedicated_threads` is on: a runtime of
//! its own, and a spawned call that is cancelled with its caller.

/// The runtime guest calls run on: its own worker threads, sized to the
/// machine, and its own blocking pool for compiles.
pub(super) struct GuestRuntime {
    runtime: Option<tokio::runtime::Runtime>,
    pub(super) handle: tokio::runtime::Handle,
}

impl GuestRuntime {
    pub(super) fn start() -> std::io::Result<Self> {
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .thread_name("skillhost-guest")
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        Ok(GuestRuntime {
            runtime: Some(runtime),
            handle,
        })
    }
}

impl Drop for GuestRuntime {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which panics inside another runtime;
        // the calls still running end at their own deadlines.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// A spawned call that is cancelled when its caller stops waiting.
pub(super) struct AbortOnDrop<T>(pub(super) tokio::task::JoinHandle<T>);

impl<T> std::future::Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
