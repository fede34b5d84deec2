//! Model providers for tier 2.
//!
//! One small trait, [`Provider`], with three implementations:
//! - [`OpenAiProvider`]: the Chat Completions wire format, which OpenAI,
//!   Ollama, vLLM, llama.cpp's server, LM Studio and OpenRouter all speak;
//! - [`AnthropicProvider`]: the Anthropic Messages API (`tool_use` /
//!   `tool_result` content blocks);
//! - [`ScriptedProvider`]: replays a file of answers, so that tests and
//!   offline demos exercise the model loop without a network.
//!
//! The conversation types ([`ChatRequest`], [`Message`], ...) are neutral:
//! each provider maps them to its own wire format, so the loop above never
//! sees a vendor's JSON. Tool-call arguments stay the raw text the model
//! sent, valid JSON or not, because the loop must be able to show the model
//! exactly what it got wrong.
//!
//! Configuration is the `[model]` table of `skillhost.toml`
//! ([`ModelConfig`]), overridable from the command line. API keys are read
//! from an environment variable whose *name* is configured; the key itself
//! is never logged, printed or written.

mod anthropic;
mod config;
mod http;
mod openai;
mod scripted;

use serde::{Deserialize, Serialize};

use crate::types::BoxFuture;
pub use crate::types::ToolSpec;

pub use anthropic::AnthropicProvider;
pub use config::ModelConfig;
pub use http::HttpOptions;
pub use openai::OpenAiProvider;
pub use scripted::{ScriptToolCall, ScriptTurn, ScriptUsage, ScriptedProvider};

/// `max_tokens` of every request that sets none, for every provider
/// (`[model] max_tokens` changes it). Without one, an OpenAI-compatible
/// server such as llama.cpp's generates until its context is full: a
/// rambling small model takes minutes, and the server keeps generating
/// after the client gave up. 1024 tokens hold a tool call or a page of
/// answer; a skill that needs longer answers raises it.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// How a provider samples: the answer's length cap, and a temperature and
/// a sampling seed only when configured (else the server's defaults apply).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sampling {
    pub max_tokens: u32,
    pub temperature: Option<f64>,
    /// Sent as `seed` by OpenAI-compatible providers (llama.cpp, Ollama
    /// and OpenAI honour it); the Anthropic API has no such field.
    pub seed: Option<u64>,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            max_tokens: DEFAULT_MAX_TOKENS,
            temperature: None,
            seed: None,
        }
    }
}

impl Sampling {
    /// `req`'s own `max_tokens` wins over the provider's.
    pub(crate) fn for_request(self, req: &ChatRequest) -> Sampling {
        Sampling {
            max_tokens: req.max_tokens.unwrap_or(self.max_tokens),
            ..self
        }
    }

    /// Sets `max_tokens` when given (`None` keeps the default).
    pub(crate) fn with_max_tokens(self, max_tokens: Option<u32>) -> Sampling {
        Sampling {
            max_tokens: max_tokens.unwrap_or(self.max_tokens),
            ..self
        }
    }
}

