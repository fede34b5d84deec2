//! Persistence behind one trait, [`RunStore`]: runs with their steps and
//! verdicts, usage statistics, handlers' key-value data and the gate's
//! records. [`SqliteStore`], an embedded file under `.skillhost/`, is the
//! default, so the first run needs no server.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::skill::Usage;

/// The records both stores read from rows, written once: `$row.$get(i)?`
/// reads column `i` (`get` for rusqlite, `try_get` for tokio-postgres).
/// Columns in the order of the stores' `RUN_COLUMNS`, `REPORT_COLUMNS`
/// and their approval query.
macro_rules! record_from_row {
    (RunRecord, $row:ident . $get:ident) => {{
        let context: String = $row.$get(9)?;
        RunRecord {
            id: $row.$get(0)?,
            at: $row.$get(1)?,
            skill: $row.$get(2)?,
            skill_version: $row.$get(3)?,
            task: $row.$get(4)?,
            tier: $row.$get(5)?,
            success: $row.$get(6)?,
            failure_class: $row.$get(7)?,
            failure_message: $row.$get(8)?,
            context: serde_json::from_str(&context).unwrap_or(serde_json::Value::Null),
            output: $row.$get(10)?,
            duration_us: $row.$get(11)?,
            model_calls: $row.$get(12)?,
            origin: $row.$get(13)?,
            steps: Vec::new(),
            rules_applied: Vec::new(),
        }
    }};
    (GateReportRow, $row:ident . $get:ident) => {
        GateReportRow {
            id: $row.$get(0)?,
            skill: $row.$get(1)?,
            artifact: $row.$get(2)?,
            capabilities_pin: $row.$get(3)?,
            at: $row.$get(4)?,
            passed: $row.$get(5)?,
            report_json: $row.$get(6)?,
        }
    };
    (ApprovalRow, $row:ident . $get:ident) => {
        ApprovalRow {
            skill: $row.$get(0)?,
            artifact: $row.$get(1)?,
            capabilities_pin: $row.$get(2)?,
            report_id: $row.$get(3)?,
            at: $row.$get(4)?,
            by: $row.$get(5)?,
        }
    };
}

#[cfg(test)]
mod conformance;
pub mod copy;
mod gate;
pub mod journal;
mod postgres;
mod sqlite;

pub use gate::{ApprovalRow, GateReportRow};
pub use postgres::PgStore;
pub use sqlite::SqliteStore;

/// Where the store is: `[store]` in skillhost.toml.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// `postgres://user:password@host:port/database`: the PostgreSQL
    /// database that several hosts share. Unset: the SQLite file in the
    /// state folder.
    #[serde(
        deserialize_with = "postgres_url",
        skip_serializing_if = "Option::is_none"
    )]
    pub url: Option<String>,
}

/// A `url` is checked when the file is read, so a typo is named with the
/// file rather than at the first run.
fn postgres_url<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let url = <String as serde::Deserialize>::deserialize(d)?;
    postgres::parse_url(&url).map_err(|e| {
        serde::de::Error::custom(format!(
            "`url` in [store]: {e} (leave it out for the SQLite file)"
        ))
    })?;
    Ok(Some(url))
}

impl StoreConfig {
    /// The PostgreSQL store at `url`.
    pub fn postgres(url: impl Into<String>) -> StoreConfig {
        StoreConfig {
            url: Some(url.into()),
        }
    }

    /// Opens the store (creating and migrating it as needed), enforcing
    /// `kv_quota` on handlers' key-value writes.
    pub fn open(
        &self,
        state_dir: &Path,
        kv_quota: KvQuota,
    ) -> Result<Arc<dyn RunStore>, StoreError> {
        Ok(match &self.url {
            Some(url) => Arc::new(PgStore::open(url)?.with_kv_quota(kv_quota)),
            None => Arc::new(SqliteStore::open_in(state_dir)?.with_kv_quota(kv_quota)),
        })
    }

    /// Whether there is a store to read: reading must not create a file.
    /// A server's database is always there to ask.
    pub fn exists(&self, state_dir: &Path) -> bool {
        self.url.is_some() || state_dir.join(DB_FILE).exists()
    }
}

