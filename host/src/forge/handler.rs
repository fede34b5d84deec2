//! Handlers written by a model: the parts that need no gate. The request
//! (the WIT, the guest SDK or the JS template, the skill's instructions and
//! its cases), the source taken out of the reply and checked before
//! anything builds it (a first, cheap filter), the build project the host
//! writes itself, the toolchain run in a bubblewrap box (`buildbox`: only
//! the toolchain, the SDK, the registry and the slot, no network, a
//! private /proc) with a time limit that kills it, the compiler's
//! diagnostics filtered to those about the handler's own source, and the
//! SKILL.md that points at the admitted artifact. The loop that gates what
//! was built is `gate::author`, above `exec`. See docs/forge.md.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::history::{self, Event, EventKind};
use super::writer::{self, Expect, Invalid, SkillWriter};
use super::{ForgeError, check_slug};
use crate::llm::{ChatRequest, Message};
use crate::skill::{Skill, content_version, parse_skill};
use crate::toolchain::buildbox::{self, BoxStatus, BuildBox, LogFilter, RustBox};

/// The artifact's name in the skill folder once admitted.
pub const HANDLER_FILE: &str = "handler.wasm";
/// The model's source as it was built, kept in the quarantine slot.
const BUILD_LOG: &str = "build.log";
/// The most of a build log fed back to the model or shown.
const LOG_TAIL_BYTES: usize = 6_000;
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
    /// sees only the toolchain, the SDK, the registry and the slot; or
    /// `"none"`, unboxed, which lets the model's source make the compiler
    /// read and quote any file the operator can (unsafe; every build logs
    /// a warning). Without bubblewrap, `"bwrap"` builds fail.
    pub build_box: BuildBox,
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
    Failed { status: String, log: String },
    #[error("the build ran past its limit of {} s and was killed:\n{log}", .limit.as_secs())]
    TimedOut { limit: Duration, log: String },
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    GuestSdk(#[from] crate::scaffold::ScaffoldError),
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

const SKILL_WIT: &str = include_str!("../../../wit/skill.wit");
const GUEST_SDK_DOCS: &str = include_str!("../../../guest-sdk/src/lib.rs");
const RUST_TEMPLATE: &str = include_str!("../../templates/rust/lib.rs");
const JS_TEMPLATE: &str = include_str!("../../templates/js/handler.js");

/// The first request: the contract, how to write to it, what the skill is
/// for and what it answered.
pub fn request(skill: &Skill, lang: HandlerLang, examples: &[Example]) -> ChatRequest {
    let (how, template) = match lang {
        HandlerLang::Rust => (
            format!(
                "Write the handler in Rust as the whole of `src/lib.rs` of a crate whose only dependency is the guest SDK `skillhost_guest`, documented here by its source:\n\n```rust\n{GUEST_SDK_DOCS}\n```\n\nA handler looks like this (the `{{{{name}}}}` placeholders are filled in):"
            ),
            format!("```rust\n{RUST_TEMPLATE}\n```"),
        ),
        HandlerLang::Js => (
            "Write the handler in JavaScript as one module built by componentize-js; it exports `handle(task)`, returns the output record or throws the failure record. A handler looks like this:".to_owned(),
            format!("```js\n{JS_TEMPLATE}\n```"),
        ),
    };
    let examples = examples
        .iter()
        .map(|e| serde_json::to_string(e).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let fence = lang.fences()[0];
    let build_rules = match lang {
        HandlerLang::Rust => format!(
            " It is built in a sandbox that holds only this crate and the SDK, and refused before it is built if it defines a macro (`macro_rules!`), declares a module in another file (`mod x;`), uses `extern crate`, names `include!`, `include_str!`, `include_bytes!`, `env!` or `option_env!`, or carries an attribute other than {}.",
            RUST_ATTRIBUTES
                .iter()
                .map(|a| format!("`#[{a}]`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        HandlerLang::Js => " It may import WIT interfaces only (`skillhost:skill/host`), never a file or a package.".to_owned(),
    };
    let system = format!(
        "You write skill handlers for skillhost: WebAssembly components of this WIT world `handler`:\n\n```wit\n{SKILL_WIT}\n```\n\n{how}\n\n{template}\n\n\
         Rules: the answer must be computed from the task and its context alone (no clock, no random numbers, no network, no files); \
         it must give exactly the expected answers of the cases, byte for byte. \
         Answer with one ```{fence} block holding the complete source and nothing the build must read besides it.{build_rules}"
    );
    let user = format!(
        "Skill `{}`: {}\n\nIts instructions:\n\n{}\n\nRecorded cases, one JSON object a line (task, context, expected answer):\n\n{}\n",
        skill.name,
        skill.description,
        skill.body.trim(),
        if examples.is_empty() {
            "(none)"
        } else {
            &examples
        }
    );
    ChatRequest {
        system: Some(system),
        messages: vec![Message::User(user)],
        tools: Vec::new(),
        max_tokens: None,
    }
}

/// The request for another try: the model's last reply and why it failed.
pub fn follow_up(req: &mut ChatRequest, reply: &str, feedback: &str) {
    req.messages.push(Message::Assistant {
        text: Some(reply.to_owned()),
        tool_calls: Vec::new(),
    });
    req.messages.push(Message::User(format!(
        "That handler was not accepted:\n\n{feedback}\n\nAnswer with the corrected complete source in one block."
    )));
}

/// The handler's source: the first fenced block tagged with the language.
pub fn extract_source(reply: &str, lang: HandlerLang) -> Result<String, SourceError> {
    let mut lines = reply.lines();
    while let Some(line) = lines.next() {
        let Some(tag) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        if !lang
            .fences()
            .contains(&tag.trim().to_ascii_lowercase().as_str())
        {
            continue;
        }
        let mut source = String::new();
        for l in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            source.push_str(l);
            source.push('\n');
        }
        if source.len() > MAX_SOURCE_BYTES {
            return Err(SourceError::TooLarge(source.len()));
        }
        return Ok(source);
    }
    Err(SourceError::NoSource {
        fence: lang.fences()[0],
    })
}

/// Refuses a source that could read the host while it builds.
pub fn check_source(source: &str, lang: HandlerLang) -> Result<(), SourceError> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(SourceError::TooLarge(source.len()));
    }
    match lang {
        HandlerLang::Rust => check_rust(source),
        HandlerLang::Js => check_js(source),
    }
}

/// Macros that read files or the environment at compile time, by any
/// name: `include_str` and the rest are refused wherever they are named
/// (a macro argument too); `env` where it is called or renamed.
static RUST_READS: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(
        r"\b(include_str|include_bytes|include|option_env)\b|\benv\s*(!|\bas\b)|\bas\s+env\b",
    )
    .expect("a valid pattern")
});
/// `mod x;`: a module read from another file (`mod $n;` in a macro too).
static RUST_OUT_OF_LINE: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"\bmod\s+(r#|\$\s*)?\w+\s*;").expect("a valid pattern")
});
/// The start of an attribute at a `#`: `#[`, `#![`, with any spacing.
static RUST_ATTRIBUTE_START: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"^#\s*!?\s*\[\s*").expect("a valid pattern")
});
/// `extern crate`, with any spacing.
static RUST_EXTERN_CRATE: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"\bextern\s+crate\b").expect("a valid pattern")
});
/// A macro called by a macro argument's name: `$m!(...)`.
static RUST_METAVAR_CALL: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"\$\s*\w+\s*!").expect("a valid pattern")
});
/// A macro defined by the handler.
static RUST_MACRO_RULES: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"\bmacro_rules\s*!").expect("a valid pattern")
});
/// Attributes a handler may carry; every other one (`path`, `link`,
/// `export_name`, `debugger_visualizer`, `cfg_attr` which could wrap them,
/// ...) is refused, and so is one whose name is a macro argument.
const RUST_ATTRIBUTES: &[&str] = &[
    "derive",
    "allow",
    "warn",
    "deny",
    "expect",
    "forbid",
    "inline",
    "cold",
    "must_use",
    "repr",
    "cfg",
    "doc",
    "serde",
    "non_exhaustive",
    "rustfmt",
    "test",
];

