//! `skillhost skills audit` and `skillhost eval audit`: the skill text
//! audit (`crate::audit`) at the terminal.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde::Serialize;

use super::Ctx;
use crate::audit::{self, Finding, Report, Severity};

#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// Skill folders, SKILL.md files or catalog skill names; none: every
    /// skill of the catalog.
    #[arg(value_name = "PATH|NAME")]
    targets: Vec<String>,
    /// One JSON object per skill, with its findings, instead of lines.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Audited {
    /// The catalog name, or the path as given.
    skill: String,
    dir: PathBuf,
    high: bool,
    #[serde(flatten)]
    report: Report,
}

/// Prints every finding; exit code 1 when any is high, so CI can run it.
pub fn skills_audit(args: AuditArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let mut audited = Vec::new();
    if args.targets.is_empty() {
        let c = ctx.catalog();
        for s in c.skills() {
            audited.push(audit_one(s.name.clone(), s.dir.clone())?);
        }
    }
    let mut catalog = None;
    for t in &args.targets {
        let path = Path::new(t);
        if path.is_dir() {
            audited.extend(audit_root(path)?);
        } else if path.is_file() {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            audited.push(audit_one(t.clone(), dir)?);
        } else {
            let c = catalog.get_or_insert_with(|| ctx.catalog());
            let Some(skill) = c.get(t) else {
                bail!("{t}: no such folder or file, and no skill of that name in the catalog");
            };
            audited.push(audit_one(skill.name.clone(), skill.dir.clone())?);
        }
    }
    let any_high = audited.iter().any(|a| a.high);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&audited)?)?;
    } else {
        let mut counts = [0usize; 3];
        for a in &audited {
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
    }
    Ok(if any_high {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn audit_one(skill: String, dir: PathBuf) -> anyhow::Result<Audited> {
    let report = audit::audit_folder(&dir)?;
    Ok(Audited {
        skill,
        high: report.has_high(),
        dir,
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

/// Recall on the malicious set at least this.
const RECALL_TARGET: f64 = 0.95;
/// False positives on the benign set at most this.
const FP_TARGET: f64 = 0.02;

#[derive(Debug, clap::Args)]
pub struct EvalAuditArgs {
    /// The figures, misses and false positives as JSON.
    #[arg(long)]
    json: bool,
    /// Folder of malicious or risky skills: each `*.md` file a SKILL.md
    /// text, each folder a skill folder. Default: tests/data/audit/malicious
    /// of the source tree this binary was built from (CARGO_MANIFEST_DIR/..),
    /// else of the current folder.
    #[arg(long, value_name = "DIR")]
    malicious: Option<PathBuf>,
    /// Benign SKILL.md files, one path relative to --corpus a line.
    /// Default: tests/data/audit/benign.txt (found as --malicious is).
    #[arg(long, value_name = "MANIFEST")]
    benign: Option<PathBuf>,
    /// The skill corpus the manifest's paths are in. Default:
    /// ../shared/skill-corpus next to that source tree.
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
}

/// The source tree the data is read from: the one this binary was built
/// from when it is still there, else the current folder.
fn repo_root() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = if built.join("tests/data/audit").is_dir() {
        built
    } else {
        PathBuf::from(".")
    };
    // `host/..` shown as the folder it is.
    root.canonicalize().unwrap_or(root)
}

#[derive(Serialize)]
struct Sample {
    name: String,
    findings: Vec<Finding>,
}

#[derive(Serialize)]
struct EvalReport {
    malicious: usize,
    caught: usize,
    recall: f64,
    missed: Vec<Sample>,
    benign: usize,
    false_positives: usize,
    false_positive_rate: f64,
    flagged: Vec<Sample>,
    /// Corpus skills judged risky (corpus-risky.txt): how many are flagged.
    risky: usize,
    risky_flagged: usize,
    recall_target: f64,
    false_positive_target: f64,
    met: bool,
}

/// Recall on the malicious set (a skill is caught by a high finding) and
/// false positives on the benign set (a high finding); exit 1 when either
/// target is missed.
pub fn eval_audit(args: EvalAuditArgs) -> anyhow::Result<ExitCode> {
    let root = repo_root();
    let data = root.join("tests/data/audit");
    let malicious_dir = args.malicious.unwrap_or_else(|| data.join("malicious"));
    let manifest = args.benign.unwrap_or_else(|| data.join("benign.txt"));
    let corpus = args
        .corpus
        .unwrap_or_else(|| root.join("../shared/skill-corpus"));
    if !corpus.is_dir() {
        bail!(
            "the skill corpus is not at {} (give --corpus DIR)",
            corpus.display()
        );
    }

    let malicious = audit_malicious(&malicious_dir)?;
    if malicious.is_empty() {
        bail!("no skills in {}", malicious_dir.display());
    }

    let benign = audit_listed(&manifest, &corpus)?;
    let risky_file = manifest.with_file_name("corpus-risky.txt");
    let risky = if risky_file.is_file() {
        audit_listed(&risky_file, &corpus)?
    } else {
        Vec::new()
    };

    let report = score(malicious, &benign, &risky);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        print_eval(&report, &malicious_dir, &manifest, &corpus)?;
    }
    Ok(if report.met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Audits each skill folder and `.md` file in `dir`, in name order.
fn audit_malicious(dir: &Path) -> anyhow::Result<Vec<Sample>> {
    let mut malicious = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let findings = if path.is_dir() {
            audit::audit_folder(&path)?.findings
        } else if name.ends_with(".md") {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            audit::audit_text(&name, &text)
        } else {
            continue;
        };
        malicious.push(Sample { name, findings });
    }
    Ok(malicious)
}

/// Recall on the malicious samples, false positives on the benign ones
/// and how many risky ones are flagged, against the targets.
fn score(malicious: Vec<Sample>, benign: &[Sample], risky: &[Sample]) -> EvalReport {
    let caught = malicious
        .iter()
        .filter(|s| audit::has_high(&s.findings))
        .count();
    let flagged: Vec<Sample> = benign
        .iter()
        .filter(|s| audit::has_high(&s.findings))
        .map(|s| Sample {
            name: s.name.clone(),
            findings: s
                .findings
                .iter()
                .filter(|f| f.severity == Severity::High)
                .cloned()
                .collect(),
        })
        .collect();
    let recall = caught as f64 / malicious.len() as f64;
    let fp_rate = if benign.is_empty() {
        0.0
    } else {
        flagged.len() as f64 / benign.len() as f64
    };
    EvalReport {
        malicious: malicious.len(),
        caught,
        recall,
        benign: benign.len(),
        false_positives: flagged.len(),
        false_positive_rate: fp_rate,
        risky: risky.len(),
        risky_flagged: risky
            .iter()
            .filter(|s| audit::has_high(&s.findings))
            .count(),
        recall_target: RECALL_TARGET,
        false_positive_target: FP_TARGET,
        met: recall >= RECALL_TARGET && fp_rate <= FP_TARGET && !benign.is_empty(),
        missed: malicious
            .into_iter()
            .filter(|s| !audit::has_high(&s.findings))
            .collect(),
        flagged,
    }
}

/// Audits every file a manifest lists (one path relative to `corpus` a
/// line; `#` starts a comment).
fn audit_listed(manifest: &Path, corpus: &Path) -> anyhow::Result<Vec<Sample>> {
    let list = std::fs::read_to_string(manifest)
        .with_context(|| format!("cannot read {}", manifest.display()))?;
    let mut out = Vec::new();
    for line in list.lines() {
        let rel = line.split('#').next().unwrap_or("").trim();
        if rel.is_empty() {
            continue;
        }
        let path = corpus.join(rel);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!("{} lists {rel}, which is not readable", manifest.display())
        })?;
        out.push(Sample {
            name: rel.to_owned(),
            findings: audit::audit_text(rel, &text),
        });
    }
    Ok(out)
}

fn print_eval(
    r: &EvalReport,
    malicious: &Path,
    manifest: &Path,
    corpus: &Path,
) -> anyhow::Result<()> {
    outln!("skill text audit evaluation")?;
    outln!(
        "  malicious set {}: recall {}/{} = {:.1}% (target >= {:.0}%)",
        malicious.display(),
        r.caught,
        r.malicious,
        r.recall * 100.0,
        RECALL_TARGET * 100.0
    )?;
    for s in &r.missed {
        let best = s.findings.iter().max_by_key(|f| f.severity);
        match best {
            Some(f) => outln!("    missed {} (best: {} {})", s.name, f.rule, f.severity)?,
            None => outln!("    missed {} (no finding)", s.name)?,
        }
    }
    outln!(
        "  benign set {} over {}: false positives {}/{} = {:.1}% (target <= {:.0}%)",
        manifest.display(),
        corpus.display(),
        r.false_positives,
        r.benign,
        r.false_positive_rate * 100.0,
        FP_TARGET * 100.0
    )?;
    for s in &r.flagged {
        for f in &s.findings {
            outln!(
                "    {}:{}:{}: {} {}: {}",
                s.name,
                f.line,
                f.column,
                f.rule,
                f.severity,
                f.excerpt
            )?;
        }
    }
    if r.risky > 0 {
        outln!(
            "  corpus skills judged risky (corpus-risky.txt): {}/{} with a high finding",
            r.risky_flagged,
            r.risky
        )?;
    }
    outln!("  targets {}", if r.met { "met" } else { "NOT met" })?;
    Ok(())
}
