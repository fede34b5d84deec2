//! What the model is asked for a handler, and the source taken out of its
//! reply.

use super::check::{RUST_ATTRIBUTES, allowed_macros};
use super::{Example, HandlerLang, MAX_SOURCE_BYTES, SourceError};
use crate::llm::{ChatRequest, Message};
use crate::skill::Skill;

pub(super) const SKILL_WIT: &str = include_str!("../../../../wit/skill.wit");
/// A whole handler source fits (the default cap, `DEFAULT_MAX_TOKENS`,
/// sized for a tool call or a page of answer, would cut most of them).
const SOURCE_TOKENS: u32 = 8192;
const GUEST_SDK_DOCS: &str = include_str!("../../../../guest-sdk/src/lib.rs");
pub(super) const RUST_TEMPLATE: &str = include_str!("../../../templates/rust/lib.rs");
pub(super) const JS_TEMPLATE: &str = include_str!("../../../templates/js/handler.js");

/// The first request: the contract, how to write to it, what the skill is
/// for and what it answered.
pub fn request(skill: &Skill, lang: HandlerLang, examples: &[Example]) -> ChatRequest {
    let (how, template) = how_to_write(lang);
    let fence = lang.fences()[0];
    let build_rules = build_rules(lang);
    let system = format!(
        "You write skill handlers for skillhost: WebAssembly components of this WIT world `handler`:\n\n```wit\n{SKILL_WIT}\n```\n\n{how}\n\n{template}\n\n\
         Rules: the answer must be computed from the task and its context alone (no clock, no random numbers, no network, no files); \
         it must give exactly the expected answers of the cases, byte for byte. \
         Answer with one ```{fence} block holding the complete source and nothing the build must read besides it.{build_rules}"
    );
    let examples = examples
        .iter()
        .map(|e| serde_json::to_string(e).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
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
        max_tokens: Some(SOURCE_TOKENS),
    }
}

/// How to write a handler in `lang`, and its template.
fn how_to_write(lang: HandlerLang) -> (String, String) {
    match lang {
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
    }
}

/// What the source is refused for before it is built, in `lang`.
fn build_rules(lang: HandlerLang) -> String {
    match lang {
        HandlerLang::Rust => format!(
            " It is built in a sandbox that holds only this crate and the SDK, and refused before it is built if it defines a macro (`macro_rules!`), declares a module in another file (`mod x;`), uses `extern crate`, calls a macro other than {} (the standard ones also as `std::NAME!`), or carries an attribute other than {}.",
            allowed_macros(),
            RUST_ATTRIBUTES
                .iter()
                .map(|a| format!("`#[{a}]`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        HandlerLang::Js => " It may import WIT interfaces only (`skillhost:skill/host`), never a file or a package.".to_owned(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
