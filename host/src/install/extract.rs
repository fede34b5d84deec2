//! Unpacking a skill (a folder, a `.tar.gz` or a `.zip`) into a fresh
//! staging folder, under caps, refusing every entry that could put
//! anything anywhere else.
//!
//! Every source feeds one [`Sink`], which owns the caps and the checks:
//! - a name is UTF-8, relative, without `..`, a backslash or a NUL, at most
//!   `max_depth` folders deep, and is written through a cap-std `Dir`
//!   rooted at the staging folder, so even a check missed here could not
//!   leave it (the kernel resolves beneath the folder);
//! - only regular files and folders are made: links (symbolic or hard),
//!   devices, pipes and sockets are refused, and nothing the sink writes
//!   is ever a link, so no later write can follow one;
//! - files are created with `O_EXCL`: a name that appears twice is refused;
//! - sizes are the bytes actually read, never what a header claims, against
//!   a per-file and a total cap; entries are counted against a cap before
//!   their names are even looked at.
//!
//! Modes, owners, times and extended attributes are not restored: files
//! get the process's defaults (no set-id or executable bits).

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, OpenOptions};

use super::{InstallConfig, InstallError};

/// Folders a folder source never copies: version control, not skill.
const SKIPPED_SOURCE_DIRS: [&str; 1] = [".git"];
/// Archive folders that hold nothing of the skill (macOS resource forks).
const SKIPPED_ARCHIVE_DIRS: [&str; 1] = ["__MACOSX"];
/// Longest name of one path component, as most file systems allow.
const MAX_COMPONENT_BYTES: usize = 255;
/// Tar headers (and PAX records) an entry may add to the decompressed
/// stream beyond its data: bounds the work a stream of headers can cause.
const TAR_OVERHEAD_PER_ENTRY: u64 = 8 << 10;

/// What was unpacked: every file and folder, relative to the staging folder.
#[derive(Debug, Default)]
pub(super) struct Unpacked {
    pub files: Vec<PathBuf>,
    pub dirs: Vec<PathBuf>,
    /// Bytes written, over all files.
    pub bytes: u64,
}

/// What kind of entry a source offered.
enum Kind {
    File,
    Dir,
    /// Anything else, with what it is in words ("a symbolic link").
    Refused(&'static str),
}

/// Writes entries beneath `dir`, enforcing the caps and the checks.
pub(super) struct Sink<'a> {
    dir: Dir,
    limits: &'a InstallConfig,
    entries: usize,
    seen: HashSet<PathBuf>,
    out: Unpacked,
}

impl<'a> Sink<'a> {
    /// A sink writing into `dir`, which must exist and be empty.
    pub fn new(dir: &Path, limits: &'a InstallConfig) -> Result<Self, InstallError> {
        let dir = Dir::open_ambient_dir(dir, cap_std::ambient_authority())
            .map_err(InstallError::io("open", dir))?;
        Ok(Sink {
            dir,
            limits,
            entries: 0,
            seen: HashSet::new(),
            out: Unpacked::default(),
        })
    }

    pub fn finish(self) -> Unpacked {
        self.out
    }

