//! The PostgreSQL store's schema versions, kept in `skillhost_schema`.

use futures::executor::block_on;

use super::{LOCK_MIGRATE, PgStore};
use crate::store::StoreError;
use crate::store::schema::{self, Dialect, Object};

/// Each entry moves the schema one version forward; never edit a shipped
/// one. Version 1 holds everything the SQLite store's six versions do.
const MIGRATIONS: &[&[Object]] = &[
    &[
        Object::Table(&schema::KV),
        Object::Table(&schema::RUNS),
        Object::Index(&schema::RUNS_SKILL_CLASS),
        Object::Table(&schema::STEPS),
        Object::Table(&schema::RULES_APPLIED),
        Object::Index(&schema::RULES_APPLIED_RUN),
        Object::Table(&schema::RUN_IDS),
        Object::Table(&schema::SKILL_USAGE),
        Object::Table(&schema::GATE_REPORTS),
        Object::Index(&schema::GATE_REPORTS_SKILL),
        Object::Table(&schema::GATE_APPROVALS),
        Object::Table(&schema::VERDICTS),
    ],
    // 2: documents the hosts share (see `SharedState`).
    &[
        Object::Sequence(schema::SHARED_VERSION),
        Object::Table(&schema::SHARED_DOCS),
        Object::Index(&schema::SHARED_DOCS_VERSION),
    ],
];

impl PgStore {
    pub(super) fn migrate(&self) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        block_on(async {
            let tx = conn.transaction().await?;
            // Two hosts starting at once: one migrates, the other waits
            // and finds the schema current.
            tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCK_MIGRATE])
                .await?;
            let version = schema_version(&tx).await?;
            let supported = MIGRATIONS.len() as i64;
            if version > supported {
                return Err(StoreError::TooNew {
                    path: self.location.clone().into(),
                    found: version,
                    supported,
                });
            }
            for (i, objects) in MIGRATIONS.iter().enumerate().skip(version as usize) {
                tx.batch_execute(&schema::create(objects, Dialect::Postgres))
                    .await?;
                tx.execute(
                    "UPDATE skillhost_schema SET version = $1",
                    &[&(i as i64 + 1)],
                )
                .await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }
}

/// The schema's version (0 for a new database, its table made).
async fn schema_version(tx: &tokio_postgres::Transaction<'_>) -> Result<i64, StoreError> {
    tx.batch_execute("CREATE TABLE IF NOT EXISTS skillhost_schema (version BIGINT NOT NULL)")
        .await?;
    match tx
        .query_opt("SELECT version FROM skillhost_schema", &[])
        .await?
    {
        Some(row) => Ok(row.try_get(0)?),
        None => {
            tx.execute("INSERT INTO skillhost_schema (version) VALUES (0)", &[])
                .await?;
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::store::KvQuota;
    use crate::store::conformance::{Backend, Postgres};

    use super::*;

    #[test]
    fn refuses_a_newer_schema() {
        let Some(pg) = Postgres::new("refuses_a_newer_schema") else {
            return;
        };
        drop(pg.open(KvQuota::default()));
        pg.execute("UPDATE skillhost_schema SET version = 999");
        let e = PgStore::open(&pg.url()).err().expect("too new");
        assert!(e.to_string().contains("upgrade skillhost"), "{e}");
    }
}
