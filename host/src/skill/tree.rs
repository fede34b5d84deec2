//! What of a skill's folder its readers can reach, and one digest of it:
//! what an approval and a grant are pinned to, so that a change to any
//! file a run can read (a reference, a script, a case, the handler, the
//! SKILL.md) voids them.
//!
//! The readers and their rules are the ones that serve the files:
//! - a model's read tool and MCP resources serve the skill's content
//!   ([`is_content_path`]: no dot-paths, no build output);
//! - the sandbox mounts the folders the skill declares in `files`
//!   (resolved as the sandbox resolves them: symlinks followed, never out
//!   of the folder), whatever their names;
//! - the host reads the SKILL.md, the handler and `tests/cases.jsonl`.
//!
//! Entries are hashed by kind without following links: a file by its
//! bytes, a symlink by its target text, a folder by its name. Two things
//! are left out, both named in the docs: folders the skill declares it
//! writes (its state, like its key-value data; a skill that declares one
//! is approved by hand only) and the gate's report beside a quarantined
//! artifact (the host's own, unless a declared folder covers it).

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use sha2::{Digest, Sha256};

use super::files::{FileIdentity, is_content_path};
use super::model::Skill;

/// Most entries (files, links, folders) a pinned tree may hold.
pub const MAX_TREE_ENTRIES: usize = 10_000;
/// Most bytes its files may hold together.
pub const MAX_TREE_BYTES: u64 = 1 << 30;
/// Deepest folder it descends into.
const MAX_TREE_DEPTH: usize = 32;
/// The report the gate writes beside a quarantined artifact
/// (`gate::QUARANTINE_REPORT`): the host's, not the skill's.
pub const HOST_REPORT_FILE: &str = "gate-report.json";

#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    #[error("cannot read '{path}' in the skill folder: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error(
        "the skill folder holds more than {max} files and folders its handler or model can read: too many to pin an approval or grant to (move build output and data it does not use out of it)"
    )]
    TooMany { max: usize },
    #[error(
        "the files of the skill folder its handler or model can read hold more than {max} bytes: too much to pin an approval or grant to"
    )]
    TooLarge { max: u64 },
    #[error("'{path}' in the skill folder is nested deeper than {max} folders")]
    TooDeep { path: String, max: usize },
}

/// What reaches which files: the folders the sandbox may mount, and the
/// folders the skill writes (left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// Skill-relative: declared file folders and the handler, resolved.
    mounted: Vec<PathBuf>,
    /// Skill-relative folders the skill declares it writes.
    state: Vec<PathBuf>,
}

impl Reach {
    /// The reach of `skill` as its folder is now.
    pub fn of(skill: &Skill) -> Reach {
        let dir = skill
            .dir
            .canonicalize()
            .unwrap_or_else(|_| skill.dir.clone());
        let files = &skill.meta.skillhost.capabilities.files;
        let own = |p: &&String| !p.starts_with("workspace:");
        let mut mounted: Vec<PathBuf> = files
            .read
            .iter()
            .chain(&files.write)
            .filter(own)
            .flat_map(|p| resolved(&dir, p))
            .collect();
        let handler = skill.meta.skillhost.handler.as_deref().unwrap_or_default();
        mounted.extend(resolved(&dir, handler));
        let defining = [PathBuf::from(skill.file_name()), lexical(handler)];
        let state = files
            .write
            .iter()
            .filter(own)
            .flat_map(|p| resolved(&dir, p))
            .filter(|w| !w.as_os_str().is_empty() && !defining.iter().any(|d| d.starts_with(w)))
            .collect();
        Reach { mounted, state }
    }

    /// The skill's own folders it declares it writes, skill-relative.
    pub fn state(&self) -> &[PathBuf] {
        &self.state
    }

    fn is_state(&self, rel: &Path) -> bool {
        self.state.iter().any(|s| rel.starts_with(s))
    }

    fn mounts(&self, rel: &Path) -> bool {
        self.mounted
            .iter()
            .any(|m| rel.starts_with(m) || m.starts_with(rel))
    }

