//! Skill files as MCP resources: `skill://NAME/PATH` URIs, their MIME
//! types, and their contents (text, or base64 for binary files).

/// Scheme of every resource URI this server hands out.
pub const SCHEME: &str = "skill://";

/// `skill://NAME/PATH`, with each part percent-encoded so that any skill
/// or file name survives the round trip (`/` stays a separator in PATH).
pub fn uri(skill: &str, path: &str) -> String {
    format!("{SCHEME}{}/{}", encode(skill, false), encode(path, true))
}

/// Splits a resource URI back into (skill name, path), or `None` when it is
/// not one of ours.
pub fn parse_uri(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (skill, path) = rest.split_once('/')?;
    let skill = decode(skill)?;
    let path = decode(path)?;
    if skill.is_empty() || path.is_empty() {
        return None;
    }
    Some((skill, path))
}

fn encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The MIME type a client should assume for a skill file, by extension.
pub fn mime_type(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "py" => "text/x-python",
        "js" | "mjs" => "text/javascript",
        "sh" => "text/x-shellscript",
        "wasm" => "application/wasm",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "pdf" => "application/pdf",
        _ => "text/plain",
    }
}

/// Standard base64 (RFC 4648, padded), for binary resource contents.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_odd_names() {
        for (skill, path) in [
            ("email-writer", "SKILL.md"),
            ("my skill", "references/api v2.md"),
            ("a/b", "x%y.txt"),
            ("résumé", "données/é.md"),
        ] {
            let u = uri(skill, path);
            assert!(u.starts_with(SCHEME));
            assert_eq!(
                parse_uri(&u),
                Some((skill.to_owned(), path.to_owned())),
                "{u}"
            );
        }
        assert_eq!(uri("a", "refs/x.md"), "skill://a/refs/x.md");
    }

    #[test]
    fn foreign_or_broken_uris_are_refused() {
        for u in [
            "file:///etc/passwd",
            "skill://",
            "skill://name",
            "skill://name/",
            "skill://na%ZZme/x",
            "skill://%FF/x",
        ] {
            assert_eq!(parse_uri(u), None, "{u}");
        }
    }

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn markdown_is_markdown() {
        assert_eq!(mime_type("SKILL.md"), "text/markdown");
        assert_eq!(mime_type("handler.WASM"), "application/wasm");
        assert_eq!(mime_type("notes"), "text/plain");
    }
}
