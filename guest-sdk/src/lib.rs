//! Write skillhost skill handlers in Rust.
//!
//! A handler is a plain function from a [`Task`] to a [`HandlerResult`],
//! exported with one macro. Build it with
//! `cargo build --target wasm32-wasip2 --release` and point the skill's
//! `metadata.skillhost.handler` at the `.wasm` file.
//!
//! ```no_run
//! use skillhost_guest::{Failure, HandlerResult, Output, Task};
//!
//! fn greet(task: Task) -> HandlerResult {
//!     // Typed access to the context the host built from the skill's
//!     // declared `context_fields` and what the caller gave.
//!     let name: String = task.field("name")?;
//!     if name.trim().is_empty() {
//!         return Err(Failure::new("InvalidInput", "context field `name` is empty"));
//!     }
//!     skillhost_guest::log::info(&format!("greeting {name}"));
//!     Ok(Output::text(format!("Hello, {name}! You asked: {}", task.description)))
//! }
//!
//! skillhost_guest::export_handler!(greet);
//! ```
//!
//! Everything the handler can reach beyond pure computation goes through
//! the host ([`log`], [`tools`], [`model`], [`kv`]) and is checked against
//! the skill's grants when it is called: a call without the grant returns
//! [`HostError::Denied`], it does not trap.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "handler",
        pub_export_macro: true,
        export_macro_name: "__export_handler_world",
        default_bindings_module: "skillhost_guest::bindings",
    });
}

use bindings::skillhost::skill::host as wit_host;
use bindings::skillhost::skill::types as wit;

/// What a handler returns.
pub type HandlerResult = Result<Output, Failure>;

/// The task the host asks the handler to perform.
#[derive(Debug, Clone)]
pub struct Task {
    /// The user's request, verbatim.
    pub description: String,
    /// The context: declared field defaults, the caller's values and any
    /// fields the host's rules set.
    pub context: Map<String, Value>,
}

impl Task {
    /// A field of the context, deserialised. A missing field or one of the
    /// wrong type is an `InvalidInput` failure naming the field.
    pub fn field<T: DeserializeOwned>(&self, name: &str) -> Result<T, Failure> {
        let value = self.context.get(name).ok_or_else(|| {
            Failure::new("InvalidInput", format!("context field `{name}` is missing"))
        })?;
        serde_json::from_value(value.clone()).map_err(|e| {
            Failure::new(
                "InvalidInput",
                format!("context field `{name}` has the wrong type: {e}"),
            )
        })
    }

    /// A field of the context, or `None` when it is absent or null.
    pub fn field_opt<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, Failure> {
        match self.context.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.field(name).map(Some),
        }
    }

    /// A string field, empty when absent or not a string.
    pub fn str(&self, name: &str) -> &str {
        self.context.get(name).and_then(Value::as_str).unwrap_or("")
    }

    /// A boolean field, `false` when absent or not a boolean.
    pub fn flag(&self, name: &str) -> bool {
        self.context
            .get(name)
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The whole context deserialised into your own type.
    pub fn context_as<T: DeserializeOwned>(&self) -> Result<T, Failure> {
        serde_json::from_value(Value::Object(self.context.clone()))
            .map_err(|e| Failure::new("InvalidInput", format!("context: {e}")))
    }
}

/// A successful answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub body: String,
    pub content_type: String,
    pub flags: Vec<String>,
}

impl Output {
    /// A `text/plain` answer.
    pub fn text(body: impl Into<String>) -> Self {
        Self::with_type(body, "text/plain")
    }

    /// A `text/markdown` answer.
    pub fn markdown(body: impl Into<String>) -> Self {
        Self::with_type(body, "text/markdown")
    }

    /// An `application/json` answer.
    pub fn json<T: Serialize>(value: &T) -> Result<Self, Failure> {
        let body = serde_json::to_string_pretty(value)
            .map_err(|e| Failure::new("SerializationError", e.to_string()))?;
        Ok(Self::with_type(body, "application/json"))
    }

    pub fn with_type(body: impl Into<String>, content_type: &str) -> Self {
        Output {
            body: body.into(),
            content_type: content_type.to_owned(),
            flags: Vec::new(),
        }
    }

    /// Adds a machine-readable flag (e.g. `rephrased`).
    pub fn flag(mut self, flag: impl Into<String>) -> Self {
        self.flags.push(flag.into());
        self
    }
}

/// A classified failure: the class is what the host's learning loop groups
/// failures by, the message tells a person what to change.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub class: String,
    pub message: String,
}

impl Failure {
    pub fn new(class: impl Into<String>, message: impl Into<String>) -> Self {
        Failure {
            class: class.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.class, self.message)
    }
}

