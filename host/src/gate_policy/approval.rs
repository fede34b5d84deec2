//! Approvals, pinned to an artifact's bytes and to its skill as it was
//! checked (every file of its folder a run can read), and the admission
//! `exec` asks before it runs a gated handler.

use std::fmt;

use serde::Serialize;

use super::latest_report_for;
use crate::skill::{Skill, TreeError};
use crate::store::{ApprovalRow, GateRecords, StoreError};

/// The pin of a skill as it is now, which an approval holds with the
/// artifact's hash and a grant holds alone: its SKILL.md as the catalog
/// read it and every file of its folder its handler, its model tier or
/// the host can read ([`Skill::tree_digest`]: references, scripts,
/// templates, assets, cases, the handler). A skill whose folder changed
/// must pass again. Stored as `capabilities_pin`, the name it had when it
/// pinned only the declaration.
pub fn skill_pin(skill: &Skill) -> Result<String, TreeError> {
    skill.pin()
}

/// What a pin leaves out of `skill`'s folder, for the report's
/// `hand_only`: the folders it declares it writes, which hold its state
/// (like its key-value data), so an approval of it is the operator's.
pub fn unpinned_state(skill: &Skill) -> Vec<String> {
    crate::skill::Reach::of(skill)
        .state()
        .iter()
        .map(|f| {
            format!(
                "it declares it writes its own folder `{}`, whose files are its state: no pin covers them",
                f.display()
            )
        })
        .collect()
}

/// [`skill_pin`] from its parts: the SKILL.md's content version and the
/// folder's tree digest (see [`crate::skill::pin_of`]).
pub fn pin(skill_md_version: &str, tree_digest: &str) -> String {
    crate::skill::pin_of(skill_md_version, tree_digest)
}

#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("stored gate report {id} cannot be read: {source}")]
    BadReport { id: i64, source: serde_json::Error },
    #[error(
        "the handler of `{skill}` has not been through the gate as it is now ({artifact}); run `skillhost handler gate {skill}`"
    )]
    NotGated { skill: String, artifact: String },
    #[error(
        "the handler of `{skill}` did not pass the gate (report {report}: {reason}); see `skillhost handler report {skill}`"
    )]
    Rejected {
        skill: String,
        report: i64,
        reason: String,
    },
    #[error(
        "skill `{skill}` changed (a file of its folder, its SKILL.md or what it declares) since its handler was gated; run `skillhost handler gate {skill}`"
    )]
    SkillChanged { skill: String },
}

/// Who approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovedBy {
    /// The `[gate] approve` policy, when the gate passed.
    Policy,
    Operator,
}

/// Approves the handler of `skill` whose bytes hash to `artifact` and
/// whose skill is pinned `pin` ([`skill_pin`]), on the latest report made
/// for exactly these; it must have passed. Replaces any earlier approval
/// of the skill.
pub fn approve(
    store: &dyn GateRecords,
    skill: &str,
    artifact: &str,
    pin: &str,
    by: ApprovedBy,
) -> Result<ApprovalRow, ApprovalError> {
    let Some(stored) = latest_report_for(store, skill, artifact)? else {
        return Err(ApprovalError::NotGated {
            skill: skill.to_owned(),
            artifact: artifact.to_owned(),
        });
    };
    if !stored.report.passed() {
        return Err(ApprovalError::Rejected {
            skill: skill.to_owned(),
            report: stored.id,
            reason: stored.report.first_failure().unwrap_or_default(),
        });
    }
    if stored.report.capabilities_pin != pin {
        return Err(ApprovalError::SkillChanged {
            skill: skill.to_owned(),
        });
    }
    let row = ApprovalRow {
        skill: skill.to_owned(),
        artifact: artifact.to_owned(),
        capabilities_pin: pin.to_owned(),
        report_id: stored.id,
        at: unix_now(),
        by: match by {
            ApprovedBy::Policy => "auto",
            ApprovedBy::Operator => "operator",
        }
        .to_owned(),
    };
    // The store checks the report again in the transaction that writes.
    if store.approve_handler(&row)? {
        Ok(row)
    } else {
        Err(ApprovalError::NotGated {
            skill: skill.to_owned(),
            artifact: artifact.to_owned(),
        })
    }
}

