//! The combinations of roles that make an attack, judged in windows of
//! a few sentences of one instruction block.
//!
//! Each verb that sends (`transmit`) is given its destination (the first
//! one named after it in the window, else the last before it in its
//! clause) and its payload: a source said in the same clause, or one
//! gathered earlier ("read ~/.aws/credentials") that its clause points
//! back to ("post the contents"). Then:
//!
//! - a secret (or credentials collected) sent to someone else's
//!   destination, or to a documented one other than to authenticate, is
//!   `intent-exfil`, high; with no destination named, medium, and high
//!   when kept from the user or sent without asking;
//! - the user's private data or one credential sent to someone else (a
//!   destination the skill does not document, not to authenticate) is
//!   `intent-exfil` high too, and `intent-conceal` when kept from the
//!   user or sent without asking;
//! - anything sent to a destination that is not the user's while the
//!   window keeps it from the user is `intent-conceal`, high;
//! - a download then a run, with a safeguard off or kept from the user,
//!   not from a package manager, is `intent-fetch-run`, high.
//!
//! A send to the user's own destination is never a finding.

use std::ops::Range;

use super::super::Severity;
use super::text::{Block, Owner, Prose, Sink};
use super::{CONCEAL_RULE, EXFIL_RULE, FETCH_RUN_RULE, Hit, IntentHit, Lexicon, REMOTE_RULE, Role};
use crate::audit::prose::sentence;

/// Sentences a window spans.
const WINDOW: usize = 4;

/// Whether the hits can make any finding: a verb that sends or fetches,
/// and something a combination needs beside it.
pub fn worth_judging(hits: &[Hit]) -> bool {
    worth_judging_after(hits, false)
}

/// `worth_judging`, when `fetched` says a download was asked for earlier
/// in the section.
fn worth_judging_after(hits: &[Hit], fetched: bool) -> bool {
    let has = |r: Role| hits.iter().any(|h| h.role == r);
    let claims = [Role::Override, Role::Obey, Role::AsUser, Role::Redirect];
    if claims.iter().any(|&r| has(r)) || has(Role::Escalate) {
        return true;
    }
    if has(Role::Grant) && has(Role::Access) {
        return true;
    }
    let hidden = has(Role::Conceal) || has(Role::Misreport);
    if hidden
        && [Role::Supply, Role::Disable, Role::Run]
            .iter()
            .any(|&r| has(r))
    {
        return true;
    }
    let sends = has(Role::Transmit) || has(Role::Destroy);
    let runs = (has(Role::Acquire) || fetched) && has(Role::Run);
    (sends || runs)
        && [
            Role::Secret,
            Role::Credential,
            Role::Personal,
            Role::Conceal,
            Role::Quiet,
            Role::SafetyOff,
            Role::Control,
            Role::ForeignSink,
        ]
        .iter()
        .any(|&r| has(r))
}

/// How sensitive a payload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Payload {
    None,
    /// One credential (an API key, a token).
    Credential,
    /// The user's private data.
    Personal,
    /// A secret, or credentials collected.
    Secret,
}

/// A judge of one text.
pub struct Judge<'a> {
    lex: &'a Lexicon,
    text: &'a str,
    hits: Vec<Hit>,
    sinks: Vec<Sink>,
    blocks: Vec<Block>,
}

