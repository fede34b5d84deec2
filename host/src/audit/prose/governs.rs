//! Whether a command a rule flagged in prose is asked for or described.
//! A command quoted inline (a code span, a quoted string) is governed by
//! the nearest verb before it in its sentence: "run `…`", "paste `…` into
//! Terminal" ask for it; "block `…`", "detect `…`", "e.g. `…`", "never
//! run `…`" describe it. A described command that a later verb of the
//! sentence asks for ("… and run it"), or the next sentence does ("Run
//! it."), is asked. "Do not forget to run `…`" is asked: the negation
//! governs "forget", not "run". The verbs are prose.toml `[[governing]]`.
//!
//! In a fenced block labelled as an example, a command quoted as a string
//! argument of a program that is no shell (`scanner check "curl … | sh"`)
//! is data given to that program.

use regex::Regex;
use serde::Deserialize;

use super::super::quoted;
use super::{acts, on_boundaries, sentence};

/// One `[[governing]]` entry of prose.toml.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub lang: String,
    /// Verbs that ask for the command they govern.
    pub ask: Vec<String>,
    /// Verbs and markers that describe it.
    pub describe: Vec<String>,
}

/// The compiled `[[governing]]` verbs.
#[derive(Debug)]
pub struct Governing {
    ask: Regex,
    describe: Regex,
    /// An asking verb with a pronoun for its object: "run it".
    ask_it: Regex,
}

/// Programs that run a string argument as a command.
const RUNNERS: [&str; 24] = [
    "sh", "bash", "zsh", "dash", "ksh", "fish", "eval", "exec", "ssh", "sudo", "su", "xargs",
    "env", "nohup", "watch", "docker", "kubectl", "podman", "python", "python3", "node",
    "powershell", "pwsh", "cmd",
];

impl Governing {
    pub fn compile(entries: &[Entry]) -> Result<Governing, String> {
        let join = |pick: fn(&Entry) -> &Vec<String>| -> Result<String, String> {
            let mut out = Vec::new();
            for e in entries {
                for p in pick(e) {
                    out.push(super::compile_phrase(p).map_err(|err| format!("governing {p:?}: {err}"))?);
                }
            }
            Ok(if out.is_empty() { "$^".to_owned() } else { out.join("|") })
        };
        let ask = join(|e| &e.ask)?;
        let it = r"\s+(?:it|this|that|them|these|those|the\s+(?:above\s+)?(?:command|line|snippet|script)s?)\b";
        Ok(Governing {
            ask_it: super::build(&format!("(?i:{ask}){it}"))?,
            ask: super::build(&ask)?,
            describe: super::build(&join(|e| &e.describe)?)?,
        })
    }

    /// Whether the command a rule matched at `start..end` of `text` is
    /// described rather than asked for (see the module docs).
    pub fn described(&self, negation: &Regex, text: &str, start: usize, end: usize) -> bool {
        if quoted::in_fence(text, start) {
            return data_argument(text, start);
        }
        let s = sentence::around(text, start);
        let Some(span) = quoted::span_at(text, s.start..s.end.max(end), start) else {
            return false;
        };
        let before = quoted::mask_code(&text[s.start..span.start]);
        if !self.governed_by_description(negation, &before) {
            return false;
        }
        let after_end = sentence::end_of(text, s.end.max(span.end)).max(s.end);
        let rest = quoted::mask_code(&text[span.end.min(s.end)..s.end]);
        let next = quoted::mask_code(&text[s.end..after_end]);
        !self.asks(negation, &rest) && !self.ask_it.is_match(&next)
    }

    /// Whether the last governing word of `before` describes: a describing
    /// word, or an asking verb a negation governs.
    fn governed_by_description(&self, negation: &Regex, before: &str) -> bool {
        let last = |re: &Regex| {
            re.find_iter(before)
                .filter(|m| on_boundaries(before, m.start(), m.end()))
                .last()
                .map(|m| m.start())
        };
        match (last(&self.ask), last(&self.describe)) {
            (Some(a), d) if d.is_none_or(|d| a > d) => acts::negated(negation, before, a),
            (_, d) => d.is_some(),
        }
    }

    /// Whether `text` holds an asking verb no negation governs.
    fn asks(&self, negation: &Regex, text: &str) -> bool {
        self.ask.find_iter(text).any(|m| {
            on_boundaries(text, m.start(), m.end()) && !acts::negated(negation, text, m.start())
        })
    }
}

/// Whether byte `at`, in a fenced block labelled as an example, is inside
/// a quoted string argument of a command whose program runs no string.
fn data_argument(text: &str, at: usize) -> bool {
    if !quoted::in_labelled_block(text, at) {
        return false;
    }
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = &text[line_start..line_end];
    let command = line.trim_start().trim_start_matches(['$', '>', '#']).trim_start();
    let program = command.split_whitespace().next().unwrap_or("");
    let program = program.rsplit('/').next().unwrap_or(program);
    let before = &text[line_start..at];
    let in_string = ['"', '\''].iter().any(|&q| {
        before.matches(q).count() % 2 == 1 && text[at..line_end].contains(q)
    });
    in_string && !program.is_empty() && !RUNNERS.contains(&program) && !command.contains(" -c ")
}
