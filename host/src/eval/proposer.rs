//! A simulated rule proposer: stands for the model `skillhost learn` asks
//! for a rule for a class no pattern knows. A test device, not a model.
//!
//! It knows nothing of the scenario. It reads the failed and successful
//! runs in its prompt ([`crate::learn::propose::request`]) and writes the
//! validation rule they support, the way a careful reader would:
//!
//! 1. the **cue**: words of the failed runs' tasks that the successful
//!    runs' tasks use less (in at least two failures, and in a share of
//!    them at least 1.5 times the successes' share plus 5 points), taken
//!    most telling first (by that ratio), each covering at least two
//!    failures not yet covered;
//! 2. the **missing sentence**: words of the successful answers to tasks
//!    with the cue that at most 15% of the failed answers have and that
//!    are not boilerplate, chosen greedily until they cover those answers;
//! 3. the rule: the task has the cue and the answer lacks the sentence;
//!    the remedy quotes the cue it found and the sentence of a successful
//!    answer to copy.
//!
//! When the evidence supports no cue or no sentence (too few failures,
//! nothing that sets them apart), it declines. Its answer then goes
//! through the real replay over the recorded runs, which may still reject
//! it; mislabelled runs (a noisy reviewer) blur the cue and the replay's
//! figures alike.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use crate::llm::{ChatRequest, ChatResponse, LlmError, Message, Provider};
use crate::types::BoxFuture;

/// Words that say nothing about a ticket or an answer.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "this", "that", "with", "have", "has", "had", "been", "was", "were",
    "are", "our", "your", "you", "about", "question", "ticket", "reply", "since", "from", "what",
    "all", "any", "can", "not", "but", "its", "it's", "they", "them", "their", "there", "will",
    "would", "into", "who", "how", "why", "when", "one", "two", "she", "him", "her", "his", "out",
    "more", "than", "then", "also", "just", "very", "really", "some", "get", "got", "did", "does",
    "here", "an", "in", "on", "of", "to", "is", "it", "we", "my", "me",
];

/// One run as the prompt shows it.
#[derive(Debug, Default, Clone)]
struct Shown {
    task: String,
    output: String,
}

/// The failure class, and the failed and successful runs, of a proposal
/// prompt.
fn read_prompt(prompt: &str) -> Option<(String, Vec<Shown>, Vec<Shown>)> {
    let class = prompt
        .split_once("Failure class `")?
        .1
        .split_once('`')?
        .0
        .to_owned();
    let (failed, succeeded) = (Vec::new(), Vec::new());
    let mut sections = [failed, succeeded];
    let mut at: Option<usize> = None;
    let mut field = "";
    for line in prompt.lines() {
        match line {
            "Failed runs:" => {
                at = Some(0);
                continue;
            }
            "Successful runs:" => {
                at = Some(1);
                continue;
            }
            _ => {}
        }
        let Some(i) = at else { continue };
        if let Some(task) = line.strip_prefix("- task: ") {
            sections[i].push(Shown {
                task: task.to_owned(),
                output: String::new(),
            });
            field = "task";
        } else if line.starts_with("  context: ") || line.starts_with("  error: ") {
            field = "";
        } else if let Some(out) = line.strip_prefix("  output: ") {
            field = "output";
            if let Some(run) = sections[i].last_mut() {
                run.output.push_str(out);
            }
        } else if field == "output"
            && let Some(run) = sections[i].last_mut()
        {
            run.output.push('\n');
            run.output.push_str(line);
        }
    }
    let [failed, succeeded] = sections;
    Some((class, failed, succeeded))
}

/// The content words of a text, lower case.
fn content_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .map(str::to_lowercase)
        .filter(|w| {
            w.chars().count() >= 3
                && w.chars().all(|c| c.is_alphabetic() || c == '-')
                && !STOPWORDS.contains(&w.as_str())
        })
        .collect()
}

/// Greedily picks words (from `candidates`) until `sets` are covered or
/// no word covers `min_gain` more; at most `max` words.
fn cover(
    sets: &[BTreeSet<String>],
    candidates: &[String],
    min_gain: usize,
    max: usize,
) -> Vec<String> {
    let mut covered = vec![false; sets.len()];
    let mut chosen = Vec::new();
    while chosen.len() < max {
        let best = candidates
            .iter()
            .filter(|c| !chosen.contains(*c))
            .map(|c| {
                let gain = sets
                    .iter()
                    .zip(&covered)
                    .filter(|(s, done)| !**done && s.contains(c))
                    .count();
                (gain, c)
            })
            .filter(|(gain, _)| *gain >= min_gain.max(1))
            .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)));
        let Some((_, word)) = best else { break };
        for (s, done) in sets.iter().zip(covered.iter_mut()) {
            *done |= s.contains(word);
        }
        chosen.push(word.clone());
    }
    chosen
}

