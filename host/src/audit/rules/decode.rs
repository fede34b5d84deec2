//! Decoding what a rule found: base64, hex and escaped blobs, rot13,
//! character codes and XORed byte lists, to text a rule can read again.

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
            let escape = |n: &u8| matches!(n, b'x' | b'X' | b'u' | b'0'..=b'7');
            if b == b'\\' && bytes.get(i + 1).is_some_and(escape) {
                return true;
            }
            run = 0;
        }
    }
    false
}

/// Text a blob decodes to: escapes (`\x63`, `\u0063`, `\u{63}`, octal
/// `\143`), hex, or base64 (standard or URL-safe; UTF-8, or UTF-16LE as
/// PowerShell's -EncodedCommand uses). None when it decodes to nothing
/// that reads as text.
pub fn decode_blob(blob: &str) -> Option<String> {
    let bytes = if blob.starts_with('\\') {
        decode_escapes(blob)?
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

/// A run of escapes as the bytes they stand for: `\xHH` and octal `\NNN`
/// a byte each, `\uHHHH` and `\u{H…}` a character's UTF-8, as C, Python,
/// JavaScript, JSON and `printf` read them. None when a piece is no
/// escape.
fn decode_escapes(blob: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(blob.len() / 3);
    for p in blob.split('\\').filter(|p| !p.is_empty()) {
        match p.as_bytes().first()? {
            b'x' | b'X' => out.push(u8::from_str_radix(p.get(1..3)?, 16).ok()?),
            b'0'..=b'7' => out.push(u8::from_str_radix(p.get(..3)?, 8).ok()?),
            b'u' => {
                let hex = match p.strip_prefix("u{") {
                    Some(rest) => rest.split('}').next()?,
                    None => p.get(1..5)?,
                };
                let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
            _ => return None,
        }
    }
    Some(out)
}

/// The texts a list of byte values (`[57, 47, 40, …]`) spells when each
/// is XORed with one key: every key from 1 to 255 whose result reads as
/// text (what a script that XORs an array before running it hides).
pub fn decode_xor_codes(codes: &str) -> Vec<String> {
    let bytes: Option<Vec<u8>> = codes
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .map(|n| n.parse::<u8>().ok())
        .collect();
    let Some(bytes) = bytes.filter(|b| b.len() >= 16) else {
        return Vec::new();
    };
    (1..=255u8)
        .filter_map(|key| {
            let plain: Vec<u8> = bytes.iter().map(|b| b ^ key).collect();
            plain.is_ascii().then(|| as_text(&plain)).flatten()
        })
        .collect()
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
