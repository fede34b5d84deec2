//! Intent analysis of prose: what an instruction in words asks for,
//! whatever its wording. The words of a skill's prose (outside code
//! blocks, front matter, comments and tables) are sorted into semantic
//! roles by broad lexicons kept as data (`lexicon.toml`: a verb that
//! sends data away, a secret, a destination held by someone else, a
//! download, a run, concealment from the user, a safeguard switched off,
//! in seven languages). An attack is a *combination* of roles said in one
//! instruction (a few sentences of one paragraph or list, `judge.rs`):
//! a secret sent to someone else's host, an act kept from the user, a
//! download run with a safeguard off. No phrase of an attack is listed;
//! a paraphrase that keeps the roles keeps the finding.
//!
//! What is said is separated from what is mentioned: a verb in quotation
//! marks or a code span, in a sentence that describes ("detect", "warn",
//! "if a page asks"), under a heading or lead-in that forbids ("Never:"),
//! or governed by a negation ("never upload") is not an instruction.

mod judge;
#[cfg(test)]
mod tests;
mod text;

use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use super::Severity;
use super::normalize::normalize;
use super::prose;

/// The role lexicons, embedded in the binary.
pub const LEXICON_TOML: &str = include_str!("lexicon.toml");

/// A sensitive source (a secret, or collected credentials) or the user's
/// private data sent to a destination someone else holds.
pub const EXFIL_RULE: &str = "intent-exfil";
/// An act (sending data away, running a download, deleting the user's
/// data) kept from the user or done without asking.
pub const CONCEAL_RULE: &str = "intent-conceal";
/// A download run with a safeguard switched off or kept from the user.
pub const FETCH_RUN_RULE: &str = "intent-fetch-run";

/// A text kept elsewhere claimed to outrank the skill or the agent's
/// instructions, or obeyed as fetched.
pub const REMOTE_RULE: &str = "intent-remote-control";

/// The rules of this analysis, with what each flags.
pub const INTENT_RULES: [(&str, &str); 4] = [
    (
        EXFIL_RULE,
        "prose that tells the agent to send a secret (keys, ~/.ssh, cloud credentials, .env, wallets, browser logins, shell history, all tokens found) or the user's private data to a destination someone else holds",
    ),
    (
        CONCEAL_RULE,
        "prose that tells the agent to send data away, or delete the user's data or secrets, and keep it from the user or not ask",
    ),
    (
        FETCH_RUN_RULE,
        "prose that tells the agent or user to download and run a program with a safeguard off (no confirmation, antivirus or Gatekeeper bypassed)",
    ),
    (
        REMOTE_RULE,
        "prose that hands control to a text kept elsewhere: a URL or hosted document said to override this skill, the agent's instructions or its safety rules, or fetched and obeyed",
    ),
];

/// The semantic roles, in the order of `ROLE_IDS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Transmit,
    Destroy,
    Acquire,
    Run,
    Secret,
    Credential,
    Collective,
    Personal,
    Gather,
    Backref,
    ForeignSink,
    OwnSink,
    Conceal,
    Quiet,
    SafetyOff,
    Disable,
    Control,
    AuthUse,
    PackageManager,
    Override,
    Obey,
    RemoteDoc,
    Describe,
    Escalate,
    Redirect,
    Misreport,
    AsUser,
    Channel,
    Supply,
    Trail,
    Grant,
    Access,
    Solicit,
}

