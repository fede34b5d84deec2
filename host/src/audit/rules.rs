//! The rules of `rules.toml`, compiled once, and the matcher that runs them
//! over one text.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use super::Severity;
use super::normalize::{Normalized, is_invisible, normalize};

mod decode;
mod hosts;

pub(super) use decode::decode_base64;
use decode::may_hold_blob;
pub use decode::{decode_blob, decode_char_codes, rot13};
use hosts::imitates_with_ascii;
pub use hosts::spoofed_host;

/// The rules file, embedded in the binary.
pub const RULES_TOML: &str = include_str!("rules.toml");

/// A built-in check that a rule's patterns feed, for what a regex alone
/// cannot say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// Each match is a candidate blob (base64, hex, `\x` escapes), or a
    /// literal fed to a decoder (named group `rev`, `rot13` or `codes`):
    /// decoded in layers to a bounded depth, and a finding when a
    /// high-severity rule flags a decoded layer.
    DecodedBlob,
    /// Capture group 1 is a host name: a finding when a label mixes Latin
    /// with look-alike scripts, or is spelled wholly in look-alikes.
    MixedScriptHost,
    /// No patterns of its own: the tier other rules report a listed
    /// vendor's installer as (`vendor_as`, vendors.toml).
    VendorTier,
    /// Named group `pypi` or `npm` holds the arguments of an install
    /// command: a finding for each package name that looks like a popular
    /// package's name without being it (packages.toml).
    PackageLookalike,
    /// Persistence (a cron entry, a service, a Run key): high only when
    /// what persists is itself suspicious, else `downgrade_to` (persist.rs).
    PersistedCommand,
    /// A key added to `authorized_keys`: high only when it is a real
    /// foreign key or a downloaded one, else `downgrade_to` (persist.rs).
    PersistedKey,
}

/// Most lines a `window` rule sees at once.
pub const MAX_WINDOW: usize = 8;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    rule: Vec<RuleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: String,
    family: String,
    severity: Severity,
    description: String,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    also: Vec<String>,
    patterns: Vec<String>,
    #[serde(default)]
    unless: Vec<String>,
    #[serde(default)]
    unless_line: Vec<String>,
    downgrade_if: Option<String>,
    downgrade_to: Option<Severity>,
    #[serde(default)]
    raw: bool,
    #[serde(default)]
    only_non_ascii: bool,
    check: Option<Check>,
    /// Lines the patterns see at once (see `Rule::window`).
    window: Option<usize>,
    /// The id of the `vendor-tier` rule a match is reported as when it
    /// fetches a listed vendor's installer.
    vendor_as: Option<String>,
    /// The severity of a match that is quoted, not said (see `quoted.rs`).
    quoted_to: Option<Severity>,
    #[serde(default)]
    positive: Vec<String>,
    #[serde(default)]
    negative: Vec<String>,
    #[serde(default)]
    downgraded: Vec<String>,
    #[serde(default)]
    quoted: Vec<String>,
}

/// One compiled rule.
#[derive(Debug)]
pub struct Rule {
    pub id: String,
    pub family: String,
    pub severity: Severity,
    pub description: String,
    pub positive: Vec<String>,
    pub negative: Vec<String>,
    pub downgraded: Vec<String>,
    pub downgrade_to: Option<Severity>,
    /// Examples that must come out at `quoted_to`.
    pub quoted: Vec<String>,
    pub quoted_to: Option<Severity>,
    pub check: Option<Check>,
    patterns: Vec<Regex>,
    unless: Vec<Regex>,
    /// A match in the line that covers a hit excuses it.
    unless_line: Vec<Regex>,
    downgrade_if: Option<Regex>,
    raw: bool,
    only_non_ascii: bool,
    has_keywords: bool,
    has_also: bool,
    /// 1: the patterns see the lines that hold the rule's keywords. More:
    /// each line that holds a keyword or an `also` word and the lines
    /// after it, up to this many in all and not past a heading, so a
    /// sentence wrapped over lines, or a password on the line after
    /// "extract the archive", is one stretch.
    window: usize,
    vendor_as: Option<String>,
    /// The `vendor-tier` rule `vendor_as` names: its number and severity.
    vendor: Option<(usize, Severity)>,
}

