//! The `text-summarizer` handler: extractive summarisation by content-word
//! frequency. Deterministic and offline, so it answers the same way every
//! time and needs no model.

use std::collections::HashMap;

use skillhost_guest::{Failure, HandlerResult, Output, Task};

const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he",
    "her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "more", "most", "my",
    "no", "not", "of", "on", "one", "or", "our", "out", "she", "so", "some", "such", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "up",
    "us", "was", "we", "were", "what", "when", "which", "while", "who", "will", "with", "would",
    "you", "your",
];

fn summarize(task: Task) -> HandlerResult {
    let wanted: i64 = task.field_opt("sentences")?.unwrap_or(3);
    if !(1..=20).contains(&wanted) {
        return Err(Failure::new(
            "InvalidInput",
            format!("context field `sentences` must be between 1 and 20, got {wanted}"),
        ));
    }
    let given = task.str("text");
    let text = if given.trim().is_empty() {
        strip_instruction(&task.description)
    } else {
        given
    };
    let sentences = split_sentences(text);
    if sentences.is_empty() {
        return Err(Failure::new(
            "EmptyInput",
            "there is no text to summarize: pass it in the context field `text`",
        ));
    }
    let summary = pick(&sentences, wanted as usize);
    let mut out = Output::text(summary.join(" "));
    if summary.len() < sentences.len() {
        out = out.flag("condensed");
    }
    Ok(out)
}

skillhost_guest::export_handler!(summarize);

/// "Summarize: <text>" -> "<text>".
fn strip_instruction(task: &str) -> &str {
    match task.split_once(':') {
        Some((head, rest)) if head.len() < 40 && !rest.trim().is_empty() => rest.trim(),
        _ => task.trim(),
    }
}

fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (n, (i, c)) in chars.iter().enumerate() {
        let at_end = n + 1 == chars.len();
        let boundary = matches!(c, '.' | '!' | '?' | '\n')
            && chars
                .get(n + 1)
                .is_none_or(|(_, next)| next.is_whitespace());
        if boundary || at_end {
            let end = i + c.len_utf8();
            let s = text[start..end].trim();
            if s.chars().any(char::is_alphanumeric) {
                out.push(s);
            }
            start = end;
        }
    }
    out
}

fn content_words(sentence: &str) -> impl Iterator<Item = String> + '_ {
    sentence
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
}

/// The `n` highest-scoring sentences, in their original order.
fn pick<'a>(sentences: &[&'a str], n: usize) -> Vec<&'a str> {
    let mut freq: HashMap<String, usize> = HashMap::new();
    for s in sentences {
        for w in content_words(s) {
            *freq.entry(w).or_default() += 1;
        }
    }
    let mut scored: Vec<(usize, f64)> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let words: Vec<String> = content_words(s).collect();
            let total: usize = words.iter().map(|w| freq[w]).sum();
            // Normalise by length so long sentences do not win by size alone.
            let score = total as f64 / (words.len() as f64 + 1.0).sqrt();
            (i, score)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut keep: Vec<usize> = scored.into_iter().take(n).map(|(i, _)| i).collect();
    keep.sort_unstable();
    keep.into_iter().map(|i| sentences[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_count() {
        let text =
            "Rust is fast. Rust is safe and Rust is fast. Cats sleep. Rust compiles to wasm.";
        let s = split_sentences(text);
        assert_eq!(s.len(), 4);
        let p = pick(&s, 2);
        assert_eq!(p.len(), 2);
        assert!(!p.contains(&"Cats sleep."));
        let idx: Vec<usize> = p
            .iter()
            .map(|x| s.iter().position(|y| y == x).unwrap())
            .collect();
        assert!(idx.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn strips_instruction_prefix() {
        assert_eq!(
            strip_instruction("Summarize: the text here."),
            "the text here."
        );
        assert_eq!(strip_instruction("no colon here"), "no colon here");
    }
}
