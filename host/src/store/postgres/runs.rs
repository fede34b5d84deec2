//! Runs in the PostgreSQL store: each with its steps, applied rules and
//! verdict, and every skill's usage statistics, counted in the transaction
//! that stores the runs.

use std::collections::{BTreeMap, HashMap};

use futures::executor::block_on;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, Transaction};

use super::{PgStore, column, opt_text, text};
use crate::skill::Usage;
use crate::store::schema::{JUDGED_COLUMNS, RUN_COLUMNS};
use crate::store::{
    AppliedRecord, FailureGroup, RunLog, RunRecord, StepRecord, StoreError, ToolStepRow,
    USER_REPORTED, Verdict,
};

/// Tool steps fetched per round trip by [`RunLog::for_each_tool_step`].
const STEP_BATCH: i32 = 1_000;

/// Runs from one array per column, each id once; answers the ids inserted.
const INSERT_RUNS: &str = "INSERT INTO runs (id, at, skill, skill_version, task, tier, success, failure_class,
                               failure_message, context_json, output, duration_us, model_calls, origin)
             SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                                  $6::TEXT[], $7::BOOLEAN[], $8::TEXT[], $9::TEXT[], $10::TEXT[],
                                  $11::TEXT[], $12::BIGINT[], $13::BIGINT[], $14::TEXT[])
             ON CONFLICT (id) DO NOTHING RETURNING id";

/// Every tool step from run `$1` on, in run and step order, with whether
/// its run and the step succeeded.
const TOOL_STEPS_FROM: &str = "SELECT s.run_id, r.success, s.tool, s.detail_json, s.error IS NULL
                       FROM steps s JOIN runs r ON r.id = s.run_id
                      WHERE s.kind = 'tool' AND s.tool IS NOT NULL AND s.run_id >= $1
                      ORDER BY s.run_id, s.idx";

// Failure groups (skill, class, count, runs affected, the first 10 run
// ids) from run `$1` on. Names sort by bytes, as in SQLite, whatever the
// database's collation.

/// Failed runs by class, a verdict overriding the run's own outcome
/// (`$2`: the class of a failure the user reported without one).
const FAILED_RUN_GROUPS: &str = "SELECT skill, class, COUNT(*), COUNT(*), (array_agg(id ORDER BY id))[1:10] FROM
                       (SELECT r.skill, r.id,
                               CASE WHEN v.run_id IS NULL THEN (CASE WHEN NOT r.success THEN r.failure_class END)
                                    WHEN v.ok THEN NULL
                                    ELSE COALESCE(v.class, r.failure_class, $2) END AS class
                        FROM runs r LEFT JOIN verdicts v ON v.run_id = r.id
                        WHERE r.id >= $1) j
                     WHERE class IS NOT NULL
                     GROUP BY skill, class ORDER BY skill COLLATE \"C\", class COLLATE \"C\"";

/// Tool steps' errors by class.
const TOOL_ERROR_GROUPS: &str = "SELECT r.skill, s.error_class, COUNT(*), COUNT(DISTINCT r.id),
                            (array_agg(r.id ORDER BY r.id, s.idx))[1:10]
                       FROM steps s JOIN runs r ON r.id = s.run_id
                      WHERE r.id >= $1 AND s.error_class IS NOT NULL
                      GROUP BY r.skill, s.error_class
                      ORDER BY r.skill COLLATE \"C\", s.error_class COLLATE \"C\"";

/// A row of `FAILED_RUN_GROUPS` or `TOOL_ERROR_GROUPS` as a group.
fn group_from_row(
    r: &Row,
    tool_error: bool,
    runs_per_skill: &HashMap<String, u64>,
) -> Result<FailureGroup, StoreError> {
    let skill: String = r.try_get(0)?;
    Ok(FailureGroup {
        runs: runs_per_skill.get(&skill).copied().unwrap_or(0),
        class: r.try_get(1)?,
        tool_error,
        count: r.try_get::<_, i64>(2)? as u64,
        runs_affected: r.try_get::<_, i64>(3)? as u64,
        sample_runs: r.try_get(4)?,
        skill,
    })
}

/// Runs of each skill from run `since` on.
async fn runs_per_skill(
    conn: &tokio_postgres::Client,
    since: i64,
) -> Result<HashMap<String, u64>, StoreError> {
    let mut runs_per_skill = HashMap::new();
    for r in conn
        .query(
            "SELECT skill, COUNT(*) FROM runs WHERE id >= $1 GROUP BY skill",
            &[&since],
        )
        .await?
    {
        runs_per_skill.insert(r.try_get::<_, String>(0)?, r.try_get::<_, i64>(1)? as u64);
    }
    Ok(runs_per_skill)
}

