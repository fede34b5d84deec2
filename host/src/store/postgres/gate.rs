//! The gate's records in the PostgreSQL store.

use tokio_postgres::Row;

use super::{PgStore, column};
use crate::store::gate::REPORTS_KEPT;
use crate::store::schema::{APPROVAL_COLUMNS, REPORT_COLUMNS};
use crate::store::{ApprovalRow, GateRecords, GateReportRow, StoreError};

fn report_from_row(r: &Row) -> Result<GateReportRow, StoreError> {
    Ok(record_from_row!(GateReportRow, r.try_get))
}

impl GateRecords for PgStore {
    fn insert_gate_report(&self, row: &GateReportRow) -> Result<i64, StoreError> {
        in_transaction!(self, |tx| {
            let id: i64 = tx
                    .query_one(
                        "INSERT INTO gate_reports (skill, artifact, capabilities_pin, at, passed, report_json)
                         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                        &[
                            &row.skill,
                            &row.artifact,
                            &row.capabilities_pin,
                            &row.at,
                            &row.passed,
                            &row.report_json,
                        ],
                    )
                    .await?
                    .try_get(0)?;
            tx.execute(
                    "DELETE FROM gate_reports WHERE skill = $1
                       AND id NOT IN (SELECT id FROM gate_reports WHERE skill = $1 ORDER BY id DESC LIMIT $2)
                       AND id NOT IN (SELECT report_id FROM gate_approvals WHERE skill = $1)",
                    &[&row.skill, &REPORTS_KEPT],
                )
                .await?;
            Ok(id)
        })
    }

    fn latest_gate_report(&self, skill: &str) -> Result<Option<GateReportRow>, StoreError> {
        self.query_opt(
            &format!("SELECT {REPORT_COLUMNS} FROM gate_reports WHERE skill = $1 ORDER BY id DESC LIMIT 1"),
            &[&skill],
        )?
        .map(|r| report_from_row(&r))
        .transpose()
    }

    fn latest_gate_report_for(
        &self,
        skill: &str,
        artifact: &str,
    ) -> Result<Option<GateReportRow>, StoreError> {
        self.query_opt(
            &format!(
                "SELECT {REPORT_COLUMNS} FROM gate_reports WHERE skill = $1 AND artifact = $2 ORDER BY id DESC LIMIT 1"
            ),
            &[&skill, &artifact],
        )?
        .map(|r| report_from_row(&r))
        .transpose()
    }

    fn gate_report(&self, id: i64) -> Result<Option<GateReportRow>, StoreError> {
        self.query_opt(
            &format!("SELECT {REPORT_COLUMNS} FROM gate_reports WHERE id = $1"),
            &[&id],
        )?
        .map(|r| report_from_row(&r))
        .transpose()
    }

    fn approve_handler(&self, approval: &ApprovalRow) -> Result<bool, StoreError> {
        in_transaction!(self, |tx| {
            // FOR SHARE: the report cannot be dropped by another host's
            // new report before the approval that rests on it commits.
            let matching = tx
                .query_opt(
                    "SELECT id FROM gate_reports
                         WHERE id = $1 AND skill = $2 AND artifact = $3 AND capabilities_pin = $4
                           AND passed FOR SHARE",
                    &[
                        &approval.report_id,
                        &approval.skill,
                        &approval.artifact,
                        &approval.capabilities_pin,
                    ],
                )
                .await?;
            if matching.is_none() {
                return Ok(false);
            }
            tx.execute(
                    "INSERT INTO gate_approvals (skill, artifact, capabilities_pin, report_id, at, \"by\")
                     VALUES ($1, $2, $3, $4, $5, $6)
                     ON CONFLICT (skill) DO UPDATE SET artifact = excluded.artifact,
                       capabilities_pin = excluded.capabilities_pin, report_id = excluded.report_id,
                       at = excluded.at, \"by\" = excluded.\"by\"",
                    &[
                        &approval.skill,
                        &approval.artifact,
                        &approval.capabilities_pin,
                        &approval.report_id,
                        &approval.at,
                        &approval.by,
                    ],
                )
                .await?;
            Ok(true)
        })
    }

    fn handler_approval(&self, skill: &str) -> Result<Option<ApprovalRow>, StoreError> {
        self.query_opt(
            &format!("SELECT {APPROVAL_COLUMNS} FROM gate_approvals WHERE skill = $1"),
            &[&skill],
        )?
        .map(|r| Ok(record_from_row!(ApprovalRow, r.try_get)))
        .transpose()
    }

    fn revoke_handler_approval(&self, skill: &str) -> Result<bool, StoreError> {
        let n = self.execute("DELETE FROM gate_approvals WHERE skill = $1", &[&skill])?;
        Ok(n > 0)
    }

    fn all_gate_reports(&self) -> Result<Vec<GateReportRow>, StoreError> {
        self.query(
            &format!("SELECT {REPORT_COLUMNS} FROM gate_reports ORDER BY id"),
            &[],
        )?
        .iter()
        .map(report_from_row)
        .collect()
    }

    fn import_gate_reports(&self, rows: &[GateReportRow]) -> Result<u64, StoreError> {
        in_transaction!(self, |tx| {
            let new = tx
                .execute(
                    "INSERT INTO gate_reports (id, skill, artifact, capabilities_pin, at, passed, report_json)
                     SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::TEXT[],
                                          $5::BIGINT[], $6::BOOLEAN[], $7::TEXT[])
                     ON CONFLICT (id) DO NOTHING",
                    &[
                        &column(rows, |r| r.id),
                        &column(rows, |r| r.skill.as_str()),
                        &column(rows, |r| r.artifact.as_str()),
                        &column(rows, |r| r.capabilities_pin.as_str()),
                        &column(rows, |r| r.at),
                        &column(rows, |r| r.passed),
                        &column(rows, |r| r.report_json.as_str()),
                    ],
                )
                .await?;
            // New reports are numbered after the copied ones.
            tx.execute(
                "SELECT setval(pg_get_serial_sequence('gate_reports', 'id'),
                               (SELECT COALESCE(MAX(id), 0) + 1 FROM gate_reports), false)",
                &[],
            )
            .await?;
            Ok(new)
        })
    }

    fn all_approvals(&self) -> Result<Vec<ApprovalRow>, StoreError> {
        self.query(
            &format!("SELECT {APPROVAL_COLUMNS} FROM gate_approvals ORDER BY skill COLLATE \"C\""),
            &[],
        )?
        .iter()
        .map(|r| Ok(record_from_row!(ApprovalRow, r.try_get)))
        .collect()
    }
}
