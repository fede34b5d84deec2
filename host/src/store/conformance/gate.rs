//! The gate's reports and approvals.

use super::*;

pub(super) fn report(skill: &str, artifact: &str, passed: bool) -> GateReportRow {
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

pub(super) fn approval(skill: &str, artifact: &str, report_id: i64) -> ApprovalRow {
    ApprovalRow {
        skill: skill.into(),
        artifact: artifact.into(),
        capabilities_pin: "caps".into(),
        report_id,
        at: 2,
        by: "operator".into(),
    }
}

pub(super) fn an_approval_needs_a_passed_report_of_the_same_artifact(b: &dyn Backend) {
    let s = default_store(b);
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
    assert_eq!(
        s.gate_report(passed).expect("read"),
        Some(GateReportRow {
            id: passed,
            ..report("a", "h1", true)
        })
    );
    assert!(s.revoke_handler_approval("a").expect("revoke"));
    assert!(!s.revoke_handler_approval("a").expect("revoke"));
}

pub(super) fn old_reports_are_dropped_but_never_the_approved_one(b: &dyn Backend) {
    let s = default_store(b);
    let approved = s
        .insert_gate_report(&report("a", "h0", true))
        .expect("insert");
    assert!(
        s.approve_handler(&approval("a", "h0", approved))
            .expect("tx")
    );
    let kept = crate::store::gate::REPORTS_KEPT as usize;
    let ids: Vec<i64> = (0..kept + 5)
        .map(|_| {
            s.insert_gate_report(&report("a", "h1", false))
                .expect("insert")
        })
        .collect();
    let other = s
        .insert_gate_report(&report("b", "h1", false))
        .expect("insert");
    assert!(s.gate_report(approved).expect("read").is_some());
    assert!(s.gate_report(other).expect("read").is_some());
    assert_eq!(
        s.latest_gate_report("a").expect("read").map(|r| r.id),
        ids.last().copied()
    );
    let present: Vec<bool> = ids
        .iter()
        .map(|id| s.gate_report(*id).expect("read").is_some())
        .collect();
    assert_eq!(present[..5], [false; 5], "the oldest are dropped");
    assert!(present[5..].iter().all(|p| *p), "the latest are kept");
}
