//! What an installed skill's triggers and tags may not be: catch-alls.
//!
//! - A regex trigger must require a literal: every text it matches must
//!   contain one of a finite set of strings, the shortest at least
//!   [`MIN_REQUIRED_LITERAL`] bytes long, found in the parsed pattern
//!   (regex-syntax's literal extraction over each tail of a
//!   concatenation, each branch of an alternation). `.*`, `.{61,}`,
//!   `[\s\S]+`, `\w+`, `\b`, `e` and `foo|.+` require none.
//! - Against [`requests.txt`](REQUESTS), 1,278 everyday request phrasings
//!   (coding, writing, data, operations, personal tasks, questions;
//!   written for this check: 174 tasks, each in 7 of 14 phrasings, and
//!   60 questions and follow-ups as people type them): a trigger or tag that matches more than
//!   [`ITEM_PERCENT`] of them, or a skill whose triggers and tags together
//!   match more than [`SKILL_PERCENT`], matches nearly any request. The
//!   bundled skills' own triggers and tags match 1 to 3 percent.
//!
//! The requests are tokenized once per process, on the first installed
//! skill, into a word → requests bit set; a keyword's requests are then
//! an intersection of bit sets, checked for the word order.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use regex_syntax::hir::literal::Extractor;
use regex_syntax::hir::{Hir, HirKind};

use super::text::words;

/// Everyday requests, one a line.
const REQUESTS: &str = include_str!("requests.txt");
/// A trigger or tag matching more of [`REQUESTS`] than this is a catch-all.
pub(super) const ITEM_PERCENT: usize = 8;
/// A skill whose triggers and tags together match more than this is a
/// catch-all as a whole: each one is narrow, the set is not.
pub(super) const SKILL_PERCENT: usize = 15;
/// The shortest literal an installed skill's regex trigger must require.
pub(super) const MIN_REQUIRED_LITERAL: usize = 2;

/// Which of the requests something matched: one bit per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Hits(Vec<u64>);

impl Hits {
    fn none(n: usize) -> Hits {
        Hits(vec![0; n.div_ceil(64)])
    }

    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn get(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    pub(super) fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub(super) fn add(&mut self, other: &Hits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }

    fn keep(&mut self, other: &Hits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a &= b;
        }
    }
}

/// [`REQUESTS`], tokenized as triggers are, with the requests each word
/// occurs in.
pub(super) struct Requests {
    lines: Vec<&'static str>,
    words: Vec<Vec<String>>,
    by_word: HashMap<String, Hits>,
}

impl Requests {
    /// The requests, tokenized on first use.
    pub(super) fn get() -> &'static Requests {
        static REQ: OnceLock<Requests> = OnceLock::new();
        REQ.get_or_init(Requests::build)
    }

    fn build() -> Requests {
        let lines: Vec<&str> = REQUESTS.lines().filter(|l| !l.trim().is_empty()).collect();
        let words: Vec<Vec<String>> = lines.iter().map(|l| words(l)).collect();
        let mut by_word: HashMap<String, Hits> = HashMap::new();
        for (i, ws) in words.iter().enumerate() {
            for w in ws {
                by_word
                    .entry(w.clone())
                    .or_insert_with(|| Hits::none(lines.len()))
                    .set(i);
            }
        }
        Requests {
            lines,
            words,
            by_word,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.lines.len()
    }

    /// The requests that contain the keyword `phrase` (as words, in order).
    pub(super) fn phrase_hits(&self, phrase: &[String]) -> Hits {
        let mut hits = Hits::none(self.len());
        let mut candidates: Option<Hits> = None;
        for w in phrase {
            let Some(h) = self.by_word.get(w) else {
                return hits;
            };
            candidates.get_or_insert_with(|| h.clone()).keep(h);
        }
        let Some(candidates) = candidates else {
            return hits;
        };
        for i in (0..self.len()).filter(|&i| candidates.get(i)) {
            if self.words[i].windows(phrase.len()).any(|w| w == phrase) {
                hits.set(i);
            }
        }
        hits
    }

    /// The requests `regex` matches.
    pub(super) fn regex_hits(&self, regex: &Regex) -> Hits {
        let mut hits = Hits::none(self.len());
        for (i, line) in self.lines.iter().enumerate() {
            if regex.is_match(line) {
                hits.set(i);
            }
        }
        hits
    }

    /// Whether `hits` are more than `percent` of the requests.
    pub(super) fn over(&self, hits: &Hits, percent: usize) -> bool {
        hits.count() * 100 > self.len() * percent
    }
}

/// Whether the regex trigger `pattern` (between its slashes) may match
/// arbitrary text: it requires no literal of [`MIN_REQUIRED_LITERAL`]
/// bytes. False for one that does not parse (compiling it says why).
pub(super) fn unbounded(pattern: &str) -> bool {
    regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .is_ok_and(|hir| required_literal(&hir) < MIN_REQUIRED_LITERAL)
}

/// The length of the shortest literal of a set of which every match of
/// `hir` contains one, as long as that can be shown: 0 when none.
fn required_literal(hir: &Hir) -> usize {
    match hir.kind() {
        HirKind::Capture(c) => required_literal(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required_literal(&r.sub),
        // Every match holds a match of each part, and of each tail.
        HirKind::Concat(parts) => (0..parts.len())
            .map(|i| required_literal(&parts[i]).max(prefix(&Hir::concat(parts[i..].to_vec()))))
            .max()
            .unwrap_or(0),
        // Every match holds a match of one branch.
        HirKind::Alternation(branches) => branches
            .iter()
            .map(required_literal)
            .min()
            .unwrap_or(0)
            .max(prefix(hir)),
        _ => prefix(hir),
    }
}

/// The length of the shortest of the literals every match of `hir` starts
/// with (0 when they are not a finite set).
fn prefix(hir: &Hir) -> usize {
    Extractor::new().extract(hir).min_literal_len().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_over_a_thousand_distinct_requests() {
        let r = Requests::get();
        assert!(r.len() >= 1000, "{}", r.len());
        let mut distinct = r.lines.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), r.len());
    }

    #[test]
    fn unbounded_patterns_are_told_from_ones_that_need_a_literal() {
        for p in [
            ".*",
            ".+",
            ".{61,}",
            "[\\s\\S]+",
            "\\w+",
            "\\b",
            "^",
            "e",
            "a|e|i|o|u",
            "foo|.+",
            "(?s).",
            "(.*)",
            "(?:x|y)+z?",
            "\\b\\w{3,}\\b",
            "[a-z]{5}",
        ] {
            assert!(unbounded(p), "{p} can match arbitrary text");
        }
        for p in [
            "\\b(mail|message) (to|for)\\b",
            "\\b(columns?|schema|dataset)\\b",
            "\\bpdfs?\\b",
            "^translate\\b",
            ".*invoice.*",
            "(?i)kubernetes",
            "\\d+ (miles|km)",
            "(foo|.*)bar",
        ] {
            assert!(!unbounded(p), "{p} requires a literal");
        }
    }

    #[test]
    fn a_phrase_matches_requests_by_whole_words_in_order() {
        let r = Requests::get();
        let hits = |p: &str| r.phrase_hits(&words(p)).count();
        assert!(hits("meeting notes") > 0);
        assert_eq!(hits("notes meeting"), 0);
        assert_eq!(hits("zzzqx"), 0);
        assert!(hits("for") > hits("meeting notes"));
    }
}
