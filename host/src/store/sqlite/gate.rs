//! The gate's records in SQLite (see [`crate::store::gate`]).

use rusqlite::{OptionalExtension, params};

use super::SqliteStore;
use crate::store::gate::REPORTS_KEPT;
use crate::store::{ApprovalRow, GateReportRow, StoreError};

fn report_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<GateReportRow> {
    Ok(GateReportRow {
        id: r.get(0)?,
        skill: r.get(1)?,
        artifact: r.get(2)?,
        capabilities_pin: r.get(3)?,
        at: r.get(4)?,
        passed: r.get(5)?,
        report_json: r.get(6)?,
    })
}

const REPORT_COLUMNS: &str =
    "id, skill, artifact, capabilities_pin, at, passed, report_json FROM gate_reports";

impl SqliteStore {
    /// Stores a report (`id` in `row` is ignored) and returns its id.
    /// Older reports of the skill beyond the latest few are dropped, except
    /// the one its approval rests on.
    pub(super) fn insert_gate_report(&self, row: &GateReportRow) -> Result<i64, StoreError> {
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

    /// The latest report of `skill`, whatever artifact it was made for.
    pub(super) fn latest_gate_report(
        &self,
        skill: &str,
    ) -> Result<Option<GateReportRow>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {REPORT_COLUMNS} WHERE skill = ?1 ORDER BY id DESC LIMIT 1"),
                params![skill],
                report_from_row,
            )
            .optional()?)
    }

    /// The latest report of `skill` made for `artifact`.
    pub(super) fn latest_gate_report_for(
        &self,
        skill: &str,
        artifact: &str,
    ) -> Result<Option<GateReportRow>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!(
                    "SELECT {REPORT_COLUMNS} WHERE skill = ?1 AND artifact = ?2 ORDER BY id DESC LIMIT 1"
                ),
                params![skill, artifact],
                report_from_row,
            )
            .optional()?)
    }

    pub(super) fn gate_report(&self, id: i64) -> Result<Option<GateReportRow>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {REPORT_COLUMNS} WHERE id = ?1"),
                params![id],
                report_from_row,
            )
            .optional()?)
    }

    /// Records `approval`, replacing the skill's previous one, only if its
    /// report exists, passed, and was made for the same skill, artifact and
    /// capabilities (checked in the same transaction as the write). False
    /// when it was not recorded for that reason.
    pub(super) fn approve_handler(&self, approval: &ApprovalRow) -> Result<bool, StoreError> {
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

    /// The skill's approval, if it has one.
    pub(super) fn handler_approval(&self, skill: &str) -> Result<Option<ApprovalRow>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT skill, artifact, capabilities_pin, report_id, at, by
                 FROM gate_approvals WHERE skill = ?1",
                params![skill],
                |r| {
                    Ok(ApprovalRow {
                        skill: r.get(0)?,
                        artifact: r.get(1)?,
                        capabilities_pin: r.get(2)?,
                        report_id: r.get(3)?,
                        at: r.get(4)?,
                        by: r.get(5)?,
                    })
                },
            )
            .optional()?)
    }

    /// Removes the skill's approval; true if it had one.
    pub(super) fn revoke_handler_approval(&self, skill: &str) -> Result<bool, StoreError> {
        let n = self.conn().execute(
            "DELETE FROM gate_approvals WHERE skill = ?1",
            params![skill],
        )?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(skill: &str, artifact: &str, passed: bool) -> GateReportRow {
        GateReportRow {
            id: 0,
            skill: skill.into(),
            artifact: artifact.into(),
            capabilities_pin: "caps".into(),
            at: 1,
            passed,
            report_json: "{}".into(),
        }
    }

    fn approval(skill: &str, artifact: &str, report_id: i64) -> ApprovalRow {
        ApprovalRow {
            skill: skill.into(),
            artifact: artifact.into(),
            capabilities_pin: "caps".into(),
            report_id,
            at: 2,
            by: "operator".into(),
        }
    }

    #[test]
    fn an_approval_needs_a_passed_report_of_the_same_artifact() {
        let d = tempfile::tempdir().expect("tempdir");
        let s = SqliteStore::open(&d.path().join("s.db")).expect("open");
        let rejected = s
            .insert_gate_report(&report("a", "h1", false))
            .expect("insert");
        assert!(
            !s.approve_handler(&approval("a", "h1", rejected))
                .expect("tx")
        );
        let passed = s
            .insert_gate_report(&report("a", "h1", true))
            .expect("insert");
        // Another artifact, another skill, other capabilities: refused.
        assert!(!s.approve_handler(&approval("a", "h2", passed)).expect("tx"));
        assert!(!s.approve_handler(&approval("b", "h1", passed)).expect("tx"));
        let mut other_caps = approval("a", "h1", passed);
        other_caps.capabilities_pin = "more".into();
        assert!(!s.approve_handler(&other_caps).expect("tx"));
        assert_eq!(s.handler_approval("a").expect("read"), None);
        assert!(s.approve_handler(&approval("a", "h1", passed)).expect("tx"));
        assert_eq!(
            s.handler_approval("a").expect("read"),
            Some(approval("a", "h1", passed))
        );
        assert_eq!(
            s.latest_gate_report_for("a", "h1")
                .expect("read")
                .map(|r| r.id),
            Some(passed)
        );
        assert!(s.revoke_handler_approval("a").expect("revoke"));
        assert!(!s.revoke_handler_approval("a").expect("revoke"));
    }

    #[test]
    fn old_reports_are_dropped_but_never_the_approved_one() {
        let d = tempfile::tempdir().expect("tempdir");
        let s = SqliteStore::open(&d.path().join("s.db")).expect("open");
        let approved = s
            .insert_gate_report(&report("a", "h0", true))
            .expect("insert");
        assert!(
            s.approve_handler(&approval("a", "h0", approved))
                .expect("tx")
        );
        let mut last = 0;
        for _ in 0..REPORTS_KEPT + 5 {
            last = s
                .insert_gate_report(&report("a", "h1", false))
                .expect("insert");
        }
        s.insert_gate_report(&report("b", "h1", false))
            .expect("insert");
        assert!(s.gate_report(approved).expect("read").is_some());
        assert_eq!(
            s.latest_gate_report("a").expect("read").map(|r| r.id),
            Some(last)
        );
        let count: i64 = s
            .conn()
            .query_row(
                "SELECT COUNT(*) FROM gate_reports WHERE skill = 'a'",
                [],
                |r| r.get(0),
            )
            .expect("count");
        assert_eq!(count, REPORTS_KEPT + 1);
    }
}
