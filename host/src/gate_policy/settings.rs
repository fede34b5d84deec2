//! The `[gate]` settings and who wrote a handler (its provenance), which
//! decide what a handler may use at most and whether a pass enables it.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{ApprovalError, Report, latest_report_for};
use crate::skill::{Skill, Source};
use crate::store::GateRecords;

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
        store: &dyn GateRecords,
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
