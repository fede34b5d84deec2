//! `skillhost runs|rules|learn|eval`: the learning loop at the terminal.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use super::Ctx;
use crate::eval::ablation;
use crate::learn;
use crate::learn::book::RulesAt;
use crate::learn::edit::{RuleEdit, RuleEditError, edit_rule_at};
use crate::store::SharedStore;

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    command: RunsCommand,
}

#[derive(Debug, Subcommand)]
enum RunsCommand {
    /// The most recent runs.
    List {
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// One run with its steps and the rules applied.
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Records your verdict on a run: `--failed` makes it a failure for
    /// learning (of `--class`, else its own class, else UserReported), so a
    /// mistake no validator caught can become a rule; `--ok` makes it no
    /// failure. The run as recorded is kept.
    Mark {
        id: i64,
        #[arg(long, conflicts_with = "ok", required_unless_present = "ok")]
        failed: bool,
        #[arg(long)]
        ok: bool,
        /// The failure class, e.g. TimezoneError (patterns are by class).
        #[arg(long, requires = "failed")]
        class: Option<String>,
        /// What was wrong (or right), in your words.
        #[arg(long)]
        note: Option<String>,
    },
    /// Every run as JSON Lines (to stdout, or --out FILE).
    Export {
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Debug, Subcommand)]
enum RulesCommand {
    /// Every rule with its kind, scope, confidence and state.
    List {
        #[arg(long)]
        json: bool,
    },
    /// One rule in full.
    Show {
        id: String,
    },
    Disable {
        id: String,
    },
    Enable {
        id: String,
    },
    /// Out of force, and kept as a tombstone so that learning does not add
    /// it again.
    Remove {
        id: String,
    },
    /// Undoes `remove`.
    Restore {
        id: String,
    },
    /// Which rules fired on a run and what they changed.
    Explain {
        run_id: i64,
    },
}

#[derive(Debug, Args)]
pub struct LearnArgs {
    #[arg(long)]
    json: bool,
    /// Do not ask the model for rules for classes no pattern knows.
    #[arg(long)]
    no_propose: bool,
    #[command(flatten)]
    model: super::run::ModelArgs,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(subcommand)]
    command: EvalCommand,
}

#[derive(Debug, Subcommand)]
enum EvalCommand {
    /// The skill text audit: recall on malicious skills and false
    /// positives on benign ones (high findings); exit 1 below target.
    Audit(super::audit::EvalAuditArgs),
    /// Baseline, retry-only, feedback-retry, prevention rules, all learned
    /// rules, and rules with feedback, on the same tasks and seeds, swept
    /// over the simulated model's compliance; success by the validators
    /// and by ground truth.
    Ablation(AblationArgs),
    /// Before vs after forging: the same note-brief tasks and seeds, with
    /// success by ground truth, model calls and tool steps per task.
    #[cfg(feature = "forge")]
    Forge {
        #[arg(long, default_value_t = 10)]
        seeds: u64,
        /// Training tasks per seed (the runs skills are forged from).
        #[arg(long, default_value_t = 8)]
        train: usize,
        /// Generated evaluation tasks per seed.
        #[arg(long, default_value_t = 12)]
        eval: usize,
        /// Evaluation tasks as JSON Lines of {"task": ..., "source": "q3-sales"}
        /// (replaces the generated ones; see docs/forge.md).
        #[arg(long, value_name = "FILE")]
        tasks: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        model: super::run::ModelArgs,
    },
}

