//! Reading files of a skill's folder on demand (handlers, references, a
//! model's read tool), never outside that folder.

use std::io::{self, Read};
use std::path::{Component, Path};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::discover::is_escape;
use super::model::Skill;
use crate::types::FailureClass;

/// Which version of a file was read: device, inode, size, and the
/// modification and change times to the nanosecond. Rewriting a file
/// changes its change time, which only the system clock can set back, so
/// the same identity means the same bytes, provided the file was read
/// after its change time had passed by more than the times' granularity
/// (see [`FileIdentity::trusted_if_read_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl FileIdentity {
    #[cfg(unix)]
    pub(super) fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Elsewhere only size and modification time are known: never the
    /// same twice, so files are always read.
    #[cfg(not(unix))]
    pub(super) fn of(meta: &std::fs::Metadata) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        FileIdentity {
            dev: 0,
            ino: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            len: meta.len(),
            modified: (0, 0),
            changed: (0, 0),
        }
    }

    /// The size of the version seen.
    pub fn size(&self) -> u64 {
        self.len
    }

    /// Whether this identity, seen by a read that started at `read_at`,
    /// pins the bytes: file times tick coarsely, so a write in the same
    /// tick as the change before it can leave the times as they were.
    /// Once a read starts more than a tick after the change time, any later
    /// write moves the change time ("racy git" is the same problem). The
    /// tick is a few milliseconds on Linux; a change time with no
    /// nanoseconds suggests a file system that keeps whole seconds.
    pub fn trusted_if_read_at(&self, read_at: std::time::SystemTime) -> bool {
        let granularity = if self.changed.1 == 0 {
            std::time::Duration::from_secs(2)
        } else {
            TIME_TICK
        };
        let changed = std::time::UNIX_EPOCH
            + std::time::Duration::new(
                u64::try_from(self.changed.0).unwrap_or(0),
                u32::try_from(self.changed.1).unwrap_or(0),
            );
        changed + granularity < read_at
    }
}

/// Longer than the kernel's coarse clock tick (at most 10 ms, HZ=100).
const TIME_TICK: std::time::Duration = std::time::Duration::from_millis(50);

