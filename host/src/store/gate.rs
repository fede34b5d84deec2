//! The validation gate's records: every report it made (the latest few
//! per skill), and at most one approval per skill, pinned to the artifact
//! and the declared capabilities its report was made for. What a report
//! says is the gate's business; here it is JSON text ([`GateRecords`]).

use super::StoreError;

/// Reports kept per skill: the latest ones, and always the approved one.
pub(super) const REPORTS_KEPT: i64 = 20;

/// One stored gate report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateReportRow {
    pub id: i64,
    pub skill: String,
    /// `sha256:` of the handler component's bytes.
    pub artifact: String,
    /// The pin of the declared capabilities the checks were made against.
    pub capabilities_pin: String,
    /// Unix seconds.
    pub at: i64,
    pub passed: bool,
    pub report_json: String,
}

/// A skill's approval: its handler may run while its bytes hash to
/// `artifact` and its skill declares what `capabilities_pin` pins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRow {
    pub skill: String,
    pub artifact: String,
    pub capabilities_pin: String,
    /// The passed report it rests on.
    pub report_id: i64,
    /// Unix seconds.
    pub at: i64,
    /// `auto` (by the `[gate] approve` policy) or `operator`.
    pub by: String,
}

/// Where the gate's reports and approvals are kept.
pub trait GateRecords {
    /// Stores a gate report (`id` in `row` is ignored) and returns its id.
    /// Older reports of the skill beyond the latest few are dropped, except
    /// the one its approval rests on.
    fn insert_gate_report(&self, row: &GateReportRow) -> Result<i64, StoreError>;

    /// The latest gate report of `skill`, whatever artifact it was made for.
    fn latest_gate_report(&self, skill: &str) -> Result<Option<GateReportRow>, StoreError>;

    /// The latest gate report of `skill` made for `artifact`.
    fn latest_gate_report_for(
        &self,
        skill: &str,
        artifact: &str,
    ) -> Result<Option<GateReportRow>, StoreError>;

    fn gate_report(&self, id: i64) -> Result<Option<GateReportRow>, StoreError>;

    /// Records `approval`, replacing the skill's previous one, only if its
    /// report exists, passed, and was made for the same skill, artifact and
    /// capabilities (checked in the same transaction as the write). False
    /// when it was not recorded for that reason.
    fn approve_handler(&self, approval: &ApprovalRow) -> Result<bool, StoreError>;

    /// The skill's approval, if it has one.
    fn handler_approval(&self, skill: &str) -> Result<Option<ApprovalRow>, StoreError>;

    /// Removes the skill's approval; true if it had one.
    fn revoke_handler_approval(&self, skill: &str) -> Result<bool, StoreError>;

    // What a copy to another store (`store migrate`) reads and writes.

    /// Every gate report kept, in id order.
    fn all_gate_reports(&self) -> Result<Vec<GateReportRow>, StoreError>;

    /// Stores copied reports with their ids; one whose id is taken is
    /// skipped. Returns how many were new.
    fn import_gate_reports(&self, rows: &[GateReportRow]) -> Result<u64, StoreError>;

    /// Every skill's approval, by skill.
    fn all_approvals(&self) -> Result<Vec<ApprovalRow>, StoreError>;
}
