//! `skillhost skills install|uninstall`: parse, call `install`, print.

use std::process::ExitCode;

use anyhow::Context as _;

use super::Ctx;
use crate::audit::Severity;
use crate::config::Config;
use crate::gate::{self, Gated};
use crate::gate_policy::HandlerState;
use crate::grants::describe;
use crate::install::{self, InstallOptions, InstallSource, Installed};

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// A skill folder, a .tar.gz or .zip file, or a registry reference
    /// OWNER/SKILL[@VERSION] (`clawhub:OWNER/SKILL` when a path has that name).
    pub source: String,
    /// Install under this name instead of the skill's own (the SKILL.md's
    /// `name` is set to it).
    #[arg(long, value_name = "N")]
    pub name: Option<String>,
    /// Replace an installed skill of the same name.
    #[arg(long)]
    pub force: bool,
    /// The registry's base URL (default: `[install] registry`, else ClawHub).
    /// Only a registry named here may be on this machine (or plain http
    /// there); its redirects, and a registry from skillhost.toml, must be
    /// public.
    #[arg(long, value_name = "URL")]
    pub registry: Option<String>,
    /// Install a skill the registry flags as suspicious, or whose text the
    /// skill audit flags high (`curl … | bash`, a base64 payload, a
    /// password-protected archive, …; see `skillhost skills audit`). The
    /// findings are still printed and kept in the install record. Read the
    /// skill first. The catalog still holds a flagged skill back from
    /// models until `[audit] allow` in skillhost.toml names it.
    #[arg(long)]
    pub allow_suspicious: bool,
    /// Print the install report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    /// The installed skill to remove.
    pub name: String,
}

pub fn install(args: InstallArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let config = Config::load(&ctx.paths)?.install;
    let source = InstallSource::parse(&args.source, &ctx.paths.workspace)?;
    let options = InstallOptions {
        name: args.name,
        force: args.force,
        allow_suspicious: args.allow_suspicious,
        registry: args.registry,
        // A registry from the files, not the command line, must be public.
        config_from_files: true,
    };
    let installed = super::runtime()
        .context("cannot start the async runtime")?
        .block_on(install::install(&ctx.paths, &source, &options, &config))
        .with_context(|| format!("cannot install {}", args.source))?;
    let gated = gate_handler(&installed, ctx)?;
    if args.json {
        print_json(&installed, gated.as_ref())?;
    } else {
        print_installed(&installed, gated.as_ref())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Its handler goes through the gate before it can run; the runner is
/// made now so that its catalog holds the new skill.
fn gate_handler(installed: &Installed, ctx: &Ctx) -> anyhow::Result<Option<Gated>> {
    if installed.handler.is_none() {
        return Ok(None);
    }
    let runner = ctx.runner()?;
    let gated = super::runtime()
        .context("cannot start the async runtime")?
        .block_on(gate::after_install(&runner, installed))
        .with_context(|| format!("cannot gate the handler of `{}`", installed.name))?;
    runner.flush();
    Ok(gated)
}

/// The install report as JSON, with the gate's under `gate`.
fn print_json(installed: &Installed, gated: Option<&Gated>) -> anyhow::Result<()> {
    let mut v = serde_json::to_value(installed)?;
    if let (Some(g), Some(obj)) = (gated, v.as_object_mut()) {
        obj.insert(
            "gate".into(),
            serde_json::json!({
                "report_id": g.report_id,
                "passed": g.report.passed(),
                "state": g.state,
                "report": g.report,
            }),
        );
    }
    outln!("{}", serde_json::to_string_pretty(&v)?)?;
    Ok(())
}

fn print_installed(i: &Installed, gated: Option<&Gated>) -> anyhow::Result<()> {
    for w in &i.warnings {
        tracing::warn!("{}: {w}", i.name);
    }
    if let Some(old) = &i.renamed_from {
        tracing::info!(
            "its SKILL.md named it `{old}`; it is installed as `{}`",
            i.name
        );
    }
    let replaced = if i.replaced.is_some() {
        " (replacing the one installed before)"
    } else {
        ""
    };
    outln!("installed `{}` from {}{replaced}", i.name, i.origin)?;
    outln!("  folder:      {}", i.dir.display())?;
    outln!("  files:       {} ({} bytes)", i.files, i.bytes)?;
    outln!("  handler:     {}", i.handler.as_deref().unwrap_or("none"))?;
    outln!("  fingerprint: {}", i.fingerprint)?;
    print_audit(i)?;
    outln!("  declares:    {}", describe(&i.declared))?;
    outln!(
        "  granted:     nothing (`skillhost skills grant {}` grants what it declares)",
        i.name
    )?;
    if let Some(g) = gated {
        print_gate(&i.name, g)?;
    }
    if let Some(s) = &i.shadowed_by {
        tracing::warn!(
            "a {} skill of the same name ({}) takes precedence over it",
            s.source,
            s.path.display()
        );
    }
    Ok(())
}

/// The audit's findings, and whether they hold the skill back.
fn print_audit(i: &Installed) -> anyhow::Result<()> {
    if i.audit.is_empty() {
        outln!("  audit:       no findings")?;
        return Ok(());
    }
    let high = i
        .audit
        .iter()
        .filter(|f| f.severity == Severity::High)
        .count();
    outln!(
        "  audit:       {} finding(s), {high} high (recorded in {})",
        i.audit.len(),
        i.record.display()
    )?;
    outln!("{}", install::list_findings(&i.audit))?;
    if high > 0 {
        outln!(
            "  held back:   the catalog keeps it from models until `[audit] allow = [\"{}\"]` is in skillhost.toml",
            i.name
        )?;
    }
    Ok(())
}

/// What the gate made of the handler of skill `n`, and what runs.
fn print_gate(n: &str, g: &Gated) -> anyhow::Result<()> {
    let ungated =
        "installed skills are not gated here ([gate] sources): its handler runs without approval";
    if g.report.passed() {
        let state = match g.state {
            _ if !g.gated_at_run_time => ungated.to_owned(),
            Some(HandlerState::Enabled) => "enabled".to_owned(),
            _ => format!(
                "it does not run until approved: `skillhost handler approve {n}` (an approval of the version it replaced does not carry over)"
            ),
        };
        outln!(
            "  gate:        passed ({} case(s)); {state}",
            g.report.cases_passed()
        )?;
    } else if !g.gated_at_run_time {
        outln!(
            "  gate:        rejected: {}; {ungated}, rejected or not (`skillhost handler report {n}`)",
            g.report.first_failure().unwrap_or_default()
        )?;
    } else {
        outln!(
            "  gate:        rejected: {}; its handler is disabled and does not run, any approval of these bytes revoked (`skillhost handler report {n}`)",
            g.report.first_failure().unwrap_or_default()
        )?;
    }
    Ok(())
}

pub fn uninstall(args: UninstallArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let removed = install::uninstall(&ctx.paths, &args.name)?;
    outln!("uninstalled `{}` ({})", removed.name, removed.dir.display())?;
    Ok(ExitCode::SUCCESS)
}
