//! What a skill name looks like to a person: its skeleton. Two names with
//! the same skeleton are one name wherever names of different sources
//! meet (the catalog, `skills install`, the MCP tool names), so that an
//! installed `email_writer`, `e-mail-writer` or `emaiI-writer` cannot stand
//! beside the bundled `email-writer`.
//!
//! The skeleton is the name in NFKC (fullwidth and other compatibility
//! forms to their plain ones), lowercased, mapped through the Unicode
//! confusables table (UTS #39: Cyrillic `е` and Latin `e`, `1` and `l`,
//! `rn` and `m`, fullwidth forms), lowercased again (the table maps some
//! characters to capitals), with everything that is not a letter or a
//! digit removed (`-`, `_`, `.`, spaces, accents once decomposed, invisible
//! characters). Case is folded first: the table maps a capital `I` to `l`,
//! which would make `EMAIL` differ from `email`.

use std::sync::OnceLock;

use unicode_normalization::UnicodeNormalization;

/// The skeleton of `name`: see the module docs.
pub fn skeleton(name: &str) -> String {
    if name.is_ascii() {
        // Every step maps one character at a time, and an ASCII
        // character's skeleton is ASCII: a table computed once is the same.
        let table = ascii_table();
        return name.bytes().map(|b| table[usize::from(b)]).collect();
    }
    full_skeleton(name)
}

/// The skeleton of each ASCII character, computed once by
/// [`full_skeleton`] (a catalog load takes the skeleton of every name).
fn ascii_table() -> &'static [&'static str; 128] {
    static TABLE: OnceLock<[&'static str; 128]> = OnceLock::new();
    TABLE.get_or_init(|| {
        std::array::from_fn(|b| {
            let c = char::from(u8::try_from(b).unwrap_or(0));
            &*full_skeleton(&c.to_string()).leak()
        })
    })
}

/// [`skeleton`], step by step, for any text.
fn full_skeleton(name: &str) -> String {
    let lower: String = name.nfkc().flat_map(char::to_lowercase).collect();
    let once: String = unicode_security::skeleton(&lower)
        .flat_map(char::to_lowercase)
        .collect();
    // Twice: a prototype lowercased may have a prototype of its own.
    unicode_security::skeleton(&once)
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect()
}

/// Whether the character `c` looks like `target`: the same character, or
/// one the confusables table maps to it (fullwidth `［` to `[`).
pub fn looks_like(c: char, target: char) -> bool {
    if c == target || c.is_ascii() {
        return c == target;
    }
    let mut buf = [0u8; 4];
    let mut mapped = unicode_security::skeleton(c.encode_utf8(&mut buf));
    mapped.next() == Some(target) && mapped.next().is_none()
}

/// Whether `a` and `b` look like one name (the same [`skeleton`]).
pub fn same_skeleton(a: &str, b: &str) -> bool {
    skeleton(a) == skeleton(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_look_alikes_share_a_skeleton() {
        for twin in [
            "email-writer",
            "email_writer",
            "email--writer",
            "e-mail-writer",
            "email-writer-",
            "emailwriter",
            "Email.Writer",
            "EMAIL WRITER",
            "emai1-writer",
            "ernail-writer",
        ] {
            assert_eq!(skeleton(twin), skeleton("email-writer"), "{twin}");
        }
    }

    #[test]
    fn unicode_look_alikes_share_a_skeleton() {
        for twin in [
            "еmail-writer",             // Cyrillic е
            "ｅｍａｉｌ－ｗｒｉｔｅｒ", // fullwidth
            "email\u{200b}-writer",     // zero-width space
            "émail-writer",             // an accent
            "emaіl-writer",             // Ukrainian і
        ] {
            assert_eq!(skeleton(twin), skeleton("email-writer"), "{twin}");
        }
    }

    #[test]
    fn the_ascii_table_is_the_full_skeleton() {
        let printable: Vec<char> = (0x20u8..0x7f).map(char::from).collect();
        for a in &printable {
            for b in &printable {
                let name = format!("{a}{b}m");
                assert_eq!(skeleton(&name), full_skeleton(&name), "{name:?}");
            }
        }
    }

    #[test]
    fn different_names_keep_different_skeletons() {
        for other in [
            "email-reader",
            "mail-writer",
            "email-writer-2",
            "text-summarizer",
        ] {
            assert!(!same_skeleton(other, "email-writer"), "{other}");
        }
        assert!(!skeleton("email-writer").is_empty());
    }
}
