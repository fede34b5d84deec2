//! Handlers' key-value data in the PostgreSQL store.

use futures::executor::block_on;
use tokio_postgres::GenericClient;

use super::{LOCK_KV, PgStore};
use crate::store::kv::check_kv_quota;
use crate::store::{KvStore, KvUsage, StoreError};

/// What `skill` keeps in the key-value store, as `client` sees it.
async fn kv_usage_in(client: &impl GenericClient, skill: &str) -> Result<KvUsage, StoreError> {
    let row = client
        .query_one(
            "SELECT COUNT(*), COALESCE(SUM(octet_length(key) + octet_length(value)), 0)::BIGINT
               FROM kv WHERE skill = $1",
            &[&skill],
        )
        .await?;
    Ok(KvUsage {
        keys: row.try_get::<_, i64>(0)? as u64,
        bytes: row.try_get::<_, i64>(1)? as u64,
    })
}

impl KvStore for PgStore {
    fn kv_get(&self, skill: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.query_opt(
            "SELECT value FROM kv WHERE skill = $1 AND key = $2",
            &[&skill, &key],
        )?
        .map(|r| Ok(r.try_get(0)?))
        .transpose()
    }

    fn kv_set(&self, skill: &str, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let quota = self.kv_quota;
        in_transaction!(self, |tx| {
            // One writer per skill at a time, across hosts: the usage
            // read below stays true until the write commits.
            tx.execute(
                "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                &[&LOCK_KV, &skill],
            )
            .await?;
            let now = kv_usage_in(&tx, skill).await?;
            let replaced: Option<u64> = tx
                .query_opt(
                    "SELECT (octet_length(key) + octet_length(value))::BIGINT FROM kv
                          WHERE skill = $1 AND key = $2",
                    &[&skill, &key],
                )
                .await?
                .map(|r| r.try_get::<_, i64>(0))
                .transpose()?
                .map(|n| n as u64);
            let entry = (key.len() + value.len()) as u64;
            check_kv_quota(skill, quota, now, replaced, entry)?;
            tx.execute(
                "INSERT INTO kv (skill, key, value, updated_at)
                     VALUES ($1, $2, $3, EXTRACT(EPOCH FROM now())::BIGINT)
                     ON CONFLICT (skill, key) DO UPDATE
                       SET value = excluded.value, updated_at = excluded.updated_at",
                &[&skill, &key, &value],
            )
            .await?;
            Ok(())
        })
    }

    fn kv_usage(&self, skill: &str) -> Result<KvUsage, StoreError> {
        let conn = self.conn()?;
        block_on(kv_usage_in(&*conn, skill))
    }

    fn kv_delete(&self, skill: &str, key: &str) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM kv WHERE skill = $1 AND key = $2",
            &[&skill, &key],
        )?;
        Ok(())
    }

    fn kv_entries(&self) -> Result<Vec<(String, String, Vec<u8>)>, StoreError> {
        self.query(
            "SELECT skill, key, value FROM kv ORDER BY skill COLLATE \"C\", key COLLATE \"C\"",
            &[],
        )?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .collect()
    }
}
