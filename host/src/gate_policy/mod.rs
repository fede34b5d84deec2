//! Which gated handlers may run: the `[gate]` settings, the report the
//! validation gate writes (one verdict per check, each failure classified
//! and explained), and approvals, each pinned to the artifact's bytes and
//! to its skill as it was checked (its SKILL.md and every file of its
//! folder a run can read), and revoked by a later rejection of the bytes.
//! `exec` asks [`admission`] before it runs a handler of a gated source.
//! The checks that write the report run in `gate`, above `exec`; this
//! module is what `exec` and the configuration need of the gate, below
//! them both.

mod approval;
mod report;
mod settings;
#[cfg(test)]
mod tests;

pub use approval::{
    ApprovalError, ApprovedBy, HandlerState, Refusal, admission, approve, pin, skill_pin, state,
    unpinned_state,
};
pub use report::{
    CaseRun, Check, FindingClass, Outcome, Report, Status, StoredReport, Verdict, latest_report,
    latest_report_for, store_report,
};
pub use settings::{Approve, CapabilityKey, GateConfig, Provenance};
