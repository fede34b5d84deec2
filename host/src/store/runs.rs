//! Runs: each with its steps and applied rules, a person's verdict on it,
//! and the usage statistics of every skill ([`RunLog`]).

use std::collections::HashMap;

use super::StoreError;
use crate::skill::Usage;

/// The failure class of a run a person marked failed without naming one.
pub const USER_REPORTED: &str = "UserReported";

/// A person's verdict on a run (`skillhost runs mark`). It is kept beside
/// the machine's outcome, which stays as recorded, and overrides it for
/// learning: a mistake no validator caught can still become a rule, and a
/// failure the person accepts is no evidence for one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    pub ok: bool,
    /// For a failure: its class (none: the run's own, else `UserReported`).
    pub class: Option<String>,
    pub note: Option<String>,
    /// Unix seconds.
    pub at: i64,
}

/// Longest note kept with a verdict, in bytes.
pub const MAX_VERDICT_NOTE: usize = 2000;

impl Verdict {
    /// Refuses what learning could not use: a class that is not a short
    /// identifier (it becomes part of rule ids), a class on an `ok`
    /// verdict, an over-long note.
    pub fn check(&self) -> Result<(), StoreError> {
        if let Some(class) = &self.class {
            if self.ok {
                return Err(StoreError::BadVerdict(
                    "a class names a failure; it goes with --failed, not --ok".into(),
                ));
            }
            let word = class
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if class.is_empty() || class.len() > 64 || !word {
                return Err(StoreError::BadVerdict(format!(
                    "class `{class}`: use 1 to 64 letters, digits, `_` or `-` (e.g. TimezoneError)"
                )));
            }
        }
        if self
            .note
            .as_ref()
            .is_some_and(|n| n.len() > MAX_VERDICT_NOTE)
        {
            return Err(StoreError::BadVerdict(format!(
                "the note is over {MAX_VERDICT_NOTE} bytes"
            )));
        }
        Ok(())
    }
}

/// One run as stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunRecord {
    pub id: i64,
    pub at: i64,
    pub skill: String,
    pub skill_version: String,
    pub task: String,
    pub tier: String,
    pub success: bool,
    pub failure_class: Option<String>,
    pub failure_message: Option<String>,
    pub context: serde_json::Value,
    pub output: Option<String>,
    pub duration_us: i64,
    pub model_calls: i64,
    pub origin: String,
    pub steps: Vec<StepRecord>,
    pub rules_applied: Vec<AppliedRecord>,
}

