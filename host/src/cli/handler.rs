//! `skillhost handler ...`: look inside handler components, and scaffold
//! new handlers.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::builder::PossibleValue;
use clap::{Args, Subcommand, ValueEnum};

use super::Ctx;
use crate::sandbox::inspect::inspect;
use crate::scaffold::{Lang, scaffold};
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
    /// Scaffold a skill folder NAME with a handler in LANG that builds
    /// (`./build.sh`) and runs as generated.
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
        /// skillhost checkout this binary was built from, if it still exists,
        /// else the crates.io package `skillhost-guest`.
        #[arg(long, value_name = "PATH")]
        guest_sdk: Option<PathBuf>,
    },
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
        HandlerCommand::New {
            name,
            lang,
            dir,
            guest_sdk,
        } => {
            let created = scaffold(&name, lang, &dir, guest_sdk.as_deref())?;
            outln!("created {} ({} handler)", created.display(), lang.display())?;
            outln!("next: {}/build.sh", created.display())?;
            outln!(
                "then: skillhost --skills {} run \"say hello\" --skill {name}",
                dir.display()
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
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
        outln!("component: {}", path.display())?;
        outln!("size:      {} bytes", report.size)?;
        outln!(
            "language:  {}",
            report.language.as_deref().unwrap_or("unknown")
        )?;
        outln!("exports:")?;
        for e in &report.exports {
            outln!("  {e}")?;
        }
        outln!("imports:")?;
        for i in &report.imports {
            outln!("  {i}")?;
        }
        if !report.producers.is_empty() {
            outln!("producers:")?;
            for p in &report.producers {
                outln!("  {p}")?;
            }
        }
        if report.fits_handler_world() {
            outln!("handler world: fits")?;
        } else {
            outln!("handler world: does not fit")?;
            for p in &report.problems {
                outln!("  - {p}")?;
            }
        }
    }
    Ok(if report.fits_handler_world() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
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
