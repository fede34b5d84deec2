//! `skillhost eval audit`: the audit against the evaluation set of
//! tests/data/audit (README.md there): recall per category of malicious
//! skills, false positives on real skills and on hard negatives, and the
//! precision of what it holds back.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use serde::Serialize;

use super::eval_data::{self, Sample};
use super::eval_print::print_eval;
use crate::audit;

/// Recall of each category of the malicious set at least this.
pub(super) const RECALL_TARGET: f64 = 0.90;
/// False positives on the real skills (corpus and benign-extra) at most
/// this.
pub(super) const FP_TARGET: f64 = 0.02;
/// Of the real skills held back, at least this share truly risky.
pub(super) const PRECISION_TARGET: f64 = 0.70;

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
    /// The category of each malicious skill (`[[sample]]` tables with
    /// `file` and `category`). Default: DIR.toml beside --malicious; when
    /// there is none, every skill is "uncategorised".
    #[arg(long, value_name = "TOML")]
    categories: Option<PathBuf>,
    /// Benign SKILL.md files, one path relative to --corpus a line.
    /// Default: tests/data/audit/benign.txt (found as --malicious is).
    #[arg(long, value_name = "MANIFEST")]
    benign: Option<PathBuf>,
    /// The skill corpus the manifest's paths are in. Default:
    /// ../shared/skill-corpus next to that source tree.
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
    /// More real skills, a root of skill folders. Default:
    /// tests/data/audit/benign-extra (skipped when absent).
    #[arg(long, value_name = "DIR")]
    benign_extra: Option<PathBuf>,
    /// Benign skills a careful reviewer would pick as look-alikes, reported
    /// apart. Default: tests/data/audit/hard-negative (skipped when absent).
    #[arg(long, value_name = "DIR")]
    hard_negative: Option<PathBuf>,
    #[command(flatten)]
    judge: super::judge::JudgeArgs,
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

/// Where each set is read from, the defaults filled in.
pub(super) struct Paths {
    pub malicious: PathBuf,
    pub categories: PathBuf,
    pub benign: PathBuf,
    pub corpus: PathBuf,
    pub extra: PathBuf,
    pub hard: PathBuf,
}

impl Paths {
    fn resolve(args: &EvalAuditArgs) -> anyhow::Result<Paths> {
        let root = repo_root();
        let data = root.join("tests/data/audit");
        let malicious = args
            .malicious
            .clone()
            .unwrap_or_else(|| data.join("malicious"));
        let paths = Paths {
            categories: args
                .categories
                .clone()
                .unwrap_or_else(|| malicious.with_extension("toml")),
            malicious,
            benign: args
                .benign
                .clone()
                .unwrap_or_else(|| data.join("benign.txt")),
            corpus: args
                .corpus
                .clone()
                .unwrap_or_else(|| root.join("../shared/skill-corpus")),
            extra: args
                .benign_extra
                .clone()
                .unwrap_or_else(|| data.join("benign-extra")),
            hard: args
                .hard_negative
                .clone()
                .unwrap_or_else(|| data.join("hard-negative")),
        };
        if !paths.corpus.is_dir() {
            bail!(
                "the skill corpus is not at {} (give --corpus DIR)",
                paths.corpus.display()
            );
        }
        Ok(paths)
    }
}

/// Every set of the evaluation, audited.
pub(super) struct Sets {
    pub malicious: Vec<Sample>,
    pub corpus: Vec<Sample>,
    pub extra: Vec<Sample>,
    pub hard: Vec<Sample>,
    pub risky: Vec<Sample>,
}

impl Sets {
    fn audit(p: &Paths) -> anyhow::Result<Sets> {
        let malicious = eval_data::audit_malicious(&p.malicious, &p.categories)?;
        if malicious.is_empty() {
            bail!("no skills in {}", p.malicious.display());
        }
        let risky_file = p.benign.with_file_name("corpus-risky.txt");
        let mut risky = if risky_file.is_file() {
            eval_data::audit_listed(&risky_file, &p.corpus)?
        } else {
            Vec::new()
        };
        let extra_risky = p.benign.with_file_name("extra-risky.txt");
        let (extra_risky, extra) =
            eval_data::split_listed(eval_data::audit_tree(&p.extra)?, &extra_risky)?;
        risky.extend(extra_risky);
        Ok(Sets {
            malicious,
            corpus: eval_data::audit_listed(&p.benign, &p.corpus)?,
            extra,
            hard: eval_data::audit_entries(&p.hard)?,
            risky,
        })
    }
}

impl Sets {
    /// The judge's finding added to every sample the rules do not hold
    /// back.
    fn review(&mut self, judge: &mut super::judge::JudgeSetup) -> anyhow::Result<()> {
        let all = [
            &mut self.malicious,
            &mut self.corpus,
            &mut self.extra,
            &mut self.hard,
            &mut self.risky,
        ];
        for set in all {
            for s in set.iter_mut() {
                let path = s.path.clone();
                judge.review(&mut s.findings, || {
                    if path.is_dir() {
                        crate::judge::folder(&path)
                    } else {
                        crate::judge::file(&path)
                    }
                })?;
            }
        }
        Ok(())
    }
}

/// Recall of one category of the malicious set.
#[derive(Serialize)]
pub(super) struct CategoryScore {
    pub category: String,
    pub samples: usize,
    pub caught: usize,
    pub recall: f64,
    pub met: bool,
}

