//! Building the index: triggers and tags (with the catch-all defence for
//! installed skills), regex triggers, and the BM25 statistics.

use std::collections::HashMap;

use regex::{Regex, RegexBuilder};

use super::text::{for_each_term, is_stopword, one_line, words};
use super::{Kind, Pattern, Phrase, SearchIndex, Term};
use crate::skill::catalog::Warning;
use crate::skill::meta::is_regex_trigger;
use crate::skill::model::Skill;

const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Regex triggers compiled per skill: compiling is the costly part of
/// indexing, and a skill needs a handful at most.
const MAX_REGEX_TRIGGERS: usize = 32;
/// A regex trigger may not compile to more than this (bytes).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Requests with nothing in common: a trigger or tag that matches half of
/// them matches nearly any request, and earns an installed skill nothing.
/// A real trigger names its subject, so it matches one of these at most.
pub(crate) const PROBES: &[&str] = &[
    "Summarize this article about the history of Rome.",
    "Convert 12 kilometers to miles",
    "What will the weather be like in Oslo tomorrow?",
    "Fix the failing unit test in the parser module",
    "Book a table for two at 7pm on Friday",
    "Translate the contract into German, please",
    "Plot monthly sales from the attached spreadsheet",
    "Remind me to call the dentist next week",
];
/// How many probes a catch-all matches at least.
const CATCH_ALL_PROBES: usize = PROBES.len() / 2;
/// Catch-all triggers and tags quoted in a skill's warning.
const CATCH_ALL_QUOTED: usize = 5;

/// [`PROBES`] as words, tokenized once, and only when an installed skill
/// needs them.
type Probes = Option<Vec<Vec<String>>>;

impl SearchIndex {
    /// Tokenizes every skill once. Invalid regex triggers become warnings.
    pub(crate) fn build(skills: &[Skill]) -> (SearchIndex, Vec<Warning>) {
        let mut index = SearchIndex::default();
        let mut warnings = Vec::new();
        let mut counts = TermCounts::with_capacity(skills.len());
        let mut probes: Probes = None;
        for (i, skill) in skills.iter().enumerate() {
            let doc = u32::try_from(i).unwrap_or(u32::MAX);
            index.add_triggers_and_tags(doc, skill, &mut probes, &mut warnings);
            counts.add(doc, skill);
        }
        (index.terms, index.term_data) = counts.weigh();
        (index, warnings)
    }

    /// Indexes one skill's triggers and tags. Regex triggers past the cap
    /// and invalid ones become warnings, and so do an installed skill's
    /// catch-alls (one warning for them all).
    fn add_triggers_and_tags(
        &mut self,
        doc: u32,
        skill: &Skill,
        probes: &mut Probes,
        warnings: &mut Vec<Warning>,
    ) {
        let foreign = skill.source.is_foreign();
        // An installed skill's triggers and tags that match anything.
        let mut catch_all: Vec<&str> = Vec::new();
        let mut regexes = 0;
        for t in &skill.meta.triggers {
            let t = t.trim();
            if !is_regex_trigger(t) {
                self.add_phrase(doc, Kind::Trigger, t, foreign, probes, &mut catch_all);
                continue;
            }
            regexes += 1;
            if regexes > MAX_REGEX_TRIGGERS {
                if regexes == MAX_REGEX_TRIGGERS + 1 {
                    warnings.push(Warning::new(
                        &skill.path,
                        format!(
                            "more than {MAX_REGEX_TRIGGERS} regex triggers: the rest are ignored"
                        ),
                    ));
                }
                continue;
            }
            match compile_trigger(t) {
                Ok(regex) if foreign && matches_anything(&regex) => catch_all.push(t),
                Ok(regex) => self.patterns.push(Pattern {
                    doc,
                    regex,
                    text: t.to_owned(),
                }),
                Err(e) => warnings.push(Warning::new(
                    &skill.path,
                    format!(
                        "trigger '{t}' is not a valid regex, ignored: {}",
                        one_line(&e.to_string())
                    ),
                )),
            }
        }
        for tag in &skill.meta.tags {
            let tag = tag.trim();
            self.add_phrase(doc, Kind::Tag, tag, foreign, probes, &mut catch_all);
        }
        if !catch_all.is_empty() {
            warnings.push(catch_all_warning(skill, &catch_all));
        }
    }