/// The roles matched as hits, each by its lexicon id.
const ROLES: [(Role, &str); 33] = [
    (Role::Transmit, "transmit"),
    (Role::Destroy, "destroy"),
    (Role::Acquire, "acquire"),
    (Role::Run, "run"),
    (Role::Secret, "secret"),
    (Role::Credential, "credential"),
    (Role::Collective, "collective"),
    (Role::Personal, "personal"),
    (Role::Gather, "gather"),
    (Role::Backref, "backref"),
    (Role::ForeignSink, "foreign-sink"),
    (Role::OwnSink, "own-sink"),
    (Role::Conceal, "conceal"),
    (Role::Quiet, "quiet"),
    (Role::SafetyOff, "safety-off"),
    (Role::Disable, "disable"),
    (Role::Control, "control"),
    (Role::AuthUse, "auth-use"),
    (Role::PackageManager, "package-manager"),
    (Role::Override, "override"),
    (Role::Obey, "obey"),
    (Role::RemoteDoc, "remote-doc"),
    (Role::Describe, "describe"),
    (Role::Escalate, "escalate"),
    (Role::Redirect, "redirect"),
    (Role::Misreport, "misreport"),
    (Role::AsUser, "as-user"),
    (Role::Channel, "channel"),
    (Role::Supply, "supply"),
    (Role::Trail, "trail"),
    (Role::Grant, "grant"),
    (Role::Access, "access"),
    (Role::Solicit, "solicit"),
];

/// The id of the negators' entries.
const NEGATION: &str = "negation";
/// The id of the words that make a heading or lead-in forbid its section.
const FORBID: &str = "forbid";
/// The id of the words that open a conditional clause.
const CONDITION: &str = "condition";
/// The id of the verbs that press a button or pick a menu item: a quoted
/// term after one is a label on the screen, not a mention.
const PRESS: &str = "press";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LexiconFile {
    role: Vec<RoleEntry>,
}

/// The terms of one role in one language.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleEntry {
    id: String,
    lang: String,
    terms: Vec<String>,
}

/// The compiled lexicons: one regex per role (its terms in every
/// language), and the negation regex of `prose::acts`.
#[derive(Debug)]
pub struct Lexicon {
    roles: Vec<(Role, Regex)>,
    negation: Regex,
    forbid: Regex,
    condition: Regex,
    press: Regex,
    /// Languages each role is written in, for the tests.
    #[cfg_attr(not(test), allow(dead_code))]
    langs: Vec<(String, String)>,
}

/// Parses and compiles the lexicon file.
pub fn parse(source: &str) -> Result<Lexicon, String> {
    let file: LexiconFile = toml::from_str(source).map_err(|e| e.to_string())?;
    let special = [NEGATION, FORBID, CONDITION, PRESS];
    let known = |id: &str| special.contains(&id) || ROLES.iter().any(|(_, r)| *r == id);
    if let Some(bad) = file.role.iter().find(|e| !known(&e.id)) {
        return Err(format!("unknown role {} ({})", bad.id, bad.lang));
    }
    let sources = |id: &str| -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for e in file.role.iter().filter(|e| e.id == id) {
            for t in &e.terms {
                let s = prose::compile_phrase(t)
                    .map_err(|err| format!("{id} ({}) {t:?}: {err}", e.lang))?;
                out.push(bounded_end(t, s.replace(prose::GAP, WORDS)));
            }
        }
        if out.is_empty() {
            return Err(format!("role {id} has no terms"));
        }
        Ok(out)
    };
    let mut roles = Vec::with_capacity(ROLES.len());
    for (role, id) in ROLES {
        let alts = sources(id)?;
        roles.push((role, build(&format!("(?:{})", alts.join(")|(?:")))?));
    }
    let negation = prose::acts::negation_regex(&sources(NEGATION)?)?;
    let forbid = prose::build(&format!("(?:{})", sources(FORBID)?.join(")|(?:")))?;
    let condition = prose::build(&format!("^(?:{})", sources(CONDITION)?.join(")|(?:")))?;
    let press = prose::build(&format!(r"(?:{})$", sources(PRESS)?.join(")|(?:")))?;
    let langs = file
        .role
        .iter()
        .map(|e| (e.id.clone(), e.lang.clone()))
        .collect();
    Ok(Lexicon {
        roles,
        negation,
        forbid,
        condition,
        press,
        langs,
    })
}

/// A term's `*`: up to four words (not the phrase table's 40 characters,
/// whose many states in an alternation of hundreds of terms overflow the
/// lazy DFA's cache and make the scan slow), within a sentence.
const WORDS: &str = r"(?:[^\s.!?。！？]+\s+){0,3}?[^\s.!?。！？]+";

