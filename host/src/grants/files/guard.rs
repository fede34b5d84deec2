//! `wasi:filesystem/types` as the handler sees it: wasmtime-wasi's own
//! implementation behind a projection that adds what a shared host needs
//! and WASI does not offer:
//! - a cap on the files and directories one call holds open, so a handler
//!   cannot take the process's descriptors from every other call;
//! - a quota on the bytes a skill keeps in the folders it may write,
//!   counted over every way of writing (`write`, write and append streams,
//!   `set-size`), answered with "insufficient space" past it;
//! - no symbolic or hard links: a link made inside a granted folder would
//!   outlive the call and point other programs (and later grants) at files
//!   the handler was never granted.
//!
//! Everything else is forwarded unchanged.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use bytes::Bytes;
use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, ErrorCode, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::{FsError, FsResult, OutputStream, Pollable, StreamError, StreamResult};
use wasmtime_wasi_io::streams::{DynInputStream, DynOutputStream};

/// Per-call filesystem budget.
pub(crate) struct FsGuard {
    open: HashSet<u32>,
    max_open: usize,
    /// The skill's writable folders, measured before the call's first
    /// change to the filesystem: most calls never change anything, and the
    /// walk is the expensive part.
    writable: Vec<PathBuf>,
    /// Bytes the call may still write once measured; shared with the write
    /// streams.
    write_left: Option<Arc<AtomicI64>>,
    quota: u64,
    /// Denials, for the run record.
    pub(crate) denied: Vec<String>,
}

impl FsGuard {
    pub(crate) fn new(max_open: usize, quota: u64, writable: Vec<PathBuf>) -> Self {
        FsGuard {
            open: HashSet::new(),
            max_open,
            writable,
            write_left: None,
            quota,
            denied: Vec::new(),
        }
    }

    fn note(&mut self, what: String) {
        if self.denied.len() < 16 {
            self.denied.push(format!("denied: {what}"));
        }
    }

    /// The room left in the quota: the quota less what the writable
    /// folders held before the call first changed them.
    fn write_left(&mut self) -> Arc<AtomicI64> {
        let (quota, writable) = (self.quota, &self.writable);
        self.write_left
            .get_or_insert_with(|| {
                let dirs: Vec<&Path> = writable.iter().map(PathBuf::as_path).collect();
                let used = usage(&dirs, USAGE_WALK_ENTRIES);
                let left = i64::try_from(quota.saturating_sub(used)).unwrap_or(i64::MAX);
                Arc::new(AtomicI64::new(left))
            })
            .clone()
    }

    /// Measures the writable folders now, if not yet done: called before
    /// anything that changes them.
    fn measure(&mut self) {
        self.write_left();
    }

    /// Takes `bytes` from the quota, or refuses.
    fn charge(&mut self, bytes: u64) -> Result<(), ErrorCode> {
        if take(&self.write_left(), bytes) {
            return Ok(());
        }
        let quota = self.quota;
        self.note(format!(
            "file quota: the skill may keep {} MiB in its writable folders",
            quota >> 20
        ));
        Err(ErrorCode::InsufficientSpace)
    }
}

/// Entries walked when measuring a skill's writable folders for its quota.
const USAGE_WALK_ENTRIES: usize = 100_000;

fn take(left: &AtomicI64, bytes: u64) -> bool {
    let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
    let mut cur = left.load(Ordering::Relaxed);
    loop {
        if cur < bytes {
            return false;
        }
        match left.compare_exchange_weak(cur, cur - bytes, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(now) => cur = now,
        }
    }
}

/// What the files under `dirs` take, in bytes (stops counting at `cap`
/// entries: a folder that large is treated as full).
fn usage(dirs: &[&Path], cap: usize) -> u64 {
    let mut total = 0u64;
    let mut seen = 0usize;
    let mut stack: Vec<std::path::PathBuf> = dirs.iter().map(|d| d.to_path_buf()).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > cap {
                return u64::MAX;
            }
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                total = total.saturating_add(meta.len());
            }
        }
    }
    total
}

/// The `HasData` of the guarded filesystem interface.
pub(crate) struct GuardedFs;

impl HasData for GuardedFs {
    type Data<'a> = GuardedFsView<'a>;
}

/// wasmtime-wasi's filesystem view of a call, behind the call's guard.
pub(crate) struct GuardedFsView<'a> {
    fs: WasiFilesystemCtxView<'a>,
    guard: &'a mut FsGuard,
}

impl<'a> GuardedFsView<'a> {
    pub(crate) fn new(fs: WasiFilesystemCtxView<'a>, guard: &'a mut FsGuard) -> Self {
        GuardedFsView { fs, guard }
    }
}

