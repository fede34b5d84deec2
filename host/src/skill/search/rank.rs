//! Answering a query: trigger and tag hits, BM25, then the ranking key:
//! pins, the trust tier, the points, the score and usage, in that order.

use std::collections::HashMap;

use super::text::{for_each_term, words};
use super::{Hit, Kind, Match, SearchIndex, SearchOptions};
use crate::skill::model::Skill;
use crate::skill::usage::Usage;

const TRIGGER_WEIGHT: f64 = 100.0;
const TAG_WEIGHT: f64 = 10.0;
const MAX_TAGS_COUNTED: u32 = 9;
/// BM25 r maps to 10·r/(r+BM25_HALF): below 10, half-way at BM25_HALF.
const BM25_HALF: f64 = 5.0;
/// What an untrusted skill's matched triggers, and tags, count as at most
/// (among untrusted skills: the tier already puts every one below a
/// trusted match).
const FOREIGN_MAX_TRIGGERS: u32 = 1;
const FOREIGN_MAX_TAGS: u32 = 1;

impl SearchIndex {
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
        let hits = self.hits(query);
        let bm25 = self.bm25(query, skills.len());
        let mut scored = self.score(skills, held, &hits, &bm25, list_tagged, opts);
        keep_best(&mut scored, k, skills, opts);
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

    /// The skills that match (and are not held back, and have a tag asked
    /// for), scored: one pass over all skills, with a cursor over the
    /// sorted hits.
    fn score(
        &self,
        skills: &[Skill],
        held: &[bool],
        hits: &[Hit],
        bm25: &[f32],
        list_tagged: bool,
        opts: &SearchOptions<'_>,
    ) -> Vec<Scored> {
        let pinned = pin_order(opts.pinned);
        let promoted = |s: &Skill| opts.trusted.contains(&s.name);
        let mut scored: Vec<Scored> = Vec::new();
        let mut h = 0;
        for (doc, &r) in bm25.iter().enumerate() {
            let skill = &skills[doc];
            let held_back = held.get(doc).copied().unwrap_or(false);
            let doc = u32::try_from(doc).unwrap_or(u32::MAX);
            let first = h;
            while h < hits.len() && hits[h].0 == doc {
                h += 1;
            }
            let (triggers, tags) = self.count_kinds(&hits[first..h]);
            if held_back || (r <= 0.0 && triggers == 0 && tags == 0 && !list_tagged) {
                continue;
            }
            if !opts.tags.is_empty() && !opts.tags.iter().any(|t| skill.has_tag(t)) {
                continue;
            }
            let pin = pinned
                .get(skill.name.as_str())
                .copied()
                .unwrap_or(usize::MAX);
            let trusted = !skill.source.is_foreign() || promoted(skill);
            scored.push(Scored::new(doc, trusted, triggers, tags, r, pin));
        }
        scored
    }

    /// How many of one skill's `hits` are triggers, and how many tags.
    fn count_kinds(&self, hits: &[Hit]) -> (u32, u32) {
        let (mut triggers, mut tags) = (0u32, 0u32);
        for hit in hits {
            match self.phrases.get(hit.1 as usize) {
                Some(p) if p.kind == Kind::Tag => tags += 1,
                _ => triggers += 1,
            }
        }
        (triggers, tags)
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
}

/// Each pinned name's place in the pin list (its first, when repeated).
fn pin_order(pinned: &[String]) -> HashMap<&str, usize> {
    let mut order = HashMap::new();
    for (i, name) in pinned.iter().enumerate() {
        order.entry(name.as_str()).or_insert(i);
    }
    order
}

/// The best `k` of `scored`, in rank order. Pins, then the tier: a
/// trusted skill that matched at all ranks above every untrusted one.
/// Within a tier, the points and then the text. Skills are sorted by name,
/// so the index breaks the last ties by name. Usage is asked only of
/// skills whose scores tie.
fn keep_best(scored: &mut Vec<Scored>, k: usize, skills: &[Skill], opts: &SearchOptions<'_>) {
    let by_rank = |a: &Scored, b: &Scored| {
        a.pin
            .cmp(&b.pin)
            .then(b.trusted.cmp(&a.trusted))
            .then(b.points.cmp(&a.points))
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
}

/// A skill that matched: its pinned rank (`usize::MAX`: not pinned), its
/// tier (trusted or not), its trigger and tag points (capped for an
/// untrusted skill, which only orders it among untrusted ones), its score
/// and its index.
#[derive(Debug, Clone, Copy)]
struct Scored {
    pin: usize,
    points: u32,
    trusted: bool,
    capped: bool,
    score: f64,
    doc: u32,
}

impl Scored {
    /// Skill `doc`, with its tier, its trigger and tag hits counted, its
    /// BM25 `r` and its pinned rank. An untrusted skill's counts are capped.
    fn new(doc: u32, trusted: bool, mut triggers: u32, mut tags: u32, r: f32, pin: usize) -> Self {
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
        Scored {
            pin,
            points,
            trusted,
            capped,
            score,
            doc,
        }
    }
}