/// A first, cheap filter: refuses the spellings known to make the compiler
/// read the host (a file by `#[path]` or `include*!`, a variable by
/// `env!`), whether written out or assembled by a macro. Nothing relies
/// on it: the build runs in a box that has nothing of the host to read
/// (`buildbox`), and what the compiler says about files other than the
/// handler's is withheld.
fn check_rust(source: &str) -> Result<(), SourceError> {
    let code = blank_rust_literals(source);
    let refused = |at: usize, what: String| SourceError::Refused {
        line: code[..at].matches('\n').count() + 1,
        what,
    };
    if let Some(m) = RUST_READS.find(&code) {
        return Err(refused(
            m.start(),
            format!("it names `{}`", m.as_str().trim()),
        ));
    }
    if let Some((at, what)) = rust_attribute_refused(&code) {
        return Err(refused(at, what));
    }
    if let Some(m) = RUST_OUT_OF_LINE.find(&code) {
        return Err(refused(
            m.start(),
            format!("`{}` declares a module in another file", m.as_str()),
        ));
    }
    if let Some(m) = RUST_EXTERN_CRATE.find(&code) {
        return Err(refused(m.start(), "`extern crate` is not allowed".into()));
    }
    if let Some(m) = RUST_METAVAR_CALL.find(&code) {
        return Err(refused(
            m.start(),
            format!(
                "`{}` calls a macro named by a macro argument",
                m.as_str().split_whitespace().collect::<String>()
            ),
        ));
    }
    if let Some(m) = RUST_MACRO_RULES.find(&code) {
        return Err(refused(
            m.start(),
            "a handler may not define macros (`macro_rules!`): a macro can assemble attributes and macro calls that no check of the source sees; write the code out".into(),
        ));
    }
    Ok(())
}

