//! The report the validation gate writes for one artifact: one verdict
//! per check, each failure classified and explained, and the cases as
//! they ran; stored, and read back.

use serde::{Deserialize, Serialize};

use super::{ApprovalError, Provenance};
use crate::store::{GateRecords, GateReportRow, StoreError};

/// The gate's checks, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Check {
    /// 1. The bytes are a component within the size cap.
    Artifact,
    /// 2. It exports the handler world of `wit/skill.wit` (types checked
    ///    by linking it against the host).
    World,
    /// 3. Its imports are within what its skill may use.
    Imports,
    /// 4. Its skill declares no more than its parent and the ceiling.
    Capabilities,
    /// 5. Recorded runs and shipped cases give the expected answers.
    Cases,
    /// 6. Each case gives the same answer under other clocks and seeds.
    Determinism,
    /// 7. No case hits a limit.
    Limits,
}

impl Check {
    pub const ALL: [Check; 7] = [
        Check::Artifact,
        Check::World,
        Check::Imports,
        Check::Capabilities,
        Check::Cases,
        Check::Determinism,
        Check::Limits,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Check::Artifact => "artifact",
            Check::World => "world",
            Check::Imports => "imports",
            Check::Capabilities => "capabilities",
            Check::Cases => "cases",
            Check::Determinism => "determinism",
            Check::Limits => "limits",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    /// Not run, because a check it depends on failed.
    Skipped,
}

/// Why a check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FindingClass {
    /// A core wasm module, not a component.
    CoreModule,
    /// Not WebAssembly, or not a valid component.
    Malformed,
    /// Over the size cap.
    TooLarge,
    /// It does not export the handler world's `handle`, or with another type.
    WrongWorld,
    /// It validates, but the host cannot compile it (in time).
    DoesNotCompile,
    /// An import its skill's capabilities do not permit.
    UndeclaredImport,
    /// An import skillhost does not provide at all.
    UnknownImport,
    /// Its skill declares more than the skill it was written for.
    ExceedsParent,
    /// Its skill declares a capability the ceiling for its provenance
    /// does not allow.
    ExceedsCeiling,
    /// A case that cannot be run as written (a bad line of
    /// `tests/cases.jsonl`, a context that does not fit the skill).
    InvalidCase,
    /// A case's answer is not the expected one.
    WrongAnswer,
    /// Two runs of a case under different clocks and seeds differ.
    Nondeterministic,
    TimeLimit,
    MemoryLimit,
    OutputLimit,
    /// Another limit (tables, instances, host objects, stack).
    OtherLimit,
}

/// One check's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub check: Check,
    pub status: Status,
    /// Set when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<FindingClass>,
    /// What was found, in one sentence.
    pub explanation: String,
    /// The particulars: each import refused, each case that failed, each
    /// import let through by the operator.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

/// One case as it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseRun {
    /// Where it comes from: `run 42` or `tests/cases.jsonl:3`.
    pub origin: String,
    pub task: String,
    /// `exact`, `json` or `class`.
    pub compare: String,
    pub expected: String,
    /// It expected an answer and compared it (`exact` or `json`), rather
    /// than a failure or only its class.
    #[serde(default)]
    pub compares_answer: bool,
    /// The answer of the first run: the body, or `CLASS: message`.
    pub got: String,
    pub passed: bool,
    /// The two runs gave the same answer.
    pub deterministic: bool,
    /// The limit the case hit, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    /// The seeds of the two runs' clocks and random numbers.
    pub seeds: [u64; 2],
}

/// The outcome as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Passed,
    Rejected,
}

/// What the gate found for one artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub skill: String,
    /// The skill folder the artifact was gated in.
    pub folder: String,
    pub handler: String,
    pub provenance: Provenance,
    /// `sha256:` of the artifact's bytes.
    pub artifact: String,
    pub size: u64,
    /// [`skill_pin`] of the skill as it was checked.
    pub capabilities_pin: String,
    /// Unix seconds.
    pub at: i64,
    pub outcome: Outcome,
    /// Why the cases could not run the call that will run (a capability
    /// the skill has at run time that the gate does not make live, such
    /// as HTTP or writing): then a pass can only be approved by hand.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hand_only: Vec<String>,
    /// One per check, in [`Check::ALL`] order.
    pub checks: Vec<Verdict>,
    pub cases: Vec<CaseRun>,
    pub duration_ms: u64,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Passed
    }

    pub fn verdict(&self, check: Check) -> Option<&Verdict> {
        self.checks.iter().find(|v| v.check == check)
    }

    /// Cases that passed.
    pub fn cases_passed(&self) -> usize {
        self.cases.iter().filter(|c| c.passed).count()
    }

    /// Cases that passed by giving the expected answer (`exact` or `json`
    /// against an output), not only a failure of the expected class.
    pub fn answers_compared(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| c.passed && c.compares_answer)
            .count()
    }

    /// The first failed check, as `CHECK: CLASS: explanation`.
    pub fn first_failure(&self) -> Option<String> {
        self.checks
            .iter()
            .find(|v| v.status == Status::Fail)
            .map(|v| {
                let class = v.class.map(|c| format!("{c:?}: ")).unwrap_or_default();
                format!("{}: {class}{}", v.check.name(), v.explanation)
            })
    }
}

/// A stored report and its id.
#[derive(Debug, Clone)]
pub struct StoredReport {
    pub id: i64,
    pub report: Report,
}

/// Stores `report`; returns its id. The latest verdict governs: a
/// rejection of the approved artifact revokes the skill's approval, so
/// the handler stops running at once. It is revoked before the report is
/// stored (a crash in between leaves the handler waiting for an approval,
/// never running on a failed report) and again after (an approval made
/// from the previous report in between is removed too).
pub fn store_report(store: &dyn GateRecords, report: &Report) -> Result<i64, StoreError> {
    let revoke = || -> Result<bool, StoreError> {
        let approved = store.handler_approval(&report.skill)?;
        match approved {
            Some(a) if !report.passed() && a.artifact == report.artifact => {
                store.revoke_handler_approval(&report.skill)
            }
            _ => Ok(false),
        }
    };
    let before = revoke()?;
    let id = store.insert_gate_report(&GateReportRow {
        id: 0,
        skill: report.skill.clone(),
        artifact: report.artifact.clone(),
        capabilities_pin: report.capabilities_pin.clone(),
        at: report.at,
        passed: report.passed(),
        // A report of plain strings and numbers always serialises.
        report_json: serde_json::to_string(report).unwrap_or_default(),
    })?;
    if revoke()? || before {
        tracing::warn!(
            skill = %report.skill,
            artifact = %report.artifact,
            "gate report {id} rejected the approved handler: its approval is revoked"
        );
    }
    Ok(id)
}

fn parse(row: GateReportRow) -> Result<StoredReport, ApprovalError> {
    let report = serde_json::from_str(&row.report_json)
        .map_err(|source| ApprovalError::BadReport { id: row.id, source })?;
    Ok(StoredReport { id: row.id, report })
}

/// The latest report of `skill`, for any artifact.
pub fn latest_report(
    store: &dyn GateRecords,
    skill: &str,
) -> Result<Option<StoredReport>, ApprovalError> {
    store.latest_gate_report(skill)?.map(parse).transpose()
}

/// The latest report of `skill` for `artifact`.
pub fn latest_report_for(
    store: &dyn GateRecords,
    skill: &str,
    artifact: &str,
) -> Result<Option<StoredReport>, ApprovalError> {
    store
        .latest_gate_report_for(skill, artifact)?
        .map(parse)
        .transpose()
}
