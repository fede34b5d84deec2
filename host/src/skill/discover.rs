//! Finding SKILL.md files under one root without ever leaving it.
//!
//! Every open goes through a cap-std `Dir` rooted at the skill root, so a
//! symlink (file or folder) that resolves outside the root is refused by the
//! kernel (`openat2` with `RESOLVE_BENEATH`) or by cap-std's own resolver,
//! not by comparing path strings. The walk is depth-first with one open
//! directory handle per level, bounded in depth, files and folders. Files
//! are only listed here; `read` reads them later, possibly in parallel.

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, ReadDir};

use super::catalog::{LoadOptions, Root, Warning};

/// Accepted file names, most preferred first.
pub(crate) const SKILL_FILES: [&str; 3] = ["SKILL.md", "skill.md", "Skill.md"];
/// Never searched: huge and never skills.
const SKIP_DIRS: [&str; 2] = [".git", "node_modules"];
/// Folders visited per allowed skill file, so that a tree of empty folders
/// cannot keep the walk busy.
const DIRS_PER_FILE: usize = 8;

/// One SKILL.md found by the walk.
pub(crate) struct Candidate {
    /// The skill folder (root-relative components joined onto the root).
    pub dir: PathBuf,
    /// The SKILL.md itself.
    pub path: PathBuf,
    /// The SKILL.md relative to the root, for opening beneath it.
    pub rel: PathBuf,
    pub folder_name: String,
    pub is_link: bool,
    /// Whether the folder holds anything besides this file: the audit
    /// reads the folder only then (most skills are one SKILL.md).
    pub others: bool,
}

/// A folder whose subfolders are still to be visited.
struct Frame {
    dir: Dir,
    path: PathBuf,
    rel: PathBuf,
    depth: usize,
    subdirs: std::vec::IntoIter<(OsString, bool)>,
}

/// Whether an error is cap-std refusing a path that leads outside its root.
pub(crate) fn is_escape(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied && e.to_string().contains("outside")
}

/// Opens a root. A root that does not exist is empty without a warning:
/// most users have no user root.
pub(crate) fn open_root(root: &Root, warnings: &mut Vec<Warning>) -> Option<Dir> {
    match Dir::open_ambient_dir(&root.dir, ambient_authority()) {
        Ok(d) => Some(d),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            warnings.push(Warning::new(
                &root.dir,
                format!("cannot open skill root: {e}"),
            ));
            None
        }
    }
}

/// Walks the opened root `base` for skill files, in a stable order, handing
/// each to `found` without reading it.
pub(crate) fn walk(
    base: &Dir,
    root: &Root,
    opts: &LoadOptions,
    warnings: &mut Vec<Warning>,
    found: impl FnMut(Candidate),
) {
    let mut w = Walker {
        opts,
        found,
        count: 0,
        dirs: 1,
        max_dirs: opts.max_files.saturating_mul(DIRS_PER_FILE).max(1024),
        depth_warned: false,
        warnings,
    };
    let mut stack: Vec<Frame> = w.root_frame(base, root).into_iter().collect();
    while let Some(top) = stack.last_mut() {
        let Some((name, is_link)) = top.subdirs.next() else {
            stack.pop();
            continue;
        };
        match w.enter(top, root, &name, is_link) {
            Step::Descend(frame) => stack.push(frame),
            Step::Next => {}
            Step::Stop => break,
        }
    }
}

/// What the walk does after visiting a folder.
enum Step {
    /// Visit its subfolders next.
    Descend(Frame),
    /// Go on with its next sibling.
    Next,
    /// Stop: a cap is reached.
    Stop,
}

/// Reads one candidate beneath the root, refusing escapes, non-files and
/// anything over `max` bytes.
pub(crate) fn read(base: &Dir, c: &Candidate, max: u64) -> Result<Vec<u8>, String> {
    read_capped(base, &c.rel, c.is_link, max)
}

struct Walker<'a, F> {
    opts: &'a LoadOptions,
    found: F,
    count: usize,
    dirs: usize,
    max_dirs: usize,
    depth_warned: bool,
    warnings: &'a mut Vec<Warning>,
}

