//! `skillhost doctor` and `skillhost toolchain install LANG`.

use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::Ctx;
use crate::toolchain::scaffold::Lang;
use crate::toolchain::{self, LangReport, ToolEnv};

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Only this language; exits 1 when it cannot build handlers.
    #[arg(value_enum)]
    lang: Option<Lang>,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct ToolchainArgs {
    #[command(subcommand)]
    command: ToolchainCommand,
}

#[derive(Debug, Subcommand)]
enum ToolchainCommand {
    /// Install what LANG's handlers need to build: componentize-js (npm) and
    /// componentize-py (a venv) into $SKILLHOST_HOME/tools at pinned
    /// versions, the Rust wasm32-wasip2 target (rustup) and bubblewrap, the
    /// box `forge handler` builds in (a Debian package, as root), the C
    /// toolchain (Debian packages, as root).
    Install {
        #[arg(value_enum)]
        lang: Lang,
    },
}

pub fn doctor(args: DoctorArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let env = ToolEnv::from_env(&ctx.paths.home);
    let reports: Vec<LangReport> = match args.lang {
        Some(lang) => vec![toolchain::report(&env, lang)],
        None => toolchain::doctor(&env),
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&reports)?)?;
    } else {
        for r in &reports {
            print_report(r)?;
        }
        outln!(
            "tools are looked up in {}, then PATH",
            env.tool_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    let failed = args.lang.is_some() && reports.iter().any(|r| !r.ready());
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_report(r: &LangReport) -> std::io::Result<()> {
    let state = if r.ready() { "ready" } else { "missing tools" };
    outln!("{}: {state}", r.lang.display())?;
    for c in &r.checks {
        match &c.found {
            Some(found) => outln!("  ok       {}: {found}", c.what)?,
            None => outln!("  MISSING  {}", c.what)?,
        }
    }
    if let Some(cmd) = &r.install {
        outln!("  install: {cmd}")?;
    }
    Ok(())
}

pub fn run(args: ToolchainArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.command {
        ToolchainCommand::Install { lang } => {
            let env = ToolEnv::from_env(&ctx.paths.home);
            let report = toolchain::install(&env, lang, &mut |line| {
                tracing::info!("{line}");
            })?;
            print_report(&report)?;
            Ok(if report.ready() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}
