//! Reading files of a skill's folder on demand (handlers, references, a
//! model's read tool), never outside that folder.

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::discover::is_escape;
use super::model::Skill;

/// Why a file of a skill cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SkillFileError {
    #[error("'{path}' is not a relative path inside the skill folder {}", dir.display())]
    NotRelative { path: String, dir: PathBuf },
    #[error("'{path}' leads outside the skill folder {}: refused", dir.display())]
    Escape { path: String, dir: PathBuf },
    #[error("'{path}' not found in {}", dir.display())]
    NotFound { path: String, dir: PathBuf },
    #[error("'{path}' in {} is not a regular file", dir.display())]
    NotAFile { path: String, dir: PathBuf },
    #[error("'{path}' in {} is {size} bytes, over the {max}-byte limit", dir.display())]
    TooLarge {
        path: String,
        dir: PathBuf,
        size: u64,
        max: u64,
    },
    #[error("cannot read '{path}' in {}: {source}", dir.display())]
    Io {
        path: String,
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Deepest folder `list_files` descends into.
const LIST_MAX_DEPTH: usize = 16;

impl Skill {
    /// Reads `relative` inside the skill folder. `..`, absolute paths and
    /// symlinks that resolve outside the folder are refused; so is a file
    /// over `max_bytes`, which is never read past the limit.
    pub fn read_file(&self, relative: &str, max_bytes: u64) -> Result<Vec<u8>, SkillFileError> {
        let path = relative.to_owned();
        let err_io = |source: io::Error| SkillFileError::Io {
            path: path.clone(),
            dir: self.dir.clone(),
            source,
        };
        let rel = Path::new(relative);
        if relative.is_empty()
            || rel
                .components()
                .any(|c| matches!(c, Component::RootDir | Component::Prefix(_)))
        {
            return Err(SkillFileError::NotRelative {
                path,
                dir: self.dir.clone(),
            });
        }
        let dir = Dir::open_ambient_dir(&self.dir, ambient_authority()).map_err(err_io)?;
        let classify = |e: io::Error| {
            if is_escape(&e) {
                SkillFileError::Escape {
                    path: path.clone(),
                    dir: self.dir.clone(),
                }
            } else if e.kind() == io::ErrorKind::NotFound {
                SkillFileError::NotFound {
                    path: path.clone(),
                    dir: self.dir.clone(),
                }
            } else {
                err_io(e)
            }
        };
        let meta = dir.metadata(rel).map_err(classify)?;
        if !meta.is_file() {
            return Err(SkillFileError::NotAFile {
                path,
                dir: self.dir.clone(),
            });
        }
        let too_large = |size: u64| SkillFileError::TooLarge {
            path: path.clone(),
            dir: self.dir.clone(),
            size,
            max: max_bytes,
        };
        if meta.len() > max_bytes {
            return Err(too_large(meta.len()));
        }
        let file = dir.open(rel).map_err(classify)?;
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(err_io)?;
        if bytes.len() as u64 > max_bytes {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// Regular files of the skill folder as `/`-separated relative paths,
    /// sorted, at most `max` of them. Symlinks are listed only when they
    /// resolve to a file inside the folder; symlinked folders are not
    /// entered, nor are `.git` and `node_modules`.
    pub fn list_files(&self, max: usize) -> Result<Vec<String>, SkillFileError> {
        let err_io = |source: io::Error| SkillFileError::Io {
            path: ".".to_owned(),
            dir: self.dir.clone(),
            source,
        };
        let root = Dir::open_ambient_dir(&self.dir, ambient_authority()).map_err(err_io)?;
        enum Item {
            File(String),
            Folder(String, usize),
        }
        let mut out = Vec::new();
        // Depth-first in name order, so the first `max` are a stable prefix
        // and a huge folder is not walked past the limit.
        let mut stack = vec![Item::Folder(String::new(), 0)];
        while let Some(item) = stack.pop() {
            if out.len() >= max {
                break;
            }
            let (prefix, depth) = match item {
                Item::File(rel) => {
                    out.push(rel);
                    continue;
                }
                Item::Folder(prefix, depth) => (prefix, depth),
            };
            let dir = if prefix.is_empty() {
                root.try_clone().map_err(err_io)?
            } else {
                match root.open_dir(&prefix) {
                    Ok(d) => d,
                    Err(_) => continue,
                }
            };
            let mut entries: Vec<_> = dir
                .entries()
                .map_err(err_io)?
                .flatten()
                .filter_map(|e| Some((e.file_name().into_string().ok()?, e.file_type().ok()?)))
                .collect();
            entries.sort_by(|a, b| b.0.cmp(&a.0));
            for (name, ft) in entries {
                let rel = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}/{name}")
                };
                if ft.is_dir() {
                    if depth < LIST_MAX_DEPTH && name != ".git" && name != "node_modules" {
                        stack.push(Item::Folder(rel, depth + 1));
                    }
                } else if ft.is_file()
                    || (ft.is_symlink() && dir.metadata(&name).is_ok_and(|m| m.is_file()))
                {
                    stack.push(Item::File(rel));
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::{SkillMeta, Source};

    fn skill_in(dir: &Path) -> Skill {
        Skill {
            name: "s".into(),
            description: "d".into(),
            body: String::new(),
            dir: dir.to_path_buf(),
            path: dir.join("SKILL.md"),
            version: String::new(),
            source: Source::Path,
            warnings: Vec::new(),
            meta: SkillMeta::default(),
        }
    }

    #[test]
    fn reads_inside_and_refuses_escapes() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("s");
        std::fs::create_dir_all(dir.join("data")).expect("mkdir");
        std::fs::write(dir.join("data/a.txt"), "hello").expect("write");
        std::fs::write(tmp.path().join("secret"), "no").expect("write");
        std::os::unix::fs::symlink(tmp.path().join("secret"), dir.join("link")).expect("symlink");
        std::os::unix::fs::symlink("data/a.txt", dir.join("inner-link")).expect("symlink");
        let s = skill_in(&dir);

        assert_eq!(s.read_file("data/a.txt", 100).expect("read"), b"hello");
        assert_eq!(s.read_file("inner-link", 100).expect("read"), b"hello");
        assert!(matches!(
            s.read_file("../secret", 100),
            Err(SkillFileError::Escape { .. })
        ));
        assert!(matches!(
            s.read_file("link", 100),
            Err(SkillFileError::Escape { .. })
        ));
        let abs = tmp.path().join("secret");
        assert!(matches!(
            s.read_file(&abs.to_string_lossy(), 100),
            Err(SkillFileError::NotRelative { .. })
        ));
        assert!(matches!(
            s.read_file("nope", 100),
            Err(SkillFileError::NotFound { .. })
        ));
        assert!(matches!(
            s.read_file("data", 100),
            Err(SkillFileError::NotAFile { .. })
        ));
        let e = s.read_file("data/a.txt", 3).expect_err("too large");
        assert!(matches!(
            e,
            SkillFileError::TooLarge {
                size: 5,
                max: 3,
                ..
            }
        ));
        assert!(e.to_string().contains("5 bytes"), "{e}");

        let files = s.list_files(100).expect("list");
        assert_eq!(files, ["data/a.txt", "inner-link"]);
        assert_eq!(s.list_files(1).expect("list"), ["data/a.txt"]);
    }
}
