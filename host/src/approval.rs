//! Which gated handlers may run. The `[gate]` settings, the report the
//! validation gate writes (one verdict per check, each failure classified
//! and explained), and approvals, each pinned to the artifact's bytes and
//! to its skill as it was checked (its SKILL.md and what it declared). `exec` asks
//! [`admission`] before it runs a handler of a gated source; the checks
//! themselves run in `gate`, above `exec`, which needs only this.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::skill::{Capabilities, Skill, Source};
use crate::store::{ApprovalRow, GateReportRow, RunStore, StoreError};

/// The `[gate]` section of `skillhost.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GateConfig {
    /// Skills of these sources run their handler only once it passed the
    /// gate and was approved, for exactly its bytes. Other handlers run as
    /// they always did (`skillhost handler gate` still checks them).
    pub sources: Vec<Source>,
    /// The most a machine-written (forged) handler's skill may use, by
    /// capability key (`files`, `http`, `tools`, `llm`, `kv`). Empty: the
    /// host log, WASI clocks and random numbers, nothing else.
    pub generated: Vec<CapabilityKey>,
    /// The same for every other handler (installed, user, workspace, ...).
    pub installed: Vec<CapabilityKey>,
    /// Whether a passed handler is enabled at once (`auto`) or waits for
    /// `skillhost handler approve` (`manual`). Unset: manual for installed
    /// handlers, auto for generated ones.
    pub approve: Option<Approve>,
    /// Cases a handler must have passed for `auto` to enable it; with
    /// fewer it waits for approval like `manual`.
    pub auto_min_cases: usize,
    /// Largest artifact the gate accepts (the sandbox's own
    /// `max_component_mb` applies too).
    pub max_artifact_kb: u64,
    /// No longer read: cases run under a run's limits, so that a handler
    /// cannot tell the gate from a run by them. Accepted so that a
    /// `skillhost.toml` written for an older skillhost still loads.
    #[serde(skip_serializing)]
    pub timeout_ms: Option<u64>,
    #[serde(skip_serializing)]
    pub memory_mb: Option<u64>,
    #[serde(skip_serializing)]
    pub output_kb: Option<u64>,
    /// The most recorded runs (newest first) that become cases.
    pub max_recorded_cases: usize,
    /// Imports the operator lets through for one skill although nothing
    /// it declares permits them, by skill name: each entry a package
    /// (`wasi:sockets`), an interface (`wasi:sockets/tcp`) or a function
    /// of one (`skillhost:skill/host#complete`). For language
    /// runtimes that import what they never use; the sandbox still refuses
    /// every call the skill has no grant for, and each import let through
    /// is listed in the report.
    pub allow_imports: BTreeMap<String, Vec<String>>,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            sources: vec![Source::Installed, Source::Forged],
            generated: Vec::new(),
            installed: crate::grants::CAPABILITIES
                .iter()
                .map(|c| CapabilityKey(c.key().to_owned()))
                .collect(),
            approve: None,
            auto_min_cases: 3,
            max_artifact_kb: 100 * 1024,
            timeout_ms: None,
            memory_mb: None,
            output_kb: None,
            max_recorded_cases: 100,
            allow_imports: BTreeMap::new(),
        }
    }
}

impl GateConfig {
    /// The capability keys a handler of `provenance` may use at most.
    pub fn ceiling(&self, provenance: Provenance) -> Vec<&str> {
        let keys = match provenance {
            Provenance::Generated => &self.generated,
            Provenance::Installed => &self.installed,
        };
        keys.iter().map(|k| k.0.as_str()).collect()
    }

    /// Whether a passed `report` is enabled without the operator. Only
    /// cases that compared answers count, and never fewer than one: a
    /// handler no case pinned down is approved by hand or not at all. Nor
    /// does a report whose cases could not run the call that will run
    /// (see [`Report::hand_only`]).
    pub fn auto_approves(&self, report: &Report) -> bool {
        let approve = self.approve.unwrap_or(match report.provenance {
            Provenance::Generated => Approve::Auto,
            Provenance::Installed => Approve::Manual,
        });
        approve == Approve::Auto
            && report.hand_only.is_empty()
            && report.answers_compared() >= self.auto_min_cases.max(1)
    }

