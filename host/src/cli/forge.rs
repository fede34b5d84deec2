//! `skillhost forge ...`: skills grown from recorded runs; output only.

use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::Ctx;
use crate::config::Config;
use crate::forge::mine::{self, MineReport};

#[derive(Debug, Args)]
pub struct ForgeArgs {
    #[command(subcommand)]
    command: ForgeCommand,
}

#[derive(Debug, Subcommand)]
enum ForgeCommand {
    /// Find tool sequences that recur across recorded runs and succeed:
    /// candidates for new skills. Settings: [forge.mine] in skillhost.toml.
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
}

pub fn run(args: ForgeArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.command {
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
            let store = crate::exec::open_store(&ctx.paths)?;
            let report = mine::mine(&store, &config)?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&report)?)?;
            } else {
                print_report(&report)?;
            }
            if !dry_run && !report.candidates.is_empty() {
                // TODO(forge-core merge): turn each candidate into a
                // `forge::create::Draft` (tools → pipeline steps, shapes →
                // context_fields, run_ids → runs) and write it with
                // `forge::create::write` through a `forge::SkillWriter`
                // (its `Neighbours::last_used` can read
                // `Store::skill_usage`). Until then nothing is written.
                tracing::info!(
                    "writing candidates as skills comes with the forge writer; nothing was written (use --dry-run to only list them)"
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
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