async fn reserve_in(tx: &Transaction<'_>, n: u64) -> Result<std::ops::Range<i64>, StoreError> {
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    // The row lock makes concurrent reservations take turns.
    let next: i64 = tx
        .query_one(
            "UPDATE run_ids SET next = next + $1 RETURNING next - $1",
            &[&n],
        )
        .await?
        .try_get(0)?;
    Ok(next..next.saturating_add(n))
}

/// Inserts each run with its id, steps and rules, three statements for the
/// whole batch (arrays unnested server-side); per run, whether it was new
/// (false: its id was taken, or came earlier in the batch).
async fn insert_runs_in(
    tx: &Transaction<'_>,
    runs: &[(i64, &RunRecord)],
) -> Result<Vec<bool>, StoreError> {
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let new = insert_run_rows(tx, runs).await?;
    let stored = || runs.iter().zip(&new).filter(|(_, n)| **n).map(|(r, _)| *r);
    let steps: Vec<(i64, i64, &StepRecord)> = stored()
        .flat_map(|(id, r)| (0..).zip(&r.steps).map(move |(i, s)| (id, i, s)))
        .collect();
    insert_steps(tx, &steps).await?;
    let rules: Vec<(i64, &AppliedRecord)> = stored()
        .flat_map(|(id, r)| r.rules_applied.iter().map(move |a| (id, a)))
        .collect();
    insert_rules_applied(tx, &rules).await?;
    Ok(new)
}

/// The runs' own rows; per run, whether it was new.
async fn insert_run_rows(
    tx: &Transaction<'_>,
    runs: &[(i64, &RunRecord)],
) -> Result<Vec<bool>, StoreError> {
    let ids: Vec<i64> = runs.iter().map(|(id, _)| *id).collect();
    let inserted: std::collections::HashSet<i64> = tx
        .query(
            INSERT_RUNS,
            &[
                &ids,
                &column(runs, |(_, r)| r.at),
                &column(runs, |(_, r)| r.skill.as_str()),
                &column(runs, |(_, r)| r.skill_version.as_str()),
                &column(runs, |(_, r)| text(&r.task)),
                &column(runs, |(_, r)| r.tier.as_str()),
                &column(runs, |(_, r)| r.success),
                &column(runs, |(_, r)| r.failure_class.as_deref()),
                &column(runs, |(_, r)| opt_text(&r.failure_message)),
                &column(runs, |(_, r)| r.context.to_string()),
                &column(runs, |(_, r)| opt_text(&r.output)),
                &column(runs, |(_, r)| r.duration_us),
                &column(runs, |(_, r)| r.model_calls),
                &column(runs, |(_, r)| r.origin.as_str()),
            ],
        )
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    // A run is new once: the first of a batch's runs with its id.
    let mut first = std::collections::HashSet::new();
    Ok(ids
        .iter()
        .map(|id| inserted.contains(id) && first.insert(*id))
        .collect())
}

/// Steps as (run id, index, step).
async fn insert_steps(
    tx: &Transaction<'_>,
    steps: &[(i64, i64, &StepRecord)],
) -> Result<(), StoreError> {
    if steps.is_empty() {
        return Ok(());
    }
    tx.execute(
        "INSERT INTO steps (run_id, idx, kind, tool, detail_json, error, error_class, duration_us)
         SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                              $6::TEXT[], $7::TEXT[], $8::BIGINT[])",
        &[
            &column(steps, |s| s.0),
            &column(steps, |s| s.1),
            &column(steps, |s| s.2.kind.as_str()),
            // A model names the tool it calls: any text may come.
            &column(steps, |s| opt_text(&s.2.tool)),
            &column(steps, |s| s.2.detail.to_string()),
            &column(steps, |s| opt_text(&s.2.error)),
            &column(steps, |s| opt_text(&s.2.error_class)),
            &column(steps, |s| s.2.duration_us),
        ],
    )
    .await?;
    Ok(())
}

/// Applied rules as (run id, rule), in the order given: `seq` keeps it for
/// reading back.
async fn insert_rules_applied(
    tx: &Transaction<'_>,
    rules: &[(i64, &AppliedRecord)],
) -> Result<(), StoreError> {
    if rules.is_empty() {
        return Ok(());
    }
    tx.execute(
        "INSERT INTO rules_applied (run_id, rule_id, kind, effect)
         SELECT run_id, rule_id, kind, effect
           FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::TEXT[])
                WITH ORDINALITY AS u (run_id, rule_id, kind, effect, n)
          ORDER BY n",
        &[
            &column(rules, |r| r.0),
            &column(rules, |r| r.1.rule_id.as_str()),
            &column(rules, |r| r.1.kind.as_str()),
            &column(rules, |r| r.1.effect.as_str()),
        ],
    )
    .await?;
    Ok(())
}

