//! Programs that decode an encoding: what they print is code or data the
//! skill's text does not show (`echo BLOB | base32 -d | bash`).

use super::super::{Run, Value};
use super::Span;
use crate::audit::flow::Taint;

impl Run<'_, '_> {
    /// `data` as a decoder's output: marked decoded when `prog` with
    /// `args` decodes (so a shell that runs it runs hidden code).
    pub(super) fn decoded(&self, prog: &str, args: &[Value], data: Taint, span: Span) -> Taint {
        if decodes(prog, args) {
            data.union(Taint::new(Taint::DECODED, span.0))
        } else {
            data
        }
    }
}

/// Whether `prog ARGS` decodes: base-N and hex decoders given their
/// decode flag, uudecode, decompressors, `rev`, and `tr` mapping one
/// letter range onto another (rot13 and its kin). (`gunzip` and `zcat`
/// are archives' programs, read where archives are.)
fn decodes(prog: &str, args: &[Value]) -> bool {
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.text.as_str()));
    match prog {
        "base64" | "base32" | "basenc" | "gbase64" | "gbase32" | "b64" => {
            has(&["-d", "-D", "--decode"])
        }
        "xxd" => has(&["-r", "-revert"]),
        "openssl" => has(&["-d"]) && has(&["base64", "enc", "-base64", "-a"]),
        "uudecode" | "unzstd" | "rev" | "lzcat" | "xzcat" | "bzcat" => true,
        "gzip" | "bzip2" | "xz" | "zstd" | "lzma" => has(&["-d", "--decompress", "-dc", "-cd"]),
        "tr" => maps_letters(args),
        _ => false,
    }
}

/// `tr SET1 SET2` where both sets are letter ranges and differ: a
/// substitution cipher, not a case change of the same letters.
fn maps_letters(args: &[Value]) -> bool {
    let sets: Vec<&str> = args
        .iter()
        .map(|a| a.text.trim_matches(['\'', '"']))
        .filter(|t| !t.starts_with('-'))
        .collect();
    let [from, to] = sets.as_slice() else {
        return false;
    };
    let letters = |s: &str| s.len() >= 3 && s.chars().all(|c| c.is_ascii_alphabetic() || c == '-');
    let case_change = from.eq_ignore_ascii_case(to);
    letters(from) && letters(to) && !case_change
}

#[cfg(test)]
mod tests {
    use super::super::words;
    use super::*;

    #[test]
    fn decoders_are_known_by_program_and_flag() {
        assert!(decodes("base32", &words("-d")));
        assert!(decodes("xxd", &words("-r -p")));
        assert!(decodes("tr", &words("'A-Za-z' 'N-ZA-Mn-za-m'")));
        assert!(decodes("rev", &[]));
        assert!(!decodes("base32", &[]));
        assert!(!decodes("tr", &words("a-z A-Z")));
        assert!(!decodes("tr", &words("-d '\\r'")));
        assert!(!decodes("gzip", &words("-9 file")));
    }
}