/// Every rule, with the keyword prefilter over them.
#[derive(Debug)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    /// One automaton over every rule's keywords, each keyword once.
    prefilter: AhoCorasick,
    /// For each prefilter pattern, the rules it stands for (bit i: rule i).
    keyword_rules: Vec<Mask>,
}

/// A set of rules: bit i for a keyword of rule i, bit 64 + i for one of
/// its `also` keywords.
type Mask = u128;
/// Most rules a rules file may hold.
const MAX_RULES: usize = 64;

/// A stretch of the normalised text (whole lines) and the rules whose
/// keywords occur in it.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    rules: Mask,
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    let from = from.min(bytes.len());
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| from + i)
}

/// Whether a line ends in a `\` continuation.
fn continued(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.last() == Some(&b'\\')
}

/// A match before it is placed in the original text.
#[derive(Debug)]
pub(super) struct Hit {
    pub rule: usize,
    pub severity: Severity,
    /// Byte range in the original text.
    pub start: usize,
    pub end: usize,
    /// What a decoded blob decodes to, and the rule that flagged it.
    pub note: Option<String>,
}

fn compile(pattern: &str, id: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(1 << 24)
        .dfa_size_limit(1 << 22)
        .build()
        .map_err(|e| format!("rule {id}: bad pattern {pattern:?}: {e}"))
}

/// Parses and compiles a rules file.
pub fn parse(text: &str) -> Result<RuleSet, String> {
    let file: RulesFile = toml::from_str(text).map_err(|e| e.to_string())?;
    if file.rule.len() > MAX_RULES {
        return Err(format!("more than {MAX_RULES} rules"));
    }
    let mut rules: Vec<Rule> = Vec::with_capacity(file.rule.len());
    let mut keywords = Keywords::default();
    for spec in file.rule {
        check_spec(&spec, &rules)?;
        keywords.add(&spec, rules.len())?;
        rules.push(Rule::compile(spec)?);
    }
    resolve_vendor_tiers(&mut rules)?;
    let (prefilter, keyword_rules) = keywords.prefilter()?;
    Ok(RuleSet {
        rules,
        prefilter,
        keyword_rules,
    })
}

/// What a rule must be beyond its TOML shape, given the rules before it.
fn check_spec(spec: &RuleSpec, earlier: &[Rule]) -> Result<(), String> {
    if earlier.iter().any(|r| r.id == spec.id) {
        return Err(format!("rule {} is defined twice", spec.id));
    }
    if spec.patterns.is_empty() != (spec.check == Some(Check::VendorTier)) {
        return Err(format!(
            "rule {}: a vendor-tier rule has no pattern, every other rule has one",
            spec.id
        ));
    }
    if spec
        .window
        .is_some_and(|w| !(2..=MAX_WINDOW).contains(&w) || spec.keywords.is_empty())
    {
        return Err(format!(
            "rule {}: a window is 2 to {MAX_WINDOW} lines and needs keywords",
            spec.id
        ));
    }
    check_downgrade(spec)?;
    if !spec.also.is_empty() && spec.keywords.is_empty() {
        return Err(format!("rule {}: `also` needs `keywords`", spec.id));
    }
    Ok(())
}

/// `downgrade_if` needs `downgrade_to`; `downgrade_to` needs
/// `downgrade_if` or a persisted check, which needs `downgrade_to`.
fn check_downgrade(spec: &RuleSpec) -> Result<(), String> {
    let settled = matches!(
        spec.check,
        Some(Check::PersistedCommand | Check::PersistedKey)
    );
    if settled && spec.downgrade_to.is_none() {
        return Err(format!(
            "rule {}: a persisted check needs downgrade_to",
            spec.id
        ));
    }
    if spec.downgrade_if.is_some() && spec.downgrade_to.is_none()
        || spec.downgrade_to.is_some() && spec.downgrade_if.is_none() && !settled
    {
        return Err(format!(
            "rule {}: downgrade_if and downgrade_to go together",
            spec.id
        ));
    }
    Ok(())
}