    /// Why a passed `report` waits for the operator, in words.
    pub fn why_manual(&self, report: &Report) -> String {
        if let Some(why) = report.hand_only.first() {
            return format!("{why}: only `skillhost handler approve` enables it");
        }
        let compared = report.answers_compared();
        match self.approve {
            Some(Approve::Manual) => "[gate] approve = \"manual\"".into(),
            None if report.provenance == Provenance::Installed => {
                "installed handlers wait for approval unless [gate] approve = \"auto\"".into()
            }
            _ if compared == 0 => "no case compared its answer with an expected one: only `skillhost handler approve` enables it".into(),
            _ => format!(
                "{compared} cases compared answers and passed, automatic approval needs [gate] auto_min_cases = {}",
                self.auto_min_cases.max(1)
            ),
        }
    }

    /// Whether handlers of skills from `source` need an approval to run.
    pub fn gates(&self, source: Source) -> bool {
        self.sources.contains(&source)
    }

    /// Whether `skill`'s handler needs an approval to run: its source is
    /// gated, or a model wrote it (`metadata.skillhost.handler_generated`),
    /// which is gated whatever the settings say.
    pub fn gates_skill(&self, skill: &Skill) -> bool {
        skill.meta.skillhost.handler_generated || self.gates(skill.source)
    }
}

/// A capability's key in a `[gate]` ceiling, checked when the file is read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CapabilityKey(String);

