//! What a run tells its caller while it goes (a compile it waits for),
//! to a sink the caller sets for the task.

use std::sync::Arc;

use crate::sandbox;

/// What a run tells its caller while it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// The skill's handler is in no cache: this call waits for a compile
    /// (seconds for a 12 MB JavaScript or Python component).
    Compiling {
        skill: String,
        bytes: usize,
        tier: sandbox::Tier,
    },
}

/// Where a caller wants [`Progress`]: a terminal line, an MCP notification.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

tokio::task_local! {
    pub(super) static PROGRESS: ProgressSink;
}

/// Runs `work` (a run, or anything that runs skills) telling `sink` how it
/// goes. Scoped to the task, so concurrent requests each get their own.
pub async fn with_progress<F: std::future::Future>(sink: ProgressSink, work: F) -> F::Output {
    PROGRESS.scope(sink, work).await
}