/// Takes words in the order given, each that covers at least `min_gain`
/// of `sets` not yet covered; at most `max` words.
fn cover_in_order(
    sets: &[BTreeSet<String>],
    ordered: &[String],
    min_gain: usize,
    max: usize,
) -> Vec<String> {
    let mut covered = vec![false; sets.len()];
    let mut chosen = Vec::new();
    for word in ordered {
        if chosen.len() == max {
            break;
        }
        let gain = sets
            .iter()
            .zip(&covered)
            .filter(|(s, done)| !**done && s.contains(word))
            .count();
        if gain >= min_gain {
            for (s, done) in sets.iter().zip(covered.iter_mut()) {
                *done |= s.contains(word);
            }
            chosen.push(word.clone());
        }
    }
    chosen
}

fn share(n: usize, of: usize) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

/// Words the successful answers to tasks with the cue have and the failed
/// answers (almost) never do, greedily covering those answers; and a line
/// of a successful answer with the first word. None when no shown success
/// has the cue: the evidence does not say what a right answer adds.
fn missing_sentence(
    failed: &[Shown],
    succeeded: &[Shown],
    ok_tasks: &[BTreeSet<String>],
    cue: &[String],
) -> Option<(Vec<String>, String)> {
    let fail_outputs: Vec<BTreeSet<String>> =
        failed.iter().map(|r| content_words(&r.output)).collect();
    let outputs: Vec<BTreeSet<String>> =
        succeeded.iter().map(|r| content_words(&r.output)).collect();
    // A word in at most 15% of the failed answers (a reviewer's wrong
    // marks put right answers among them) and not boilerplate.
    let rare_in_failures = |w: &String| {
        share(
            fail_outputs.iter().filter(|o| o.contains(w)).count(),
            failed.len(),
        ) <= 0.15
    };
    let not_boilerplate = |w: &String| {
        share(
            outputs.iter().filter(|o| o.contains(w)).count(),
            outputs.len(),
        ) <= 0.6
    };
    let with_cue: Vec<usize> = (0..succeeded.len())
        .filter(|i| cue.iter().any(|c| ok_tasks[*i].contains(c)))
        .collect();
    let candidates_in = |idx: &[usize]| -> Vec<String> {
        idx.iter()
            .flat_map(|i| outputs[*i].iter())
            .filter(|w| rare_in_failures(w) && not_boilerplate(w))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let chosen = candidates_in(&with_cue);
    let idx = with_cue;
    let sets: Vec<BTreeSet<String>> = idx.iter().map(|i| outputs[*i].clone()).collect();
    let missing = cover(&sets, &chosen, 1, 3);
    let first = missing.first()?;
    let example = idx
        .iter()
        .flat_map(|i| succeeded[*i].output.lines())
        .find(|l| content_words(l).contains(first))
        .unwrap_or(first)
        .trim()
        .to_owned();
    Some((missing, example))
}

/// The rule the shown runs support, as the proposer's JSON answer, or why
/// not.
pub fn answer(prompt: &str) -> Result<String, String> {
    let (class, failed, succeeded) =
        read_prompt(prompt).ok_or("the prompt shows no failure class")?;
    if failed.len() < 2 {
        return Err("too few failed runs to tell what they share".into());
    }
    let fail_tasks: Vec<BTreeSet<String>> = failed.iter().map(|r| content_words(&r.task)).collect();
    let ok_tasks: Vec<BTreeSet<String>> =
        succeeded.iter().map(|r| content_words(&r.task)).collect();
    let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
    for w in fail_tasks.iter().flatten() {
        *counts.entry(w).or_default() += 1;
    }
    // By lift (the failures' share over the successes'), most telling
    // first: a word every kind of ticket has comes last, if at all.
    let mut cue_candidates: Vec<(f64, String)> = counts
        .into_iter()
        .filter_map(|(w, n)| {
            let in_ok = share(
                ok_tasks.iter().filter(|s| s.contains(w)).count(),
                ok_tasks.len(),
            );
            let in_failed = share(n, fail_tasks.len());
            (n >= 2 && in_failed >= 1.5 * in_ok + 0.05)
                .then(|| (in_failed / in_ok.max(0.01), w.clone()))
        })
        .collect();
    cue_candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let cue_candidates: Vec<String> = cue_candidates.into_iter().map(|(_, w)| w).collect();
    let cue = cover_in_order(&fail_tasks, &cue_candidates, 2, 8);
    if cue.is_empty() {
        return Err("no words set the failed tasks apart".into());
    }
    let (missing, example) = missing_sentence(&failed, &succeeded, &ok_tasks, &cue)
        .ok_or("no successful answer has something the failed ones lack")?;
    let alternation = |words: &[String]| {
        format!(
            "(?i)\\b({})\\b",
            words
                .iter()
                .map(|w| regex::escape(w))
                .collect::<Vec<_>>()
                .join("|")
        )
    };
    Ok(json!({
        "kind": "validation",
        "conditions": [
            {"field": "task.description", "op": "matches", "value": alternation(&cue)},
            {"field": "output.body", "op": "matches", "value": alternation(&missing), "not": true}
        ],
        "actions": [{
            "action": "add_instruction",
            "text": format!("The ticket says {{evidence}}: include a sentence like \"{example}\"")
        }],
        "rationale": format!(
            "the failed {class} runs' tasks say {} and their answers lack what the successful answers to such tasks say ({})",
            cue.join("/"),
            missing.join("/")
        )
    })
    .to_string())
}

/// The proposer as a provider (see the module docs).
pub struct EvidenceProposer;

impl Provider for EvidenceProposer {
    fn name(&self) -> String {
        "simulated-proposer".into()
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let prompt = req
                .messages
                .iter()
                .find_map(|m| match m {
                    Message::User(t) => Some(t.as_str()),
                    _ => None,
                })
                .unwrap_or_default();
            let text = answer(prompt).unwrap_or_else(|why| format!("No rule: {why}."));
            Ok(super::simulated::text_answer(text))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(failed: &[(&str, &str)], succeeded: &[(&str, &str)]) -> String {
        let mut p = "Skill `s`: x\n\nFailure class `ToneError`: 3 of 10 runs failed with it.\n\nFailed runs:\n".to_owned();
        for (t, o) in failed {
            p.push_str(&format!("- task: {t}\n  context: {{}}\n  output: {o}\n"));
        }
        p.push_str("\nSuccessful runs:\n");
        for (t, o) in succeeded {
            p.push_str(&format!("- task: {t}\n  context: {{}}\n  output: {o}\n"));
        }
        p
    }

    #[test]
    fn the_rule_comes_from_the_runs_shown() {
        let p = prompt(
            &[
                ("ticket 1: the export broke, I am livid", "Hi,\nThanks."),
                ("ticket 2: invoice wrong, I am livid", "Hi,\nThanks."),
                ("ticket 3: app crashed, I am livid", "Hi,\nThanks."),
                ("ticket 4: app slow, simply appalling", "Hi,\nThanks."),
                ("ticket 5: login, simply appalling", "Hi,\nThanks."),
            ],
            &[
                ("ticket 6: export question", "Hi,\nThanks."),
                (
                    "ticket 7: I am livid about the app",
                    "Hi,\nMy regrets for this.\nThanks.",
                ),
                (
                    "ticket 8: simply appalling service",
                    "Hi,\nMy regrets for this.\nThanks.",
                ),
                ("ticket 9: invoice question", "Hi,\nThanks."),
                ("ticket 10: login question", "Hi,\nThanks."),
                ("ticket 11: receipt question", "Hi,\nThanks."),
                ("ticket 12: export question", "Hi,\nThanks."),
                ("ticket 13: invoice question", "Hi,\nThanks."),
            ],
        );
        let rule: serde_json::Value =
            serde_json::from_str(&answer(&p).expect("a rule")).expect("json");
        let cue = rule["conditions"][0]["value"].as_str().unwrap_or_default();
        assert!(cue.contains("livid") && cue.contains("appalling"), "{cue}");
        let missing = rule["conditions"][1]["value"].as_str().unwrap_or_default();
        assert!(missing.contains("regrets"), "{missing}");
        let text = rule["actions"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("My regrets for this."), "{text}");
        // Nothing sets the failures apart: no rule.
        let flat = prompt(
            &[("ticket 1: export", "Hi"), ("ticket 2: invoice", "Hi")],
            &[("ticket 3: export", "Hi"), ("ticket 4: invoice", "Hi")],
        );
        assert!(answer(&flat).is_err());
    }
}