impl TryFrom<String> for CapabilityKey {
    type Error = String;
    fn try_from(key: String) -> Result<Self, String> {
        match crate::grants::capability(&key) {
            Some(_) => Ok(CapabilityKey(key)),
            None => Err(format!(
                "unknown capability `{key}`; the capabilities are {}",
                crate::grants::CAPABILITIES
                    .iter()
                    .map(|c| c.key())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

impl From<CapabilityKey> for String {
    fn from(k: CapabilityKey) -> String {
        k.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approve {
    Auto,
    Manual,
}

/// Who wrote a handler, which decides its ceiling and its default approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provenance {
    /// Machine-written: forged skills, generated handlers in quarantine.
    Generated,
    /// Written by a person: installed, user, workspace, bundled skills.
    Installed,
}

impl Provenance {
    pub fn of(source: Source) -> Provenance {
        match source {
            Source::Forged => Provenance::Generated,
            _ => Provenance::Installed,
        }
    }

    /// Who wrote the handler of `skill`, whose bytes hash to `artifact`,
    /// from what the host itself recorded, never from the skill's own
    /// words: generated for a forged skill, and for an artifact whose
    /// latest gate report judged it as generated (the forge gates what a
    /// model wrote in a quarantine slot before it moves it in). `handler_generated` in
    /// the front matter is not read: an installed skill that claims it
    /// would be judged as generated, and generated handlers are approved
    /// without the operator.
    pub fn recorded(
        store: &dyn RunStore,
        skill: &Skill,
        artifact: &str,
    ) -> Result<Provenance, ApprovalError> {
        if Provenance::of(skill.source) == Provenance::Generated {
            return Ok(Provenance::Generated);
        }
        let latest = latest_report_for(store, &skill.name, artifact)?;
        Ok(
            if latest.is_some_and(|r| r.report.provenance == Provenance::Generated) {
                Provenance::Generated
            } else {
                Provenance::Installed
            },
        )
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Provenance::Generated => "generated",
            Provenance::Installed => "installed",
        })
    }
}

/// The pin of a skill as the gate judged it, which an approval holds with
/// the artifact's hash: what it declares and its SKILL.md's bytes (its
/// body, triggers, template, validators: everything a run reads of it). A
/// skill that now declares more, or whose SKILL.md changed, must pass
/// again. Stored as `capabilities_pin`, the name it had when it pinned
/// only the declaration.
pub fn skill_pin(skill: &Skill) -> String {
    pin(&skill.meta.skillhost.capabilities, &skill.version)
}

/// [`skill_pin`] from its parts: the declaration and the SKILL.md's
/// content version (`sha256:` of its bytes).
pub fn pin(declared: &Capabilities, skill_md_version: &str) -> String {
    // Field order is fixed and lists keep their order: the same
    // declaration always serialises to the same bytes.
    let mut h = Sha256::new();
    h.update(serde_json::to_vec(declared).unwrap_or_default());
    h.update(b"\nSKILL.md ");
    h.update(skill_md_version.as_bytes());
    format!("sha256:{}", crate::bundled::hex(&h.finalize()))
}

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
        "skill `{skill}` changed (its SKILL.md or what it declares) since its handler was gated; run `skillhost handler gate {skill}`"
    )]
    SkillChanged { skill: String },
}

/// Stores `report`; returns its id.
pub fn store_report(store: &dyn RunStore, report: &Report) -> Result<i64, StoreError> {
    store.insert_gate_report(&GateReportRow {
        id: 0,
        skill: report.skill.clone(),
        artifact: report.artifact.clone(),
        capabilities_pin: report.capabilities_pin.clone(),
        at: report.at,
        passed: report.passed(),
        // A report of plain strings and numbers always serialises.
        report_json: serde_json::to_string(report).unwrap_or_default(),
    })
}

fn parse(row: GateReportRow) -> Result<StoredReport, ApprovalError> {
    let report = serde_json::from_str(&row.report_json)
        .map_err(|source| ApprovalError::BadReport { id: row.id, source })?;
    Ok(StoredReport { id: row.id, report })
}

/// The latest report of `skill`, for any artifact.
pub fn latest_report(
    store: &dyn RunStore,
    skill: &str,
) -> Result<Option<StoredReport>, ApprovalError> {
    store.latest_gate_report(skill)?.map(parse).transpose()
}

/// The latest report of `skill` for `artifact`.
pub fn latest_report_for(
    store: &dyn RunStore,
    skill: &str,
    artifact: &str,
) -> Result<Option<StoredReport>, ApprovalError> {
    store
        .latest_gate_report_for(skill, artifact)?
        .map(parse)
        .transpose()
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
    store: &dyn RunStore,
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
        "handler of `{skill}` is not approved: the skill changed since approval (its SKILL.md or what it declares); run `skillhost handler gate {skill}`"
    )]
    SkillChanged { skill: String },
    #[error("handler of `{skill}` is not approved: its approval cannot be read: {reason}")]
    Unreadable { skill: String, reason: String },
}

/// `sha256:` and 12 hex digits.
fn short(v: &str) -> &str {
    v.char_indices().nth(19).map_or(v, |(i, _)| &v[..i])
}