/// Reads an opened file, never past `max_bytes`.
fn read_opened(
    relative: &str,
    file: std::fs::File,
    identity: FileIdentity,
    max_bytes: u64,
) -> Result<Vec<u8>, SkillFileError> {
    let mut bytes = Vec::with_capacity(usize::try_from(identity.len).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| SkillFileError::Io {
            path: relative.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > max_bytes {
        return Err(SkillFileError::TooLarge {
            path: relative.to_owned(),
            size: bytes.len() as u64,
            max: max_bytes,
        });
    }
    Ok(bytes)
}

/// Why a file of a skill cannot be read. Messages name the path inside the
/// skill folder, never where the folder is on this machine: they reach
/// models and MCP clients.
#[derive(Debug, thiserror::Error)]
pub enum SkillFileError {
    #[error("'{path}' is not a relative path inside the skill folder")]
    NotRelative { path: String },
    #[error("'{path}' leads outside the skill folder: refused")]
    Escape { path: String },
    #[error("'{path}' not found in the skill folder")]
    NotFound { path: String },
    #[error("'{path}' is not a regular file")]
    NotAFile { path: String },
    #[error(
        "'{path}' is not part of the skill's content (host state, dotfiles and build output are never served)"
    )]
    NotContent { path: String },
    #[error("'{path}' is {size} bytes, over the {max}-byte limit")]
    TooLarge { path: String, size: u64, max: u64 },
    #[error("cannot read '{path}': {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

impl SkillFileError {
    /// The failure class a client sees for this error.
    pub fn class(&self) -> FailureClass {
        match self {
            SkillFileError::NotFound { .. } => FailureClass::NotFound,
            SkillFileError::TooLarge { .. } => FailureClass::FileTooLarge,
            SkillFileError::NotRelative { .. }
            | SkillFileError::Escape { .. }
            | SkillFileError::NotContent { .. } => FailureClass::Denied,
            SkillFileError::NotAFile { .. } | SkillFileError::Io { .. } => FailureClass::FileError,
        }
    }
}

/// Deepest folder `list_files` descends into.
const LIST_MAX_DEPTH: usize = 16;

/// Folders that hold build output or installed dependencies, not the
/// skill's own content.
const BUILD_FOLDERS: [&str; 3] = ["target", "node_modules", "__pycache__"];

/// Whether a path inside a skill folder is the skill's own content: no
/// dotfile or dot-folder on the way (`.skillhost/` with the host's store
/// when the skill folder is the workspace, `.git/`, editor files) and no
/// build-output folder. What is not content is never listed or served.
pub fn is_content_path(relative: &Path) -> bool {
    let names: Vec<&std::ffi::OsStr> = relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    names.iter().enumerate().all(|(i, name)| {
        let name = name.to_string_lossy();
        let last = i + 1 == names.len();
        let build_output = BUILD_FOLDERS.iter().any(|b| name.eq_ignore_ascii_case(b));
        !name.starts_with('.') && (last || !build_output)
    })
}

impl Skill {
    /// Reads `relative` inside the skill folder. `..`, absolute paths and
    /// symlinks that resolve outside the folder are refused; so is a file
    /// over `max_bytes`, which is never read past the limit. This is how
    /// the host reads files the skill declares (its handler may be build
    /// output); what others ask for goes through [`Skill::read_content`].
    pub fn read_file(&self, relative: &str, max_bytes: u64) -> Result<Vec<u8>, SkillFileError> {
        let (file, identity) = self.open_file(relative, max_bytes)?;
        read_opened(relative, file, identity, max_bytes)
    }

    /// Which version of `relative` is there now: one `stat` of its path,
    /// symlinks followed, `None` if it cannot be looked at. None of the
    /// checks of [`Skill::read_file`] apply, so this may only confirm a
    /// version read through them: the same identity (device, inode,
    /// change time) is that file, unchanged, wherever the path now leads.
    /// A run of an unchanged skill makes two of these, not the 14 system
    /// calls of opening both files beneath the skill's folder.
    pub fn current_identity(&self, relative: &str) -> Option<FileIdentity> {
        std::fs::metadata(self.dir.join(relative))
            .ok()
            .map(|m| FileIdentity::of(&m))
    }

    /// [`Skill::read_file`], with the identity of the version read.
    pub fn read_file_identified(
        &self,
        relative: &str,
        max_bytes: u64,
    ) -> Result<(Vec<u8>, FileIdentity), SkillFileError> {
        let (file, identity) = self.open_file(relative, max_bytes)?;
        Ok((read_opened(relative, file, identity, max_bytes)?, identity))
    }

    /// Opens `relative` inside the skill folder, with the checks of
    /// [`Skill::read_file`], and says which file version it is.
    fn open_file(
        &self,
        relative: &str,
        max_bytes: u64,
    ) -> Result<(std::fs::File, FileIdentity), SkillFileError> {
        let path = relative.to_owned();
        let err_io = |source: io::Error| SkillFileError::Io {
            path: path.clone(),
            source,
        };
        if !is_plain_relative(relative) {
            return Err(SkillFileError::NotRelative { path });
        }
        let rel = Path::new(relative);
        let dir = Dir::open_ambient_dir(&self.dir, ambient_authority()).map_err(err_io)?;
        let classify = |e: io::Error| open_error(relative, e);
        let meta = dir.metadata(rel).map_err(classify)?;
        if !meta.is_file() {
            return Err(SkillFileError::NotAFile { path });
        }
        if meta.len() > max_bytes {
            return Err(SkillFileError::TooLarge {
                path,
                size: meta.len(),
                max: max_bytes,
            });
        }
        let file = dir.open(rel).map_err(classify)?.into_std();
        // The identity of what was opened, not of the path looked at above.
        let identity = FileIdentity::of(&file.metadata().map_err(err_io)?);
        Ok((file, identity))
    }

    /// Reads a file of the skill's content for someone else (a model's
    /// tool, an MCP client): like [`Skill::read_file`], but only content
    /// (see [`is_content_path`]), judged on the path asked for and on
    /// where it leads, so a symlink cannot reach a private file.
    pub fn read_content(&self, relative: &str, max_bytes: u64) -> Result<Vec<u8>, SkillFileError> {
        let not_content = || SkillFileError::NotContent {
            path: relative.to_owned(),
        };
        let rel = Path::new(relative);
        if !is_content_path(rel) {
            return Err(not_content());
        }
        // Errors (missing, escaping) are classified by `read_file` below.
        if let Ok(dir) = Dir::open_ambient_dir(&self.dir, ambient_authority())
            && let Ok(real) = dir.canonicalize(rel)
            && !is_content_path(&real)
        {
            return Err(not_content());
        }
        self.read_file(relative, max_bytes)
    }

    /// The skill's content (see [`is_content_path`]): its regular files as
    /// `/`-separated relative paths, sorted, at most `max` of them.
    /// Symlinks are listed only when they resolve to a content file inside
    /// the folder; symlinked folders, dot-folders and build output are not
    /// entered.
    pub fn list_files(&self, max: usize) -> Result<Vec<String>, SkillFileError> {
        let root = Dir::open_ambient_dir(&self.dir, ambient_authority()).map_err(list_error)?;
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
                root.try_clone().map_err(list_error)?
            } else {
                match root.open_dir(&prefix) {
                    Ok(d) => d,
                    Err(_) => continue,
                }
            };
            for (name, ft) in entries_in_reverse(&dir)? {
                let rel = if prefix.is_empty() {
                    name
                } else {
                    format!("{prefix}/{name}")
                };
                if let Some(item) = content_item(&root, rel, ft, depth) {
                    stack.push(item);
                }
            }
        }
        Ok(out)
    }
}

