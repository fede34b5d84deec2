//! `eval audit`'s figures as lines, each beside its target.

use super::eval::{EvalReport, FP_TARGET, PRECISION_TARGET, Paths, RECALL_TARGET};
use super::eval_data::Sample;

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

pub(super) fn print_eval(r: &EvalReport, p: &Paths) -> anyhow::Result<()> {
    outln!("skill text audit evaluation")?;
    print_recall(r, p)?;
    print_real(r, p)?;
    print_hard(r, p)?;
    print_precision(r)?;
    outln!("  targets {}", if r.met { "met" } else { "NOT met" })?;
    Ok(())
}

fn print_recall(r: &EvalReport, p: &Paths) -> anyhow::Result<()> {
    outln!(
        "  malicious set {}: recall {}/{} = {}",
        p.malicious.display(),
        r.caught,
        r.malicious,
        pct(r.recall),
    )?;
    for c in &r.categories {
        outln!(
            "    {:<14} recall {:>3}/{:<3} = {:>6} (target >= {:.0}%){}",
            c.category,
            c.caught,
            c.samples,
            pct(c.recall),
            RECALL_TARGET * 100.0,
            if c.met { "" } else { "  below target" }
        )?;
    }
    for s in &r.missed {
        let best = s.findings.iter().max_by_key(|f| f.severity);
        match best {
            Some(f) => outln!(
                "    missed {} [{}] (best: {} {})",
                s.name,
                s.category,
                f.rule,
                f.severity
            )?,
            None => outln!("    missed {} [{}] (no finding)", s.name, s.category)?,
        }
    }
    Ok(())
}

fn print_real(r: &EvalReport, p: &Paths) -> anyhow::Result<()> {
    outln!(
        "  real skills ({} of {} over {}, {} of {}): false positives {}/{} = {} (target <= {:.0}%)",
        r.benign_corpus,
        p.benign.display(),
        p.corpus.display(),
        r.benign_extra,
        p.extra.display(),
        r.false_positives,
        r.benign,
        pct(r.false_positive_rate),
        FP_TARGET * 100.0
    )?;
    print_flagged(&r.flagged)
}

fn print_hard(r: &EvalReport, p: &Paths) -> anyhow::Result<()> {
    outln!(
        "  hard negatives {}: false positives {}/{} (reported apart, no target)",
        p.hard.display(),
        r.hard_negative_false_positives,
        r.hard_negatives
    )?;
    print_flagged(&r.hard_negative_flagged)
}

fn print_precision(r: &EvalReport) -> anyhow::Result<()> {
    if r.risky > 0 {
        outln!(
            "  real skills judged risky (corpus-risky.txt, extra-risky.txt): {}/{} with a high finding",
            r.risky_flagged,
            r.risky
        )?;
        for name in &r.risky_missed {
            outln!(
                "    no high finding: {}",
                crate::cli::print::terminal_safe(name)
            )?;
        }
    }
    let precision = r.precision.map_or_else(|| "n/a".to_owned(), pct);
    outln!(
        "  precision of held-back real skills: {}/{} truly risky = {} (target >= {:.0}%)",
        r.risky_flagged,
        r.held_back,
        precision,
        PRECISION_TARGET * 100.0
    )?;
    Ok(())
}

fn print_flagged(samples: &[Sample]) -> anyhow::Result<()> {
    for s in samples {
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
    Ok(())
}