/// One request to a model: the whole conversation so far. Providers are
/// stateless; the caller keeps the transcript and sends it every turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The system prompt. Anthropic takes it as a top-level field, OpenAI
    /// as a first `system` message; the provider decides.
    pub system: Option<String>,
    pub messages: Vec<Message>,
    /// Tools the model may call this turn. Empty means no tools are offered.
    pub tools: Vec<ToolSpec>,
    /// Overrides the configured `max_tokens` for this request; `None`
    /// sends the configured one, else [`DEFAULT_MAX_TOKENS`].
    pub max_tokens: Option<u32>,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User(String),
    /// What the model said; `tool_calls` is empty for a plain answer.
    Assistant {
        text: Option<String>,
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, answering the call with `call_id`.
    /// `is_error` tells the model the call failed (Anthropic has a field
    /// for it; for OpenAI the content is prefixed with `Error: `).
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
        /// What the host did about this result (`Recovery applied: ...`);
        /// the model reads it first, in brackets, before the result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

/// A tool result's text as the model reads it: the host's note first, in
/// brackets, then `error_marker` (how a format without an error flag says
/// the call failed; empty otherwise), then the result.
pub(crate) fn tool_result_text(note: Option<&str>, error_marker: &str, content: &str) -> String {
    match note {
        Some(note) => format!("[{note}] {error_marker}{content}"),
        None => format!("{error_marker}{content}"),
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call; the result must quote it back.
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model sent them. May be invalid JSON:
    /// the loop parses them and tells the model when they do not parse.
    pub arguments: String,
}

/// Token counts as the provider reported them (0 when it did not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// The model's answer to one [`ChatRequest`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The text part of the answer, if any (may accompany tool calls).
    pub text: Option<String>,
    /// Tool calls, in the order the model made them.
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// Size of the request body sent (0 for the scripted provider).
    pub request_bytes: usize,
    /// Size of the response body received (0 for the scripted provider).
    pub response_bytes: usize,
    /// Attempts repeated after a 429 or 5xx before this answer came.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A model the host can talk to.
pub trait Provider: Send + Sync {
    /// `PROVIDER:MODEL`, e.g. `openai:gpt-4o-mini`, for logs and records.
    fn name(&self) -> String;

    /// Sends the conversation and returns the model's next turn.
    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>>;
}

/// Why a model call or the model configuration failed. Every message names
/// what the user can act on (the URL, the status, the variable) and never
/// contains an API key.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The server could not be reached at all (refused, DNS, TLS...).
    #[error("model server unreachable at {url}: {cause}")]
    Unreachable { url: String, cause: String },

    /// The server accepted the connection but did not answer in time:
    /// within one attempt's `timeout_ms`, or within what was left of the
    /// call's `total_timeout_ms` (`setting` says which).
    #[error("model server at {url} did not answer within {timeout:?} (raise [model] {setting})")]
    Timeout {
        url: String,
        timeout: std::time::Duration,
        setting: &'static str,
    },

    /// A non-success status (after retries, for 5xx).
    #[error(
        "model server at {url} answered HTTP {status} (after {attempts} attempt(s)): {excerpt}"
    )]
    Status {
        status: u16,
        url: String,
        attempts: u32,
        /// The start of the body, or the API's error message.
        excerpt: String,
    },

    /// HTTP 429 on every attempt.
    #[error(
        "model server at {url} kept rate-limiting (HTTP 429) after {attempts} attempt(s): {excerpt}"
    )]
    RateLimited {
        url: String,
        attempts: u32,
        excerpt: String,
    },

    /// A success status with a body that is not the expected shape.
    #[error("malformed response from {url}: {what}")]
    Protocol { url: String, what: String },

    /// The configuration cannot produce a provider.
    #[error("model configuration: {0}")]
    Config(String),

    /// The scripted provider has answered every turn of its script.
    #[error(
        "script {path} is exhausted: all {turns} turn(s) were used and the model was asked again"
    )]
    ScriptExhausted { path: String, turns: usize },

    /// The script file cannot be read or parsed.
    #[error("invalid script {path}: {reason}")]
    InvalidScript { path: String, reason: String },

    /// A script turn that simulates a provider failure (`{"error": "..."}`).
    #[error("scripted model error: {0}")]
    Scripted(String),
}

impl LlmError {
    /// Attempts repeated after a 429 or 5xx before the call gave up.
    pub fn retries(&self) -> u32 {
        match self {
            LlmError::Status { attempts, .. } | LlmError::RateLimited { attempts, .. } => {
                attempts.saturating_sub(1)
            }
            _ => 0,
        }
    }
}

/// At most `max` characters of `s`, with a marker when cut. Used for body
/// excerpts in errors, so one huge HTML error page does not flood a log.
pub(crate) fn excerpt(s: &str, max: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((cut, _)) => format!("{}…", &s[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_note_is_read_before_the_error_marker() {
        assert_eq!(
            tool_result_text(Some("Recovery applied: retried"), "Error: ", "boom"),
            "[Recovery applied: retried] Error: boom"
        );
        assert_eq!(tool_result_text(None, "Error: ", "boom"), "Error: boom");
        assert_eq!(tool_result_text(None, "", "fine"), "fine");
    }

    #[test]
    fn excerpt_cuts_on_char_boundary() {
        assert_eq!(excerpt("  héllo ", 10), "héllo");
        assert_eq!(excerpt("héllo", 2), "hé…");
    }
}
