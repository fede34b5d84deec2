//! Copying one store into another (`skillhost store migrate`): runs with
//! their ids, steps and applied rules, verdicts, key-value data and the
//! gate's reports and approvals. Idempotent: what the target already holds
//! (by run id, report id, key, skill) is left as it is, so a copy that was
//! interrupted is finished by running it again.
//!
//! The target counts usage statistics as the runs arrive, in id order, as
//! the SQLite store filled them in for runs stored before it kept them.

use super::{RunStore, StoreError};

/// Runs read and written per transaction.
pub const PAGE: usize = 1_000;

/// What a copy did: how much was new to the target.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Copied {
    /// Runs copied now.
    pub runs: u64,
    /// Runs the target held already.
    pub runs_present: u64,
    pub verdicts: u64,
    pub kv_entries: u64,
    pub gate_reports: u64,
    pub approvals: u64,
}

/// A run the target holds already under the id of `run` must be that run
/// (copied by an earlier pass): one that is not means the target is
/// another workspace's store, and merging the two would mix their runs.
fn same_run_present(run: &super::RunRecord, to: &dyn RunStore) -> Result<(), StoreError> {
    let there = to.get_run(run.id)?;
    let same = there
        .as_ref()
        .is_some_and(|t| t.skill == run.skill && t.at == run.at && t.task == run.task);
    if same {
        return Ok(());
    }
    Err(StoreError::Copy(format!(
        "the target holds a different run under id {} ({}): it is not a copy of this store; migrate into an empty database",
        run.id,
        there.map_or_else(
            || "unreadable".to_owned(),
            |t| format!("skill `{}`", t.skill)
        )
    )))
}

/// Copies everything `from` holds into `to`; `progress` hears the number
/// of runs read so far after each page. `to`'s key-value quota applies to
/// the entries it receives: open it with the quota the data needs.
pub fn copy(
    from: &dyn RunStore,
    to: &dyn RunStore,
    progress: impl FnMut(u64),
) -> Result<Copied, StoreError> {
    let mut copied = Copied::default();
    copy_runs(from, to, progress, &mut copied)?;
    for (id, verdict) in from.all_verdicts()? {
        if to.verdict(id)?.as_ref() != Some(&verdict) && to.mark_run(id, &verdict)? {
            copied.verdicts += 1;
        }
    }
    for (skill, key, value) in from.kv_entries()? {
        if to.kv_get(&skill, &key)?.as_deref() != Some(&value[..]) {
            to.kv_set(&skill, &key, &value)?;
            copied.kv_entries += 1;
        }
    }
    copied.gate_reports = to.import_gate_reports(&from.all_gate_reports()?)?;
    copied.approvals = copy_approvals(from, to)?;
    Ok(copied)
}

/// The runs, page by page, then the target's ids reserved past the last.
fn copy_runs(
    from: &dyn RunStore,
    to: &dyn RunStore,
    mut progress: impl FnMut(u64),
    copied: &mut Copied,
) -> Result<(), StoreError> {
    let mut after = 0;
    let mut read = 0;
    loop {
        let page = from.runs_after(after, PAGE)?;
        let Some(last) = page.last() else { break };
        after = last.id;
        let mut checked = false;
        for (run, new) in page.iter().zip(to.insert_runs(&page)?) {
            if new {
                copied.runs += 1;
            } else {
                copied.runs_present += 1;
                // One per page: another store's runs collide page-wide.
                if !checked {
                    same_run_present(run, to)?;
                    checked = true;
                }
            }
        }
        read += page.len() as u64;
        progress(read);
    }
    if after > 0 {
        to.reserve_past(after)?;
    }
    Ok(())
}

/// The handler approvals the target lacks; each rests on a gate report
/// copied before (an approved report is never dropped).
fn copy_approvals(from: &dyn RunStore, to: &dyn RunStore) -> Result<u64, StoreError> {
    let mut approvals = 0;
    for approval in from.all_approvals()? {
        if to.handler_approval(&approval.skill)?.as_ref() == Some(&approval) {
            continue;
        }
        if !to.approve_handler(&approval)? {
            return Err(StoreError::Copy(format!(
                "the approval of `{}` rests on gate report {}, which the target does not hold as passed for the same artifact",
                approval.skill, approval.report_id
            )));
        }
        approvals += 1;
    }
    Ok(approvals)
}
