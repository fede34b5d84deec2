//! What is unpacked (a folder, an archive file or a download, told apart
//! by its first bytes), and where the skill's SKILL.md is in it.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::{InstallError, extract, file_name};
use crate::skill::SKILL_FILES;

/// What is unpacked.
pub(super) enum Payload<'a> {
    Folder(&'a Path),
    File(File, PathBuf),
    Bytes(Vec<u8>),
}

enum Format {
    TarGz,
    Zip,
}

fn sniff(head: &[u8]) -> Option<Format> {
    if head.starts_with(&[0x1f, 0x8b]) {
        Some(Format::TarGz)
    } else if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Some(Format::Zip)
    } else {
        None
    }
}

pub(super) fn unpack(
    payload: Payload<'_>,
    sink: &mut extract::Sink<'_>,
) -> Result<(), InstallError> {
    match payload {
        Payload::Folder(dir) => extract::from_folder(dir, sink),
        Payload::File(mut file, path) => {
            let mut head = [0u8; 4];
            let n = read_head(&mut file, &mut head).map_err(InstallError::io("read", &path))?;
            io::Seek::rewind(&mut file).map_err(InstallError::io("read", &path))?;
            match sniff(&head[..n]) {
                Some(Format::TarGz) => extract::from_tar_gz(io::BufReader::new(file), sink),
                Some(Format::Zip) => extract::from_zip(io::BufReader::new(file), sink),
                None => Err(InstallError::NotAnArchive(path)),
            }
        }
        Payload::Bytes(bytes) => match sniff(&bytes) {
            Some(Format::TarGz) => extract::from_tar_gz(&bytes[..], sink),
            Some(Format::Zip) => extract::from_zip(io::Cursor::new(bytes), sink),
            None => Err(InstallError::NotAnArchive(PathBuf::from("the download"))),
        },
    }
}

fn read_head(file: &mut File, head: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Where the skill's SKILL.md is in what was unpacked: the folder to
/// strip, and the file in it. A SKILL.md any deeper is refused (a nested
/// skill would slip into the catalog under a name of its own).
pub(super) fn locate_skill_file(
    files: &[PathBuf],
    dirs: &[PathBuf],
) -> Result<(PathBuf, PathBuf), InstallError> {
    let top = top_folder(files, dirs);
    let md_rel = skill_file(files, &top)?;
    if let Some(nested) = files.iter().find(|f| {
        f.parent() != Some(top.as_path())
            && f.file_name()
                .is_some_and(|n| SKILL_FILES.iter().any(|s| n == *s))
    }) {
        return Err(InstallError::NestedSkill(nested.display().to_string()));
    }
    Ok((top, md_rel))
}

/// The folder to strip: the single top-level folder when nothing else is
/// at the top; else none.
fn top_folder(files: &[PathBuf], dirs: &[PathBuf]) -> PathBuf {
    let mut firsts = files
        .iter()
        .chain(dirs)
        .filter_map(|p| p.components().next());
    let Some(first) = firsts.next() else {
        return PathBuf::new();
    };
    let single = firsts.all(|c| c == first);
    let file_on_top = files.iter().any(|f| f.components().count() == 1);
    if single && !file_on_top {
        PathBuf::from(first.as_os_str())
    } else {
        PathBuf::new()
    }
}

/// The SKILL.md directly in `top`, by the catalog's preference.
fn skill_file(files: &[PathBuf], top: &Path) -> Result<PathBuf, InstallError> {
    for name in SKILL_FILES {
        let candidate = top.join(name);
        if files.contains(&candidate) {
            return Ok(candidate);
        }
    }
    let mut found: Vec<String> = files
        .iter()
        .filter(|f| f.parent() == Some(top))
        .map(|f| file_name(f))
        .take(10)
        .collect();
    if found.is_empty() {
        found.push("no files".into());
    }
    Err(InstallError::NoSkillFile {
        found: found.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_top_folder_is_stripped_only_when_alone() {
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            top_folder(&p(&["pkg/SKILL.md", "pkg/a/b"]), &p(&["pkg", "pkg/a"])),
            PathBuf::from("pkg")
        );
        assert_eq!(
            top_folder(&p(&["SKILL.md", "a/b"]), &p(&["a"])),
            PathBuf::new()
        );
        assert_eq!(top_folder(&p(&["x/SKILL.md", "y/b"]), &[]), PathBuf::new());
        assert_eq!(top_folder(&[], &[]), PathBuf::new());
    }
}