    /// Counts one entry of the source, whatever it is.
    fn count(&mut self) -> Result<(), InstallError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(InstallError::TooManyEntries {
                max: self.limits.max_entries,
            });
        }
        Ok(())
    }

    /// Checks an entry's name and kind; `None` for an entry that is
    /// skipped (the root itself, `__MACOSX/`).
    fn admit(&mut self, raw: &[u8], kind: &Kind) -> Result<Option<PathBuf>, InstallError> {
        self.count()?;
        let shown = || printable(raw);
        let rel =
            relative_path(raw, self.limits.max_depth).map_err(|reason| InstallError::Refused {
                entry: shown(),
                reason,
            })?;
        if let Kind::Refused(what) = kind {
            return Err(InstallError::Refused {
                entry: shown(),
                reason: format!("it is {what}, and only regular files and folders are installed"),
            });
        }
        let Some(rel) = rel else { return Ok(None) };
        if rel
            .components()
            .next()
            .is_some_and(|c| SKIPPED_ARCHIVE_DIRS.iter().any(|s| c.as_os_str() == *s))
        {
            return Ok(None);
        }
        Ok(Some(rel))
    }

    fn dir(&mut self, raw: &[u8]) -> Result<(), InstallError> {
        let Some(rel) = self.admit(raw, &Kind::Dir)? else {
            return Ok(());
        };
        if self.seen.contains(&rel) {
            return Ok(());
        }
        self.dir
            .create_dir_all(&rel)
            .map_err(|e| refused_io(&rel, "cannot create the folder", e))?;
        self.seen.insert(rel.clone());
        self.out.dirs.push(rel);
        Ok(())
    }

    /// Copies one file from `data`, counting the bytes actually read.
    /// `claimed` is what a header says it holds: an honest header over a
    /// cap is refused before anything is written (a lying one is caught by
    /// the count).
    fn file(&mut self, raw: &[u8], claimed: u64, data: &mut dyn Read) -> Result<(), InstallError> {
        let Some(rel) = self.admit(raw, &Kind::File)? else {
            return Ok(());
        };
        self.within_caps(&rel, claimed, self.out.bytes.saturating_add(claimed))?;
        if !self.seen.insert(rel.clone()) {
            return Err(InstallError::Refused {
                entry: rel.display().to_string(),
                reason: "it appears twice".into(),
            });
        }
        if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.dir
                .create_dir_all(parent)
                .map_err(|e| refused_io(&rel, "cannot create its folder", e))?;
        }
        let mut file = self
            .dir
            .open_with(&rel, OpenOptions::new().write(true).create_new(true))
            .map_err(|e| refused_io(&rel, "cannot create it", e))?;
        self.copy_capped(&rel, data, &mut file)?;
        self.out.files.push(rel);
        Ok(())
    }

    /// A file of `file_bytes`, making the archive `total_bytes`, is
    /// within the caps.
    fn within_caps(
        &self,
        rel: &Path,
        file_bytes: u64,
        total_bytes: u64,
    ) -> Result<(), InstallError> {
        if file_bytes > self.limits.max_file_bytes {
            return Err(InstallError::FileTooLarge {
                entry: rel.display().to_string(),
                max: self.limits.max_file_bytes,
            });
        }
        if total_bytes > self.limits.max_total_bytes {
            return Err(InstallError::TooLarge {
                max: self.limits.max_total_bytes,
            });
        }
        Ok(())
    }

    /// Copies `data` into `file`, counting the bytes read against the caps
    /// as they come.
    fn copy_capped(
        &mut self,
        rel: &Path,
        data: &mut dyn Read,
        file: &mut impl Write,
    ) -> Result<(), InstallError> {
        let mut written: u64 = 0;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match data.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(InstallError::Archive(format!(
                        "cannot read `{}`: {e}",
                        rel.display()
                    )));
                }
            };
            written += n as u64;
            self.out.bytes += n as u64;
            self.within_caps(rel, written, self.out.bytes)?;
            file.write_all(&buf[..n])
                .map_err(|e| refused_io(rel, "cannot write it", e))?;
        }
    }
}

/// An entry's name as it may be printed: a hostile name must not drive
/// the terminal (escape sequences), so control characters are escaped.
pub(super) fn printable(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw)
        .chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

fn refused_io(rel: &Path, what: &str, e: io::Error) -> InstallError {
    InstallError::Refused {
        entry: rel.display().to_string(),
        reason: format!("{what} ({e})"),
    }
}

/// An entry's name as a relative path of plain components; `Ok(None)` for
/// the root itself (`./`). The error says what is wrong with the name.
pub(super) fn relative_path(raw: &[u8], max_depth: usize) -> Result<Option<PathBuf>, String> {
    let name = std::str::from_utf8(raw).map_err(|_| "its name is not UTF-8".to_owned())?;
    if name.contains('\0') {
        return Err("its name contains a NUL byte".into());
    }
    if name.chars().any(char::is_control) {
        return Err("its name contains a control character".into());
    }
    if name.contains('\\') {
        return Err("its name contains a backslash".into());
    }
    if name.starts_with('/') {
        return Err("it is an absolute path".into());
    }
    let mut out = PathBuf::new();
    let mut depth = 0;
    for part in name.split('/') {
        match part {
            "" | "." => continue,
            ".." => return Err("it leads out of its folder (`..`)".into()),
            p if p.len() > MAX_COMPONENT_BYTES => {
                return Err(format!(
                    "a part of its name is longer than {MAX_COMPONENT_BYTES} bytes"
                ));
            }
            p => {
                depth += 1;
                if depth > max_depth {
                    return Err(format!("it is nested deeper than {max_depth} folders"));
                }
                out.push(p);
            }
        }
    }
    Ok((!out.as_os_str().is_empty()).then_some(out))
}