    /// Whether a file (`dir` false) or a folder at `rel` is pinned.
    fn wanted(&self, rel: &Path, dir: bool) -> bool {
        if self.is_state(rel) {
            return false;
        }
        let mounted = self.mounts(rel);
        if rel == Path::new(HOST_REPORT_FILE) && !dir {
            return self.mounted.iter().any(|m| m.as_os_str().is_empty());
        }
        let content = if dir {
            is_content_path(&rel.join("f"))
        } else {
            is_content_path(rel)
        };
        mounted || content
    }
}

/// A declared path as the sandbox resolves it: inside `dir` with symlinks
/// followed, skill-relative; as written when it does not exist; nothing
/// when it leads outside (the sandbox refuses it).
fn resolved(dir: &Path, declared: &str) -> Option<PathBuf> {
    let rel = lexical(declared.trim().trim_end_matches('/'));
    match dir.join(&rel).canonicalize() {
        Ok(real) => real.strip_prefix(dir).ok().map(Path::to_path_buf),
        Err(_) => Some(rel),
    }
}

/// `p` without `.` components; `..` is kept (and then never matches).
fn lexical(p: &str) -> PathBuf {
    Path::new(p)
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Link,
    Dir,
    Other,
}

impl Kind {
    fn of(ft: std::fs::FileType) -> Kind {
        if ft.is_symlink() {
            Kind::Link
        } else if ft.is_dir() {
            Kind::Dir
        } else if ft.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }
}

/// The entries a scan keeps, within the bounds.
#[derive(Default)]
struct Tally {
    entries: Vec<Entry>,
    bytes: u64,
}

impl Tally {
    fn add(&mut self, e: Entry) -> Result<(), TreeError> {
        if e.kind == Kind::File {
            self.bytes = self.bytes.saturating_add(e.identity.size());
        }
        self.entries.push(e);
        if self.entries.len() > MAX_TREE_ENTRIES {
            return Err(TreeError::TooMany {
                max: MAX_TREE_ENTRIES,
            });
        }
        if self.bytes > MAX_TREE_BYTES {
            return Err(TreeError::TooLarge {
                max: MAX_TREE_BYTES,
            });
        }
        Ok(())
    }
}

/// One entry as a scan saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    rel: PathBuf,
    kind: Kind,
    identity: FileIdentity,
}

/// The pinned entries of a folder, looked at (`lstat`), not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The folder itself, looked at before it was listed.
    root: FileIdentity,
    entries: Vec<Entry>,
}