#[derive(Debug, Args)]
pub struct AblationArgs {
    /// The scenario: `email` (rules from the shipped patterns) or
    /// `support` (no pattern knows its classes: rules from model proposals
    /// and `runs mark` feedback).
    #[arg(long, default_value = "email")]
    scenario: String,
    /// Training tasks per seed (default: 50 for email, 150 for support).
    #[arg(long)]
    train: Option<usize>,
    #[arg(long, default_value_t = 50)]
    eval: usize,
    #[arg(long, default_value_t = 10)]
    seeds: u64,
    /// The first seed: `--first-seed 2 --seeds 1` runs seed 2 alone, as a
    /// longer run would (a real model's run split into processes).
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    /// The arms to run (default: all): baseline, retry-only,
    /// feedback-retry, prevention, all-rules, rules+feedback.
    #[arg(long, value_delimiter = ',')]
    arms: Vec<String>,
    /// Evaluation tasks: JSON Lines with ground-truth labels, or plain
    /// lines (no ground truth); replaces the generated ones. Repeatable:
    /// the files' tasks in order. See docs/learning-eval.md.
    #[arg(long, value_name = "FILE")]
    tasks: Vec<PathBuf>,
    /// Training tasks, in the same format (replaces the generated ones).
    #[arg(long, value_name = "FILE")]
    train_tasks: Option<PathBuf>,
    /// The simulated model's compliances to sweep (ignored with --model).
    #[arg(long, value_delimiter = ',', default_values_t = ablation::COMPLIANCE)]
    compliance: Vec<f64>,
    /// Share of the simulated reviewer's marks that are wrong (support).
    #[arg(long, default_value_t = ablation::MARK_NOISE)]
    mark_noise: f64,
    /// Learn without the shipped pattern library: rules come only from
    /// model proposals and the reviewer's marks (what learning itself adds).
    #[arg(long)]
    no_shipped_patterns: bool,
    /// Write every labelled answer, judged, to FILE (JSON Lines: seed,
    /// arm, task, answer, validated, the checker's misses), for reading
    /// and labelling by hand.
    #[arg(long, value_name = "FILE")]
    answers: Option<PathBuf>,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    model: super::run::ModelArgs,
}

fn rules_file(ctx: &Ctx) -> PathBuf {
    learn::rules_path(&ctx.paths.state_dir())
}

pub fn runs(args: RunsArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let store = ctx.store()?;
    match args.command {
        RunsCommand::List { limit, json } => list_runs(store.as_ref(), limit, json)?,
        RunsCommand::Show { id, json } => show_run(store.as_ref(), id, json)?,
        RunsCommand::Mark {
            id,
            failed,
            ok: _,
            class,
            note,
        } => mark_run(store.as_ref(), id, failed, class, note)?,
        RunsCommand::Export { out } => export_runs(store.as_ref(), out)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `runs list`.
fn list_runs(store: &dyn crate::store::RunStore, limit: usize, json: bool) -> anyhow::Result<()> {
    let runs = store.list_runs(limit)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&runs)?)?;
        return Ok(());
    }
    if runs.is_empty() {
        outln!("no runs recorded yet; each `skillhost run` and MCP tool call records one")?;
        return Ok(());
    }
    outln!(
        "{:>6}  {:<7} {:<20} {:<9} {:<18} task",
        "id",
        "result",
        "skill",
        "tier",
        "failure"
    )?;
    for r in runs {
        let task: String = r.task.chars().take(60).collect();
        outln!(
            "{:>6}  {:<7} {:<20} {:<9} {:<18} {task}",
            r.id,
            if r.success { "ok" } else { "failed" },
            r.skill,
            r.tier,
            r.failure_class.unwrap_or_default()
        )?;
    }
    Ok(())
}

/// `runs mark ID --ok|--failed`: the user's verdict on a run.
fn mark_run(
    store: &dyn crate::store::RunStore,
    id: i64,
    failed: bool,
    class: Option<String>,
    note: Option<String>,
) -> anyhow::Result<()> {
    let verdict = crate::store::Verdict {
        ok: !failed,
        class,
        note,
        at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
    };
    if !store.mark_run(id, &verdict)? {
        anyhow::bail!("no run {id}; see `skillhost runs list`");
    }
    if verdict.ok {
        outln!("marked run {id} ok: learning does not count it as a failure")?;
    } else {
        let class = verdict
            .class
            .or(store.get_run(id)?.and_then(|r| r.failure_class))
            .unwrap_or_else(|| crate::store::USER_REPORTED.to_owned());
        outln!(
            "marked run {id} failed ({class}): the next learning cycle (`skillhost learn`) counts it"
        )?;
    }
    Ok(())
}

