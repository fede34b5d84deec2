//! `skillhost handler ...`: look inside handler components.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use super::Ctx;
use crate::sandbox::inspect::inspect;

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
}

pub fn run(args: HandlerArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.command {
        HandlerCommand::Inspect { path, link, json } => {
            let bytes =
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            let mut report = inspect(&bytes).with_context(|| path.display().to_string())?;
            if link && report.fits_handler_world() {
                let sandbox = ctx.runner()?.sandbox()?;
                if let Err(e) = sandbox.load(&bytes) {
                    report.problems.push(e.to_string());
                }
            }
            if json {
                let mut v = serde_json::to_value(&report)?;
                v["fits_handler_world"] = report.fits_handler_world().into();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!("component: {}", path.display());
                println!("size:      {} bytes", report.size);
                println!(
                    "language:  {}",
                    report.language.as_deref().unwrap_or("unknown")
                );
                println!("exports:");
                for e in &report.exports {
                    println!("  {e}");
                }
                println!("imports:");
                for i in &report.imports {
                    println!("  {i}");
                }
                if !report.producers.is_empty() {
                    println!("producers:");
                    for p in &report.producers {
                        println!("  {p}");
                    }
                }
                if report.fits_handler_world() {
                    println!("handler world: fits");
                } else {
                    println!("handler world: does not fit");
                    for p in &report.problems {
                        println!("  - {p}");
                    }
                }
            }
            Ok(if report.fits_handler_world() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}