impl From<HostError> for Failure {
    fn from(e: HostError) -> Self {
        let class = match &e {
            HostError::Denied(_) => "Denied",
            HostError::NotFound(_) => "NotFound",
            HostError::Failed(_) => "HostCallFailed",
            HostError::Limit(_) => "LimitExceeded",
        };
        Failure::new(class, e.to_string())
    }
}

/// Why a host call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostError {
    /// The skill lacks the grant; the text names what was missing.
    Denied(String),
    NotFound(String),
    Failed(String),
    Limit(String),
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostError::Denied(m) => write!(f, "denied: {m}"),
            HostError::NotFound(m) => write!(f, "not found: {m}"),
            HostError::Failed(m) => write!(f, "failed: {m}"),
            HostError::Limit(m) => write!(f, "limit: {m}"),
        }
    }
}

impl std::error::Error for HostError {}

impl From<wit_host::HostError> for HostError {
    fn from(e: wit_host::HostError) -> Self {
        match e {
            wit_host::HostError::Denied(m) => HostError::Denied(m),
            wit_host::HostError::NotFound(m) => HostError::NotFound(m),
            wit_host::HostError::Failed(m) => HostError::Failed(m),
            wit_host::HostError::Limit(m) => HostError::Limit(m),
        }
    }
}

/// Logging to the run's log.
pub mod log {
    use super::wit_host::{Level, log};

    pub fn debug(message: &str) {
        log(Level::Debug, message);
    }
    pub fn info(message: &str) {
        log(Level::Info, message);
    }
    pub fn warn(message: &str) {
        log(Level::Warn, message);
    }
    pub fn error(message: &str) {
        log(Level::Error, message);
    }
}

/// Host tools (needs the tool in the skill's `tools` grant).
pub mod tools {
    use super::{HostError, Serialize, Value, wit_host};

    /// Calls a host tool with JSON arguments and parses its JSON result.
    pub fn call<A: Serialize>(name: &str, args: &A) -> Result<Value, HostError> {
        let args = serde_json::to_string(args).map_err(|e| HostError::Failed(e.to_string()))?;
        let out = wit_host::call_tool(name, &args)?;
        serde_json::from_str(&out).map_err(|e| HostError::Failed(format!("tool result: {e}")))
    }
}

/// The configured model (needs the `llm` grant).
pub mod model {
    use super::{HostError, wit_host};

    pub fn complete(system: Option<&str>, prompt: &str) -> Result<String, HostError> {
        Ok(wit_host::complete(system, prompt)?)
    }
}

/// The skill's private key-value store (needs the `kv` grant).
pub mod kv {
    use super::{HostError, wit_host};

    pub fn get(key: &str) -> Result<Option<Vec<u8>>, HostError> {
        Ok(wit_host::kv_get(key)?)
    }
    pub fn set(key: &str, value: &[u8]) -> Result<(), HostError> {
        Ok(wit_host::kv_set(key, value)?)
    }
    pub fn delete(key: &str) -> Result<(), HostError> {
        Ok(wit_host::kv_delete(key)?)
    }
}

/// Glue used by [`export_handler!`]: decodes the task, runs the handler and
/// encodes its result. Not part of the public API.
#[doc(hidden)]
pub fn __dispatch(
    task: wit::Task,
    f: fn(Task) -> HandlerResult,
) -> Result<wit::Output, wit::Failure> {
    let context = match serde_json::from_str::<Value>(&task.context_json) {
        Ok(Value::Object(map)) => map,
        Ok(Value::Null) => Map::new(),
        Ok(other) => {
            return Err(wit::Failure {
                class: "InvalidInput".into(),
                message: format!("context must be a JSON object, got {other}"),
            });
        }
        Err(e) => {
            return Err(wit::Failure {
                class: "InvalidInput".into(),
                message: format!("context is not valid JSON: {e}"),
            });
        }
    };
    let task = Task {
        description: task.description,
        context,
    };
    match f(task) {
        Ok(o) => Ok(wit::Output {
            body: o.body,
            content_type: o.content_type,
            flags: o.flags,
        }),
        Err(e) => Err(wit::Failure {
            class: e.class,
            message: e.message,
        }),
    }
}

/// Exports a `fn(Task) -> HandlerResult` as the component's handler.
#[macro_export]
macro_rules! export_handler {
    ($handler:path) => {
        #[doc(hidden)]
        struct __SkillhostHandler;

        impl $crate::bindings::Guest for __SkillhostHandler {
            fn handle(
                task: $crate::bindings::skillhost::skill::types::Task,
            ) -> ::core::result::Result<
                $crate::bindings::skillhost::skill::types::Output,
                $crate::bindings::skillhost::skill::types::Failure,
            > {
                $crate::__dispatch(task, $handler)
            }
        }

        $crate::bindings::__export_handler_world!(__SkillhostHandler with_types_in $crate::bindings);
    };
}