/// Why a gated handler may not run, in one line for `run`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "handler of `{skill}` is not approved: it has not been through the gate ({artifact}); run `skillhost handler gate {skill}`"
    )]
    NotGated { skill: String, artifact: String },
    #[error(
        "handler of `{skill}` is not approved: the gate rejected it (report {report}: {reason}); see `skillhost handler report {skill}`"
    )]
    Rejected {
        skill: String,
        report: i64,
        reason: String,
    },
    #[error(
        "handler of `{skill}` is not approved: it passed the gate (report {report}) and waits for `skillhost handler approve {skill}`"
    )]
    AwaitingApproval { skill: String, report: i64 },
    #[error(
        "handler of `{skill}` is not approved: artifact changed since approval ({}, approved {}); run `skillhost handler gate {skill}`",
        short(.now), short(.approved)
    )]
    ArtifactChanged {
        skill: String,
        approved: String,
        now: String,
    },
    #[error(
        "handler of `{skill}` is not approved: the skill changed since approval (a file of its folder, its SKILL.md or what it declares); run `skillhost handler gate {skill}`"
    )]
    SkillChanged { skill: String },
    #[error("handler of `{skill}` is not approved: its approval cannot be read: {reason}")]
    Unreadable { skill: String, reason: String },
    #[error(
        "handler of `{skill}` is not approved: its folder cannot be pinned to its approval: {reason}"
    )]
    Unpinnable { skill: String, reason: String },
}

/// `sha256:` and 12 hex digits.
fn short(v: &str) -> &str {
    v.char_indices().nth(19).map_or(v, |(i, _)| &v[..i])
}

/// Whether the handler of `skill`, whose bytes hash to `artifact` and
/// whose skill is pinned `pin` ([`skill_pin`]), may run. One indexed read
/// when it may; a refusal reads the latest report too, to say why.
pub fn admission(
    store: &dyn GateRecords,
    skill: &str,
    artifact: &str,
    pin: &str,
) -> Result<(), Refusal> {
    let unreadable = |e: &dyn fmt::Display| Refusal::Unreadable {
        skill: skill.to_owned(),
        reason: e.to_string(),
    };
    let approval = store.handler_approval(skill).map_err(|e| unreadable(&e))?;
    if let Some(a) = &approval
        && a.artifact == artifact
    {
        if a.capabilities_pin == pin {
            return Ok(());
        }
        return Err(Refusal::SkillChanged {
            skill: skill.to_owned(),
        });
    }
    let latest = latest_report_for(store, skill, artifact).map_err(|e| unreadable(&e))?;
    Err(match (latest, approval) {
        (Some(r), _) if !r.report.passed() => Refusal::Rejected {
            skill: skill.to_owned(),
            report: r.id,
            reason: r.report.first_failure().unwrap_or_default(),
        },
        (Some(r), _) => Refusal::AwaitingApproval {
            skill: skill.to_owned(),
            report: r.id,
        },
        (None, Some(a)) => Refusal::ArtifactChanged {
            skill: skill.to_owned(),
            approved: a.artifact,
            now: artifact.to_owned(),
        },
        (None, None) => Refusal::NotGated {
            skill: skill.to_owned(),
            artifact: artifact.to_owned(),
        },
    })
}

/// Where a gated handler stands, for `handler report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HandlerState {
    /// Not passed (never gated, or rejected): it does not run.
    Quarantined,
    /// Passed, waiting for approval.
    Passed,
    /// Approved for these bytes: it runs.
    Enabled,
}

/// The state of the handler of `skill` as it is now (see [`admission`]).
pub fn state(
    store: &dyn GateRecords,
    skill: &str,
    artifact: &str,
    pin: &str,
) -> Result<HandlerState, Refusal> {
    match admission(store, skill, artifact, pin) {
        Ok(()) => Ok(HandlerState::Enabled),
        Err(Refusal::AwaitingApproval { .. }) => Ok(HandlerState::Passed),
        Err(Refusal::Unreadable { skill, reason }) => Err(Refusal::Unreadable { skill, reason }),
        Err(_) => Ok(HandlerState::Quarantined),
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