/// Points each `vendor_as` at the rule it names, which must be a
/// `vendor-tier` rule.
fn resolve_vendor_tiers(rules: &mut [Rule]) -> Result<(), String> {
    for i in 0..rules.len() {
        let Some(name) = rules[i].vendor_as.clone() else {
            continue;
        };
        let tier = rules
            .iter()
            .position(|r| r.id == name && r.check == Some(Check::VendorTier))
            .ok_or_else(|| format!("rule {}: no vendor-tier rule {name}", rules[i].id))?;
        rules[i].vendor = Some((tier, rules[tier].severity));
    }
    Ok(())
}

/// The prefilter's keywords, each once (lowercase), with the rules that
/// name it.
#[derive(Default)]
struct Keywords {
    words: Vec<String>,
    rules: Vec<Mask>,
}

impl Keywords {
    /// Adds the keywords and `also` keywords of rule number `rule`.
    fn add(&mut self, spec: &RuleSpec, rule: usize) -> Result<(), String> {
        let tagged = spec
            .keywords
            .iter()
            .map(|k| (k, 0))
            .chain(spec.also.iter().map(|k| (k, 64)));
        for (k, shift) in tagged {
            if !k.is_ascii() || k.is_empty() {
                return Err(format!("rule {}: keyword {k:?} is not ASCII", spec.id));
            }
            let k = k.to_ascii_lowercase();
            let bit: Mask = 1 << (rule + shift);
            match self.words.iter().position(|x| *x == k) {
                Some(i) => self.rules[i] |= bit,
                None => {
                    self.words.push(k);
                    self.rules.push(bit);
                }
            }
        }
        Ok(())
    }

    /// The automaton over every keyword, and each keyword's rules.
    fn prefilter(mut self) -> Result<(AhoCorasick, Vec<Mask>), String> {
        let words = &self.words;
        // A keyword found stands for the keywords inside it too: "logins.json"
        // holds "login". (Overlapping search finds both anyway; this keeps a
        // line's rule set right whatever the search reports.)
        for i in 0..words.len() {
            for j in 0..words.len() {
                if i != j && words[i].contains(words[j].as_str()) {
                    self.rules[i] |= self.rules[j];
                }
            }
        }
        // A DFA: one table lookup per byte of text, which is what one pass
        // over every skill of a catalog costs.
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(words)
            .map_err(|e| e.to_string())?;
        Ok((automaton, self.rules))
    }
}

impl Rule {
    /// Compiles a checked spec.
    fn compile(spec: RuleSpec) -> Result<Rule, String> {
        // A rule on the normalised text matches ASCII word boundaries: the
        // lazy DFA handles them on any text, where a Unicode `\b` makes
        // it give up on a line with one non-ASCII character. Normalising
        // has folded look-alikes and fullwidth forms to ASCII already.
        let ascii_b = |p: &String| {
            if spec.raw {
                p.clone()
            } else {
                p.replace("\\b", "(?-u:\\b)")
            }
        };
        let compile_all = |ps: &[String]| -> Result<Vec<Regex>, String> {
            ps.iter().map(|p| compile(&ascii_b(p), &spec.id)).collect()
        };
        Ok(Rule {
            patterns: compile_all(&spec.patterns)?,
            unless: compile_all(&spec.unless)?,
            unless_line: compile_all(&spec.unless_line)?,
            downgrade_if: spec
                .downgrade_if
                .as_ref()
                .map(|p| compile(&ascii_b(p), &spec.id))
                .transpose()?,
            has_keywords: !spec.keywords.is_empty(),
            has_also: !spec.also.is_empty(),
            id: spec.id,
            family: spec.family,
            severity: spec.severity,
            description: spec.description,
            positive: spec.positive,
            negative: spec.negative,
            downgraded: spec.downgraded,
            downgrade_to: spec.downgrade_to,
            quoted: spec.quoted,
            quoted_to: spec.quoted_to,
            raw: spec.raw,
            only_non_ascii: spec.only_non_ascii,
            check: spec.check,
            window: spec.window.unwrap_or(1),
            vendor_as: spec.vendor_as,
            vendor: None,
        })
    }
}

