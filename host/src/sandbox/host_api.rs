//! What the sandbox itself links of the `skillhost:skill` package: `log`
//! of the shared host interface, and the `types` interface (types only).
//! Every other host function is its capability's, linked by
//! `grants::link_capabilities` through a projection of [`HostState`] onto
//! that capability's field of [`CallStates`]: `kv-get`, `kv-set` and
//! `kv-delete` in `grants/kv.rs`, `complete` in `grants/llm.rs`,
//! `call-tool` in `grants/tools.rs`.

use wasmtime::component::Linker;

use super::bindings::skillhost::skill::host::Level;
use super::state::HostState;

use crate::grants::{CallStates, CapabilityHost, HOST_INTERFACE, truncated};

/// The types interface of the handler world, as a component imports it.
const TYPES_INTERFACE: &str = "skillhost:skill/types@0.1.0";

/// Bytes of one log line a handler may write.
pub(crate) const MAX_LOG_LINE: usize = 4 * 1024;

/// One line a handler logged.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogLine {
    pub level: &'static str,
    pub message: String,
}

fn level_name(l: Level) -> &'static str {
    match l {
        Level::Trace => "trace",
        Level::Debug => "debug",
        Level::Info => "info",
        Level::Warn => "warn",
        Level::Error => "error",
    }
}

impl CapabilityHost for HostState {
    fn call_states(&mut self) -> &mut CallStates {
        &mut self.calls
    }
}

/// Links `types` and the sandbox's `log`, once per engine.
pub(super) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.instance(TYPES_INTERFACE)?;
    linker.instance(HOST_INTERFACE)?.func_wrap(
        "log",
        |mut store, (level, message): (Level, String)| {
            store.data_mut().log(level, &message);
            Ok(())
        },
    )
}

impl HostState {
    /// Keeps a line the handler logged, within the call's log budget.
    fn log(&mut self, level: Level, message: &str) {
        let message = truncated(message, MAX_LOG_LINE);
        if self.log_budget < message.len() {
            if !self.log_truncated {
                self.log_truncated = true;
                self.log.push(LogLine {
                    level: "warn",
                    message: "log budget exhausted; further lines dropped".into(),
                });
            }
            return;
        }
        self.log_budget -= message.len();
        self.log.push(LogLine {
            level: level_name(level),
            message,
        });
    }
}
