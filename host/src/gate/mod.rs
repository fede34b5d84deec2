//! The validation gate: the checks a handler passes before a gated source's
//! skill may run it (installed and machine-written handlers, by default),
//! and the approval policy. Each check gives one verdict, each failure
//! classified and explained, in a report that is stored (see `gate_policy`)
//! and shown by `skillhost handler report`:
//!
//! 1. artifact: the bytes are a component within the size caps;
//! 2. world: it exports the handler world (linking type-checks `handle`
//!    against `wit/skill.wit`);
//! 3. imports: each is permitted by what its skill may use (declared ∩ the
//!    ceiling for its provenance), read from the component's types before
//!    anything is compiled, or let through by `[gate.allow_imports]`;
//! 4. capabilities: its skill declares no more than the skill it was
//!    written for, nor beyond the ceiling;
//! 5. cases: recorded runs and `tests/cases.jsonl` give the expected
//!    answers, each run as the call that will run: with the capabilities
//!    the skill has at run time (declared ∩ granted, the same `Effective`
//!    as `exec`) and under a run's limits, so that a handler cannot tell
//!    the gate from a run by what it is allowed or how much memory it gets;
//! 6. determinism: each case answers the same under other clocks and
//!    random seeds;
//! 7. limits: no case hits one.
//!
//! A handler moves from quarantined to passed to enabled. Enabling is
//! automatic or needs `skillhost handler approve`, per `[gate] approve`,
//! and is never automatic for a handler that no case pinned down (no case
//! compared an answer) or whose run-time capabilities the gate cannot make
//! live (HTTP, writing, tools, the model). An approval is pinned to the
//! artifact's bytes and to the skill's pin (its SKILL.md and every file
//! of its folder a run can read), so a changed artifact or skill is
//! disabled until it passes again; a rejection of the approved artifact
//! revokes its approval.
//!
//! Who wrote a handler (its provenance) is what the host recorded, never
//! what the skill says of itself (see `Provenance::recorded`).
//!
//! For a caller that writes or downloads a handler: put the skill folder
//! in [`quarantine_slot`], gate it with [`check`] on a [`Subject::folder`],
//! move it in if it passed, reload the catalog, then [`admit`] applies the
//! approval policy to the skill as it now is. `author` does this for a
//! handler a model writes (`skillhost forge handler`).

#[cfg(feature = "forge")]
pub mod author;
mod cases;
mod run;
mod statics;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

pub use cases::{CASES_FILE, Case, Compare, Expected, parse_cases_file};

use crate::exec::Runner;
use crate::gate_policy::{
    self, ApprovalError, ApprovedBy, Check, FindingClass, HandlerState, Outcome, Provenance,
    Report, Status, StoredReport, Verdict, skill_pin,
};
use crate::grants::Effective;
use crate::paths::Paths;
use crate::sandbox::{self, FileRoots, Limits, SandboxError};
use crate::skill::{Capabilities, Catalog, LoadOptions, Root, Skill, SkillFileError, Source};
use crate::store::{ApprovalRow, StoreError};
use crate::types::Chain;
use statics::{fail, pass, skipped};

/// Largest handler read at all; the gate's own cap is lower.
const MAX_READ_BYTES: u64 = 128 << 20;

/// The report kept beside a quarantined artifact.
pub const QUARANTINE_REPORT: &str = "gate-report.json";