/// The SQLite file in the state folder.
pub const DB_FILE: &str = "skillhost.db";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the store at {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("cannot create the store's folder {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "store {path} has schema version {found}, newer than this skillhost supports ({supported}); upgrade skillhost"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("store query failed: {0}")]
    Query(#[from] rusqlite::Error),
    /// `setting` says where the URL came from.
    #[error("{setting}: {message}")]
    BadUrl {
        setting: &'static str,
        message: String,
    },
    // tokio-postgres errors print their cause (the server's message, the
    // I/O error) themselves.
    #[error("cannot connect to the PostgreSQL store {location} ({setting}): {source}")]
    Connect {
        location: String,
        setting: &'static str,
        source: tokio_postgres::Error,
    },
    #[error("PostgreSQL store query failed: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    #[error("cannot start the PostgreSQL store's connection thread: {source}")]
    Runtime { source: std::io::Error },
    #[error("the PostgreSQL store is closing")]
    Closed,
    /// A copy between stores that cannot be finished as asked.
    #[error("copying the store: {0}")]
    Copy(String),
    /// A store call made on tokio's blocking pool that did not come back
    /// (it panicked, or the runtime is shutting down).
    #[error("a store call on a background thread did not finish: {0}")]
    Background(String),
    /// A write that would take a skill's key-value store past its quota.
    #[error(
        "key-value quota of skill `{skill}` exceeded: this write would make {would} {unit}, the quota is {quota} (`{setting}` in [limits] of skillhost.toml); {now} {unit} stored now"
    )]
    KvQuota {
        skill: String,
        /// The `[limits]` key that sets the quota.
        setting: &'static str,
        unit: &'static str,
        quota: u64,
        would: u64,
        now: u64,
    },
    /// A verdict on a run that cannot be stored as given.
    #[error("{0}")]
    BadVerdict(String),
}

impl StoreError {
    /// Whether the store refused what it was given (a constraint, a value
    /// it cannot hold), as opposed to being unavailable (locked, closed,
    /// out of space): the same rows would be refused again, so trying
    /// them again cannot help.
    pub fn refuses_data(&self) -> bool {
        use rusqlite::ErrorCode;
        match self {
            StoreError::Query(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.code,
                ErrorCode::ConstraintViolation | ErrorCode::TypeMismatch | ErrorCode::TooBig
            ),
            StoreError::Query(rusqlite::Error::ToSqlConversionFailure(_)) => true,
            // SQLSTATE classes 22 (data exception), 23 (integrity
            // constraint) and 54 (program limit exceeded).
            StoreError::Postgres(e) => e.code().is_some_and(|state| {
                ["22", "23", "54"]
                    .iter()
                    .any(|c| state.code().starts_with(c))
            }),
            _ => false,
        }
    }
}

/// Refuses a key-value write of `entry` bytes (key and value) that would
/// take `skill` past `quota`, from `now` and the `replaced` entry's bytes
/// (none: a new key). The replaced value is counted out before the new one
/// is counted in. A write that does not grow the usage is always allowed,
/// so a skill left over a lowered quota can still shrink its data.
fn check_kv_quota(
    skill: &str,
    quota: KvQuota,
    now: KvUsage,
    replaced: Option<u64>,
    entry: u64,
) -> Result<(), StoreError> {
    let would = KvUsage {
        keys: now.keys + u64::from(replaced.is_none()),
        bytes: now.bytes.saturating_sub(replaced.unwrap_or(0)) + entry,
    };
    for (setting, unit, quota, would, now) in [
        ("kv_max_keys", "keys", quota.max_keys, would.keys, now.keys),
        (
            "kv_quota_kb",
            "bytes",
            quota.max_bytes,
            would.bytes,
            now.bytes,
        ),
    ] {
        if would > quota && would > now {
            return Err(StoreError::KvQuota {
                skill: skill.to_owned(),
                setting,
                unit,
                quota,
                would,
                now,
            });
        }
    }
    Ok(())
}

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

/// How much one skill may keep in the key-value store: every key and value
/// byte together, and the number of keys (which bounds the rows, whose own
/// overhead the byte count does not see).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvQuota {
    pub max_bytes: u64,
    pub max_keys: u64,
}

/// The `[limits]` defaults (`kv_quota_kb`, `kv_max_keys`; a test in
/// `config` keeps the two equal). Runs use the configured quota.
impl Default for KvQuota {
    fn default() -> Self {
        KvQuota {
            max_bytes: 1024 * 1024,
            max_keys: 1_000,
        }
    }
}

/// What one skill keeps in the key-value store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KvUsage {
    pub keys: u64,
    /// Key and value bytes together.
    pub bytes: u64,
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

/// One tool step as [`Store::for_each_tool_step`] reads it, borrowed from
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

/// Where runs, steps, verdicts, usage statistics, key-value data and the
/// gate's records are kept. Calls block (the SQLite file, a PostgreSQL
/// server): async callers make them off their workers.
pub trait RunStore: Send + Sync {
    /// Where the store is, for messages: a file path or a server address.
    fn location(&self) -> String;

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

