//! Mining: tool sequences that recur across recorded runs and succeed,
//! as candidates for new skills (`skillhost forge mine`).
//!
//! Definitions:
//! - A run's tool sequence is the tool calls the model made, in order.
//!   Calls a pipeline or a handler made are left out: they already replay
//!   as code. Model turns are not tool calls.
//! - A call's argument shape is the keys of its `arguments` object, each
//!   with the JSON type of its value (null, boolean, number, string,
//!   array, object); values do not count. Arguments that are not an object
//!   have the shape of their type.
//! - A sequence is 2 to `max_len` consecutive calls, told apart by their
//!   tools and argument shapes: runs that call the same tools with
//!   different keys or types are different sequences, so the shapes of
//!   a candidate's occurrences agree by construction.
//! - Support: the runs a sequence occurs in, once per run. Success rate:
//!   the share of those runs that succeeded with no tool error inside an
//!   occurrence.
//! - Steps saved: support × (length − 1). A skill replaying the sequence
//!   is one call where each supporting run made `length` calls.
//!
//! A candidate has at least `min_support` and `min_success`, and is
//! closed: a sequence is left out when a longer candidate containing it has
//! the same support (it never occurs without that one). Candidates are
//! ranked by steps saved, then support, then length.
//!
//! Scale: one pass over the steps, streamed from the store in run order.
//! Each run's windows are counted once, in a hash map keyed by interned
//! (tool, shape) ids, so memory grows with the distinct sequences, not
//! the runs; past `max_patterns` of them the least supported are dropped
//! (lossy counting) and supports become lower bounds, which the report
//! says (`undercount_bound`).
//!
//! The argument shapes are read from each step's detail JSON by `shape`;
//! the tests are in `tests`.

mod shape;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap, HashSet};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::store::{RunStore, StoreError, ToolStepRow};
use shape::{parse_detail, shape_from_key};

/// Longest sequence `max_len` may ask for; it sizes the counting key.
pub const MAX_LEN_CEILING: usize = 8;

/// `[forge.mine]` in skillhost.toml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MineConfig {
    /// Runs a sequence must occur in.
    pub min_support: u64,
    /// Share of those runs that must have succeeded (0 to 1).
    #[serde(deserialize_with = "crate::types::share")]
    pub min_success: f64,
    /// Longest sequence counted (2 to 8): a run costs at most
    /// `max_len - 1` windows per tool call.
    pub max_len: usize,
    /// Most candidates reported, best first.
    pub max_candidates: usize,
    /// Distinct sequences held while counting; past it the least
    /// supported are dropped. Each costs about 100 bytes.
    pub max_patterns: usize,
    /// Run ids kept per candidate (the first ones), for the skill it
    /// becomes to cite.
    pub sample_runs: usize,
    /// Mine on the run writer's thread every this many recorded runs, and
    /// write the candidates as forged skills (0: only `skillhost forge
    /// mine`). Off when `[forge.create] enabled = false`.
    pub auto_every: u64,
    /// Runs an automatic pass reads: the latest this many, so its cost
    /// stays bounded however many runs the store holds (`forge mine`
    /// reads them all).
    pub auto_window: u64,
}

impl Default for MineConfig {
    fn default() -> Self {
        MineConfig {
            min_support: 5,
            min_success: 0.8,
            max_len: 6,
            max_candidates: 50,
            max_patterns: 1_000_000,
            sample_runs: 10,
            auto_every: 200,
            auto_window: 10_000,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MineError {
    #[error("cannot read the recorded runs")]
    Store(#[from] StoreError),
    #[error("[forge.mine] {0}")]
    Config(String),
}

impl MineConfig {
    fn check(&self) -> Result<(), MineError> {
        if !(2..=MAX_LEN_CEILING).contains(&self.max_len) {
            return Err(MineError::Config(format!(
                "max_len is {}: use 2 to {MAX_LEN_CEILING}",
                self.max_len
            )));
        }
        if !(0.0..=1.0).contains(&self.min_success) {
            return Err(MineError::Config(format!(
                "min_success is {}: use a share from 0 to 1 (0.8 is 80%)",
                self.min_success
            )));
        }
        if self.min_support == 0 {
            return Err(MineError::Config(
                "min_support is 0: a sequence must occur at least once".into(),
            ));
        }
        if self.max_patterns < 2 {
            return Err(MineError::Config(format!(
                "max_patterns is {}: use at least 2",
                self.max_patterns
            )));
        }
        Ok(())
    }
}

/// The JSON type of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JsonType {
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
}

impl JsonType {
    fn code(self) -> char {
        match self {
            JsonType::Null => 'n',
            JsonType::Boolean => 'b',
            JsonType::Number => '#',
            JsonType::String => 's',
            JsonType::Array => 'a',
            JsonType::Object => 'o',
        }
    }

    fn from_code(c: char) -> JsonType {
        match c {
            'b' => JsonType::Boolean,
            '#' => JsonType::Number,
            's' => JsonType::String,
            'a' => JsonType::Array,
            'o' => JsonType::Object,
            _ => JsonType::Null,
        }
    }
}

/// The argument shape of one call (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ArgShape {
    /// An arguments object: each key and the type of its value.
    Object(BTreeMap<String, JsonType>),
    /// Arguments that are not an object (none recorded: null).
    Value(JsonType),
}

/// A sequence worth a skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub tools: Vec<String>,
    /// Per call, the shape every occurrence had.
    pub arg_shapes: Vec<ArgShape>,
    /// Runs it occurs in.
    pub support: u64,
    /// Share of those that succeeded, with no tool error in it.
    pub success_rate: f64,
    /// The first supporting runs, at most `sample_runs` of them.
    pub run_ids: Vec<i64>,
    /// support × (length − 1).
    pub steps_saved: u64,
}

/// What a mining pass found, and what it read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MineReport {
    /// Runs with at least one model tool call.
    pub runs: u64,
    /// Tool steps read (all callers).
    pub steps: u64,
    /// Distinct sequences counted.
    pub sequences: u64,
    /// Best first, at most `max_candidates`.
    pub candidates: Vec<Candidate>,
    /// Set when counting dropped sequences to stay within `max_patterns`:
    /// a support may then be short of the truth by up to this many runs.
    pub undercount_bound: Option<u32>,
}

