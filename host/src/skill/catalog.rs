//! The catalog: every skill of every root, later roots overriding earlier
//! ones by name (except that an installed skill never takes another
//! source's name: see [`Catalog::load`]), with the warnings loading produced.
//! Names are compared by their [`skeleton`]: `email_writer` and
//! `e-mail-writer` are the name `email-writer`.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::load;
use super::model::{Skill, Source};
use super::search::{Match, SearchIndex, SearchOptions};
use super::skeleton::skeleton;
use crate::audit::{self, Finding};

/// A folder skills are discovered in, and what kind of root it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Absolute (made so by `Root::new`), so skill paths are too.
    pub dir: PathBuf,
    pub source: Source,
    /// Folders below `dir` that are roots of their own (not searched here).
    pub skip: Vec<PathBuf>,
}

impl Root {
    pub fn new(dir: PathBuf, source: Source) -> Self {
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        Root {
            dir,
            source,
            skip: Vec::new(),
        }
    }

    /// The same root, not searching `sub` (a root of its own).
    pub fn skipping(mut self, sub: PathBuf) -> Self {
        self.skip.push(std::path::absolute(&sub).unwrap_or(sub));
        self
    }
}

/// `[catalog]` in skillhost.toml: how retrieval ranks skills.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CatalogConfig {
    /// Skills ranked above every other match of a search or a selection,
    /// in this order. A pinned skill must still match (by text, trigger,
    /// tag or `--tag`) to be listed: pinning orders, `--skill` forces.
    pub pinned: Vec<String>,
    /// Installed skills the operator trusts for retrieval: each ranks by
    /// its score among the bundled, forged, user, workspace and `--skills`
    /// skills, instead of below every one of them that matched (see
    /// `search`). Trusting names a skill, not its text: nothing a skill
    /// says of itself promotes it.
    pub trusted: Vec<String>,
}

impl CatalogConfig {
    /// The pinned names no skill of `catalog` has (typos, removed skills).
    pub fn unknown_pinned<'a>(&'a self, catalog: &Catalog) -> Vec<&'a str> {
        self.pinned
            .iter()
            .filter(|n| catalog.get(n).is_none())
            .map(String::as_str)
            .collect()
    }
}

/// Bounds on what loading one root may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOptions {
    /// How many folder levels below a root are searched.
    pub max_depth: usize,
    /// Largest SKILL.md read; bigger ones are skipped with a warning.
    pub max_file_bytes: u64,
    /// Most SKILL.md files read per root (folders visited are capped at 8x).
    pub max_files: usize,
    /// Audit the text of every skill whose source is audited (all but
    /// bundled, see `Source::is_audited`): a skill with a high finding is
    /// kept out of the prompt, retrieval and the MCP tools unless allowed
    /// (see [`Catalog::allow_flagged`]). `[audit] enabled` in skillhost.toml.
    pub audit: bool,
}

impl LoadOptions {
    /// The defaults, as a constant.
    pub const DEFAULT: LoadOptions = LoadOptions {
        max_depth: 8,
        max_file_bytes: 1 << 20,
        max_files: 20_000,
        audit: true,
    };
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions::DEFAULT
    }
}

/// Something loading wants a human to know: a skipped skill, a spec
/// deviation, a cap that was hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub path: PathBuf,
    pub message: String,
}