/// The embedded rules, compiled on first use. The file is part of the
/// binary and a unit test parses it, so a failure here is a build defect.
pub fn rules() -> &'static RuleSet {
    static RULES: LazyLock<RuleSet> =
        LazyLock::new(|| super::embedded("rules.toml", parse(RULES_TOML)));
    &RULES
}

/// Largest blob decoded, and most blobs decoded in one text.
const MAX_BLOB: usize = 64 * 1024;
const MAX_BLOBS: usize = 256;
/// Layers of encoding undone, at most: base64 of hex of a command is two.
pub const MAX_DECODE_DEPTH: u8 = 3;
/// Bytes of decoded text scanned, at most, for one audited text, all
/// layers together: nesting cannot multiply the work past this.
const DECODE_BUDGET: usize = 1 << 20;

/// What decoding may still cost for one audited text.
struct Budget(std::cell::Cell<usize>);

impl Budget {
    /// Takes `n` bytes from the budget; false when it cannot.
    fn take(&self, n: usize) -> bool {
        let left = self.0.get();
        self.0.set(left.saturating_sub(n));
        left >= n
    }
}

impl RuleSet {
    /// The lines of `norm` that hold a keyword, each with the rules whose
    /// keywords it holds (a line a trailing `\\` continues runs on to the
    /// next). One pass of the keyword automaton over the text; a rule's
    /// regexes then run on its lines only, which is what keeps an audited
    /// catalog load fast.
    fn spans(&self, norm: &str) -> (Vec<Span>, Mask) {
        let bytes = norm.as_bytes();
        let mut spans: Vec<Span> = Vec::new();
        let mut any: Mask = 0;
        // Newlines are searched once: from where the last line ended.
        let mut scanned = 0;
        let mut line_start = 0;
        for m in self.prefilter.find_overlapping_iter(norm) {
            let rules = self.keyword_rules[m.pattern().as_usize()];
            any |= rules;
            if let Some(last) = spans.last_mut()
                && m.start() < last.end
            {
                last.rules |= rules;
                continue;
            }
            if m.start() > scanned
                && let Some(i) = bytes[scanned..m.start()].iter().rposition(|&b| b == b'\n')
            {
                line_start = scanned + i + 1;
            }
            let start = line_start.max(spans.last().map_or(0, |l| l.end));
            let mut end = line_end(bytes, m.end());
            while end < bytes.len() && continued(&bytes[..end]) {
                end = line_end(bytes, end + 1);
            }
            spans.push(Span { start, end, rules });
            scanned = end;
            line_start = (end + 1).min(bytes.len());
        }
        (spans, any)
    }

    /// Every hit of every rule in `text` (original offsets).
    pub(super) fn scan(&self, text: &str) -> Vec<Hit> {
        let norm = normalize(text);
        let budget = Budget(std::cell::Cell::new(DECODE_BUDGET));
        self.scan_normalized(text, &norm, MAX_DECODE_DEPTH, &budget)
    }

    /// The hits in `text`; `depth` is how many more layers of encoding
    /// may be undone inside it.
    fn scan_normalized(
        &self,
        text: &str,
        norm: &Normalized<'_>,
        depth: u8,
        budget: &Budget,
    ) -> Vec<Hit> {
        let (spans, keyed) = self.spans(&norm.text);
        let present = Present::of(text, norm, keyed, depth > 0);
        let mut hits = Vec::new();
        for (i, rule) in self.rules.iter().enumerate() {
            let need = rule.need(i);
            if !rule.may_match(need, &present) {
                continue;
            }
            let hay = Haystack {
                text,
                norm,
                raw: rule.raw,
                // An installer hidden in a blob is no vendor's documented
                // command: in a decoded layer it stays what it is.
                decoded: depth < MAX_DECODE_DEPTH,
            };
            self.run_rule(i, &hay, &spans, (depth, budget), &mut hits);
        }
        super::persist::settle(self, text, &mut hits);
        hits
    }

