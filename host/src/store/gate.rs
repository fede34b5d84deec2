//! The validation gate's records: every report it made (the latest few
//! per skill), and at most one approval per skill, pinned to the artifact
//! and the declared capabilities its report was made for. What a report
//! says is the gate's business; here it is JSON text.

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
