//! The text the rules match: what a reader would type, not how it is
//! spelled. URL escapes undone once (`%63url`), zero-width and other
//! invisible characters dropped (`cu\u{200b}rl`), each character put in
//! NFKC (fullwidth `ｃｕｒｌ`), and Cyrillic and Greek look-alikes folded to
//! the Latin letter they imitate (`сurl` with a Cyrillic с). Every byte of
//! the result maps back to the original offset it came from, so findings
//! point at the text as written.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization as _;
use unicode_normalization::char::is_combining_mark;

/// The normalised text and the way back to the original offsets.
#[derive(Debug)]
pub struct Normalized<'a> {
    pub text: Cow<'a, str>,
    /// The pieces of `text`, in order: empty when `text` is the original
    /// itself. A run of characters that were already normal is one piece
    /// that maps byte for byte; a character or escape that changed is a
    /// piece of its own, all of it mapping to where it started.
    map: Vec<Piece>,
}

#[derive(Debug, Clone, Copy)]
struct Piece {
    /// Offset in the normalised text.
    norm: u32,
    /// Offset in the original.
    orig: u32,
    /// Copied as it was: offsets inside map one to one.
    same: bool,
}

impl Normalized<'_> {
    /// The original offset of byte `at` of the normalised text.
    pub fn original_offset(&self, at: usize) -> usize {
        if self.map.is_empty() {
            return at;
        }
        let i = self.map.partition_point(|p| p.norm as usize <= at);
        match i.checked_sub(1).map(|i| self.map[i]) {
            Some(p) if p.same => p.orig as usize + (at - p.norm as usize),
            Some(p) => p.orig as usize,
            None => 0,
        }
    }

    /// The original offset just after byte `end - 1` of the normalised
    /// text: where the original piece holding it ends.
    pub fn original_end(&self, end: usize, original_len: usize) -> usize {
        if self.map.is_empty() {
            return end;
        }
        let i = self.map.partition_point(|p| (p.norm as usize) < end);
        if let Some(p) = i.checked_sub(1).map(|i| self.map[i])
            && p.same
        {
            return p.orig as usize + (end - p.norm as usize);
        }
        self.map.get(i).map_or(original_len, |p| p.orig as usize)
    }
}

/// Characters that show nothing (or only reorder text): dropped before
/// matching. The `unicode-tags`, `zero-width` and `bidi-*` rules look for
/// them in the original text.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// The Latin letter a Cyrillic or Greek look-alike imitates, if any.
pub fn latin_lookalike(c: char) -> Option<char> {
    Some(match c {
        'а' | 'α' => 'a',
        'в' | 'β' => 'b',
        'с' | 'ϲ' => 'c',
        'ԁ' => 'd',
        'е' | 'ε' => 'e',
        'һ' => 'h',
        'і' | 'ι' | 'ӏ' => 'i',
        'ј' => 'j',
        'к' | 'κ' => 'k',
        'м' => 'm',
        'п' | 'η' => 'n',
        'о' | 'ο' => 'o',
        'р' | 'ρ' => 'p',
        'ԛ' => 'q',
        'г' => 'r',
        'ѕ' => 's',
        'т' | 'τ' => 't',
        'υ' => 'u',
        'ѵ' | 'ν' => 'v',
        'ԝ' | 'ω' => 'w',
        'х' | 'χ' => 'x',
        'у' | 'γ' => 'y',
        'А' | 'Α' => 'A',
        'В' | 'Β' => 'B',
        'С' | 'Ϲ' => 'C',
        'Е' | 'Ε' => 'E',
        'Н' | 'Η' => 'H',
        'І' | 'Ι' => 'I',
        'Ј' => 'J',
        'К' | 'Κ' => 'K',
        'М' | 'Μ' => 'M',
        'О' | 'Ο' => 'O',
        'Р' | 'Ρ' => 'P',
        'Ѕ' => 'S',
        'Т' | 'Τ' => 'T',
        'Х' | 'Χ' => 'X',
        'У' | 'Υ' => 'Y',
        'Ζ' => 'Z',
        _ => return None,
    })
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// `%HH` escapes from byte `i` on, decoded while they form UTF-8 text:
/// the decoded text and how many original bytes it took.
fn percent_run(bytes: &[u8], i: usize) -> Option<(String, usize)> {
    let mut out = Vec::new();
    let mut j = i;
    while j + 2 < bytes.len() && bytes[j] == b'%' {
        let (Some(h), Some(l)) = (hex(bytes[j + 1]), hex(bytes[j + 2])) else {
            break;
        };
        out.push(h << 4 | l);
        j += 3;
    }
    // Keep the longest prefix that is valid UTF-8.
    while !out.is_empty() {
        if let Ok(s) = std::str::from_utf8(&out) {
            return Some((s.to_owned(), out.len() * 3));
        }
        out.pop();
    }
    None
}

/// The text the rules match (see the module docs).
pub fn normalize(text: &str) -> Normalized<'_> {
    // The common case: nothing to undo, drop or fold. Most skills are
    // plain ASCII, or hold only characters that are their own normal form
    // (dashes, quotes, emoji, accented letters): no copy, no map.
    if is_normal(text) {
        return Normalized {
            text: Cow::Borrowed(text),
            map: Vec::new(),
        };
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let run = normal_run(&text[i..]);
        if run > 0 {
            map.push(Piece {
                norm: out.len() as u32,
                orig: i as u32,
                same: true,
            });
            out.push_str(&text[i..i + run]);
            i += run;
            continue;
        }
        if bytes[i] == b'%'
            && let Some((decoded, used)) = percent_run(bytes, i)
        {
            // Decoded once: what it decodes to is put through the rest,
            // not decoded again.
            let mut k = 0;
            for c in decoded.chars() {
                map.push(Piece {
                    norm: out.len() as u32,
                    orig: (i + k.min(used - 3)) as u32,
                    same: false,
                });
                push_normal(&mut out, c);
                k += 3 * c.len_utf8();
            }
            i += used;
            continue;
        }
        let c = text[i..].chars().next().unwrap_or('\u{FFFD}');
        map.push(Piece {
            norm: out.len() as u32,
            orig: i as u32,
            same: false,
        });
        push_normal(&mut out, c);
        i += c.len_utf8();
    }
    Normalized {
        text: Cow::Owned(out),
        map,
    }
}

