//! Persistence, by concern: runs with their steps and verdicts and usage
//! statistics ([`RunLog`]), handlers' key-value data ([`KvStore`]), the
//! gate's records ([`GateRecords`]) and, where several hosts share one
//! store, their documents ([`SharedState`]). [`RunStore`] is all of them
//! together, the one object a host holds; code that uses the store takes
//! the concern it needs (`&dyn RunStore` upcasts to each), and a shared
//! store's documents with where it is as a [`SharedStore`].
//!
//! Two stores implement them, with a file per concern each: [`SqliteStore`],
//! an embedded file under `.skillhost/` and the default, so the first run
//! needs no server; and [`PgStore`], a PostgreSQL database many hosts
//! share (the only one with shared documents). Both create their tables
//! from one definition (`schema.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

#[macro_use]
mod schema;

#[cfg(test)]
mod conformance;
pub mod copy;
mod documents;
mod gate;
pub mod journal;
mod kv;
mod postgres;
mod runs;
mod sqlite;

pub use documents::{DocEdit, SharedDoc, SharedState, SharedStore, SharedStoreHandle};
pub use gate::{ApprovalRow, GateRecords, GateReportRow};
pub use kv::{KvQuota, KvStore, KvUsage};
pub use postgres::PgStore;
pub use runs::{
    AppliedRecord, FailureGroup, MAX_VERDICT_NOTE, RunLog, RunRecord, StepRecord, ToolStepRow,
    USER_REPORTED, Verdict,
};
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

/// The whole store: its runs, key-value data and gate records, and the
/// documents of the hosts that share it, if they do. Calls block (the
/// SQLite file, a PostgreSQL server): async callers make them off their
/// workers.
///
/// The concerns' methods are called on a `dyn RunStore` as they are; on a
/// store of a known type, the concern's trait must be in scope.
pub trait RunStore: RunLog + KvStore + GateRecords + Send + Sync {
    /// Where the store is, for messages: a file path or a server address.
    fn location(&self) -> String;

    /// The state every host on this store shares (see [`SharedState`]):
    /// only a store that several hosts use has it.
    fn shared(&self) -> Option<&dyn SharedState> {
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