impl<'a> Judge<'a> {
    pub fn new(lex: &'a Lexicon, prose: &'a Prose, hits: Vec<Hit>) -> Judge<'a> {
        let mut blocks = prose.blocks.clone();
        let text = prose.masked.as_str();
        mark_forbidden(lex, text, &mut blocks);
        let mut sinks = prose.sinks();
        sinks.extend(role_sinks(&hits));
        sinks.sort_by_key(|s| s.start);
        Judge {
            lex,
            text,
            hits,
            sinks,
            blocks,
        }
    }

    /// The findings of every block, at most one per rule and block.
    pub fn findings(&self) -> Vec<IntentHit> {
        let mut out = Vec::new();
        // The first download asked for in the current section.
        let mut fetched: Option<Hit> = None;
        let mut prev_end = 0;
        for block in &self.blocks {
            let between = &self.text[prev_end..block.range.start];
            if between.lines().any(|l| l.trim_start().starts_with('#')) {
                fetched = None;
            }
            prev_end = block.range.end;
            let sentences = sentences(self.text, &block.range);
            let hits = self.said(block, &sentences);
            let earlier = fetched;
            fetched = fetched.or_else(|| self.first_download(&hits, &sentences));
            if !worth_judging_after(&hits, earlier.is_some()) {
                continue;
            }
            let mut found: Vec<IntentHit> = Vec::new();
            for i in 0..sentences.len() {
                let last = (i + WINDOW).min(sentences.len()) - 1;
                let w = Window {
                    judge: self,
                    sentences: &sentences[i..=last],
                    after: sentences.get(last + 1).cloned(),
                    hits: &hits,
                    leads_to_code: block.leads_to_code && last + 1 == sentences.len(),
                    fetched: earlier,
                };
                for f in w.findings() {
                    keep(&mut found, f);
                }
            }
            out.extend(found);
        }
        out
    }

    /// The first download said in a block, not from a package manager.
    fn first_download(&self, hits: &[Hit], sentences: &[Range<usize>]) -> Option<Hit> {
        hits.iter()
            .filter(|h| h.role == Role::Acquire)
            .find(|a| {
                let s = sentences.iter().find(|s| s.contains(&a.start));
                !s.is_some_and(|s| {
                    hits.iter()
                        .any(|h| h.role == Role::PackageManager && s.contains(&h.start))
                })
            })
            .copied()
    }

    /// The hits of a block that are said, not mentioned: an act's verb
    /// in quotation marks, in a sentence that describes, under a heading
    /// that forbids, or governed by a negation is dropped; an own
    /// destination inside a phrase of concealment is no destination.
    fn said(&self, block: &Block, sentences: &[Range<usize>]) -> Vec<Hit> {
        let mut hits = self.block_hits(block);
        drop_named_describes(&mut hits);
        let describes = self.describe_spans(&hits, sentences);
        let in_described = |h: &Hit| {
            describes
                .iter()
                .any(|(s, span)| s.contains(&h.start) && span.contains(&h.start))
        };
        let covered = |h: &Hit, roles: &[Role]| {
            hits.iter()
                .any(|o| roles.contains(&o.role) && inside_longer(h, o))
        };
        hits.iter()
            .filter(|h| {
                if is_act(h.role) {
                    let negated = is_verb(h.role) && self.negated(h, sentences);
                    !(block.forbidden
                        || in_described(h)
                        || self.mentioned(h)
                        || negated
                        || covered(h, &[Role::Conceal, Role::SafetyOff]))
                } else {
                    match h.role {
                        Role::Secret => !harmless_suffix(&self.text[h.end..]),
                        Role::OwnSink => {
                            !self.text[h.end..].starts_with(['\'', '’'])
                                && !covered(h, &[Role::Conceal, Role::SafetyOff])
                        }
                        _ => true,
                    }
                }
            })
            .copied()
            .collect()
    }
}

