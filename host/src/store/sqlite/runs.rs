//! Runs in the SQLite store: each with its steps, applied rules and
//! verdict, and every skill's usage statistics, counted in the transaction
//! that stores the runs.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::{SqliteStore, text};
use crate::skill::Usage;
use crate::store::schema::{JUDGED_COLUMNS, RUN_COLUMNS};
use crate::store::{
    AppliedRecord, FailureGroup, RunLog, RunRecord, StepRecord, StoreError, ToolStepRow, Verdict,
};

/// Writes one skill's usage statistics, replacing what was there.
pub(super) fn save_usage(
    tx: &rusqlite::Transaction<'_>,
    skill: &str,
    u: &Usage,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO skill_usage (skill, uses, successes, success_rate, last_used)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        skill,
        u.uses as i64,
        u.successes as i64,
        u.success_rate,
        u.last_used.unwrap_or(0)
    ])?;
    Ok(())
}

fn usage_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Usage> {
    Ok(Usage {
        uses: r.get::<_, i64>(0)? as u64,
        successes: r.get::<_, i64>(1)? as u64,
        success_rate: r.get(2)?,
        last_used: Some(r.get(3)?),
    })
}

/// The skill of each run in the learning window. NOT INDEXED: otherwise
/// SQLite reads through the whole (skill, failure_class) index, every run
/// ever recorded, instead of the window's rowid range.
const SKILLS_SINCE: &str = "SELECT skill FROM runs NOT INDEXED WHERE id >= ?1";

/// Failures by (skill, class) from run `?1` on: a failed run without a
/// verdict, or any run a verdict calls failed (the verdict's class first).
/// Both halves read only failing rows (`runs_failed`, `verdicts`).
const FAILURES_SINCE: &str = "SELECT skill, class, COUNT(*), COUNT(*), GROUP_CONCAT(id) FROM
       (SELECT r.skill, r.id, r.failure_class AS class
          FROM runs r INDEXED BY runs_failed
         WHERE r.success = 0 AND r.id >= ?1
           AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.run_id = r.id)
        UNION ALL
        SELECT r.skill, r.id, COALESCE(v.class, r.failure_class, 'UserReported')
          FROM verdicts v CROSS JOIN runs r ON r.id = v.run_id
         WHERE v.run_id >= ?1 AND v.ok = 0
        ORDER BY 2)
     WHERE class IS NOT NULL
     GROUP BY skill, class ORDER BY skill, class";
/// The failure groups `sql` reads from run `since` on: (skill, class,
/// count, runs affected, run ids), runs per skill still 0.
fn read_groups(
    conn: &Connection,
    sql: &str,
    since: i64,
    tool_error: bool,
    groups: &mut Vec<FailureGroup>,
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params![since], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, Option<String>>(4)?,
        ))
    })?;
    for row in rows {
        let (skill, class, count, runs_affected, ids) = row?;
        let sample_runs = ids
            .unwrap_or_default()
            .split(',')
            .filter_map(|x| x.parse().ok())
            .take(10)
            .collect();
        groups.push(FailureGroup {
            runs: 0,
            skill,
            class,
            tool_error,
            count: count as u64,
            runs_affected: runs_affected as u64,
            sample_runs,
        });
    }
    Ok(())
}

/// Each group's runs of its skill from run `since` on. Counted here, not
/// by GROUP BY: sorting every run's skill name cost more than reading them.
fn count_runs_per_skill(
    conn: &Connection,
    since: i64,
    groups: &mut [FailureGroup],
) -> Result<(), StoreError> {
    let mut runs_per_skill: HashMap<String, u64> =
        groups.iter().map(|g| (g.skill.clone(), 0)).collect();
    let mut stmt = conn.prepare_cached(SKILLS_SINCE)?;
    let mut rows = stmt.query(params![since])?;
    while let Some(r) = rows.next()? {
        if let Some(n) = runs_per_skill.get_mut(text(r, 0)?) {
            *n += 1;
        }
    }
    for g in groups {
        g.runs = runs_per_skill.get(&g.skill).copied().unwrap_or(0);
    }
    Ok(())
}

/// The id of the `n`th newest run (1 is the newest), or the oldest when
/// there are fewer; `None` for an empty store. Stepped back through the
/// rowids: MIN over a LIMIT subquery materialised all `n` first.
fn nth_latest_id(conn: &Connection, n: u64) -> Result<Option<i64>, StoreError> {
    let offset = i64::try_from(n.saturating_sub(1)).unwrap_or(i64::MAX);
    Ok(conn
        .prepare_cached(
            "SELECT COALESCE(
                (SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1),
                (SELECT MIN(id) FROM runs))",
        )?
        .query_row([offset], |r| r.get::<_, Option<i64>>(0))
        .optional()?
        .flatten())
}

