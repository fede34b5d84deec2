//! Decoding what a rule found: base64, hex and `\\x` blobs, rot13 and
//! character codes, to text a rule can read again.

/// ROT13 of the ASCII letters; everything else as it is.
pub fn rot13(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'a'..='m' | 'A'..='M' => (c as u8 + 13) as char,
            'n'..='z' | 'N'..='Z' => (c as u8 - 13) as char,
            _ => c,
        })
        .collect()
}

/// The text a list of character codes spells (`99,117` or
/// `chr(99)+chr(117)`: every decimal number in `codes`, in order).
pub fn decode_char_codes(codes: &str) -> Option<String> {
    codes
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .map(|n| n.parse::<u32>().ok().and_then(char::from_u32))
        .collect()
}

/// Whether `bytes` holds a run of 20 base64 characters (which any hex or
/// base64 blob the `decoded-blob` patterns look for is) or a `\x` escape.
pub(super) fn may_hold_blob(bytes: &[u8]) -> bool {
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-') {
            run += 1;
            if run >= 20 {
                return true;
            }
        } else {
            if b == b'\\' && bytes.get(i + 1).is_some_and(|&n| n == b'x' || n == b'X') {
                return true;
            }
            run = 0;
        }
    }
    false
}

/// Text a blob decodes to: `\x` escapes, hex, or base64 (standard or
/// URL-safe; UTF-8, or UTF-16LE as PowerShell's -EncodedCommand uses).
/// None when it decodes to nothing that reads as text.
pub fn decode_blob(blob: &str) -> Option<String> {
    let bytes = if blob.starts_with("\\x") || blob.starts_with("\\X") {
        blob.split(['\\'])
            .filter(|p| !p.is_empty())
            .map(|p| u8::from_str_radix(p.get(1..3)?, 16).ok())
            .collect::<Option<Vec<u8>>>()?
    } else if blob.len().is_multiple_of(2) && blob.bytes().all(|b| b.is_ascii_hexdigit()) {
        let hex = decode_hex(blob)?;
        if let Some(t) = as_text(&hex) {
            return Some(t);
        }
        decode_base64(blob)?
    } else {
        decode_base64(blob)?
    };
    as_text(&bytes)
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

pub(crate) fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The bytes as text when they read as text: UTF-8 or UTF-16LE, almost all
/// printable, at least 8 characters.
fn as_text(bytes: &[u8]) -> Option<String> {
    let text = if let Ok(s) = std::str::from_utf8(bytes) {
        s.to_owned()
    } else if bytes.len() >= 16
        && bytes.len().is_multiple_of(2)
        && bytes.iter().skip(1).step_by(2).filter(|&&b| b == 0).count() * 10 >= bytes.len() / 2 * 9
    {
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        String::from_utf16(&units).ok()?
    } else {
        return None;
    };
    let total = text.chars().count();
    if total < 8 {
        return None;
    }
    let printable = text
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
        .count();
    (printable * 100 >= total * 95).then_some(text)
}