/// Links `wasi:filesystem/types` through the guard, in place of
/// wasmtime-wasi's direct implementation; `view` projects a call's data
/// (the sandbox's) onto the guarded view.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    view: fn(&mut T) -> GuardedFsView<'_>,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let r = types::add_to_linker::<T, GuardedFs>(linker, view);
    linker.allow_shadowing(false);
    r
}

impl types::Host for GuardedFsView<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut self.fs, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        types::Host::filesystem_error_code(&mut self.fs, err)
    }
}

type Fd = Resource<types::Descriptor>;

impl HostDescriptor for GuardedFsView<'_> {
    async fn advise(
        &mut self,
        fd: Fd,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        self.fs.advise(fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Fd) -> FsResult<()> {
        self.fs.sync_data(fd).await
    }

    async fn get_flags(&mut self, fd: Fd) -> FsResult<types::DescriptorFlags> {
        self.fs.get_flags(fd).await
    }

    async fn get_type(&mut self, fd: Fd) -> FsResult<types::DescriptorType> {
        self.fs.get_type(fd).await
    }

    async fn set_size(&mut self, fd: Fd, size: types::Filesize) -> FsResult<()> {
        let current = self.fs.stat(Resource::new_borrow(fd.rep())).await?.size;
        if size > current {
            self.guard.charge(size - current)?;
        }
        self.fs.set_size(fd, size).await
    }

    async fn set_times(
        &mut self,
        fd: Fd,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        self.fs.set_times(fd, atim, mtim).await
    }

    async fn read(
        &mut self,
        fd: Fd,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        self.fs.read(fd, len, offset).await
    }

    async fn write(
        &mut self,
        fd: Fd,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        self.guard.charge(buf.len() as u64)?;
        self.fs.write(fd, buf, offset).await
    }

    async fn read_directory(&mut self, fd: Fd) -> FsResult<Resource<types::DirectoryEntryStream>> {
        self.fs.read_directory(fd).await
    }

    async fn sync(&mut self, fd: Fd) -> FsResult<()> {
        self.fs.sync(fd).await
    }

    async fn create_directory_at(&mut self, fd: Fd, path: String) -> FsResult<()> {
        self.guard.measure();
        self.fs.create_directory_at(fd, path).await
    }

    async fn stat(&mut self, fd: Fd) -> FsResult<types::DescriptorStat> {
        self.fs.stat(fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Fd,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::DescriptorStat> {
        self.fs.stat_at(fd, path_flags, path).await
    }

    async fn set_times_at(
        &mut self,
        fd: Fd,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        self.fs.set_times_at(fd, path_flags, path, atim, mtim).await
    }

    async fn link_at(
        &mut self,
        _fd: Fd,
        _old_path_flags: types::PathFlags,
        old_path: String,
        _new_descriptor: Fd,
        new_path: String,
    ) -> FsResult<()> {
        self.guard.note(format!(
            "hard link {} -> {}",
            truncate(&new_path),
            truncate(&old_path)
        ));
        Err(ErrorCode::NotPermitted.into())
    }

    async fn open_at(
        &mut self,
        fd: Fd,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Fd> {
        if self.guard.open.len() >= self.guard.max_open {
            let max = self.guard.max_open;
            self.guard.note(format!(
                "open files: the handler may hold {max} files or folders open at once"
            ));
            return Err(ErrorCode::InsufficientMemory.into());
        }
        if flags.contains(types::DescriptorFlags::WRITE)
            || oflags.intersects(types::OpenFlags::CREATE | types::OpenFlags::TRUNCATE)
        {
            self.guard.measure();
        }
        let opened = self.fs.open_at(fd, path_flags, path, oflags, flags).await?;
        self.guard.open.insert(opened.rep());
        Ok(opened)
    }

    fn drop(&mut self, fd: Fd) -> wasmtime::Result<()> {
        self.guard.open.remove(&fd.rep());
        HostDescriptor::drop(&mut self.fs, fd)
    }

    async fn readlink_at(&mut self, fd: Fd, path: String) -> FsResult<String> {
        self.fs.readlink_at(fd, path).await
    }

    async fn remove_directory_at(&mut self, fd: Fd, path: String) -> FsResult<()> {
        self.guard.measure();
        self.fs.remove_directory_at(fd, path).await
    }

    async fn rename_at(
        &mut self,
        fd: Fd,
        old_path: String,
        new_fd: Fd,
        new_path: String,
    ) -> FsResult<()> {
        self.guard.measure();
        self.fs.rename_at(fd, old_path, new_fd, new_path).await
    }

    async fn symlink_at(&mut self, _fd: Fd, src_path: String, dest_path: String) -> FsResult<()> {
        self.guard.note(format!(
            "symlink {} -> {}",
            truncate(&dest_path),
            truncate(&src_path)
        ));
        Err(ErrorCode::NotPermitted.into())
    }

    async fn unlink_file_at(&mut self, fd: Fd, path: String) -> FsResult<()> {
        self.guard.measure();
        self.fs.unlink_file_at(fd, path).await
    }

    fn read_via_stream(
        &mut self,
        fd: Fd,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynInputStream>> {
        self.fs.read_via_stream(fd, offset)
    }

    fn write_via_stream(
        &mut self,
        fd: Fd,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        let stream = self.fs.write_via_stream(fd, offset)?;
        self.wrap(stream)
    }

    fn append_via_stream(&mut self, fd: Fd) -> FsResult<Resource<DynOutputStream>> {
        let stream = self.fs.append_via_stream(fd)?;
        self.wrap(stream)
    }

    async fn is_same_object(&mut self, a: Fd, b: Fd) -> wasmtime::Result<bool> {
        self.fs.is_same_object(a, b).await
    }

    async fn metadata_hash(&mut self, fd: Fd) -> FsResult<types::MetadataHashValue> {
        self.fs.metadata_hash(fd).await
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Fd,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        self.fs.metadata_hash_at(fd, path_flags, path).await
    }
}

impl GuardedFsView<'_> {
    /// Puts a quota-counting stream in place of wasmtime-wasi's own.
    fn wrap(&mut self, stream: Resource<DynOutputStream>) -> FsResult<Resource<DynOutputStream>> {
        let inner = self.fs.table.delete(stream)?;
        let quota = QuotaStream {
            inner,
            left: self.guard.write_left(),
            quota: self.guard.quota,
        };
        Ok(self.fs.table.push(Box::new(quota) as DynOutputStream)?)
    }
}

impl HostDirectoryEntryStream for GuardedFsView<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<types::DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        self.fs.read_directory_entry(stream).await
    }

    fn drop(&mut self, stream: Resource<types::DirectoryEntryStream>) -> wasmtime::Result<()> {
        HostDirectoryEntryStream::drop(&mut self.fs, stream)
    }
}

fn truncate(s: &str) -> &str {
    let mut end = s.len().min(200);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A file write stream that takes every byte from the skill's quota.
struct QuotaStream {
    inner: DynOutputStream,
    left: Arc<AtomicI64>,
    quota: u64,
}

impl QuotaStream {
    fn refuse(&self) -> StreamError {
        StreamError::LastOperationFailed(wasmtime::Error::new(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            format!(
                "file quota: the skill may keep {} MiB in its writable folders",
                self.quota >> 20
            ),
        )))
    }
}

#[wasmtime_wasi_io::async_trait]
impl OutputStream for QuotaStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        if !take(&self.left, bytes.len() as u64) {
            return Err(self.refuse());
        }
        self.inner.write(bytes)
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner.check_write()
    }

    fn write_zeroes(&mut self, nelem: usize) -> StreamResult<()> {
        if !take(&self.left, nelem as u64) {
            return Err(self.refuse());
        }
        self.inner.write_zeroes(nelem)
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await
    }
}