impl Warning {
    pub fn new(path: impl AsRef<Path>, message: impl Into<String>) -> Self {
        Warning {
            path: path.as_ref().to_path_buf(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// Counts from one load, for summaries and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadStats {
    /// SKILL.md files found (within the caps).
    pub files: usize,
    /// Files that became a skill.
    pub parsed: usize,
    /// Files that could not be read or were refused by the parser.
    pub dropped: usize,
    /// Skills ignored because an earlier one in the same root had the name.
    pub duplicates: usize,
    /// Skills that lost their name to a skill of another root (see
    /// [`Catalog::shadowed`]).
    pub overridden: usize,
}

/// A skill the catalog does not use: another root's skill has its name,
/// or a name of the same [`skeleton`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shadowed {
    /// The name of the skill used instead.
    pub name: String,
    /// Its own name: `name`, or a look-alike of it.
    pub own_name: String,
    pub source: Source,
    /// Its SKILL.md.
    pub path: PathBuf,
}

/// Whether a skill of source `new`, from a later root, replaces a skill of
/// the same name and source `held`. Later roots win, except that an
/// installed skill never replaces a skill of any other source: its name
/// is its author's choice, and a skill this machine keeps must not be
/// hijacked by one. So the precedence, highest first, is `--skills`,
/// workspace, user, forged, bundled, installed (see `Paths::roots`).
fn replaces(held: Source, new: Source) -> bool {
    !new.is_foreign() || held.is_foreign()
}

impl Shadowed {
    /// `skill`, which lost its name to the skill named `winner`.
    fn of(skill: Skill, winner: &str) -> Shadowed {
        Shadowed {
            name: winner.to_owned(),
            own_name: skill.name,
            source: skill.source,
            path: skill.path,
        }
    }
}

/// Every loaded skill, sorted by name, plus a search index over them.
#[derive(Debug, Clone)]
pub struct Catalog {
    skills: Vec<Skill>,
    by_name: HashMap<String, usize>,
    /// The skills that lost their name, sorted by name.
    shadowed: Vec<Shadowed>,
    warnings: Vec<Warning>,
    stats: LoadStats,
    index: SearchIndex,
    /// What the text audit found, by skill (the order of `skills`); None
    /// for a skill that was not audited (bundled, or the audit off).
    audits: Vec<Option<SkillAudit>>,
}

/// What the text audit at load found in one skill.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SkillAudit {
    pub findings: Vec<Finding>,
    /// Named in `[audit] allow` with this text's pin: used despite a high
    /// finding.
    pub allowed: bool,
    /// The pin of the audited text (`sha256:…`, see `audit::text_pin`):
    /// known for a flagged skill, which is all an allowance can name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
}

impl SkillAudit {
    pub fn new(findings: Vec<Finding>, pin: Option<String>) -> SkillAudit {
        SkillAudit {
            findings,
            allowed: false,
            pin,
        }
    }

    /// Whether a finding is high: what keeps the skill out of sight.
    pub fn flagged(&self) -> bool {
        audit::has_high(&self.findings)
    }

    /// Flagged and not allowed: kept out of the `<available_skills>`
    /// block, retrieval, the MCP tools, and refused by `run --skill`.
    pub fn held_back(&self) -> bool {
        self.flagged() && !self.allowed
    }
}

impl Catalog {
    /// Loads every root, lowest priority first: a skill replaces one of
    /// the same name from an earlier root, unless it is installed and that
    /// one is not (see `replaces`); an installed skill that loses its
    /// name is a warning. Never fails: a root or a skill that cannot be
    /// read becomes a warning.
    pub fn load(roots: &[Root], opts: &LoadOptions) -> Catalog {
        Catalog::load_cached(roots, opts, None)
    }

    /// [`load`](Self::load), with what the audit found in texts it saw
    /// before taken from `cache` (and what it finds now added to it).
    pub fn load_cached(
        roots: &[Root],
        opts: &LoadOptions,
        cache: Option<&audit::FindingsCache>,
    ) -> Catalog {
        let mut warnings = Vec::new();
        let mut merge = Merge::default();
        for (ri, root) in roots.iter().enumerate() {
            let loaded = load::load_root(root, opts, cache, &mut warnings);
            merge.add_root(ri, loaded, &mut warnings);
        }
        let Merge {
            slots,
            shadowed,
            stats,
            mut audited,
            ..
        } = merge;
        let skills = sorted_by_name(slots);
        warn_lost_names(&shadowed, &skills, &mut warnings);
        // Only the warnings of skills that made it into the catalog: an
        // overridden skill's problems are not the user's concern.
        for s in &skills {
            warnings.extend(s.warnings.iter().map(|w| Warning::new(&s.path, w.clone())));
        }
        let audits = skills.iter().map(|s| audited.remove(&s.path)).collect();
        let mut catalog = Catalog::build(skills, shadowed, warnings, stats);
        catalog.audits = audits;
        catalog
    }