/// Copies a folder: regular files and folders only. A symbolic link is
/// refused (not skipped: a skill missing a file it expects is worse than
/// a clear refusal); `.git` is skipped.
///
/// The walk holds a handle on each folder and opens every entry relative
/// to its folder's handle, one name at a time, never following a link
/// (`openat` with `O_NOFOLLOW`): a subfolder swapped for a link to
/// `~/.ssh` after it was listed fails to open, instead of being read
/// through by path.
pub(super) fn from_folder(src: &Path, sink: &mut Sink<'_>) -> Result<(), InstallError> {
    from_folder_with_hook(src, sink, &mut |_| {})
}

/// [`from_folder`], calling `hook` with each folder's path (relative to
/// `src`) after the folder is listed and before anything in it is opened:
/// how a test swaps a folder for a link in the middle of a copy.
#[doc(hidden)]
pub(super) fn from_folder_with_hook(
    src: &Path,
    sink: &mut Sink<'_>,
    hook: &mut dyn FnMut(&Path),
) -> Result<(), InstallError> {
    // The source itself is what the user named: a link to it is followed.
    let root = Dir::open_ambient_dir(src, cap_std::ambient_authority())
        .map_err(InstallError::io("open", src))?;
    copy_dir(&root, src, &PathBuf::new(), sink, hook)
}

/// Copies the folder open as `dir` (at `path`, `rel` inside the source).
/// Recursion is bounded: `sink.dir` refuses a folder deeper than
/// `max_depth` before it is opened.
fn copy_dir(
    dir: &Dir,
    path: &Path,
    rel: &Path,
    sink: &mut Sink<'_>,
    hook: &mut dyn FnMut(&Path),
) -> Result<(), InstallError> {
    let entries = sorted_entries(dir, path)?;
    hook(rel);
    for (name, ft) in entries {
        let child_rel = rel.join(&name);
        let raw = child_rel.as_os_str().as_encoded_bytes();
        if ft.is_dir() {
            if rel.as_os_str().is_empty() && SKIPPED_SOURCE_DIRS.iter().any(|s| name == *s) {
                continue;
            }
            sink.dir(raw)?;
            let child = open_no_follow(dir, &name, true)
                .map(Dir::from_std_file)
                .map_err(|e| swapped(&child_rel, "folder", e))?;
            copy_dir(&child, &path.join(&name), &child_rel, sink, hook)?;
        } else if ft.is_file() {
            let mut file =
                open_no_follow(dir, &name, false).map_err(|e| swapped(&child_rel, "file", e))?;
            if !file.metadata().is_ok_and(|m| m.is_file()) {
                sink.admit(raw, &Kind::Refused("no longer a regular file"))?;
            }
            sink.file(raw, 0, &mut file)?;
        } else {
            sink.admit(raw, &Kind::Refused(special_kind(&ft)))?;
        }
    }
    Ok(())
}