/// Adds `runs` (in order) to their skills' usage statistics in the
/// transaction that stores them. Each skill's row is locked while it is
/// read and written, skills in name order so two writers never deadlock.
async fn count_usage<'r>(
    tx: &Transaction<'_>,
    runs: impl Iterator<Item = &'r RunRecord>,
) -> Result<(), StoreError> {
    let mut batch: BTreeMap<&str, Vec<&RunRecord>> = BTreeMap::new();
    for run in runs {
        batch.entry(run.skill.as_str()).or_default().push(run);
    }
    for (skill, runs) in batch {
        let mut u = locked_usage(tx, skill).await?;
        for r in runs {
            u.record(r.success, r.at);
        }
        tx.execute(
            "UPDATE skill_usage SET uses = $2, successes = $3, success_rate = $4, last_used = $5
             WHERE skill = $1",
            &[
                &skill,
                &(u.uses as i64),
                &(u.successes as i64),
                &u.success_rate,
                &u.last_used.unwrap_or(0),
            ],
        )
        .await?;
    }
    Ok(())
}

/// The skill's usage row, made if missing and locked for the update.
async fn locked_usage(tx: &Transaction<'_>, skill: &str) -> Result<Usage, StoreError> {
    tx.execute(
        "INSERT INTO skill_usage (skill, uses, successes, success_rate, last_used)
             VALUES ($1, 0, 0, 0, 0) ON CONFLICT (skill) DO NOTHING",
        &[&skill],
    )
    .await?;
    let row = tx
        .query_one(
            "SELECT uses, successes, success_rate, last_used FROM skill_usage
                 WHERE skill = $1 FOR UPDATE",
            &[&skill],
        )
        .await?;
    let u = usage_from_row(&row)?;
    Ok(if u.uses == 0 { Usage::default() } else { u })
}

fn usage_from_row(r: &Row) -> Result<Usage, StoreError> {
    Ok(Usage {
        uses: r.try_get::<_, i64>(0)? as u64,
        successes: r.try_get::<_, i64>(1)? as u64,
        success_rate: r.try_get(2)?,
        last_used: Some(r.try_get(3)?),
    })
}

fn run_from_row(r: &Row) -> Result<RunRecord, StoreError> {
    Ok(record_from_row!(RunRecord, r.try_get))
}

fn runs_from_rows(rows: Vec<Row>) -> Result<Vec<RunRecord>, StoreError> {
    rows.iter().map(run_from_row).collect()
}

impl PgStore {
    /// The runs `condition` (on `id`, with `$1` for `param`) picks, in id order,
    /// at most `limit`, with their steps and applied rules.
    fn whole_runs(
        &self,
        condition: &str,
        param: i64,
        limit: i64,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let conn = self.conn()?;
        block_on(async {
            let mut runs = conn
                .query(
                    &format!(
                        "SELECT {RUN_COLUMNS} FROM runs WHERE {condition} ORDER BY id LIMIT $2"
                    ),
                    &[&param, &limit],
                )
                .await?
                .iter()
                .map(run_from_row)
                .collect::<Result<Vec<_>, _>>()?;
            let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
            let at: HashMap<i64, usize> = (0..).zip(&ids).map(|(i, id)| (*id, i)).collect();
            add_steps(&conn, &mut runs, &at, &ids).await?;
            add_rules_applied(&conn, &mut runs, &at, &ids).await?;
            Ok(runs)
        })
    }
}

/// The steps of the runs `ids` (at their index in `runs`), in order.
async fn add_steps(
    conn: &tokio_postgres::Client,
    runs: &mut [RunRecord],
    at: &HashMap<i64, usize>,
    ids: &[i64],
) -> Result<(), StoreError> {
    for r in conn
        .query(
            "SELECT run_id, kind, tool, detail_json, error, error_class, duration_us
                       FROM steps WHERE run_id = ANY($1) ORDER BY run_id, idx",
            &[&ids],
        )
        .await?
    {
        let detail: String = r.try_get(3)?;
        runs[at[&r.try_get::<_, i64>(0)?]].steps.push(StepRecord {
            kind: r.try_get(1)?,
            tool: r.try_get(2)?,
            detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
            error: r.try_get(4)?,
            error_class: r.try_get(5)?,
            duration_us: r.try_get(6)?,
        });
    }
    Ok(())
}