    /// [`load_cached`](Self::load_cached) with the audit as `[audit]`
    /// says: on or off, and the flagged skills it allows.
    pub fn load_audited(
        roots: &[Root],
        opts: &LoadOptions,
        config: &audit::AuditConfig,
        cache: Option<&audit::FindingsCache>,
    ) -> Catalog {
        let opts = LoadOptions {
            audit: config.enabled,
            ..*opts
        };
        let mut catalog = Catalog::load_cached(roots, &opts, cache);
        catalog.allow_flagged(&config.allow);
        catalog
    }

    /// A catalog of ready-made skills (tests, generated skills). A later
    /// skill replaces an earlier one of the same name (or skeleton), as a
    /// later root's does (an installed one never replaces another source's).
    pub fn from_skills(skills: Vec<Skill>) -> Catalog {
        let mut merge = Merge::default();
        for (i, s) in skills.into_iter().enumerate() {
            merge.add(i, s, &mut Vec::new());
        }
        Catalog::build(
            sorted_by_name(merge.slots),
            merge.shadowed,
            Vec::new(),
            LoadStats::default(),
        )
    }

    fn build(
        skills: Vec<Skill>,
        mut shadowed: Vec<Shadowed>,
        mut warnings: Vec<Warning>,
        stats: LoadStats,
    ) -> Catalog {
        // By name; stable, so each name's losers stay in root order.
        shadowed.sort_by(|a, b| a.name.cmp(&b.name));
        let (index, index_warnings) = SearchIndex::build(&skills);
        warnings.extend(index_warnings);
        let by_name = skills
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        let audits = vec![None; skills.len()];
        Catalog {
            skills,
            by_name,
            shadowed,
            warnings,
            stats,
            index,
            audits,
        }
    }

    /// Lets the skills `allow` (`[audit] allow`) pins be used despite a
    /// high finding: an entry `name@sha256:HEX` allows skill `name` only
    /// while its audited text has that pin, whichever root it came from.
    /// An entry that pins another text allows nothing; a bare name, or a
    /// malformed entry, allows nothing and is a warning that says the pin
    /// to write.
    pub fn allow_flagged(&mut self, allow: &[String]) {
        for entry in allow {
            match audit::parse_allow(entry) {
                Ok((name, pin)) => {
                    if let Some(&i) = self.by_name.get(name)
                        && let Some(a) = &mut self.audits[i]
                        && a.pin.as_deref() == Some(pin)
                    {
                        a.allowed = true;
                    }
                }
                Err(why) => self.warn_allow(entry, why),
            }
        }
    }

    /// The warning for a bad `[audit] allow` entry: why, and the pin of
    /// the flagged skill it names, when there is one.
    fn warn_allow(&mut self, entry: &str, why: String) {
        let name = entry.split('@').next().unwrap_or(entry);
        let hint = self
            .audit(name)
            .and_then(|a| a.pin.clone())
            .map_or_else(String::new, |pin| {
                format!(" (for the text loaded now: `{name}@{pin}`)")
            });
        let path = self
            .get(name)
            .map_or_else(|| "skillhost.toml".into(), |s| s.path.clone());
        self.warnings
            .push(Warning::new(path, format!("{why}{hint}")));
    }

    /// What the text audit at load found in skill `name` (None when it was
    /// not audited).
    pub fn audit(&self, name: &str) -> Option<&SkillAudit> {
        self.by_name
            .get(name)
            .and_then(|&i| self.audits[i].as_ref())
    }

    /// Whether skill `name` is held back by the audit: a high finding, not
    /// allowed in config. Such a skill is listed, but never offered to a
    /// model (prompt, retrieval, MCP tools) nor run.
    pub fn held_back(&self, name: &str) -> bool {
        self.audit(name).is_some_and(SkillAudit::held_back)
    }