/// The folder's entries (name and kind, links not followed), by name.
fn sorted_entries(
    dir: &Dir,
    path: &Path,
) -> Result<Vec<(std::ffi::OsString, cap_std::fs::FileType)>, InstallError> {
    let mut entries = Vec::new();
    for entry in dir.entries().map_err(InstallError::io("list", path))? {
        let entry = entry.map_err(InstallError::io("list", path))?;
        let kind = entry
            .file_type()
            .map_err(InstallError::io("read", &path.join(entry.file_name())))?;
        entries.push((entry.file_name(), kind));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// The refusal of an entry that could not be opened as what it was
/// listed as: most likely swapped for a link while the folder was copied.
fn swapped(rel: &Path, what: &str, e: io::Error) -> InstallError {
    let reason = match e.raw_os_error() {
        #[cfg(unix)]
        Some(libc::ELOOP | libc::ENOTDIR) => format!(
            "it was listed as a {what} and is now a symbolic link or something else (changed during the copy?); links are not followed"
        ),
        _ => format!("cannot open it ({e})"),
    };
    InstallError::Refused {
        entry: printable(rel.as_os_str().as_encoded_bytes()),
        reason,
    }
}

/// Opens `name` in `dir` for reading, without following a link: a folder
/// (`folder`) with `O_DIRECTORY`, else with `O_NONBLOCK` (a pipe swapped
/// in does not block the open).
#[cfg(unix)]
fn open_no_follow(dir: &Dir, name: &std::ffi::OsStr, folder: bool) -> io::Result<fs::File> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    let c_name = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a name"))?;
    let kind = if folder {
        libc::O_DIRECTORY
    } else {
        libc::O_NONBLOCK
    };
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | kind;
    // SAFETY: `dir` is an open folder for the duration of the call and
    // `c_name` a NUL-terminated string that outlives it.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c_name.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// Elsewhere: cap-std opens beneath `dir` (no link leads out of it).
#[cfg(not(unix))]
fn open_no_follow(dir: &Dir, name: &std::ffi::OsStr, folder: bool) -> io::Result<fs::File> {
    if dir.symlink_metadata(name)?.file_type().is_symlink() {
        return Err(io::Error::other("a symbolic link"));
    }
    if folder {
        dir.open_dir(name).map(Dir::into_std_file)
    } else {
        dir.open(name).map(cap_std::fs::File::into_std)
    }
}

fn special_kind(ft: &cap_std::fs::FileType) -> &'static str {
    if ft.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use cap_std::fs::FileTypeExt;
        if ft.is_block_device() || ft.is_char_device() {
            return "a device file";
        }
        if ft.is_fifo() {
            return "a named pipe";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Unpacks a gzip-compressed tar stream.
pub(super) fn from_tar_gz(data: impl Read, sink: &mut Sink<'_>) -> Result<(), InstallError> {
    let limits = sink.limits;
    let stream_cap = limits.max_total_bytes.saturating_add(
        (limits.max_entries as u64)
            .saturating_add(2)
            .saturating_mul(TAR_OVERHEAD_PER_ENTRY),
    );
    let mut capped = Capped::new(flate2::read::GzDecoder::new(data), stream_cap);
    let result = unpack_tar(&mut capped, sink);
    if capped.exceeded {
        return Err(InstallError::TooLarge {
            max: limits.max_total_bytes,
        });
    }
    result
}

fn unpack_tar(data: &mut dyn Read, sink: &mut Sink<'_>) -> Result<(), InstallError> {
    use tar::EntryType;
    let bad = |e: io::Error| InstallError::Archive(format!("not a readable .tar.gz: {e}"));
    let mut archive = tar::Archive::new(data);
    for entry in archive.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let name = entry.path_bytes().into_owned();
        let kind = match entry.header().entry_type() {
            EntryType::Regular | EntryType::Continuous if name.ends_with(b"/") => Kind::Dir,
            EntryType::Regular | EntryType::Continuous => Kind::File,
            EntryType::Directory => Kind::Dir,
            // `git archive` writes one (the commit id): no file of the skill.
            EntryType::XGlobalHeader => {
                sink.count()?;
                continue;
            }
            EntryType::Symlink => Kind::Refused("a symbolic link"),
            EntryType::Link => Kind::Refused("a hard link"),
            EntryType::Char | EntryType::Block => Kind::Refused("a device file"),
            EntryType::Fifo => Kind::Refused("a named pipe"),
            EntryType::GNUSparse => Kind::Refused("a sparse file"),
            _ => Kind::Refused("an entry of an unknown type"),
        };
        match kind {
            Kind::File => {
                let claimed = entry.size();
                sink.file(&name, claimed, &mut entry)?
            }
            Kind::Dir => sink.dir(&name)?,
            refused => {
                sink.admit(&name, &refused)?;
            }
        }
    }
    Ok(())
}

/// Unpacks a zip archive. Only stored and deflated entries can be read;
/// encrypted ones are refused by the reader.
pub(super) fn from_zip(data: impl Read + Seek, sink: &mut Sink<'_>) -> Result<(), InstallError> {
    let mut archive = zip::ZipArchive::new(data)
        .map_err(|e| InstallError::Archive(format!("not a readable .zip: {e}")))?;
    if archive.len() > sink.limits.max_entries {
        return Err(InstallError::TooManyEntries {
            max: sink.limits.max_entries,
        });
    }
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).map_err(|e| {
            InstallError::Archive(format!("cannot read entry {i} of the .zip: {e}"))
        })?;
        let name = file.name_raw().to_vec();
        let kind = match file.unix_mode().map(|m| m & 0o170000) {
            Some(0o120000) => Kind::Refused("a symbolic link"),
            Some(0o020000 | 0o060000) => Kind::Refused("a device file"),
            Some(0o010000) => Kind::Refused("a named pipe"),
            Some(0o140000) => Kind::Refused("a socket"),
            Some(0o040000) => Kind::Dir,
            Some(0 | 0o100000) | None if name.ends_with(b"/") => Kind::Dir,
            Some(0 | 0o100000) | None => Kind::File,
            Some(_) => Kind::Refused("an entry of an unknown type"),
        };
        match kind {
            Kind::File => {
                let claimed = file.size();
                sink.file(&name, claimed, &mut file)?
            }
            Kind::Dir => sink.dir(&name)?,
            refused => {
                sink.admit(&name, &refused)?;
            }
        }
    }
    Ok(())
}