/// The rules applied in the runs `ids` (at their index in `runs`).
async fn add_rules_applied(
    conn: &tokio_postgres::Client,
    runs: &mut [RunRecord],
    at: &HashMap<i64, usize>,
    ids: &[i64],
) -> Result<(), StoreError> {
    for r in conn
        .query(
            "SELECT run_id, rule_id, kind, effect FROM rules_applied
                      WHERE run_id = ANY($1) ORDER BY seq",
            &[&ids],
        )
        .await?
    {
        runs[at[&r.try_get::<_, i64>(0)?]]
            .rules_applied
            .push(AppliedRecord {
                rule_id: r.try_get(1)?,
                kind: r.try_get(2)?,
                effect: r.try_get(3)?,
            });
    }
    Ok(())
}

impl RunLog for PgStore {
    fn record_runs(&self, runs: &[RunRecord]) -> Result<Vec<i64>, StoreError> {
        in_transaction!(self, |tx| {
            let first = reserve_in(&tx, runs.len() as u64).await?.start;
            let with_ids: Vec<(i64, &RunRecord)> = (first..).zip(runs).collect();
            insert_runs_in(&tx, &with_ids).await?;
            count_usage(&tx, runs.iter()).await?;
            Ok(with_ids.into_iter().map(|(id, _)| id).collect())
        })
    }

    fn reserve_run_ids(&self, n: u64) -> Result<std::ops::Range<i64>, StoreError> {
        in_transaction!(self, |tx| { reserve_in(&tx, n).await })
    }

    fn return_run_ids(&self, ids: std::ops::Range<i64>) -> Result<bool, StoreError> {
        if ids.is_empty() {
            return Ok(true);
        }
        let returned = self.execute(
            "UPDATE run_ids SET next = $1 WHERE next = $2",
            &[&ids.start, &ids.end],
        )?;
        Ok(returned == 1)
    }

    fn insert_runs(&self, runs: &[RunRecord]) -> Result<Vec<bool>, StoreError> {
        in_transaction!(self, |tx| {
            let with_ids: Vec<(i64, &RunRecord)> = runs.iter().map(|r| (r.id, r)).collect();
            let new = insert_runs_in(&tx, &with_ids).await?;
            // Only the runs inserted now count (see the SQLite store).
            count_usage(
                &tx,
                runs.iter().zip(&new).filter(|(_, n)| **n).map(|(r, _)| r),
            )
            .await?;
            Ok(new)
        })
    }

