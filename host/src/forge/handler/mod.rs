//! Handlers written by a model: the parts that need no gate. The request
//! (the WIT, the guest SDK or the JS template, the skill's instructions and
//! its cases), the source taken out of the reply and checked before
//! anything builds it (a first, cheap filter), the build project the host
//! writes itself, the toolchain run in a bubblewrap box (`buildbox`: only
//! the toolchain, the SDK with its vendored crates, the slot and a target
//! folder of its own, at neutral paths; no network, no /proc) with limits
//! on memory, file size, processes and time, the compiler's
//! diagnostics filtered to those about the handler's own source, and the
//! SKILL.md that points at the admitted artifact. The loop that gates what
//! was built is `gate::author`, above `exec`. See docs/forge.md.
//!
//! - `request`: what the model is asked, and the source taken out of its
//!   reply.
//! - `check`: the source refused before anything builds it.
//! - `build`: the project the host writes and the toolchain it runs.
//! - `boxed`: a Rust build in the box, from a kit prepared once.
//! - `process`: the build's process: boxed or not, a group of its own, the
//!   time limit that kills it.
//! - `build_log`: the build's output, filtered line by line into
//!   `build.log`.
//! - `admit`: the SKILL.md that points at the admitted artifact.

mod admit;
mod boxed;
mod build;
mod build_log;
mod check;
mod process;
mod request;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::toolchain::buildbox::BuildBox;

pub use admit::{Admitted, admit, note_rejected, with_generated_handler};
pub use build::{BuildSettings, Built, build, write_project};
pub use build_log::log_tail;
pub use check::{
    CodeKind, CodeToken, check_source, code_tokens, first_difference, lexemes, read_calls,
    rustc_lexemes,
};
pub use request::{extract_source, follow_up, request};

/// The artifact's name in the skill folder once admitted.
pub const HANDLER_FILE: &str = "handler.wasm";
/// Largest source accepted from a reply.
pub const MAX_SOURCE_BYTES: usize = 256 << 10;

/// `[forge.handler]`: handlers written by the model (`forge handler`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HandlerConfig {
    /// Tries in all: the first, then one per retry with the build log or
    /// the gate report of the one before.
    pub attempts: u32,
    /// A build running longer is killed with its whole process group.
    pub build_timeout_secs: u64,
    /// The language when `--lang` is not given.
    pub lang: HandlerLang,
    /// The rustup toolchain Rust handlers build with. Unset: the one this
    /// binary was built with, else rustup's default. A build outside the
    /// repo does not see its rust-toolchain.toml.
    pub toolchain: Option<String>,
    /// componentize-js to build JS handlers with. Unset:
    /// `componentize-js` on PATH.
    pub componentize_js: Option<PathBuf>,
    /// The guest SDK crate. Unset: the checkout this binary was built from.
    pub guest_sdk: Option<PathBuf>,
    /// Where the build runs: `"bwrap"` (default), a bubblewrap box that
    /// sees only the toolchain, the SDK with its own vendored crates,
    /// the slot and a target folder of its own, at `/box` paths; or
    /// `"none"`, unboxed, which lets the model's source make the compiler
    /// read and quote any file the operator can (unsafe; every build logs
    /// a warning). Without bubblewrap, `"bwrap"` builds fail. Only the
    /// user's own `skillhost.toml` may say `"none"`: a workspace file
    /// saying it is refused (`config::Config::load`).
    pub build_box: BuildBox,
    /// Address space of each process of a build, in MiB (`RLIMIT_AS`).
    pub build_memory_mb: u64,
    /// The largest file a build may write, and the largest artifact the
    /// host reads, in MiB (`RLIMIT_FSIZE`); by default the sandbox's
    /// default `max_component_mb`, since a bigger component cannot run.
    pub build_max_file_mb: u64,
    /// Processes a build may run beyond those the user already runs
    /// (`RLIMIT_NPROC`).
    pub build_max_processes: u64,
}

impl Default for HandlerConfig {
    fn default() -> Self {
        HandlerConfig {
            attempts: 2,
            build_timeout_secs: 300,
            lang: HandlerLang::Rust,
            toolchain: None,
            componentize_js: None,
            guest_sdk: None,
            build_box: BuildBox::Bwrap,
            build_memory_mb: 4096,
            build_max_file_mb: crate::sandbox::SandboxConfig::default().max_component_mb,
            build_max_processes: 256,
        }
    }
}

/// The languages a handler can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HandlerLang {
    Rust,
    Js,
}

impl HandlerLang {
    pub fn flag(self) -> &'static str {
        match self {
            HandlerLang::Rust => "rust",
            HandlerLang::Js => "js",
        }
    }

    /// The fence tags a reply's source block may carry.
    fn fences(self) -> &'static [&'static str] {
        match self {
            HandlerLang::Rust => &["rust", "rs"],
            HandlerLang::Js => &["js", "javascript", "mjs"],
        }
    }

    /// What builds it, for messages.
    pub fn toolchain(self) -> &'static str {
        match self {
            HandlerLang::Rust => "cargo with the wasm32-wasip2 target",
            HandlerLang::Js => "componentize-js (node and @bytecodealliance/componentize-js)",
        }
    }
}

/// A source refused before anything builds it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("the reply holds no ```{fence} block with the handler's source")]
    NoSource { fence: &'static str },
    #[error("the source is {0} bytes, over the {MAX_SOURCE_BYTES}-byte cap")]
    TooLarge(usize),
    #[error("line {line}: {what}; it could read the host's files or environment while it builds")]
    Refused { line: usize, what: String },
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{what} is not available: {hint}")]
    ToolchainMissing { what: String, hint: String },
    #[error("the build failed ({status}):\n{log}")]
    Failed {
        status: String,
        log: String,
        /// A limit of the box refused it (`status` says which); its slot
        /// is removed.
        refused_by_limit: bool,
    },
    #[error("the build ran past its limit of {} s and was killed:\n{log}", .limit.as_secs())]
    TimedOut { limit: Duration, log: String },
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    GuestSdk(#[from] crate::toolchain::scaffold::ScaffoldError),
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> BuildError {
    let path = path.to_path_buf();
    move |source| BuildError::Io {
        action,
        path,
        source,
    }
}

/// A case shown to the model: what was asked and what the skill answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Example {
    pub task: String,
    pub context: Map<String, Value>,
    /// The answer, or `{"failure": CLASS, "message": ...}`.
    pub expected: Value,
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_defaults() {
        let c: HandlerConfig = toml::from_str("").expect("empty");
        assert_eq!(c.attempts, 2);
        assert_eq!(c.lang, HandlerLang::Rust);
        assert!(toml::from_str::<HandlerConfig>("lang = \"python\"").is_err());
        assert_eq!(
            c.build_box,
            BuildBox::Bwrap,
            "boxed unless the operator says not"
        );
        let none: HandlerConfig = toml::from_str("build_box = \"none\"").expect("none");
        assert_eq!(none.build_box, BuildBox::None);
        assert!(toml::from_str::<HandlerConfig>("build_box = \"docker\"").is_err());
    }
}