/// `runs show ID`.
fn show_run(store: &dyn crate::store::RunStore, id: i64, json: bool) -> anyhow::Result<()> {
    let run = store
        .get_run(id)?
        .with_context(|| format!("no run {id}; see `skillhost runs list`"))?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&run)?)?;
        return Ok(());
    }
    outln!(
        "run {} of skill {} ({}), tier {}",
        run.id,
        run.skill,
        run.skill_version,
        run.tier
    )?;
    outln!("task: {}", run.task)?;
    outln!("context: {}", run.context)?;
    match (&run.failure_class, &run.failure_message) {
        (Some(c), m) => outln!("failed: {c}: {}", m.clone().unwrap_or_default())?,
        _ => outln!("succeeded")?,
    }
    if let Some(v) = store.verdict(id)? {
        print_verdict(v)?;
    }
    print_run_steps(&run)?;
    if let Some(o) = &run.output {
        outln!("output:\n{o}")?;
    }
    Ok(())
}

/// How a person marked the run.
fn print_verdict(v: crate::store::Verdict) -> anyhow::Result<()> {
    let judged = match (v.ok, &v.class) {
        (true, _) => "ok".to_owned(),
        (false, Some(c)) => format!("failed ({c})"),
        (false, None) => "failed".to_owned(),
    };
    let note = v.note.map(|n| format!(": {n}")).unwrap_or_default();
    outln!("marked by a person: {judged}{note}")?;
    Ok(())
}

/// The rules applied in the run, then its steps.
fn print_run_steps(run: &crate::store::RunRecord) -> anyhow::Result<()> {
    for a in &run.rules_applied {
        outln!("rule {} ({}): {}", a.rule_id, a.kind, a.effect)?;
    }
    for s in &run.steps {
        outln!(
            "step {} {}{}",
            s.kind,
            s.tool.clone().unwrap_or_default(),
            s.error
                .as_ref()
                .map(|e| format!(" error: {e}"))
                .unwrap_or_default()
        )?;
    }
    Ok(())
}

/// `runs export [--out FILE]`: JSON Lines.
fn export_runs(
    store: &dyn crate::store::RunStore,
    out: Option<std::path::PathBuf>,
) -> anyhow::Result<()> {
    let runs = store.all_runs()?;
    let Some(p) = out else {
        // A terminal may be reading: through the printing layer, which
        // keeps JSON the same JSON (see `terminal_safe`).
        for r in &runs {
            outln!("{}", serde_json::to_string(r)?)?;
        }
        return Ok(());
    };
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(&p).with_context(|| format!("cannot create {}", p.display()))?,
    );
    for r in &runs {
        writeln!(w, "{}", serde_json::to_string(r)?)?;
    }
    w.flush()?;
    tracing::info!("exported {} runs to {}", runs.len(), p.display());
    Ok(())
}

