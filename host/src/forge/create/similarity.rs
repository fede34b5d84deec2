//! The near-duplicate measure (see the module docs of `create`): the
//! descriptions' words and the tool sequences compared.

use std::collections::BTreeSet;

use serde_json::Value;

const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "to",
    "of",
    "in",
    "into",
    "for",
    "and",
    "or",
    "on",
    "with",
    "from",
    "by",
    "at",
    "it",
    "its",
    "this",
    "that",
    "is",
    "be",
    "please",
    "my",
    "me",
    "you",
    "your",
    "as",
    "then",
    "all",
    "some",
    "out",
    "up",
    // The forge's own descriptions.
    "runs",
    "one",
    "pipeline",
    "procedure",
    "tasks",
    "like",
];

/// Lowercase words of letters and digits, without stop words.
pub(super) fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(str::to_owned)
        .collect()
}

/// Near-duplicate measure; see the module docs.
pub fn similarity(a_desc: &str, a_tools: &[String], b_desc: &str, b_tools: &[String]) -> f64 {
    let a: BTreeSet<String> = words(a_desc).into_iter().collect();
    let b: BTreeSet<String> = words(b_desc).into_iter().collect();
    let union = a.union(&b).count();
    let text = if union == 0 {
        1.0
    } else {
        a.intersection(&b).count() as f64 / union as f64
    };
    let tools = match (a_tools.len(), b_tools.len()) {
        (0, 0) => 1.0,
        (0, _) | (_, 0) => 0.0,
        (n, m) => 1.0 - edit_distance(a_tools, b_tools) as f64 / n.max(m) as f64,
    };
    0.5 * text + 0.5 * tools
}

fn edit_distance(a: &[String], b: &[String]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(x != y);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A skill's tool sequence, for [`similarity`].
pub(super) fn tool_sequence(meta: &crate::skill::SkillMeta) -> Vec<String> {
    if !meta.skillhost.uses.is_empty() {
        return meta.skillhost.uses.clone();
    }
    meta.skillhost
        .pipeline
        .as_ref()
        .and_then(|p| p.get("steps"))
        .and_then(Value::as_array)
        .map(|steps| {
            steps
                .iter()
                .filter_map(|s| s.get("tool").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_is_one_for_the_same_and_low_for_unrelated() {
        let t = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let a = t(&["read_file", "skill_x", "write_file"]);
        assert_eq!(
            similarity("Summarize sales notes", &a, "Summarize sales notes", &a),
            1.0
        );
        let s = similarity(
            "Summarize sales notes",
            &a,
            "Fetch the weather",
            &t(&["http_fetch"]),
        );
        assert!(s < 0.2, "{s}");
        let near = similarity(
            "Runs read_file → write_file, for tasks like \"summarize the q3 sales notes\"",
            &a,
            "Runs read_file → write_file, for tasks like \"summarize the q4 sales notes\"",
            &a,
        );
        assert!(near > 0.85, "{near}");
    }
}