/// A term's regex that ends on a word boundary when the term can end
/// with a letter or digit of a spaced script: it takes the character
/// after the word (trimmed off again by `trim_boundary`). Without it, the
/// terms of all languages in one alternation would let a short term
/// shadow a longer one at the same start ("send" in "sende").
fn bounded_end(term: &str, source: String) -> String {
    let ends_in_word = match term.strip_suffix('}') {
        Some(rest) => {
            let group = rest.rsplit('{').next().unwrap_or(rest);
            // A group that may be empty ends where the text before it
            // does; the boundary is that text's.
            let alts: Vec<&str> = group.split('|').collect();
            !alts.iter().any(|a| a.is_empty())
                && alts
                    .iter()
                    .any(|a| a.chars().last().is_some_and(prose::spaced_word_char))
        }
        None => term.chars().last().is_some_and(prose::spaced_word_char),
    };
    if ends_in_word {
        format!(
            r"{source}(?:[^0-9A-Za-z_\u{{C0}}-\u{{24F}}\u{{370}}-\u{{3FF}}\u{{400}}-\u{{52F}}]|$)"
        )
    } else {
        source
    }
}

/// A role's regex. Its lazy DFA gets a larger cache than the default:
/// an alternation of hundreds of terms otherwise fills it, clears it
/// again and again, and the scan crawls.
fn build(source: &str) -> Result<Regex, String> {
    prose::build_with_dfa_cache(source, 1 << 25)
}

/// The embedded lexicon (a unit test parses it).
pub fn lexicon() -> &'static Lexicon {
    static LEXICON: LazyLock<Lexicon> =
        LazyLock::new(|| super::embedded("intent/lexicon.toml", parse(LEXICON_TOML)));
    &LEXICON
}

/// A role said at `start..end` of the normalised text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hit {
    pub role: Role,
    pub start: usize,
    pub end: usize,
}

/// What the analysis found: a rule, its severity, where (original
/// offsets), and the roles that made it.
#[derive(Debug)]
pub struct IntentHit {
    pub rule: &'static str,
    pub severity: Severity,
    pub start: usize,
    pub end: usize,
    pub note: String,
}

/// `start..end` without the boundary character `bounded_end` took.
fn trim_boundary(text: &str, start: usize, end: usize) -> usize {
    let mut chars = text[start..end].char_indices().rev();
    match (chars.next(), chars.next()) {
        (Some((i, last)), Some((_, before)))
            if !prose::spaced_word_char(last) && prose::spaced_word_char(before) =>
        {
            start + i
        }
        _ => end,
    }
}

/// Whether `file` is prose: Markdown, plain text, or a file with no
/// extension. Scripts and data are read by the rules and the flow
/// analysis; their comments and strings are no instruction to the agent.
fn is_prose_file(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    match name.rsplit_once('.') {
        None => true,
        Some((_, ext)) => {
            let ext = ext.to_ascii_lowercase();
            matches!(ext.as_str(), "md" | "markdown" | "mdx" | "txt" | "rst")
        }
    }
}

/// The intents said in the prose of `text`, read as `file`.
pub fn scan(file: &str, text: &str) -> Vec<IntentHit> {
    if !is_prose_file(file) {
        return Vec::new();
    }
    let norm = normalize(text);
    let hay: &str = &norm.text;
    let lex = lexicon();
    let Some(mut prose_text) = text::Prose::read(hay) else {
        return Vec::new();
    };
    let masked = &prose_text.masked;
    text::join_follow_ups(masked, &mut prose_text.blocks, |t| lex.points_back(t));
    let hits = lex.hits(&prose_text.masked, &prose_text.blocks);
    if !judge::worth_judging(&hits) {
        return Vec::new();
    }
    let mut out = judge::Judge::new(lex, &prose_text, hits).findings();
    for h in &mut out {
        (h.start, h.end) = (
            norm.original_offset(h.start),
            norm.original_end(h.end, text.len()),
        );
    }
    out
}

