//! Retrieval: which skill fits a task. Built once per catalog so that a
//! query over ten thousand skills costs microseconds.
//!
//! Score = 100 × (triggers matched) + 10 × (tags matched, at most 9)
//!       + BM25 over name and description squashed into [0, 10).
//! So any trigger outranks any number of tags, and any tag outranks text
//! similarity; within a tier, more matches and better text win.
//!
//! Trust: an installed skill's triggers and tags are chosen by an author
//! elsewhere, to be picked (see `Source::is_foreign`). For such a skill:
//! - a trigger or tag that matches nearly any text earns nothing: a regex
//!   that matches the empty string or at least half of [`PROBES`]
//!   (unrelated requests, tried once when the index is built, so queries
//!   cost nothing more), or a keyword made of stopwords only;
//! - its triggers together earn at most what one trigger earns, and its
//!   tags what one tag earns: the count of what matched is what an author
//!   can inflate;
//! - at equal trigger and tag points, every other source ranks above it,
//!   before text similarity (a description is easy to stuff).
//!
//! `--skills` skills are not capped: the operator named that folder for
//! this very command, and its skills already win every name. (Grants do
//! not trust them; that is about what a handler may do, not about which
//! skill answers.)
//!
//! [`SearchOptions`] adds, in this order: pinned skills above every other
//! match; then the trigger and tag points; then trust; then the score;
//! then, between equal scores, usage (success rate, then uses; see
//! [`Usage::rank`]); then the name. `--tag` keeps only skills with that
//! tag, role or stage.

use std::collections::HashMap;

use regex::{Regex, RegexBuilder};

use super::catalog::Warning;
use super::meta::is_regex_trigger;
use super::model::Skill;
use super::usage::{NoUsage, Usage, UsageSource};

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
            tags: &[],
            usage: &NoUsage,
        }
    }
}

const TRIGGER_WEIGHT: f64 = 100.0;
const TAG_WEIGHT: f64 = 10.0;
const MAX_TAGS_COUNTED: u32 = 9;
/// BM25 r maps to 10·r/(r+BM25_HALF): below 10, half-way at BM25_HALF.
const BM25_HALF: f64 = 5.0;
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Regex triggers compiled per skill: compiling is the costly part of
/// indexing, and a skill needs a handful at most.
const MAX_REGEX_TRIGGERS: usize = 32;
/// A regex trigger may not compile to more than this (bytes).
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// What an installed skill's matched triggers, and tags, count as at most.
const FOREIGN_MAX_TRIGGERS: u32 = 1;
const FOREIGN_MAX_TAGS: u32 = 1;

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

/// Words that carry no meaning for picking a skill (sorted: binary search).
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "if",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "so", "that",
    "the", "their", "them", "then", "this", "to", "use", "used", "uses", "using", "via", "want",
    "we", "what", "when", "which", "will", "with", "you", "your",
];

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

