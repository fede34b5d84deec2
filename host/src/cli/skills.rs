//! `skillhost skills ...`: list, search, show, validate, prompt; output only.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde::Serialize;

use super::Ctx;
use crate::skill::{Catalog, Severity, Skill, render_available_skills, validate_strict};

#[derive(Debug, clap::Args)]
pub struct SkillsArgs {
    #[command(subcommand)]
    command: SkillsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum SkillsCommand {
    /// List every skill of every root (later roots override earlier ones).
    List {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Rank skills for a task by triggers, tags and text.
    Search {
        query: String,
        /// How many results at most.
        #[arg(short = 'k', default_value_t = 5)]
        k: usize,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Print the <available_skills> block a model is given.
    Prompt,
    /// Print a skill's SKILL.md.
    Show { name: String },
    /// Check skills strictly against the agentskills.io spec.
    Validate {
        /// SKILL.md files or skill folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Grant a skill capabilities.
    Grant(super::grants::GrantArgs),
    /// Revoke a skill's grants.
    Revoke(super::grants::RevokeArgs),
    /// What the forge did to a skill: saved versions and events.
    #[cfg(feature = "forge")]
    History(super::forge::HistoryArgs),
    /// Restore a saved version of a forged, user or workspace skill.
    #[cfg(feature = "forge")]
    Rollback(super::forge::RollbackArgs),
    /// Ask the model for an improved SKILL.md now (checked, atomic, with history).
    #[cfg(feature = "forge")]
    Improve(super::forge::ImproveArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Table,
    Json,
}

/// Largest SKILL.md `show` prints.
const SHOW_MAX_BYTES: u64 = 16 << 20;

pub fn run(args: SkillsArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.command {
        SkillsCommand::List { format } => list(&ctx.catalog(), format),
        SkillsCommand::Search { query, k, format } => search(&ctx.catalog(), &query, k, format),
        SkillsCommand::Prompt => {
            out!("{}", render_available_skills(&ctx.catalog()))?;
            Ok(ExitCode::SUCCESS)
        }
        SkillsCommand::Show { name } => show(&ctx.catalog(), &name),
        SkillsCommand::Validate { paths } => Ok(validate(&paths)?),
        SkillsCommand::Grant(a) => super::grants::grant(a, ctx),
        SkillsCommand::Revoke(a) => super::grants::revoke(a, ctx),
        #[cfg(feature = "forge")]
        SkillsCommand::History(a) => super::forge::history(a, ctx),
        #[cfg(feature = "forge")]
        SkillsCommand::Rollback(a) => super::forge::rollback(a, ctx),
        #[cfg(feature = "forge")]
        SkillsCommand::Improve(a) => super::forge::improve(a, ctx),
    }
}

/// The JSON shape of one skill: `Skill`'s own fields plus what tools ask for.
#[derive(Serialize)]
struct SkillView<'a> {
    #[serde(flatten)]
    skill: &'a Skill,
    tags: &'a [String],
    triggers: &'a [String],
    model_invocable: bool,
    user_invocable: bool,
    handler: Option<&'a str>,
}

impl<'a> SkillView<'a> {
    fn new(skill: &'a Skill) -> Self {
        SkillView {
            skill,
            tags: &skill.meta.tags,
            triggers: &skill.meta.triggers,
            model_invocable: skill.model_invocable(),
            user_invocable: skill.meta.user_invocable,
            handler: skill.meta.skillhost.handler.as_deref(),
        }
    }
}

fn list(catalog: &Catalog, format: Format) -> anyhow::Result<ExitCode> {
    match format {
        Format::Json => {
            let views: Vec<SkillView> = catalog.skills().iter().map(SkillView::new).collect();
            outln!("{}", serde_json::to_string_pretty(&views)?)?;
        }
        Format::Table => {
            if catalog.is_empty() {
                tracing::info!(
                    "no skills found (roots: bundled, ~/.skillhost/skills, .skillhost/skills, .agents/skills, --skills DIR)"
                );
                return Ok(ExitCode::SUCCESS);
            }
            let rows: Vec<[String; 4]> = catalog
                .skills()
                .iter()
                .map(|s| {
                    [
                        s.name.clone(),
                        s.source.to_string(),
                        short_version(&s.version),
                        one_line(&s.description),
                    ]
                })
                .collect();
            print_table(["NAME", "SOURCE", "VERSION", "DESCRIPTION"], &rows)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct MatchView<'a> {
    name: &'a str,
    score: f64,
    why: &'a str,
    description: &'a str,
    path: &'a std::path::Path,
    source: crate::skill::Source,
    version: &'a str,
}

fn search(catalog: &Catalog, query: &str, k: usize, format: Format) -> anyhow::Result<ExitCode> {
    let matches = catalog.search(query, k);
    match format {
        Format::Json => {
            let views: Vec<MatchView> = matches
                .iter()
                .map(|m| MatchView {
                    name: &m.skill.name,
                    score: m.score,
                    why: &m.why,
                    description: &m.skill.description,
                    path: &m.skill.path,
                    source: m.skill.source,
                    version: &m.skill.version,
                })
                .collect();
            outln!("{}", serde_json::to_string_pretty(&views)?)?;
        }
        Format::Table => {
            if matches.is_empty() {
                tracing::info!("no skill matches {query:?}");
                return Ok(ExitCode::SUCCESS);
            }
            let rows: Vec<[String; 4]> = matches
                .iter()
                .map(|m| {
                    [
                        m.skill.name.clone(),
                        format!("{:.2}", m.score),
                        m.why.clone(),
                        one_line(&m.skill.description),
                    ]
                })
                .collect();
            print_table(["NAME", "SCORE", "WHY", "DESCRIPTION"], &rows)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn show(catalog: &Catalog, name: &str) -> anyhow::Result<ExitCode> {
    let Some(skill) = catalog.get(name) else {
        let similar: Vec<&str> = catalog
            .skills()
            .iter()
            .map(|s| s.name.as_str())
            .filter(|n| n.eq_ignore_ascii_case(name) || n.contains(name) || name.contains(*n))
            .take(5)
            .collect();
        if similar.is_empty() {
            bail!(
                "no skill named '{name}'; run `skillhost skills list` to see the available skills"
            );
        }
        bail!(
            "no skill named '{name}' (did you mean {}?); run `skillhost skills list` to see the available skills",
            similar
                .iter()
                .map(|s| format!("'{s}'"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let bytes = skill
        .read_file(&skill.file_name(), SHOW_MAX_BYTES)
        .with_context(|| format!("cannot show skill '{name}'"))?;
    let text = String::from_utf8_lossy(&bytes);
    out!("{text}")?;
    if !text.ends_with('\n') {
        outln!()?;
    }
    Ok(ExitCode::SUCCESS)
}

fn validate(paths: &[PathBuf]) -> std::io::Result<ExitCode> {
    let mut errors = 0;
    let mut warnings = 0;
    for path in paths {
        for p in validate_strict(path) {
            match p.severity {
                Severity::Error => errors += 1,
                Severity::Warning => warnings += 1,
            }
            outln!("{}: {}: {}", path.display(), p.severity, p.message)?;
        }
    }
    if errors == 0 {
        tracing::info!("{} checked: {warnings} warning(s), no errors", paths.len());
        Ok(ExitCode::SUCCESS)
    } else {
        tracing::info!(
            "{} checked: {errors} error(s), {warnings} warning(s)",
            paths.len()
        );
        Ok(ExitCode::FAILURE)
    }
}

/// `sha256:` and the first 12 hex digits: enough to tell versions apart.
fn short_version(v: &str) -> String {
    v.chars().take(7 + 12).collect()
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Left-aligned columns; the last one is cut to keep lines near 120 columns.
fn print_table<const N: usize>(header: [&str; N], rows: &[[String; N]]) -> std::io::Result<()> {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let fixed: usize = widths[..N - 1].iter().map(|w| w + 2).sum();
    let last = 120usize.saturating_sub(fixed).max(30);
    let line = |cells: [&str; N]| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == N {
                out.push_str(&truncate(cell, last));
            } else {
                out.push_str(cell);
                out.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        out.trim_end().to_owned()
    };
    outln!("{}", line(header))?;
    for row in rows {
        outln!("{}", line(std::array::from_fn(|i| row[i].as_str())))?;
    }
    Ok(())
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}
