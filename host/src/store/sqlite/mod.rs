//! The SQLite store: an embedded file under `.skillhost/`, so the first
//! run needs no server. WAL mode and a busy timeout let several `skillhost`
//! processes use it at once; the schema is versioned and migrated forward
//! (`schema.rs`). One file per concern: runs, key-value data, the gate's
//! records. Shared documents it has none: a host on its own keeps them as
//! files.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::Connection;

use super::{DB_FILE, KvQuota, RunStore, StoreError};

mod gate;
mod kv;
mod runs;
mod schema;

pub struct SqliteStore {
    conn: Mutex<Connection>,
    path: PathBuf,
    kv_quota: KvQuota,
}

impl SqliteStore {
    /// Opens (creating if needed) the store at `path` and migrates it.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(10))
            .map_err(open_err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
        let store = SqliteStore {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            kv_quota: KvQuota::default(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// The default store of a workspace: `.skillhost/skillhost.db`.
    pub fn open_in(state_dir: &Path) -> Result<SqliteStore, StoreError> {
        SqliteStore::open(&state_dir.join(DB_FILE))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The same store, enforcing `quota` on every skill's key-value writes
    /// (the default quota until set).
    pub fn with_kv_quota(mut self, quota: KvQuota) -> Self {
        self.kv_quota = quota;
        self
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent
        // (statements are atomic), so a poisoned lock is safe to reuse.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Column `i` of `r` as text, without copying it.
fn text<'r>(r: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    r.get_ref(i)?.as_str().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

impl RunStore for SqliteStore {
    fn location(&self) -> String {
        self.path.display().to_string()
    }
}