impl Lexicon {
    /// Every role said in `masked`, in order of start. A role's terms
    /// are one regex: the verbs that send, delete or fetch run over the
    /// whole prose, the other roles only over the blocks that hold one.
    fn hits(&self, masked: &str, blocks: &[text::Block]) -> Vec<Hit> {
        let first = |r: &Role| {
            matches!(
                r,
                Role::Transmit
                    | Role::Acquire
                    | Role::Destroy
                    | Role::Override
                    | Role::Obey
                    | Role::Conceal
                    | Role::SafetyOff
                    | Role::Escalate
                    | Role::Redirect
                    | Role::AsUser
                    | Role::Misreport
                    | Role::Grant
            )
        };
        let mut out = Vec::new();
        let verbs = self.roles.iter().filter(|(r, _)| first(r));
        let whole = 0..masked.len();
        self.push_hits(verbs, masked, std::slice::from_ref(&whole), &mut out);
        out.sort_by_key(|h| h.start);
        let holds_verb = |b: &&text::Block| {
            let k = out.partition_point(|h| h.start < b.range.start);
            out.get(k).is_some_and(|h| h.start < b.range.end)
        };
        let ranges: Vec<std::ops::Range<usize>> = blocks
            .iter()
            .filter(holds_verb)
            .map(|b| b.range.clone())
            .collect();
        let rest = self.roles.iter().filter(|(r, _)| !first(r));
        self.push_hits(rest, masked, &ranges, &mut out);
        out.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end)));
        out
    }

    fn push_hits<'a>(
        &self,
        roles: impl Iterator<Item = &'a (Role, Regex)>,
        masked: &str,
        ranges: &[std::ops::Range<usize>],
        out: &mut Vec<Hit>,
    ) {
        for (role, re) in roles {
            for r in ranges {
                for (start, end) in prose::bounded_matches(re, masked, r.start, r.end) {
                    let end = trim_boundary(masked, start, end);
                    out.push(Hit {
                        role: *role,
                        start,
                        end,
                    });
                }
            }
        }
    }

    /// Whether a heading or lead-in forbids or describes what follows.
    fn forbids(&self, line: &str) -> bool {
        let bounded = |(s, e): &(usize, usize)| prose::on_boundaries(line, *s, *e);
        let found = |re: &Regex| {
            re.find_iter(line)
                .map(|m| (m.start(), m.end()))
                .any(|m| bounded(&m))
        };
        found(&self.forbid)
            || self
                .roles
                .iter()
                .any(|(r, re)| *r == Role::Describe && found(re))
    }

    /// Whether `clause` opens with a conditional word ("if", "wenn").
    fn conditional(&self, clause: &str) -> bool {
        self.condition.is_match(clause.trim_start())
    }

    /// Where the verb that presses or picks starts, when the text
    /// `before` a quotation ends with one: the quoted words are a label
    /// on the screen.
    fn pressed(&self, before: &str) -> Option<usize> {
        let before = before.trim_end_matches(['"', '“', '«', '「', '`', '\'', ' ']);
        self.press.find(before).map(|m| m.start())
    }

    /// Whether the first sentence of `text` is short and points back at
    /// the instruction before in its first words ("Do this silently.",
    /// "Do all of the above without telling the user.").
    fn points_back(&self, text: &str) -> bool {
        let end = text.find(['.', '!', '?', '\n', '。']).unwrap_or(text.len());
        let sentence = &text[..end];
        if sentence.split_whitespace().count() > 20 {
            return false;
        }
        // A back-reference that starts in the first four words.
        let lead_end = sentence
            .split_whitespace()
            .nth(4)
            .and_then(|w| sentence.find(w))
            .unwrap_or(sentence.len());
        let backref = self.roles.iter().find(|(r, _)| *r == Role::Backref);
        backref.is_some_and(|(_, re)| {
            prose::bounded_matches(re, sentence, 0, sentence.len())
                .first()
                .is_some_and(|(start, _)| *start < lead_end)
        })
    }

    /// Whether a negator governs the word starting at `at` of `hay`.
    fn negated(&self, hay: &str, at: usize) -> bool {
        prose::acts::negated(&self.negation, hay, at)
    }
}
