//! The source refused before anything builds it: a first, cheap filter
//! against sources that make the build read the host. For Rust, a real
//! tokenizer (`tokens`: proc-macro2's lexer), held to rustc's own
//! (`rustc_view`), and allowlists of the macros, attributes and derives a
//! handler may use (`allow`, checked by `rust`).
//! Nothing relies on it: the build runs in a box that holds nothing of the
//! host (`buildbox`).

mod allow;
mod rust;
mod rustc_view;
#[cfg(test)]
mod tests;
mod tokens;

use std::sync::LazyLock;

use regex::Regex;

use super::{HandlerLang, MAX_SOURCE_BYTES, SourceError};
use crate::types::constant_regex;

pub(super) use allow::{RUST_ATTRIBUTES, allowed_macros};
pub use rustc_view::{first_difference, read_calls, rustc_lexemes};
pub use tokens::{CodeKind, CodeToken, code_tokens, lexemes};

/// Refuses a source that could read the host while it builds.
pub fn check_source(source: &str, lang: HandlerLang) -> Result<(), SourceError> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(SourceError::TooLarge(source.len()));
    }
    match lang {
        HandlerLang::Rust => rust::check_rust(source),
        HandlerLang::Js => check_js(source),
    }
}

/// `import ... from "X"`, `import "X"`, `export ... from "X"`.
static JS_STATIC_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    constant_regex(
        r#"\b(?:import|export)\b[^;'"`]*?\bfrom\s*['"]([^'"]*)['"]|\bimport\s*['"]([^'"]*)['"]"#,
    )
});
static JS_DYNAMIC: LazyLock<Regex> = LazyLock::new(|| constant_regex(r"\b(import|require)\s*\("));
/// A WIT interface (`skillhost:skill/host`, `wasi:cli/environment@0.2.0`):
/// the only modules a handler may import.
static WIT_SPECIFIER: LazyLock<Regex> = LazyLock::new(|| {
    constant_regex(r"^[a-z][a-z0-9-]*:[a-z][a-z0-9-]*/[a-z][a-z0-9-]*(@[0-9A-Za-z.+-]+)?$")
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
