//! The text a judge reads: every text file of the skill folder, SKILL.md
//! first and the rest by path, each under a header naming it, up to
//! [`MAX_JUDGED_BYTES`]. Symbolic links are not followed; binary files
//! (a NUL byte or invalid UTF-8) are named, not shown.

use std::path::Path;

/// Bytes of a skill's files sent to the judge, at most.
pub const MAX_JUDGED_BYTES: usize = 48 * 1024;
/// Files of one folder looked at, at most.
const MAX_FILES: usize = 2000;

/// The files' text, and whether it was cut at the cap.
pub struct Judged {
    pub text: String,
    pub truncated: bool,
}

/// The text of the skill folder `dir`.
pub fn gather(dir: &Path) -> std::io::Result<Judged> {
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.sort_by_key(|rel| (!rel.eq_ignore_ascii_case("SKILL.md"), rel.clone()));
    let mut judged = Judged {
        text: String::new(),
        truncated: false,
    };
    for rel in files {
        let bytes = std::fs::read(dir.join(&rel))?;
        let body = match std::str::from_utf8(&bytes) {
            Ok(t) if !t.contains('\0') => t.to_owned(),
            _ => format!("({} bytes, not text)", bytes.len()),
        };
        if !push(&mut judged, &format!("=== file: {rel} ===\n{body}\n")) {
            break;
        }
    }
    Ok(judged)
}

/// The text of one SKILL.md given alone.
pub fn lone(text: &str) -> Judged {
    let mut judged = Judged {
        text: String::new(),
        truncated: false,
    };
    push(&mut judged, &format!("=== file: SKILL.md ===\n{text}\n"));
    judged
}

/// Appends `part` up to the cap; false once the cap is reached.
fn push(judged: &mut Judged, part: &str) -> bool {
    let room = MAX_JUDGED_BYTES.saturating_sub(judged.text.len());
    if part.len() <= room {
        judged.text.push_str(part);
        return true;
    }
    let mut end = room;
    while !part.is_char_boundary(end) {
        end -= 1;
    }
    judged.text.push_str(&part[..end]);
    judged.truncated = true;
    false
}

/// Relative paths of the regular files under `at`, links not followed.
fn walk(root: &Path, at: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(at)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if out.len() >= MAX_FILES {
            return Ok(());
        }
        let kind = e.file_type()?;
        let path = e.path();
        if kind.is_dir() {
            walk(root, &path, out)?;
        } else if kind.is_file()
            && let Ok(rel) = path.strip_prefix(root)
        {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_md_comes_first_binaries_are_named_and_the_cap_holds() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("scripts")).expect("mkdir");
        std::fs::write(dir.path().join("SKILL.md"), "# S\n").expect("write");
        std::fs::write(dir.path().join("a.md"), "alpha\n").expect("write");
        std::fs::write(dir.path().join("scripts/x.bin"), b"\x00\x01").expect("write");
        let j = gather(dir.path()).expect("gather");
        let skill = j.text.find("=== file: SKILL.md").expect("SKILL.md");
        let a = j.text.find("=== file: a.md").expect("a.md");
        assert!(skill < a && j.text.contains("(2 bytes, not text)") && !j.truncated);
        std::fs::write(dir.path().join("big.md"), "é".repeat(MAX_JUDGED_BYTES)).expect("write");
        let j = gather(dir.path()).expect("gather");
        assert!(j.truncated && j.text.len() <= MAX_JUDGED_BYTES);
    }
}
