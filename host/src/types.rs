//! Values and errors every stage shares: a handler's answer and failure,
//! the failure classes the host itself raises, a service's refusal, a
//! tool's description, an error's causes on one line, bytes as hex, the
//! host's own regex patterns. This module depends on nothing in the crate.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize, Serializer};

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

/// A successful answer of a handler, pipeline, model or template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Output {
    pub body: String,
    pub content_type: String,
    pub flags: Vec<String>,
}

/// A classified failure: from the handler, or from the host (limits, traps,
/// denials).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub class: FailureClass,
    pub message: String,
}

impl Failure {
    pub fn new(class: impl Into<FailureClass>, message: impl Into<String>) -> Self {
        Failure {
            class: class.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.class, self.message)
    }
}

/// Declares the host's own failure classes once: the variant and the name
/// runs are stored, shown and matched by (learned rules name classes).
macro_rules! failure_classes {
    ($($(#[$doc:meta])* $variant:ident,)*) => {
        /// Why a run, call or step failed. The host's own classes are
        /// variants; a handler, tool or validator may name any other class
        /// (an identifier), kept as `Other`.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum FailureClass {
            $($(#[$doc])* $variant,)*
            /// A class the host does not raise itself.
            Other(String),
        }

        impl FailureClass {
            pub fn as_str(&self) -> &str {
                match self {
                    $(FailureClass::$variant => stringify!($variant),)*
                    FailureClass::Other(s) => s,
                }
            }

            /// The host's class of this name, else `Other`.
            pub fn parse(name: &str) -> Self {
                match name {
                    $(stringify!($variant) => FailureClass::$variant,)*
                    other => FailureClass::Other(other.to_owned()),
                }
            }
        }
    };
}

failure_classes! {
    /// A time, memory, size or count limit was reached.
    LimitExceeded,
    /// An answer over the output limit.
    OutputTooLarge,
    /// The guest trapped (not a limit).
    Trap,
    /// A capability or policy refused the call.
    Denied,
    /// The handler could not be read, compiled or instantiated.
    HandlerUnavailable,
    /// The skill's handler is of a gated source and not approved for
    /// these exact bytes (see the `gate` module).
    HandlerNotApproved,
    /// A handler failed with a class that is not an identifier.
    InvalidFailure,
    /// A skill's declared pipeline does not parse.
    InvalidPipeline,
    /// A prevention rule found a required context field missing.
    RequiredField,
    /// The model provider failed.
    ModelError,
    /// The model loop ran out of steps.
    StepLimitExceeded,
    /// A run's model calls used up its token or time budget (`[agent]
    /// max_run_tokens`, `max_run_model_ms`).
    ModelBudgetExceeded,
    /// A nested run could not start.
    RunError,
    /// The host is shutting down.
    Unavailable,
    /// No skill by that name.
    UnknownSkill,
    /// A nested skill answered nothing.
    NoOutput,
    /// No tool by that name.
    UnknownTool,
    /// A tool's arguments do not fit its schema.
    InvalidArguments,
    /// A caller's context values do not fit the skill's declared fields.
    InvalidContext,
    /// Nested tool calls went too deep.
    TooManySteps,
    /// A pipeline step failed.
    PipelineError,
    /// No skill matches the task.
    NoMatch,
    /// The sandbox could not be set up.
    SandboxError,
    /// A file asked for does not exist.
    NotFound,
    /// A file over the size a tool or the server reads or writes.
    FileTooLarge,
    /// A file could not be read or written.
    FileError,
    /// A file that is not text where text was asked for.
    BinaryFile,
    /// A tool's HTTP request failed.
    HttpError,
    /// Skills calling skills went too deep.
    DepthExceeded,
}

impl From<&str> for FailureClass {
    fn from(s: &str) -> Self {
        FailureClass::parse(s)
    }
}

impl From<String> for FailureClass {
    fn from(s: String) -> Self {
        match FailureClass::parse(&s) {
            FailureClass::Other(_) => FailureClass::Other(s),
            known => known,
        }
    }
}

impl From<&FailureClass> for FailureClass {
    fn from(c: &FailureClass) -> Self {
        c.clone()
    }
}

impl fmt::Display for FailureClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// By name, so reports list classes alphabetically.
impl Ord for FailureClass {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for FailureClass {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq<str> for FailureClass {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for FailureClass {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for FailureClass {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FailureClass {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Cow::<str>::deserialize(d).map(|s| FailureClass::from(s.into_owned()))
    }
}

/// An error and every cause under it on one line, `error: cause: cause`,
/// as anyhow's `{:#}` prints them: for messages that leave as text (tool
/// results, run records) from errors that keep their causes as sources.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

/// A service's answer when it could not serve a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    #[error("denied: {0}")]
    Denied(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("{0}")]
    Failed(String),
    /// A size limit or quota; the text names it and the figures.
    #[error("limit: {0}")]
    Limit(String),
}

/// A share (0 to 1) in the configuration: anything else is a typo that
/// would silently turn a threshold off, so it is refused.
pub fn share<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!(
            "{v} is not a share: use a number from 0 to 1 (0.6 is 60%)"
        )))
    }
}

/// A calendar time in UTC, from seconds since the Unix epoch (proleptic
/// Gregorian; Howard Hinnant's civil-from-days).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
}

impl UtcTime {
    pub fn from_unix(secs: i64) -> Self {
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        UtcTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day: doy - (153 * mp + 2) / 5 + 1,
            hour: rem / 3_600,
            minute: rem % 3_600 / 60,
            second: rem % 60,
        }
    }
}

/// `bytes` as lowercase hex digits: how content hashes are written
/// (`sha256:` and these), and short ids cut from them.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// A regex from a pattern written in this crate's source (`'static`, so
/// never from input). The tests that use a pattern compile it, so a bad
/// one is a bug in the host: it panics, naming the pattern.
#[allow(
    clippy::expect_used,
    reason = "the pattern is a constant of the host, checked by its tests"
)]
pub(crate) fn constant_regex(pattern: &'static str) -> regex::Regex {
    regex::Regex::new(pattern).expect(pattern)
}

/// Describes a tool to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object describing the arguments.
    pub parameters: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_classes_round_trip_by_name_and_others_are_kept() {
        for c in [
            FailureClass::LimitExceeded,
            FailureClass::PipelineError,
            FailureClass::SandboxError,
        ] {
            assert_eq!(FailureClass::parse(c.as_str()), c);
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<FailureClass>(&json).unwrap(), c);
        }
        let other = FailureClass::from("TimezoneError");
        assert_eq!(other, FailureClass::Other("TimezoneError".into()));
        assert_eq!(other.to_string(), "TimezoneError");
        assert_eq!(serde_json::to_string(&other).unwrap(), "\"TimezoneError\"");
    }

    #[test]
    fn a_chain_shows_every_cause() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot set up")]
        struct Outer(#[source] std::io::Error);
        let e = Outer(std::io::Error::other("disk full"));
        assert_eq!(Chain(&e).to_string(), "cannot set up: disk full");
    }
}
