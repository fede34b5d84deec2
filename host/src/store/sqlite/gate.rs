//! The gate's records in the SQLite store.

use rusqlite::{OptionalExtension, params};

use super::SqliteStore;
use crate::store::gate::REPORTS_KEPT;
use crate::store::schema::{APPROVAL_COLUMNS, REPORT_COLUMNS};
use crate::store::{ApprovalRow, GateRecords, GateReportRow, StoreError};

fn report_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<GateReportRow> {
    Ok(record_from_row!(GateReportRow, r.get))
}

impl GateRecords for SqliteStore {
    fn insert_gate_report(&self, row: &GateReportRow) -> Result<i64, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO gate_reports (skill, artifact, capabilities_pin, at, passed, report_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                row.skill,
                row.artifact,
                row.capabilities_pin,
                row.at,
                row.passed,
                row.report_json
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "DELETE FROM gate_reports WHERE skill = ?1
               AND id NOT IN (SELECT id FROM gate_reports WHERE skill = ?1 ORDER BY id DESC LIMIT ?2)
               AND id NOT IN (SELECT report_id FROM gate_approvals WHERE skill = ?1)",
            params![row.skill, REPORTS_KEPT],
        )?;
        tx.commit()?;
        Ok(id)
    }

    fn latest_gate_report(&self, skill: &str) -> Result<Option<GateReportRow>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {REPORT_COLUMNS} FROM gate_reports WHERE skill = ?1 ORDER BY id DESC LIMIT 1"),
                params![skill],
                report_from_row,
            )
            .optional()?)
    }

    fn latest_gate_report_for(
        &self,
        skill: &str,
        artifact: &str,
    ) -> Result<Option<GateReportRow>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!(
                    "SELECT {REPORT_COLUMNS} FROM gate_reports WHERE skill = ?1 AND artifact = ?2 ORDER BY id DESC LIMIT 1"
                ),
                params![skill, artifact],
                report_from_row,
            )
            .optional()?)
    }

    fn gate_report(&self, id: i64) -> Result<Option<GateReportRow>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {REPORT_COLUMNS} FROM gate_reports WHERE id = ?1"),
                params![id],
                report_from_row,
            )
            .optional()?)
    }

    fn approve_handler(&self, approval: &ApprovalRow) -> Result<bool, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let matching: Option<i64> = tx
            .query_row(
                "SELECT id FROM gate_reports
                 WHERE id = ?1 AND skill = ?2 AND artifact = ?3 AND capabilities_pin = ?4 AND passed = 1",
                params![
                    approval.report_id,
                    approval.skill,
                    approval.artifact,
                    approval.capabilities_pin
                ],
                |r| r.get(0),
            )
            .optional()?;
        if matching.is_none() {
            return Ok(false);
        }
        tx.execute(
            "INSERT OR REPLACE INTO gate_approvals (skill, artifact, capabilities_pin, report_id, at, by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                approval.skill,
                approval.artifact,
                approval.capabilities_pin,
                approval.report_id,
                approval.at,
                approval.by
            ],
        )?;
        tx.commit()?;
        Ok(true)
    }

    fn all_gate_reports(&self) -> Result<Vec<GateReportRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {REPORT_COLUMNS} FROM gate_reports ORDER BY id"
        ))?;
        let rows = stmt.query_map([], report_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn import_gate_reports(&self, rows: &[GateReportRow]) -> Result<u64, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut new = 0;
        for row in rows {
            new += tx.execute(
                "INSERT OR IGNORE INTO gate_reports
                   (id, skill, artifact, capabilities_pin, at, passed, report_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    row.id,
                    row.skill,
                    row.artifact,
                    row.capabilities_pin,
                    row.at,
                    row.passed,
                    row.report_json
                ],
            )? as u64;
        }
        tx.commit()?;
        Ok(new)
    }

    fn all_approvals(&self) -> Result<Vec<ApprovalRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM gate_approvals ORDER BY skill"
        ))?;
        let rows = stmt.query_map([], |r| Ok(record_from_row!(ApprovalRow, r.get)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn handler_approval(&self, skill: &str) -> Result<Option<ApprovalRow>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {APPROVAL_COLUMNS} FROM gate_approvals WHERE skill = ?1"),
                params![skill],
                |r| Ok(record_from_row!(ApprovalRow, r.get)),
            )
            .optional()?)
    }

    fn revoke_handler_approval(&self, skill: &str) -> Result<bool, StoreError> {
        let n = self.conn().execute(
            "DELETE FROM gate_approvals WHERE skill = ?1",
            params![skill],
        )?;
        Ok(n > 0)
    }
}
