//! `skillhost handler ...`: look inside handler components, gate them,
//! show their reports and approve them, and scaffold new handlers.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::builder::PossibleValue;
use clap::{Args, Subcommand, ValueEnum};

use super::Ctx;
use crate::gate;
use crate::gate_policy::{HandlerState, Outcome, Provenance, Report, Status};
use crate::sandbox::inspect::{Inspection, inspect};
use crate::toolchain::scaffold::{Lang, scaffold};
use crate::types::Chain;

#[derive(Debug, Args)]
pub struct HandlerArgs {
    #[command(subcommand)]
    command: HandlerCommand,
}

#[derive(Debug, Subcommand)]
enum HandlerCommand {
    /// Print a component's imports, exports, size and language, and whether
    /// it fits the handler world.
    Inspect {
        /// A `.wasm` component.
        path: PathBuf,
        /// Also compile and link it against the host (slower for big components).
        #[arg(long)]
        link: bool,
        #[arg(long)]
        json: bool,
    },
    /// Run the validation gate on a skill's handler (a skill's name, or the
    /// path of a skill folder, e.g. a quarantine slot): every check, one
    /// verdict each, stored as the skill's latest report. Exits 1 when the
    /// handler is rejected.
    Gate {
        /// A skill name, or a skill folder.
        skill: String,
        /// Judge it as machine-written (`generated`) or written by a person
        /// (`installed`); default: from where the skill is.
        #[arg(long, value_enum)]
        provenance: Option<ProvenanceArg>,
        #[arg(long)]
        json: bool,
    },
    /// Print the latest gate report of a skill's handler and where the
    /// handler stands now (quarantined, passed, enabled).
    Report {
        skill: String,
        #[arg(long)]
        json: bool,
    },
    /// Enable a skill's handler that passed the gate, pinned to its bytes
    /// and that report: a changed handler is disabled until it passes again.
    Approve { skill: String },
    /// Build the handler of a skill folder (Rust, JavaScript, Python or C,
    /// told by its files) into the component its SKILL.md names. Progress
    /// goes to stderr.
    Build {
        /// The skill folder (default: the current one).
        #[arg(value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Scaffold a skill folder NAME with a handler in LANG that builds
    /// (`skillhost handler build`, or its `./build.sh`) and runs as generated.
    New {
        /// The skill's name: lowercase letters, digits and hyphens.
        name: String,
        /// The handler's language.
        #[arg(long, value_enum)]
        lang: Lang,
        /// Folder to create the skill folder in (default: the current one).
        #[arg(long, value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// (Rust) The guest SDK crate to depend on, by path. Default: the
        /// SDK this binary carries, written to $SKILLHOST_HOME/sdk/.
        #[arg(long, value_name = "PATH")]
        guest_sdk: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ProvenanceArg {
    Generated,
    Installed,
}

/// `--lang` takes each language's flag name.
impl ValueEnum for Lang {
    fn value_variants<'a>() -> &'a [Self] {
        Lang::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.flag()))
    }
}

pub fn run(args: HandlerArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.command {
        HandlerCommand::Inspect { path, link, json } => inspect_cmd(&path, link, json, ctx),
        HandlerCommand::Gate {
            skill,
            provenance,
            json,
        } => gate_cmd(&skill, provenance, json, ctx),
        HandlerCommand::Report { skill, json } => report_cmd(&skill, json, ctx),
        HandlerCommand::Approve { skill } => {
            let runner = ctx.runner()?;
            let row = gate::approve(&runner, &skill)?;
            outln!(
                "approved the handler of `{skill}` ({}, report {}): it runs while its bytes and every file of its folder stay as they are, until a gate rejects it",
                row.artifact,
                row.report_id
            )?;
            Ok(ExitCode::SUCCESS)
        }
        HandlerCommand::Build { dir } => {
            let env = crate::toolchain::ToolEnv::from_env(&ctx.paths.home);
            let built = crate::toolchain::build(&env, &dir, &mut |line| {
                tracing::info!("{line}");
            })?;
            outln!("built {} ({} bytes)", built.output.display(), built.size)?;
            Ok(ExitCode::SUCCESS)
        }
        HandlerCommand::New {
            name,
            lang,
            dir,
            guest_sdk,
        } => new_cmd(&name, lang, &dir, guest_sdk.as_deref(), ctx),
    }
}

/// `handler new`: the skill folder scaffolded, and the next two commands.
fn new_cmd(
    name: &str,
    lang: Lang,
    dir: &Path,
    guest_sdk: Option<&Path>,
    ctx: &Ctx,
) -> anyhow::Result<ExitCode> {
    let created = scaffold(name, lang, dir, guest_sdk, &ctx.paths.home)?;
    outln!("created {} ({} handler)", created.display(), lang.display())?;
    outln!(
        "next: skillhost handler build {} (or its ./build.sh)",
        created.display()
    )?;
    outln!(
        "then: skillhost --skills {} run \"say hello\" --skill {name}",
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn gate_cmd(
    skill: &str,
    provenance: Option<ProvenanceArg>,
    json: bool,
    ctx: &Ctx,
) -> anyhow::Result<ExitCode> {
    let runner = ctx.runner()?;
    let provenance = provenance.map(|p| match p {
        ProvenanceArg::Generated => Provenance::Generated,
        ProvenanceArg::Installed => Provenance::Installed,
    });
    let subject = gate_subject(&runner, skill, provenance)?;
    let gated = super::runtime()?.block_on(gate::gate(&runner, &subject))?;
    runner.flush();
    if json {
        let v = serde_json::json!({
            "report_id": gated.report_id,
            "state": gated.state,
            "gated_at_run_time": gated.gated_at_run_time,
            "report": gated.report,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        print_report(gated.report_id, &gated.report)?;
        print_gated_state(&runner, &gated)?;
    }
    Ok(if gated.report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The catalog skill named `skill`, else the skill folder at that path.
fn gate_subject(
    runner: &crate::exec::Runner,
    skill: &str,
    provenance: Option<Provenance>,
) -> anyhow::Result<gate::Subject> {
    let by_name = runner.catalog().get(skill).is_some() && !skill.contains(['/', '\\']);
    if by_name {
        let mut s = gate::Subject::catalog(runner, skill)?;
        if let Some(p) = provenance {
            s.provenance = p;
        }
        Ok(s)
    } else if Path::new(skill).is_dir() {
        Ok(gate::Subject::folder(runner, Path::new(skill), provenance)?)
    } else {
        anyhow::bail!(
            "no skill named `{skill}` and no skill folder at {skill}; see `skillhost skills list`"
        );
    }
}

/// Where the gated handler stands now, and what makes it run.
fn print_gated_state(runner: &crate::exec::Runner, gated: &gate::Gated) -> anyhow::Result<()> {
    let name = &gated.report.skill;
    match gated.state {
        Some(state) if !gated.gated_at_run_time => outln!(
            "state: {} (skills of its source run their handler without approval: [gate] sources)",
            state_name(state)
        )?,
        Some(HandlerState::Enabled) => outln!("state: enabled")?,
        Some(HandlerState::Passed) => outln!(
            "state: passed; it runs once approved: `skillhost handler approve {name}` ({})",
            runner.config().gate.why_manual(&gated.report)
        )?,
        Some(HandlerState::Quarantined) if !gated.report.passed() => outln!(
            "state: quarantined (last gate failed): it does not run, and an approval of these bytes is revoked, until it passes again"
        )?,
        Some(HandlerState::Quarantined) => {
            outln!("state: quarantined; it does not run until it passes")?
        }
        None if gated.report.passed() => outln!(
            "state: passed, outside the catalog: move the folder in, then `skillhost handler approve {name}` (or the `[gate] approve` policy enables it)"
        )?,
        None => outln!("state: quarantined; the artifact stays where it is, with its report")?,
    }
    Ok(())
}

fn report_cmd(skill: &str, json: bool, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let runner = ctx.runner()?;
    let status = gate::status(&runner, skill)?;
    if json {
        let v = serde_json::json!({
            "skill": skill,
            "state": status.state,
            "refusal": status.refusal,
            "artifact": status.artifact,
            "gated_at_run_time": status.gated_at_run_time,
            "report_id": status.report.as_ref().map(|r| r.id),
            "report": status.report.as_ref().map(|r| &r.report),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    match &status.report {
        Some(r) => {
            print_report(r.id, &r.report)?;
            if r.report.artifact != status.artifact {
                outln!(
                    "note: this report is for {}; the handler is now {}",
                    r.report.artifact,
                    status.artifact
                )?;
            }
        }
        None => outln!("no gate report for `{skill}` yet: `skillhost handler gate {skill}`")?,
    }
    print_status_state(&status)?;
    Ok(ExitCode::SUCCESS)
}

/// Where the handler stands, and why it does not run when it does not.
fn print_status_state(status: &gate::HandlerStatus) -> anyhow::Result<()> {
    let state = state_name(status.state);
    let last_failed = status
        .report
        .as_ref()
        .is_some_and(|r| r.report.artifact == status.artifact && !r.report.passed());
    match (&status.refusal, status.gated_at_run_time) {
        (Some(why), true) if last_failed => {
            outln!("state: {state} (last gate failed), it does not run: {why}")?
        }
        (Some(why), true) => outln!("state: {state}, it does not run: {why}")?,
        (_, false) => outln!(
            "state: {state} (its source is not gated: it runs without approval, [gate] sources)"
        )?,
        (None, true) => outln!("state: {state}")?,
    }
    Ok(())
}

fn state_name(state: HandlerState) -> &'static str {
    match state {
        HandlerState::Enabled => "enabled",
        HandlerState::Passed => "passed",
        HandlerState::Quarantined => "quarantined",
    }
}

/// One check's verdict, and its particulars.
fn print_verdict(v: &crate::gate_policy::Verdict) -> std::io::Result<()> {
    let status = match v.status {
        Status::Pass => "pass",
        Status::Fail => "FAIL",
        Status::Skipped => "skip",
    };
    let class = v.class.map(|c| format!("{c:?}: ")).unwrap_or_default();
    outln!(
        "  {status}  {:<13} {class}{}",
        v.check.name(),
        v.explanation
    )?;
    for d in &v.details {
        outln!("          - {d}")?;
    }
    Ok(())
}

/// A report as lines: the artifact, then one verdict per check.
fn print_report(id: i64, r: &Report) -> std::io::Result<()> {
    let at = crate::types::UtcTime::from_unix(r.at);
    outln!(
        "gate report {id} for `{}`: {} ({}, {} bytes, {}), {:04}-{:02}-{:02} {:02}:{:02} UTC, {} ms",
        r.skill,
        r.handler,
        r.artifact,
        r.size,
        r.provenance,
        at.year,
        at.month,
        at.day,
        at.hour,
        at.minute,
        r.duration_ms
    )?;
    outln!("  folder: {}", r.folder)?;
    for v in &r.checks {
        print_verdict(v)?;
    }
    outln!(
        "{}",
        match r.outcome {
            Outcome::Passed => "passed",
            Outcome::Rejected => "rejected",
        }
    )
}

fn inspect_cmd(path: &Path, link: bool, json: bool, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut report = inspect(&bytes).with_context(|| path.display().to_string())?;
    if link && report.fits_handler_world() {
        let sandbox = ctx.runner()?.sandbox()?;
        if let Err(e) = sandbox.load(&bytes) {
            report.problems.push(Chain(&e).to_string());
        }
    }
    if json {
        let mut v = serde_json::to_value(&report)?;
        v["fits_handler_world"] = report.fits_handler_world().into();
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        print_inspection(path, &report)?;
    }
    Ok(if report.fits_handler_world() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What the component is, exports and imports, and whether (and why
/// not) it fits the handler world.
fn print_inspection(path: &Path, report: &Inspection) -> anyhow::Result<()> {
    outln!("component: {}", path.display())?;
    outln!("size:      {} bytes", report.size)?;
    outln!(
        "language:  {}",
        report.language.as_deref().unwrap_or("unknown")
    )?;
    print_list("exports:", &report.exports)?;
    print_list("imports:", &report.imports)?;
    if !report.producers.is_empty() {
        print_list("producers:", &report.producers)?;
    }
    if report.fits_handler_world() {
        outln!("handler world: fits")?;
    } else {
        outln!("handler world: does not fit")?;
        for p in &report.problems {
            outln!("  - {p}")?;
        }
    }
    Ok(())
}

fn print_list(title: &str, items: &[String]) -> anyhow::Result<()> {
    outln!("{title}")?;
    for i in items {
        outln!("  {i}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lang_takes_each_language_flag_name() {
        for &lang in Lang::ALL {
            assert_eq!(Lang::from_str(lang.flag(), false), Ok(lang));
        }
        assert!(Lang::from_str("cobol", false).is_err());
    }
}
