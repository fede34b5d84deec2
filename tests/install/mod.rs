//! `skillhost skills install` and `uninstall` (issue 12): a folder, a
//! tarball, a zip and a ClawHub-compatible registry (a local server that
//! answers with the registry's real response shapes) install into the
//! user's installed root with source `installed` and no grants; every
//! hostile archive is refused, with nothing written outside the installed
//! root and nothing left that the catalog would see.

use crate::harness::{Workspace, guest, run, runtime};

use std::collections::BTreeMap;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use skillhost::config::{Config, Grant, Grants, TrustConfig};
use skillhost::grants::{Basis, effective};
use skillhost::install::{
    self, InstallConfig, InstallError, InstallOptions, InstallSource, Installed, Origin,
};
use skillhost::skill::{Catalog, LoadOptions, Source};

mod grants;
mod hostile;
mod lifecycle;
mod registry;
mod sources;

// ---------------------------------------------------------------------------
// A throwaway home, workspace and `outside/` folder beside them: the place
// every hostile entry aims at.

struct Env {
    ws: Workspace,
    /// The temporary folder holding home, workspace and `outside/`.
    root: PathBuf,
    outside: PathBuf,
    /// Where the tests put sources (archives, folders) before installing.
    sources: PathBuf,
}

impl Env {
    fn new() -> Env {
        let ws = Workspace::new();
        let root = ws.home.parent().expect("home has a parent").to_path_buf();
        let outside = root.join("outside");
        let sources = root.join("sources");
        std::fs::create_dir_all(&outside).expect("mkdir outside");
        std::fs::create_dir_all(&sources).expect("mkdir sources");
        std::fs::write(outside.join("secret.txt"), "secret").expect("write secret");
        Env {
            ws,
            root,
            outside,
            sources,
        }
    }

    fn installed(&self) -> PathBuf {
        self.ws.home.join("installed")
    }

    fn source_file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.sources.join(name);
        std::fs::write(&path, bytes).expect("write source");
        path
    }

    fn install(
        &self,
        source: InstallSource,
        options: &InstallOptions,
        config: &InstallConfig,
    ) -> Result<Installed, InstallError> {
        install::install_local(&self.ws.paths(), &source, options, config)
    }

    fn install_archive(
        &self,
        file_name: &str,
        bytes: &[u8],
        config: &InstallConfig,
    ) -> Result<Installed, InstallError> {
        let path = self.source_file(file_name, bytes);
        self.install(
            InstallSource::Archive(path),
            &InstallOptions::default(),
            config,
        )
    }

    /// Everything under the temporary folder except the installed root and
    /// the sources: kind, size and content hash by path.
    fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        walk(
            &self.root,
            &[self.installed(), self.sources.clone()],
            &mut out,
        );
        out
    }

    fn catalog(&self) -> Catalog {
        Catalog::load(&self.ws.paths().roots(), &LoadOptions::default())
    }

    /// A refused install changed nothing outside the installed root, made
    /// nothing the catalog sees, and left nothing in the root but the
    /// staging folder's lock.
    fn assert_no_trace(&self, before: &BTreeMap<PathBuf, String>, case: &str) {
        assert_eq!(
            &self.snapshot(),
            before,
            "{case}: something changed outside the installed root"
        );
        assert_eq!(
            std::fs::read_to_string(self.outside.join("secret.txt")).expect("secret"),
            "secret",
            "{case}"
        );
        let left = self.left_in_installed(case);
        assert!(
            left.is_empty(),
            "{case}: left in the installed root: {left:?}"
        );
        let installed: Vec<_> = self
            .catalog()
            .skills()
            .iter()
            .filter(|s| s.source == Source::Installed)
            .map(|s| s.name.clone())
            .collect();
        assert!(
            installed.is_empty(),
            "{case}: the catalog sees {installed:?}"
        );
    }

    /// What the installed root holds besides its staging folder, which
    /// must hold nothing but its lock.
    fn left_in_installed(&self, case: &str) -> Vec<String> {
        let mut left = Vec::new();
        if self.installed().exists() {
            for e in std::fs::read_dir(self.installed()).expect("ls installed") {
                let e = e.expect("entry");
                left.push(e.file_name().to_string_lossy().into_owned());
                if e.file_name() == ".staging" {
                    for s in std::fs::read_dir(e.path()).expect("ls staging") {
                        let name = s.expect("entry").file_name();
                        assert_eq!(name, "lock", "{case}: left in .staging: {name:?}");
                    }
                }
            }
        }
        left.retain(|n| n != ".staging");
        left
    }
}

fn walk(dir: &Path, skip: &[PathBuf], out: &mut BTreeMap<PathBuf, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let path = e.expect("entry").path();
        if skip.contains(&path) {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).expect("stat");
        let what = if meta.file_type().is_symlink() {
            format!("link -> {:?}", std::fs::read_link(&path).expect("readlink"))
        } else if meta.is_dir() {
            walk(&path, skip, out);
            "dir".to_owned()
        } else if meta.is_file() {
            let bytes = std::fs::read(&path).expect("read");
            format!("file {}", skillhost::skill::content_version(&bytes))
        } else {
            "special".to_owned()
        };
        out.insert(path, what);
    }
}