#[derive(Serialize)]
pub(super) struct EvalReport {
    pub malicious: usize,
    pub caught: usize,
    pub recall: f64,
    pub categories: Vec<CategoryScore>,
    pub missed: Vec<Sample>,
    /// Real skills: the corpus's benign ones and benign-extra.
    pub benign: usize,
    pub benign_corpus: usize,
    pub benign_extra: usize,
    pub false_positives: usize,
    pub false_positive_rate: f64,
    pub flagged: Vec<Sample>,
    pub hard_negatives: usize,
    pub hard_negative_false_positives: usize,
    pub hard_negative_flagged: Vec<Sample>,
    /// Corpus skills judged risky (corpus-risky.txt): how many are flagged.
    pub risky: usize,
    pub risky_flagged: usize,
    /// The risky real skills with no high finding, by name.
    pub risky_missed: Vec<String>,
    /// Real skills held back (a high finding): the risky ones flagged and
    /// the false positives.
    pub held_back: usize,
    /// risky_flagged / held_back; none when nothing is held back.
    pub precision: Option<f64>,
    pub recall_target: f64,
    pub false_positive_target: f64,
    pub precision_target: f64,
    pub met: bool,
}

/// Recall per category (a skill is caught by a high finding), false
/// positives on the real skills and the hard negatives, and the precision
/// of what is held back; exit 1 when a target is missed.
pub fn eval_audit(args: EvalAuditArgs, ctx: &super::Ctx) -> anyhow::Result<ExitCode> {
    let json = args.json;
    let paths = Paths::resolve(&args)?;
    let mut sets = Sets::audit(&paths)?;
    if let Some(mut judge) = args.judge.setup(&ctx.paths)? {
        sets.review(&mut judge)?;
    }
    let report = score(sets);
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        print_eval(&report, &paths)?;
    }
    Ok(if report.met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn caught(s: &Sample) -> bool {
    audit::has_high(&s.findings)
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Recall of each category, in the order the categories first appear.
fn category_scores(malicious: &[Sample]) -> Vec<CategoryScore> {
    let mut names: Vec<&str> = Vec::new();
    for s in malicious {
        if !names.contains(&s.category.as_str()) {
            names.push(&s.category);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of: Vec<&Sample> = malicious.iter().filter(|s| s.category == name).collect();
            let hit = of.iter().filter(|s| caught(s)).count();
            let recall = ratio(hit, of.len());
            CategoryScore {
                category: name.to_owned(),
                samples: of.len(),
                caught: hit,
                recall,
                met: recall >= RECALL_TARGET,
            }
        })
        .collect()
}

/// The samples with a high finding, each with its high findings only.
fn flagged(samples: &[Sample]) -> Vec<Sample> {
    samples
        .iter()
        .filter(|s| caught(s))
        .map(Sample::high_only)
        .collect()
}

/// What the real skills and the risky ones say of the audit.
struct RealScore {
    total: usize,
    extra: usize,
    flagged: Vec<Sample>,
    risky: usize,
    risky_flagged: usize,
    risky_missed: Vec<String>,
}

impl RealScore {
    fn new(corpus: Vec<Sample>, extra: Vec<Sample>, risky: &[Sample]) -> RealScore {
        let extra_n = extra.len();
        let real: Vec<Sample> = corpus.into_iter().chain(extra).collect();
        RealScore {
            total: real.len(),
            extra: extra_n,
            flagged: flagged(&real),
            risky: risky.len(),
            risky_flagged: risky.iter().filter(|s| caught(s)).count(),
            risky_missed: risky
                .iter()
                .filter(|s| !caught(s))
                .map(|s| s.name.clone())
                .collect(),
        }
    }

    fn held_back(&self) -> usize {
        self.risky_flagged + self.flagged.len()
    }

    /// Of the real skills held back, the share truly risky.
    fn precision(&self) -> Option<f64> {
        let held = self.held_back();
        (held > 0).then(|| ratio(self.risky_flagged, held))
    }

    fn fp_rate(&self) -> f64 {
        ratio(self.flagged.len(), self.total)
    }

    fn met(&self) -> bool {
        self.total > 0
            && self.fp_rate() <= FP_TARGET
            && self.precision().is_none_or(|p| p >= PRECISION_TARGET)
    }
}

fn score(sets: Sets) -> EvalReport {
    let categories = category_scores(&sets.malicious);
    let caught_n = sets.malicious.iter().filter(|s| caught(s)).count();
    let real = RealScore::new(sets.corpus, sets.extra, &sets.risky);
    let hard_flagged = flagged(&sets.hard);
    EvalReport {
        malicious: sets.malicious.len(),
        caught: caught_n,
        recall: ratio(caught_n, sets.malicious.len()),
        met: categories.iter().all(|c| c.met) && real.met(),
        categories,
        missed: sets.malicious.into_iter().filter(|s| !caught(s)).collect(),
        benign: real.total,
        benign_corpus: real.total - real.extra,
        benign_extra: real.extra,
        false_positives: real.flagged.len(),
        false_positive_rate: real.fp_rate(),
        held_back: real.held_back(),
        precision: real.precision(),
        risky: real.risky,
        risky_flagged: real.risky_flagged,
        risky_missed: real.risky_missed,
        flagged: real.flagged,
        hard_negatives: sets.hard.len(),
        hard_negative_false_positives: hard_flagged.len(),
        hard_negative_flagged: hard_flagged,
        recall_target: RECALL_TARGET,
        false_positive_target: FP_TARGET,
        precision_target: PRECISION_TARGET,
    }
}