    /// Why skill `name` is held back, for an error a person reads: its high
    /// findings and the config key that allows it; None when it is not.
    pub fn held_back_reason(&self, name: &str) -> Option<String> {
        let a = self.audit(name).filter(|a| a.held_back())?;
        let high: Vec<String> = a
            .findings
            .iter()
            .filter(|f| f.severity == audit::Severity::High)
            .take(5)
            .map(|f| format!("{} at {}:{}:{}", f.rule, f.file, f.line, f.column))
            .collect();
        let pin = a.pin.as_deref().unwrap_or("sha256:…");
        Some(format!(
            "skill `{name}` is held back by the skill text audit ({}); read it with `skillhost skills audit {name}`, and if you trust this text add `[audit] allow = [\"{name}@{pin}\"]` to skillhost.toml",
            high.join(", ")
        ))
    }

    /// The skills a model may be offered: all but those held back.
    pub fn offered(&self) -> impl Iterator<Item = &Skill> {
        self.skills
            .iter()
            .zip(&self.audits)
            .filter(|(_, a)| !a.as_ref().is_some_and(SkillAudit::held_back))
            .map(|(s, _)| s)
    }

    /// All skills, sorted by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.by_name.get(name).map(|&i| &self.skills[i])
    }

    /// The skill named `name`, or else the one whose name looks like it
    /// (the same [`skeleton`]): the one a skill named `name` would meet.
    pub fn look_alike(&self, name: &str) -> Option<&Skill> {
        if let Some(s) = self.get(name) {
            return Some(s);
        }
        let wanted = skeleton(name);
        self.skills.iter().find(|s| skeleton(&s.name) == wanted)
    }

    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Every skill that lost its name to a skill of another root, sorted
    /// by name; [`get`](Self::get) gives the one used instead.
    pub fn shadowed(&self) -> &[Shadowed] {
        &self.shadowed
    }

    /// The skills `name` shadows (empty for most).
    pub fn shadowed_by(&self, name: &str) -> &[Shadowed] {
        let start = self.shadowed.partition_point(|s| s.name.as_str() < name);
        let len = self.shadowed[start..]
            .iter()
            .take_while(|s| s.name == name)
            .count();
        &self.shadowed[start..start + len]
    }

    pub fn stats(&self) -> LoadStats {
        self.stats
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The `k` skills that best fit `query`: triggers first, then tags, then
    /// BM25 over name and description. Skills scoring zero are left out.
    pub fn search(&self, query: &str, k: usize) -> Vec<Match<'_>> {
        self.search_with(query, k, &SearchOptions::default())
    }

    /// [`search`](Self::search) with pinned skills first, a tag filter and
    /// usage breaking ties (see [`SearchOptions`]).
    pub fn search_with(&self, query: &str, k: usize, opts: &SearchOptions<'_>) -> Vec<Match<'_>> {
        let held: Vec<bool> = self
            .audits
            .iter()
            .map(|a| a.as_ref().is_some_and(SkillAudit::held_back))
            .collect();
        self.index.search(&self.skills, &held, query, k, opts)
    }
}

/// The skills of every root merged by name skeleton as they load (see
/// `replaces`), with what the merge counted and set aside.
#[derive(Default)]
struct Merge {
    // Skills live in `slots`; `chosen` maps a name's skeleton to (root,
    // slot), so a skill is moved once into the sorted catalog, not once per
    // sort step.
    slots: Vec<Option<Skill>>,
    chosen: HashMap<String, (usize, usize)>,
    shadowed: Vec<Shadowed>,
    stats: LoadStats,
    /// Audits by SKILL.md path (unique), matched to the chosen skills at
    /// the end.
    audited: HashMap<PathBuf, SkillAudit>,
}

impl Merge {
    /// Takes what root `ri` loaded: each skill is merged, each file that
    /// did not become one is a warning.
    fn add_root(&mut self, ri: usize, loaded: Vec<load::Loaded>, warnings: &mut Vec<Warning>) {
        self.stats.files += loaded.len();
        for result in loaded {
            match result {
                Ok((skill, findings)) => {
                    if let Some(f) = findings {
                        self.audited.insert(skill.path.clone(), f);
                    }
                    self.stats.parsed += 1;
                    self.add(ri, skill, warnings);
                }
                Err(w) => {
                    self.stats.dropped += 1;
                    warnings.push(w);
                }
            }
        }
    }