fn md(name: &str, extra: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n{extra}---\n# {name}\n\nDo it.\n")
}

/// Caps small enough for the tests to cross cheaply.
fn small_caps() -> InstallConfig {
    InstallConfig {
        max_entries: 50,
        max_total_bytes: 4 << 20,
        max_file_bytes: 1 << 20,
        max_archive_bytes: 1 << 20,
        ..InstallConfig::default()
    }
}

// ---------------------------------------------------------------------------
// Archives built byte by byte, so that they can say what no well-behaved
// tool would write.

enum E<'a> {
    File(&'a str, &'a [u8]),
    Dir(&'a str),
    Symlink(&'a str, &'a str),
    HardLink(&'a str, &'a str),
    CharDevice(&'a str),
    Fifo(&'a str),
}

fn tar_gz(entries: &[E<'_>]) -> Vec<u8> {
    use tar::EntryType;
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    for e in entries {
        let (name, ty, data, link): (&str, _, &[u8], &str) = match e {
            E::File(n, d) => (n, EntryType::Regular, d, ""),
            E::Dir(n) => (n, EntryType::Directory, b"", ""),
            E::Symlink(n, t) => (n, EntryType::Symlink, b"", t),
            E::HardLink(n, t) => (n, EntryType::Link, b"", t),
            E::CharDevice(n) => (n, EntryType::Char, b"", ""),
            E::Fifo(n) => (n, EntryType::Fifo, b"", ""),
        };
        append_tar(&mut b, name, ty, data, link);
    }
    b.into_inner().expect("tar").finish().expect("gzip")
}

/// Appends one entry as written, its name in a GNU long-name entry first
/// when it is longer than a header holds.
fn append_tar<W: Write>(
    b: &mut tar::Builder<W>,
    name: &str,
    ty: tar::EntryType,
    data: &[u8],
    link: &str,
) {
    use tar::{EntryType, Header};
    if name.len() > 99 {
        append_long_name(b, name);
    }
    let mut h = Header::new_gnu();
    let n = name.len().min(99);
    h.as_gnu_mut().expect("gnu").name[..n].copy_from_slice(&name.as_bytes()[..n]);
    h.set_link_name_literal(link).expect("link name");
    h.set_entry_type(ty);
    h.set_mode(if ty == EntryType::Directory {
        0o755
    } else {
        0o644
    });
    h.set_size(data.len() as u64);
    h.set_cksum();
    b.append(&h, data).expect("append");
}

/// A GNU long name: the name travels as the data of an `L` entry.
fn append_long_name<W: Write>(b: &mut tar::Builder<W>, name: &str) {
    use tar::{EntryType, Header};
    let mut long = Header::new_gnu();
    long.as_gnu_mut().expect("gnu").name[..13].copy_from_slice(b"././@LongLink");
    long.set_entry_type(EntryType::GNULongName);
    long.set_mode(0o644);
    let data = [name.as_bytes(), b"\0"].concat();
    long.set_size(data.len() as u64);
    long.set_cksum();
    b.append(&long, &data[..]).expect("append long name");
}

fn zip(entries: &[E<'_>]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for e in entries {
        match e {
            E::File(n, d) => {
                w.start_file(*n, opts).expect("start");
                w.write_all(d).expect("write");
            }
            E::Dir(n) => w.add_directory(*n, opts).expect("dir"),
            E::Symlink(n, t) => w.add_symlink(*n, *t, opts).expect("symlink"),
            E::CharDevice(n) => {
                w.start_file(*n, opts.external_attributes(0o020644 << 16))
                    .expect("device");
            }
            E::Fifo(n) => {
                w.start_file(*n, opts.external_attributes(0o010644 << 16))
                    .expect("fifo");
            }
            E::HardLink(..) => unreachable!("zip has no hard links"),
        }
    }
    w.finish().expect("zip").into_inner()
}

/// A zip whose headers claim `claimed` bytes for its one file, which
/// really inflates to `real` bytes.
fn lying_zip(real: usize, claimed: u32) -> Vec<u8> {
    let mut bytes = zip(&[
        E::File("SKILL.md", md("liar", "").as_bytes()),
        E::File("big.bin", &vec![0u8; real]),
    ]);
    let patch = |bytes: &mut Vec<u8>, sig: &[u8], field: usize| {
        let mut from = 0;
        while let Some(i) = bytes[from..].windows(4).position(|w| w == sig) {
            let at = from + i;
            bytes[at + field..at + field + 4].copy_from_slice(&claimed.to_le_bytes());
            from = at + 4;
        }
    };
    // Uncompressed size: offset 22 in a local header, 24 in a central one.
    patch(&mut bytes, b"PK\x03\x04", 22);
    patch(&mut bytes, b"PK\x01\x02", 24);
    bytes
}