impl SqliteStore {
    fn reserve_in(
        tx: &rusqlite::Transaction<'_>,
        n: u64,
    ) -> Result<std::ops::Range<i64>, StoreError> {
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        let next: i64 = tx.query_row("SELECT next FROM run_ids", [], |r| r.get(0))?;
        tx.execute(
            "UPDATE run_ids SET next = ?1",
            params![next.saturating_add(n)],
        )?;
        Ok(next..next.saturating_add(n))
    }

    /// Adds `runs` (in order) to their skills' usage statistics, in the
    /// transaction that stores them: the figures never disagree with the
    /// runs, whatever crashes when. One read and one write per skill.
    fn count_usage<'r>(
        tx: &rusqlite::Transaction<'_>,
        runs: impl Iterator<Item = &'r RunRecord>,
    ) -> Result<(), StoreError> {
        // Each skill's runs, in the order they came.
        let mut batch: HashMap<&str, Vec<&RunRecord>> = HashMap::new();
        for run in runs {
            batch.entry(run.skill.as_str()).or_default().push(run);
        }
        if batch.is_empty() {
            return Ok(());
        }
        let mut read = tx.prepare_cached(
            "SELECT uses, successes, success_rate, last_used FROM skill_usage WHERE skill = ?1",
        )?;
        for (skill, runs) in batch {
            let mut u = read
                .query_row(params![skill], usage_from_row)
                .optional()?
                .unwrap_or_default();
            for r in runs {
                u.record(r.success, r.at);
            }
            save_usage(tx, skill, &u)?;
        }
        Ok(())
    }

    /// Inserts `run` as `id` with its steps and rules; false when `id` is
    /// taken.
    fn insert_run(
        tx: &rusqlite::Transaction<'_>,
        id: i64,
        run: &RunRecord,
    ) -> Result<bool, StoreError> {
        // Cached statements: a batch of runs is parsed once, not per row.
        let inserted = tx.prepare_cached(
            "INSERT OR IGNORE INTO runs (id, at, skill, skill_version, task, tier, success, failure_class,
                               failure_message, context_json, output, duration_us, model_calls, origin)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?
        .execute(params![
                id,
                run.at,
                run.skill,
                run.skill_version,
                run.task,
                run.tier,
                run.success,
                run.failure_class,
                run.failure_message,
                run.context.to_string(),
                run.output,
                run.duration_us,
                run.model_calls,
                run.origin
            ])?;
        if inserted == 0 {
            return Ok(false);
        }
        Self::insert_parts(tx, id, run)?;
        Ok(true)
    }

    /// The steps and applied rules of run `id`.
    fn insert_parts(
        tx: &rusqlite::Transaction<'_>,
        id: i64,
        run: &RunRecord,
    ) -> Result<(), StoreError> {
        for (i, s) in run.steps.iter().enumerate() {
            tx.prepare_cached(
                "INSERT INTO steps (run_id, idx, kind, tool, detail_json, error, error_class, duration_us)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![id, i as i64, s.kind, s.tool, s.detail.to_string(), s.error, s.error_class, s.duration_us])?;
        }
        for a in &run.rules_applied {
            tx.prepare_cached(
                "INSERT INTO rules_applied (run_id, rule_id, kind, effect) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![id, a.rule_id, a.kind, a.effect])?;
        }
        Ok(())
    }

    /// Reads `run`'s steps and applied rules into it.
    fn fill_run(conn: &Connection, run: &mut RunRecord) -> Result<(), StoreError> {
        let mut stmt = conn.prepare_cached(
            "SELECT kind, tool, detail_json, error, error_class, duration_us FROM steps WHERE run_id = ?1 ORDER BY idx",
        )?;
        run.steps = stmt
            .query_map(params![run.id], |r| {
                let detail: String = r.get(2)?;
                Ok(StepRecord {
                    kind: r.get(0)?,
                    tool: r.get(1)?,
                    detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
                    error: r.get(3)?,
                    error_class: r.get(4)?,
                    duration_us: r.get(5)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        let mut stmt = conn.prepare_cached(
            "SELECT rule_id, kind, effect FROM rules_applied WHERE run_id = ?1 ORDER BY rowid",
        )?;
        run.rules_applied = stmt
            .query_map(params![run.id], |r| {
                Ok(AppliedRecord {
                    rule_id: r.get(0)?,
                    kind: r.get(1)?,
                    effect: r.get(2)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(())
    }

    fn run_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
        Ok(record_from_row!(RunRecord, r.get))
    }
}

impl RunLog for SqliteStore {
    fn record_runs(&self, runs: &[RunRecord]) -> Result<Vec<i64>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let first = Self::reserve_in(&tx, runs.len() as u64)?.start;
        let mut ids = Vec::with_capacity(runs.len());
        for (id, run) in (first..).zip(runs) {
            Self::insert_run(&tx, id, run)?;
            ids.push(id);
        }
        Self::count_usage(&tx, runs.iter())?;
        tx.commit()?;
        Ok(ids)
    }

    fn reserve_run_ids(&self, n: u64) -> Result<std::ops::Range<i64>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let ids = Self::reserve_in(&tx, n)?;
        tx.commit()?;
        Ok(ids)
    }

    fn return_run_ids(&self, ids: std::ops::Range<i64>) -> Result<bool, StoreError> {
        if ids.is_empty() {
            return Ok(true);
        }
        let returned = self.conn().execute(
            "UPDATE run_ids SET next = ?1 WHERE next = ?2",
            params![ids.start, ids.end],
        )?;
        Ok(returned == 1)
    }

    fn insert_runs(&self, runs: &[RunRecord]) -> Result<Vec<bool>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut new = Vec::with_capacity(runs.len());
        for run in runs {
            new.push(Self::insert_run(&tx, run.id, run)?);
        }
        // Only the runs inserted now: a run replayed from a journal that
        // was already stored is counted once, when it was.
        Self::count_usage(
            &tx,
            runs.iter().zip(&new).filter(|(_, n)| **n).map(|(r, _)| r),
        )?;
        tx.commit()?;
        Ok(new)
    }

    fn nth_latest_run_id(&self, n: u64) -> Result<Option<i64>, StoreError> {
        nth_latest_id(&self.conn(), n)
    }

    fn skill_usage(&self) -> Result<HashMap<String, Usage>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT uses, successes, success_rate, last_used, skill FROM skill_usage")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(4)?, usage_from_row(r)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn for_each_tool_step(
        &self,
        from_run: i64,
        f: &mut dyn FnMut(ToolStepRow<'_>),
    ) -> Result<u64, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT s.run_id, r.success, s.tool, s.detail_json, s.error IS NULL
               FROM steps s JOIN runs r ON r.id = s.run_id
              WHERE s.kind = 'tool' AND s.tool IS NOT NULL AND s.run_id >= ?1
              ORDER BY s.run_id, s.idx",
        )?;
        let mut rows = stmt.query([from_run])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            f(ToolStepRow {
                run_id: r.get(0)?,
                run_succeeded: r.get(1)?,
                tool: text(r, 2)?,
                detail_json: text(r, 3)?,
                step_succeeded: r.get(4)?,
            });
            n += 1;
        }
        Ok(n)
    }

    fn list_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map(params![limit as i64], Self::run_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn all_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id"))?;
        let rows = stmt.query_map([], Self::run_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn mark_run(&self, id: i64, verdict: &Verdict) -> Result<bool, StoreError> {
        verdict.check()?;
        let conn = self.conn();
        let n = conn.execute(
            "INSERT OR REPLACE INTO verdicts (run_id, ok, class, note, at)
             SELECT id, ?2, ?3, ?4, ?5 FROM runs WHERE id = ?1",
            params![id, verdict.ok, verdict.class, verdict.note, verdict.at],
        )?;
        Ok(n > 0)
    }

    fn verdict(&self, id: i64) -> Result<Option<Verdict>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT ok, class, note, at FROM verdicts WHERE run_id = ?1",
                params![id],
                |r| {
                    Ok(Verdict {
                        ok: r.get(0)?,
                        class: r.get(1)?,
                        note: r.get(2)?,
                        at: r.get(3)?,
                    })
                },
            )
            .optional()?)
    }

    fn recent_runs_of(&self, skill: &str, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {JUDGED_COLUMNS} FROM runs r LEFT JOIN verdicts v ON v.run_id = r.id
             WHERE r.skill = ?1 ORDER BY r.id DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![skill, limit as i64], Self::run_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn tool_errors_of(
        &self,
        skill: &str,
        class: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT s.run_id, COALESCE(s.error, '') FROM steps s
               JOIN (SELECT id FROM runs WHERE skill = ?1 ORDER BY id DESC LIMIT ?3) r ON r.id = s.run_id
             WHERE s.error_class = ?2 ORDER BY s.run_id, s.idx",
        )?;
        let rows = stmt.query_map(params![skill, class, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn get_run(&self, id: i64) -> Result<Option<RunRecord>, StoreError> {
        let conn = self.conn();
        let run = conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
                params![id],
                Self::run_from_row,
            )
            .optional()?;
        let Some(mut run) = run else { return Ok(None) };
        Self::fill_run(&conn, &mut run)?;
        Ok(Some(run))
    }

    fn failure_groups(&self, window: usize) -> Result<Vec<FailureGroup>, StoreError> {
        let conn = self.conn();
        // The window is read through what failed in it (the `runs_failed`
        // index, verdicts, steps with an error class); the runs per skill
        // only for a skill that has a group. A cycle runs every
        // `auto_every` runs: reading every run of the window each time cost
        // the writer more than storing them.
        // A window of 0 covers every run, as it always has.
        let since = match window {
            0 => 0,
            n => nth_latest_id(&conn, n as u64)?.unwrap_or(0),
        };
        let mut groups = Vec::new();
        let queries = [
            (false, FAILURES_SINCE),
            (
                true,
                "SELECT r.skill, s.error_class, COUNT(*), COUNT(DISTINCT r.id), GROUP_CONCAT(r.id) FROM steps s JOIN runs r ON r.id = s.run_id
                 WHERE r.id >= ?1 AND s.error_class IS NOT NULL GROUP BY r.skill, s.error_class ORDER BY r.skill, s.error_class",
            ),
        ];
        for (tool_error, sql) in queries {
            read_groups(&conn, sql, since, tool_error, &mut groups)?;
        }
        if !groups.is_empty() {
            count_runs_per_skill(&conn, since, &mut groups)?;
        }
        Ok(groups)
    }

    fn run_count(&self) -> Result<u64, StoreError> {
        Ok(self
            .conn()
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0))? as u64)
    }

    fn runs_after(&self, after: i64, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE id > ?1 ORDER BY id LIMIT ?2"
        ))?;
        let mut runs: Vec<RunRecord> = stmt
            .query_map(params![after, limit as i64], Self::run_from_row)?
            .collect::<Result<_, _>>()?;
        for run in &mut runs {
            Self::fill_run(&conn, run)?;
        }
        Ok(runs)
    }

    fn reserve_past(&self, last: i64) -> Result<(), StoreError> {
        self.conn()
            .execute("UPDATE run_ids SET next = MAX(next, ?1 + 1)", params![last])?;
        Ok(())
    }

    fn all_verdicts(&self) -> Result<Vec<(i64, Verdict)>, StoreError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare("SELECT run_id, ok, class, note, at FROM verdicts ORDER BY run_id")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get(0)?,
                Verdict {
                    ok: r.get(1)?,
                    class: r.get(2)?,
                    note: r.get(3)?,
                    at: r.get(4)?,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod plan_tests {
    use super::*;

    /// SQLite's query plan for `sql` (one parameter) in a fresh store.
    fn plan_of(sql: &str) -> Vec<String> {
        let d = tempfile::tempdir().expect("tempdir");
        let s = SqliteStore::open(&d.path().join("s.db")).expect("open");
        let conn = s.conn();
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect("plan");
        stmt.query_map(params![0], |r| r.get::<_, String>(3))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    }

    /// The learning window is read by id range, whatever the store holds
    /// before it: a plan that scans the whole table or index grows with
    /// every run ever recorded and slows each background cycle.
    #[test]
    fn the_window_query_reads_the_rowid_range_not_every_run() {
        let plan = plan_of(SKILLS_SINCE);
        assert!(
            plan.iter().any(|l| l.contains("INTEGER PRIMARY KEY")),
            "{plan:?}"
        );
        assert!(!plan.iter().any(|l| l.starts_with("SCAN runs")), "{plan:?}");
    }

    /// A learning cycle reads the window's failures through indexes that
    /// hold only failing rows: its cost follows what failed, not how many
    /// runs the window holds.
    #[test]
    fn the_failure_query_reads_failing_rows_only() {
        let plan = plan_of(FAILURES_SINCE);
        assert!(
            plan.iter().any(|l| l.contains("USING INDEX runs_failed")),
            "{plan:?}"
        );
        assert!(
            plan.iter()
                .any(|l| l == "SEARCH v USING INTEGER PRIMARY KEY (rowid>?)"),
            "{plan:?}"
        );
        // Only the failing rows gathered above are scanned, never a table.
        assert!(
            plan.iter()
                .filter(|l| l.starts_with("SCAN"))
                .all(|l| l.contains("subquery")),
            "{plan:?}"
        );
    }
}
