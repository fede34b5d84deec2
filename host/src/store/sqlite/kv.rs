//! Handlers' key-value data in the SQLite store.

use rusqlite::{Connection, OptionalExtension, params};

use super::SqliteStore;
use crate::store::kv::check_kv_quota;
use crate::store::{KvStore, KvUsage, StoreError};

impl SqliteStore {
    fn kv_usage_in(conn: &Connection, skill: &str) -> Result<KvUsage, StoreError> {
        // `length` of a BLOB is its size in bytes, read from the record
        // header without loading the value; a TEXT key is cast to count its
        // UTF-8 bytes rather than its characters.
        Ok(conn.query_row(
            "SELECT COUNT(*), COALESCE(SUM(length(CAST(key AS BLOB)) + length(value)), 0)
               FROM kv WHERE skill = ?1",
            params![skill],
            |r| {
                Ok(KvUsage {
                    keys: r.get::<_, i64>(0)? as u64,
                    bytes: r.get::<_, i64>(1)? as u64,
                })
            },
        )?)
    }
}

impl KvStore for SqliteStore {
    fn kv_get(&self, skill: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT value FROM kv WHERE skill = ?1 AND key = ?2",
                params![skill, key],
                |r| r.get(0),
            )
            .optional()?)
    }

    fn kv_set(&self, skill: &str, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let now = Self::kv_usage_in(&tx, skill)?;
        let replaced: Option<u64> = tx
            .query_row(
                "SELECT length(CAST(key AS BLOB)) + length(value) FROM kv WHERE skill = ?1 AND key = ?2",
                params![skill, key],
                |r| r.get::<_, i64>(0),
            )
            .optional()?
            .map(|n| n as u64);
        let entry = (key.len() + value.len()) as u64;
        check_kv_quota(skill, self.kv_quota, now, replaced, entry)?;
        tx.execute(
            "INSERT INTO kv (skill, key, value, updated_at) VALUES (?1, ?2, ?3, unixepoch())
             ON CONFLICT (skill, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            params![skill, key, value],
        )?;
        tx.commit()?;
        Ok(())
    }

    fn kv_usage(&self, skill: &str) -> Result<KvUsage, StoreError> {
        Self::kv_usage_in(&self.conn(), skill)
    }

    fn kv_delete(&self, skill: &str, key: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "DELETE FROM kv WHERE skill = ?1 AND key = ?2",
            params![skill, key],
        )?;
        Ok(())
    }

    fn kv_entries(&self) -> Result<Vec<(String, String, Vec<u8>)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT skill, key, value FROM kv ORDER BY skill, key")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
