//! Building the index: triggers and tags (with the catch-all defence for
//! installed skills), regex triggers, and the BM25 statistics.

use std::collections::HashMap;

use regex::{Regex, RegexBuilder};

use super::catch_all::{self, Hits, ITEM_PERCENT, Requests, SKILL_PERCENT};
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

/// Catch-all triggers and tags quoted in a skill's warning.
const CATCH_ALL_QUOTED: usize = 5;

/// A trigger or tag of one skill, ready to index.
struct Item<'t> {
    kind: Kind,
    text: &'t str,
    /// A regex trigger, compiled; None for a keyword trigger or a tag.
    regex: Option<Regex>,
}

impl SearchIndex {
    /// Tokenizes every skill once. Invalid regex triggers become warnings.
    pub(crate) fn build(skills: &[Skill]) -> (SearchIndex, Vec<Warning>) {
        let mut index = SearchIndex::default();
        let mut warnings = Vec::new();
        let mut counts = TermCounts::with_capacity(skills.len());
        for (i, skill) in skills.iter().enumerate() {
            let doc = u32::try_from(i).unwrap_or(u32::MAX);
            index.add_triggers_and_tags(doc, skill, &mut warnings);
            counts.add(doc, skill);
        }
        (index.terms, index.term_data) = counts.weigh();
        (index, warnings)
    }

    /// Indexes one skill's triggers and tags. Regex triggers past the cap
    /// and invalid ones become warnings; so do an installed skill's
    /// unbounded regexes and catch-alls (see `catch_all`), which are left
    /// out.
    fn add_triggers_and_tags(&mut self, doc: u32, skill: &Skill, warnings: &mut Vec<Warning>) {
        let mut items = regex_and_keyword_triggers(skill, warnings);
        items.extend(skill.meta.tags.iter().map(|t| Item {
            kind: Kind::Tag,
            text: t.trim(),
            regex: None,
        }));
        if skill.source.is_foreign() {
            items = screen(skill, items, warnings);
        }
        for item in items {
            match item.regex {
                Some(regex) => self.patterns.push(Pattern {
                    doc,
                    regex,
                    text: item.text.to_owned(),
                }),
                None => self.add_phrase(doc, item.kind, item.text),
            }
        }
    }

    /// Adds a keyword trigger or tag (nothing for one without words).
    fn add_phrase(&mut self, doc: u32, kind: Kind, text: &str) {
        let words = words(text);
        let Some(first) = words.first().cloned() else {
            return;
        };
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

/// A skill's triggers: keywords as they are, regexes compiled (past the
/// cap, or invalid: a warning).
fn regex_and_keyword_triggers<'s>(skill: &'s Skill, warnings: &mut Vec<Warning>) -> Vec<Item<'s>> {
    let mut items = Vec::new();
    let mut regexes = 0;
    for t in &skill.meta.triggers {
        let t = t.trim();
        if !is_regex_trigger(t) {
            items.push(trigger(t, None));
            continue;
        }
        regexes += 1;
        if regexes > MAX_REGEX_TRIGGERS {
            if regexes == MAX_REGEX_TRIGGERS + 1 {
                warnings.push(Warning::new(
                    &skill.path,
                    format!("more than {MAX_REGEX_TRIGGERS} regex triggers: the rest are ignored"),
                ));
            }
            continue;
        }
        match compile_trigger(t) {
            Ok(regex) => items.push(trigger(t, Some(regex))),
            Err(e) => warnings.push(Warning::new(
                &skill.path,
                format!(
                    "trigger '{t}' is not a valid regex, ignored: {}",
                    one_line(&e.to_string())
                ),
            )),
        }
    }
    items
}

fn trigger(text: &str, regex: Option<Regex>) -> Item<'_> {
    Item {
        kind: Kind::Trigger,
        text,
        regex,
    }
}

