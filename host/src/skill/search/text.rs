//! Words and terms: how triggers, tags, names and descriptions are cut up
//! for matching.

/// Words that carry no meaning for picking a skill (sorted: binary search).
pub(super) const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "if",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "so", "that",
    "the", "their", "them", "then", "this", "to", "use", "used", "uses", "using", "via", "want",
    "we", "what", "when", "which", "will", "with", "you", "your",
];

pub(super) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Lowercase alphanumeric runs: word boundaries for triggers and tags.
/// Articles are dropped so that "write an email" meets the trigger
/// "write email".
pub(super) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !matches!(w.as_str(), "a" | "an" | "the"))
        .collect()
}

/// Calls `f` with each BM25 term of `text`: lowercase words without
/// stopwords, plural endings folded. `buf` is scratch space, so indexing
/// ten thousand descriptions does not allocate per word.
pub(super) fn for_each_term(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    for raw in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        buf.clear();
        if raw.is_ascii() {
            buf.extend(raw.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        } else {
            buf.extend(raw.chars().flat_map(char::to_lowercase));
        }
        if is_stopword(buf) {
            continue;
        }
        stem(buf);
        f(buf);
    }
}

pub(super) fn is_stopword(w: &str) -> bool {
    STOPWORDS.binary_search(&w).is_ok()
}

/// Folds the commonest English plural endings so `emails` finds `email`.
fn stem(w: &mut String) {
    let n = w.len();
    if n > 4 && w.ends_with("ies") {
        w.truncate(n - 3);
        w.push('y');
    } else if n > 3
        && w.ends_with('s')
        && !w.ends_with("ss")
        && !w.ends_with("us")
        && !w.ends_with("is")
    {
        w.truncate(n - 1);
    }
}
