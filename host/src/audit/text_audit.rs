//! The audit of one text: the rules, the phrase table, hidden comments,
//! the intent analysis, the safeguard tier, whole-file checks and the
//! flow analysis, on the text as written and as folded.

use super::*;

/// Audits one text: `file` is the name findings carry. The line rules,
/// then the flow analysis of its scripts and code blocks (`flow/`).
pub fn audit_text(file: &str, text: &str) -> Vec<Finding> {
    let mut out = audit_as_written(file, text);
    out.extend(folded_findings(file, text, &out));
    out
}

/// The high findings of `text` with its run-time strings folded
/// (`fold.rs`) on lines where the text as written has none: what a
/// command split into pieces spells once joined.
fn folded_findings(file: &str, text: &str, found: &[Finding]) -> Vec<Finding> {
    let Some(folded) = fold::fold(text) else {
        return Vec::new();
    };
    let high_at = |line: usize| {
        found
            .iter()
            .any(|f| f.line == line && f.severity == Severity::High)
    };
    let mut out: Vec<Finding> = Vec::new();
    for f in audit_as_written(file, &folded) {
        if f.severity < Severity::High || high_at(f.line) || out.iter().any(|o| o.line == f.line) {
            continue;
        }
        let written = text.lines().nth(f.line - 1).unwrap_or("").trim();
        out.push(Finding {
            rule: FOLDED_RULE.to_owned(),
            severity: Severity::High,
            file: file.to_owned(),
            line: f.line,
            column: 1,
            excerpt: format!(
                "{} → folds to {} ({})",
                escape(written, 80),
                f.excerpt,
                f.rule
            ),
        });
    }
    out
}

/// The rule id of a finding in folded text.
pub const FOLDED_RULE: &str = "obfuscated-command";

/// A high finding of a whole-file check at `start..end` of `text`.
fn high_at(
    file: &str,
    text: &str,
    rule: &str,
    (start, end): (usize, usize),
    note: &str,
) -> Finding {
    let (line, column) = LineIndex::new(text).position(text, start);
    let mut excerpt = excerpt(text, start, end);
    excerpt.push_str(" → ");
    excerpt.push_str(note);
    Finding {
        rule: rule.to_owned(),
        severity: Severity::High,
        file: file.to_owned(),
        line,
        column,
        excerpt,
    }
}

/// The findings of the rules, the phrase table, hidden comments and the
/// flow analysis in `text` as it is written.
fn audit_as_written(file: &str, text: &str) -> Vec<Finding> {
    let mut out = rule_findings(file, text);
    if let Some(at) = assembled::assembled(file, text) {
        let note = "a downloader, this URL and an interpreter kept as separate values of one object: a command put together at run time";
        out.push(high_at(
            file,
            text,
            assembled::ASSEMBLED_RULE,
            (at, at),
            note,
        ));
    }
    if let Some((start, end, global)) = pickled::code_global(file, text) {
        let note = format!("a pickle that calls {global} when it is loaded");
        out.push(high_at(
            file,
            text,
            pickled::PICKLE_RULE,
            (start, end),
            &note,
        ));
    }
    let flows = flow::scan(file, text);
    if !flows.is_empty() {
        let lines = LineIndex::new(text);
        for h in flows {
            let (line, column) = lines.position(text, h.start);
            // A flow within one line that a rule already flagged as
            // severe is that rule's finding again.
            let same_line = lines.position(text, h.origin).0 == line;
            if same_line
                && out
                    .iter()
                    .any(|f| f.line == line && f.severity >= h.severity)
            {
                continue;
            }
            let mut excerpt = excerpt(text, h.start, h.end);
            excerpt.push_str(" → ");
            excerpt.push_str(&escape(&h.note, 160));
            out.push(Finding {
                rule: h.rule.id.to_owned(),
                severity: h.severity,
                file: file.to_owned(),
                line,
                column,
                excerpt,
            });
        }
    }
    out
}