    /// Adds a keyword trigger or tag; one of an installed skill that
    /// matches nearly anything goes to `catch_all` instead.
    fn add_phrase<'t>(
        &mut self,
        doc: u32,
        kind: Kind,
        text: &'t str,
        foreign: bool,
        probes: &mut Probes,
        catch_all: &mut Vec<&'t str>,
    ) {
        let words = words(text);
        let Some(first) = words.first().cloned() else {
            return;
        };
        if foreign {
            let probes = probes
                .get_or_insert_with(|| PROBES.iter().map(|p| super::text::words(p)).collect());
            let matched = probes
                .iter()
                .filter(|p| p.windows(words.len()).any(|w| w == words.as_slice()))
                .count();
            if matched >= CATCH_ALL_PROBES || words.iter().all(|w| is_stopword(w)) {
                catch_all.push(text);
                return;
            }
        }
        let id = u32::try_from(self.phrases.len()).unwrap_or(u32::MAX);
        self.phrases.push(Phrase {
            doc,
            kind,
            words: words.into_boxed_slice(),
            text: text.to_owned(),
        });
        self.by_first_word.entry(first).or_default().push(id);
    }
}

/// A regex trigger (`/.../`), compiled case-insensitively and bounded.
fn compile_trigger(t: &str) -> Result<Regex, regex::Error> {
    let pattern = &t[1..t.len() - 1];
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
}

/// The warning that quotes an installed skill's catch-all triggers and tags.
fn catch_all_warning(skill: &Skill, catch_all: &[&str]) -> Warning {
    let mut quoted: Vec<String> = catch_all
        .iter()
        .take(CATCH_ALL_QUOTED)
        .map(|t| format!("'{}'", one_line(t)))
        .collect();
    if catch_all.len() > CATCH_ALL_QUOTED {
        quoted.push(format!("{} more", catch_all.len() - CATCH_ALL_QUOTED));
    }
    Warning::new(
        &skill.path,
        format!(
            "triggers or tags that match nearly any request earn an installed skill nothing in a search: {}",
            quoted.join(", ")
        ),
    )
}

/// Whether `regex` matches nearly any text: the empty string (so every
/// text), or at least half of [`PROBES`].
pub(super) fn matches_anything(regex: &Regex) -> bool {
    regex.is_match("") || PROBES.iter().filter(|p| regex.is_match(p)).count() >= CATCH_ALL_PROBES
}

/// The BM25 statistics, gathered skill by skill: the vocabulary, each
/// term's (skill, count) postings and each skill's length in terms.
struct TermCounts {
    dict: HashMap<String, u32>,
    postings: Vec<Vec<(u32, u32)>>,
    doc_len: Vec<u32>,
    /// Scratch space: the term ids of the skill being added, and a word.
    ids: Vec<u32>,
    buf: String,
}

impl TermCounts {
    fn with_capacity(skills: usize) -> Self {
        TermCounts {
            dict: HashMap::new(),
            postings: Vec::new(),
            doc_len: Vec::with_capacity(skills),
            ids: Vec::new(),
            buf: String::new(),
        }
    }

    /// Counts the terms of skill `doc`'s name and description.
    fn add(&mut self, doc: u32, skill: &Skill) {
        let TermCounts {
            dict,
            postings,
            doc_len,
            ids,
            buf,
        } = self;
        // The name counts twice: it is the skill's own summary.
        ids.clear();
        for_each_term(&skill.name, buf, |term| {
            let id = intern(dict, postings, term);
            ids.extend([id, id]);
        });
        for_each_term(&skill.description, buf, |term| {
            ids.push(intern(dict, postings, term));
        });
        ids.sort_unstable();
        for run in ids.chunk_by(|a, b| a == b) {
            postings[run[0] as usize].push((doc, u32::try_from(run.len()).unwrap_or(u32::MAX)));
        }
        doc_len.push(u32::try_from(ids.len()).unwrap_or(u32::MAX));
    }

    /// The vocabulary, and each term's idf and saturated term frequencies.
    fn weigh(self) -> (HashMap<String, u32>, Vec<Term>) {
        let TermCounts {
            dict,
            postings,
            doc_len,
            ..
        } = self;
        let n = doc_len.len() as f64;
        let avg_len = if doc_len.is_empty() {
            1.0
        } else {
            (doc_len.iter().map(|&l| f64::from(l)).sum::<f64>() / n).max(1.0)
        };
        let terms = postings
            .into_iter()
            .map(|post| {
                let df = post.len() as f64;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32;
                let postings = post
                    .into_iter()
                    .map(|(doc, tf)| {
                        let tf = f64::from(tf);
                        let len = f64::from(doc_len[doc as usize]);
                        let w = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg_len));
                        (doc, w as f32)
                    })
                    .collect();
                Term { idf, postings }
            })
            .collect();
        (dict, terms)
    }
}

/// The id of `term`, added to the vocabulary if new.
fn intern(dict: &mut HashMap<String, u32>, postings: &mut Vec<Vec<(u32, u32)>>, term: &str) -> u32 {
    if let Some(&id) = dict.get(term) {
        return id;
    }
    let id = u32::try_from(postings.len()).unwrap_or(u32::MAX);
    dict.insert(term.to_owned(), id);
    postings.push(Vec::new());
    id
}