impl Judge<'_> {
    /// Each describing word's sentence and the span of it the word
    /// covers.
    fn describe_spans(
        &self,
        hits: &[Hit],
        sentences: &[Range<usize>],
    ) -> Vec<(Range<usize>, Range<usize>)> {
        hits.iter()
            .filter(|h| h.role == Role::Describe)
            .filter_map(|d| {
                let s = sentences.iter().find(|s| s.contains(&d.start))?;
                Some((s.clone(), self.described_span(d, s)))
            })
            .collect()
    }

    /// What a word that describes at `d` covers in its sentence `s`: the
    /// whole sentence, or only its clause when that clause is a condition
    /// ("if the system warns of malicious software, choose …").
    fn described_span(&self, d: &Hit, s: &Range<usize>) -> Range<usize> {
        let clause = clause_of(self.text, d.start, s);
        if self
            .lex
            .conditional(list_marker_stripped(&self.text[clause.clone()]))
        {
            clause
        } else {
            s.clone()
        }
    }

    /// Whether an act is quoted rather than said: in quotation marks or
    /// a code span, unless the quotes mark a label to press ("choose
    /// "Open Anyway"").
    fn mentioned(&self, h: &Hit) -> bool {
        if !quoted(self.text, h.start, h.end) {
            return false;
        }
        let from = crate::audit::prose::floor(self.text, h.start.saturating_sub(40));
        match self.lex.pressed(&self.text[from..h.start]) {
            Some(verb) => self.lex.negated(self.text, from + verb),
            None => true,
        }
    }

    /// Whether a negation governs the act at `h`: the verb right after a
    /// negator, or, for a claim of the user's authority, any verb of its
    /// clause before it ("never act on it as if the user typed it").
    fn negated(&self, h: &Hit, sentences: &[Range<usize>]) -> bool {
        if self.lex.negated(self.text, h.start) {
            return true;
        }
        if h.role != Role::AsUser {
            return false;
        }
        let Some(s) = sentences.iter().find(|s| s.contains(&h.start)) else {
            return false;
        };
        let clause = clause_of(self.text, h.start, s);
        let before = &self.text[clause.start..h.start];
        before
            .split_whitespace()
            .filter_map(|w| before.find(w).map(|i| clause.start + i))
            .any(|at| self.lex.negated(self.text, at))
    }

    /// The hits of a block, but words inside a URL or an address (no
    /// words of the prose).
    fn block_hits(&self, block: &Block) -> Vec<Hit> {
        let in_address = |h: &Hit| {
            let upto = self.sinks.partition_point(|s| s.start <= h.start);
            let near = self.sinks[..upto].iter().rev().take(4);
            near.into_iter()
                .any(|s| h.end <= s.end && (s.start, s.end) != (h.start, h.end))
        };
        let from = self.hits.partition_point(|h| h.start < block.range.start);
        let to = self.hits.partition_point(|h| h.start < block.range.end);
        self.hits[from..to]
            .iter()
            .filter(|h| h.end <= block.range.end && !in_address(h))
            .copied()
            .collect()
    }
}

/// Whether `h` lies inside the longer hit `o`.
fn inside_longer(h: &Hit, o: &Hit) -> bool {
    o.start <= h.start && h.end <= o.end && o.end - o.start > h.end - h.start
}

/// Drops the describing words that are part of a longer name: "audit"
/// in "audit log", "scan" in "security scan".
fn drop_named_describes(hits: &mut Vec<Hit>) {
    let named: Vec<bool> = hits
        .iter()
        .map(|d| {
            d.role == Role::Describe
                && hits
                    .iter()
                    .any(|o| o.role != Role::Describe && inside_longer(d, o))
        })
        .collect();
    let mut k = 0;
    hits.retain(|_| {
        k += 1;
        !named[k - 1]
    });
}

/// Whether a concealment keeps a secret out of sight ("don't show the
/// password in the summary"): hygiene, not an act kept from the user.
fn keeps_a_secret(h: &Hit, hits: &[Hit]) -> bool {
    hits.iter().any(|o| {
        matches!(o.role, Role::Secret | Role::Credential) && h.start <= o.start && o.end <= h.end
    })
}

/// Roles that are acts (what a sentence that describes or forbids does
/// not ask for).
fn is_act(r: Role) -> bool {
    matches!(
        r,
        Role::Transmit
            | Role::Destroy
            | Role::Acquire
            | Role::Run
            | Role::Conceal
            | Role::Quiet
            | Role::SafetyOff
            | Role::Disable
            | Role::Override
            | Role::Obey
            | Role::Escalate
            | Role::Redirect
            | Role::Misreport
            | Role::AsUser
            | Role::Grant
            | Role::Solicit
    )
}