#[wasmtime_wasi_io::async_trait]
impl Pollable for QuotaStream {
    async fn ready(&mut self) {
        self.inner.ready().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_takes_what_is_left_and_no_more() {
        let d = tempfile::tempdir().expect("tempdir");
        std::fs::write(d.path().join("x"), [0u8; 40]).expect("write");
        let mut g = FsGuard::new(4, 100, vec![d.path().to_path_buf()]);
        assert!(g.charge(60).is_ok());
        assert!(g.charge(1).is_err());
        assert!(
            g.denied.iter().any(|e| e.contains("file quota")),
            "{:?}",
            g.denied
        );
        std::fs::write(d.path().join("y"), [0u8; 400]).expect("write");
        let mut g = FsGuard::new(4, 100, vec![d.path().to_path_buf()]);
        assert_eq!(g.write_left().load(Ordering::Relaxed), 0);
    }

    #[test]
    fn usage_counts_files_below_the_folders() {
        let d = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(d.path().join("a/b")).expect("mkdir");
        std::fs::write(d.path().join("a/x"), [0u8; 100]).expect("write");
        std::fs::write(d.path().join("a/b/y"), [0u8; 50]).expect("write");
        assert_eq!(usage(&[d.path()], 1000), 150);
        assert_eq!(usage(&[d.path()], 2), u64::MAX);
    }
}