/// Mines the runs recorded in `store`.
pub fn mine(store: &dyn RunStore, config: &MineConfig) -> Result<MineReport, MineError> {
    mine_from(store, config, 0)
}

/// Mines the latest `runs` runs recorded in `store`.
pub fn mine_latest(
    store: &dyn RunStore,
    config: &MineConfig,
    runs: u64,
) -> Result<MineReport, MineError> {
    match store.nth_latest_run_id(runs.max(1))? {
        Some(from) => mine_from(store, config, from),
        None => mine_from(store, config, i64::MAX),
    }
}

fn mine_from(
    store: &dyn RunStore,
    config: &MineConfig,
    from_run: i64,
) -> Result<MineReport, MineError> {
    config.check()?;
    let mut miner = Miner::new(config);
    let steps = store.for_each_tool_step(from_run, &mut |row| miner.step(row))?;
    Ok(miner.finish(steps))
}

/// A sequence while counting: its length and interned call ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Gram {
    len: u8,
    calls: [u32; MAX_LEN_CEILING],
}

impl Gram {
    fn new(calls: &[u32]) -> Gram {
        let mut g = Gram {
            len: calls.len() as u8,
            calls: [0; MAX_LEN_CEILING],
        };
        g.calls[..calls.len()].copy_from_slice(calls);
        g
    }

    fn calls(&self) -> &[u32] {
        &self.calls[..usize::from(self.len)]
    }
}

#[derive(Debug)]
struct Counts {
    support: u32,
    successes: u32,
    /// Lossy counting: runs it may have had before it was (re)inserted.
    delta: u32,
    first_run: i64,
    /// Further run ids, up to the sample size (no allocation for a
    /// sequence seen once, which most are).
    more_runs: Vec<i64>,
}

/// Steps a sequence's runs save when it is one call.
fn steps_saved(g: &Gram, c: &Counts) -> u64 {
    u64::from(c.support) * (u64::from(g.len) - 1)
}

/// Closed sequences only: the parts of passing sequences that have the
/// support of a longer one, and so never occur without it.
fn covered_parts(passing: &FxHashMap<Gram, &Counts>) -> HashSet<Gram> {
    let mut covered: HashSet<Gram> = HashSet::new();
    for (g, c) in passing {
        let calls = g.calls();
        for len in 2..calls.len() {
            for part in calls.windows(len) {
                let part = Gram::new(part);
                if passing.get(&part).is_some_and(|p| p.support == c.support) {
                    covered.insert(part);
                }
            }
        }
    }
    covered
}

struct Miner<'c> {
    config: &'c MineConfig,
    /// (tool, shape) → call id; the key is `tool \x02 shape`.
    interned: HashMap<Box<str>, u32>,
    calls: Vec<(String, ArgShape)>,
    table: FxHashMap<Gram, Counts>,
    /// Lossy counting's floor: every dropped sequence had at most this.
    floor: u32,
    runs: u64,
    // The run being read.
    run: Option<(i64, bool)>,
    seq: Vec<u32>,
    clean: Vec<bool>,
    // Scratch space, reused.
    key: String,
    seen: FxHashMap<Gram, bool>,
}

impl<'c> Miner<'c> {
    fn new(config: &'c MineConfig) -> Self {
        Miner {
            config,
            interned: HashMap::new(),
            calls: Vec::new(),
            table: FxHashMap::default(),
            floor: 0,
            runs: 0,
            run: None,
            seq: Vec::new(),
            clean: Vec::new(),
            key: String::new(),
            seen: FxHashMap::default(),
        }
    }