    /// Runs rule number `i`'s patterns over the haystack, each as its
    /// check says.
    fn run_rule(
        &self,
        i: usize,
        hay: &Haystack<'_, '_>,
        spans: &[Span],
        (depth, budget): (u8, &Budget),
        hits: &mut Vec<Hit>,
    ) {
        let rule = &self.rules[i];
        let need = rule.need(i);
        for re in &rule.patterns {
            match rule.check {
                None | Some(Check::PersistedCommand | Check::PersistedKey) => {
                    rule.find(i, need, re, hay, spans, hits)
                }
                Some(Check::DecodedBlob) => self.find_blobs(i, re, hay, (depth, budget), hits),
                Some(Check::MixedScriptHost) => find_spoofed_hosts(i, rule.severity, re, hay, hits),
                Some(Check::PackageLookalike) => {
                    let stretches = rule.stretches(i, need, hay.text(), spans);
                    let found = (i, rule.severity, re);
                    super::packages::find_lookalikes(found, hay, &stretches, hits)
                }
                Some(Check::VendorTier) => {}
            }
        }
    }

    /// The blobs `re` finds that decode to text a high-severity rule flags.
    fn find_blobs(
        &self,
        rule: usize,
        re: &Regex,
        hay: &Haystack<'_, '_>,
        (depth, budget): (u8, &Budget),
        hits: &mut Vec<Hit>,
    ) {
        let severity = self.rules[rule].severity;
        let text = hay.text();
        let found: Vec<(usize, usize, Option<String>)> = if re.captures_len() == 1 {
            let blobs = re.find_iter(text).take(MAX_BLOBS);
            blobs
                .map(|m| {
                    (
                        m.start(),
                        m.end(),
                        self.blob_note(m.as_str(), depth, budget),
                    )
                })
                .collect()
        } else {
            let literals = re.captures_iter(text).take(MAX_BLOBS);
            literals
                .filter_map(|c| {
                    let all = c.get(0)?;
                    let note = self.literal_note(&c, depth, budget);
                    Some((all.start(), all.end(), note))
                })
                .collect()
        };
        for (start, end, note) in found {
            if let Some(note) = note {
                hits.push(hay.hit(rule, severity, start, end, Some(note)));
            }
        }
    }

    /// A blob as written, reversed and in rot13: the first that decodes to
    /// text a high-severity rule flags.
    fn blob_note(&self, blob: &str, depth: u8, budget: &Budget) -> Option<String> {
        if blob.len() > MAX_BLOB {
            return None;
        }
        let reversed: String = blob.chars().rev().collect();
        [blob.to_owned(), reversed, rot13(blob)]
            .iter()
            .filter_map(|b| decode_blob(b))
            .find_map(|decoded| self.layer_note(&decoded, depth, budget))
    }

    /// A string literal fed to a decoder in the same text, undone the way
    /// the named group that holds it says.
    fn literal_note(&self, c: &regex::Captures<'_>, depth: u8, budget: &Budget) -> Option<String> {
        if let Some(m) = c.name("xor") {
            return decode::decode_xor_codes(m.as_str())
                .iter()
                .find_map(|text| self.text_note(text, depth, budget));
        }
        let decoded = if let Some(m) = c.name("rev") {
            m.as_str().chars().rev().collect()
        } else if let Some(m) = c.name("rot13") {
            rot13(m.as_str())
        } else {
            decode_char_codes(c.name("codes")?.as_str())?
        };
        self.layer_note(&decoded, depth, budget)
    }

    /// When `decoded` (one layer undone), or its reverse, holds text a
    /// high-severity rule flags, in it or in the layers still inside it:
    /// what it decodes to and which rule, for the finding's excerpt.
    fn layer_note(&self, decoded: &str, depth: u8, budget: &Budget) -> Option<String> {
        self.text_note(decoded, depth, budget).or_else(|| {
            let reversed: String = decoded.chars().rev().collect();
            self.text_note(&reversed, depth, budget)
        })
    }