impl Scan {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The pinned entries, read, and their digest.
#[derive(Debug, Clone)]
pub struct TreeDigest {
    root: FileIdentity,
    entries: Vec<(Entry, Vec<u8>)>,
    /// When the read that saw them started.
    read_at: SystemTime,
    digest: String,
}

impl TreeDigest {
    /// How many entries it pins.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `sha256:` over every entry's path, kind and content.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The digest with the files `rel` holding `bytes` instead (added when
    /// absent): a folder as it will be once they are written into it.
    /// Only for comparing; such a digest confirms no scan.
    pub fn with_files(&self, files: &[(&str, &[u8])]) -> TreeDigest {
        let mut entries = self.entries.clone();
        for (rel, bytes) in files {
            let rel = lexical(rel);
            entries.retain(|(e, _)| e.rel != rel);
            let entry = Entry {
                rel,
                kind: Kind::File,
                identity: FileIdentity::default(),
            };
            entries.push((entry, Sha256::digest(bytes).to_vec()));
        }
        entries.sort_by(|a, b| order(&a.0.rel, &b.0.rel));
        TreeDigest {
            root: FileIdentity::default(),
            digest: combine(&entries),
            entries,
            read_at: std::time::UNIX_EPOCH,
        }
    }
}

fn order(a: &Path, b: &Path) -> std::cmp::Ordering {
    a.as_os_str()
        .as_encoded_bytes()
        .cmp(b.as_os_str().as_encoded_bytes())
}

fn combine(entries: &[(Entry, Vec<u8>)]) -> String {
    let mut h = Sha256::new();
    h.update(b"skillhost skill tree 1\n");
    for (e, content) in entries {
        let rel = e.rel.as_os_str().as_encoded_bytes();
        h.update((rel.len() as u64).to_le_bytes());
        h.update(rel);
        h.update([e.kind as u8]);
        h.update((content.len() as u64).to_le_bytes());
        h.update(content);
    }
    format!("sha256:{}", crate::types::hex(&h.finalize()))
}

/// The listed `item` of folder `prefix` as an entry (the entry itself,
/// links not followed), when `reach` pins it.
fn reached_entry(
    item: &std::fs::DirEntry,
    prefix: &Path,
    reach: &Reach,
) -> Result<Option<Entry>, TreeError> {
    let rel = prefix.join(item.file_name());
    let meta = item.metadata().map_err(io_at(&rel))?;
    let kind = Kind::of(meta.file_type());
    if !reach.wanted(&rel, kind == Kind::Dir) {
        return Ok(None);
    }
    Ok(Some(Entry {
        rel,
        kind,
        identity: FileIdentity::of(&meta),
    }))
}

/// What `previous` read of `e`, when `e` is that version and trusted.
fn known_content(previous: Option<&TreeDigest>, e: &Entry) -> Option<Vec<u8>> {
    let p = previous?;
    let i = p
        .entries
        .binary_search_by(|(k, _)| order(&k.rel, &e.rel))
        .ok()?;
    let (k, content) = &p.entries[i];
    (k == e && k.identity.trusted_if_read_at(p.read_at)).then(|| content.clone())
}

/// What is digested of `e`: a file's digest (its identity as read), a
/// link's target, nothing for the rest.
fn read_content(root: &Dir, e: &mut Entry) -> Result<Vec<u8>, TreeError> {
    Ok(match e.kind {
        Kind::File => {
            let (digest, identity) = file_digest(root, &e.rel)?;
            e.identity = identity;
            digest
        }
        Kind::Link => root
            .read_link_contents(&e.rel)
            .map_err(io_at(&e.rel))?
            .as_os_str()
            .as_encoded_bytes()
            .to_vec(),
        Kind::Dir | Kind::Other => Vec::new(),
    })
}

impl Skill {
    /// The entries of this skill's folder that `reach` pins, sorted; no
    /// file is read.
    pub fn scan_tree(&self, reach: &Reach) -> Result<Scan, TreeError> {
        // Looked at before it is listed, as each folder below is by its
        // parent's listing: an entry added after the look changes it.
        let root = std::fs::metadata(&self.dir).map_err(io_at(""))?;
        let mut tally = Tally::default();
        let mut folders = vec![(PathBuf::new(), 0usize)];
        while let Some((prefix, depth)) = folders.pop() {
            // Listed by path: a folder swapped for a link since it was
            // looked at may list elsewhere, but its files are then read
            // beneath the skill folder only (see `digest_tree`), which
            // refuses them: the pin fails, it never passes.
            let listing = std::fs::read_dir(self.dir.join(&prefix)).map_err(io_at(&prefix))?;
            for item in listing {
                let item = item.map_err(io_at(&prefix))?;
                if let Some(entry) = reached_entry(&item, &prefix, reach)? {
                    if entry.kind == Kind::Dir {
                        if depth >= MAX_TREE_DEPTH {
                            return Err(TreeError::TooDeep {
                                path: entry.rel.display().to_string(),
                                max: MAX_TREE_DEPTH,
                            });
                        }
                        folders.push((entry.rel.clone(), depth + 1));
                    }
                    tally.add(entry)?;
                }
            }
        }
        let mut entries = tally.entries;
        entries.sort_by(|a, b| order(&a.rel, &b.rel));
        Ok(Scan {
            root: FileIdentity::of(&root),
            entries,
        })
    }

