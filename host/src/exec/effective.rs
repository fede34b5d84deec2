//! What a call of a skill runs with: its effective grants (declared ∩
//! granted, at its fingerprint), its limits, and whether its handler is
//! admitted by the gate's approvals.

use std::sync::Arc;

use super::Runner;
use super::outcome::RunOutcome;
use crate::gate_policy::Refusal;
use crate::granting::{GrantFile, grant_command};
use crate::grants::Effective;
use crate::sandbox;
use crate::skill::{LimitSpec, Skill};

impl Runner {
    /// declared ∩ granted for the skill pinned `pin` (see
    /// `policy::skill_pin`): what a call of it runs with. The gate asks
    /// this too, so that it judges the call that will run.
    pub(crate) fn effective_grants(&self, skill: &Skill, pin: &str) -> Effective {
        crate::grants::effective(
            &skill.name,
            skill.source,
            &skill.meta.skillhost.capabilities,
            &skill.meta.skillhost.limits,
            pin,
            &self.shared.config.trust,
            &self.grants(),
        )
    }

    /// [`Runner::effective_grants`] for the skill's folder as it is now:
    /// pinned only when a grant names it. A folder that cannot be pinned
    /// matches no grant.
    pub(super) fn current_grants(&self, skill: &Skill) -> Effective {
        let pin = if self.grants().contains_key(&skill.name) {
            self.shared
                .files
                .skill_pin(skill)
                .unwrap_or_else(|e| format!("unpinned ({e})"))
        } else {
            String::new()
        };
        self.effective_grants(skill, &pin)
    }

    /// Whether the handler of `skill` (its bytes hashing to `artifact`,
    /// its folder pinned `pin`) may run: always, unless `[gate] sources`
    /// gates the skill's source or a model wrote the handler; then only as
    /// approved (see `approval`). A gated handler that is not approved
    /// fails the run rather than falling back to the model or the
    /// template: an answer from another tier would pass for the skill's
    /// own while its code was refused, and would hide a changed artifact.
    pub(super) fn admitted(
        &self,
        skill: &Skill,
        artifact: Option<&str>,
        pin: Option<&Result<String, String>>,
    ) -> Result<(), Refusal> {
        if !self.shared.config.gate.gates_skill(skill) {
            return Ok(());
        }
        let Some(artifact) = artifact else {
            return Ok(());
        };
        let pin = match pin {
            Some(Ok(pin)) => pin,
            Some(Err(reason)) => {
                return Err(Refusal::Unpinnable {
                    skill: skill.name.clone(),
                    reason: reason.clone(),
                });
            }
            None => {
                return Err(Refusal::Unpinnable {
                    skill: skill.name.clone(),
                    reason: "its folder was not pinned".to_owned(),
                });
            }
        };
        let store = self
            .shared
            .store
            .get_store()
            .map_err(|e| Refusal::Unreadable {
                skill: skill.name.clone(),
                reason: e.to_string(),
            })?;
        crate::gate_policy::admission(store, &skill.name, artifact, pin)
    }

    /// Whether a call of `skill` needs its pin: its handler is gated, or a
    /// grant names it (only then does the pin decide anything).
    pub(super) fn needs_pin(&self, skill: &Skill) -> bool {
        self.shared.config.gate.gates_skill(skill) || self.grants().contains_key(&skill.name)
    }

    /// The host's own paths, which no file grant reaches.
    pub(super) fn control_paths(&self) -> &Arc<crate::paths::ControlPaths> {
        let s = &self.shared;
        s.control.get_or_init(|| Arc::new(s.paths.control_paths()))
    }

    /// The limits a call of `skill` runs under, raised as far as `raise`
    /// allows (see `Limits::resolve`).
    pub(super) fn limits(&self, skill: &Skill, raise: &LimitSpec) -> sandbox::Limits {
        sandbox::Limits::resolve(
            &skill.meta.skillhost.limits,
            raise,
            &self.shared.config.limits,
        )
    }

    pub(super) fn grants_for(&self, skill: &Skill, outcome: &mut RunOutcome) -> Effective {
        let effective = self.current_grants(skill);
        self.note_grants(skill, &effective, outcome);
        effective
    }

    pub(super) fn note_grants(
        &self,
        skill: &Skill,
        effective: &Effective,
        outcome: &mut RunOutcome,
    ) {
        outcome.grants = Some(effective.basis.to_string());
        let which = match effective.basis {
            crate::grants::Basis::StaleGrant { .. } => GrantFile::Renew,
            _ => GrantFile::New,
        };
        let command = || grant_command(&self.shared.paths, skill, which, &[]);
        if let Some(n) = effective.notice(&skill.name, &skill.meta.skillhost.capabilities, command)
        {
            outcome.notices.push(n);
        }
    }
}

/// A line for the user when the skill asked for more than a default and
/// runs with less, because its raise is not granted.
pub(super) fn limits_notice(
    skill: &Skill,
    limits: &sandbox::Limits,
    defaults: &crate::config::LimitDefaults,
    grant_command: impl FnOnce() -> String,
) -> Option<String> {
    let asked = &skill.meta.skillhost.limits;
    let short =
        |asked: Option<u64>, got: u64, default: u64| asked.is_some_and(|a| a > default && got < a);
    let memory_mb = (limits.memory_bytes >> 20) as u64;
    let timeout_ms = u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX);
    let output_kb = (limits.output_bytes / 1024) as u64;
    let raised_less = short(asked.memory_mb, memory_mb, defaults.memory_mb)
        || short(asked.timeout_ms, timeout_ms, defaults.timeout_ms)
        || short(asked.output_kb, output_kb, defaults.output_kb);
    raised_less.then(|| {
        format!(
            "skill `{}` asks for limits above the defaults; it runs with memory {memory_mb} MiB, time {timeout_ms} ms, output {output_kb} KiB (`{}` grants what it declares, up to the `[limits] max_*` ceilings)",
            skill.name,
            grant_command()
        )
    })
}
