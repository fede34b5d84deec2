//! The SQLite store's schema versions, kept in `PRAGMA user_version`.

use std::collections::HashMap;

use super::SqliteStore;
use super::runs::save_usage;
use crate::skill::Usage;
use crate::store::StoreError;
use crate::store::schema::{self, Dialect, Object};

/// Each entry moves the schema one version forward; never edit a shipped one.
const MIGRATIONS: &[&[Object]] = &[
    // 1: per-skill key-value store for handlers.
    &[Object::Table(&schema::KV)],
    // 2: every run, its tool steps and the rules applied to it.
    &[
        Object::Table(&schema::RUNS),
        Object::Index(&schema::RUNS_SKILL_CLASS),
        Object::Table(&schema::STEPS),
        Object::Table(&schema::RULES_APPLIED),
        Object::Index(&schema::RULES_APPLIED_RUN),
    ],
    // 3: run ids are handed out in blocks (see `reserve_run_ids`), so a
    // run has its id before it is written.
    &[Object::Table(&schema::RUN_IDS)],
    // 4: usage statistics per skill, kept with the runs they count (see
    // `Usage`); filled from the runs already stored by `backfill_usage`.
    &[Object::Table(&schema::SKILL_USAGE)],
    // 5: the validation gate's reports and each skill's approval of one
    // handler artifact (see `gate`).
    &[
        Object::Table(&schema::GATE_REPORTS),
        Object::Index(&schema::GATE_REPORTS_SKILL),
        Object::Table(&schema::GATE_APPROVALS),
    ],
    // 6: a person's verdict on a run (see `Verdict`), beside its outcome.
    &[Object::Table(&schema::VERDICTS)],
    // 7: the failed runs alone, for the learning cycle's failure query.
    &[Object::Index(&schema::RUNS_FAILED)],
];

/// Work a migration needs beyond its SQL, run in the same transaction
/// right after it, by the schema version the migration makes.
fn after_migration(version: i64, tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    match version {
        4 => backfill_usage(tx),
        _ => Ok(()),
    }
}

/// Usage statistics of the runs stored before there were any, counted in
/// run order as the writer would have.
fn backfill_usage(tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    let mut usage: HashMap<String, Usage> = HashMap::new();
    {
        let mut stmt = tx.prepare("SELECT skill, success, at FROM runs ORDER BY id")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let skill: String = r.get(0)?;
            usage.entry(skill).or_default().record(r.get(1)?, r.get(2)?);
        }
    }
    for (skill, u) in &usage {
        save_usage(tx, skill, u)?;
    }
    Ok(())
}

impl SqliteStore {
    pub(super) fn migrate(&self) -> Result<(), StoreError> {
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
        for (i, objects) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.execute_batch(&schema::create(objects, Dialect::Sqlite))?;
            after_migration(i as i64 + 1, &tx)?;
            tx.pragma_update(None, "user_version", i as i64 + 1)?;
        }
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::store::{RunLog, RunRecord};

    fn run(skill: &str, success: bool, at: i64) -> RunRecord {
        RunRecord::new(skill, success, at)
    }

    #[test]
    fn a_store_from_before_usage_statistics_is_filled_from_its_runs() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("s.db");
        let runs = [run("a", true, 1), run("a", false, 2), run("b", false, 3)];
        let before = {
            let s = SqliteStore::open(&p).expect("open");
            s.record_runs(&runs).expect("record");
            s.skill_usage().expect("usage")
        };
        {
            // What a store of schema version 3 looks like.
            let c = Connection::open(&p).expect("open");
            c.execute_batch(
                "DROP TABLE skill_usage; DROP TABLE gate_reports; DROP TABLE gate_approvals;
                 DROP TABLE verdicts; DROP INDEX runs_failed;
                 PRAGMA user_version = 3;",
            )
            .expect("downgrade");
        }
        let s = SqliteStore::open(&p).expect("migrate");
        assert_eq!(s.skill_usage().expect("usage"), before);
        assert_eq!(before["a"].uses, 2);
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
        let e = SqliteStore::open(&p).err().expect("too new");
        assert!(e.to_string().contains("upgrade skillhost"), "{e}");
    }
}
