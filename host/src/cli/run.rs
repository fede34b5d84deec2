//! `skillhost run "TASK"`: prints the answer, or the classified failure.

use std::process::ExitCode;
use std::time::Instant;

use clap::Args;

use super::Ctx;
use crate::exec::{RunRequest, context};

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
    /// Print the whole outcome (output, skill, tier, timings, failure) as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: RunArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let runner = ctx.runner()?;
    let started = Instant::now();
    let request = RunRequest {
        task: args.task,
        skill: args.skill,
        ..RunRequest::default()
    };
    let (skill, selected_by) = runner.select(&request)?;
    // Context values are typed by the chosen skill's declared fields.
    let given = context::parse_pairs(&args.context, &skill.meta.context_fields)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome =
        rt.block_on(runner.run_skill(skill, selected_by, &request.task, &given, started))?;

    if args.json {
        println!("{}", serde_json::to_string_pretty(&outcome)?);
    } else {
        for n in &outcome.notices {
            eprintln!("note: {n}");
        }
        if let Some(o) = &outcome.output {
            print!("{}", o.body);
            if !o.body.ends_with('\n') {
                println!();
            }
        }
    }
    match &outcome.failure {
        None => Ok(ExitCode::SUCCESS),
        Some(f) => {
            if !args.json {
                eprintln!(
                    "error: skill `{}` failed: {}: {}",
                    outcome.skill, f.class, f.message
                );
            }
            Ok(ExitCode::FAILURE)
        }
    }
}