#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("no skill named `{0}`; see `skillhost skills list`")]
    UnknownSkill(String),
    #[error("skill `{0}` has no handler (metadata.skillhost.handler) to gate")]
    NoHandler(String),
    #[error("cannot read the handler of skill `{skill}`: {source}")]
    Read {
        skill: String,
        source: SkillFileError,
    },
    #[error("no skill in {}: {reason}", .dir.display())]
    NoSkill { dir: PathBuf, reason: String },
    #[error(
        "{} is in the quarantine slot of skill `{slot}`, but its SKILL.md names `{named}`",
        .dir.display()
    )]
    WrongSlot {
        dir: PathBuf,
        slot: String,
        named: String,
    },
    #[error(
        "`{0}` cannot name a quarantine slot: a skill name is lowercase letters, digits and hyphens"
    )]
    BadSlotName(String),
    #[error("the sandbox cannot start")]
    Sandbox(#[source] SandboxError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Approval(#[from] ApprovalError),
    #[error(transparent)]
    Refusal(#[from] gate_policy::Refusal),
    #[error("cannot pin skill `{skill}` to its gate report or approval")]
    Pin {
        skill: String,
        #[source]
        source: crate::skill::TreeError,
    },
    #[error("`{0}` is not an artifact hash (`sha256:` and hex digits)")]
    BadArtifact(String),
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What the gate checks: a skill and its handler.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The skill, its `source` the one it runs as once in place (a
    /// quarantine slot's skill runs as the catalog skill it replaces).
    pub skill: Skill,
    pub provenance: Provenance,
    /// The skill the handler was written for and what it declares: its own
    /// skill may declare no more.
    pub parent: Option<(String, Capabilities)>,
    /// It is the catalog's skill of its name, in place.
    in_catalog: bool,
    /// For a quarantine slot, the catalog skill it replaces: the gate runs
    /// that skill's cases, never the slot's own (a slot holds what a model
    /// or a download put there), and its cases read that skill's folder,
    /// where the handler will run.
    runs_as: Option<Skill>,
    /// It is in a quarantine slot.
    quarantined: bool,
}

impl Subject {
    /// The catalog's skill `name`, its provenance what the host recorded
    /// of its handler (see `Provenance::recorded`).
    pub fn catalog(runner: &Runner, name: &str) -> Result<Subject, GateError> {
        let (skill, artifact) = current_artifact(runner, name)?;
        Ok(Subject {
            provenance: Provenance::recorded(runner.store()?, &skill, &artifact)?,
            skill,
            parent: None,
            in_catalog: true,
            runs_as: None,
            quarantined: false,
        })
    }

    /// The skill in folder `dir`: a quarantine slot, an unpacked download,
    /// or a catalog skill's own folder (then it is that skill). A skill of
    /// the catalog with the same name elsewhere is its parent. Provenance
    /// `None`: generated when `dir` is in the quarantine or the forged
    /// root, else installed.
    pub fn folder(
        runner: &Runner,
        dir: &Path,
        provenance: Option<Provenance>,
    ) -> Result<Subject, GateError> {
        let paths = runner.paths();
        let dir = dir.canonicalize().map_err(|e| GateError::NoSkill {
            dir: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        let catalog = runner.catalog();
        if let Some(own) = catalog
            .skills()
            .iter()
            .find(|s| s.dir.canonicalize().is_ok_and(|d| d == dir))
        {
            let mut subject = Subject::catalog(runner, &own.name)?;
            if let Some(p) = provenance {
                subject.provenance = p;
            }
            return Ok(subject);
        }
        let mut skill = load_folder(&dir)?;
        let quarantine = paths
            .quarantine_dir()
            .canonicalize()
            .ok()
            .filter(|q| dir.starts_with(q));
        if let Some(q) = &quarantine
            && let Some(slot) = dir
                .strip_prefix(q)
                .ok()
                .and_then(|rest| rest.components().next())
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
            && slot != skill.name
        {
            return Err(GateError::WrongSlot {
                dir,
                slot,
                named: skill.name,
            });
        }
        let forged = paths
            .forged_root()
            .canonicalize()
            .is_ok_and(|f| dir.starts_with(f));
        let generated = quarantine.is_some() || forged;
        let provenance = provenance.unwrap_or(if generated {
            Provenance::Generated
        } else {
            Provenance::Installed
        });
        let parent_skill = catalog.get(&skill.name);
        // The source it will run as, which decides its trust and grants:
        // a slot's skill replaces its catalog skill; anything else not in
        // the catalog is judged as the least trusted, an installed skill.
        skill.source = match parent_skill {
            Some(p) if quarantine.is_some() => p.source,
            _ if forged => Source::Forged,
            _ => Source::Installed,
        };
        let parent = parent_skill.map(|p| (p.name.clone(), p.meta.skillhost.capabilities.clone()));
        Ok(Subject {
            skill,
            provenance,
            parent,
            in_catalog: false,
            runs_as: quarantine.as_ref().and(parent_skill.cloned()),
            quarantined: quarantine.is_some(),
        })
    }

    /// Whether it is the catalog's skill, in place.
    pub fn in_catalog(&self) -> bool {
        self.in_catalog
    }

    /// The skill whose `tests/cases.jsonl` the gate runs, and whether its
    /// cases may pin answers down (count towards automatic approval): its
    /// own; for a quarantine slot, its catalog skill's; for a slot with no
    /// catalog skill, its own, which pin nothing (whoever filled the slot
    /// wrote them for itself).
    fn shipped(&self) -> (&Skill, bool) {
        match &self.runs_as {
            Some(home) => (home, true),
            None => (&self.skill, !self.quarantined),
        }
    }

    /// The folder its cases run in: where it will run.
    fn home(&self) -> &Skill {
        self.runs_as.as_ref().unwrap_or(&self.skill)
    }
}

/// The one skill of folder `dir`.
fn load_folder(dir: &Path) -> Result<Skill, GateError> {
    let opts = LoadOptions {
        max_depth: 0,
        ..LoadOptions::default()
    };
    let catalog = Catalog::load(&[Root::new(dir.to_path_buf(), Source::Path)], &opts);
    match catalog.skills() {
        [one] => Ok(one.clone()),
        _ => Err(GateError::NoSkill {
            dir: dir.to_path_buf(),
            reason: match catalog.warnings().first() {
                Some(w) => w.to_string(),
                None => "no SKILL.md in it".to_owned(),
            },
        }),
    }
}

/// The static checks (artifact, world, imports, capabilities) of `bytes`
/// as the handler of a skill declaring `declared`, in the order the gate
/// reports them, and the inspection they read: the gate's view of
/// arbitrary bytes, for the fuzz targets (the `fuzzing` module).
#[doc(hidden)]
pub fn static_checks(
    bytes: &[u8],
    declared: &Capabilities,
    config: &gate_policy::GateConfig,
    max_bytes: usize,
    max_function_bytes: usize,
) -> (Vec<Verdict>, Option<sandbox::inspect::Inspection>) {
    let input = statics::Input {
        skill: "fuzzed",
        declared,
        parent: None,
        provenance: Provenance::Installed,
        config,
        max_bytes,
        max_function_bytes,
    };
    let (artifact, inspection) = statics::artifact(bytes, &input);
    let mut checks = vec![artifact];
    if let Some(i) = &inspection {
        checks.push(
            statics::world(i)
                .err()
                .unwrap_or_else(|| pass(Check::World, "exports `handle`")),
        );
        checks.push(statics::imports(i, &input));
        checks.push(statics::capabilities(&input));
    }
    (checks, inspection)
}

/// Where a handler for `skill` whose bytes hash to `artifact` waits for
/// the gate: `.skillhost/quarantine/SKILL/HASH/` (HASH: hex digits).
pub fn quarantine_slot(paths: &Paths, skill: &str, artifact: &str) -> Result<PathBuf, GateError> {
    if !crate::skill::is_spec_name(skill) {
        return Err(GateError::BadSlotName(skill.to_owned()));
    }
    let hex = artifact
        .strip_prefix("sha256:")
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
        .ok_or_else(|| GateError::BadArtifact(artifact.to_owned()))?;
    Ok(paths.quarantine_dir().join(skill).join(hex))
}

/// A gated handler: its report, stored, and where it stands now.
#[derive(Debug, Clone)]
pub struct Gated {
    pub report_id: i64,
    pub report: Report,
    /// For a catalog skill, its state once the approval policy applied;
    /// `None` for a folder outside the catalog (see [`admit`]).
    pub state: Option<HandlerState>,
    /// Whether its source needs an approval to run (`[gate] sources`).
    pub gated_at_run_time: bool,
}

/// Runs every check on `subject`, stores the report (and, in a
/// quarantine slot, writes it beside the artifact), and applies the
/// approval policy when the subject is the catalog's skill in place.
pub async fn gate(runner: &Runner, subject: &Subject) -> Result<Gated, GateError> {
    let (report_id, report) = check(runner, subject).await?;
    let state = if subject.in_catalog {
        Some(admit(runner, &subject.skill.name)?)
    } else {
        None
    };
    Ok(Gated {
        report_id,
        report,
        state,
        gated_at_run_time: runner.config().gate.gates_skill(&subject.skill),
    })
}

/// Gates the handler of a skill that `install` has just put in place;
/// none when it has no handler. `runner` must have been made after the
/// install, so that its catalog holds the skill. The report is stored and
/// the approval policy applied: by default an installed handler that
/// passed waits for `skillhost handler approve`.
pub async fn after_install(
    runner: &Runner,
    installed: &crate::install::Installed,
) -> Result<Option<Gated>, GateError> {
    if installed.handler.is_none() {
        return Ok(None);
    }
    let subject = Subject::folder(runner, &installed.dir, Some(Provenance::Installed))?;
    gate(runner, &subject).await.map(Some)
}

/// The approval policy, applied to the catalog's skill `name` as it is
/// now: enabled when its latest report for these bytes passed and
/// `[gate] approve` enables by itself; else where it stands.
pub fn admit(runner: &Runner, name: &str) -> Result<HandlerState, GateError> {
    let (skill, artifact) = current_artifact(runner, name)?;
    let store = runner.store()?;
    let pin = pin_now(&skill)?;
    let state = gate_policy::state(store, name, &artifact, &pin)?;
    if state != HandlerState::Passed {
        return Ok(state);
    }
    let Some(latest) = gate_policy::latest_report_for(store, name, &artifact)? else {
        return Ok(state);
    };
    let config = &runner.config().gate;
    if config.auto_approves(&latest.report) {
        gate_policy::approve(store, name, &artifact, &pin, ApprovedBy::Policy)?;
        return Ok(HandlerState::Enabled);
    }
    Ok(state)
}

/// The operator's approval of the catalog skill `name`'s handler as it is
/// now, on its latest report for these bytes, which must have passed.
pub fn approve(runner: &Runner, name: &str) -> Result<ApprovalRow, GateError> {
    let (skill, artifact) = current_artifact(runner, name)?;
    Ok(gate_policy::approve(
        runner.store()?,
        name,
        &artifact,
        &pin_now(&skill)?,
        ApprovedBy::Operator,
    )?)
}

/// Where the handler of catalog skill `name` stands, with its latest report.
#[derive(Debug, Clone)]
pub struct HandlerStatus {
    pub state: HandlerState,
    /// Why it does not run, when it does not.
    pub refusal: Option<String>,
    /// `sha256:` of the handler's bytes now.
    pub artifact: String,
    /// The latest report for these bytes, else the latest of the skill.
    pub report: Option<StoredReport>,
    pub gated_at_run_time: bool,
}

pub fn status(runner: &Runner, name: &str) -> Result<HandlerStatus, GateError> {
    let (skill, artifact) = current_artifact(runner, name)?;
    let store = runner.store()?;
    let pin = pin_now(&skill)?;
    let refusal = gate_policy::admission(store, name, &artifact, &pin).err();
    let state = gate_policy::state(store, name, &artifact, &pin)?;
    let report = match gate_policy::latest_report_for(store, name, &artifact)? {
        Some(r) => Some(r),
        None => gate_policy::latest_report(store, name)?,
    };
    Ok(HandlerStatus {
        state,
        refusal: refusal.map(|r| r.to_string()),
        artifact,
        report,
        gated_at_run_time: runner.config().gate.gates_skill(&skill),
    })
}

/// The pin of `skill`'s folder as it is now.
fn pin_now(skill: &Skill) -> Result<String, GateError> {
    skill_pin(skill).map_err(|source| GateError::Pin {
        skill: skill.name.clone(),
        source,
    })
}

/// The pin a report of `subject` holds: its folder as it is; for a
/// quarantine slot of a catalog skill, that skill's folder as it will be
/// once the slot's SKILL.md and handler are written into it (what a
/// caller that admits the slot's handler does).
fn subject_pin(
    runner: &Runner,
    subject: &Subject,
    skill_md: &[u8],
    handler: (&str, &[u8]),
) -> Result<String, GateError> {
    let skill = &subject.skill;
    let pin_err = |source| GateError::Pin {
        skill: skill.name.clone(),
        source,
    };
    let target = (!subject.in_catalog && in_quarantine(runner.paths(), &skill.dir))
        .then(|| runner.catalog().get(&skill.name).cloned())
        .flatten();
    let tree = match &target {
        Some(t) => t
            .tree_digest()
            .map_err(pin_err)?
            .with_files(&[(&t.file_name(), skill_md), handler]),
        None => skill.tree_digest().map_err(pin_err)?,
    };
    Ok(gate_policy::pin(&skill.version, tree.digest()))
}

/// The catalog skill `name` and the hash of its handler's bytes now.
fn current_artifact(runner: &Runner, name: &str) -> Result<(Skill, String), GateError> {
    let catalog = runner.catalog();
    let skill = catalog
        .get(name)
        .ok_or_else(|| GateError::UnknownSkill(name.to_owned()))?;
    let rel = skill
        .meta
        .skillhost
        .handler
        .as_deref()
        .ok_or_else(|| GateError::NoHandler(name.to_owned()))?;
    let bytes = skill
        .read_file(rel, MAX_READ_BYTES)
        .map_err(|source| GateError::Read {
            skill: name.to_owned(),
            source,
        })?;
    Ok((skill.clone(), sandbox::artifact_hash(&bytes)))
}

/// Runs every check on `subject` and stores the report; approvals are
/// left as they are. Returns the report's id and the report.
pub async fn check(runner: &Runner, subject: &Subject) -> Result<(i64, Report), GateError> {
    let started = Instant::now();
    let skill = &subject.skill;
    let rel = skill
        .meta
        .skillhost
        .handler
        .clone()
        .ok_or_else(|| GateError::NoHandler(skill.name.clone()))?;
    let (bytes, skill_md) = read_files(skill, &rel).await?;
    let pin = subject_pin(runner, subject, &skill_md, (&rel, &bytes))?;
    // What a run of the skill as it is would get: the gate's cases run
    // with exactly that.
    let effective = runner.effective_grants(skill, &pin);
    let artifact = sandbox::Artifact::new(Arc::from(bytes));
    let (checks, cases) = run_checks(runner, subject, &artifact, &effective).await?;
    let outcome = if checks.iter().all(|v| v.status == Status::Pass) {
        Outcome::Passed
    } else {
        Outcome::Rejected
    };
    let report = Report {
        skill: skill.name.clone(),
        folder: skill.dir.display().to_string(),
        handler: rel,
        provenance: subject.provenance,
        artifact: artifact.hash().to_owned(),
        size: artifact.len() as u64,
        capabilities_pin: pin,
        at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
        outcome,
        checks,
        cases,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        hand_only: [
            not_live_in_the_gate(&effective.capabilities),
            gate_policy::unpinned_state(skill),
        ]
        .concat(),
    };
    let id = store(runner, subject, &report)?;
    Ok((id, report))
}

/// The handler's bytes (`rel`) and the SKILL.md's, off the async threads.
async fn read_files(skill: &Skill, rel: &str) -> Result<(Vec<u8>, Vec<u8>), GateError> {
    let (owned, rel) = (skill.clone(), rel.to_owned());
    tokio::task::spawn_blocking(move || {
        let md = owned.read_file(&owned.file_name(), crate::exec::MAX_SKILL_MD_BYTES)?;
        Ok((owned.read_file(&rel, MAX_READ_BYTES)?, md))
    })
    .await
    .unwrap_or_else(|e| {
        Err(SkillFileError::Io {
            path: String::new(),
            source: std::io::Error::other(e),
        })
    })
    .map_err(|source| GateError::Read {
        skill: skill.name.clone(),
        source,
    })
}

/// Every check's verdict, in [`Check::ALL`] order, and the cases as they
/// ran: the static checks, then linking, then the cases, each stage only
/// when the one before passed.
async fn run_checks(
    runner: &Runner,
    subject: &Subject,
    artifact: &sandbox::Artifact,
    effective: &Effective,
) -> Result<(Vec<Verdict>, Vec<gate_policy::CaseRun>), GateError> {
    let config = runner.config();
    let gate = &config.gate;
    let kib = |v: u64| usize::try_from(v.saturating_mul(1 << 10)).unwrap_or(usize::MAX);
    let skill = &subject.skill;
    let bytes = artifact.bytes();
    let input = statics::Input {
        skill: &skill.name,
        declared: &skill.meta.skillhost.capabilities,
        parent: subject.parent.as_ref().map(|(n, c)| (n.as_str(), c)),
        provenance: subject.provenance,
        config: gate,
        max_bytes: kib(gate.max_artifact_kb)
            .min(kib(config.sandbox.max_component_mb.saturating_mul(1 << 10))),
        max_function_bytes: kib(config.sandbox.max_function_kb),
    };
    let mut checks = Vec::with_capacity(Check::ALL.len());
    let (artifact_verdict, inspection) = statics::artifact(bytes, &input);
    checks.push(artifact_verdict);
    let Some(inspection) = inspection else {
        skip_rest(
            &mut checks,
            "not run: the artifact is not a component that can be checked",
        );
        return Ok((checks, Vec::new()));
    };
    let world = statics::world(&inspection);
    let imports = statics::imports(&inspection, &input);
    let capabilities = statics::capabilities(&input);
    let static_ok =
        world.is_ok() && imports.status == Status::Pass && capabilities.status == Status::Pass;
    if !static_ok {
        checks.push(world.err().unwrap_or_else(|| {
            skipped(
                Check::World,
                "exports `handle`; its type is checked by linking, which waits for the static checks to pass",
            )
        }));
        checks.extend([imports, capabilities]);
        skip_rest(
            &mut checks,
            "not run: a static check failed; nothing was compiled or instantiated",
        );
        return Ok((checks, Vec::new()));
    }
    let sandbox = runner.sandbox().map_err(GateError::Sandbox)?;
    let handler = match sandbox.load_async_with(artifact.clone(), |_| {}).await {
        Ok(handler) => handler,
        Err(e) => {
            checks.extend([link_failure(&e), imports, capabilities]);
            skip_rest(&mut checks, "not run: the component did not link");
            return Ok((checks, Vec::new()));
        }
    };
    checks.extend([
        pass(
            Check::World,
            "exports `handle` of the skillhost:skill handler world (its type checked by linking against wit/skill.wit)",
        ),
        imports,
        capabilities,
    ]);
    let (verdicts, cases) = run_cases(runner, subject, effective, sandbox.clone(), handler).await?;
    checks.extend(verdicts);
    Ok((checks, cases))
}

/// The cases of `skill`'s `tests/cases.jsonl`, added to `all`, and the
/// lines that are not cases, added to `invalid`.
fn shipped_cases(skill: &Skill, all: &mut Vec<Case>, invalid: &mut Vec<String>) {
    match skill.read_file(CASES_FILE, cases::MAX_CASES_BYTES) {
        Ok(bytes) => {
            let (shipped, errors) = parse_cases_file(&String::from_utf8_lossy(&bytes));
            all.extend(shipped);
            invalid.extend(errors);
        }
        Err(SkillFileError::NotFound { .. }) => {}
        Err(e) => invalid.push(format!("{CASES_FILE}: {e}")),
    }
}

/// The folders a case sees: those of a run of the skill where the handler
/// will run (for a slot, its catalog skill's), its own files protected too.
fn case_roots(runner: &Runner, subject: &Subject) -> FileRoots {
    let handler = subject.skill.meta.skillhost.handler.as_deref();
    let home = subject.home();
    let mut skill_files = vec![home.path.clone()];
    for s in [home, &subject.skill] {
        skill_files.push(s.dir.join(handler.unwrap_or_default()));
    }
    skill_files.push(subject.skill.path.clone());
    skill_files.sort();
    skill_files.dedup();
    FileRoots {
        skill_dir: home.dir.clone(),
        workspace: runner.paths().workspace.clone(),
        skill_files,
        control: Arc::new(runner.paths().control_paths()),
    }
}

/// Stores `report` (and, in a quarantine slot, writes it beside the
/// artifact); its id.
fn store(runner: &Runner, subject: &Subject, report: &Report) -> Result<i64, GateError> {
    let id = gate_policy::store_report(runner.store()?, report)?;
    let dir = &subject.skill.dir;
    if !subject.in_catalog && in_quarantine(runner.paths(), dir) {
        let path = dir.join(QUARANTINE_REPORT);
        let json = serde_json::to_vec_pretty(report).unwrap_or_default();
        crate::fsutil::write_atomic(&path, &json)
            .map_err(|source| GateError::Write { path, source })?;
    }
    tracing::info!(
        skill = %report.skill,
        artifact = %report.artifact,
        outcome = ?report.outcome,
        "gate report {id}"
    );
    Ok(id)
}

fn in_quarantine(paths: &Paths, dir: &Path) -> bool {
    paths
        .quarantine_dir()
        .canonicalize()
        .is_ok_and(|q| dir.canonicalize().is_ok_and(|d| d.starts_with(q)))
}

/// Marks every check not yet decided as skipped.
fn skip_rest(checks: &mut Vec<Verdict>, why: &str) {
    for check in Check::ALL.iter().skip(checks.len()) {
        checks.push(skipped(*check, why));
    }
}

/// Check 2's verdict when the sandbox would not load the component.
fn link_failure(e: &SandboxError) -> Verdict {
    let class = match e {
        SandboxError::WrongWorld(_) | SandboxError::NotAHandler(_) => FindingClass::WrongWorld,
        _ => FindingClass::DoesNotCompile,
    };
    fail(Check::World, class, Chain(e).to_string())
}

/// What a case may use of what the skill has at run time (`effective`):
/// all of it, except what would reach outside the gate before anyone
/// approved the handler: no HTTP, and granted writes only as reads (see
/// `run`). What is held back is named by [`not_live_in_the_gate`].
fn case_capabilities(effective: &Capabilities) -> Capabilities {
    let mut c = effective.clone();
    c.files.read.append(&mut c.files.write);
    c.http = Default::default();
    c
}

/// What the skill has at run time that its cases cannot make as a run
/// does: a handler could answer the cases and do otherwise with these, so
/// a pass is approved by hand only. An allowlist: reading granted files
/// is the one grant a case makes exactly as a run (the same folders), so
/// everything else granted is named here, a capability added later too.
/// Empty when the cases ran the same call.
fn not_live_in_the_gate(effective: &Capabilities) -> Vec<String> {
    let mut beyond = effective.clone();
    beyond.files.read.clear();
    crate::grants::CAPABILITIES
        .iter()
        .filter_map(|c| {
            let what = c.describe(&beyond);
            (!what.is_empty()).then(|| held_back(c.key(), &what))
        })
        .collect()
}

/// Why a case cannot use capability `key` (granted as `what`) as a run does.
fn held_back(key: &str, what: &[String]) -> String {
    match key {
        "http" => "it is granted HTTP, which no case can use".to_owned(),
        "files" => "it is granted writes, which its cases make as reads".to_owned(),
        "tools" => "it is granted host tools, which no case can call".to_owned(),
        "llm" => "it is granted the model, which no case can ask".to_owned(),
        "kv" => "it is granted the key-value store: a run's store holds what no case starts from, and a handler can change its answers after any number of calls".to_owned(),
        other => format!(
            "it is granted `{other}` ({}), which no case has as a run does",
            what.join(", ")
        ),
    }
}

/// Checks 5 to 7 and the cases as they ran.
async fn run_cases(
    runner: &Runner,
    subject: &Subject,
    effective: &Effective,
    sandbox: Arc<sandbox::Sandbox>,
    handler: sandbox::Handler,
) -> Result<([Verdict; 3], Vec<gate_policy::CaseRun>), GateError> {
    let skill = &subject.skill;
    let config = runner.config();
    let gate = &config.gate;
    let store = runner.store()?;
    let runs = store.recent_runs_of(&skill.name, gate.max_recorded_cases.saturating_mul(2))?;
    let (mut all, left_out) =
        cases::recorded_cases(&runs, run::recorded_compare(skill), gate.max_recorded_cases);
    let mut invalid = Vec::new();
    let (shipped_from, pins) = subject.shipped();
    let mut unpinned = Vec::new();
    shipped_cases(shipped_from, &mut unpinned, &mut invalid);
    if pins {
        all.append(&mut unpinned);
    }
    let roots = case_roots(runner, subject);
    let validators = runner.validators(skill);
    let bench = Arc::new(run::Bench {
        sandbox,
        handler,
        skill: skill.clone(),
        capabilities: case_capabilities(&effective.capabilities),
        // A run's limits: a handler must not be able to tell the gate
        // from a run by how much memory or time it gets.
        limits: Limits::resolve(
            &skill.meta.skillhost.limits,
            &effective.limits,
            &config.limits,
        ),
        roots,
        validators,
        seed: rand::random(),
        kv_quota_bytes: config.limits.kv_quota_kb.saturating_mul(1024),
    });
    let (mut ran, could_not) = bench.clone().run_all(&all).await;
    invalid.extend(could_not);
    if !unpinned.is_empty() {
        let (more, could_not) = bench.run_all(&unpinned).await;
        ran.extend(more.into_iter().map(run::Ran::pinning_nothing));
        invalid.extend(could_not);
    }
    let verdicts = run::verdicts(&ran, &invalid, left_out);
    Ok((verdicts, ran.into_iter().map(|r| r.run).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_run_with_what_a_run_has_less_what_would_reach_outside() {
        let mut granted = Capabilities::default();
        granted.files.read = vec!["workspace:notes".into()];
        granted.files.write = vec!["workspace:out".into()];
        granted.kv = true;
        let c = case_capabilities(&granted);
        assert_eq!(c.files.read, ["workspace:notes", "workspace:out"]);
        assert!(c.files.write.is_empty() && c.kv);
        let held = not_live_in_the_gate(&granted);
        assert_eq!(held.len(), 2, "{held:?}");
        assert!(held.contains(&"it is granted writes, which its cases make as reads".to_owned()));
        assert!(
            held.iter().any(|h| h.contains("key-value store")),
            "{held:?}"
        );
        // Reading files is made as a run makes it: nothing held back.
        let mut reads = granted.clone();
        reads.files.write.clear();
        reads.kv = false;
        assert!(not_live_in_the_gate(&reads).is_empty());
        // Nothing granted: nothing live, and the cases ran the same call.
        let none = Capabilities::default();
        assert_eq!(case_capabilities(&none), none);
        assert!(not_live_in_the_gate(&none).is_empty());
        let reach = Capabilities {
            http: vec!["api.example.com".into()],
            tools: vec!["read_file".into()],
            llm: true,
            ..Capabilities::default()
        };
        assert!(case_capabilities(&reach).http.is_empty());
        assert_eq!(not_live_in_the_gate(&reach).len(), 3);
    }

    #[test]
    fn quarantine_slots_are_named_by_skill_and_hash_only() {
        let paths = Paths {
            home: "/h".into(),
            workspace: "/w".into(),
            bundled: None,
            extra_skills: Vec::new(),
            cache_override: None,
            workspace_origin: Default::default(),
        };
        let slot = quarantine_slot(&paths, "notes-brief", "sha256:00ff").expect("slot");
        assert_eq!(slot, Path::new("/w/.skillhost/quarantine/notes-brief/00ff"));
        assert!(quarantine_slot(&paths, "s", "sha256:../../x").is_err());
        assert!(quarantine_slot(&paths, "s", "sha256:").is_err());
        assert!(quarantine_slot(&paths, "../evil", "sha256:00").is_err());
    }
}
