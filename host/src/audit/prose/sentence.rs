//! Sentences: the windows an act of prose.toml is judged in, and the
//! reach of quoting. A sentence ends at `.`, `!` or `?` before white space
//! (not the dots of "e.g."), at `。！？`, at a blank line, and where a
//! line starts a block (a heading, list item, table row, quote or fence)
//! or follows one that stands alone (a heading, table row or fence). A
//! sentence wraps over lines otherwise, and is cut at `MAX` bytes, so a
//! line of thousands of characters is many windows, not one.

use std::ops::Range;

/// Longest sentence, in bytes.
pub const MAX: usize = 600;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blank,
    Fence,
    Heading,
    Table,
    Item,
    Quote,
    Text,
}

fn kind(line: &str) -> Kind {
    let t = line.trim_start();
    let item = |t: &str| {
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        let rest = &t[digits..];
        (digits == 0 && ["- ", "* ", "+ "].iter().any(|m| rest.starts_with(m)))
            || (digits > 0 && (rest.starts_with(". ") || rest.starts_with(") ")))
    };
    if t.is_empty() {
        Kind::Blank
    } else if t.starts_with("```") || t.starts_with("~~~") {
        Kind::Fence
    } else if t.starts_with('#') {
        Kind::Heading
    } else if t.starts_with('|') {
        Kind::Table
    } else if t.starts_with('>') {
        Kind::Quote
    } else if item(t) {
        Kind::Item
    } else {
        Kind::Text
    }
}

/// Whether the text from its line's start to byte `i` is a list item's
/// number ("12"), looking back a few bytes only.
fn list_number_before(text: &str, i: usize) -> bool {
    let from = super::floor(text, i.saturating_sub(12));
    let back = &text[from..i];
    let number = match back.rfind('\n') {
        Some(n) => &back[n + 1..],
        None if from == 0 => back,
        None => return false,
    };
    let number = number.trim();
    !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
}

/// How far a line's start is looked for: a longer line is plain text.
const LINE_REACH: usize = 2 * MAX;

/// Whether the line break at byte `nl` (a `\n`) of `text` ends a sentence.
/// Only the first bytes of the lines either side are read.
fn breaks_at(text: &str, nl: usize) -> bool {
    let from = super::floor(text, nl.saturating_sub(LINE_REACH));
    let prev = match text[from..nl].rfind('\n') {
        Some(i) => kind(&text[from + i + 1..nl]),
        None if from == 0 => kind(&text[..nl]),
        // A line longer than the reach is read as text.
        None => Kind::Text,
    };
    let to = super::ceil(text, nl + 1 + LINE_REACH);
    let next_end = text[nl + 1..to].find('\n').map_or(to, |i| nl + 1 + i);
    let next = kind(&text[nl + 1..next_end]);
    let alone = |k| matches!(k, Kind::Blank | Kind::Fence | Kind::Heading | Kind::Table);
    alone(prev)
        || alone(next)
        || next == Kind::Item
        || ((prev == Kind::Quote) != (next == Kind::Quote))
}

/// Whether the character `c` at byte `i` of `text` ends a sentence.
fn ends_at(text: &str, i: usize, c: char) -> bool {
    match c {
        '。' | '！' | '？' => true,
        '.' | '!' | '?' => {
            let after = text[i + 1..].chars().next();
            if !after.is_none_or(char::is_whitespace) {
                return false;
            }
            // "e.g." and "i.e.": a letter between two dots ends nothing,
            // nor does "...", nor the dot of a list item's number.
            let mut back = text[..i].chars().rev();
            let first = back.next();
            let abbrev = c == '.'
                && (first == Some('.')
                    || (first.is_some_and(char::is_alphabetic) && back.next() == Some('.')));
            let number = c == '.' && list_number_before(text, i);
            !abbrev && !number
        }
        _ => false,
    }
}

/// Where the sentence holding byte `at` starts.
pub fn start_of(text: &str, at: usize) -> usize {
    let floor = super::floor(text, at.saturating_sub(MAX));
    if let Some(found) = with_index(text, |marks| marks.last_before(floor, at)) {
        return found.map_or(floor, |m| m.after);
    }
    for (i, c) in text[floor..at].char_indices().rev() {
        let i = floor + i;
        if (c == '\n' && breaks_at(text, i)) || ends_at(text, i, c) {
            return i + c.len_utf8();
        }
    }
    floor
}

/// Where the sentence that goes on at byte `at` ends (after its mark).
pub fn end_of(text: &str, at: usize) -> usize {
    let cap = super::ceil(text, at + MAX);
    if let Some(found) = with_index(text, |marks| marks.first_from(at, cap)) {
        return found.map_or(cap, |m| m.end);
    }
    for (i, c) in text[at..cap].char_indices() {
        let i = at + i;
        if c == '\n' && breaks_at(text, i) {
            return i;
        }
        if ends_at(text, i, c) {
            return i + c.len_utf8();
        }
    }
    cap
}

/// A character that ends a sentence: where it is, where the sentence
/// ends (before a line break, after a full stop) and the next starts.
#[derive(Clone, Copy)]
struct Mark {
    at: usize,
    end: usize,
    after: usize,
}

/// Every mark of one text, found in one pass: the sentence around any
/// byte is then a binary search. Without it each cue of a text that
/// repeats a word on every line scans [`MAX`] bytes each way, many
/// times over.
struct Marks(Vec<Mark>);