    fn step(&mut self, row: ToolStepRow<'_>) {
        if self.run.is_some_and(|(id, _)| id != row.run_id) {
            self.end_run();
        }
        self.run = Some((row.run_id, row.run_succeeded));
        self.key.clear();
        self.key.push_str(row.tool);
        self.key.push('\x02');
        let by_model = parse_detail(row.detail_json, &mut self.key);
        if !by_model {
            return;
        }
        let id = match self.interned.get(self.key.as_str()) {
            Some(&id) => id,
            None => {
                let id = self.calls.len() as u32;
                let shape = &self.key[row.tool.len() + 1..];
                self.calls
                    .push((row.tool.to_owned(), shape_from_key(shape)));
                self.interned.insert(self.key.as_str().into(), id);
                id
            }
        };
        self.seq.push(id);
        self.clean.push(row.step_succeeded);
    }

    /// Counts each window of the finished run once.
    fn end_run(&mut self) {
        let Some((run_id, run_ok)) = self.run.take() else {
            return;
        };
        if self.seq.is_empty() {
            return;
        }
        self.runs += 1;
        let n = self.seq.len();
        for len in 2..=self.config.max_len.min(n) {
            for start in 0..=n - len {
                let clean = self.clean[start..start + len].iter().all(|&c| c);
                *self
                    .seen
                    .entry(Gram::new(&self.seq[start..start + len]))
                    .or_insert(false) |= clean;
            }
        }
        let mut seen = std::mem::take(&mut self.seen);
        for (gram, clean) in seen.drain() {
            self.count(gram, run_id, run_ok && clean);
        }
        self.seen = seen;
        self.seq.clear();
        self.clean.clear();
    }

    fn count(&mut self, gram: Gram, run_id: i64, ok: bool) {
        if let Some(c) = self.table.get_mut(&gram) {
            c.support += 1;
            c.successes += u32::from(ok);
            if c.more_runs.len() + 1 < self.config.sample_runs {
                c.more_runs.push(run_id);
            }
            return;
        }
        if self.table.len() >= self.config.max_patterns {
            self.prune();
        }
        self.table.insert(
            gram,
            Counts {
                support: 1,
                successes: u32::from(ok),
                delta: self.floor,
                first_run: run_id,
                more_runs: Vec::new(),
            },
        );
    }

    /// Raises the floor until at most half the table is left: what goes
    /// had so few runs that, with what it may have had before, it is at
    /// most the floor.
    fn prune(&mut self) {
        let before = self.table.len();
        while self.table.len() > self.config.max_patterns / 2 {
            self.floor += 1;
            let floor = self.floor;
            self.table.retain(|_, c| c.support + c.delta > floor);
        }
        tracing::debug!(
            before,
            after = self.table.len(),
            floor = self.floor,
            "forge mine: sequence table pruned"
        );
    }

    fn finish(mut self, steps: u64) -> MineReport {
        self.end_run();
        let cfg = self.config;
        let sequences = self.table.len() as u64;
        let passing: FxHashMap<Gram, &Counts> = self
            .table
            .iter()
            .filter(|(_, c)| {
                u64::from(c.support) >= cfg.min_support
                    && f64::from(c.successes) >= cfg.min_success * f64::from(c.support)
            })
            .map(|(g, c)| (*g, c))
            .collect();
        let covered = covered_parts(&passing);
        let mut ranked: Vec<(&Gram, &Counts)> = passing
            .iter()
            .filter(|(g, _)| !covered.contains(*g))
            .map(|(g, c)| (g, *c))
            .collect();
        ranked.sort_by(|(ga, ca), (gb, cb)| {
            steps_saved(gb, cb)
                .cmp(&steps_saved(ga, ca))
                .then(cb.support.cmp(&ca.support))
                .then(gb.len.cmp(&ga.len))
                .then_with(|| self.names(ga).cmp(&self.names(gb)))
        });
        ranked.truncate(cfg.max_candidates);
        let candidates = ranked
            .into_iter()
            .map(|(g, c)| self.candidate(g, c))
            .collect();
        MineReport {
            runs: self.runs,
            steps,
            sequences,
            candidates,
            undercount_bound: (self.floor > 0).then_some(self.floor),
        }
    }

    /// A ranked sequence as a candidate, with its tools' names and shapes.
    fn candidate(&self, g: &Gram, c: &Counts) -> Candidate {
        Candidate {
            tools: g
                .calls()
                .iter()
                .map(|&id| self.calls[id as usize].0.clone())
                .collect(),
            arg_shapes: g
                .calls()
                .iter()
                .map(|&id| self.calls[id as usize].1.clone())
                .collect(),
            support: u64::from(c.support),
            success_rate: f64::from(c.successes) / f64::from(c.support),
            run_ids: std::iter::once(c.first_run)
                .chain(c.more_runs.iter().copied())
                .take(self.config.sample_runs)
                .collect(),
            steps_saved: steps_saved(g, c),
        }
    }

    /// The tool names of a sequence, for a stable order among equals.
    fn names(&self, g: &Gram) -> Vec<&str> {
        g.calls()
            .iter()
            .map(|&id| self.calls[id as usize].0.as_str())
            .collect()
    }
}
