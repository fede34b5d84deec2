//! Look-alike host names: a label that reads as an ASCII name it is not
//! (its UTS #39 skeleton), or Latin mixed with look-alike scripts.

use super::super::normalize::latin_lookalike;

fn is_lookalike_script(c: char) -> bool {
    matches!(c, '\u{0370}'..='\u{03FF}' | '\u{1F00}'..='\u{1FFF}' | '\u{0400}'..='\u{052F}'
        | '\u{1C80}'..='\u{1C8F}' | '\u{2DE0}'..='\u{2DFF}' | '\u{A640}'..='\u{A69F}'
        | '\u{0530}'..='\u{058F}' | '\u{13A0}'..='\u{13FF}')
}

fn is_latin(c: char) -> bool {
    c.is_ascii_alphabetic()
        || matches!(c, '\u{00C0}'..='\u{024F}' | '\u{1E00}'..='\u{1EFF}' | '\u{FF21}'..='\u{FF5A}')
}

/// A host name with a label that mixes Latin with a look-alike script, or
/// that is spelled only in look-alikes under a Latin top-level domain.
pub fn spoofed_host(host: &str) -> bool {
    if host.is_ascii() {
        return false;
    }
    let labels: Vec<&str> = host.split('.').collect();
    let latin_tld = labels.last().is_some_and(|t| t.chars().all(is_latin));
    labels.iter().any(|label| imitates_ascii(label)) || mixes_lookalikes(&labels, latin_tld)
}

/// Whether a label that is not ASCII has an ASCII confusable skeleton
/// (UTS #39): it reads as an ASCII name it is not, whatever its scripts
/// (Cyrillic `аррӏе`, or Latin itself: IPA `ɡ`, dotless `ı`). An honest
/// name in another script or with accents keeps letters no ASCII letter
/// imitates (`münchen`, `пример`).
fn imitates_ascii(label: &str) -> bool {
    !label.is_ascii()
        && label.chars().count() > 1
        && unicode_security::confusable_detection::skeleton(label).all(|c| c.is_ascii())
}

/// Whether a label that holds ASCII letters mixes them with look-alikes.
pub(super) fn imitates_with_ascii(host: &str) -> bool {
    host.split('.').any(|label| {
        label.bytes().any(|b| b.is_ascii_alphabetic())
            && (imitates_ascii(label) || mixes_lookalikes(&[label], false))
    })
}

/// Latin mixed with look-alike scripts in one label, or a label wholly in
/// look-alikes under a Latin top-level domain.
fn mixes_lookalikes(labels: &[&str], latin_tld: bool) -> bool {
    labels.iter().any(|label| {
        let (mut latin, mut other, mut all_lookalike, mut non_ascii) = (false, false, true, false);
        for c in label.chars() {
            if is_latin(c) {
                latin = true;
                all_lookalike = false;
            } else if is_lookalike_script(c) {
                other = true;
                non_ascii = true;
                all_lookalike &= latin_lookalike(c).is_some();
            } else if !c.is_ascii() {
                non_ascii = true;
                all_lookalike = false;
            }
        }
        (latin && other) || (non_ascii && all_lookalike && latin_tld && label.chars().count() > 1)
    })
}
