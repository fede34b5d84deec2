//! `skillhost run "TASK"`: prints the answer, or the classified failure.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use indicatif::ProgressBar;

use super::Ctx;
use crate::exec::{
    Progress, ProgressSink, RunOutcome, RunRequest, Runner, Via, context, with_progress,
};
// A spinner has no state a panic could leave half-done.
use crate::types::lock;

/// Longest a run waits, after answering, for its handler's optimised code
/// to reach the disk cache (a 12 MB component takes 10-20 s here).
const OPTIMISE_WAIT: Duration = Duration::from_secs(120);

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What to do, in words.
    pub task: String,
    /// Run this skill instead of choosing one from the task.
    #[arg(long, value_name = "NAME")]
    pub skill: Option<String>,
    /// A context value, KEY=VALUE (repeatable); typed by the skill's
    /// declared context fields.
    #[arg(long = "context", short = 'c', value_name = "KEY=VALUE")]
    pub context: Vec<String>,
    /// Print the whole outcome (output, skill, tier, timings, trajectory,
    /// failure) as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// Model settings over `[model]` in skillhost.toml.
#[derive(Debug, Clone, Default, Args)]
pub struct ModelArgs {
    /// PROVIDER:MODEL, e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5,
    /// scripted:replies.json (replays a file; for tests and offline demos).
    #[arg(long, value_name = "PROVIDER:MODEL", env = "SKILLHOST_MODEL")]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible or Anthropic server.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Name of the environment variable that holds the API key (never the key).
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Most model turns before the run fails (at least 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: Option<u32>,
}

impl ModelArgs {
    pub fn overrides(&self) -> crate::app::ModelOverrides {
        crate::app::ModelOverrides {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key_env: self.api_key_env.clone(),
            max_steps: self.max_steps,
        }
    }
}

pub fn run(args: RunArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let runner = ctx.runner_with_model(&args.model)?;
    let request = RunRequest {
        task: args.task,
        skill: args.skill,
        // Typed by the chosen skill's declared fields.
        context: context::split_pairs(&args.context)?,
    };
    let rt = super::runtime()?;
    let show = super::progress::shown(args.json);
    let spinner = Arc::new(Mutex::new(None));
    let outcome = rt.block_on(with_progress(
        compile_progress(show, Arc::clone(&spinner)),
        runner.run_via(&request, Via::Cli),
    ));
    if let Some(s) = lock(&spinner).take() {
        s.finish_and_clear();
    }
    let outcome = outcome?;
    print_outcome(&outcome, args.json)?;
    wait_optimised(&runner, show);
    Ok(exit_code(&outcome, args.json))
}

/// Success, or failure (logged unless the outcome was printed as JSON).
fn exit_code(outcome: &RunOutcome, json: bool) -> ExitCode {
    let Some(f) = &outcome.failure else {
        return ExitCode::SUCCESS;
    };
    if !json {
        tracing::error!(
            "skill `{}` failed: {}: {}",
            outcome.skill,
            f.class,
            f.message
        );
    }
    ExitCode::FAILURE
}

/// The compile of a handler in no cache is most of a first run: a
/// spinner (put in `spinner`) shows it, cleared when the run ends.
fn compile_progress(show: bool, spinner: Arc<Mutex<Option<ProgressBar>>>) -> ProgressSink {
    Arc::new(move |p| match p {
        Progress::Compiling { skill, bytes, tier } if show => {
            let message = format!(
                "compiling the handler of `{skill}` ({:.1} MB, {tier:?} code) for its first run",
                bytes as f64 / 1e6
            );
            *lock(&spinner) = Some(super::progress::spinner(true, message));
        }
        Progress::Compiling { .. } => {}
    })
}

/// The outcome as JSON, or its notices (logged) and output body.
fn print_outcome(outcome: &RunOutcome, json: bool) -> anyhow::Result<()> {
    if json {
        outln!("{}", serde_json::to_string_pretty(outcome)?)?;
        return Ok(());
    }
    for n in &outcome.notices {
        tracing::info!("note: {n}");
    }
    if let Some(o) = &outcome.output {
        out!("{}", o.body)?;
        if !o.body.ends_with('\n') {
            outln!()?;
        }
    }
    Ok(())
}

/// A first run answered with Winch's code; stay until Cranelift's is
/// in the disk cache, so the next run starts from optimised code.
fn wait_optimised(runner: &Runner, show: bool) {
    if let Some(sandbox) = runner.sandbox_if_made()
        && !sandbox.wait_optimised(Duration::ZERO)
    {
        let spinner =
            super::progress::spinner(show, "optimising the handler's code for later runs".into());
        sandbox.wait_optimised(OPTIMISE_WAIT);
        spinner.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    #[test]
    fn max_steps_below_one_is_refused_naming_the_flag() {
        let e = Cli::try_parse_from(["run", "t", "--max-steps", "0"])
            .err()
            .expect("0 steps is refused");
        let msg = e.to_string();
        assert!(
            msg.contains("--max-steps") && msg.contains("0 is not in 1.."),
            "{msg}"
        );
        let ok = Cli::try_parse_from(["run", "t", "--max-steps", "1"]).expect("1 parses");
        assert_eq!(ok.run.model.max_steps, Some(1));
    }
}