/// Not empty, and not rooted (`/x`, or a Windows prefix).
fn is_plain_relative(relative: &str) -> bool {
    !relative.is_empty()
        && !Path::new(relative)
            .components()
            .any(|c| matches!(c, Component::RootDir | Component::Prefix(_)))
}

/// Why `relative` could not be opened: it leads out of the folder, is not
/// there, or another error.
fn open_error(relative: &str, e: io::Error) -> SkillFileError {
    let path = relative.to_owned();
    if is_escape(&e) {
        SkillFileError::Escape { path }
    } else if e.kind() == io::ErrorKind::NotFound {
        SkillFileError::NotFound { path }
    } else {
        SkillFileError::Io { path, source: e }
    }
}

/// A file to list, or a folder to enter (with its depth).
enum Item {
    File(String),
    Folder(String, usize),
}

fn list_error(source: io::Error) -> SkillFileError {
    SkillFileError::Io {
        path: ".".to_owned(),
        source,
    }
}

/// A folder's entries with UTF-8 names, in reverse name order (so that a
/// stack pops them in order).
fn entries_in_reverse(dir: &Dir) -> Result<Vec<(String, cap_std::fs::FileType)>, SkillFileError> {
    let mut entries: Vec<_> = dir
        .entries()
        .map_err(list_error)?
        .flatten()
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.file_type().ok()?)))
        .collect();
    entries.sort_by(|a, b| b.0.cmp(&a.0));
    Ok(entries)
}

