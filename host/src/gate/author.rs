//! `skillhost forge handler SKILL`: the model writes a handler for a
//! skill, the host builds it in a quarantine slot and gates it; a refused
//! source, a failed build or a failed gate goes back to the model with the
//! reason, up to `[forge.handler] attempts` tries in all. A handler that
//! passes is put into the skill's folder through the forge's writer
//! (saved in its history, so `skills rollback` undoes it) and the approval
//! policy applies to it as a generated handler. The pure parts (request,
//! source checks, build) are `forge::handler`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::{GateError, Subject, cases, check, quarantine_slot, run::recorded_compare};
use crate::exec::Runner;
use crate::forge::handler::{
    self as forge_handler, Admitted, BuildError, BuildSettings, Built, Example, HandlerLang,
};
use crate::forge::{ForgeError, SkillWriter};
use crate::gate_policy::{self, HandlerState, Provenance, Report, Status};
use crate::llm::{LlmError, Provider};
use crate::skill::Skill;

#[derive(Debug, thiserror::Error)]
pub enum AuthorError {
    #[error("no skill named `{0}`; see `skillhost skills list`")]
    UnknownSkill(String),
    #[error(
        "skill `{0}` already has a handler (metadata.skillhost.handler); `forge handler` writes one for a skill that has none"
    )]
    HasHandler(String),
    #[error(transparent)]
    NotEditable(ForgeError),
    #[error("the model did not answer: {0}")]
    Model(#[source] LlmError),
    #[error("cannot build a {} handler: {source}", .lang.flag())]
    Toolchain {
        source: BuildError,
        lang: HandlerLang,
    },
    #[error(transparent)]
    Gate(#[from] GateError),
    #[error("the handler passed the gate but could not be added to the skill: {0}")]
    Admit(#[source] ForgeError),
    #[error("cannot prepare the quarantine slot: {0}")]
    Slot(#[source] BuildError),
}

/// How one try ended.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// The reply held no usable source, or the source was refused before
    /// anything built it.
    Refused {
        reason: String,
    },
    BuildFailed {
        reason: String,
    },
    /// Killed at the build time limit.
    TimedOut {
        reason: String,
    },
    Rejected {
        report_id: i64,
        reason: String,
    },
    Passed {
        report_id: i64,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    pub number: u32,
    /// The quarantine slot it was built and gated in.
    pub slot: Option<PathBuf>,
    /// How long the build took.
    pub build_ms: Option<u64>,
    /// `sha256:` of the artifact built.
    pub artifact: Option<String>,
    #[serde(flatten)]
    pub outcome: AttemptOutcome,
}

/// What `forge handler` did.
#[derive(Debug, Clone, Serialize)]
pub struct Authored {
    pub skill: String,
    pub lang: HandlerLang,
    pub attempts: Vec<Attempt>,
    /// Set when a handler passed and was added to the skill.
    pub admitted: Option<Admission>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Admission {
    #[serde(flatten)]
    pub admitted: Admitted,
    pub artifact: String,
    pub report_id: i64,
    /// Where it stands after the approval policy: enabled, or passed and
    /// waiting for `skillhost handler approve`.
    pub state: HandlerState,
}

/// The report as the model reads it on a retry: each failed check, its
/// particulars and the cases that gave another answer.
pub fn report_feedback(report: &Report) -> String {
    let mut out = String::from("The validation gate rejected it:\n");
    for v in report.checks.iter().filter(|v| v.status == Status::Fail) {
        let class = v.class.map(|c| format!("{c:?}: ")).unwrap_or_default();
        out.push_str(&format!("- {}: {class}{}\n", v.check.name(), v.explanation));
        for d in v.details.iter().take(10) {
            out.push_str(&format!("    {d}\n"));
        }
    }
    for c in report.cases.iter().filter(|c| !c.passed).take(10) {
        out.push_str(&format!(
            "- case {}: task {:?}: expected {}, got {:?}\n",
            c.origin, c.task, c.expected, c.got
        ));
    }
    out
}

/// The model writes a handler for the catalog skill `name` in `lang`
/// (default `[forge.handler] lang`); see the module docs.
pub async fn author(
    runner: &Runner,
    provider: &dyn Provider,
    name: &str,
    lang: Option<HandlerLang>,
) -> Result<Authored, AuthorError> {
    let config = runner.config();
    let settings = &config.forge.handler;
    let lang = lang.unwrap_or(settings.lang);
    let skill = handlerless_skill(runner, name)?;
    // The artifact may be no larger than the sandbox will load.
    let build =
        BuildSettings::new(settings, &runner.paths().cache_dir()).within(&runner.config().sandbox);
    let mut request = forge_handler::request(&skill, lang, &examples(runner, &skill)?);
    let mut attempts = Vec::new();
    for number in 1..=settings.attempts.max(1) {
        let reply = provider.chat(&request).await.map_err(AuthorError::Model)?;
        let text = reply.text.unwrap_or_default();
        let (attempt, passed) = attempt(runner, &skill, lang, &build, number, &text).await?;
        if let AttemptOutcome::Passed { report_id } = attempt.outcome {
            let artifact = attempt.artifact.clone().unwrap_or_default();
            attempts.push(attempt);
            let wasm = passed.unwrap_or_default();
            let admission = admit(runner, &skill, &wasm, artifact, report_id, number)?;
            return Ok(Authored {
                skill: name.to_owned(),
                lang,
                attempts,
                admitted: Some(admission),
            });
        }
        let feedback = feedback(runner, name, &attempt.outcome)?;
        attempts.push(attempt);
        forge_handler::follow_up(&mut request, &text, &feedback);
    }
    note_refused(runner, name, lang, &attempts);
    Ok(Authored {
        skill: name.to_owned(),
        lang,
        attempts,
        admitted: None,
    })
}

/// The catalog skill `name`, which has no handler yet and may be edited.
fn handlerless_skill(runner: &Runner, name: &str) -> Result<Skill, AuthorError> {
    let skill = runner
        .catalog()
        .get(name)
        .cloned()
        .ok_or_else(|| AuthorError::UnknownSkill(name.to_owned()))?;
    if skill.meta.skillhost.handler.is_some() {
        return Err(AuthorError::HasHandler(name.to_owned()));
    }
    crate::forge::history::editable(&skill).map_err(AuthorError::NotEditable)?;
    Ok(skill)
}

/// What the model is told of an attempt that did not pass.
fn feedback(runner: &Runner, name: &str, outcome: &AttemptOutcome) -> Result<String, AuthorError> {
    Ok(match outcome {
        AttemptOutcome::Refused { reason } => {
            format!("The source was refused before it was built: {reason}")
        }
        AttemptOutcome::BuildFailed { reason } | AttemptOutcome::TimedOut { reason } => {
            reason.clone()
        }
        AttemptOutcome::Rejected { report_id, .. } => {
            let stored = gate_policy::latest_report(runner.store().map_err(GateError::from)?, name)
                .map_err(GateError::from)?;
            match stored.filter(|s| s.id == *report_id) {
                Some(s) => report_feedback(&s.report),
                None => String::from("The validation gate rejected it."),
            }
        }
        AttemptOutcome::Passed { .. } => String::new(),
    })
}

/// Notes in the skill's history that no attempt passed, with the first
/// line of the last one's reason; a note that cannot be written is logged.
fn note_refused(runner: &Runner, name: &str, lang: HandlerLang, attempts: &[Attempt]) {
    let last = attempts
        .last()
        .map(|a| match &a.outcome {
            AttemptOutcome::Refused { reason }
            | AttemptOutcome::BuildFailed { reason }
            | AttemptOutcome::TimedOut { reason }
            | AttemptOutcome::Rejected { reason, .. } => {
                reason.lines().next().unwrap_or("").to_owned()
            }
            AttemptOutcome::Passed { .. } => String::new(),
        })
        .unwrap_or_default();
    let writer = SkillWriter::new(runner.paths());
    let note = format!(
        "{} handler refused after {} attempt(s): {last}",
        lang.flag(),
        attempts.len()
    );
    if let Err(e) = forge_handler::note_rejected(&writer, name, &note) {
        tracing::warn!(
            skill = name,
            "cannot note the refused handler in the history: {e}"
        );
    }
}

/// What the skill answered before: its recorded runs as the gate will
/// replay them, and its shipped cases.
fn examples(runner: &Runner, skill: &Skill) -> Result<Vec<Example>, GateError> {
    let gate = &runner.config().gate;
    let runs = runner
        .store()?
        .recent_runs_of(&skill.name, gate.max_recorded_cases.saturating_mul(2))?;
    let (mut all, _) =
        cases::recorded_cases(&runs, recorded_compare(skill), gate.max_recorded_cases);
    if let Ok(bytes) = skill.read_file(cases::CASES_FILE, cases::MAX_CASES_BYTES) {
        all.extend(cases::parse_cases_file(&String::from_utf8_lossy(&bytes)).0);
    }
    Ok(all
        .into_iter()
        .map(|c| Example {
            task: c.task,
            context: c.context,
            expected: match c.expected {
                cases::Expected::Output(v) => v,
                cases::Expected::Failure { class, message } => {
                    serde_json::json!({"failure": class, "message": message})
                }
            },
        })
        .collect())
}

/// One try: the source from `reply`, checked, built and gated in its slot.
/// Returns the artifact's bytes when it passed.
async fn attempt(
    runner: &Runner,
    skill: &Skill,
    lang: HandlerLang,
    build: &BuildSettings,
    number: u32,
    reply: &str,
) -> Result<(Attempt, Option<Vec<u8>>), AuthorError> {
    let source = match forge_handler::extract_source(reply, lang)
        .and_then(|s| forge_handler::check_source(&s, lang).map(|()| s))
    {
        Ok(s) => s,
        Err(e) => {
            let refused = Attempt {
                number,
                slot: None,
                build_ms: None,
                artifact: None,
                outcome: AttemptOutcome::Refused {
                    reason: e.to_string(),
                },
            };
            return Ok((refused, None));
        }
    };
    let slot = fresh_slot(runner, &skill.name, &source)?;
    forge_handler::write_project(&slot, &source, lang, build).map_err(AuthorError::Slot)?;
    let mut attempt = Attempt {
        number,
        slot: Some(slot.clone()),
        build_ms: None,
        artifact: None,
        outcome: AttemptOutcome::Refused {
            reason: String::new(),
        },
    };
    let built = match build_in(&slot, lang, build).await {
        Ok(b) => b,
        Err(e @ BuildError::ToolchainMissing { .. }) => {
            return Err(AuthorError::Toolchain { source: e, lang });
        }
        Err(e @ BuildError::TimedOut { .. }) => {
            attempt.outcome = AttemptOutcome::TimedOut {
                reason: e.to_string(),
            };
            return Ok((attempt, None));
        }
        Err(e @ BuildError::Failed { .. }) => {
            attempt.outcome = AttemptOutcome::BuildFailed {
                reason: e.to_string(),
            };
            return Ok((attempt, None));
        }
        Err(e) => return Err(AuthorError::Slot(e)),
    };
    attempt.build_ms = Some(millis(built.duration));
    attempt.artifact = Some(crate::sandbox::artifact_hash(&built.wasm));
    stage_for_gate(skill, &slot, &built.wasm)?;
    let subject = Subject::folder(runner, &slot, Some(Provenance::Generated))?;
    let (report_id, report) = check(runner, &subject).await?;
    attempt.outcome = if report.passed() {
        AttemptOutcome::Passed { report_id }
    } else {
        AttemptOutcome::Rejected {
            report_id,
            reason: report.first_failure().unwrap_or_default(),
        }
    };
    let passed = report.passed().then_some(built.wasm);
    Ok((attempt, passed))
}

/// The quarantine slot `source` builds in, empty. It is named by the
/// source's hash: the artifact's is not known before it is built, and the
/// same source builds in the same slot.
fn fresh_slot(runner: &Runner, skill: &str, source: &str) -> Result<PathBuf, AuthorError> {
    let source_hash = crate::sandbox::artifact_hash(source.as_bytes());
    let slot = quarantine_slot(runner.paths(), skill, &source_hash)?;
    if slot.exists() {
        std::fs::remove_dir_all(&slot).map_err(|source| {
            AuthorError::Slot(BuildError::Io {
                action: "clear",
                path: slot.clone(),
                source,
            })
        })?;
    }
    std::fs::create_dir_all(&slot).map_err(|source| {
        AuthorError::Slot(BuildError::Io {
            action: "create",
            path: slot.clone(),
            source,
        })
    })?;
    Ok(slot)
}

/// Builds the project in `slot` off the async runtime.
async fn build_in(
    slot: &Path,
    lang: HandlerLang,
    build: &BuildSettings,
) -> Result<Built, BuildError> {
    let (slot, build) = (slot.to_path_buf(), build.clone());
    tokio::task::spawn_blocking(move || forge_handler::build(&slot, lang, &build))
        .await
        .unwrap_or_else(|e| {
            Err(BuildError::Io {
                action: "build in",
                path: PathBuf::new(),
                source: std::io::Error::other(e),
            })
        })
}

/// Makes `slot` a skill folder the gate checks: the artifact, and the
/// skill's SKILL.md pointing at it as a generated handler.
fn stage_for_gate(skill: &Skill, slot: &Path, wasm: &[u8]) -> Result<(), AuthorError> {
    let write = |rel: &str, bytes: &[u8]| {
        let path = slot.join(rel);
        crate::fsutil::write_atomic(&path, bytes)
            .map_err(|source| GateError::Write { path, source })
    };
    write(forge_handler::HANDLER_FILE, wasm)?;
    let current = std::fs::read(&skill.path).map_err(|source| GateError::Write {
        path: skill.path.clone(),
        source,
    })?;
    let md = match forge_handler::with_generated_handler(
        &current,
        &skill.name,
        forge_handler::HANDLER_FILE,
    ) {
        Ok(md) => md,
        Err(e) => return Err(AuthorError::Admit(ForgeError::Invalid(e))),
    };
    write("SKILL.md", md.as_bytes())?;
    Ok(())
}

/// Puts a passed artifact into the skill, reloads the catalog and applies
/// the approval policy to the skill as it now is.
fn admit(
    runner: &Runner,
    skill: &Skill,
    wasm: &[u8],
    artifact: String,
    report_id: i64,
    number: u32,
) -> Result<Admission, AuthorError> {
    let writer = SkillWriter::new(runner.paths());
    let admitted = forge_handler::admit(
        &writer,
        skill,
        wasm,
        &format!("handler written by the model (attempt {number}), gate report {report_id}"),
    )
    .map_err(AuthorError::Admit)?;
    runner.reload_catalog();
    let state = super::admit(runner, &skill.name)?;
    Ok(Admission {
        admitted,
        artifact,
        report_id,
        state,
    })
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
