//! Values and errors every stage shares: a handler's answer and failure,
//! the failure classes the host itself raises, a tool's description
//! (`answer`); a service's refusal, an error's causes on one line
//! (`errors`); a configuration share, a UTC time, bytes as hex, the
//! host's own regex patterns (`formats`); boxed futures (`future`).
//! This module depends on nothing in the crate.

mod answer;
mod errors;
mod formats;
mod future;
mod sync;

pub use answer::{Failure, FailureClass, Output, ToolSpec};
pub use errors::{Chain, ServiceError};
pub use formats::{UtcTime, share};
pub(crate) use formats::{constant_regex, hex};
pub use future::{BoxFuture, poll_here_first};
pub use sync::lock;
