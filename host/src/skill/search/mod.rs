//! Retrieval: which skill fits a task. Built once per catalog so that a
//! query over ten thousand skills costs microseconds.
//!
//! Score = 100 × (triggers matched) + 10 × (tags matched, at most 9)
//!       + BM25 over name and description squashed into [0, 10).
//! So any trigger outranks any number of tags, and any tag outranks text
//! similarity; within a tier, more matches and better text win.
//!
//! Trust is a tier, ranked before the score: an installed skill (see
//! `Source::is_foreign`: its name, triggers, tags and description are
//! chosen by an author elsewhere, to be picked) never outranks a trusted
//! skill (any other source: bundled, forged, user, workspace, `--skills`)
//! that matched the request at all, by trigger, tag or text. The operator
//! promotes an installed skill by pinning it (`[catalog] pinned`: above
//! every match) or trusting it (`[catalog] trusted`: it ranks by its score
//! among the trusted); nothing the skill says of itself does. Among
//! untrusted skills:
//! - its triggers together earn at most what one trigger earns, and its
//!   tags what one tag earns;
//! - a regex trigger that requires no fixed string of two or more
//!   characters (`.*`, `.{61,}`, `\w+`, `foo|.+`) is refused, and a trigger
//!   or tag that matches too many of 1,278 everyday requests, alone or
//!   with the skill's others, earns nothing (see `catch_all`; checked
//!   once when the index is built, so queries cost nothing more). A
//!   promoted skill is screened the same: promotion gives rank, not
//!   catch-alls.
//!
//! [`SearchOptions`] adds, in this order: pinned skills above every other
//! match; then the tier; then the trigger and tag points; then the score;
//! then, between equal scores, usage (success rate, then uses; see
//! [`Usage::rank`](crate::skill::Usage::rank)); then the name. `--tag`
//! keeps only skills with that tag, role or stage.

mod catch_all;
mod index;
mod rank;
#[cfg(test)]
mod tests;
mod text;

use std::collections::HashMap;

use regex::Regex;

use super::model::Skill;
use super::usage::{NoUsage, UsageSource};

/// One search result.
#[derive(Debug, Clone)]
pub struct Match<'a> {
    pub skill: &'a Skill,
    pub score: f64,
    /// What matched: `pinned`, `trigger 'email'`, `tag 'mail'`, `bm25`.
    pub why: String,
    /// Listed in `[catalog] pinned`, so ranked above unpinned matches.
    pub pinned: bool,
}

/// How a search ranks and filters, beyond the query.
#[derive(Clone, Copy)]
pub struct SearchOptions<'a> {
    /// Skill names ranked first, in this order (`[catalog] pinned`).
    pub pinned: &'a [String],
    /// Installed skills ranked with the trusted ones, by their score
    /// (`[catalog] trusted`).
    pub trusted: &'a [String],
    /// Keep only skills with one of these as a tag, role or stage. With
    /// an empty query, every such skill is a result.
    pub tags: &'a [String],
    /// Breaks ties between equal scores; asked only when there is one.
    pub usage: &'a dyn UsageSource,
}

impl Default for SearchOptions<'_> {
    fn default() -> Self {
        SearchOptions {
            pinned: &[],
            trusted: &[],
            tags: &[],
            usage: &NoUsage,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Trigger,
    Tag,
}

/// A keyword trigger or a tag, as lowercase words.
#[derive(Debug, Clone)]
struct Phrase {
    doc: u32,
    kind: Kind,
    words: Box<[String]>,
    text: String,
}

/// A regex trigger.
#[derive(Debug, Clone)]
struct Pattern {
    doc: u32,
    regex: Regex,
    text: String,
}

/// A BM25 term: its idf and, per skill, the saturated term frequency
/// (everything but the idf, computed once at build time).
#[derive(Debug, Clone, Default)]
struct Term {
    idf: f32,
    postings: Vec<(u32, f32)>,
}

/// The index over one catalog's skills: built in `index.rs`, queried in
/// `rank.rs`.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchIndex {
    phrases: Vec<Phrase>,
    /// Phrase ids by their first word.
    by_first_word: HashMap<String, Vec<u32>>,
    patterns: Vec<Pattern>,
    /// BM25 vocabulary: term → index into `term_data`.
    terms: HashMap<String, u32>,
    term_data: Vec<Term>,
}

/// One trigger or tag hit: the skill and the phrase (ids past the phrases
/// are patterns).
type Hit = (u32, u32);
