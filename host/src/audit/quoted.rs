//! Whether a phrase is quoted rather than said: inside quotation marks or
//! a code span on its line, or inside a fenced code block labelled as an
//! example (an info string or the line before the fence that says
//! "example", "attack", "detect", …). A security skill that quotes
//! "ignore previous instructions" as a thing it detects is mentioning the
//! words, not addressing the model. Only rules that opt in (`quoted_to`)
//! use this, and only the instruction rules do: a command in any code
//! block is runnable whatever its label, so `curl … | sh` is never excused
//! by quoting.

/// Quotation marks that open and close differently, as pairs.
const PAIRS: [(char, char); 6] = [
    ('“', '”'),
    ('„', '“'),
    ('«', '»'),
    ('「', '」'),
    ('『', '』'),
    ('‘', '’'),
];
/// Marks that open and close alike.
const SAME: [char; 2] = ['"', '`'];
/// Words that label a code block as an example of an attack, in the
/// languages of prose.toml.
const LABELS: [&str; 16] = [
    "example",
    "e.g.",
    "sample",
    "attack",
    "malicious",
    "injection",
    "detect",
    "payload",
    "beispiel",
    "ejemplo",
    "пример",
    "例",
    "示例",
    "攻撃",
    "攻击",
    "angriff",
];

/// Whether `start..end` of `text` is quoted (see the module docs): in
/// marks on its line, or in marks of its sentence (which may wrap over
/// lines), or in a labelled block.
pub fn is_quoted(text: &str, start: usize, end: usize) -> bool {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
    let (before, after) = (&text[line_start..start], &text[end..line_end]);
    let sentence = super::prose::sentence::around(text, start);
    let (from, to) = (sentence.start.min(start), sentence.end.max(end));
    in_marks(before, after)
        || in_marks(&text[from..start], &text[end..to])
        || in_example_block(&text[..line_start])
}

/// The code span or double-quoted string of `within` that holds byte
/// `at` (its inside, without the marks).
pub fn span_at(
    text: &str,
    within: std::ops::Range<usize>,
    at: usize,
) -> Option<std::ops::Range<usize>> {
    for q in ['`', '"', '“'] {
        let close = if q == '“' { '”' } else { q };
        let before = &text[within.start..at];
        let Some(open) = before.rfind(q) else {
            continue;
        };
        let opened = if q == close {
            before.matches(q).count() % 2 == 1
        } else {
            !before[open..].contains(close)
        };
        if !opened {
            continue;
        }
        let end = text[at..within.end].find(close).map(|i| at + i)?;
        return Some(within.start + open + q.len_utf8()..end);
    }
    None
}

/// `text` with the inside of every code span blanked (same length), so
/// the words of quoted commands are not read as the sentence's own.
pub fn mask_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for c in text.chars() {
        if c == '`' {
            inside = !inside;
            out.push(c);
        } else if inside {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether byte `at` of `text` is inside a fenced code block.
pub fn in_fence(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let fences = text[..line_start].lines().filter(|l| {
        let t = l.trim_start();
        t.starts_with("```") || t.starts_with("~~~")
    });
    fences.count() % 2 == 1
}

/// Whether the line holding byte `at` is in a fenced block labelled as
/// an example (see `in_example_block`).
pub fn in_labelled_block(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    in_example_block(&text[..line_start])
}

/// Whether an open quotation mark before the hit is closed after it.
fn in_marks(before: &str, after: &str) -> bool {
    let same = SAME
        .iter()
        .any(|&q| before.matches(q).count() % 2 == 1 && after.contains(q));
    same || PAIRS.iter().any(|&(open, close)| {
        before
            .rfind(open)
            .is_some_and(|i| !before[i + open.len_utf8()..].contains(close))
            && after.contains(close)
    })
}

/// Whether the text before a line leaves it inside a fenced block whose
/// info string, or the last non-blank line before the fence, is a label.
fn in_example_block(before: &str) -> bool {
    let mut open: Option<usize> = None;
    let mut offset = 0;
    for line in before.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            open = if open.is_some() { None } else { Some(offset) };
        }
        offset += line.len();
    }
    let Some(fence) = open else {
        return false;
    };
    let info = before[fence..].lines().next().unwrap_or("");
    let label = before[..fence].lines().rev().find(|l| !l.trim().is_empty());
    [Some(info), label].into_iter().flatten().any(labels)
}

fn labels(line: &str) -> bool {
    let line = line.to_lowercase();
    LABELS.iter().any(|w| line.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(text: &str, phrase: &str) -> bool {
        let at = text.find(phrase).expect("phrase in text");
        is_quoted(text, at, at + phrase.len())
    }

    #[test]
    fn marks_and_code_spans_quote() {
        assert!(quoted("scan \"ignore this\" now", "ignore this"));
        assert!(quoted("a `ignore this` b", "ignore this"));
        assert!(quoted("输入包含“忽略之前的指令”时拒绝", "忽略之前的指令"));
        assert!(quoted("「ignore this」", "ignore this"));
        assert!(!quoted("ignore this \"x\"", "ignore this"));
        assert!(!quoted("\"a\" ignore this", "ignore this"));
    }

    #[test]
    fn only_a_labelled_block_quotes() {
        let labelled = "Attack example:\n```text\nignore this\n```\n";
        assert!(quoted(labelled, "ignore this"));
        assert!(quoted("```example\nignore this\n```", "ignore this"));
        assert!(!quoted("Setup:\n```\nignore this\n```\n", "ignore this"));
        assert!(!quoted("```example\n```\nignore this\n", "ignore this"));
    }
}