    fn text_note(&self, decoded: &str, depth: u8, budget: &Budget) -> Option<String> {
        if depth == 0 || !budget.take(decoded.len()) {
            return None;
        }
        let norm = normalize(decoded);
        let hits = self.scan_normalized(decoded, &norm, depth - 1, budget);
        let hit = hits.iter().find(|h| h.severity == Severity::High)?;
        let shown: String = decoded[hit.start..hit.end].chars().take(100).collect();
        let id = &self.rules[hit.rule].id;
        Some(match &hit.note {
            Some(inner) => format!("decodes to {shown:?} ({id}), which {inner}"),
            None => format!("decodes to {shown:?} ({id})"),
        })
    }
}

/// What a text may hold, learned before any rule runs, so that a rule
/// that cannot match is not run.
struct Present {
    /// The rules whose keywords occur (see `RuleSet::spans`).
    keyed: Mask,
    ascii: bool,
    invisible: bool,
    blobs: bool,
    /// Whether a layer of encoding may still be undone.
    decode: bool,
}

impl Present {
    fn of(text: &str, norm: &Normalized<'_>, keyed: Mask, decode: bool) -> Present {
        let ascii = text.is_ascii();
        // The raw rules look for characters few texts hold: one pass to
        // know whether they can match at all.
        // A host can imitate an ASCII one in any script, Latin included
        // (IPA ɡ): the host rule runs on every text that is not ASCII.
        let invisible = !ascii && text.chars().any(is_invisible);
        // Blobs are runs of 20 or more base64 or hex characters, or `\x`
        // escapes: most texts have none, and then the blob search is not
        // run at all.
        let blobs = decode && may_hold_blob(norm.text.as_bytes());
        Present {
            keyed,
            ascii,
            invisible,
            blobs,
            decode,
        }
    }
}

/// The text a rule runs on (the original for a raw rule, else the
/// normalised one), and how its offsets map back to the original.
pub(super) struct Haystack<'a, 'n> {
    text: &'a str,
    norm: &'a Normalized<'n>,
    raw: bool,
    /// Whether the text is a decoded layer, not the text as written.
    decoded: bool,
}

impl Haystack<'_, '_> {
    pub(super) fn text(&self) -> &str {
        if self.raw { self.text } else { &self.norm.text }
    }

    /// A hit of rule `rule` at `start..end` of the haystack.
    pub(super) fn hit(
        &self,
        rule: usize,
        severity: Severity,
        start: usize,
        end: usize,
        note: Option<String>,
    ) -> Hit {
        let (start, end) = if self.raw {
            (start, end)
        } else {
            (
                self.norm.original_offset(start),
                self.norm.original_end(end, self.text.len()),
            )
        };
        Hit {
            rule,
            severity,
            start,
            end,
            note,
        }
    }
}

impl Rule {
    /// The keyword bits rule number `i` needs: a keyword and, when the
    /// rule has them, an `also` word.
    fn need(&self, i: usize) -> Mask {
        let bit: Mask = 1 << i;
        if self.has_also { bit | bit << 64 } else { bit }
    }

    /// Whether the rule can match a text that holds what `present` says.
    fn may_match(&self, need: Mask, present: &Present) -> bool {
        !((self.has_keywords && present.keyed & need != need)
            || (self.only_non_ascii && present.ascii)
            || (self.raw && self.check.is_none() && !present.invisible)
            || (self.check == Some(Check::MixedScriptHost) && present.ascii)
            || (self.check == Some(Check::DecodedBlob) && !present.decode)
            || self.check == Some(Check::VendorTier)
            // A blob rule with no keywords looks for runs of blob
            // characters; one with keywords, for the decoder they name.
            || (self.check == Some(Check::DecodedBlob) && !self.has_keywords && !present.blobs))
    }

    /// The matches of `re`, rule number `i`'s pattern, on the lines that
    /// hold the rule's keywords (or the whole text): but those an `unless`
    /// pattern matches, each at the severity `placed` gives it.
    fn find(
        &self,
        i: usize,
        need: Mask,
        re: &Regex,
        hay: &Haystack<'_, '_>,
        spans: &[Span],
        hits: &mut Vec<Hit>,
    ) {
        let text = hay.text();
        for (base, end) in self.stretches(i, need, text, spans) {
            for m in re.find_iter(&text[base..end]) {
                let (start, end) = (base + m.start(), base + m.end());
                if self.unless.iter().any(|u| u.is_match(m.as_str()))
                    || self.excused_by_line(text, start, end)
                {
                    continue;
                }
                hits.push(self.placed(i, hay, start, end));
            }
        }
    }