impl RunRecord {
    /// A run of `skill` with this outcome at `at` (unix seconds) and
    /// nothing else recorded: for imports, tests and benchmarks, which
    /// fill in what they need.
    pub fn new(skill: impl Into<String>, success: bool, at: i64) -> RunRecord {
        RunRecord {
            id: 0,
            at,
            skill: skill.into(),
            skill_version: String::new(),
            task: String::new(),
            tier: String::new(),
            success,
            failure_class: None,
            failure_message: None,
            context: serde_json::Value::Object(serde_json::Map::new()),
            output: None,
            duration_us: 0,
            model_calls: 0,
            origin: String::new(),
            steps: Vec::new(),
            rules_applied: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepRecord {
    pub kind: String,
    pub tool: Option<String>,
    pub detail: serde_json::Value,
    pub error: Option<String>,
    pub error_class: Option<String>,
    pub duration_us: i64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AppliedRecord {
    pub rule_id: String,
    pub kind: String,
    pub effect: String,
}

/// One tool step as [`RunLog::for_each_tool_step`] reads it, borrowed from
/// the row.
#[derive(Debug, Clone, Copy)]
pub struct ToolStepRow<'a> {
    pub run_id: i64,
    pub run_succeeded: bool,
    pub tool: &'a str,
    /// The step as recorded: `{"kind": "tool", "tool", "arguments", ...}`.
    pub detail_json: &'a str,
    /// The tool call itself returned without an error.
    pub step_succeeded: bool,
}

/// Failures of one class for one skill (or one tool error class).
#[derive(Debug, Clone, PartialEq)]
pub struct FailureGroup {
    pub skill: String,
    pub class: String,
    /// True for tool errors inside runs, false for run failures.
    pub tool_error: bool,
    /// Failed runs, or failing tool steps (a run may have several).
    pub count: u64,
    /// The runs among them: those that failed, or had a failing tool step.
    pub runs_affected: u64,
    /// Runs of the skill in the window.
    pub runs: u64,
    pub sample_runs: Vec<i64>,
}

/// Where runs, their steps and verdicts, and usage statistics are kept.
pub trait RunLog {
    /// Stores a run with its steps and applied rules in one transaction;
    /// returns its id. `id` in `run` is ignored: a fresh one is taken.
    fn record_run(&self, run: &RunRecord) -> Result<i64, StoreError> {
        Ok(self.record_runs(std::slice::from_ref(run))?[0])
    }
    /// Stores many runs in one transaction (imports, benchmarks), each
    /// with a fresh id.
    fn record_runs(&self, runs: &[RunRecord]) -> Result<Vec<i64>, StoreError>;

    /// Takes `n` run ids no other writer (in this or another process) will
    /// use. A host takes them a block at a time, ahead of need, so a run
    /// knows its id before it is written and the write can wait.
    fn reserve_run_ids(&self, n: u64) -> Result<std::ops::Range<i64>, StoreError>;

    /// Gives back ids taken by [`reserve_run_ids`](Self::reserve_run_ids)
    /// and not used, if no one took ids after them (so a host that stops
    /// leaves no gap); true if they were taken back.
    fn return_run_ids(&self, ids: std::ops::Range<i64>) -> Result<bool, StoreError>;

    /// Stores runs whose ids were reserved, in one transaction. A run
    /// whose id is already stored is skipped (a journal replayed after a
    /// crash may hold runs that were written); the answer says, per run,
    /// whether it was new.
    fn insert_runs(&self, runs: &[RunRecord]) -> Result<Vec<bool>, StoreError>;

    /// The id of the `n`th latest run (1: the latest); the first run's when
    /// fewer are stored, none when there are none.
    fn nth_latest_run_id(&self, n: u64) -> Result<Option<i64>, StoreError>;

    /// Every skill's usage statistics, by skill name. A skill never run
    /// has none.
    fn skill_usage(&self) -> Result<HashMap<String, Usage>, StoreError>;

    /// Streams the tool steps of every run from id `from_run` on, in run
    /// and step order, to `f` without collecting them: memory stays flat
    /// however many runs there are. Model turns are left out. Returns how
    /// many steps were read.
    fn for_each_tool_step(
        &self,
        from_run: i64,
        f: &mut dyn FnMut(ToolStepRow<'_>),
    ) -> Result<u64, StoreError>;

    /// The newest runs first (without steps).
    fn list_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError>;

    /// Every run in id order, for export (without steps).
    fn all_runs(&self) -> Result<Vec<RunRecord>, StoreError>;

    /// A person's verdict on run `id`, replacing an earlier one; false when
    /// there is no such run.
    fn mark_run(&self, id: i64, verdict: &Verdict) -> Result<bool, StoreError>;

    /// The verdict a person gave on run `id`, if any.
    fn verdict(&self, id: i64) -> Result<Option<Verdict>, StoreError>;

    /// The newest `limit` runs of `skill`, newest first (without steps),
    /// with their outcome as judged (a person's verdict over the
    /// machine's): what a proposed rule is replayed over.
    fn recent_runs_of(&self, skill: &str, limit: usize) -> Result<Vec<RunRecord>, StoreError>;

    /// Tool errors of `class` in the newest `limit` runs of `skill`:
    /// (run id, error message), oldest first.
    fn tool_errors_of(
        &self,
        skill: &str,
        class: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, StoreError>;

    /// One run with its steps and applied rules.
    fn get_run(&self, id: i64) -> Result<Option<RunRecord>, StoreError>;

    /// Failures by (skill, class) over the last `window` runs, with the
    /// skill's run count, plus tool errors inside those runs. A person's
    /// verdict (see [`Verdict`]) overrides the run's own outcome.
    fn failure_groups(&self, window: usize) -> Result<Vec<FailureGroup>, StoreError>;

    fn run_count(&self) -> Result<u64, StoreError>;

    // What a copy to another store (`store migrate`) reads and writes.

    /// Up to `limit` runs with ids above `after`, in id order, whole (steps
    /// and applied rules; the machine's outcome): a copy reads the store a
    /// page at a time.
    fn runs_after(&self, after: i64, limit: usize) -> Result<Vec<RunRecord>, StoreError>;

    /// No id up to `last` is reserved from now on: runs were copied in with
    /// their ids.
    fn reserve_past(&self, last: i64) -> Result<(), StoreError>;

    /// Every verdict with its run's id, in id order.
    fn all_verdicts(&self) -> Result<Vec<(i64, Verdict)>, StoreError>;
}