pub fn rules(args: RulesArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let path = rules_file(ctx);
    // Where hosts share a store, the rules are in it.
    let shared = ctx.shared_store()?;
    let at = RulesAt::of(shared.as_deref().and_then(SharedStore::of), &path);
    match args.command {
        RulesCommand::List { json } => list_rules(&at.load()?, json)?,
        RulesCommand::Show { id } => show_rule(&at.load()?, &id, ctx)?,
        RulesCommand::Disable { id } => {
            edit_rule_at(at, &id, RuleEdit::Disable)?;
            outln!("disabled {id}")?;
        }
        RulesCommand::Enable { id } => {
            edit_rule_at(at, &id, RuleEdit::Enable)?;
            outln!("enabled {id}")?;
        }
        RulesCommand::Remove { id } => {
            edit_rule_at(at, &id, RuleEdit::Remove)?;
            outln!(
                "removed {id} (learning will not add it again; `skillhost rules restore {id}` undoes this)"
            )?;
        }
        RulesCommand::Restore { id } => {
            edit_rule_at(at, &id, RuleEdit::Restore)?;
            outln!("restored {id}")?;
        }
        RulesCommand::Explain { run_id } => explain_run(ctx, run_id)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `rules explain RUN`: the rules that fired on a run.
fn explain_run(ctx: &Ctx, run_id: i64) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let run = store
        .get_run(run_id)?
        .with_context(|| format!("no run {run_id}; see `skillhost runs list`"))?;
    if run.rules_applied.is_empty() {
        outln!("no rules fired on run {run_id}")?;
    }
    for a in &run.rules_applied {
        outln!("{} ({}): {}", a.rule_id, a.kind, a.effect)?;
    }
    Ok(())
}

/// `rules list`: a table, or the rules as JSON.
fn list_rules(set: &crate::learn::rules::RuleSet, json: bool) -> anyhow::Result<()> {
    if json {
        outln!("{}", serde_json::to_string_pretty(set)?)?;
    } else if set.rules.is_empty() {
        outln!("no rules yet; they are learned from recorded failures (`skillhost learn`)")?;
    } else {
        outln!(
            "{:<48} {:<10} {:<16} {:>5} {:>7}  state",
            "id",
            "kind",
            "scope",
            "conf",
            "applied"
        )?;
        for r in &set.rules {
            outln!(
                "{:<48} {:<10} {:<16} {:>5.2} {:>3}/{:<3}  {}",
                r.id,
                r.kind.to_string(),
                r.scope,
                r.confidence,
                r.succeeded,
                r.applied,
                r.state()
            )?;
        }
    }
    Ok(())
}

/// `rules show ID`: the rule as stored, plus its origin in one readable
/// line (still one JSON object, for scripts).
fn show_rule(set: &crate::learn::rules::RuleSet, id: &str, ctx: &Ctx) -> anyhow::Result<()> {
    let r = set
        .get(id)
        .ok_or_else(|| RuleEditError::NoSuchRule(id.to_owned()))?;
    // Which of the runs it was learned from a person marked failed.
    let marked: Vec<i64> = match ctx.store() {
        Ok(store) => {
            let mut ids = Vec::new();
            for id in &r.origin.failures {
                if store.verdict(*id)?.is_some_and(|v| !v.ok) {
                    ids.push(*id);
                }
            }
            ids
        }
        // No store yet: no verdicts to show.
        Err(_) => Vec::new(),
    };
    let mut shown = serde_json::to_value(r)?;
    if let Some(object) = shown.as_object_mut() {
        object.insert("origin_summary".into(), r.origin_line(&marked).into());
    }
    outln!("{}", serde_json::to_string_pretty(&shown)?)?;
    Ok(())
}

pub fn learn_cmd(args: LearnArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let store = ctx.store()?;
    let (config, model) = ctx.config_with_model(&args.model)?;
    let model = model.filter(|_| !args.no_propose);
    let catalog = ctx.catalog();
    let report = super::runtime()?.block_on(learn::cycle::learn_from_store(
        store.as_ref(),
        SharedStore::of(store.as_ref()),
        &ctx.paths,
        &catalog,
        &config.learning,
        model.as_deref(),
    ))?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        let could_propose = !args.no_propose && config.learning.proposals.enabled;
        print_cycle(&report, could_propose && model.is_none(), &rules_file(ctx))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What a learning cycle did, group by group, and where the rules are.
/// `model_would_propose`: proposals are on but no model is configured.
fn print_cycle(
    report: &learn::cycle::CycleReport,
    model_would_propose: bool,
    rules_file: &std::path::Path,
) -> anyhow::Result<()> {
    if report.groups.is_empty() {
        outln!("no failures recorded yet")?;
    }
    for g in &report.groups {
        outln!("{} / {}: {}: {}", g.skill, g.class, g.summary(), g.outcome)?;
        for id in &g.rules_added {
            outln!("  + {id}")?;
        }
    }
    if model_would_propose && report.groups.iter().any(|g| g.no_pattern) {
        outln!(
            "  (with a model configured, classes no pattern knows get a rule proposed by it: `skillhost learn --model PROVIDER:MODEL`)"
        )?;
    }
    for id in &report.rules_updated {
        outln!("  ~ {id} (updated to its pattern's current version; statistics start over)")?;
    }
    for id in &report.rules_rejected {
        outln!("  - {id} (rejected; `skillhost rules show {id}` has the figures)")?;
    }
    outln!(
        "{} rule(s) added; rules are in {}",
        report.rules_added,
        rules_file.display()
    )?;
    Ok(())
}

pub fn eval(args: EvalArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.command {
        EvalCommand::Audit(a) => super::audit::eval_audit(a, ctx),
        EvalCommand::Ablation(a) => eval_ablation(a, ctx),
        #[cfg(feature = "forge")]
        EvalCommand::Forge {
            seeds,
            train,
            eval,
            tasks,
            json,
            model,
        } => {
            let opts = super::eval_forge::Settings {
                seeds,
                train,
                eval,
                tasks,
                json,
            };
            super::eval_forge::run(opts, &model, ctx)
        }
    }
}

/// `eval ablation`: options from the arguments, the run, the report.
fn eval_ablation(args: AblationArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let config = crate::app::config_with_overrides(&ctx.paths, &args.model.overrides())?;
    let real_model = if args.model.model.is_some() {
        real_model(&config.model)?
    } else {
        None
    };
    let mut opts = ablation_options(&args)?;
    opts.model = real_model;
    let bar = super::progress::bar(super::progress::shown(args.json), opts.runs(), "seeds");
    opts.on_seed = {
        let bar = bar.clone();
        Some(Arc::new(move |done: u64| bar.set_position(done)))
    };
    let catalog = Arc::new(ctx.catalog());
    let rt = super::runtime()?;
    let report = rt.block_on(ablation::run(&ctx.paths, catalog, &config, &opts));
    bar.finish_and_clear();
    let report = report?;
    if let Some(path) = &args.answers {
        write_answers(&report, path)?;
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        print_ablation(&report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The configured model, sampling with seed `[model] seed` + the
/// ablation's seed, so that seeds differ at a temperature above 0.
fn real_model(config: &crate::llm::ModelConfig) -> anyhow::Result<Option<ablation::RealModel>> {
    let Some(first) = config.build()? else {
        return Ok(None);
    };
    let config = config.clone();
    Ok(Some(ablation::RealModel::per_seed(move |seed| {
        let mut seeded = config.clone();
        seeded.seed = Some(config.seed.unwrap_or(0).wrapping_add(seed));
        // The same configuration built once already; a failure here would
        // be a bug, and the unseeded provider still answers.
        seeded
            .build()
            .ok()
            .flatten()
            .unwrap_or_else(|| first.clone())
    })))
}

/// Every judged answer of the report, one JSON object a line.
fn write_answers(report: &ablation::Report, path: &std::path::Path) -> anyhow::Result<()> {
    let mut lines = String::new();
    for sweep in &report.sweeps {
        for seed in &sweep.seeds {
            for arm in &seed.arms {
                for a in &arm.answers {
                    let mut v = serde_json::to_value(a)?;
                    v["seed"] = seed.seed.into();
                    v["arm"] = arm.arm.name().into();
                    v["compliance"] = serde_json::to_value(sweep.compliance)?;
                    lines.push_str(&v.to_string());
                    lines.push('\n');
                }
            }
        }
    }
    std::fs::write(path, lines).with_context(|| format!("cannot write {}", path.display()))
}

fn ablation_options(args: &AblationArgs) -> anyhow::Result<ablation::Options> {
    let Some(scenario) = ablation::Scenario::parse(&args.scenario) else {
        let names: Vec<&str> = ablation::Scenario::ALL.iter().map(|s| s.name()).collect();
        anyhow::bail!(
            "unknown scenario `{}`; available: {}",
            args.scenario,
            names.join(", ")
        );
    };
    if let Some(c) = args.compliance.iter().find(|c| !(0.0..=1.0).contains(*c)) {
        anyhow::bail!("--compliance {c}: each must be between 0 and 1");
    }
    if !(0.0..=1.0).contains(&args.mark_noise) {
        anyhow::bail!("--mark-noise {}: must be between 0 and 1", args.mark_noise);
    }
    let mut opts = ablation::Options::new(scenario);
    opts.train = args.train.unwrap_or(opts.train);
    opts.eval = args.eval;
    opts.seeds = args.seeds;
    opts.first_seed = args.first_seed;
    if !args.arms.is_empty() {
        opts.arms = parse_arms(&args.arms)?;
    }
    opts.compliance = args.compliance.clone();
    opts.mark_noise = args.mark_noise;
    opts.shipped_patterns = !args.no_shipped_patterns;
    if !args.tasks.is_empty() {
        let mut tasks = Vec::new();
        for path in &args.tasks {
            tasks.extend(read_task_file(path)?);
        }
        opts.eval_tasks = Some(tasks);
    }
    opts.train_tasks = args
        .train_tasks
        .as_deref()
        .map(read_task_file)
        .transpose()?;
    Ok(opts)
}

/// `--arms` names, each known and none twice.
fn parse_arms(names: &[String]) -> anyhow::Result<Vec<ablation::Arm>> {
    let mut arms = Vec::new();
    for name in names {
        let Some(arm) = ablation::Arm::parse(name) else {
            let known: Vec<&str> = ablation::ARMS.iter().map(|a| a.name()).collect();
            anyhow::bail!("unknown arm `{name}`; available: {}", known.join(", "));
        };
        if arms.contains(&arm) {
            anyhow::bail!("arm `{name}` is named twice");
        }
        arms.push(arm);
    }
    Ok(arms)
}

/// A task file (see `eval::tasks`); at least one task.
fn read_task_file(path: &std::path::Path) -> anyhow::Result<Vec<crate::eval::tasks::LabelledTask>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let tasks = crate::eval::tasks::parse(&text)
        .with_context(|| format!("{} is not a task file", path.display()))?;
    if tasks.is_empty() {
        anyhow::bail!("{} has no tasks (one per line)", path.display());
    }
    Ok(tasks)
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".to_owned(), |x| format!("{:.1}%", x * 100.0))
}

fn interval(ci: Option<(f64, f64)>) -> String {
    ci.map_or("-".to_owned(), |(lo, hi)| {
        format!("{:.1}%-{:.1}%", lo * 100.0, hi * 100.0)
    })
}

fn print_ablation(report: &ablation::Report) -> anyhow::Result<()> {
    let seeds = report.sweeps.first().map_or(0, |s| s.seeds.len());
    outln!(
        "ablation: scenario {}{}, model {}, {} training and {} evaluation tasks, {} seeds ({:.1} s)",
        report.scenario,
        if report.shipped_patterns {
            ""
        } else {
            " without the shipped patterns"
        },
        report.model,
        report.train,
        report.eval,
        seeds,
        report.seconds
    )?;
    for sweep in &report.sweeps {
        print_sweep(sweep, report.mark_noise)?;
    }
    if !report.last_rules.is_empty() {
        outln!()?;
        outln!("rules of the last seed, with their origin:")?;
        for r in &report.last_rules {
            outln!(
                "  {} [{}]: {}",
                r.id,
                r.state(),
                r.origin_line(&report.last_marked)
            )?;
        }
    }
    Ok(())
}

/// Success per ground-truth criterion, one line per arm.
fn print_criteria(sweep: &ablation::Sweep) -> anyhow::Result<()> {
    for a in &sweep.summary {
        let scores: Vec<String> = a
            .criteria
            .iter()
            .map(|(name, c)| format!("{name} {} ({}/{})", pct(c.rate()), c.met, c.applies))
            .collect();
        if !scores.is_empty() {
            outln!("  {:<15} by criterion: {}", a.arm.name(), scores.join(", "))?;
        }
    }
    Ok(())
}

/// One compliance: the arms, the reviewer, validators against truth.
fn print_sweep(sweep: &ablation::Sweep, noise: f64) -> anyhow::Result<()> {
    outln!()?;
    match sweep.compliance {
        Some(c) => outln!("simulated compliance {c:.2}:")?,
        None => outln!("real model:")?,
    }
    print_arms(sweep)?;
    print_criteria(sweep)?;
    print_reviewer(sweep, noise)?;
    print_validators_vs_truth(sweep)
}

/// The table of arms: success by validators and by truth, calls, rules.
fn print_arms(sweep: &ablation::Sweep) -> anyhow::Result<()> {
    outln!(
        "{:<15} {:>9} {:>13} {:>7} {:>13} {:>6} {:>10} {:>7} {:>9}  failures by class (validators)",
        "arm",
        "validated",
        "95% interval",
        "truth",
        "95% interval",
        "agree",
        "calls/task",
        "applied",
        "same/retr"
    )?;
    for a in &sweep.summary {
        let failures: Vec<String> = a
            .failures_by_class
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        outln!(
            "{:<15} {:>8.1}% {:>13} {:>7} {:>13} {:>6} {:>10.2} {:>7} {:>9}  {}",
            a.arm.name(),
            a.validator_success * 100.0,
            interval(Some(a.validator_ci95)),
            pct(a.truth_success),
            interval(a.truth_ci95),
            pct(a.agreement),
            a.model_calls_per_task,
            a.rules_applied,
            format!("{}/{}", a.identical_retries, a.retries),
            failures.join(", ")
        )?;
    }
    Ok(())
}

/// What the simulated reviewer (wrong a `noise` share of the time) did,
/// over all seeds.
fn print_reviewer(sweep: &ablation::Sweep, noise: f64) -> anyhow::Result<()> {
    let marks = sweep
        .seeds
        .iter()
        .fold(ablation::Marks::default(), |mut m, s| {
            m.reviewed += s.marks.reviewed;
            m.marked += s.marks.marked;
            m.wrong += s.marks.wrong;
            m.overlooked += s.marks.overlooked;
            m
        });
    if marks.reviewed > 0 {
        outln!(
            "reviewer (wrong {:.0}% of the time): read {} training answers, marked {} failed ({} wrongly), overlooked {} mistakes",
            noise * 100.0,
            marks.reviewed,
            marks.marked,
            marks.wrong,
            marks.overlooked
        )?;
    }
    Ok(())
}

/// Per class, how the validators judged the baseline's answers against
/// the ground truth.
fn print_validators_vs_truth(sweep: &ablation::Sweep) -> anyhow::Result<()> {
    let Some(base) = sweep.arm(ablation::Arm::Baseline) else {
        return Ok(());
    };
    let classes: Vec<String> = base
        .by_class
        .iter()
        .filter(|(_, t)| t.truth_misses + t.validator_flags > 0)
        .map(|(k, t)| {
            format!(
                "{k} {} wrong, {} missed, {} false alarms",
                t.truth_misses, t.missed, t.false_alarms
            )
        })
        .collect();
    if !classes.is_empty() {
        outln!(
            "validators vs ground truth, baseline answers: {}",
            classes.join("; ")
        )?;
    }
    Ok(())
}