/// What the entry at `rel` (in a folder at `depth`) is for the listing:
/// a content folder to enter (within the depth limit), a content file, a
/// symlink that resolves to a content file inside the folder, or nothing.
fn content_item(root: &Dir, rel: String, ft: cap_std::fs::FileType, depth: usize) -> Option<Item> {
    if ft.is_dir() {
        // A folder is content when a file in it would be.
        return (depth < LIST_MAX_DEPTH && is_content_path(&Path::new(&rel).join("f")))
            .then_some(Item::Folder(rel, depth + 1));
    }
    if !is_content_path(Path::new(&rel)) {
        return None;
    }
    let listed = ft.is_file()
        || (ft.is_symlink()
            && root.metadata(&rel).is_ok_and(|m| m.is_file())
            && root.canonicalize(&rel).is_ok_and(|r| is_content_path(&r)));
    listed.then_some(Item::File(rel))
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
    fn an_identity_is_trusted_once_read_after_its_change_time_and_a_rewrite_changes_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let s = skill_in(tmp.path());
        std::fs::write(tmp.path().join("h.wasm"), "one").expect("write");
        let (bytes, id) = s.read_file_identified("h.wasm", 100).expect("read");
        assert_eq!(bytes, b"one");
        // Read at once after it was written: not trusted yet.
        assert!(!id.trusted_if_read_at(std::time::SystemTime::now() - TIME_TICK));
        let later = std::time::SystemTime::now() + TIME_TICK * 2;
        assert!(id.trusted_if_read_at(later));
        assert_eq!(s.current_identity("h.wasm"), Some(id));
        // A rewrite is a different version, whatever the clock says.
        std::fs::write(tmp.path().join("h.wasm"), "two!").expect("write");
        let (_, rewritten) = s.read_file_identified("h.wasm", 100).expect("read");
        assert_ne!(rewritten, id);
    }

    /// The cheap look at a path confirms only the file that was read:
    /// replacing it by another file, or by a symlink to one outside the
    /// folder, is a different version, and reading that is refused.
    #[cfg(unix)]
    #[test]
    fn a_replaced_or_redirected_file_is_a_new_version() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("s");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let s = skill_in(&dir);
        std::fs::write(dir.join("h.wasm"), "one").expect("write");
        let (_, id) = s.read_file_identified("h.wasm", 100).expect("read");
        // Same length, renamed over it: a new inode.
        std::fs::write(dir.join("next"), "two").expect("write");
        std::fs::rename(dir.join("next"), dir.join("h.wasm")).expect("rename");
        let (_, renamed) = s.read_file_identified("h.wasm", 100).expect("read");
        assert_ne!(renamed, id);
        assert_eq!(s.current_identity("h.wasm"), Some(renamed));
        // A symlink out of the folder: another version, and not readable.
        std::fs::write(tmp.path().join("outside"), "two").expect("write");
        std::fs::remove_file(dir.join("h.wasm")).expect("rm");
        std::os::unix::fs::symlink(tmp.path().join("outside"), dir.join("h.wasm"))
            .expect("symlink");
        assert!(
            s.current_identity("h.wasm")
                .is_some_and(|now| now != renamed)
        );
        assert!(matches!(
            s.read_file_identified("h.wasm", 100),
            Err(SkillFileError::Escape { .. })
        ));
        // Gone: nothing to confirm.
        std::fs::remove_file(dir.join("h.wasm")).expect("rm");
        assert_eq!(s.current_identity("h.wasm"), None);
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

    #[test]
    fn only_content_is_listed_or_read_and_errors_name_no_server_path() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("s");
        for d in [
            ".skillhost",
            ".git",
            "handler/target/wasm",
            "node_modules/x",
            "refs",
        ] {
            std::fs::create_dir_all(dir.join(d)).expect("mkdir");
        }
        for f in [
            "SKILL.md",
            "refs/a.md",
            ".skillhost/skillhost.db",
            ".env",
            ".git/config",
            "handler/target/wasm/h.wasm",
            "handler/lib.rs",
            "node_modules/x/i.js",
        ] {
            std::fs::write(dir.join(f), "x").expect("write");
        }
        std::os::unix::fs::symlink(".skillhost/skillhost.db", dir.join("db.txt")).expect("link");
        let s = skill_in(&dir);
        assert_eq!(
            s.list_files(100).expect("list"),
            ["SKILL.md", "handler/lib.rs", "refs/a.md"]
        );
        assert_eq!(s.read_content("refs/a.md", 10).expect("read"), b"x");
        for private in [
            ".skillhost/skillhost.db",
            "./.skillhost/skillhost.db",
            "refs/../.skillhost/skillhost.db",
            ".env",
            "handler/target/wasm/h.wasm",
            "node_modules/x/i.js",
            "db.txt",
        ] {
            let e = s.read_content(private, 10).expect_err(private);
            assert!(
                matches!(e, SkillFileError::NotContent { .. }),
                "{private}: {e}"
            );
        }
        // The host itself still reads what the skill declares.
        assert!(s.read_file("handler/target/wasm/h.wasm", 10).is_ok());
        let here = tmp.path().to_string_lossy().into_owned();
        for e in [
            s.read_content("missing.md", 10).expect_err("missing"),
            s.read_content("refs", 10).expect_err("folder"),
            s.read_content("../x", 10).expect_err("escape"),
            s.read_content("refs/a.md", 0).expect_err("too large"),
        ] {
            assert!(!e.to_string().contains(&here), "{e}");
        }
        assert!(
            is_content_path(Path::new("target")),
            "a file named target is content"
        );
        assert!(!is_content_path(Path::new("Target/x")));
    }
}