    fn nth_latest_run_id(&self, n: u64) -> Result<Option<i64>, StoreError> {
        let offset = i64::try_from(n.saturating_sub(1)).unwrap_or(i64::MAX);
        let row = self.query_opt(
            "SELECT COALESCE(
                (SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET $1),
                (SELECT MIN(id) FROM runs))",
            &[&offset],
        )?;
        Ok(match row {
            Some(r) => r.try_get(0)?,
            None => None,
        })
    }

    fn skill_usage(&self) -> Result<HashMap<String, Usage>, StoreError> {
        self.query(
            "SELECT uses, successes, success_rate, last_used, skill FROM skill_usage",
            &[],
        )?
        .iter()
        .map(|r| Ok((r.try_get::<_, String>(4)?, usage_from_row(r)?)))
        .collect()
    }

    fn for_each_tool_step(
        &self,
        from_run: i64,
        f: &mut dyn FnMut(ToolStepRow<'_>),
    ) -> Result<u64, StoreError> {
        let mut conn = self.conn()?;
        block_on(async {
            // A portal read in batches: memory stays flat however many
            // steps there are.
            let tx = conn.transaction().await?;
            let portal = tx.bind(TOOL_STEPS_FROM, &[&from_run]).await?;
            let mut n = 0;
            loop {
                let rows = tx.query_portal(&portal, STEP_BATCH).await?;
                for r in &rows {
                    f(ToolStepRow {
                        run_id: r.try_get(0)?,
                        run_succeeded: r.try_get(1)?,
                        tool: r.try_get(2)?,
                        detail_json: r.try_get(3)?,
                        step_succeeded: r.try_get(4)?,
                    });
                    n += 1;
                }
                if rows.len() < STEP_BATCH as usize {
                    break;
                }
            }
            tx.commit().await?;
            Ok(n)
        })
    }

    fn list_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        runs_from_rows(self.query(
            &format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT $1"),
            &[&(limit as i64)],
        )?)
    }

    fn all_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        runs_from_rows(self.query(&format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id"), &[])?)
    }

    fn mark_run(&self, id: i64, verdict: &Verdict) -> Result<bool, StoreError> {
        verdict.check()?;
        let n = self.execute(
            "INSERT INTO verdicts (run_id, ok, class, note, at)
             SELECT id, $2, $3, $4, $5 FROM runs WHERE id = $1
             ON CONFLICT (run_id) DO UPDATE
               SET ok = excluded.ok, class = excluded.class, note = excluded.note, at = excluded.at",
            &[&id, &verdict.ok, &verdict.class, &verdict.note, &verdict.at],
        )?;
        Ok(n > 0)
    }

    fn verdict(&self, id: i64) -> Result<Option<Verdict>, StoreError> {
        self.query_opt(
            "SELECT ok, class, note, at FROM verdicts WHERE run_id = $1",
            &[&id],
        )?
        .map(|r| {
            Ok(Verdict {
                ok: r.try_get(0)?,
                class: r.try_get(1)?,
                note: r.try_get(2)?,
                at: r.try_get(3)?,
            })
        })
        .transpose()
    }

    fn recent_runs_of(&self, skill: &str, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        runs_from_rows(self.query(
            &format!(
                "SELECT {JUDGED_COLUMNS} FROM runs r LEFT JOIN verdicts v ON v.run_id = r.id
                 WHERE r.skill = $1 ORDER BY r.id DESC LIMIT $2"
            ),
            &[&skill, &(limit as i64)],
        )?)
    }

    fn tool_errors_of(
        &self,
        skill: &str,
        class: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        self.query(
            "SELECT s.run_id, COALESCE(s.error, '') FROM steps s
               JOIN (SELECT id FROM runs WHERE skill = $1 ORDER BY id DESC LIMIT $3) r ON r.id = s.run_id
             WHERE s.error_class = $2 ORDER BY s.run_id, s.idx",
            &[&skill, &class, &(limit as i64)],
        )?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
    }

    fn get_run(&self, id: i64) -> Result<Option<RunRecord>, StoreError> {
        Ok(self.whole_runs("id = $1", id, 1)?.pop())
    }

    fn failure_groups(&self, window: usize) -> Result<Vec<FailureGroup>, StoreError> {
        let conn = self.conn()?;
        block_on(async {
            let since: i64 = conn
                .query_one(
                    "SELECT COALESCE(MIN(id), 0) FROM (SELECT id FROM runs ORDER BY id DESC LIMIT $1) w",
                    &[&(window as i64)],
                )
                .await?
                .try_get(0)?;
            let runs_per_skill = runs_per_skill(&conn, since).await?;
            let queries = [
                (
                    false,
                    FAILED_RUN_GROUPS,
                    &[&since as &(dyn ToSql + Sync), &USER_REPORTED][..],
                ),
                (
                    true,
                    TOOL_ERROR_GROUPS,
                    &[&since as &(dyn ToSql + Sync)][..],
                ),
            ];
            let mut groups = Vec::new();
            for (tool_error, sql, params) in queries {
                for r in conn.query(sql, params).await? {
                    groups.push(group_from_row(&r, tool_error, &runs_per_skill)?);
                }
            }
            Ok(groups)
        })
    }

    fn run_count(&self) -> Result<u64, StoreError> {
        let row = self.query_opt("SELECT COUNT(*) FROM runs", &[])?;
        Ok(row
            .map(|r| r.try_get::<_, i64>(0))
            .transpose()?
            .unwrap_or(0) as u64)
    }

    fn runs_after(&self, after: i64, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.whole_runs("id > $1", after, limit as i64)
    }

    fn reserve_past(&self, last: i64) -> Result<(), StoreError> {
        self.execute(
            "UPDATE run_ids SET next = GREATEST(next, $1::BIGINT + 1)",
            &[&last],
        )?;
        Ok(())
    }

    fn all_verdicts(&self) -> Result<Vec<(i64, Verdict)>, StoreError> {
        self.query(
            "SELECT run_id, ok, class, note, at FROM verdicts ORDER BY run_id",
            &[],
        )?
        .iter()
        .map(|r| {
            Ok((
                r.try_get(0)?,
                Verdict {
                    ok: r.try_get(1)?,
                    class: r.try_get(2)?,
                    note: r.try_get(3)?,
                    at: r.try_get(4)?,
                },
            ))
        })
        .collect()
    }
}