/// Every `#` of `code` (literals and comments blanked) must begin an
/// attribute a handler may use, or be the `#` of a raw identifier
/// (`r#type`); else where and why it is refused.
fn rust_attribute_refused(code: &str) -> Option<(usize, String)> {
    for (at, _) in code.match_indices('#') {
        let before = &code[..at];
        let raw_ident = before.ends_with('r')
            && !before[..before.len() - 1]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            && code[at + 1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_');
        if raw_ident {
            continue;
        }
        let rest = &code[at..];
        let Some(start) = RUST_ATTRIBUTE_START.find(rest) else {
            let next = rest[1..].trim_start();
            return Some((
                at,
                if next.starts_with('$') || next.starts_with("!$") {
                    "an attribute built from a macro argument is not one a handler may use".into()
                } else {
                    "a `#` that does not start an attribute a handler may use".into()
                },
            ));
        };
        let name_at = at + start.end();
        let name: String = code[name_at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            let what = if code[name_at..].starts_with('$') {
                "an attribute named by a macro argument (`#[$...]`) is not one a handler may use"
                    .to_owned()
            } else {
                "an attribute whose name is not a plain word is not one a handler may use"
                    .to_owned()
            };
            return Some((name_at, what));
        }
        if !RUST_ATTRIBUTES.contains(&name.as_str()) {
            return Some((
                name_at,
                format!("the attribute `{name}` is not one a handler may use"),
            ));
        }
    }
    None
}

/// `source` with comments and the contents of string and character
/// literals blanked out (newlines kept), so that what is checked is code.
fn blank_rust_literals(source: &str) -> String {
    let s: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < s.len() && s[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && s.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(s[i]));
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && next == Some('r')))
            && !prev_is_ident(&s, i)
            && raw_string_start(&s, i + usize::from(c == 'b')).is_some()
        {
            let start = i + usize::from(c == 'b');
            let hashes = raw_string_start(&s, start).unwrap_or(0);
            // r, the hashes, the quote
            let open = start + 1 + hashes + 1;
            out.extend(std::iter::repeat_n(' ', open - i));
            i = open;
            while i < s.len() {
                if s[i] == '"' && (1..=hashes).all(|k| s.get(i + k) == Some(&'#')) {
                    out.extend(std::iter::repeat_n(' ', hashes + 1));
                    i += hashes + 1;
                    break;
                }
                out.push(blank(s[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < s.len() && s[i] != '"' {
                if s[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < s.len() {
                    out.push(blank(s[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), else a lifetime.
            let end = if next == Some('\\') {
                (i + 2..s.len()).find(|&k| s[k] == '\'')
            } else if s.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.extend(std::iter::repeat_n(' ', end + 1 - i));
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_is_ident(s: &[char], i: usize) -> bool {
    i > 0 && (s[i - 1].is_alphanumeric() || s[i - 1] == '_')
}

/// At `s[i] == 'r'`: the number of `#` of a raw string starting here.
fn raw_string_start(s: &[char], i: usize) -> Option<usize> {
    if s.get(i) != Some(&'r') {
        return None;
    }
    let hashes = s[i + 1..].iter().take_while(|&&c| c == '#').count();
    (s.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
}

/// `import ... from "X"`, `import "X"`, `export ... from "X"`.
static JS_STATIC_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(
        r#"\b(?:import|export)\b[^;'"`]*?\bfrom\s*['"]([^'"]*)['"]|\bimport\s*['"]([^'"]*)['"]"#,
    )
    .expect("a valid pattern")
});
static JS_DYNAMIC: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"\b(import|require)\s*\(").expect("a valid pattern")
});
/// A WIT interface (`skillhost:skill/host`, `wasi:cli/environment@0.2.0`):
/// the only modules a handler may import.
static WIT_SPECIFIER: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"^[a-z][a-z0-9-]*:[a-z][a-z0-9-]*/[a-z][a-z0-9-]*(@[0-9A-Za-z.+-]+)?$")
        .expect("a valid pattern")
});

/// componentize-js bundles what a module imports: a handler may import
/// WIT interfaces only, never a file.
fn check_js(source: &str) -> Result<(), SourceError> {
    let line = |at: usize| source[..at].matches('\n').count() + 1;
    for c in JS_STATIC_IMPORT.captures_iter(source) {
        let Some(spec) = c.get(1).or_else(|| c.get(2)) else {
            continue;
        };
        if !WIT_SPECIFIER.is_match(spec.as_str()) {
            return Err(SourceError::Refused {
                line: line(spec.start()),
                what: format!(
                    "it imports `{}`, which is not a WIT interface",
                    spec.as_str()
                ),
            });
        }
    }
    if let Some(m) = JS_DYNAMIC.find(source) {
        return Err(SourceError::Refused {
            line: line(m.start()),
            what: format!("`{}` loads a module at run or build time", m.as_str()),
        });
    }
    Ok(())
}

/// How to build: where the toolchains and the shared cache are, and for
/// how long.
#[derive(Debug, Clone)]
pub struct BuildSettings {
    pub timeout: Duration,
    /// Shared by every build (`CARGO_TARGET_DIR`), so that the second build
    /// compiles only the handler.
    pub cache_dir: PathBuf,
    pub toolchain: Option<String>,
    pub componentize_js: Option<PathBuf>,
    pub guest_sdk: Option<PathBuf>,
    /// `[forge.handler] build_box`.
    pub build_box: BuildBox,
}

impl BuildSettings {
    /// From `[forge.handler]`, caching under `cache_dir`.
    pub fn new(config: &HandlerConfig, cache_dir: &Path) -> Self {
        BuildSettings {
            timeout: Duration::from_secs(config.build_timeout_secs.max(1)),
            cache_dir: cache_dir.join("forge-handler-build"),
            toolchain: config
                .toolchain
                .clone()
                .or_else(|| option_env!("RUSTUP_TOOLCHAIN").map(str::to_owned)),
            componentize_js: config.componentize_js.clone(),
            guest_sdk: config.guest_sdk.clone(),
            build_box: config.build_box,
        }
    }
}

/// A built artifact.
#[derive(Debug, Clone)]
pub struct Built {
    pub wasm: Vec<u8>,
    pub duration: Duration,
}

const CRATE: &str = "generated-handler";

/// Writes the build project into `slot`: the source and, for Rust, the
/// `Cargo.toml` the host writes itself (the guest SDK by path, nothing
/// else; no build script). For JS, the WIT beside `handler.js`.
pub fn write_project(
    slot: &Path,
    source: &str,
    lang: HandlerLang,
    settings: &BuildSettings,
) -> Result<(), BuildError> {
    let write = |rel: &str, text: &str| {
        let path = slot.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_err("create", parent))?;
        }
        fs::write(&path, text).map_err(io_err("write", &path))
    };
    match lang {
        HandlerLang::Rust => {
            let sdk = crate::scaffold::guest_sdk_dir(settings.guest_sdk.as_deref())?;
            let sdk_path = sdk
                .display()
                .to_string()
                .replace('\\', "\\\\")
                .replace('"', "\\\"");
            write(
                "Cargo.toml",
                &format!(
                    "[package]\nname = \"{CRATE}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\nbuild = false\nautobins = false\nautoexamples = false\nautotests = false\nautobenches = false\n\n\
                     [lib]\npath = \"src/lib.rs\"\ncrate-type = [\"cdylib\"]\n\n\
                     [dependencies]\nskillhost-guest = {{ path = \"{sdk_path}\" }}\n\n\
                     [workspace]\n\n\
                     [profile.release]\nopt-level = \"s\"\ncodegen-units = 1\nstrip = true\npanic = \"abort\"\n"
                ),
            )?;
            // The versions the host's own workspace pinned, where it has a
            // lock: the build resolves offline from what is already here.
            if let Some(lock) = sdk.parent().map(|p| p.join("Cargo.lock"))
                && let Ok(text) = fs::read_to_string(&lock)
            {
                write("Cargo.lock", &text)?;
            }
            write("src/lib.rs", source)
        }
        HandlerLang::Js => {
            write("handler.js", source)?;
            write("wit/skill.wit", SKILL_WIT)
        }
    }
}

/// Builds the project in `slot` (see [`write_project`]); the build's output
/// goes to `slot/build.log`.
pub fn build(
    slot: &Path,
    lang: HandlerLang,
    settings: &BuildSettings,
) -> Result<Built, BuildError> {
    match lang {
        HandlerLang::Rust => build_rust(slot, settings),
        HandlerLang::Js => build_js(slot, settings),
    }
}

/// Only what rustup and node need; no RUSTFLAGS, no proxies, no
/// credentials the host was started with.
fn cleared(program: &Path, slot: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear().current_dir(slot);
    for key in [
        "PATH",
        "HOME",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
    ] {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    cmd
}

/// Where `program` is on PATH.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The `bwrap` a boxed build runs in, or why there is none.
fn bwrap() -> Result<PathBuf, BuildError> {
    let path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    buildbox::find_bwrap(&path).ok_or_else(|| BuildError::ToolchainMissing {
        what: "bubblewrap (bwrap)".into(),
        hint: format!(
            "the forge builds a model's handler only inside a bubblewrap box; install it with `{}` (or `skillhost toolchain install rust`), or set [forge.handler] build_box = \"none\" to build unboxed, which lets the model's source read the operator's files (see docs/forge.md)",
            crate::toolchain::apt_install(&["bubblewrap"])
        ),
    })
}

/// The operator's CARGO_HOME: `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".cargo")))?;
    Some(home.canonicalize().unwrap_or(home))
}

fn warn_unboxed(lang: HandlerLang) {
    tracing::warn!(
        "building a model's {} handler without a box ([forge.handler] build_box = \"none\"): its source can make the build read and quote any file this user can read",
        lang.flag()
    );
}

fn build_rust(slot: &Path, settings: &BuildSettings) -> Result<Built, BuildError> {
    let missing = |hint: String| BuildError::ToolchainMissing {
        what: "cargo with the wasm32-wasip2 target".into(),
        hint,
    };
    // Fail closed before anything else: no box, no build.
    let bwrap = match settings.build_box {
        BuildBox::Bwrap => Some(bwrap()?),
        BuildBox::None => None,
    };
    // The toolchain's sysroot, asked of rustup's rustc (outside the box,
    // with nothing of the model's); the build runs that toolchain's own
    // cargo and rustc, not rustup's proxies.
    let rustc = on_path("rustc").ok_or_else(|| missing("no `rustc` on PATH".into()))?;
    let mut probe = cleared(&rustc, slot);
    if let Some(t) = &settings.toolchain {
        probe.env("RUSTUP_TOOLCHAIN", t);
    }
    // Never let rustup download a toolchain in the middle of a build.
    probe.env("RUSTUP_AUTO_INSTALL", "0");
    let sysroot = probe
        .args(["--print", "sysroot"])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| missing(format!("cannot run rustc: {e}")))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    let sysroot = sysroot.canonicalize().unwrap_or(sysroot);
    if !sysroot.join("lib/rustlib/wasm32-wasip2").is_dir() {
        return Err(missing(format!(
            "the toolchain {} has no wasm32-wasip2 target: rustup target add wasm32-wasip2{}",
            settings
                .toolchain
                .as_deref()
                .unwrap_or("(rustup's default)"),
            settings
                .toolchain
                .as_deref()
                .map(|t| format!(" --toolchain {t}"))
                .unwrap_or_default()
        )));
    }
    let cargo = sysroot.join("bin/cargo");
    if !cargo.is_file() {
        return Err(missing(format!(
            "the toolchain at {} has no bin/cargo (rustup component add cargo)",
            sysroot.display()
        )));
    }
    let cargo_home =
        cargo_home().ok_or_else(|| missing("neither CARGO_HOME nor a home folder".into()))?;
    fs::create_dir_all(&settings.cache_dir).map_err(io_err("create", &settings.cache_dir))?;
    let cache_dir = settings
        .cache_dir
        .canonicalize()
        .unwrap_or_else(|_| settings.cache_dir.clone());
    let slot = &slot.canonicalize().unwrap_or_else(|_| slot.to_path_buf());
    let paths = RustBox {
        sysroot,
        cargo_home,
        guest_sdk: crate::scaffold::guest_sdk_dir(settings.guest_sdk.as_deref())?,
        slot: slot.clone(),
        cache_dir,
    };
    let args = [
        "build",
        "--release",
        "--offline",
        "--target",
        "wasm32-wasip2",
        "--message-format=json",
        "--manifest-path",
        "Cargo.toml",
    ];
    let run = match &bwrap {
        Some(bwrap) => Run::boxed(bwrap, &paths.spec(), &cargo, &args)?,
        None => {
            warn_unboxed(HandlerLang::Rust);
            let mut cmd = Command::new(&cargo);
            cmd.env_clear().current_dir(slot).args(args);
            let home = std::env::var_os("HOME").unwrap_or_default();
            cmd.envs(paths.env(home, None, std::env::var_os("PATH")));
            Run::direct(cmd)
        }
    };
    // One build at a time in the shared cache, so that the artifact read
    // after it is this build's.
    let _lock = lock_cache(&settings.cache_dir)?;
    let duration = run_limited(run, slot, settings.timeout, LogFilter::cargo(slot))?;
    let out = settings
        .cache_dir
        .join("wasm32-wasip2/release")
        .join(format!("{}.wasm", CRATE.replace('-', "_")));
    let wasm = fs::read(&out).map_err(io_err("read", &out))?;
    Ok(Built { wasm, duration })
}