    /// Whether `known` still stands for this folder: the folder and each
    /// entry it pins are the versions read ([`FileIdentity`], trusted as
    /// of the read). One `lstat` per entry, no listing: a folder's
    /// listing changes only with its own modification time (an entry
    /// made, removed or renamed in it), and every pinned folder is an
    /// entry. What no pinned folder lists cannot join without one of them
    /// changing.
    pub fn tree_unchanged(&self, known: &TreeDigest) -> bool {
        let same = |now: std::io::Result<std::fs::Metadata>, then: &FileIdentity| {
            now.is_ok_and(|m| {
                FileIdentity::of(&m) == *then && then.trusted_if_read_at(known.read_at)
            })
        };
        same(std::fs::metadata(&self.dir), &known.root)
            && known.entries.iter().all(|(e, _)| {
                same(
                    std::fs::symlink_metadata(self.dir.join(&e.rel)),
                    &e.identity,
                )
            })
    }

    /// Reads what `scan` found and digests it. A file whose identity is
    /// the one `previous` read (and trusts) is not read again.
    pub fn digest_tree(
        &self,
        scan: Scan,
        previous: Option<&TreeDigest>,
    ) -> Result<TreeDigest, TreeError> {
        let read_at = SystemTime::now();
        let root = Dir::open_ambient_dir(&self.dir, ambient_authority()).map_err(io_at(""))?;
        let mut entries = Vec::with_capacity(scan.entries.len());
        for mut e in scan.entries {
            let content = match known_content(previous, &e) {
                Some(c) => c,
                None => read_content(&root, &mut e)?,
            };
            entries.push((e, content));
        }
        Ok(TreeDigest {
            root: scan.root,
            digest: combine(&entries),
            entries,
            read_at,
        })
    }

    /// [`Skill::scan_tree`] and [`Skill::digest_tree`] of the folder as it
    /// is now, every file read.
    pub fn tree_digest(&self) -> Result<TreeDigest, TreeError> {
        let scan = self.scan_tree(&Reach::of(self))?;
        self.digest_tree(scan, None)
    }

    /// The pin of this skill as it is now: approvals and grants hold it
    /// ([`pin_of`] of its SKILL.md version and its tree digest).
    pub fn pin(&self) -> Result<String, TreeError> {
        Ok(pin_of(&self.version, self.tree_digest()?.digest()))
    }
}

/// A skill's pin from its parts: the SKILL.md's content version (`sha256:`
/// of the bytes the catalog read) and its folder's tree digest. Pins of
/// another form (an older host's) never equal one of these.
pub fn pin_of(skill_md_version: &str, tree_digest: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"skillhost skill pin 2\nSKILL.md ");
    h.update(skill_md_version.as_bytes());
    h.update(b"\nfolder ");
    h.update(tree_digest.as_bytes());
    format!("sha256:{}", crate::types::hex(&h.finalize()))
}

/// `sha256` of the regular file `rel` (no link followed, never blocking
/// on a special file swapped in), and the identity of what was read.
fn file_digest(root: &Dir, rel: &Path) -> Result<(Vec<u8>, FileIdentity), TreeError> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = root.open_with(rel, &options).map_err(io_at(rel))?;
    let mut file = file.into_std();
    let meta = file.metadata().map_err(io_at(rel))?;
    if !meta.is_file() {
        return Err(TreeError::Io {
            path: rel.display().to_string(),
            source: io::Error::other("changed into something other than a file while read"),
        });
    }
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut left = MAX_TREE_BYTES;
    loop {
        let n = file.read(&mut buf).map_err(io_at(rel))?;
        if n == 0 {
            break;
        }
        left = left.checked_sub(n as u64).ok_or(TreeError::TooLarge {
            max: MAX_TREE_BYTES,
        })?;
        h.update(&buf[..n]);
    }
    Ok((h.finalize().to_vec(), FileIdentity::of(&meta)))
}

fn io_at(rel: impl AsRef<Path>) -> impl Fn(io::Error) -> TreeError {
    let path = rel.as_ref().display().to_string();
    move |source| TreeError::Io {
        path: if path.is_empty() {
            ".".into()
        } else {
            path.clone()
        },
        source,
    }
}

#[cfg(test)]
mod tests;
