//! `skillhost eval forge`: before vs after forging (see `eval::forge`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use super::Ctx;
use crate::eval::forge::{self, ArmSummary, Options, Report, SeedResult, Stat};

pub struct Settings {
    pub seeds: u64,
    pub train: usize,
    pub eval: usize,
    pub tasks: Option<PathBuf>,
    pub json: bool,
}

pub fn run(s: Settings, model: &super::run::ModelArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let eval_tasks = match &s.tasks {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            Some(forge::parse_tasks(&text).with_context(|| format!("in {}", p.display()))?)
        }
        None => None,
    };
    let config = crate::app::config_with_overrides(&ctx.paths, &model.overrides())?;
    let real_model = if model.model.is_some() {
        config.model.build()?
    } else {
        None
    };
    let opts = Options {
        seeds: s.seeds,
        train: s.train,
        eval: s.eval,
        eval_tasks,
        model: real_model,
    };
    let rt = super::runtime()?;
    let report = rt.block_on(forge::run(&ctx.paths, &config, &opts))?;
    if s.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        print_report(&report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The report as text: the run, each seed's arms, the summary table and
/// the comparison.
fn print_report(report: &Report) -> anyhow::Result<()> {
    outln!(
        "eval forge: scenario {}, model {}, {} training and {} evaluation tasks ({}), {} seeds ({:.1} s)",
        report.scenario,
        report.model,
        report.train,
        report.eval,
        report.tasks,
        report.seeds.len(),
        report.seconds
    )?;
    for seed in &report.seeds {
        print_seed(seed)?;
    }
    print_summary(&report.summary)?;
    let c = &report.comparison;
    outln!()?;
    outln!(
        "after/before: model calls x{:.2}, tool steps {:.0}% fewer, success {:+.1} points",
        c.model_calls_ratio,
        c.tool_steps_reduction * 100.0,
        c.success_change * 100.0
    )?;
    let stray: u64 = report.summary.iter().map(|a| a.calls_not_offered).sum();
    if stray > 0 {
        outln!("warning: the model called {stray} tool(s) it was not offered")?;
    }
    Ok(())
}

/// One seed: its forged skills and each arm's success and model calls.
fn print_seed(seed: &SeedResult) -> anyhow::Result<()> {
    let arms: Vec<String> = seed
        .arms
        .iter()
        .map(|a| {
            format!(
                "{} {:.0}% {:.2} calls",
                a.arm,
                a.success_rate * 100.0,
                a.model_calls_per_task
            )
        })
        .collect();
    outln!(
        "seed {:>2}: {} forged skill(s); {}",
        seed.seed,
        seed.forged_skills.len(),
        arms.join(", ")
    )?;
    Ok(())
}

/// Each arm's means with their 95% intervals.
fn print_summary(summary: &[ArmSummary]) -> anyhow::Result<()> {
    outln!()?;
    outln!(
        "{:<7} {:>24} {:>20} {:>20} {:>20} {:>20}",
        "arm",
        "success (95% interval)",
        "model calls/task",
        "tool steps/task",
        "executed calls/task",
        "ms/task"
    )?;
    let cell = |s: &Stat, pct: bool| {
        let k = if pct { 100.0 } else { 1.0 };
        format!(
            "{:.2} ({:.2}-{:.2})",
            s.mean * k,
            s.ci95.0 * k,
            s.ci95.1 * k
        )
    };
    for a in summary {
        outln!(
            "{:<7} {:>24} {:>20} {:>20} {:>20} {:>20}",
            a.arm,
            format!("{}%", cell(&a.success, true)),
            cell(&a.model_calls_per_task, false),
            cell(&a.tool_steps_per_task, false),
            cell(&a.executed_calls_per_task, false),
            cell(&a.ms_per_task, false)
        )?;
    }
    Ok(())
}