    /// Merges one skill of root `ri`: a second one of the same name (or
    /// skeleton) in the same root is skipped with a warning; across roots,
    /// the one that `replaces` the other keeps the name and the other is
    /// shadowed.
    fn add(&mut self, ri: usize, skill: Skill, warnings: &mut Vec<Warning>) {
        match self.chosen.entry(skeleton(&skill.name)) {
            Entry::Occupied(o) if o.get().0 == ri => {
                self.stats.duplicates += 1;
                let first = self.slots[o.get().1].as_ref();
                warnings.push(Warning::new(
                    &skill.path,
                    format!(
                        "skipped: skill '{}' is already defined by {} in the same root{}",
                        skill.name,
                        first
                            .map(|s| s.path.display().to_string())
                            .unwrap_or_default(),
                        first
                            .map(|f| look_alike_note(&f.name, &skill.name))
                            .unwrap_or_default()
                    ),
                ));
            }
            Entry::Occupied(mut o) => {
                self.stats.overridden += 1;
                let slot = &mut self.slots[o.get().1];
                let held = slot.as_ref().map_or(Source::Installed, |s| s.source);
                let loser = if replaces(held, skill.source) {
                    o.get_mut().0 = ri;
                    slot.replace(skill)
                } else {
                    Some(skill)
                };
                let winner = slot.as_ref().map(|s| s.name.as_str()).unwrap_or_default();
                self.shadowed.extend(loser.map(|l| Shadowed::of(l, winner)));
            }
            Entry::Vacant(v) => {
                v.insert((ri, self.slots.len()));
                self.slots.push(Some(skill));
            }
        }
    }
}

/// A note when `held` and `other` are look-alikes, not one spelling: the
/// reader sees why two names were taken for one.
fn look_alike_note(held: &str, other: &str) -> String {
    if held == other {
        return String::new();
    }
    format!(
        " ('{other}' is the same name: names that differ only in case, separators such as '-', '_', '.' and spaces, or look-alike characters are one name)"
    )
}

/// An installed skill that lost its name says to which skill: a name its
/// author chose is not one it gets. Any other skill that lost to a
/// look-alike (not the same spelling) says so too: that is rarely meant.
fn warn_lost_names(shadowed: &[Shadowed], skills: &[Skill], warnings: &mut Vec<Warning>) {
    for s in shadowed {
        let Some(w) = find(skills, &s.name) else {
            continue;
        };
        let note = look_alike_note(&s.name, &s.own_name);
        let message = if s.source.is_foreign() {
            format!(
                "not used: the {} skill '{}' ({}) has its name{note}, and an installed skill never takes the name of a skill of another source; uninstall it, or install it under a name of its own with `skillhost skills install SOURCE --name NEW`",
                w.source,
                s.name,
                w.path.display()
            )
        } else if !note.is_empty() {
            format!(
                "not used: the {} skill '{}' ({}) has its name{note}; rename one of them",
                w.source,
                s.name,
                w.path.display()
            )
        } else {
            continue;
        };
        warnings.push(Warning::new(&s.path, message));
    }
}

/// The skill named `name` of `skills`, sorted by name.
fn find<'a>(skills: &'a [Skill], name: &str) -> Option<&'a Skill> {
    skills
        .binary_search_by(|s| s.name.as_str().cmp(name))
        .ok()
        .map(|i| &skills[i])
}

/// The skills of `slots`, sorted by name (names are unique here).
fn sorted_by_name(mut slots: Vec<Option<Skill>>) -> Vec<Skill> {
    let mut order: Vec<usize> = (0..slots.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        let name = |i: usize| slots[i].as_ref().map(|s| s.name.as_str());
        name(a).cmp(&name(b))
    });
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// `sha256:` + lowercase hex of the file's bytes.
pub fn content_version(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
    }
    out
}

#[cfg(test)]
mod tests;