fn build_js(slot: &Path, settings: &BuildSettings) -> Result<Built, BuildError> {
    let bwrap = match settings.build_box {
        BuildBox::Bwrap => Some(bwrap()?),
        BuildBox::None => None,
    };
    let tool = settings
        .componentize_js
        .clone()
        .or_else(|| on_path("componentize-js"))
        .filter(|p| p.is_file())
        .ok_or_else(|| BuildError::ToolchainMissing {
            what: "componentize-js".into(),
            hint: "install @bytecodealliance/componentize-js (npm) and put it on PATH, or set [forge.handler] componentize_js".into(),
        })?;
    let node = on_path("node").ok_or_else(|| BuildError::ToolchainMissing {
        what: "node".into(),
        hint: "componentize-js runs on node; put it on PATH".into(),
    })?;
    let args = [
        "handler.js",
        "--wit",
        "wit",
        "--world-name",
        "handler",
        "--disable",
        "http",
        "fetch-event",
        "-o",
        HANDLER_FILE,
    ];
    let tool = std::path::absolute(&tool).unwrap_or(tool);
    let slot = &slot.canonicalize().unwrap_or_else(|_| slot.to_path_buf());
    let run = match &bwrap {
        Some(bwrap) => Run::boxed(bwrap, &buildbox::js_spec(&tool, &node, slot), &tool, &args)?,
        None => {
            warn_unboxed(HandlerLang::Js);
            let mut cmd = cleared(&tool, slot);
            cmd.args(args);
            Run::direct(cmd)
        }
    };
    let duration = run_limited(run, slot, settings.timeout, LogFilter::raw())?;
    let out = slot.join(HANDLER_FILE);
    let wasm = fs::read(&out).map_err(io_err("read", &out))?;
    Ok(Built { wasm, duration })
}

fn lock_cache(dir: &Path) -> Result<fs::File, BuildError> {
    let path = dir.join(".skillhost-build.lock");
    crate::fsutil::lock_file(&path).map_err(io_err("lock", &path))
}

/// A build's command: bwrap with the program after `--`, or the program.
struct Run {
    cmd: Command,
    /// The read end of bwrap's `--json-status-fd`; None: unboxed.
    status: Option<std::io::PipeReader>,
    /// What only the child keeps: the status pipe's write end and the
    /// read ends bwrap takes `--ro-bind-data` files from. Dropped here
    /// once the child is spawned.
    child_fds: Vec<std::os::fd::OwnedFd>,
}

impl Run {
    fn direct(cmd: Command) -> Run {
        Run {
            cmd,
            status: None,
            child_fds: Vec::new(),
        }
    }