impl<F: FnMut(Candidate)> Walker<'_, F> {
    fn warn(&mut self, path: &Path, message: String) {
        self.warnings.push(Warning::new(path, message));
    }

    /// Lists the root itself: its frame, unless it cannot be listed or the
    /// file cap is reached there.
    fn root_frame(&mut self, base: &Dir, root: &Root) -> Option<Frame> {
        let listed = base
            .entries()
            .and_then(|entries| Ok((entries, base.try_clone()?)));
        match listed {
            Ok((entries, dir)) => {
                let subdirs = self.list(entries, &root.dir, Path::new(""), 0)?;
                Some(Frame {
                    dir,
                    path: root.dir.clone(),
                    rel: PathBuf::new(),
                    depth: 0,
                    subdirs: subdirs.into_iter(),
                })
            }
            Err(e) => {
                self.warn(&root.dir, format!("cannot list folder: {e}"));
                None
            }
        }
    }

    /// Counts one more folder; past the cap, says so (the walk stops).
    fn past_dir_cap(&mut self, root: &Root) -> bool {
        self.dirs += 1;
        if self.dirs <= self.max_dirs {
            return false;
        }
        let msg = format!(
            "stopped after {} folders (the cap): the rest of this root is not searched",
            self.max_dirs
        );
        self.warn(&root.dir, msg);
        true
    }

    /// The listing of subfolder `name` of `dir`, by name from the parent
    /// (one open; most skill folders have no subfolders and never need a
    /// handle of their own). `None`, with a warning, when it cannot be read
    /// or leads outside the root.
    fn read_listing(&mut self, dir: &Dir, name: &OsString, path: &Path) -> Option<ReadDir> {
        match dir.read_dir(name) {
            Ok(e) => Some(e),
            Err(e) if is_escape(&e) => {
                self.warn(
                    path,
                    "symlink leads outside the skill root: not followed".to_owned(),
                );
                None
            }
            Err(e) => {
                self.warn(path, format!("cannot list folder: {e}"));
                None
            }
        }
    }

    /// Visits subfolder `name` of `parent`: lists it (its SKILL.md becomes
    /// a candidate) and descends when it has subfolders of its own.
    fn enter(&mut self, parent: &Frame, root: &Root, name: &OsString, is_link: bool) -> Step {
        let path = parent.path.join(name);
        let rel = parent.rel.join(name);
        let depth = parent.depth + 1;
        if root.skip.contains(&path) {
            return Step::Next;
        }
        if self.past_dir_cap(root) {
            return Step::Stop;
        }
        if is_link && !self.link_is_dir(&parent.dir, name, &path) {
            return Step::Next;
        }
        let Some(entries) = self.read_listing(&parent.dir, name, &path) else {
            return Step::Next;
        };
        let Some(subdirs) = self.list(entries, &path, &rel, depth) else {
            return Step::Stop;
        };
        if subdirs.is_empty() {
            return Step::Next;
        }
        match parent.dir.open_dir(name) {
            Ok(dir) => Step::Descend(Frame {
                dir,
                path,
                rel,
                depth,
                subdirs: subdirs.into_iter(),
            }),
            Err(e) => {
                self.warn(&path, format!("cannot open folder: {e}"));
                Step::Next
            }
        }
    }

    /// Whether the symlink `name` in `dir` leads to a folder inside the
    /// root; one that leads outside is a warning.
    fn link_is_dir(&mut self, dir: &Dir, name: &OsString, path: &Path) -> bool {
        match dir.metadata(name) {
            Ok(m) if m.is_dir() => true,
            Err(e) if is_escape(&e) => {
                self.warn(
                    path,
                    "symlink leads outside the skill root: not followed".to_owned(),
                );
                false
            }
            // A link to a file, or dangling: nothing to search.
            _ => false,
        }
    }

    /// Takes one folder's listing: its SKILL.md (if any) becomes a
    /// candidate; returns the subfolders to visit, sorted (none past the
    /// depth limit). `None` stops the walk: the file cap is reached.
    fn list(
        &mut self,
        entries: ReadDir,
        path: &Path,
        rel: &Path,
        depth: usize,
    ) -> Option<Vec<(OsString, bool)>> {
        let (skill_file, mut subdirs, listed) = self.sort_entries(entries, path);
        if let Some((_, name, is_link)) = skill_file {
            self.take_skill_file(path, rel, name, is_link, listed > 1)?;
        }
        if depth >= self.opts.max_depth && !subdirs.is_empty() {
            if !self.depth_warned {
                self.depth_warned = true;
                let msg = format!(
                    "folders more than {} levels below the root are not searched",
                    self.opts.max_depth
                );
                self.warn(path, msg);
            }
            subdirs.clear();
        }
        subdirs.sort();
        Some(subdirs)
    }

    /// A listing's skill file (the first of `SKILL_FILES` present: its
    /// rank, name and whether it is a link), its subfolders to visit, and
    /// how many entries it has.
    fn sort_entries(
        &mut self,
        entries: ReadDir,
        path: &Path,
    ) -> (Option<SkillFile>, Vec<(OsString, bool)>, usize) {
        let mut subdirs = Vec::new();
        let mut skill_file: Option<SkillFile> = None;
        let mut listed = 0usize;
        for entry in entries.flatten() {
            listed += 1;
            let name = entry.file_name();
            let Ok(ft) = entry.file_type() else { continue };
            let is_link = ft.is_symlink();
            if let Some(rank) = name
                .to_str()
                .and_then(|n| SKILL_FILES.iter().position(|f| *f == n))
            {
                if !ft.is_file() && !is_link {
                    // Never opened: a FIFO would block the open.
                    self.warn(&path.join(&name), "skipped: not a regular file".to_owned());
                    continue;
                }
                if skill_file.as_ref().is_none_or(|(r, _, _)| rank < *r) {
                    skill_file = Some((rank, name, is_link));
                }
                continue;
            }
            if (ft.is_dir() || is_link) && !name.to_str().is_some_and(|n| SKIP_DIRS.contains(&n)) {
                subdirs.push((name, is_link));
            }
        }
        (skill_file, subdirs, listed)
    }

    /// Hands the skill file `name` in `path` on as a candidate; `None`
    /// when the file cap is reached (and says so).
    fn take_skill_file(
        &mut self,
        path: &Path,
        rel: &Path,
        name: OsString,
        is_link: bool,
        others: bool,
    ) -> Option<()> {
        if self.count >= self.opts.max_files {
            let msg = format!(
                "stopped after {} skill files (the cap): the rest of this root is not loaded",
                self.opts.max_files
            );
            self.warn(path, msg);
            return None;
        }
        let folder_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.count += 1;
        (self.found)(Candidate {
            dir: path.to_path_buf(),
            path: path.join(&name),
            rel: rel.join(&name),
            folder_name,
            is_link,
            others,
        });
        Some(())
    }
}