    /// The stretches of `text` rule number `i` runs on: the lines that hold
    /// its keywords (and `also` words), windows of lines from them, or the
    /// whole text for a rule without keywords.
    fn stretches(&self, i: usize, need: Mask, text: &str, spans: &[Span]) -> Vec<(usize, usize)> {
        if !self.has_keywords || self.raw {
            return vec![(0, text.len())];
        }
        if self.window == 1 {
            let mine = spans.iter().filter(|l| l.rules & need == need);
            return mine.map(|l| (l.start, l.end)).collect();
        }
        let words: Mask = (1 << i) | (1 << (i + 64));
        let starts = spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.rules & words != 0);
        starts
            .filter_map(|(k, s)| {
                let end = window_end(text.as_bytes(), s.end, self.window - 1);
                let inside = spans[k..].iter().take_while(|t| t.start < end);
                let held = inside.fold(0, |m, t| m | t.rules);
                (held & need == need).then_some((s.start, end))
            })
            .collect()
    }

    /// A hit at `start..end` of the haystack, at the rule's severity, or
    /// the one `downgrade_if` or `quoted_to` gives it, or reported as the
    /// vendor tier when it fetches a listed vendor's installer.
    fn placed(&self, i: usize, hay: &Haystack<'_, '_>, start: usize, end: usize) -> Hit {
        let text = hay.text();
        let found = &text[start..end];
        let mut severity = match (&self.downgrade_if, self.downgrade_to) {
            (Some(d), Some(to)) if d.is_match(found) => to,
            _ => self.severity,
        };
        if let Some(to) = self.quoted_to
            && super::prose::table().mentioned(text, start, end)
        {
            severity = severity.min(to);
        }
        let mut hit = hay.hit(i, severity, start, end, None);
        if let Some((tier, tier_severity)) = self.vendor
            && !hay.decoded
            && super::vendors::is_vendor_installer(&hay.text[hit.start..hit.end])
        {
            (hit.rule, hit.severity) = (tier, tier_severity.min(severity));
        }
        hit
    }
}

/// Where a window that ends its first stretch at `from` ends: `more` lines
/// further, or before a heading (a line that starts with `#`), or at the
/// end of the text.
fn window_end(bytes: &[u8], from: usize, more: usize) -> usize {
    let mut end = from;
    for _ in 0..more {
        if end >= bytes.len() || bytes.get(end + 1) == Some(&b'#') {
            break;
        }
        end = line_end(bytes, end + 1);
    }
    end
}

impl Rule {
    /// Whether an `unless_line` pattern matches, in the line of `text`
    /// that holds `start..end`, a stretch that covers it.
    fn excused_by_line(&self, text: &str, start: usize, end: usize) -> bool {
        if self.unless_line.is_empty() {
            return false;
        }
        let bytes = text.as_bytes();
        let from = bytes[..start]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let to = line_end(bytes, end);
        self.unless_line.iter().any(|u| {
            u.find_iter(&text[from..to])
                .any(|c| from + c.start() <= start && end <= from + c.end())
        })
    }
}

/// The matches of `re` whose host (capture group 1) is spoofed.
fn find_spoofed_hosts(
    rule: usize,
    severity: Severity,
    re: &Regex,
    hay: &Haystack<'_, '_>,
    hits: &mut Vec<Hit>,
) {
    for c in re.captures_iter(hay.text()) {
        let (Some(all), Some(host)) = (c.get(0), c.get(1)) else {
            continue;
        };
        // A bare name (no scheme, `www.` or `@`) may be a file name in
        // another script (`сорос.md`): only a label that also holds ASCII
        // letters can imitate a host there.
        let bare = host.start() == all.start();
        if spoofed_host(host.as_str()) && (!bare || imitates_with_ascii(host.as_str())) {
            hits.push(hay.hit(rule, severity, all.start(), all.end(), None));
        }
    }
}