    fn boxed(
        bwrap: &Path,
        spec: &buildbox::BoxSpec,
        program: &Path,
        args: &[&str],
    ) -> Result<Run, BuildError> {
        use std::io::Write as _;
        use std::os::fd::AsRawFd as _;
        let pipe_err = |e: std::io::Error| BuildError::ToolchainMissing {
            what: "bubblewrap (bwrap)".into(),
            hint: format!("cannot make a pipe for it: {e}"),
        };
        let mut cmd = Command::new(bwrap);
        // The box's own environment is set by --setenv; bwrap itself needs
        // none of the host's.
        cmd.env_clear();
        let (status, status_writer) = std::io::pipe().map_err(pipe_err)?;
        let mut child_fds = vec![std::os::fd::OwnedFd::from(status_writer)];
        let mut data_fds = Vec::new();
        for (text, _) in &spec.data {
            // A few bytes: the pipe holds them until bwrap reads them.
            let (r, mut w) = std::io::pipe().map_err(pipe_err)?;
            w.write_all(text.as_bytes()).map_err(pipe_err)?;
            drop(w);
            data_fds.push(r.as_raw_fd());
            child_fds.push(r.into());
        }
        cmd.args(buildbox::bwrap_args(
            spec,
            Some(child_fds[0].as_raw_fd()),
            &data_fds,
        ))
        .arg(program)
        .args(args);
        Ok(Run {
            cmd,
            status: Some(status),
            child_fds,
        })
    }
}

/// Which stream a line of the build's output came from.
enum Line {
    Out(String),
    Err(String),
    /// A line longer than [`MAX_LINE_BYTES`], dropped.
    TooLong,
}

/// The longest line of a build's output that is read (a diagnostic's JSON
/// is one line).
const MAX_LINE_BYTES: usize = 4 << 20;
/// The most of the filtered log kept in `build.log`; past it the start goes.
const MAX_LOG_BYTES: usize = 1 << 20;

/// Reads `r` a line at a time into `tx`.
fn read_lines(r: impl std::io::Read, tx: std::sync::mpsc::Sender<Line>, out: bool) {
    use std::io::BufRead as _;
    let mut r = std::io::BufReader::with_capacity(64 << 10, r);
    let mut line = Vec::new();
    let mut too_long = false;
    let send = |line: &mut Vec<u8>, too_long: &mut bool| {
        let msg = if *too_long {
            Line::TooLong
        } else {
            let text = String::from_utf8_lossy(line)
                .trim_end_matches('\r')
                .to_owned();
            if out {
                Line::Out(text)
            } else {
                Line::Err(text)
            }
        };
        line.clear();
        *too_long = false;
        tx.send(msg).is_ok()
    };
    loop {
        let buf = match r.fill_buf() {
            Ok([]) => break,
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let (chunk, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = end.unwrap_or(buf.len());
        r.consume(used);
        if end.is_some() && !send(&mut line, &mut too_long) {
            return;
        }
    }
    if !line.is_empty() || too_long {
        send(&mut line, &mut too_long);
    }
}

/// The filtered output of a build, as `build.log` keeps it. A line that
/// repeats the one before (a withheld diagnostic, say, for each line of a
/// file the compiler read) is counted, not repeated.
#[derive(Default)]
struct Log {
    text: String,
    cut: bool,
    last: Option<String>,
    repeats: usize,
}

impl Log {
    fn push(&mut self, line: &str) {
        if self.last.as_deref() == Some(line) && !line.trim().is_empty() {
            self.repeats += 1;
            return;
        }
        self.flush_repeats();
        self.last = Some(line.to_owned());
        self.append(line);
    }

    fn flush_repeats(&mut self) {
        if self.repeats > 0 {
            let note = format!("(the line above {} more time(s))", self.repeats);
            self.repeats = 0;
            self.append(&note);
        }
    }

    fn append(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
        if self.text.len() > MAX_LOG_BYTES {
            let mut from = self.text.len() - MAX_LOG_BYTES / 2;
            while !self.text.is_char_boundary(from) {
                from += 1;
            }
            let from = self.text[from..].find('\n').map_or(from, |i| from + i + 1);
            self.text.drain(..from);
            self.cut = true;
        }
    }

    fn text(&mut self) -> String {
        self.flush_repeats();
        self.last = None;
        if self.cut {
            format!("… (the start of the log was cut)\n{}", self.text)
        } else {
            self.text.clone()
        }
    }
}

/// Runs the build in a process group of its own; only what `filter`
/// passes goes to `slot/build.log` and into the errors. Past `limit` the
/// whole group is killed, and with bwrap (`--die-with-parent`, a pid
/// namespace) everything in the box.
fn run_limited(
    run: Run,
    slot: &Path,
    limit: Duration,
    filter: LogFilter,
) -> Result<Duration, BuildError> {
    let status_reader = run.status;
    let boxed = status_reader.is_some();
    let started = Instant::now();
    let mut child = spawn_build(run.cmd, run.child_fds, boxed)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || read_lines(out, tx, true)));
    }
    if let Some(err) = child.stderr.take() {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || read_lines(err, tx, false)));
    }
    drop(tx);
    let mut output = BuildOutput {
        rx,
        filter,
        log: Log::default(),
        bwrap_said: Vec::new(),
        boxed,
        log_path: slot.join(BUILD_LOG),
    };
    let status: ExitStatus = loop {
        output.take_ready();
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= limit => {
                kill_group(&mut child, status_reader.as_ref());
                let log = output.finish(Duration::from_secs(2));
                return Err(BuildError::TimedOut { limit, log });
            }
            Ok(None) => output.take_one(Duration::from_millis(20)),
            Err(e) => {
                kill_group(&mut child, status_reader.as_ref());
                output.finish(Duration::ZERO);
                return Err(io_err("wait for", Path::new("the build"))(e));
            }
        }
    };
    let duration = started.elapsed();
    // The rest of the output: the readers end when the last writer in the
    // box is gone, which is now (bwrap's pid namespace ends with it).
    let log = output.finish(Duration::from_secs(5));
    if let Some(reader) = &status_reader
        && read_status(reader).exit_code.is_none()
        && status.code().is_some()
    {
        return Err(BuildError::ToolchainMissing {
            what: "bubblewrap (bwrap)".into(),
            hint: format!(
                "it could not start the build's box{}; see docs/forge.md (\"The build box\"), or set [forge.handler] build_box = \"none\" to build unboxed (unsafe)",
                if output.bwrap_said.is_empty() {
                    String::new()
                } else {
                    format!(": {}", output.bwrap_said.join(" "))
                }
            ),
        });
    }
    if !status.success() {
        return Err(BuildError::Failed {
            status: status.to_string(),
            log,
        });
    }
    Ok(duration)
}