/// A skill file in a listing: its rank in `SKILL_FILES`, its name, and
/// whether it is a symlink.
type SkillFile = (usize, OsString, bool);

/// Reads a file inside `dir`, refusing escapes, non-files and anything over
/// `max` bytes without reading more than `max + 1` bytes.
pub(crate) fn read_capped(
    dir: &Dir,
    name: impl AsRef<Path>,
    is_link: bool,
    max: u64,
) -> Result<Vec<u8>, String> {
    let name = name.as_ref();
    let why = |doing: &str, e: io::Error| refusal(is_link, doing, &e);
    // A symlink is checked before opening so that one pointing at a FIFO
    // cannot block the open; a plain entry was typed by the directory
    // listing, and is checked again after opening.
    if is_link {
        let meta = dir.metadata(name).map_err(|e| why("read", e))?;
        if !meta.is_file() {
            return Err("not a regular file".to_owned());
        }
    }
    let file = dir.open(name).map_err(|e| why("open", e))?;
    let meta = file.metadata().map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    if meta.len() > max {
        return Err(format!(
            "file is {} bytes, over the {max}-byte cap",
            meta.len()
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0).saturating_add(1));
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "file grew past the {max}-byte cap while being read"
        ));
    }
    Ok(bytes)
}

/// Why `doing` (read, open) an entry failed: it leads outside the skill
/// root (through a symlink when `is_link`), or the error.
fn refusal(is_link: bool, doing: &str, e: &io::Error) -> String {
    match (is_escape(e), is_link) {
        (true, true) => format!("symlink leads outside the skill root: refused ({e})"),
        (true, false) => format!("path leads outside the skill root: refused ({e})"),
        (false, _) => format!("cannot {doing}: {e}"),
    }
}
