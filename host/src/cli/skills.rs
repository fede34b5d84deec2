//! `skillhost skills ...`: list, search, show, validate, prompt; output only
//! (install and uninstall in `install.rs`, grants in `grants.rs`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde::Serialize;

use std::collections::HashMap;

use super::Ctx;
use crate::config::Config;
use crate::skill::{
    Catalog, SearchOptions, Severity, Shadowed, Skill, SkillAudit, Usage, render_available_skills,
    validate_strict,
};

#[derive(Debug, clap::Args)]
pub struct SkillsArgs {
    #[command(subcommand)]
    command: SkillsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum SkillsCommand {
    /// List every skill of every root (later roots override earlier ones;
    /// an installed skill never overrides another source's), with its
    /// source and usage statistics, and which skills each one shadows.
    List {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// The same as `--format json`.
        #[arg(long, conflicts_with = "format")]
        json: bool,
    },
    /// Rank skills for a task by triggers, tags and text; pinned skills
    /// first, usage breaking ties.
    Search {
        /// The task (may be left out with --tag: every tagged skill).
        #[arg(required_unless_present = "tag")]
        query: Option<String>,
        /// Only skills with this tag, role or stage (repeatable: any of them).
        #[arg(long, value_name = "T")]
        tag: Vec<String>,
        /// How many results at most.
        #[arg(short = 'k', default_value_t = 5)]
        k: usize,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// The same as `--format json`.
        #[arg(long, conflicts_with = "format")]
        json: bool,
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
    /// Audit skills' text for fetch-and-execute, hidden payloads, credential
    /// theft and prompt overrides; exit 1 on a high-severity finding.
    Audit(super::audit::AuditArgs),
    /// Install a skill from a folder, a .tar.gz or .zip, or a registry
    /// (OWNER/SKILL[@VERSION]) into $SKILLHOST_HOME/installed, with no grants.
    Install(super::install::InstallArgs),
    /// Remove an installed skill.
    Uninstall(super::install::UninstallArgs),
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

impl Format {
    fn or_json(self, json: bool) -> Format {
        if json { Format::Json } else { self }
    }
}

/// Largest SKILL.md `show` prints.
const SHOW_MAX_BYTES: u64 = 16 << 20;

pub fn run(args: SkillsArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.command {
        SkillsCommand::List { format, json } => list(ctx, &ctx.catalog(), format.or_json(json)),
        SkillsCommand::Search {
            query,
            tag,
            k,
            format,
            json,
        } => {
            let query = query.unwrap_or_default();
            search(ctx, &ctx.catalog(), &query, &tag, k, format.or_json(json))
        }
        SkillsCommand::Prompt => {
            out!("{}", render_available_skills(&ctx.catalog()))?;
            Ok(ExitCode::SUCCESS)
        }
        SkillsCommand::Show { name } => show(&ctx.catalog(), &name),
        SkillsCommand::Validate { paths } => Ok(validate(&paths)?),
        SkillsCommand::Audit(a) => super::audit::skills_audit(a, ctx),
        SkillsCommand::Install(a) => super::install::install(a, ctx),
        SkillsCommand::Uninstall(a) => super::install::uninstall(a, ctx),
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
    roles: &'a [String],
    stages: &'a [String],
    model_invocable: bool,
    user_invocable: bool,
    handler: Option<&'a str>,
    usage: Usage,
    /// The skills of the same name the catalog does not use because of it.
    shadows: Vec<ShadowView<'a>>,
    /// What the skill text audit found at load (absent when it did not
    /// run: bundled skills, `[audit] enabled = false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    audit: Option<&'a SkillAudit>,
    /// A high finding: kept from models unless `[audit] allow` names it.
    flagged: bool,
    /// Flagged and not allowed: out of the prompt, retrieval and MCP tools.
    held_back: bool,
}

#[derive(Serialize)]
struct ShadowView<'a> {
    source: crate::skill::Source,
    path: &'a std::path::Path,
}

impl<'a> SkillView<'a> {
    fn new(
        skill: &'a Skill,
        usage: Usage,
        shadows: &'a [Shadowed],
        audit: Option<&'a SkillAudit>,
    ) -> Self {
        SkillView {
            audit,
            flagged: audit.is_some_and(SkillAudit::flagged),
            held_back: audit.is_some_and(SkillAudit::held_back),
            skill,
            tags: &skill.meta.tags,
            triggers: &skill.meta.triggers,
            roles: &skill.meta.roles,
            stages: &skill.meta.stages,
            model_invocable: skill.model_invocable(),
            user_invocable: skill.meta.user_invocable,
            handler: skill.meta.skillhost.handler.as_deref(),
            usage,
            shadows: shadows
                .iter()
                .map(|s| ShadowView {
                    source: s.source,
                    path: &s.path,
                })
                .collect(),
        }
    }
}

/// The workspace's usage statistics; without them (an unreadable store)
/// skills are listed as unused, with a warning.
fn usage(ctx: &Ctx) -> HashMap<String, Usage> {
    let config = Config::load(&ctx.paths).map_err(anyhow::Error::from);
    let usage = config.and_then(|c| Ok(crate::exec::skill_usage(&ctx.paths, &c.store)?));
    usage.unwrap_or_else(|e| {
        tracing::warn!("usage statistics unavailable: {e}");
        HashMap::new()
    })
}

/// The AUDIT column: `-` not audited, `ok`, `N low/medium`, `held back`
/// (a high finding), `allowed` (a high finding `[audit] allow` lets in).
fn audit_cell(audit: Option<&SkillAudit>) -> String {
    match audit {
        None => "-".into(),
        Some(a) if a.held_back() => "held back".into(),
        Some(a) if a.flagged() => "allowed".into(),
        Some(a) if a.findings.is_empty() => "ok".into(),
        Some(a) => format!("{} low/medium", a.findings.len()),
    }
}

fn list(ctx: &Ctx, catalog: &Catalog, format: Format) -> anyhow::Result<ExitCode> {
    let usage = usage(ctx);
    let of = |s: &Skill| usage.get(&s.name).copied().unwrap_or_default();
    match format {
        Format::Json => {
            let views: Vec<SkillView> = catalog
                .skills()
                .iter()
                .map(|s| {
                    SkillView::new(
                        s,
                        of(s),
                        catalog.shadowed_by(&s.name),
                        catalog.audit(&s.name),
                    )
                })
                .collect();
            outln!("{}", serde_json::to_string_pretty(&views)?)?;
        }
        Format::Table => {
            if catalog.is_empty() {
                tracing::info!(
                    "no skills found (roots: bundled, ~/.skillhost/skills, .skillhost/skills, .agents/skills, --skills DIR)"
                );
                return Ok(ExitCode::SUCCESS);
            }
            print_skill_table(catalog, &of)?;
            print_held_back(catalog)?;
            print_shadowed(catalog)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_skill_table(catalog: &Catalog, usage_of: &dyn Fn(&Skill) -> Usage) -> anyhow::Result<()> {
    let rows: Vec<[String; 8]> = catalog
        .skills()
        .iter()
        .map(|s| {
            let u = usage_of(s);
            [
                s.name.clone(),
                s.source.to_string(),
                short_version(&s.version),
                u.uses.to_string(),
                success_rate(&u),
                u.last_used.map_or_else(|| "-".to_owned(), utc_minute),
                audit_cell(catalog.audit(&s.name)),
                one_line(&s.description),
            ]
        })
        .collect();
    print_table(
        [
            "NAME",
            "SOURCE",
            "VERSION",
            "USES",
            "SUCCESS",
            "LAST USED",
            "AUDIT",
            "DESCRIPTION",
        ],
        &rows,
    )?;
    Ok(())
}

/// The skills the text audit holds back, and how to let one in.
fn print_held_back(catalog: &Catalog) -> anyhow::Result<()> {
    let held: Vec<&str> = catalog
        .skills()
        .iter()
        .filter(|s| catalog.held_back(&s.name))
        .map(|s| s.name.as_str())
        .collect();
    if !held.is_empty() {
        outln!()?;
        outln!(
            "held back by the skill text audit (never offered to a model nor run): {}; see `skillhost skills audit NAME`, and `[audit] allow = [\"NAME@sha256:…\"]` (the line `skills audit NAME` prints) in skillhost.toml to use one you trust",
            held.join(", ")
        )?;
    }
    Ok(())
}

/// Which skill hides which: a name taken twice is worth seeing.
fn print_shadowed(catalog: &Catalog) -> anyhow::Result<()> {
    if !catalog.shadowed().is_empty() {
        outln!()?;
    }
    for s in catalog.shadowed() {
        let by = catalog
            .get(&s.name)
            .map_or_else(String::new, |w| format!("the {} skill ", w.source));
        outln!(
            "{}: {by}shadows the {} one at {}",
            s.name,
            s.source,
            s.path.display()
        )?;
    }
    Ok(())
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
    pinned: bool,
    usage: Usage,
}

fn search(
    ctx: &Ctx,
    catalog: &Catalog,
    query: &str,
    tags: &[String],
    k: usize,
    format: Format,
) -> anyhow::Result<ExitCode> {
    let config = Config::load(&ctx.paths)?;
    for name in config.catalog.unknown_pinned(catalog) {
        tracing::warn!("[catalog] pinned names `{name}`, which no skill has");
    }
    let usage = usage(ctx);
    let opts = SearchOptions {
        pinned: &config.catalog.pinned,
        trusted: &config.catalog.trusted,
        tags,
        usage: &usage,
    };
    let matches = catalog.search_with(query, k, &opts);
    match format {
        Format::Json => print_matches_json(&matches, &usage)?,
        Format::Table if matches.is_empty() => {
            if tags.is_empty() {
                tracing::info!("no skill matches {query:?}");
            } else {
                tracing::info!("no skill with tag {} matches {query:?}", tags.join(" or "));
            }
        }
        Format::Table => print_matches_table(&matches)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn print_matches_table(matches: &[crate::skill::Match<'_>]) -> anyhow::Result<()> {
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
    Ok(())
}

fn print_matches_json(
    matches: &[crate::skill::Match<'_>],
    usage: &HashMap<String, Usage>,
) -> anyhow::Result<()> {
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
            pinned: m.pinned,
            usage: usage.get(&m.skill.name).copied().unwrap_or_default(),
        })
        .collect();
    outln!("{}", serde_json::to_string_pretty(&views)?)?;
    Ok(())
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

/// The EMA as a percentage, `-` for a skill never used.
fn success_rate(u: &Usage) -> String {
    if u.uses == 0 {
        "-".to_owned()
    } else {
        format!("{:.0}%", u.success_rate * 100.0)
    }
}

/// Unix seconds as `YYYY-MM-DD HH:MM` (UTC).
fn utc_minute(secs: i64) -> String {
    let t = crate::types::UtcTime::from_unix(secs);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_minute_is_the_calendar_date() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00");
        assert_eq!(utc_minute(951_782_400 + 3_661), "2000-02-29 01:01");
        assert_eq!(utc_minute(1_767_225_599), "2025-12-31 23:59");
    }
}
