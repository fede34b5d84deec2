//! What a handler, pipeline, model or template answers: an output or a
//! classified failure (the host's own classes declared once), and how a
//! tool is described to a model.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize, Serializer};

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
}