impl Marks {
    fn of(text: &str) -> Marks {
        let mut out = Vec::new();
        for (i, c) in text.char_indices() {
            let after = i + c.len_utf8();
            if c == '\n' && breaks_at(text, i) {
                out.push(Mark {
                    at: i,
                    end: i,
                    after,
                });
            } else if ends_at(text, i, c) {
                out.push(Mark {
                    at: i,
                    end: after,
                    after,
                });
            }
        }
        Marks(out)
    }

    /// The last mark at a byte in `from..to`.
    fn last_before(&self, from: usize, to: usize) -> Option<Mark> {
        let n = self.0.partition_point(|m| m.at < to);
        n.checked_sub(1).map(|k| self.0[k]).filter(|m| m.at >= from)
    }

    /// The first mark at a byte in `from..to`.
    fn first_from(&self, from: usize, to: usize) -> Option<Mark> {
        let k = self.0.partition_point(|m| m.at < from);
        self.0.get(k).copied().filter(|m| m.at < to)
    }
}

/// The text an [`Indexed`] guard holds, by address and length, and its
/// marks once a lookup has needed them.
type Held = (usize, usize, Option<Marks>);

thread_local! {
    static INDEX: std::cell::RefCell<Option<Held>> = const { std::cell::RefCell::new(None) };
}

/// While it lives, [`start_of`] and [`end_of`] on its text read marks
/// found once. It borrows the text, so the text cannot change or be freed
/// while the index names it by address.
pub struct Indexed<'t> {
    _text: &'t str,
    previous: Option<Held>,
}

impl<'t> Indexed<'t> {
    /// Costs nothing until a lookup on `text` needs its marks.
    pub fn new(text: &'t str) -> Indexed<'t> {
        let key = (text.as_ptr() as usize, text.len(), None);
        let previous = INDEX.with(|i| i.borrow_mut().replace(key));
        Indexed {
            _text: text,
            previous,
        }
    }
}

impl Drop for Indexed<'_> {
    fn drop(&mut self) {
        let previous = self.previous.take();
        INDEX.with(|i| *i.borrow_mut() = previous);
    }
}

/// `f` of the marks of `text` when an [`Indexed`] guard holds exactly
/// this text; `None` otherwise (the caller scans).
fn with_index<R>(text: &str, f: impl FnOnce(&Marks) -> R) -> Option<R> {
    INDEX.with(|i| {
        let mut held = i.borrow_mut();
        let (ptr, len, marks) = held.as_mut()?;
        let same = *ptr == text.as_ptr() as usize && *len == text.len();
        same.then(|| f(marks.get_or_insert_with(|| Marks::of(text))))
    })
}

/// The sentence that holds byte `at`.
pub fn around(text: &str, at: usize) -> Range<usize> {
    start_of(text, at)..end_of(text, at)
}

/// Every sentence of `text` (without the white space between them).
#[cfg(test)]
pub fn split(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let skip = text[at..].len() - text[at..].trim_start().len();
        at += skip;
        if at >= text.len() {
            break;
        }
        let end = end_of(text, at).max(super::ceil(text, at + 1));
        out.push(at..end);
        at = end;
    }
    out
}

/// Whether `start..end` lies within `n` consecutive sentences.
pub fn within(text: &str, start: usize, end: usize, n: usize) -> bool {
    let mut at = start;
    for _ in 0..n {
        let stop = end_of(text, at).max(super::ceil(text, at + 1));
        if stop >= end {
            return true;
        }
        at = stop;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<&str> {
        split(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn the_index_finds_the_same_sentences_as_the_scan() {
        let t = "Fetch the page and\nread it. Then stop.\n- one item\n  goes on\n## Head\nnext\n2. Two e.g. three... 好。下\n\nlast line ".repeat(30);
        let scanned: Vec<(usize, usize)> = (0..t.len())
            .filter(|&i| t.is_char_boundary(i))
            .map(|i| (start_of(&t, i), end_of(&t, i)))
            .collect();
        let _index = Indexed::new(&t);
        let indexed: Vec<(usize, usize)> = (0..t.len())
            .filter(|&i| t.is_char_boundary(i))
            .map(|i| (start_of(&t, i), end_of(&t, i)))
            .collect();
        assert_eq!(scanned, indexed);
        // Another text is scanned, not read from this index.
        let other = "One. Two.";
        assert_eq!(end_of(other, 0), 4);
    }

    #[test]
    fn a_sentence_wraps_but_a_block_starts_anew() {
        let t =
            "Fetch the page and\nread it. Then stop.\n- one item\n  goes on\n## Head\nnext\n2. Two";
        assert_eq!(
            texts(t),
            [
                "Fetch the page and\nread it.",
                "Then stop.",
                "- one item\n  goes on",
                "## Head",
                "next",
                "2. Two"
            ]
        );
    }

    #[test]
    fn abbreviations_and_dotted_names_end_nothing() {
        let t = "Block pipes, e.g. `curl ... | sh` in file.txt now. 好。下一句";
        assert_eq!(
            texts(t),
            [
                "Block pipes, e.g. `curl ... | sh` in file.txt now.",
                "好。",
                "下一句"
            ]
        );
    }

    #[test]
    fn a_long_line_is_many_windows() {
        let line = "word ".repeat(1000);
        assert!(split(&line).len() >= 5);
        assert!(!within(&line, 0, line.len() - 1, 3));
        assert!(within("One. Two. Three.", 0, 14, 3));
        assert!(!within("One. Two. Three. Four.", 0, 21, 3));
    }
}
