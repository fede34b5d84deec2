//! `skillhost skills audit` and `skillhost eval audit`: the skill text
//! audit (`crate::audit`) at the terminal.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use serde::Serialize;

use super::Ctx;
use crate::audit::{self, Finding, Report, Severity};

mod eval;
mod eval_data;
mod eval_print;
mod judge;

pub use eval::{EvalAuditArgs, eval_audit};

#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// Skill folders, SKILL.md files or catalog skill names; none: every
    /// skill of the catalog.
    #[arg(value_name = "PATH|NAME")]
    targets: Vec<String>,
    /// One JSON object per skill, with its findings, instead of lines.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    judge: judge::JudgeArgs,
}

#[derive(Serialize)]
struct Audited {
    /// The catalog name, or the path as given.
    skill: String,
    dir: PathBuf,
    /// A file audited alone (not a SKILL.md standing for its folder).
    #[serde(skip)]
    lone: Option<PathBuf>,
    high: bool,
    #[serde(flatten)]
    report: Report,
}

/// Prints every finding; exit code 1 when any is high, so CI can run it.
pub fn skills_audit(args: AuditArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let mut audited = audit_targets(&args.targets, ctx)?;
    if let Some(mut judge) = args.judge.setup(&ctx.paths)? {
        for a in &mut audited {
            judge.review(&mut a.report.findings, || match &a.lone {
                Some(file) => crate::judge::file(file),
                None => crate::judge::folder(&a.dir),
            })?;
            a.high = a.report.has_high();
        }
        tracing::info!(
            model = %judge.model(),
            asked = judge.asked,
            cached = judge.cached,
            failed = judge.failed,
            "model judge"
        );
    }
    let any_high = audited.iter().any(|a| a.high);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&audited)?)?;
    } else {
        print_audited(&audited)?;
    }
    Ok(if any_high {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Each target audited: a folder (every skill under it), a file, or a
/// catalog skill's name; no target: the whole catalog.
fn audit_targets(targets: &[String], ctx: &Ctx) -> anyhow::Result<Vec<Audited>> {
    let mut audited = Vec::new();
    if targets.is_empty() {
        let c = ctx.catalog();
        for s in c.skills() {
            audited.push(audit_one(s.name.clone(), s.dir.clone())?);
        }
    }
    let mut catalog = None;
    for t in targets {
        let path = Path::new(t);
        if path.is_dir() {
            audited.extend(audit_root(path)?);
        } else if path.is_file() {
            audited.push(audit_given_file(t, path)?);
        } else {
            let c = catalog.get_or_insert_with(|| ctx.catalog());
            let Some(skill) = c.get(t) else {
                bail!("{t}: no such folder or file, and no skill of that name in the catalog");
            };
            audited.push(audit_one(skill.name.clone(), skill.dir.clone())?);
        }
    }
    Ok(audited)
}

/// Every finding, how to allow each text with a high one, and the counts.
fn print_audited(audited: &[Audited]) -> anyhow::Result<()> {
    let mut counts = [0usize; 3];
    for a in audited {
        for f in &a.report.findings {
            counts[f.severity as usize] += 1;
            outln!("{}", finding_line(&a.dir, f))?;
        }
    }
    for a in audited.iter().filter(|a| a.high) {
        outln!(
            "{}: to use this text despite its findings, add to skillhost.toml: [audit] allow = [\"{}@{}\"]",
            a.skill,
            allow_name(a),
            a.report.pin
        )?;
    }
    let flagged = audited.iter().filter(|a| a.high).count();
    outln!(
        "{} skill(s) audited: {} high, {} medium, {} low finding(s); {flagged} skill(s) with a high finding",
        audited.len(),
        counts[Severity::High as usize],
        counts[Severity::Medium as usize],
        counts[Severity::Low as usize],
    )?;
    Ok(())
}

/// A SKILL.md given by path stands for its skill folder; any other file
/// is audited alone, not with whatever else its folder holds.
fn audit_given_file(target: &str, path: &Path) -> anyhow::Result<Audited> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let is_skill_md = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case("skill.md"));
    if is_skill_md {
        return audit_one(target.to_owned(), dir);
    }
    let report = audit::audit_lone_file(path, &audit::Limits::default());
    Ok(Audited {
        skill: target.to_owned(),
        high: report.has_high(),
        dir,
        lone: Some(path.to_path_buf()),
        report,
    })
}

fn audit_one(skill: String, dir: PathBuf) -> anyhow::Result<Audited> {
    let report = audit::audit_folder(&dir)?;
    Ok(Audited {
        skill,
        high: report.has_high(),
        dir,
        lone: None,
        report,
    })
}

/// The name an allowance uses: the catalog name, or a folder's name.
fn allow_name(a: &Audited) -> String {
    if a.skill.contains(['/', '\\']) || Path::new(&a.skill).is_dir() {
        return a
            .dir
            .file_name()
            .map_or_else(|| a.skill.clone(), |n| n.to_string_lossy().into_owned());
    }
    a.skill.clone()
}

/// A folder given on the command line: one skill, or a root of many, each
/// audited (`audit::audit_root`).
fn audit_root(path: &Path) -> anyhow::Result<Vec<Audited>> {
    let reports = audit::audit_root(path, &audit::Limits::default())?;
    Ok(reports
        .into_iter()
        .map(|(dir, report)| Audited {
            skill: dir.display().to_string(),
            high: report.has_high(),
            dir,
            lone: None,
            report,
        })
        .collect())
}

/// `path:line:col: rule severity: excerpt`, the shape editors and CI
/// logs link to a place.
fn finding_line(dir: &Path, f: &Finding) -> String {
    format!(
        "{}:{}:{}: {} {}: {}",
        dir.join(&f.file).display(),
        f.line,
        f.column,
        f.rule,
        f.severity,
        f.excerpt
    )
}