/// Starts `cmd` in a process group of its own with its output piped and
/// no descriptor of the host's but `child_fds`.
fn spawn_build(
    mut cmd: Command,
    child_fds: Vec<std::os::fd::OwnedFd>,
    boxed: bool,
) -> Result<std::process::Child, BuildError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd as _;
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        close_inherited_fds(&mut cmd, child_fds.iter().map(|f| f.as_raw_fd()).collect());
    }
    let spawned = cmd.spawn();
    // The box's status reaches us only through bwrap's copy.
    drop(child_fds);
    spawned.map_err(|e| {
        if boxed {
            BuildError::ToolchainMissing {
                what: "bubblewrap (bwrap)".into(),
                hint: format!("cannot run {}: {e}", cmd.get_program().to_string_lossy()),
            }
        } else {
            io_err("run", Path::new(cmd.get_program()))(e)
        }
    })
}

/// A build's output as it arrives: filtered line by line into the log,
/// bwrap's own lines kept apart.
struct BuildOutput {
    rx: std::sync::mpsc::Receiver<Line>,
    filter: LogFilter,
    log: Log,
    bwrap_said: Vec<String>,
    boxed: bool,
    log_path: PathBuf,
}

impl BuildOutput {
    fn take(&mut self, line: Line) {
        let kept = match line {
            Line::Out(l) => self.filter.stdout(&l),
            Line::Err(l) => {
                if self.boxed && l.starts_with("bwrap: ") {
                    self.bwrap_said.push(l.clone());
                }
                self.filter.stderr(&l)
            }
            Line::TooLong => self.filter.too_long(),
        };
        if let Some(k) = kept {
            self.log.push(&k);
        }
    }

    /// Every line already there.
    fn take_ready(&mut self) {
        while let Ok(line) = self.rx.try_recv() {
            self.take(line);
        }
    }

    /// One line, if it comes within `wait`.
    fn take_one(&mut self, wait: Duration) {
        if let Ok(line) = self.rx.recv_timeout(wait) {
            self.take(line);
        }
    }

    /// Takes what comes within `wait`, closes the filter, writes
    /// `build.log` and returns its tail. Only the filtered text: nothing
    /// the compiler quoted from a file outside the slot's src/ is kept,
    /// here either.
    fn finish(&mut self, wait: Duration) -> String {
        let until = Instant::now() + wait;
        while let Ok(line) = self
            .rx
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            self.take(line);
        }
        if let Some(l) = self.filter.finish() {
            self.log.push(&l);
        }
        let text = self.log.text();
        let _ = fs::write(&self.log_path, &text);
        tail(&text)
    }
}

/// What bwrap wrote on its status pipe; it is written before bwrap exits,
/// so nothing is waited for.
fn read_status(reader: &std::io::PipeReader) -> BoxStatus {
    use std::io::Read as _;
    use std::os::fd::AsRawFd as _;
    #[cfg(unix)]
    // SAFETY: fcntl on a descriptor this function's caller owns; it only
    // sets O_NONBLOCK.
    unsafe {
        let fd = reader.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
    let mut text = Vec::new();
    let mut buf = [0u8; 4096];
    let mut r = reader;
    while text.len() < 64 << 10 {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
        }
    }
    BoxStatus::parse(&String::from_utf8_lossy(&text))
}