/// An installed skill's triggers and tags less those it may not have:
/// regexes that require no literal (refused), and catch-alls against the
/// everyday requests, alone or together (a warning for each kind).
fn screen<'s>(skill: &Skill, items: Vec<Item<'s>>, warnings: &mut Vec<Warning>) -> Vec<Item<'s>> {
    let requests = Requests::get();
    let mut kept: Vec<(Item<'s>, Hits)> = Vec::new();
    let mut catch_all: Vec<&str> = Vec::new();
    let mut unbounded: Vec<&str> = Vec::new();
    for item in items {
        match screen_item(requests, &item) {
            Screened::Unbounded => unbounded.push(item.text),
            Screened::CatchAll => catch_all.push(item.text),
            Screened::Nothing => {}
            Screened::Hits(hits) if requests.over(&hits, ITEM_PERCENT) => {
                catch_all.push(item.text);
            }
            Screened::Hits(hits) => kept.push((item, hits)),
        }
    }
    let together = catch_all_together(requests, &mut kept, &mut catch_all);
    if !unbounded.is_empty() {
        warnings.push(unbounded_warning(skill, &unbounded));
    }
    if !catch_all.is_empty() {
        warnings.push(catch_all_warning(skill, &catch_all, together));
    }
    kept.into_iter().map(|(item, _)| item).collect()
}

/// What one trigger or tag matches of the everyday requests, or why it
/// is refused.
enum Screened {
    Hits(Hits),
    /// A regex that requires no literal.
    Unbounded,
    /// A regex that matches the empty string, or only stopwords.
    CatchAll,
    /// No words at all.
    Nothing,
}

fn screen_item(requests: &Requests, item: &Item<'_>) -> Screened {
    match &item.regex {
        Some(regex) => {
            let pattern = &item.text[1..item.text.len() - 1];
            if catch_all::unbounded(pattern) {
                Screened::Unbounded
            } else if regex.is_match("") {
                Screened::CatchAll
            } else {
                Screened::Hits(requests.regex_hits(regex))
            }
        }
        None => {
            let words = words(item.text);
            if words.is_empty() {
                Screened::Nothing
            } else if words.iter().all(|w| is_stopword(w)) {
                Screened::CatchAll
            } else {
                Screened::Hits(requests.phrase_hits(&words))
            }
        }
    }
}

/// When the kept items together catch too many everyday requests, they
/// all go to `catch_all`; returns how many they caught.
fn catch_all_together<'s>(
    requests: &Requests,
    kept: &mut Vec<(Item<'s>, Hits)>,
    catch_all: &mut Vec<&'s str>,
) -> Option<usize> {
    let (_, first) = kept.first()?;
    let mut union = first.clone();
    kept.iter().for_each(|(_, h)| union.add(h));
    if !requests.over(&union, SKILL_PERCENT) {
        return None;
    }
    catch_all.extend(kept.drain(..).map(|(item, _)| item.text));
    Some(union.count())
}

/// A regex trigger (`/.../`), compiled case-insensitively and bounded.
fn compile_trigger(t: &str) -> Result<Regex, regex::Error> {
    let pattern = &t[1..t.len() - 1];
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
}

/// The warning that refuses an installed skill's unbounded regex triggers.
fn unbounded_warning(skill: &Skill, triggers: &[&str]) -> Warning {
    Warning::new(
        &skill.path,
        format!(
            "regex triggers refused: an installed skill's regex trigger must require a fixed string of {} or more characters in every text it matches, and these can match arbitrary text: {}",
            catch_all::MIN_REQUIRED_LITERAL,
            quote(triggers)
        ),
    )
}

/// The first few of `items`, quoted, and how many more.
fn quote(items: &[&str]) -> String {
    let mut quoted: Vec<String> = items
        .iter()
        .take(CATCH_ALL_QUOTED)
        .map(|t| format!("'{}'", one_line(t)))
        .collect();
    if items.len() > CATCH_ALL_QUOTED {
        quoted.push(format!("{} more", items.len() - CATCH_ALL_QUOTED));
    }
    quoted.join(", ")
}

/// The warning that quotes an installed skill's catch-all triggers and
/// tags; `together`: how many requests they matched as a set, when it was
/// the set that matched too many.
fn catch_all_warning(skill: &Skill, catch_all: &[&str], together: Option<usize>) -> Warning {
    let n = Requests::get().len();
    let set = together.map_or_else(String::new, |k| {
        format!(" (together they match {k} of {n} everyday requests)")
    });
    Warning::new(
        &skill.path,
        format!(
            "triggers or tags that match nearly any request earn an installed skill nothing in a search: {}{set}",
            quote(catch_all)
        ),
    )
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