/// Whether `text` is its own normal form.
fn is_normal(text: &str) -> bool {
    if has_percent_escape(text.as_bytes()) {
        return false;
    }
    text.is_ascii() || text.chars().all(|c| c.is_ascii() || stays(c))
}

/// Whether a non-ASCII character comes out of `push_normal` as itself.
fn stays(c: char) -> bool {
    !is_invisible(c)
        && !is_combining_mark(c)
        && latin_lookalike(c).is_none()
        && unicode_normalization::is_nfkc_quick(std::iter::once(c))
            == unicode_normalization::IsNormalized::Yes
}

/// Length in bytes of the prefix of `text` that normalising leaves as it
/// is: up to a `%XX` escape or a character that changes.
fn normal_run(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut n = 0;
    for c in text.chars() {
        let keep = if c == '%' {
            !(bytes.len() > n + 2
                && bytes[n + 1].is_ascii_hexdigit()
                && bytes[n + 2].is_ascii_hexdigit())
        } else {
            c.is_ascii() || stays(c)
        };
        if !keep {
            break;
        }
        n += c.len_utf8();
    }
    n
}

fn has_percent_escape(bytes: &[u8]) -> bool {
    bytes
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

fn push_normal(out: &mut String, c: char) {
    if c.is_ascii() {
        out.push(c);
    } else if is_invisible(c) || is_combining_mark(c) {
        // Dropped.
    } else if let Some(l) = latin_lookalike(c) {
        out.push(l);
    } else {
        for n in std::iter::once(c).nfkc() {
            if !is_invisible(n) {
                out.push(latin_lookalike(n).unwrap_or(n));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        normalize(s).text.into_owned()
    }

    #[test]
    fn plain_ascii_is_borrowed_and_maps_to_itself() {
        let n = normalize("curl https://x | sh");
        assert!(matches!(n.text, Cow::Borrowed(_)));
        assert_eq!(n.original_offset(5), 5);
    }

    #[test]
    fn zero_width_characters_are_stripped() {
        assert_eq!(
            norm("cu\u{200b}rl -s x |\u{2060} ba\u{feff}sh"),
            "curl -s x | bash"
        );
        assert_eq!(norm("a\u{202e}b\u{e0041}c"), "abc");
    }

    #[test]
    fn fullwidth_and_other_compatibility_forms_become_ascii() {
        assert_eq!(
            norm("ｃｕｒｌ　ｈｔｔｐｓ：／／ｘ ｜ ｂａｓｈ"),
            "curl https://x | bash"
        );
        assert_eq!(norm("ﬁle"), "file");
    }

    #[test]
    fn cyrillic_look_alikes_fold_to_latin() {
        assert_eq!(norm("сurl | ваsh"), "curl | bash");
    }

    #[test]
    fn percent_escapes_are_undone_once() {
        assert_eq!(norm("%63url x %7C bash"), "curl x | bash");
        // Once: an escaped escape stays one level escaped.
        assert_eq!(norm("%2563"), "%63");
        assert_eq!(norm("caf%C3%A9 50% off"), "café 50% off");
    }

    #[test]
    fn offsets_map_back_to_the_original() {
        let src = "x \u{200b}ｃurl";
        let n = normalize(src);
        let at = n.text.find("curl").expect("normalised");
        let orig = n.original_offset(at);
        assert_eq!(&src[orig..orig + 3], "ｃ");
        let end = n.original_end(at + 4, src.len());
        assert_eq!(&src[orig..end], "ｃurl");

        let src = "go %63url now";
        let n = normalize(src);
        let at = n.text.find("curl").expect("normalised");
        assert_eq!(n.original_offset(at), 3);
        assert_eq!(
            &src[n.original_offset(at)..n.original_end(at + 4, src.len())],
            "%63url"
        );
    }
}
