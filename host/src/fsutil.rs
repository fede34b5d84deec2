//! Small filesystem helpers shared by every stage that writes user data.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically: a temporary file in the same folder,
/// flushed to disk, then renamed over the target. A reader sees the old file
/// or the new one, never half of one; a crash leaves the old one intact.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        unique()
    ));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Makes a rename or removal inside `dir` durable. Best effort: a file
/// system that cannot sync a folder loses nothing but durability.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Opens `path` for appending, creating it if needed, but never through a
/// symbolic link at `path` itself: the host's own logs under a fixed name
/// (`.skillhost/refused-runs.jsonl`, a forged skill's history) would
/// otherwise append to wherever a link planted there points.
pub fn open_append(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.create(true).append(true);
    open_no_follow(&mut options, path)
}

/// Takes an exclusive lock on the lock file at `path`, made if needed and
/// never through a symbolic link there (see [`open_append`]); held until
/// the file is dropped. Blocks while another process holds it.
pub fn lock_file(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    let file = open_no_follow(&mut options, path)?;
    file.lock()?;
    Ok(file)
}

/// Opens `path` with `options`, refusing a symbolic link at `path` itself
/// (`O_NOFOLLOW` on unix) with an error that says so.
fn open_no_follow(options: &mut fs::OpenOptions, path: &Path) -> io::Result<fs::File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path).map_err(|e| {
        if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            io::Error::other(format!(
                "{} is a symbolic link; the host does not write through it",
                path.display()
            ))
        } else {
            e
        }
    })
}

/// Renames `from` to `to`, failing with `AlreadyExists` if `to` exists,
/// even as an empty folder (which a plain rename would replace). Where the
/// kernel cannot do this in one step (not Linux, or a file system without
/// `RENAME_NOREPLACE`) the existence check and the rename are two steps.
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    match renameat2(from, to, libc::RENAME_NOREPLACE) {
        Err(e) if unsupported(&e) => {}
        other => return other,
    }
    if fs::symlink_metadata(to).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists", to.display()),
        ));
    }
    fs::rename(from, to)
}

/// Swaps `a` and `b` (both must exist) in one step, so that a reader sees
/// one or the other at each path, never neither. `Ok(false)` where the
/// kernel or the file system cannot (the caller falls back to two renames).
pub fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    match renameat2(a, b, libc::RENAME_EXCHANGE) {
        Ok(()) => return Ok(true),
        Err(e) if unsupported(&e) => {}
        Err(e) => return Err(e),
    }
    let _ = (a, b);
    Ok(false)
}

#[cfg(target_os = "linux")]
fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: both pointers are NUL-terminated strings that outlive the
    // call; renameat2 reads them and nothing else.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The kernel or the file system does not know the flag.
#[cfg(target_os = "linux")]
fn unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL | libc::ENOSYS | libc::ENOTSUP)
    )
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_file_excludes_a_second_holder_and_is_never_a_symlink() {
        let d = tempfile::tempdir().expect("tempdir");
        let path = d.path().join(".lock");
        let held = lock_file(&path).expect("lock");
        let second = fs::File::open(&path).expect("open");
        assert!(
            matches!(second.try_lock(), Err(fs::TryLockError::WouldBlock)),
            "held while the first is alive"
        );
        drop(held);
        second.try_lock().expect("free once dropped");

        #[cfg(unix)]
        {
            let missing = d.path().join("missing");
            let planted = d.path().join("planted.lock");
            std::os::unix::fs::symlink(&missing, &planted).expect("symlink");
            let e = lock_file(&planted).expect_err("a symlink is refused");
            assert!(e.to_string().contains("symbolic link"), "{e}");
            assert!(!missing.exists(), "nothing created through the link");
        }
    }

    #[test]
    fn open_append_appends_and_never_through_a_symlink() {
        let d = tempfile::tempdir().expect("tempdir");
        let log = d.path().join("log.jsonl");
        open_append(&log)
            .and_then(|mut f| f.write_all(b"one\n"))
            .expect("create");
        open_append(&log)
            .and_then(|mut f| f.write_all(b"two\n"))
            .expect("append");
        assert_eq!(fs::read_to_string(&log).expect("read"), "one\ntwo\n");

        #[cfg(unix)]
        {
            let target = d.path().join("elsewhere");
            fs::write(&target, b"keep\n").expect("target");
            let planted = d.path().join("planted.jsonl");
            std::os::unix::fs::symlink(&target, &planted).expect("symlink");
            let e = open_append(&planted).expect_err("a symlink is refused");
            assert!(e.to_string().contains("symbolic link"), "{e}");
            assert_eq!(fs::read_to_string(&target).expect("read"), "keep\n");
            // A dangling link is not followed to create its target either.
            let missing = d.path().join("missing");
            let dangling = d.path().join("dangling.jsonl");
            std::os::unix::fs::symlink(&missing, &dangling).expect("symlink");
            open_append(&dangling).expect_err("a dangling symlink is refused");
            assert!(!missing.exists(), "nothing created through the link");
        }
    }

    #[test]
    fn rename_noreplace_refuses_an_existing_target_even_an_empty_folder() {
        let d = tempfile::tempdir().expect("tempdir");
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        fs::create_dir(&a).expect("mkdir");
        fs::write(a.join("f"), b"x").expect("write");
        fs::create_dir(&b).expect("mkdir");
        let e = rename_noreplace(&a, &b).expect_err("b exists");
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
        assert!(a.join("f").is_file(), "the source is untouched");
        fs::remove_dir(&b).expect("rmdir");
        rename_noreplace(&a, &b).expect("b is gone");
        assert!(b.join("f").is_file() && !a.exists());
    }

    #[test]
    fn exchange_swaps_two_folders() {
        let d = tempfile::tempdir().expect("tempdir");
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        for (dir, text) in [(&a, "from a"), (&b, "from b")] {
            fs::create_dir(dir).expect("mkdir");
            fs::write(dir.join("f"), text).expect("write");
        }
        if exchange(&a, &b).expect("exchange") {
            assert_eq!(fs::read_to_string(a.join("f")).expect("read"), "from b");
            assert_eq!(fs::read_to_string(b.join("f")).expect("read"), "from a");
        } else {
            // Not supported here: nothing moved.
            assert_eq!(fs::read_to_string(a.join("f")).expect("read"), "from a");
        }
    }

    #[test]
    fn replaces_content_and_leaves_no_temp_files() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("f.txt");
        write_atomic(&p, b"one").expect("write");
        write_atomic(&p, b"two").expect("write");
        assert_eq!(fs::read(&p).expect("read"), b"two");
        let names: Vec<_> = fs::read_dir(d.path())
            .expect("ls")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