/// A reader that fails once `cap` bytes have passed, remembering that it
/// did: a stream of tar headers or skipped data cannot run on for ever.
struct Capped<R> {
    inner: R,
    left: u64,
    exceeded: bool,
}

impl<R> Capped<R> {
    fn new(inner: R, cap: u64) -> Self {
        Capped {
            inner,
            left: cap,
            exceeded: false,
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // One byte more means the stream is longer than the cap.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            self.exceeded = true;
            return Err(io::Error::other("the archive unpacks to more than the cap"));
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_plain_relative_paths() {
        let ok = |s: &str| relative_path(s.as_bytes(), 8).expect("accepted");
        assert_eq!(ok("a/b.txt"), Some(PathBuf::from("a/b.txt")));
        assert_eq!(ok("./a//b/"), Some(PathBuf::from("a/b")));
        assert_eq!(ok("./"), None);
        let bad = |s: &[u8]| relative_path(s, 8).expect_err("refused");
        assert!(bad(b"/etc/passwd").contains("absolute"));
        assert!(bad(b"a/../../b").contains(".."));
        assert!(bad(b"..").contains(".."));
        assert!(bad(b"a\\..\\b").contains("backslash"));
        assert!(bad(b"a\0b").contains("NUL"));
        assert!(bad(b"a\x1b[31mb").contains("control character"));
        assert_eq!(printable(b"../\x1b[2J"), "../\\u{1b}[2J");
        assert!(bad(b"caf\xe9").contains("UTF-8"));
        assert!(bad("x/".repeat(9).as_bytes()).contains("deeper than 8"));
        assert!(bad("y".repeat(256).as_bytes()).contains("longer than 255"));
    }

    #[test]
    fn a_file_is_measured_by_what_is_read_not_by_what_its_header_claims() {
        let d = tempfile::tempdir().expect("tempdir");
        let limits = InstallConfig {
            max_file_bytes: 1000,
            max_total_bytes: 1500,
            ..InstallConfig::default()
        };
        let mut sink = Sink::new(d.path(), &limits).expect("sink");
        let e = sink
            .file(b"liar.bin", 10, &mut &[0u8; 1001][..])
            .expect_err("claims 10, holds 1001");
        assert!(
            matches!(e, InstallError::FileTooLarge { max: 1000, .. }),
            "{e}"
        );
        let e = sink
            .file(b"honest.bin", 5000, &mut &[0u8; 1][..])
            .expect_err("claims too much");
        assert!(matches!(e, InstallError::FileTooLarge { .. }), "{e}");
        // The first file's bytes count towards the total, refused or not.
        sink.file(b"a.bin", 0, &mut &[0u8; 400][..]).expect("fits");
        let e = sink
            .file(b"b.bin", 0, &mut &[0u8; 400][..])
            .expect_err("over the total");
        assert!(matches!(e, InstallError::TooLarge { max: 1500 }), "{e}");
    }

    /// Every file under `dir`, by path relative to it, with its content.
    fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).expect("list") {
                let path = e.expect("entry").path();
                let meta = fs::symlink_metadata(&path).expect("stat");
                if meta.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path.strip_prefix(dir).expect("inside").to_path_buf();
                    out.push((rel, fs::read(&path).unwrap_or_default()));
                }
            }
        }
        out
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_swapped_for_a_link_during_the_copy_is_refused_and_not_read() {
        let d = tempfile::tempdir().expect("tempdir");
        let secret = d.path().join("dot-ssh");
        fs::create_dir(&secret).expect("mkdir secret");
        fs::write(secret.join("id_ed25519"), "SECRET KEY").expect("write secret");
        let src = d.path().join("skill");
        fs::create_dir_all(src.join("refs")).expect("mkdir refs");
        fs::write(src.join("SKILL.md"), "---\nname: s\ndescription: d\n---\n").expect("md");
        fs::write(src.join("refs/guide.md"), "# Guide\n").expect("guide");
        let staging = d.path().join("staging");
        fs::create_dir(&staging).expect("mkdir staging");

        let limits = InstallConfig::default();
        let mut sink = Sink::new(&staging, &limits).expect("sink");
        let mut swaps = 0;
        // After the top is listed (`refs` seen as a folder), before it is
        // opened: `refs` becomes a link to the secret folder.
        let e = from_folder_with_hook(&src, &mut sink, &mut |rel| {
            if rel.as_os_str().is_empty() {
                fs::remove_dir_all(src.join("refs")).expect("remove refs");
                std::os::unix::fs::symlink(&secret, src.join("refs")).expect("symlink");
                swaps += 1;
            }
        })
        .expect_err("the swapped folder must not be copied");
        assert_eq!(swaps, 1);
        assert!(
            matches!(&e, InstallError::Refused { entry, .. } if entry == "refs"),
            "{e}"
        );
        assert!(e.to_string().contains("symbolic link"), "{e}");
        for (rel, bytes) in files_under(&staging) {
            assert!(
                !String::from_utf8_lossy(&bytes).contains("SECRET"),
                "the secret was copied to {}",
                rel.display()
            );
        }
        assert!(!staging.join("refs/id_ed25519").exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_file_swapped_for_a_link_during_the_copy_is_refused() {
        let d = tempfile::tempdir().expect("tempdir");
        let secret = d.path().join("secret.txt");
        fs::write(&secret, "SECRET").expect("write secret");
        let src = d.path().join("skill");
        fs::create_dir_all(src.join("refs")).expect("mkdir");
        fs::write(src.join("refs/guide.md"), "# Guide\n").expect("guide");
        let staging = d.path().join("staging");
        fs::create_dir(&staging).expect("mkdir staging");
        let limits = InstallConfig::default();
        let mut sink = Sink::new(&staging, &limits).expect("sink");
        let e = from_folder_with_hook(&src, &mut sink, &mut |rel| {
            if rel == Path::new("refs") {
                fs::remove_file(src.join("refs/guide.md")).expect("remove");
                std::os::unix::fs::symlink(&secret, src.join("refs/guide.md")).expect("link");
            }
        })
        .expect_err("the swapped file must not be read");
        assert!(e.to_string().contains("refs/guide.md"), "{e}");
        assert!(
            files_under(&staging).is_empty(),
            "{:?}",
            files_under(&staging)
        );
    }

    #[test]
    fn the_cap_counts_bytes_read_and_says_it_was_hit() {
        let mut r = Capped::new(&[7u8; 10][..], 10);
        let mut out = Vec::new();
        r.read_to_end(&mut out).expect("exactly the cap is fine");
        assert!(!r.exceeded);
        let mut r = Capped::new(&[7u8; 11][..], 10);
        let e = r.read_to_end(&mut Vec::new()).expect_err("one byte over");
        assert!(r.exceeded, "{e}");
    }
}