/// Marks every descriptor but 0, 1, 2 and `keep` close-on-exec in the
/// child, so that nothing the host has open reaches the build (rustc could
/// read it as `/proc/self/fd/N`), and clears it on `keep` (bwrap's status
/// and data pipes, which bwrap itself does not pass into the box).
#[cfg(unix)]
fn close_inherited_fds(cmd: &mut Command, keep: Vec<i32>) {
    // SAFETY: the closure runs between fork and exec and calls only
    // async-signal-safe functions (the close_range system call, fcntl); it
    // allocates nothing and takes no lock.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, move || {
            const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
            let all = libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                libc::c_uint::MAX,
                CLOSE_RANGE_CLOEXEC,
            );
            if all != 0 {
                // Before Linux 5.11: one descriptor at a time.
                let max = match libc::sysconf(libc::_SC_OPEN_MAX) {
                    n if n > 0 => n.min(1 << 16) as libc::c_int,
                    _ => 4096,
                };
                for fd in 3..max {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
            for &fd in &keep {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// Kills the child's process group (the child leads it), reaps the child
/// and waits, briefly, for the rest to be gone: SIGKILL is delivered
/// asynchronously, so a compiler the build started could still be exiting
/// (and holding its files) when this returns otherwise. With bwrap, the
/// box's first process (in a session of its own) is killed too, which
/// ends its pid namespace and so everything in it.
fn kill_group(child: &mut std::process::Child, status: Option<&std::io::PipeReader>) {
    #[cfg(unix)]
    let group = i32::try_from(child.id()).ok();
    #[cfg(unix)]
    if let Some(pid) = group {
        // SAFETY: kill(2) with a negative pid signals that process group,
        // which the child leads (process_group(0)); no memory is touched.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let inner = status.and_then(|r| read_status(r).child_pid);
    #[cfg(unix)]
    if let Some(pid) = inner {
        // SAFETY: as above, for the box's session (bwrap --new-session
        // made its first process the leader of a group of its own).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
            libc::kill(pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let until = Instant::now() + Duration::from_secs(2);
    #[cfg(unix)]
    if let Some(pid) = group {
        // Signal 0 only asks whether any member is left. Zombies count
        // until their new parent reaps them, so this is bounded.
        // SAFETY: as above; signal 0 delivers nothing.
        while unsafe { libc::kill(-pid, 0) } == 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // The box's first process ends only after every other process of its
    // pid namespace has: once it is gone or a zombie, the box is empty.
    if let Some(pid) = inner {
        while Instant::now() < until && alive(pid) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Whether process `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) S ...`: the state follows the last `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// The end of a build log, for the model and the operator.
fn tail(text: &str) -> String {
    let text = text.trim_end();
    match text.char_indices().rev().nth(LOG_TAIL_BYTES) {
        Some((at, _)) => format!("…{}", &text[at..]),
        None => text.to_owned(),
    }
}

/// The end of the build log at `path` (`build.log`, already filtered).
pub fn log_tail(path: &Path) -> String {
    let mut bytes = Vec::new();
    if let Ok(f) = fs::File::open(path) {
        let _ = f.take(16 << 20).read_to_end(&mut bytes);
    }
    tail(&String::from_utf8_lossy(&bytes))
}

/// The skill's SKILL.md (`current`) pointing at `handler`, marked as
/// generated (`metadata.skillhost.handler_generated`), which makes `exec`
/// run it only as approved whatever the skill's source.
pub fn with_generated_handler(
    current: &[u8],
    name: &str,
    handler: &str,
) -> Result<String, Invalid> {
    let parsed = parse_skill(current, name).map_err(|e| Invalid::Parse(e.to_string()))?;
    let mut front = parsed.meta.raw.as_object().cloned().unwrap_or_default();
    let metadata = front.entry("metadata").or_insert_with(|| json!({}));
    if !metadata.is_object() {
        *metadata = json!({});
    }
    if let Some(m) = metadata.as_object_mut() {
        let sh = m.entry("skillhost").or_insert_with(|| json!({}));
        if !sh.is_object() {
            *sh = json!({});
        }
        if let Some(sh) = sh.as_object_mut() {
            sh.insert("handler".into(), json!(handler));
            sh.insert("handler_generated".into(), json!(true));
        }
    }
    Ok(super::create::compose(&front, &parsed.body))
}

/// What admitting a handler did.
#[derive(Debug, Clone, Serialize)]
pub struct Admitted {
    /// The artifact in the skill folder.
    pub handler: PathBuf,
    /// The SKILL.md as it was, saved as this version (`skills rollback`).
    pub saved_version: u32,
}

/// Puts `wasm` into the skill's folder as `handler.wasm` and points its
/// SKILL.md at it through the forge's writer, saving the previous
/// SKILL.md in its history first. Only skills the forge may edit (forged,
/// user, workspace); bundled skills are never modified. An existing
/// `handler.wasm` is not overwritten.
pub fn admit(
    writer: &SkillWriter,
    skill: &Skill,
    wasm: &[u8],
    reason: &str,
) -> Result<Admitted, ForgeError> {
    history::editable(skill)?;
    check_slug(&skill.name)?;
    let lock = writer.lock()?;
    let current = fs::read(&skill.path).map_err(ForgeError::io("read", &skill.path))?;
    let old = parse_skill(&current, &skill.name)
        .map_err(|e| Invalid::Parse(format!("the current file: {e}")))?;
    if let Some(h) = &old.meta.skillhost.handler {
        return Err(ForgeError::Invalid(Invalid::Parse(format!(
            "it already has a handler ({h})"
        ))));
    }
    let text = with_generated_handler(&current, &skill.name, HANDLER_FILE)?;
    let expect = Expect {
        handler: Some(HANDLER_FILE),
        ..Expect::replacing(&old)
    };
    writer::validate(text.as_bytes(), &expect)?;
    let target = skill.dir.join(HANDLER_FILE);
    // Written beside its final name, then renamed without replacing.
    let tmp = skill
        .dir
        .join(format!(".{HANDLER_FILE}.forge-{}", std::process::id()));
    fs::write(&tmp, wasm).map_err(ForgeError::io("write", &tmp))?;
    let placed = fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .and_then(|()| crate::fsutil::rename_noreplace(&tmp, &target));
    if let Err(e) = placed {
        let _ = fs::remove_file(&tmp);
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return Err(ForgeError::Exists(target));
        }
        return Err(ForgeError::io("write", &target)(e));
    }
    let forge_dir = writer.forge_dir();
    let written = history::save(&lock, &forge_dir, &skill.name, &current).and_then(|v| {
        writer
            .replace(&lock, &skill.path, &current, &text, &expect)
            .map(|()| v)
    });
    let saved_version = match written {
        Ok(v) => v,
        Err(e) => {
            let _ = fs::remove_file(&target);
            return Err(e);
        }
    };
    history::append(
        &lock,
        &forge_dir,
        &skill.name,
        &Event {
            previous: Some(content_version(&current)),
            version: Some(saved_version),
            ..Event::new(EventKind::HandlerAdded, reason)
        },
    )?;
    Ok(Admitted {
        handler: target,
        saved_version,
    })
}

/// Notes in the skill's history that a handler was written and refused.
pub fn note_rejected(writer: &SkillWriter, skill: &str, reason: &str) -> Result<(), ForgeError> {
    let lock = writer.lock()?;
    history::append(
        &lock,
        &writer.forge_dir(),
        skill,
        &Event::new(EventKind::HandlerRejected, reason),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(src: &str) -> String {
        match check_source(src, HandlerLang::Rust) {
            Err(SourceError::Refused { what, .. }) => what,
            other => panic!("not refused: {other:?}\n{src}"),
        }
    }

    #[test]
    fn rust_sources_that_read_the_host_at_compile_time_are_refused() {
        for src in [
            "const X: &str = include_str!(\"/etc/passwd\");",
            "const X: &[u8] = include_bytes ! (\"/etc/passwd\");",
            "include!(\"/etc/x.rs\");",
            "const X: &str = env!(\"HOME\");",
            "const X: Option<&str> = option_env!(\"HOME\");",
            "const X: &str = std::include_str!(\"/etc/passwd\");",
            "use std::include_str as read;\nconst X: &str = read!(\"/etc/passwd\");",
            "use std::env as e;\nconst X: &str = e!(\"HOME\");",
            "macro_rules! m { ($i:ident) => { $i!(\"/etc/passwd\") } }\nconst X: &str = m!(include_str);",
            "#[path = \"/etc/passwd\"]\nmod x;",
            "mod helpers;",
            "#[cfg_attr(all(), path = \"/etc/x.rs\")] mod y {}",
            "#[doc = include_str!(\"/etc/passwd\")]\nfn f() {}",
            "#[link(name = \"secret\")] extern \"C\" {}",
            "#![debugger_visualizer(natvis_file = \"/etc/passwd\")]",
            "extern crate std as s;",
        ] {
            refused(src);
        }
        let e = check_source(
            "fn f() {}\nconst X: &str = env!(\"HOME\");",
            HandlerLang::Rust,
        )
        .expect_err("refused");
        assert_eq!(
            e.to_string(),
            "line 2: it names `env!`; it could read the host's files or environment while it builds"
        );
    }

    /// The spellings of issue 30 that passed the check before: each is
    /// refused now, and says why.
    #[test]
    fn reads_assembled_by_a_macro_or_spelled_oddly_are_refused() {
        for (src, why) in [
            // The finding: `path`, a file and a module name as arguments.
            (
                "macro_rules! m { ($a:ident, $f:literal, $n:ident) => { #[$a = $f] mod $n; } }\nm!(path, \"/proc/self/environ\", x);",
                "an attribute named by a macro argument",
            ),
            (
                "macro_rules! m { ($a:ident) => { #![$a] } }",
                "an attribute named by a macro argument",
            ),
            (
                "macro_rules! m { ($a:ident) => { # [ $a(name = \"x\") ] extern \"C\" {} } }",
                "an attribute named by a macro argument",
            ),
            (
                "macro_rules! m { ($a:meta) => { #[$a] fn f() {} } }\nm!(export_name = \"x\");",
                "an attribute named by a macro argument",
            ),
            (
                "macro_rules! m { ($b:tt) => { #$b fn f() {} } }",
                "an attribute built from a macro argument",
            ),
            (
                "macro_rules! m { ($b:tt) => { #!$b } }",
                "an attribute built from a macro argument",
            ),
            (
                "macro_rules! m { ($h:tt) => { $h[path = \"/etc/passwd\"] mod x {} } }\nm!(#);",
                "a `#` that does not start",
            ),
            (
                "macro_rules! m { ($n:ident) => { mod $n; } }",
                "declares a module in another file",
            ),
            (
                "#[r#path = \"/etc/passwd\"] mod x {}",
                "the attribute `r` is not one",
            ),
            (
                "#[::core::prelude::v1::derive(Debug)] struct S;",
                "whose name is not a plain word",
            ),
            (
                "#[export_name = \"handle\"] fn f() {}",
                "the attribute `export_name`",
            ),
            (
                "#[link_section = \".x\"] static X: u8 = 0;",
                "the attribute `link_section`",
            ),
            ("extern  crate std as s;", "`extern crate` is not allowed"),
            ("extern\ncrate std as s;", "`extern crate` is not allowed"),
            (
                "extern /* c */ crate std as s;",
                "`extern crate` is not allowed",
            ),
            // `env` through a macro: by its name as an argument, or a call
            // of whatever macro an argument names.
            (
                "macro_rules! m { ($i:ident) => { $i!(\"HOME\") } }\nconst X: &str = m!(env);",
                "calls a macro named by a macro argument",
            ),
            (
                "macro_rules! m { ($p:path) => { $p ! (\"HOME\") } }",
                "calls a macro named by a macro argument",
            ),
            (
                "macro_rules! m { ($i:ident, $b:tt) => { $i $b (\"HOME\") } }\nconst X: &str = m!(env, !);",
                "may not define macros",
            ),
            (
                "const X: Option<&str> = m!(option_env);",
                "it names `option_env`",
            ),
            ("macro_rules! m { () => { 1 } }", "may not define macros"),
        ] {
            let what = refused(src);
            assert!(what.contains(why), "{src}\n=> {what}\nwanted: {why}");
        }
    }

    #[test]
    fn what_only_looks_like_a_read_passes() {
        check_source(RUST_TEMPLATE, HandlerLang::Rust).expect("the template");
        for src in [
            "// include_str!(\"/etc/passwd\") in a comment\nfn f() {}",
            "/* env!(\"HOME\") /* nested */ mod x; */ fn f() {}",
            "fn f() -> &'static str { \"include_str!(x) mod y;\" }",
            "fn f() -> &'static str { r#\"env!(\"HOME\")\"# }",
            "fn f<'a>(s: &'a str) -> char { let _ = s; 'e' }",
            "fn environment() {} fn f() { let env = 1; let _ = env + 1; }",
            "mod inline { pub fn f() {} }",
            "#[derive(Debug)] struct S;",
            "# [ derive ( Debug ) ] struct S;\n#![allow(dead_code)]",
            "#[rustfmt::skip] fn f() {}",
            "fn r#type() {} fn g() { r#type() }",
            "fn f() -> char { '#' }",
            "fn f() -> &'static str { \"#[path = \\\"/etc/passwd\\\"] $x! macro_rules!\" }",
            "/// # Examples\n/// macro_rules! env!\nfn f() {}",
            "fn f() { let s = std::env::args().count(); let _ = s; }",
            "fn f(extern_crate: u8) -> u8 { extern_crate }",
        ] {
            check_source(src, HandlerLang::Rust).unwrap_or_else(|e| panic!("{e}: {src}"));
        }
    }

    #[test]
    fn js_imports_only_wit_interfaces() {
        check_source(JS_TEMPLATE, HandlerLang::Js).expect("the template");
        check_source(
            "import { log } from 'skillhost:skill/host';\nexport function handle(t) { return t; }",
            HandlerLang::Js,
        )
        .expect("a WIT interface");
        for src in [
            "import x from './secret.js';",
            "import '/etc/passwd';",
            "export * from \"../x.js\";",
            "const m = await import('fs');",
            "const fs = require('fs');",
        ] {
            assert!(
                matches!(
                    check_source(src, HandlerLang::Js),
                    Err(SourceError::Refused { .. })
                ),
                "{src}"
            );
        }
    }

    #[test]
    fn the_source_is_the_first_block_of_the_language() {
        let reply =
            "Here:\n```text\nnot it\n```\n```Rust\nfn a() {}\n```\n```rust\nfn b() {}\n```\n";
        assert_eq!(
            extract_source(reply, HandlerLang::Rust).expect("found"),
            "fn a() {}\n"
        );
        assert_eq!(
            extract_source("no code", HandlerLang::Js),
            Err(SourceError::NoSource { fence: "js" })
        );
    }

    #[test]
    fn a_generated_handler_is_marked_in_the_front_matter() {
        let md = b"---\nname: shout\ndescription: Shouts.\nmetadata:\n  author: me\n---\n\nSay it loud.\n";
        let text = with_generated_handler(md, "shout", HANDLER_FILE).expect("composed");
        let parsed = parse_skill(text.as_bytes(), "shout").expect("parses");
        assert_eq!(parsed.meta.skillhost.handler.as_deref(), Some(HANDLER_FILE));
        assert!(parsed.meta.skillhost.handler_generated);
        assert_eq!(parsed.meta.raw["metadata"]["author"], "me");
        assert_eq!(parsed.body.trim(), "Say it loud.");
    }

    #[test]
    fn a_repeated_log_line_is_counted() {
        let mut log = Log::default();
        for l in ["   Compiling x", "w", "w", "w", "", "", "end", "w"] {
            log.push(l);
        }
        assert_eq!(
            log.text(),
            "   Compiling x\nw\n(the line above 2 more time(s))\n\n\nend\nw\n"
        );
    }

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