/// The findings of the rules of rules.toml and the phrase table.
fn rule_findings(file: &str, text: &str) -> Vec<Finding> {
    let mut hits = placed_hits(text, is_data_file(file));
    hits.extend(hidden_hits(file, text));
    hits.extend(intent_hits(file, text));
    hits.extend(safeguard_hits(file, text));
    if hits.is_empty() {
        return Vec::new();
    }
    hits.sort_by(|a, b| (a.start, b.severity, a.rule).cmp(&(b.start, a.severity, b.rule)));
    let lines = LineIndex::new(text);
    let mut out: Vec<Finding> = Vec::with_capacity(hits.len());
    let mut seen = std::collections::HashMap::new();
    for h in hits {
        let (line, column) = lines.position(text, h.start);
        // One finding per rule and line, the most severe: several patterns
        // of a rule, or a rule and the phrase table, often see the same
        // words.
        if let Some(&k) = seen.get(&(h.rule, line)) {
            let kept: &mut Finding = &mut out[k];
            kept.severity = kept.severity.max(h.severity);
            continue;
        }
        seen.insert((h.rule, line), out.len());
        let mut excerpt = excerpt(text, h.start, h.end);
        if let Some(note) = &h.note {
            excerpt.push_str(" → ");
            excerpt.push_str(&escape(note, 160));
        }
        out.push(Finding {
            rule: h.rule.to_owned(),
            severity: h.severity,
            file: file.to_owned(),
            line,
            column,
            excerpt,
        });
    }
    out
}

/// A hit of a rule of rules.toml or of the phrase table, by rule id.
struct Placed<'a> {
    rule: &'a str,
    severity: Severity,
    start: usize,
    end: usize,
    note: Option<String>,
}

/// Every hit in `text` of the rules and the phrase table. In a data file
/// (JSON, YAML, TOML…) there are no sentences: a string is a value a
/// program reads, never a command a sentence describes.
fn placed_hits(text: &str, data: bool) -> Vec<Placed<'static>> {
    let set = rules();
    let table = prose::table();
    let rule_hits = set.scan(text).into_iter().map(|h| {
        let rule = &set.rules[h.rule];
        let severity = if data {
            h.severity
        } else {
            table.rule_severity(text, rule, h.start, h.end, h.severity)
        };
        Placed {
            rule: &rule.id,
            severity,
            start: h.start,
            end: h.end,
            note: h.note,
        }
    });
    let phrase_hits = table.scan(text).into_iter().map(|h| Placed {
        rule: &table.rule_ids[h.rule],
        severity: h.severity,
        start: h.start,
        end: h.end,
        note: None,
    });
    rule_hits.chain(phrase_hits).collect()
}

/// Whether `file` is structured data by its extension.
fn is_data_file(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "json" | "jsonc" | "json5" | "yaml" | "yml" | "toml" | "xml" | "plist" | "ini" | "cfg"
    )
}

/// The instructions hidden in the comments of a Markdown file.
fn hidden_hits(file: &str, text: &str) -> Vec<Placed<'static>> {
    hidden::hidden_instructions(file, text)
        .into_iter()
        .map(|r| Placed {
            rule: hidden::HIDDEN_RULE,
            severity: hidden::HIDDEN_SEVERITY,
            start: r.start,
            end: r.end,
            note: Some("not rendered: the reader never sees it".to_owned()),
        })
        .collect()
}

/// The intents said in the prose of `text` (`intent/`).
fn intent_hits(file: &str, text: &str) -> Vec<Placed<'static>> {
    intent::scan(file, text)
        .into_iter()
        .map(|h| Placed {
            rule: h.rule,
            severity: h.severity,
            start: h.start,
            end: h.end,
            note: Some(h.note),
        })
        .collect()
}

/// The settings and file modes of `text` that turn a safeguard off
/// (`safeguard/`).
fn safeguard_hits(file: &str, text: &str) -> Vec<Placed<'static>> {
    safeguard::scan(file, text)
        .into_iter()
        .map(|h| Placed {
            rule: h.rule,
            severity: h.severity,
            start: h.start,
            end: h.end,
            note: Some(h.note),
        })
        .collect()
}