impl SearchIndex {
    /// Tokenizes every skill once. Invalid regex triggers become warnings.
    pub(crate) fn build(skills: &[Skill]) -> (SearchIndex, Vec<Warning>) {
        let mut index = SearchIndex::default();
        let mut warnings = Vec::new();
        let mut dict: HashMap<String, u32> = HashMap::new();
        let mut postings: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut doc_len = Vec::with_capacity(skills.len());
        let mut ids: Vec<u32> = Vec::new();
        let mut buf = String::new();
        // Tokenized once, and only when an installed skill needs them.
        let mut probes: Option<Vec<Vec<String>>> = None;
        for (i, skill) in skills.iter().enumerate() {
            let doc = u32::try_from(i).unwrap_or(u32::MAX);
            let foreign = skill.source.is_foreign();
            // An installed skill's triggers and tags that match anything.
            let mut catch_all: Vec<&str> = Vec::new();
            let mut regexes = 0;
            for t in &skill.meta.triggers {
                let t = t.trim();
                if is_regex_trigger(t) {
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
                    let pattern = &t[1..t.len() - 1];
                    match RegexBuilder::new(pattern)
                        .case_insensitive(true)
                        .size_limit(REGEX_SIZE_LIMIT)
                        .build()
                    {
                        Ok(regex) if foreign && matches_anything(&regex) => catch_all.push(t),
                        Ok(regex) => index.patterns.push(Pattern {
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
                } else {
                    index.add_phrase(doc, Kind::Trigger, t, foreign, &mut probes, &mut catch_all);
                }
            }
            for tag in &skill.meta.tags {
                let tag = tag.trim();
                index.add_phrase(doc, Kind::Tag, tag, foreign, &mut probes, &mut catch_all);
            }
            if !catch_all.is_empty() {
                let mut quoted: Vec<String> = catch_all
                    .iter()
                    .take(CATCH_ALL_QUOTED)
                    .map(|t| format!("'{}'", one_line(t)))
                    .collect();
                if catch_all.len() > CATCH_ALL_QUOTED {
                    quoted.push(format!("{} more", catch_all.len() - CATCH_ALL_QUOTED));
                }
                warnings.push(Warning::new(
                    &skill.path,
                    format!(
                        "triggers or tags that match nearly any request earn an installed skill nothing in a search: {}",
                        quoted.join(", ")
                    ),
                ));
            }
            // The name counts twice: it is the skill's own summary.
            ids.clear();
            for_each_term(&skill.name, &mut buf, |term| {
                let id = intern(&mut dict, &mut postings, term);
                ids.extend([id, id]);
            });
            for_each_term(&skill.description, &mut buf, |term| {
                ids.push(intern(&mut dict, &mut postings, term));
            });
            ids.sort_unstable();
            for run in ids.chunk_by(|a, b| a == b) {
                postings[run[0] as usize].push((doc, u32::try_from(run.len()).unwrap_or(u32::MAX)));
            }
            doc_len.push(u32::try_from(ids.len()).unwrap_or(u32::MAX));
        }
        let n = skills.len() as f64;
        let avg_len = if skills.is_empty() {
            1.0
        } else {
            (doc_len.iter().map(|&l| f64::from(l)).sum::<f64>() / n).max(1.0)
        };
        index.terms = dict;
        index.term_data = postings
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
        (index, warnings)
    }

    /// Adds a keyword trigger or tag; one of an installed skill that
    /// matches nearly anything goes to `catch_all` instead.
    fn add_phrase<'t>(
        &mut self,
        doc: u32,
        kind: Kind,
        text: &'t str,
        foreign: bool,
        probes: &mut Option<Vec<Vec<String>>>,
        catch_all: &mut Vec<&'t str>,
    ) {
        let words = words(text);
        let Some(first) = words.first().cloned() else {
            return;
        };
        if foreign {
            let probes =
                probes.get_or_insert_with(|| PROBES.iter().map(|p| self::words(p)).collect());
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

    fn hit_label(&self, id: u32) -> String {
        match self.phrases.get(id as usize) {
            Some(p) if p.kind == Kind::Trigger => format!("trigger '{}'", p.text),
            Some(p) => format!("tag '{}'", p.text),
            None => {
                let text = self
                    .patterns
                    .get(id as usize - self.phrases.len())
                    .map_or("", |p| p.text.as_str());
                format!("trigger '{text}'")
            }
        }
    }

    /// `held[i]`: skill `i` is held back by the audit and never a result.
    pub(crate) fn search<'a>(
        &self,
        skills: &'a [Skill],
        held: &[bool],
        query: &str,
        k: usize,
        opts: &SearchOptions<'_>,
    ) -> Vec<Match<'a>> {
        if k == 0 || skills.is_empty() {
            return Vec::new();
        }
        // Only tags asked for: every skill that has one is a result.
        let list_tagged = !opts.tags.is_empty() && query.trim().is_empty();
        let mut pinned: HashMap<&str, usize> = HashMap::new();
        for (i, name) in opts.pinned.iter().enumerate() {
            pinned.entry(name.as_str()).or_insert(i);
        }
        let hits = self.hits(query);
        let bm25 = self.bm25(query, skills.len());

        // One pass over all skills, with a cursor over the sorted hits.
        let mut scored: Vec<Scored> = Vec::new();
        let mut h = 0;
        for (doc, &r) in bm25.iter().enumerate() {
            let skill = &skills[doc];
            let held_back = held.get(doc).copied().unwrap_or(false);
            let doc = u32::try_from(doc).unwrap_or(u32::MAX);
            let (mut triggers, mut tags) = (0u32, 0u32);
            while h < hits.len() && hits[h].0 == doc {
                match self.phrases.get(hits[h].1 as usize) {
                    Some(p) if p.kind == Kind::Tag => tags += 1,
                    _ => triggers += 1,
                }
                h += 1;
            }
            if held_back || (r <= 0.0 && triggers == 0 && tags == 0 && !list_tagged) {
                continue;
            }
            if !opts.tags.is_empty() && !opts.tags.iter().any(|t| skill.has_tag(t)) {
                continue;
            }
            let trusted = !skill.source.is_foreign();
            let capped = !trusted && (triggers > FOREIGN_MAX_TRIGGERS || tags > FOREIGN_MAX_TAGS);
            if !trusted {
                triggers = triggers.min(FOREIGN_MAX_TRIGGERS);
                tags = tags.min(FOREIGN_MAX_TAGS);
            }
            // Trigger and tag points in tens: a trigger is ten, a tag one.
            let points = triggers
                .saturating_mul(10)
                .saturating_add(tags.min(MAX_TAGS_COUNTED));
            let r = f64::from(r);
            let score = TRIGGER_WEIGHT * f64::from(triggers)
                + TAG_WEIGHT * f64::from(tags.min(MAX_TAGS_COUNTED))
                + 10.0 * r / (r + BM25_HALF);
            let pin = pinned
                .get(skill.name.as_str())
                .copied()
                .unwrap_or(usize::MAX);
            scored.push(Scored {
                pin,
                points,
                trusted,
                capped,
                score,
                doc,
            });
        }
        // The score is the points and then the text; trust goes between
        // them. Skills are sorted by name, so the index breaks the last
        // ties by name. Usage is asked only of skills whose scores tie.
        let by_rank = |a: &Scored, b: &Scored| {
            a.pin
                .cmp(&b.pin)
                .then(b.points.cmp(&a.points))
                .then(b.trusted.cmp(&a.trusted))
                .then(b.score.total_cmp(&a.score))
                .then_with(|| {
                    let usage = |s: &Scored| opts.usage.usage(&skills[s.doc as usize].name);
                    Usage::rank(usage(a).as_ref(), usage(b).as_ref())
                })
                .then(a.doc.cmp(&b.doc))
        };
        if scored.len() > k {
            scored.select_nth_unstable_by(k - 1, by_rank);
            scored.truncate(k);
        }
        scored.sort_by(by_rank);

        scored
            .into_iter()
            .map(|m| Match {
                skill: &skills[m.doc as usize],
                score: m.score,
                why: self.why(&m, &hits, bm25[m.doc as usize] > 0.0),
                pinned: m.pin != usize::MAX,
            })
            .collect()
    }

    /// Trigger and tag hits of `query`, each (skill, phrase) once, sorted.
    fn hits(&self, query: &str) -> Vec<Hit> {
        let mut hits: Vec<Hit> = Vec::new();
        let qwords = words(query);
        for (i, w) in qwords.iter().enumerate() {
            let Some(ids) = self.by_first_word.get(w) else {
                continue;
            };
            for &id in ids {
                let p = &self.phrases[id as usize];
                if qwords[i..].starts_with(&p.words) {
                    hits.push((p.doc, id));
                }
            }
        }
        let offset = self.phrases.len();
        for (j, p) in self.patterns.iter().enumerate() {
            if p.regex.is_match(query) {
                hits.push((p.doc, u32::try_from(offset + j).unwrap_or(u32::MAX)));
            }
        }
        hits.sort_unstable();
        hits.dedup();
        hits
    }

    /// Each of the `docs` skills' BM25 score for `query`.
    fn bm25(&self, query: &str, docs: usize) -> Vec<f32> {
        let mut bm25 = vec![0f32; docs];
        let mut qterms: Vec<u32> = Vec::new();
        for_each_term(query, &mut String::new(), |term| {
            if let Some(&id) = self.terms.get(term) {
                qterms.push(id);
            }
        });
        qterms.sort_unstable();
        qterms.dedup();
        for &id in &qterms {
            let t = &self.term_data[id as usize];
            for &(doc, w) in &t.postings {
                bm25[doc as usize] += t.idf * w;
            }
        }
        bm25
    }

    /// Why `m` matched, in words: pinned, each hit, the cap, the text.
    fn why(&self, m: &Scored, hits: &[Hit], text: bool) -> String {
        let mut why: Vec<String> = Vec::new();
        if m.pin != usize::MAX {
            why.push("pinned".to_owned());
        }
        why.extend(
            hits.iter()
                .filter(|h| h.0 == m.doc)
                .map(|h| self.hit_label(h.1)),
        );
        if m.capped {
            why.push("installed: one trigger and one tag count".to_owned());
        }
        if text {
            why.push("bm25".to_owned());
        }
        if why.is_empty() {
            why.push("tag filter".to_owned());
        }
        why.join(", ")
    }
}

/// A skill that matched: its pinned rank (`usize::MAX`: not pinned), its
/// trigger and tag points, whether it is trusted (else whether its count
/// was capped), its score and its index.
#[derive(Debug, Clone, Copy)]
struct Scored {
    pin: usize,
    points: u32,
    trusted: bool,
    capped: bool,
    score: f64,
    doc: u32,
}

/// Whether `regex` matches nearly any text: the empty string (so every
/// text), or at least half of [`PROBES`].
fn matches_anything(regex: &Regex) -> bool {
    regex.is_match("") || PROBES.iter().filter(|p| regex.is_match(p)).count() >= CATCH_ALL_PROBES
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Lowercase alphanumeric runs: word boundaries for triggers and tags.
/// Articles are dropped so that "write an email" meets the trigger
/// "write email".
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !matches!(w.as_str(), "a" | "an" | "the"))
        .collect()
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

/// Calls `f` with each BM25 term of `text`: lowercase words without
/// stopwords, plural endings folded. `buf` is scratch space, so indexing
/// ten thousand descriptions does not allocate per word.
fn for_each_term(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    for raw in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        buf.clear();
        if raw.is_ascii() {
            buf.extend(raw.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        } else {
            buf.extend(raw.chars().flat_map(char::to_lowercase));
        }
        if is_stopword(buf) {
            continue;
        }
        stem(buf);
        f(buf);
    }
}

fn is_stopword(w: &str) -> bool {
    STOPWORDS.binary_search(&w).is_ok()
}

/// Folds the commonest English plural endings so `emails` finds `email`.
fn stem(w: &mut String) {
    let n = w.len();
    if n > 4 && w.ends_with("ies") {
        w.truncate(n - 3);
        w.push('y');
    } else if n > 3
        && w.ends_with('s')
        && !w.ends_with("ss")
        && !w.ends_with("us")
        && !w.ends_with("is")
    {
        w.truncate(n - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::super::catalog::Catalog;
    use super::super::model::{SkillMeta, Source};
    use super::*;

    fn skill(name: &str, description: &str, triggers: &[&str], tags: &[&str]) -> Skill {
        Skill {
            name: name.into(),
            description: description.into(),
            body: String::new(),
            dir: format!("/s/{name}").into(),
            path: format!("/s/{name}/SKILL.md").into(),
            version: "sha256:0".into(),
            source: Source::Path,
            warnings: Vec::new(),
            meta: SkillMeta {
                triggers: triggers.iter().map(|s| s.to_string()).collect(),
                tags: tags.iter().map(|s| s.to_string()).collect(),
                ..SkillMeta::default()
            },
        }
    }

    fn catalog() -> Catalog {
        Catalog::from_skills(vec![
            skill(
                "email-writer",
                "Writes professional emails.",
                &["email", "write email"],
                &[],
            ),
            skill("mailer", "Sends messages to a list.", &[], &["email"]),
            skill(
                "notes",
                "Takes notes about email threads and meetings.",
                &[],
                &[],
            ),
            skill(
                "pdf",
                "Extract text from PDF files.",
                &["/\\bpdfs?\\b/"],
                &["documents"],
            ),
            skill("weird", "d", &["/(unclosed/"], &[]),
        ])
    }

    #[test]
    fn triggers_beat_tags_beat_text() {
        let cat = catalog();
        let m = cat.search("please write an email to Bob", 10);
        let names: Vec<_> = m.iter().map(|m| m.skill.name.as_str()).collect();
        assert_eq!(names, ["email-writer", "mailer", "notes"]);
        assert!(
            m[0].why.contains("trigger 'email'") && m[0].why.contains("trigger 'write email'"),
            "{}",
            m[0].why
        );
        assert!(m[1].why.starts_with("tag 'email'"), "{}", m[1].why);
        assert_eq!(m[2].why, "bm25");
        assert!(
            m[0].score >= 200.0 && m[1].score >= 10.0 && m[1].score < 100.0 && m[2].score < 10.0
        );
    }

    #[test]
    fn keyword_triggers_match_on_word_boundaries_only() {
        let cat = catalog();
        // "emailing" is not the word "email"; BM25 does not fold -ing either.
        assert!(
            cat.search("emailing", 5)
                .iter()
                .all(|m| !m.why.contains("trigger"))
        );
        assert!(
            cat.search("EMAIL!", 5)
                .iter()
                .any(|m| m.why.contains("trigger 'email'"))
        );
    }

    #[test]
    fn regex_triggers_are_case_insensitive_and_invalid_ones_warn() {
        let cat = catalog();
        let m = cat.search("merge these PDFs", 3);
        assert_eq!(m[0].skill.name, "pdf");
        assert!(m[0].why.contains("trigger '/\\bpdfs?\\b/'"), "{}", m[0].why);
        assert!(
            cat.warnings()
                .iter()
                .any(|w| w.message.contains("not a valid regex"))
        );
    }

    #[test]
    fn regex_triggers_per_skill_are_capped() {
        let many: Vec<String> = (0..40).map(|i| format!("/^word{i}$/")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let cat = Catalog::from_skills(vec![skill("greedy", "d", &refs, &[])]);
        assert_eq!(cat.search("word31", 1).len(), 1);
        assert!(cat.search("word32", 1).is_empty());
        assert_eq!(cat.warnings().len(), 1);
        assert!(
            cat.warnings()[0]
                .message
                .contains("more than 32 regex triggers")
        );
    }

    #[test]
    fn zero_scores_are_left_out_and_k_is_honoured() {
        let cat = catalog();
        assert!(cat.search("zebra quantum", 5).is_empty());
        assert!(cat.search("the and of", 5).is_empty());
        assert_eq!(cat.search("email", 1).len(), 1);
        assert!(cat.search("email", 0).is_empty());
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stopword("the") && is_stopword("your") && !is_stopword("email"));
    }

    fn with_roles(mut s: Skill, roles: &[&str], stages: &[&str]) -> Skill {
        s.meta.roles = roles.iter().map(|r| r.to_string()).collect();
        s.meta.stages = stages.iter().map(|r| r.to_string()).collect();
        s
    }

    fn names<'a>(m: &[Match<'a>]) -> Vec<&'a str> {
        m.iter().map(|m| m.skill.name.as_str()).collect()
    }

    #[test]
    fn pinned_matches_come_first_in_pinned_order_and_unmatched_pins_stay_out() {
        let cat = catalog();
        let pinned = ["notes".to_owned(), "pdf".to_owned(), "mailer".to_owned()];
        let opts = SearchOptions {
            pinned: &pinned,
            ..SearchOptions::default()
        };
        let m = cat.search_with("please write an email to Bob", 10, &opts);
        // `pdf` is pinned but does not match: pinning orders, it does not add.
        assert_eq!(names(&m), ["notes", "mailer", "email-writer"]);
        assert!(m[0].pinned && m[1].pinned && !m[2].pinned);
        assert!(m[0].why.starts_with("pinned"), "{}", m[0].why);
        // Selection (k = 1) takes the pinned match over a better score.
        assert_eq!(
            names(&cat.search_with("write an email", 1, &opts)),
            ["notes"]
        );
    }

    #[test]
    fn the_tag_filter_matches_tags_roles_or_stages_and_alone_lists_them_all() {
        let cat = Catalog::from_skills(vec![
            skill("a-tagged", "Writes reports.", &[], &["Reporting"]),
            with_roles(
                skill("b-role", "Writes reports too.", &[], &[]),
                &["reporting"],
                &[],
            ),
            with_roles(skill("c-stage", "Reports.", &[], &[]), &[], &["reporting"]),
            skill("d-other", "Writes reports as well.", &[], &["other"]),
        ]);
        let tags = ["reporting".to_owned()];
        let opts = SearchOptions {
            tags: &tags,
            ..SearchOptions::default()
        };
        let m = cat.search_with("", 10, &opts);
        assert_eq!(names(&m), ["a-tagged", "b-role", "c-stage"]);
        assert!(
            m.iter()
                .all(|m| m.why == "tag filter" || m.why.contains("tag"))
        );
        let m = cat.search_with("writes", 10, &opts);
        assert_eq!(
            names(&m),
            ["a-tagged", "b-role"],
            "the query still has to match"
        );
        assert!(
            cat.search_with("", 10, &SearchOptions::default())
                .is_empty()
        );
        let none = ["nothing".to_owned()];
        let opts = SearchOptions {
            tags: &none,
            ..SearchOptions::default()
        };
        assert!(cat.search_with("", 10, &opts).is_empty());
    }

    #[test]
    fn usage_breaks_ties_by_success_rate_then_uses_and_never_beats_a_score() {
        // One-word names: equal text lengths, so equal BM25 and equal scores.
        let same = |name: &str| skill(name, "Converts units.", &["convert"], &[]);
        let cat = Catalog::from_skills(vec![
            same("alpha"),
            same("bravo"),
            same("charlie"),
            same("delta"),
            skill("echo", "Converts units.", &["convert", "units"], &[]),
        ]);
        let used = |uses, success_rate| Usage {
            uses,
            successes: 0,
            success_rate,
            last_used: Some(1),
        };
        let usage: HashMap<String, Usage> = [
            ("bravo", used(50, 0.1)),
            ("charlie", used(40, 0.9)),
            ("delta", used(4, 0.9)),
            ("echo", used(1, 0.0)),
        ]
        .into_iter()
        .map(|(n, u)| (n.to_owned(), u))
        .collect();
        let opts = SearchOptions {
            usage: &usage,
            ..SearchOptions::default()
        };
        let m = cat.search_with("convert units", 10, &opts);
        // A better score wins whatever the usage; among equals, the rate,
        // then the uses; never used sits above mostly failing.
        assert_eq!(names(&m), ["echo", "charlie", "delta", "alpha", "bravo"]);
        assert_eq!(m[1].score, m[4].score);
        // Without usage, names break the tie.
        let m = cat.search("convert units", 10);
        assert_eq!(names(&m), ["echo", "alpha", "bravo", "charlie", "delta"]);
        assert_eq!(names(&cat.search_with("convert", 1, &opts)), ["charlie"]);
    }

    fn installed(mut s: Skill) -> Skill {
        s.source = Source::Installed;
        s
    }

    /// Regex triggers that match nearly any request.
    const CATCH_ALL: &[&str] = &[
        "/.*/",
        "/./",
        "/\\w+/",
        "/[a-z]/",
        "/e/",
        "/\\s/",
        "/^/",
        "/(?s)./",
        "/\\b/",
        "/[^z]/",
        "/t/",
        "/o/",
        "/\\S+/",
        "/[aeiou]/",
        "/a|e|i|o|u/",
    ];

    #[test]
    fn catch_all_regexes_are_told_from_real_triggers() {
        let compile = |t: &str| {
            RegexBuilder::new(&t[1..t.len() - 1])
                .case_insensitive(true)
                .build()
                .expect("compiles")
        };
        for t in CATCH_ALL {
            assert!(matches_anything(&compile(t)), "{t} is a catch-all");
        }
        // The bundled skills' regex triggers, and other real ones.
        for t in [
            "/\\b(mail|message) (to|for)\\b/",
            "/\\b(columns?|schema|dataset)\\b/",
            "/\\bpdfs?\\b/",
            "/\\b(weather|forecast)\\b/",
            "/^translate\\b/",
            "/\\d{1,2}(am|pm)/",
        ] {
            assert!(!matches_anything(&compile(t)), "{t} is a real trigger");
        }
    }

    fn hijacker(triggers: &[&str], tags: &[&str]) -> Skill {
        installed(skill("hijack", "Does everything.", triggers, tags))
    }

    #[test]
    fn catch_all_triggers_and_tags_earn_an_installed_skill_nothing() {
        let stopwords = ["to", "for", "at the", "please"];
        let all: Vec<&str> = CATCH_ALL.iter().chain(&stopwords).copied().collect();
        let cat = Catalog::from_skills(vec![hijacker(&all, &stopwords)]);
        for q in ["Write an email to Dana about the budget review at 3pm", "x"] {
            assert!(cat.search(q, 5).is_empty(), "{q}: nothing of it counts");
        }
        let w = &cat.warnings()[0].message;
        assert!(
            w.contains("'/.*/'")
                && w.contains("more")
                && w.contains("earn an installed skill nothing"),
            "{w}"
        );
        assert_eq!(cat.warnings().len(), 1, "one warning per skill");
        // The same triggers still count for a skill of this machine.
        let mine = skill("hijack", "Does everything.", &all, &[]);
        let cat = Catalog::from_skills(vec![mine]);
        assert!(cat.search("x", 5)[0].score >= 300.0);
        assert!(cat.warnings().is_empty());
    }

    #[test]
    fn an_installed_skills_triggers_and_tags_count_once() {
        // Five real triggers and tags, each matching the task.
        let words = ["email", "dana", "budget", "review", "3pm"];
        let cat = Catalog::from_skills(vec![
            hijacker(&words, &words),
            skill("writer", "Writes emails.", &["email", "write email"], &[]),
        ]);
        let m = cat.search("Write an email to Dana about the budget review at 3pm", 5);
        assert_eq!(names(&m), ["writer", "hijack"]);
        assert!(m[1].score < 120.0, "{}", m[1].score);
        assert!(
            m[1].why
                .contains("installed: one trigger and one tag count"),
            "{}",
            m[1].why
        );
    }

    #[test]
    fn at_equal_points_trust_ranks_above_text() {
        // The installed skill's description fits the task better.
        let cat = Catalog::from_skills(vec![
            installed(skill(
                "a-stuffed",
                "Email email budget review Dana.",
                &["email"],
                &[],
            )),
            skill("b-plain", "Sends things.", &["email"], &[]),
        ]);
        let m = cat.search("email Dana about the budget review", 5);
        assert_eq!(names(&m), ["b-plain", "a-stuffed"]);
        assert!(m[1].score > m[0].score, "trust, not the score, decided");
        // A better match still wins whatever the source.
        let cat = Catalog::from_skills(vec![
            installed(skill("a-better", "d", &["email"], &[])),
            skill("b-text-only", "Email things.", &[], &[]),
        ]);
        assert_eq!(names(&cat.search("email", 5)), ["a-better", "b-text-only"]);
    }

    #[test]
    fn plurals_fold_for_text() {
        let cat = catalog();
        let m = cat.search("meeting", 5);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].skill.name, "notes");
    }
}
