//! `skillhost skills install|uninstall`: parse, call `install`, print.

use std::process::ExitCode;

use anyhow::Context as _;

use super::Ctx;
use crate::config::Config;
use crate::grants::describe;
use crate::install::{self, InstallOptions, InstallSource};

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
    #[arg(long, value_name = "URL")]
    pub registry: Option<String>,
    /// Install a skill the registry flags as suspicious.
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
    };
    let installed = super::runtime()
        .context("cannot start the async runtime")?
        .block_on(install::install(&ctx.paths, &source, &options, &config))
        .with_context(|| format!("cannot install {}", args.source))?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&installed)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let i = &installed;
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
    outln!("  declares:    {}", describe(&i.declared))?;
    outln!(
        "  granted:     nothing (`skillhost skills grant {}` grants what it declares)",
        i.name
    )?;
    if let Some(s) = &i.shadowed_by {
        tracing::warn!(
            "a {} skill of the same name ({}) takes precedence over it",
            s.source,
            s.path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn uninstall(args: UninstallArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let removed = install::uninstall(&ctx.paths, &args.name)?;
    outln!("uninstalled `{}` ({})", removed.name, removed.dir.display())?;
    Ok(ExitCode::SUCCESS)
}
