//! Persistence: an embedded SQLite file under `.skillhost/`, so the first
//! run needs no server. WAL mode and a busy timeout let several `skillhost`
//! processes use it at once; the schema is versioned and migrated forward.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use crate::sandbox::{KvHost, ServiceError};

pub const DB_FILE: &str = "skillhost.db";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the store at {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("cannot create {path}: {source}")]
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
}

/// Each entry moves the schema one version forward; never edit a shipped one.
const MIGRATIONS: &[&str] = &[
    // 1: per-skill key-value store for handlers.
    "CREATE TABLE kv (
        skill TEXT NOT NULL,
        key   TEXT NOT NULL,
        value BLOB NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (skill, key)
    );",
];

pub struct Store {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and migrates it.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
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
        let store = Store {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// The default store of a workspace: `.skillhost/skillhost.db`.
    pub fn open_in(state_dir: &Path) -> Result<Store, StoreError> {
        Store::open(&state_dir.join(DB_FILE))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent
        // (statements are atomic), so a poisoned lock is safe to reuse.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn migrate(&self) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let supported = MIGRATIONS.len() as i64;
        if version > supported {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found: version,
                supported,
            });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", i as i64 + 1)?;
        }
        tx.commit()?;
        Ok(())
    }

    pub fn kv_get(&self, skill: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT value FROM kv WHERE skill = ?1 AND key = ?2",
                params![skill, key],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub fn kv_set(&self, skill: &str, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO kv (skill, key, value, updated_at) VALUES (?1, ?2, ?3, unixepoch())
             ON CONFLICT (skill, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            params![skill, key, value],
        )?;
        Ok(())
    }

    pub fn kv_delete(&self, skill: &str, key: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "DELETE FROM kv WHERE skill = ?1 AND key = ?2",
            params![skill, key],
        )?;
        Ok(())
    }
}

impl KvHost for Store {
    fn get(&self, skill: &str, key: &str) -> Result<Option<Vec<u8>>, ServiceError> {
        self.kv_get(skill, key)
            .map_err(|e| ServiceError::Failed(e.to_string()))
    }
    fn set(&self, skill: &str, key: &str, value: &[u8]) -> Result<(), ServiceError> {
        self.kv_set(skill, key, value)
            .map_err(|e| ServiceError::Failed(e.to_string()))
    }
    fn delete(&self, skill: &str, key: &str) -> Result<(), ServiceError> {
        self.kv_delete(skill, key)
            .map_err(|e| ServiceError::Failed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_is_per_skill_and_survives_reopen() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("s.db");
        {
            let s = Store::open(&p).expect("open");
            s.kv_set("a", "k", b"1").expect("set");
            s.kv_set("a", "k", b"2").expect("overwrite");
            s.kv_set("b", "k", b"other").expect("set");
        }
        let s = Store::open(&p).expect("reopen");
        assert_eq!(s.kv_get("a", "k").expect("get"), Some(b"2".to_vec()));
        assert_eq!(s.kv_get("b", "k").expect("get"), Some(b"other".to_vec()));
        s.kv_delete("a", "k").expect("delete");
        assert_eq!(s.kv_get("a", "k").expect("get"), None);
        s.kv_delete("a", "missing")
            .expect("deleting a missing key is fine");
    }

    #[test]
    fn refuses_a_newer_schema() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("s.db");
        {
            let c = Connection::open(&p).expect("open");
            c.pragma_update(None, "user_version", 999)
                .expect("set version");
        }
        let e = Store::open(&p).err().expect("too new");
        assert!(e.to_string().contains("upgrade skillhost"), "{e}");
    }
}