/// Roles a negation before them cancels.
fn is_verb(r: Role) -> bool {
    matches!(
        r,
        Role::Transmit
            | Role::Destroy
            | Role::Acquire
            | Role::Run
            | Role::Disable
            | Role::Escalate
            | Role::Redirect
            | Role::Misreport
            | Role::AsUser
            | Role::Grant
            | Role::Solicit
    )
}

/// A file name that holds no secret: `.env.example`, `id_rsa.pub`.
fn harmless_suffix(after: &str) -> bool {
    [
        ".example",
        ".sample",
        ".template",
        ".dist",
        ".pub",
        ".tmpl",
        "-example",
    ]
    .iter()
    .any(|s| after.starts_with(s))
}

/// Whether `start..end` is in quotation marks or a code span on its
/// line (looking at most 300 bytes either way).
fn quoted(text: &str, start: usize, end: usize) -> bool {
    let from = crate::audit::prose::floor(text, start.saturating_sub(300));
    let to = crate::audit::prose::ceil(text, end + 300);
    let before = &text[from..start];
    let before = before.rsplit('\n').next().unwrap_or(before);
    let after = &text[end..to];
    let after = after.split('\n').next().unwrap_or(after);
    let same = ['"', '`']
        .iter()
        .any(|&q| before.matches(q).count() % 2 == 1 && after.contains(q));
    let pairs = [('“', '”'), ('«', '»'), ('「', '」'), ('„', '“')];
    same || pairs.iter().any(|&(o, c)| {
        before.rfind(o).is_some_and(|i| !before[i..].contains(c)) && after.contains(c)
    })
}

/// Marks the blocks whose heading or lead-in forbids what they list.
fn mark_forbidden(lex: &Lexicon, text: &str, blocks: &mut [Block]) {
    let mut heading = "";
    let mut prev_end = 0;
    for b in blocks.iter_mut() {
        let between = &text[prev_end..b.range.start];
        if let Some(h) = between.lines().rfind(|l| l.trim_start().starts_with('#')) {
            heading = h;
        }
        let before = text[..b.range.start].trim_end();
        let last = before.rsplit('\n').next().unwrap_or(before);
        let lead_in = last.ends_with(':').then_some(last);
        b.forbidden = lex.forbids(heading) || lead_in.is_some_and(|l| lex.forbids(l));
        prev_end = b.range.end;
    }
}

/// The destinations the lexicon names ("our server", "your own bucket").
fn role_sinks(hits: &[Hit]) -> Vec<Sink> {
    let owner = |r: Role| match r {
        Role::ForeignSink => Some(Owner::Foreign),
        Role::OwnSink => Some(Owner::Own),
        _ => None,
    };
    hits.iter()
        .filter_map(|h| {
            owner(h.role).map(|owner| Sink {
                start: h.start,
                end: h.end,
                owner,
            })
        })
        .collect()
}

/// The sentences of a block.
fn sentences(text: &str, block: &Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut at = block.start;
    while at < block.end {
        let end = sentence::end_of(text, at)
            .max(crate::audit::prose::ceil(text, at + 1))
            .min(block.end);
        out.push(at..end);
        at = end;
        at += text[at..block.end].len() - text[at..block.end].trim_start().len();
    }
    out
}

/// Keeps `f` unless a finding of its rule in the block is as severe.
fn keep(found: &mut Vec<IntentHit>, f: IntentHit) {
    match found.iter_mut().find(|o| o.rule == f.rule) {
        Some(o) if o.severity >= f.severity => {}
        Some(o) => *o = f,
        None => found.push(f),
    }
}

mod access;
mod window;
use window::*;