/// Whether the handler of `skill`, whose bytes hash to `artifact` and
/// whose skill is pinned `pin` ([`skill_pin`]), may run. One indexed read
/// when it may; a refusal reads the latest report too, to say why.
pub fn admission(
    store: &dyn RunStore,
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
    store: &dyn RunStore,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SqliteStore;

    fn report(skill: &str, artifact: &str, pin: &str, passed: bool) -> Report {
        Report {
            skill: skill.into(),
            folder: "/skills/s".into(),
            handler: "handler.wasm".into(),
            provenance: Provenance::Installed,
            artifact: artifact.into(),
            size: 10,
            capabilities_pin: pin.into(),
            at: 1,
            outcome: if passed {
                Outcome::Passed
            } else {
                Outcome::Rejected
            },
            checks: vec![Verdict {
                check: Check::Imports,
                status: if passed { Status::Pass } else { Status::Fail },
                class: (!passed).then_some(FindingClass::UndeclaredImport),
                explanation: "imports wasi:sockets/tcp".into(),
                details: Vec::new(),
            }],
            cases: Vec::new(),
            duration_ms: 1,
            hand_only: Vec::new(),
        }
    }

    #[test]
    fn a_handler_runs_only_as_approved_and_each_refusal_says_why() {
        let d = tempfile::tempdir().expect("tempdir");
        let store = SqliteStore::open(&d.path().join("s.db")).expect("open");
        let none = pin(&Capabilities::default(), "sha256:md");
        let refusal = |artifact: &str, pin: &str| {
            admission(&store, "s", artifact, pin)
                .expect_err("refused")
                .to_string()
        };
        assert!(refusal("sha256:a", &none).contains("has not been through the gate"));
        store_report(&store, &report("s", "sha256:a", &none, false)).expect("store");
        let r = refusal("sha256:a", &none);
        assert!(r.contains("the gate rejected it"), "{r}");
        assert!(r.contains("imports: UndeclaredImport"), "{r}");
        let e =
            approve(&store, "s", "sha256:a", &none, ApprovedBy::Operator).expect_err("rejected");
        assert!(matches!(e, ApprovalError::Rejected { .. }), "{e}");

        let id = store_report(&store, &report("s", "sha256:a", &none, true)).expect("store");
        assert!(refusal("sha256:a", &none).contains("waits for `skillhost handler approve s`"));
        assert_eq!(
            state(&store, "s", "sha256:a", &none),
            Ok(HandlerState::Passed)
        );
        // Approval is for the skill the report was made against: what it
        // declares and its SKILL.md.
        let more = pin(
            &Capabilities {
                llm: true,
                ..Capabilities::default()
            },
            "sha256:md",
        );
        let edited = pin(&Capabilities::default(), "sha256:other-md");
        for other in [&more, &edited] {
            let e = approve(&store, "s", "sha256:a", other, ApprovedBy::Operator)
                .expect_err("another skill");
            assert!(matches!(e, ApprovalError::SkillChanged { .. }), "{e}");
        }
        let row = approve(&store, "s", "sha256:a", &none, ApprovedBy::Operator).expect("approve");
        assert_eq!(row.report_id, id);
        assert_eq!(admission(&store, "s", "sha256:a", &none), Ok(()));
        assert_eq!(
            state(&store, "s", "sha256:a", &none),
            Ok(HandlerState::Enabled)
        );
        // Other bytes, a skill that now declares more or a new SKILL.md:
        // refused.
        let r = refusal("sha256:b", &none);
        assert!(r.contains("artifact changed since approval"), "{r}");
        assert!(r.contains("run `skillhost handler gate s`"), "{r}");
        assert!(refusal("sha256:a", &more).contains("the skill changed since approval"));
        assert!(refusal("sha256:a", &edited).contains("the skill changed since approval"));
        // Other skills are not approved by it.
        assert!(admission(&store, "t", "sha256:a", &none).is_err());
    }

    /// A skill of `source` whose front matter says a model wrote its
    /// handler (`handler_generated: true`).
    fn says_a_model_wrote_its_handler(source: Source) -> crate::skill::Skill {
        let md = b"---\nname: s\ndescription: d\nmetadata:\n  skillhost:\n    handler: h.wasm\n    handler_generated: true\n---\n";
        let parsed = crate::skill::parse_skill(md, "s").expect("parses");
        crate::skill::Skill {
            name: parsed.name,
            description: parsed.description,
            body: parsed.body,
            dir: "/s".into(),
            path: "/s/SKILL.md".into(),
            version: String::new(),
            source,
            warnings: Vec::new(),
            meta: parsed.meta,
        }
    }

    #[test]
    fn the_default_approval_policy_depends_on_provenance_and_cases() {
        let c = GateConfig::default();
        let passed = |provenance, compared: usize, class_only: usize| {
            let case = |compares_answer| CaseRun {
                origin: "tests/cases.jsonl:1".into(),
                task: "t".into(),
                compare: if compares_answer { "exact" } else { "class" }.into(),
                expected: "x".into(),
                compares_answer,
                got: "x".into(),
                passed: true,
                deterministic: true,
                limit: None,
                seeds: [1, 2],
            };
            let mut r = report("s", "sha256:a", "pin", true);
            r.provenance = provenance;
            r.cases = std::iter::repeat_n(case(true), compared)
                .chain(std::iter::repeat_n(case(false), class_only))
                .collect();
            r
        };
        let min = c.auto_min_cases;
        assert!(!c.auto_approves(&passed(Provenance::Installed, 100, 0)));
        assert!(c.auto_approves(&passed(Provenance::Generated, min, 0)));
        assert!(!c.auto_approves(&passed(Provenance::Generated, min - 1, 0)));
        // Cases that accept any answer of a class pin nothing down.
        let loose = passed(Provenance::Generated, 0, 100);
        assert!(!c.auto_approves(&loose));
        assert!(
            c.why_manual(&loose)
                .contains("only `skillhost handler approve`")
        );
        let auto = GateConfig {
            approve: Some(Approve::Auto),
            auto_min_cases: 0,
            ..GateConfig::default()
        };
        assert!(!auto.auto_approves(&passed(Provenance::Installed, 0, 0)));
        assert!(auto.auto_approves(&passed(Provenance::Installed, 1, 0)));
        // A gate that could not run the call that will run.
        let mut partial = passed(Provenance::Generated, 100, 0);
        partial.hand_only = vec!["it is granted http".into()];
        assert!(!c.auto_approves(&partial));
        assert!(c.why_manual(&partial).starts_with("it is granted http"));
        let manual = GateConfig {
            approve: Some(Approve::Manual),
            ..GateConfig::default()
        };
        assert!(!manual.auto_approves(&passed(Provenance::Generated, 100, 0)));
        assert!(c.gates(Source::Installed) && c.gates(Source::Forged));
        assert!(!c.gates(Source::Bundled) && !c.gates(Source::Workspace));
        assert!(c.ceiling(Provenance::Generated).is_empty());
        assert_eq!(
            c.ceiling(Provenance::Installed),
            vec!["files", "http", "tools", "llm", "kv"]
        );
        // A handler a model wrote is gated whatever its skill's source.
        let mut skill = says_a_model_wrote_its_handler(Source::Workspace);
        assert!(c.gates_skill(&skill));
        skill.meta.skillhost.handler_generated = false;
        assert!(!c.gates_skill(&skill));
    }

    #[test]
    fn provenance_is_what_the_host_recorded_never_what_the_skill_says() {
        let d = tempfile::tempdir().expect("tempdir");
        let store = SqliteStore::open(&d.path().join("s.db")).expect("open");
        let mut skill = says_a_model_wrote_its_handler(Source::Installed);
        let of = |skill: &crate::skill::Skill, artifact: &str| {
            Provenance::recorded(&store, skill, artifact).expect("store")
        };
        // It says a model wrote it; nothing the host recorded says so.
        assert_eq!(of(&skill, "sha256:a"), Provenance::Installed);
        let mut generated = report("s", "sha256:a", "pin", true);
        generated.provenance = Provenance::Generated;
        store_report(&store, &generated).expect("store");
        assert_eq!(of(&skill, "sha256:a"), Provenance::Generated);
        // Only for the bytes the gate judged.
        assert_eq!(of(&skill, "sha256:b"), Provenance::Installed);
        skill.source = Source::Forged;
        assert_eq!(of(&skill, "sha256:b"), Provenance::Generated);
    }

    #[test]
    fn a_ceiling_names_only_capabilities_that_exist() {
        let ok: GateConfig = toml::from_str("generated = [\"kv\", \"llm\"]").expect("parse");
        assert_eq!(ok.ceiling(Provenance::Generated), vec!["kv", "llm"]);
        let e = toml::from_str::<GateConfig>("generated = [\"sockets\"]").expect_err("unknown");
        assert!(
            e.to_string().contains("unknown capability `sockets`"),
            "{e}"
        );
    }
}
