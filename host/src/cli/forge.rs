//! `skillhost forge ...` and `skillhost skills history|rollback|improve`:
//! skills grown from recorded runs, what the forge did to a skill,
//! restoring a saved version, asking the model for an improvement now.
//! Output only; the work is in `forge`.

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand};

use super::Ctx;
use crate::config::Config;
use crate::forge::after_runs::{MinedOutcome, write_mined};
use crate::forge::history::{self, EventKind};
use crate::forge::mine::{self, MineReport};
use crate::forge::{CreateOutcome, ImproveOutcome, SkillWriter};
use crate::skill::Skill;

#[derive(Debug, Args)]
pub struct ForgeArgs {
    #[command(subcommand)]
    command: ForgeCommand,
}

#[derive(Debug, Subcommand)]
enum ForgeCommand {
    /// Find tool sequences that recur across recorded runs and succeed,
    /// and write each as a forged skill (unless --dry-run). Settings:
    /// [forge.mine] and [forge.create] in skillhost.toml.
    Mine {
        /// List the candidates only.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
        /// Runs a sequence must occur in (default 5).
        #[arg(long, value_name = "N")]
        min_support: Option<u64>,
        /// Share of those runs that succeeded, 0 to 1 (default 0.8).
        #[arg(long, value_name = "SHARE")]
        min_success: Option<f64>,
        /// Longest sequence counted, 2 to 8 (default 6).
        #[arg(long, value_name = "N")]
        max_len: Option<usize>,
        /// Most candidates listed (default 50).
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
    },
    /// Have the model write a handler for SKILL: the host builds it in
    /// .skillhost/quarantine (no network, time limit) and gates it; a
    /// failed build or gate goes back to the model ([forge.handler]
    /// attempts). A handler that passes is added to the skill, which then
    /// answers on tier 1. Exits 1 when no handler passed.
    Handler {
        skill: String,
        /// The handler's language (default [forge.handler] lang, rust).
        #[arg(long, value_enum)]
        lang: Option<LangArg>,
        #[command(flatten)]
        model: super::run::ModelArgs,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum LangArg {
    Rust,
    Js,
}

impl LangArg {
    fn handler_lang(self) -> crate::forge::handler::HandlerLang {
        use crate::forge::handler::HandlerLang;
        match self {
            LangArg::Rust => HandlerLang::Rust,
            LangArg::Js => HandlerLang::Js,
        }
    }
}

pub fn run(args: ForgeArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.command {
        ForgeCommand::Handler {
            skill,
            lang,
            model,
            json,
        } => handler(ctx, &skill, lang, &model, json),
        ForgeCommand::Mine {
            dry_run,
            json,
            min_support,
            min_success,
            max_len,
            limit,
        } => {
            let mut config = Config::load(&ctx.paths)?.forge.mine;
            config.min_support = min_support.unwrap_or(config.min_support);
            config.min_success = min_success.unwrap_or(config.min_success);
            config.max_len = max_len.unwrap_or(config.max_len);
            config.max_candidates = limit.unwrap_or(config.max_candidates);
            let store = ctx.store()?;
            let report = mine::mine(store.as_ref(), &config)?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&report)?)?;
            } else {
                print_report(&report)?;
            }
            if !dry_run && !report.candidates.is_empty() {
                write_candidates(ctx, store.as_ref(), &report, json)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Writes the candidates as forged skills and says what became of each.
fn write_candidates(
    ctx: &Ctx,
    store: &dyn crate::store::RunStore,
    report: &MineReport,
    json: bool,
) -> anyhow::Result<()> {
    let config = Config::load(&ctx.paths)?;
    let catalog = ctx.catalog();
    let outcomes = write_mined(
        &config.forge_inputs(&ctx.paths),
        &catalog,
        store,
        &report.candidates,
    );
    for (c, outcome) in report.candidates.iter().zip(outcomes) {
        let seq = c.tools.join(" → ");
        let line = match outcome {
            MinedOutcome::Created(CreateOutcome::Written { name, path, .. }) => {
                format!("forged `{name}` ({seq}) at {}", path.display())
            }
            MinedOutcome::Created(CreateOutcome::NearDuplicate { of, similarity }) => {
                format!("skipped {seq}: near-duplicate of `{of}` ({similarity:.2})")
            }
            MinedOutcome::Skipped(why) => format!("skipped {seq}: {why}"),
        };
        // Stdout carries the JSON report then; what was written goes to the log.
        if json {
            tracing::info!("{line}");
        } else {
            outln!("{line}")?;
        }
    }
    Ok(())
}

fn print_report(report: &MineReport) -> std::io::Result<()> {
    if report.candidates.is_empty() {
        outln!(
            "no candidates in {} run(s) with tool calls ({} tool steps)",
            report.runs,
            report.steps
        )?;
        return Ok(());
    }
    outln!(
        "{:>7}  {:>7}  {:>11}  tools",
        "support",
        "success",
        "steps saved"
    )?;
    for c in &report.candidates {
        outln!(
            "{:>7}  {:>6.0}%  {:>11}  {}",
            c.support,
            c.success_rate * 100.0,
            c.steps_saved,
            c.tools.join(" → ")
        )?;
    }
    outln!(
        "{} candidate(s) from {} run(s) with tool calls ({} tool steps)",
        report.candidates.len(),
        report.runs,
        report.steps
    )?;
    if let Some(bound) = report.undercount_bound {
        tracing::warn!(
            "more distinct sequences than [forge.mine] max_patterns: supports may be short by up to {bound} runs"
        );
    }
    Ok(())
}

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    name: String,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub struct RollbackArgs {
    name: String,
    /// The saved version to restore (see `skills history`); default: the newest.
    #[arg(value_name = "VERSION")]
    number: Option<u32>,
}

#[derive(Debug, clap::Args)]
pub struct ImproveArgs {
    name: String,
    #[command(flatten)]
    model: super::run::ModelArgs,
}

fn skill<'c>(catalog: &'c crate::skill::Catalog, name: &str) -> anyhow::Result<&'c Skill> {
    catalog.get(name).with_context(|| {
        format!("no skill named '{name}'; run `skillhost skills list` to see the available skills")
    })
}

pub fn history(args: HistoryArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let writer = SkillWriter::new(&ctx.paths);
    let forge_dir = writer.forge_dir();
    let versions = history::versions(&forge_dir, &args.name)?;
    let events = history::events(&forge_dir, &args.name);
    let catalog = ctx.catalog();
    let current = catalog.get(&args.name);
    if args.json {
        let v = serde_json::json!({
            "skill": args.name,
            "current": current.map(|s| s.version.clone()),
            "versions": versions,
            "events": events,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    match current {
        Some(s) => outln!("{} ({}): current {}", s.name, s.source, s.version)?,
        None => outln!("{}: not in the catalog now", args.name)?,
    }
    print_versions(&args.name, &versions)?;
    print_events(&events)?;
    Ok(ExitCode::SUCCESS)
}

/// The saved versions of `name`, and how to restore one.
fn print_versions(name: &str, versions: &[history::Version]) -> anyhow::Result<()> {
    if versions.is_empty() {
        outln!("no saved versions")?;
        return Ok(());
    }
    outln!("saved versions (`skillhost skills rollback {name} N` restores one):")?;
    for v in versions {
        outln!(
            "  {:>3}  {}  {} bytes  saved {}",
            v.version,
            v.hash,
            v.bytes,
            crate::forge::rfc3339(v.saved_at)
        )?;
    }
    Ok(())
}

/// The skill's history: when, what, why.
fn print_events(events: &[history::Event]) -> anyhow::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    outln!("events:")?;
    for e in events {
        let kind = serde_json::to_value(e.kind)
            .ok()
            .and_then(|k| k.as_str().map(str::to_owned))
            .unwrap_or_default();
        let saved = e
            .version
            .map(|v| format!(" (previous content saved as version {v})"))
            .unwrap_or_default();
        outln!(
            "  {}  {kind:<11} {}{saved}",
            crate::forge::rfc3339(e.at),
            e.reason
        )?;
    }
    Ok(())
}

pub fn rollback(args: RollbackArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let catalog = ctx.catalog();
    let skill = skill(&catalog, &args.name)?;
    let writer = SkillWriter::new(&ctx.paths);
    let r = history::rollback(&writer, skill, args.number)?;
    outln!(
        "restored version {} of `{}` in {} (what it replaced is saved as version {})",
        r.restored,
        r.skill,
        r.path.display(),
        r.saved_as
    )?;
    grant_note(ctx, &r.skill)?;
    Ok(ExitCode::SUCCESS)
}

pub fn improve(args: ImproveArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let catalog = ctx.catalog();
    let skill = skill(&catalog, &args.name)?;
    let (config, provider) = ctx.config_with_model(&args.model)?;
    let Some(provider) = provider else {
        bail!("no model configured: set [model] in skillhost.toml or pass --model PROVIDER:MODEL");
    };
    let runs = recent_successes(ctx, &skill.name)?;
    let writer = SkillWriter::new(&ctx.paths);
    let outcome = super::runtime()?.block_on(crate::forge::improve::improve(
        &writer,
        skill,
        &runs,
        provider.as_ref(),
        &config.forge.improve,
    ))?;
    match outcome {
        ImproveOutcome::Cooldown => {
            print_cooldown(&writer, &skill.name, config.forge.improve.cooldown_secs)?;
        }
        ImproveOutcome::Improved {
            reason,
            saved_version,
        } => {
            outln!(
                "improved `{}`: {reason} (the previous content is saved as version {saved_version})",
                skill.name
            )?;
            grant_note(ctx, &skill.name)?;
        }
        ImproveOutcome::Rejected { reason } => {
            outln!("proposal refused, `{}` unchanged: {reason}", skill.name)?;
            return Ok(ExitCode::FAILURE);
        }
        ImproveOutcome::Declined { reason } => outln!("no change to `{}`: {reason}", skill.name)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Up to three of the skill's successful runs among its latest 20, whole.
fn recent_successes(ctx: &Ctx, skill: &str) -> anyhow::Result<Vec<crate::store::RunRecord>> {
    let store = ctx.store()?;
    let mut runs = Vec::new();
    for r in store.recent_runs_of(skill, 20)? {
        if r.success
            && let Some(full) = store.get_run(r.id)?
        {
            runs.push(full);
        }
        if runs.len() == 3 {
            break;
        }
    }
    Ok(runs)
}

/// Improving `skill` waits: when it was last tried.
fn print_cooldown(writer: &SkillWriter, skill: &str, cooldown_secs: u64) -> anyhow::Result<()> {
    outln!(
        "`{skill}` was last tried at {}; one attempt per [forge.improve] cooldown_secs = {cooldown_secs}",
        last_attempt(writer, skill),
    )?;
    Ok(())
}

/// When improving `skill` was last tried (RFC 3339), or empty.
fn last_attempt(writer: &SkillWriter, skill: &str) -> String {
    history::events(&writer.forge_dir(), skill)
        .iter()
        .rev()
        .find(|e| {
            matches!(
                e.kind,
                EventKind::Improved | EventKind::Rejected | EventKind::Declined
            )
        })
        .map(|e| crate::forge::rfc3339(e.at))
        .unwrap_or_default()
}

/// A changed SKILL.md has a new fingerprint: a grant pinned to the old one
/// stops applying. Says so when the skill has such a grant.
fn grant_note(ctx: &Ctx, name: &str) -> anyhow::Result<()> {
    let config = crate::config::Config::load(&ctx.paths)?;
    let Some(grant) = config.grants.get(name) else {
        return Ok(());
    };
    let catalog = ctx.catalog();
    let Some(skill) = catalog.get(name) else {
        return Ok(());
    };
    let now = skill.pin()?;
    if grant.pin != now {
        outln!(
            "note: `{name}` has a new fingerprint ({now}); its grant, pinned to {}, no longer applies: it runs with what its source is trusted with until you run `skillhost skills grant {name}` again",
            grant.pin
        )?;
    }
    Ok(())
}

fn handler(
    ctx: &Ctx,
    skill: &str,
    lang: Option<LangArg>,
    model: &super::run::ModelArgs,
    json: bool,
) -> anyhow::Result<ExitCode> {
    use crate::gate::author;
    let (_, provider) = ctx.config_with_model(model)?;
    let Some(provider) = provider else {
        bail!("`forge handler` needs a model: configure [model] or pass --model PROVIDER:MODEL");
    };
    let runner = ctx.runner_with_model(model)?;
    let lang = lang.map(LangArg::handler_lang);
    let before = runner.catalog().get(skill).and_then(|s| s.pin().ok());
    let authored = super::runtime()?
        .block_on(author::author(&runner, provider.as_ref(), skill, lang))
        .with_context(|| format!("forge handler {skill}"))?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&authored)?)?;
    } else {
        print_attempts(&authored.attempts)?;
    }
    let Some(admission) = &authored.admitted else {
        if !json {
            outln!(
                "no handler for `{skill}`: it keeps answering as before; the reports: `skillhost handler report {skill}`"
            )?;
        }
        return Ok(ExitCode::from(1));
    };
    if !json {
        print_admission(ctx, skill, admission, before.is_some())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per attempt at a handler, and the slot it was built in.
fn print_attempts(attempts: &[crate::gate::author::Attempt]) -> anyhow::Result<()> {
    use crate::gate::author::AttemptOutcome;
    for a in attempts {
        let built = a
            .build_ms
            .map(|ms| format!(", built in {ms} ms"))
            .unwrap_or_default();
        let line = match &a.outcome {
            AttemptOutcome::Refused { reason } => format!("refused before building: {reason}"),
            AttemptOutcome::BuildFailed { reason } | AttemptOutcome::TimedOut { reason } => {
                reason.clone()
            }
            AttemptOutcome::Rejected { report_id, reason } => {
                format!("rejected by the gate (report {report_id}{built}): {reason}")
            }
            AttemptOutcome::Passed { report_id } => {
                format!("passed the gate (report {report_id}{built})")
            }
        };
        outln!("attempt {}: {line}", a.number)?;
        if let Some(slot) = &a.slot {
            outln!("  slot: {}", slot.display())?;
        }
    }
    Ok(())
}

/// The handler added, its state, and whether the skill's grant (pinned
/// to the fingerprint before, when it had one) still applies.
fn print_admission(
    ctx: &Ctx,
    skill: &str,
    admission: &crate::gate::author::Admission,
    had_fingerprint: bool,
) -> anyhow::Result<()> {
    outln!(
        "added {} ({}) to `{skill}`; the previous SKILL.md is version {} (`skillhost skills rollback {skill}` undoes it)",
        admission.admitted.handler.display(),
        admission.artifact,
        admission.admitted.saved_version
    )?;
    match admission.state {
        crate::gate_policy::HandlerState::Enabled => {
            outln!("state: enabled; `{skill}` now answers on tier 1")?
        }
        _ => outln!("state: passed; it runs once approved: `skillhost handler approve {skill}`")?,
    }
    let config = Config::load(&ctx.paths)?;
    if had_fingerprint && config.grants.contains_key(skill) {
        outln!(
            "note: the skill's fingerprint changed (new SKILL.md and handler), so the operator's grant for `{skill}`, pinned to the old one, no longer applies: review it with `skillhost skills grant {skill}`"
        )?;
    }
    Ok(())
}