    fn kv_get(&self, skill: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Stores `value` under `key` for `skill`, within the skill's quota.
    ///
    /// The usage is read and the write made in one immediate transaction, so
    /// concurrent writers (other calls, other processes) cannot both fit
    /// under the quota and together exceed it. A replaced value is counted
    /// out before the new one is counted in. A write that does not grow the
    /// usage is always allowed, so a skill left over a lowered quota can
    /// still shrink its data.
    fn kv_set(&self, skill: &str, key: &str, value: &[u8]) -> Result<(), StoreError>;

    /// What `skill` keeps in the key-value store now.
    fn kv_usage(&self, skill: &str) -> Result<KvUsage, StoreError>;

    fn kv_delete(&self, skill: &str, key: &str) -> Result<(), StoreError>;

    /// Stores a gate report (`id` in `row` is ignored) and returns its id.
    /// Older reports of the skill beyond the latest few are dropped, except
    /// the one its approval rests on.
    fn insert_gate_report(&self, row: &GateReportRow) -> Result<i64, StoreError>;

    /// The latest gate report of `skill`, whatever artifact it was made for.
    fn latest_gate_report(&self, skill: &str) -> Result<Option<GateReportRow>, StoreError>;

    /// The latest gate report of `skill` made for `artifact`.
    fn latest_gate_report_for(
        &self,
        skill: &str,
        artifact: &str,
    ) -> Result<Option<GateReportRow>, StoreError>;

    fn gate_report(&self, id: i64) -> Result<Option<GateReportRow>, StoreError>;

    /// Records `approval`, replacing the skill's previous one, only if its
    /// report exists, passed, and was made for the same skill, artifact and
    /// capabilities (checked in the same transaction as the write). False
    /// when it was not recorded for that reason.
    fn approve_handler(&self, approval: &ApprovalRow) -> Result<bool, StoreError>;

    /// The skill's approval, if it has one.
    fn handler_approval(&self, skill: &str) -> Result<Option<ApprovalRow>, StoreError>;

    /// Removes the skill's approval; true if it had one.
    fn revoke_handler_approval(&self, skill: &str) -> Result<bool, StoreError>;

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

    /// Every key-value entry, (skill, key, value), by skill and key.
    fn kv_entries(&self) -> Result<Vec<(String, String, Vec<u8>)>, StoreError>;

    /// Every gate report kept, in id order.
    fn all_gate_reports(&self) -> Result<Vec<GateReportRow>, StoreError>;

    /// Stores copied reports with their ids; one whose id is taken is
    /// skipped. Returns how many were new.
    fn import_gate_reports(&self, rows: &[GateReportRow]) -> Result<u64, StoreError>;

    /// Every skill's approval, by skill.
    fn all_approvals(&self) -> Result<Vec<ApprovalRow>, StoreError>;

    /// The state every host on this store shares (see [`SharedState`]):
    /// only a store that several hosts use has it.
    fn shared(&self) -> Option<&dyn SharedState> {
        None
    }
}

/// An edit of a shared document: its current body (None: none yet) to the
/// new one (None: leave it as it is).
pub type DocEdit<'a> = dyn FnMut(Option<&[u8]>) -> Option<Vec<u8>> + 'a;

/// One document of [`SharedState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedDoc {
    /// Grows with every write of any document (see
    /// [`SharedState::generation`]).
    pub version: i64,
    pub body: Vec<u8>,
}

/// State that the hosts on one store share and change whole, by name: the
/// learned rules, the operators' grants, the forged and installed skills.
/// A host on its own keeps these as files a person can read and edit
/// (`rules.json`, `skillhost.toml`, skill folders); where many hosts share
/// one database, the database holds them, so that a change on one host
/// takes effect on every other: each hears of it ([`changes`](Self::changes))
/// and reads again what is newer than the [`generation`](Self::generation)
/// it last saw.
pub trait SharedState: Send + Sync {
    /// The latest version of any document (0: none yet). A host that finds
    /// it unchanged has nothing to read again.
    fn generation(&self) -> Result<i64, StoreError>;

    /// The document `name`, if there is one.
    fn read(&self, name: &str) -> Result<Option<SharedDoc>, StoreError>;

    /// Names and versions of the documents whose name starts with `prefix`,
    /// by name.
    fn list(&self, prefix: &str) -> Result<Vec<(String, i64)>, StoreError>;

    /// Replaces `name` with what `edit` makes of its current body (None:
    /// no document yet) while no other host can change it: two hosts
    /// editing at once each see the other's edit. `edit` answering None
    /// leaves the document as it is. Answers the new version, if written.
    fn update(&self, name: &str, edit: &mut DocEdit<'_>) -> Result<Option<i64>, StoreError>;

    /// A receiver that hears (its value changes) when any host may have
    /// changed a document: for a host that acts on changes between runs
    /// (a server telling its clients that the skills changed). None where
    /// the store cannot announce changes; the generation still tells.
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

#[cfg(test)]
mod refusal_tests {
    use super::StoreError;
    use rusqlite::ErrorCode;

    fn sqlite(code: ErrorCode) -> StoreError {
        StoreError::Query(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error {
                code,
                extended_code: 0,
            },
            None,
        ))
    }

    #[test]
    fn a_refused_row_is_told_from_an_unavailable_store() {
        assert!(sqlite(ErrorCode::ConstraintViolation).refuses_data());
        assert!(sqlite(ErrorCode::TooBig).refuses_data());
        for unavailable in [
            ErrorCode::DatabaseBusy,
            ErrorCode::DatabaseLocked,
            ErrorCode::DiskFull,
            ErrorCode::ReadOnly,
            ErrorCode::SystemIoFailure,
            ErrorCode::Unknown,
        ] {
            assert!(!sqlite(unavailable).refuses_data(), "{unavailable:?}");
        }
        assert!(!StoreError::Closed.refuses_data());
    }
}
