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
    use tar::{EntryType, Header};
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    let mut append = |name: &str, ty: EntryType, data: &[u8], link: &str| {
        if name.len() > 99 {
            // A GNU long name: the name travels as the data of an `L` entry.
            let mut long = Header::new_gnu();
            long.as_gnu_mut().expect("gnu").name[..13].copy_from_slice(b"././@LongLink");
            long.set_entry_type(EntryType::GNULongName);
            long.set_mode(0o644);
            let data = [name.as_bytes(), b"\0"].concat();
            long.set_size(data.len() as u64);
            long.set_cksum();
            b.append(&long, &data[..]).expect("append long name");
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
    };
    for e in entries {
        match e {
            E::File(n, d) => append(n, EntryType::Regular, d, ""),
            E::Dir(n) => append(n, EntryType::Directory, b"", ""),
            E::Symlink(n, t) => append(n, EntryType::Symlink, b"", t),
            E::HardLink(n, t) => append(n, EntryType::Link, b"", t),
            E::CharDevice(n) => append(n, EntryType::Char, b"", ""),
            E::Fifo(n) => append(n, EntryType::Fifo, b"", ""),
        }
    }
    b.into_inner().expect("tar").finish().expect("gzip")
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

// ---------------------------------------------------------------------------
// Installing from each kind of source.

#[test]
fn a_folder_installs_with_source_installed_and_the_report_the_gate_needs() {
    let env = Env::new();
    let src = env.sources.join("mailer");
    std::fs::create_dir_all(src.join("references")).expect("mkdir");
    std::fs::create_dir_all(src.join(".git")).expect("mkdir .git");
    std::fs::write(src.join(".git/HEAD"), "ref: main").expect("write");
    let front =
        "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities:\n      llm: true\n";
    std::fs::write(src.join("SKILL.md"), md("mailer", front)).expect("write");
    std::fs::write(src.join("handler.wasm"), b"\0asm not really").expect("write");
    std::fs::write(src.join("references/tone.md"), "Be brief.").expect("write");

    let out = env
        .ws
        .run_cli(&["skills", "install", src.to_str().expect("utf-8"), "--json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let dir = env.installed().join("mailer");
    assert_eq!(report["name"], "mailer");
    assert_eq!(report["source"], "installed");
    assert_eq!(report["dir"], json!(dir));
    assert_eq!(report["handler"], "handler.wasm");
    assert_eq!(report["origin"]["kind"], "folder");
    assert_eq!(report["declared"]["llm"], true);
    assert_eq!(report["files"], 3, "SKILL.md, handler, reference; not .git");
    let expected = skillhost::grants::fingerprint(
        &std::fs::read(src.join("SKILL.md")).expect("read"),
        Some(&std::fs::read(src.join("handler.wasm")).expect("read")),
    );
    assert_eq!(report["fingerprint"], expected);
    assert!(dir.join("references/tone.md").is_file());
    assert!(!dir.join(".git").exists());

    let list = env.ws.run_cli(&["skills", "list", "--json"]);
    let skills = list.json();
    let mailer = skills
        .as_array()
        .expect("array")
        .iter()
        .find(|s| s["name"] == "mailer")
        .expect("listed");
    assert_eq!(mailer["source"], "installed");
    assert_eq!(mailer["path"], json!(dir.join("SKILL.md")));
}

#[test]
fn a_tarball_installs_with_its_single_top_folder_stripped() {
    let env = Env::new();
    let archive = tar_gz(&[
        E::Dir("notes-1.0/"),
        E::File("notes-1.0/SKILL.md", md("notes", "").as_bytes()),
        E::Dir("notes-1.0/scripts/"),
        E::File("notes-1.0/scripts/run.sh", b"echo hi\n"),
    ]);
    let path = env.source_file("notes-1.0.tar.gz", &archive);
    let out = env
        .ws
        .run_cli(&["skills", "install", path.to_str().expect("utf-8")]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.starts_with("installed `notes` from "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("granted:     nothing"),
        "{}",
        out.stdout
    );
    let dir = env.installed().join("notes");
    assert_eq!(
        std::fs::read_to_string(dir.join("SKILL.md")).expect("read"),
        md("notes", "")
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("scripts/run.sh")).expect("read"),
        "echo hi\n"
    );
    let catalog = env.catalog();
    let skill = catalog.get("notes").expect("in the catalog");
    assert_eq!(skill.source, Source::Installed);
}

#[test]
fn a_zip_installs_and_its_modes_are_not_restored() {
    let env = Env::new();
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    w.start_file("SKILL.md", opts).expect("start");
    w.write_all(md("zipped", "").as_bytes()).expect("write");
    w.start_file("bin/tool", opts.unix_permissions(0o4755))
        .expect("start");
    w.write_all(b"#!/bin/sh\n").expect("write");
    let bytes = w.finish().expect("zip").into_inner();
    let installed = env
        .install_archive("zipped.zip", &bytes, &InstallConfig::default())
        .expect("installs");
    assert_eq!(installed.name, "zipped");
    assert_eq!(
        installed.origin,
        Origin::Archive {
            path: env.sources.join("zipped.zip")
        }
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(installed.dir.join("bin/tool"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o7111, 0, "no set-id or executable bits: {mode:o}");
}

#[test]
fn a_name_given_with_name_is_written_into_the_skill() {
    let env = Env::new();
    let src = env.sources.join("x");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("Fancy Name", "")).expect("write");
    let refused = env
        .install(
            InstallSource::Folder(src.clone()),
            &InstallOptions::default(),
            &InstallConfig::default(),
        )
        .expect_err("`Fancy Name` is no slug");
    assert!(
        matches!(&refused, InstallError::BadName(n) if n == "Fancy Name"),
        "{refused}"
    );
    assert!(refused.to_string().contains("--name"), "{refused}");
    let options = InstallOptions {
        name: Some("fancy".into()),
        ..Default::default()
    };
    let installed = env
        .install(
            InstallSource::Folder(src),
            &options,
            &InstallConfig::default(),
        )
        .expect("installs as fancy");
    assert_eq!(installed.renamed_from.as_deref(), Some("Fancy Name"));
    let catalog = env.catalog();
    let skill = catalog.get("fancy").expect("listed as fancy");
    assert_eq!(skill.dir, env.installed().join("fancy"));
    assert_eq!(skill.description, "The Fancy Name skill.");
    assert_eq!(
        installed.fingerprint,
        skillhost::exec::skill_fingerprint(skill).expect("fingerprint"),
        "the report's fingerprint is what grants are pinned to"
    );
}

#[test]
fn bad_names_are_refused_before_any_file_is_touched() {
    let env = Env::new();
    let src = env.sources.join("ok");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("ok", "")).expect("write");
    let before = env.snapshot();
    for bad in ["../evil", "/abs", "Upper", ".hidden", "a b", ""] {
        let options = InstallOptions {
            name: Some(bad.into()),
            ..Default::default()
        };
        let e = env
            .install(
                InstallSource::Folder(src.clone()),
                &options,
                &InstallConfig::default(),
            )
            .expect_err(bad);
        assert!(matches!(e, InstallError::BadName(_)), "{bad}: {e}");
    }
    assert!(!env.installed().exists(), "not even the root was made");
    env.assert_no_trace(&before, "bad names");
}

#[test]
fn what_is_not_a_whole_skill_is_refused() {
    let env = Env::new();
    let config = InstallConfig::default();
    let before = env.snapshot();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "no SKILL.md",
            tar_gz(&[E::File("README.md", b"# hi\n")]),
            "no SKILL.md at the top",
        ),
        (
            "SKILL.md only deeper than the top",
            tar_gz(&[
                E::File("a/b/SKILL.md", md("deep", "").as_bytes()),
                E::File("c.txt", b"c"),
            ]),
            "no SKILL.md at the top",
        ),
        (
            "a second skill inside",
            tar_gz(&[
                E::File("SKILL.md", md("outer", "").as_bytes()),
                E::File("inner/SKILL.md", md("email-writer", "").as_bytes()),
            ]),
            "a second skill inside",
        ),
        (
            "no description",
            tar_gz(&[E::File(
                "SKILL.md",
                b"---\nname: nodesc\n---\n# Only a title\n",
            )]),
            "no description",
        ),
        (
            "a handler that is not there",
            tar_gz(&[E::File(
                "SKILL.md",
                md(
                    "ghost",
                    "metadata:\n  skillhost:\n    handler: ../../../outside/secret.txt\n",
                )
                .as_bytes(),
            )]),
            "not one of its files",
        ),
        (
            "not an archive",
            b"plain text".to_vec(),
            "not a .tar.gz or .zip",
        ),
        (
            "a truncated tarball",
            tar_gz(&[E::File("SKILL.md", md("cut", "").as_bytes())])[..30].to_vec(),
            "not a readable .tar.gz",
        ),
    ];
    for (case, bytes, needle) in cases {
        let e = env
            .install_archive("case.tar.gz", &bytes, &config)
            .expect_err(case);
        assert!(e.to_string().contains(needle), "{case}: {e}");
        env.assert_no_trace(&before, case);
    }
}

// ---------------------------------------------------------------------------
// Hostile archives.

/// Each case is refused with an error that names the problem, writes
/// nothing outside the installed root and leaves nothing in it.
fn assert_all_refused(env: &Env, ext: &str, cases: Vec<(&str, Vec<u8>, &str)>) {
    let config = small_caps();
    let before = env.snapshot();
    for (case, bytes, needle) in cases {
        let e = env
            .install_archive(&format!("hostile{ext}"), &bytes, &config)
            .expect_err(case);
        assert!(
            e.to_string().contains(needle),
            "{case}: the error should say {needle:?}: {e}"
        );
        env.assert_no_trace(&before, case);
        assert!(!env.outside.join("escaped.txt").exists(), "{case}");
        assert!(!env.outside.join("pwned.txt").exists(), "{case}");
    }
}

#[test]
fn each_hostile_tarball_is_refused_and_writes_nothing_outside() {
    let env = Env::new();
    let skill = md("hostile", "");
    let skill = skill.as_bytes();
    let outside = env.outside.to_str().expect("utf-8").to_owned();
    let abs = format!("{outside}/escaped.txt");
    let secret = format!("{outside}/secret.txt");
    // From the staging folder (installed/.staging/install-N/), four `..`
    // reach the temporary folder that holds `outside/`.
    let up = "../../../../outside/escaped.txt";
    let far_up = format!("{}{}", "../".repeat(40), &abs[1..]);
    let zeros = vec![0u8; (1 << 20) + 1];
    let many: Vec<String> = (0..60).map(|i| format!("f{i}.txt")).collect();
    let mut many_entries = vec![E::File("SKILL.md", skill)];
    many_entries.extend(many.iter().map(|n| E::File(n, b"x")));
    let parts: Vec<String> = (0..5).map(|i| format!("part{i}.bin")).collect();
    let big = vec![7u8; 1 << 20];
    let mut total_entries = vec![E::File("SKILL.md", skill)];
    total_entries.extend(parts.iter().map(|n| E::File(n, &big)));

    let cases = vec![
        (
            "a `..` path",
            tar_gz(&[E::File("SKILL.md", skill), E::File(up, b"pwned")]),
            "`..`",
        ),
        (
            "a `..` path in a GNU long name",
            tar_gz(&[E::File("SKILL.md", skill), E::File(&far_up, b"pwned")]),
            "`..`",
        ),
        (
            "an absolute path",
            tar_gz(&[E::File("SKILL.md", skill), E::File(&abs, b"pwned")]),
            "absolute path",
        ),
        (
            "a symlink out, then a write through it",
            tar_gz(&[
                E::File("SKILL.md", skill),
                E::Symlink("out", &outside),
                E::File("out/pwned.txt", b"pwned"),
            ]),
            "symbolic link",
        ),
        (
            "a relative symlink out",
            tar_gz(&[
                E::File("SKILL.md", skill),
                E::Symlink("up", "../../../../outside"),
            ]),
            "symbolic link",
        ),
        (
            "a hard link to a file outside",
            tar_gz(&[E::File("SKILL.md", skill), E::HardLink("h", &secret)]),
            "hard link",
        ),
        (
            "a device file",
            tar_gz(&[E::File("SKILL.md", skill), E::CharDevice("null")]),
            "device file",
        ),
        (
            "a named pipe",
            tar_gz(&[E::File("SKILL.md", skill), E::Fifo("pipe")]),
            "named pipe",
        ),
        (
            "the same name twice",
            tar_gz(&[E::File("SKILL.md", skill), E::File("SKILL.md", b"---\n")]),
            "appears twice",
        ),
        (
            "a file over the per-file cap",
            tar_gz(&[E::File("SKILL.md", skill), E::File("big.bin", &zeros)]),
            "max_file_bytes",
        ),
        (
            "files over the total cap",
            tar_gz(&total_entries),
            "max_total_bytes",
        ),
        (
            "more entries than the cap",
            tar_gz(&many_entries),
            "max_entries",
        ),
    ];
    assert_all_refused(&env, ".tar.gz", cases);
}

#[test]
fn each_hostile_zip_is_refused_and_writes_nothing_outside() {
    let env = Env::new();
    let skill = md("hostile", "");
    let skill = skill.as_bytes();
    let outside = env.outside.to_str().expect("utf-8").to_owned();
    let abs = format!("{outside}/escaped.txt");
    let up = "../../../../outside/escaped.txt";
    let many: Vec<String> = (0..60).map(|i| format!("f{i}.txt")).collect();
    let mut many_entries = vec![E::File("SKILL.md", skill)];
    many_entries.extend(many.iter().map(|n| E::File(n, b"x")));
    // Zip bombs: 1 MiB of zeros deflates to about 1 KiB.
    let mib = vec![0u8; 1 << 20];
    let parts: Vec<String> = (0..6).map(|i| format!("part{i}.bin")).collect();
    let mut bomb_entries = vec![E::File("SKILL.md", skill)];
    bomb_entries.extend(parts.iter().map(|n| E::File(n, &mib[..(1 << 20) - 1])));
    let bomb = zip(&bomb_entries);
    assert!(bomb.len() < 64 << 10, "a real bomb: {} bytes", bomb.len());
    let big = vec![0u8; 2 << 20];

    let cases = vec![
        (
            "a `..` path",
            zip(&[E::File("SKILL.md", skill), E::File(up, b"pwned")]),
            "`..`",
        ),
        (
            "a `..` path with backslashes",
            zip(&[
                E::File("SKILL.md", skill),
                E::File("..\\..\\..\\..\\outside\\escaped.txt", b"pwned"),
            ]),
            "backslash",
        ),
        (
            "an absolute path",
            zip(&[E::File("SKILL.md", skill), E::File(&abs, b"pwned")]),
            "absolute path",
        ),
        (
            "a symlink out, then a write through it",
            zip(&[
                E::File("SKILL.md", skill),
                E::Symlink("out", &outside),
                E::File("out/pwned.txt", b"pwned"),
            ]),
            "symbolic link",
        ),
        (
            "a device file",
            zip(&[E::File("SKILL.md", skill), E::CharDevice("null")]),
            "device file",
        ),
        (
            "a named pipe",
            zip(&[E::File("SKILL.md", skill), E::Fifo("pipe")]),
            "named pipe",
        ),
        (
            "a bomb: one file over the per-file cap",
            zip(&[E::File("SKILL.md", skill), E::File("big.bin", &big)]),
            "max_file_bytes",
        ),
        ("a bomb: files over the total cap", bomb, "max_total_bytes"),
        (
            "more entries than the cap",
            zip(&many_entries),
            "max_entries",
        ),
    ];
    assert_all_refused(&env, ".zip", cases);

    // A header that claims 10 bytes for 2 MiB: the bytes read are counted,
    // so the lie gets nothing past the cap (the reader may also catch the
    // mismatch itself).
    let before = env.snapshot();
    let e = env
        .install_archive("liar.zip", &lying_zip(2 << 20, 10), &small_caps())
        .expect_err("a lying header");
    assert!(
        matches!(
            e,
            InstallError::FileTooLarge { .. } | InstallError::Archive(_)
        ),
        "{e}"
    );
    env.assert_no_trace(&before, "a lying zip header");
}

#[test]
fn a_folder_with_a_link_or_a_pipe_is_refused() {
    let env = Env::new();
    let src = env.sources.join("linky");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("linky", "")).expect("write");
    std::os::unix::fs::symlink(env.outside.join("secret.txt"), src.join("secret.txt"))
        .expect("symlink");
    let before = env.snapshot();
    let e = env
        .install(
            InstallSource::Folder(src.clone()),
            &InstallOptions::default(),
            &InstallConfig::default(),
        )
        .expect_err("a symlink");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    env.assert_no_trace(&before, "a folder with a symlink");

    std::fs::remove_file(src.join("secret.txt")).expect("rm");
    let fifo = std::ffi::CString::new(src.join("pipe").to_str().expect("utf-8")).expect("c");
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0, "mkfifo");
    let before = env.snapshot();
    let e = env
        .install(
            InstallSource::Folder(src),
            &InstallOptions::default(),
            &InstallConfig::default(),
        )
        .expect_err("a fifo");
    assert!(e.to_string().contains("named pipe"), "{e}");
    env.assert_no_trace(&before, "a folder with a fifo");
}

#[test]
fn a_folder_over_the_caps_is_refused() {
    let env = Env::new();
    let src = env.sources.join("fat");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("fat", "")).expect("write");
    std::fs::write(src.join("big.bin"), vec![1u8; (1 << 20) + 1]).expect("write");
    let before = env.snapshot();
    let e = env
        .install(
            InstallSource::Folder(src.clone()),
            &InstallOptions::default(),
            &small_caps(),
        )
        .expect_err("over max_file_bytes");
    assert!(e.to_string().contains("max_file_bytes"), "{e}");
    env.assert_no_trace(&before, "a file over the cap");

    std::fs::remove_file(src.join("big.bin")).expect("rm");
    for i in 0..60 {
        std::fs::write(src.join(format!("f{i}")), "x").expect("write");
    }
    let e = env
        .install(
            InstallSource::Folder(src),
            &InstallOptions::default(),
            &small_caps(),
        )
        .expect_err("over max_entries");
    assert!(e.to_string().contains("max_entries"), "{e}");
    env.assert_no_trace(&before, "more files than the cap");
}

#[test]
fn the_caps_come_from_the_install_section_of_the_config() {
    let env = Env::new();
    std::fs::write(
        env.ws.workspace.join("skillhost.toml"),
        "[install]\nmax_entries = 3\n",
    )
    .expect("write config");
    let archive = tar_gz(&[
        E::File("SKILL.md", md("four", "").as_bytes()),
        E::File("a", b"a"),
        E::File("b", b"b"),
        E::File("c", b"c"),
    ]);
    let path = env.source_file("four.tar.gz", &archive);
    let out = env
        .ws
        .run_cli(&["skills", "install", path.to_str().expect("utf-8")]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("more than 3 entries") && out.stderr.contains("max_entries"),
        "{}",
        out.stderr
    );
    assert!(!env.installed().join("four").exists());
}

// ---------------------------------------------------------------------------
// Replacing, uninstalling, crashes.

#[test]
fn an_installed_skill_is_replaced_only_with_force_and_in_one_step() {
    let env = Env::new();
    let v1 = env.source_file(
        "tool-v1.tar.gz",
        &tar_gz(&[
            E::File("SKILL.md", md("tool", "").as_bytes()),
            E::File("old-only.txt", b"old"),
        ]),
    );
    let v2 = env.source_file(
        "tool-v2.tar.gz",
        &tar_gz(&[E::File("SKILL.md", md("tool", "version: 2\n").as_bytes())]),
    );
    let config = InstallConfig::default();
    let first = env
        .install(
            InstallSource::Archive(v1),
            &InstallOptions::default(),
            &config,
        )
        .expect("first install");
    let e = env
        .install(
            InstallSource::Archive(v2.clone()),
            &InstallOptions::default(),
            &config,
        )
        .expect_err("already installed");
    assert!(e.to_string().contains("--force"), "{e}");
    assert!(env.installed().join("tool/old-only.txt").is_file(), "kept");

    let force = InstallOptions {
        force: true,
        ..Default::default()
    };
    let second = env
        .install(InstallSource::Archive(v2), &force, &config)
        .expect("replaced");
    assert_eq!(second.replaced.as_deref(), Some(first.fingerprint.as_str()));
    assert_ne!(second.fingerprint, first.fingerprint);
    assert!(
        !env.installed().join("tool/old-only.txt").exists(),
        "the old folder went whole"
    );
    let staging: Vec<_> = std::fs::read_dir(env.installed().join(".staging"))
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(staging, ["lock"], "nothing left behind");
}

#[test]
fn uninstall_removes_installed_skills_and_refuses_every_other_kind() {
    let env = Env::new();
    let src = env.sources.join("gone");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("gone", "")).expect("write");
    let out = env
        .ws
        .run_cli(&["skills", "install", src.to_str().expect("utf-8")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    crate::support::write_skill(&env.ws.home.join("skills"), "mine", "A user skill.");

    for (name, kind) in [("email-writer", "bundled"), ("mine", "user")] {
        let out = env.ws.run_cli(&["skills", "uninstall", name]);
        assert_ne!(out.code, 0, "{name}");
        assert!(
            out.stderr.contains(&format!("`{name}` is a {kind} skill"))
                && out.stderr.contains("only installed skills"),
            "{name}: {}",
            out.stderr
        );
    }
    assert!(env.ws.home.join("skills/mine/SKILL.md").is_file());

    let out = env.ws.run_cli(&["skills", "uninstall", "gone"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("uninstalled `gone`"),
        "{}",
        out.stdout
    );
    assert!(!env.installed().join("gone").exists());
    assert!(env.catalog().get("gone").is_none());
    let out = env.ws.run_cli(&["skills", "uninstall", "gone"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("no installed skill named `gone`"),
        "{}",
        out.stderr
    );
}

#[test]
fn what_a_killed_install_left_is_never_in_the_catalog_and_is_cleared_next_time() {
    let env = Env::new();
    // A complete skill, half-way: unpacked in staging, not yet moved.
    let leftover = env.installed().join(".staging/install-99999-0/pkg");
    std::fs::create_dir_all(&leftover).expect("mkdir");
    std::fs::write(leftover.join("SKILL.md"), md("half", "")).expect("write");
    assert!(
        env.catalog().get("half").is_none(),
        "staging is not searched"
    );

    let src = env.sources.join("whole");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("whole", "")).expect("write");
    env.install(
        InstallSource::Folder(src),
        &InstallOptions::default(),
        &InstallConfig::default(),
    )
    .expect("installs");
    assert!(!leftover.exists(), "the next install cleared it");
}

#[test]
fn an_installed_skill_may_not_take_a_user_skills_name() {
    let env = Env::new();
    crate::support::write_skill(&env.ws.home.join("skills"), "twin", "The user's twin.");
    let src = env.sources.join("twin");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("twin", "")).expect("write");
    let before = env.snapshot();
    let e = env
        .install(
            InstallSource::Folder(src),
            &InstallOptions::default(),
            &InstallConfig::default(),
        )
        .expect_err("refused");
    assert!(
        matches!(&e, InstallError::NameTaken { kind: Source::User, path, .. }
            if *path == env.ws.home.join("skills/twin/SKILL.md")),
        "{e}"
    );
    env.assert_no_trace(&before, "a user skill's name");
}

// ---------------------------------------------------------------------------
// Grants: an installed skill gets nothing it declares until granted.

const DECLARES_EVERYTHING: &str = "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities:\n      files: { read: [data] }\n      http: [api.example.com]\n      tools: [web_search]\n      llm: true\n      kv: true\n";

#[test]
fn an_installed_skill_gets_none_of_its_declared_capabilities_until_granted() {
    let env = Env::new();
    let archive = tar_gz(&[
        E::File("SKILL.md", md("greedy", DECLARES_EVERYTHING).as_bytes()),
        E::File("handler.wasm", b"\0asm"),
    ]);
    let installed = env
        .install_archive("greedy.tar.gz", &archive, &InstallConfig::default())
        .expect("installs");
    assert!(installed.declared.llm && installed.declared.kv);
    let catalog = env.catalog();
    let skill = catalog.get("greedy").expect("listed");
    let declared = &skill.meta.skillhost;
    // Trust every source that can be trusted: installed is not one of them.
    let trust_all = TrustConfig {
        bundled: true,
        workspace: true,
        forged: true,
    };
    let get = |grants: &Grants, fingerprint: &str| {
        effective(
            &skill.name,
            skill.source,
            &declared.capabilities,
            &declared.limits,
            fingerprint,
            &trust_all,
            grants,
        )
    };
    let none = get(&Grants::new(), &installed.fingerprint);
    assert_eq!(none.basis, Basis::NotGranted);
    assert_eq!(none.capabilities, Default::default());

    let mut grants = Grants::new();
    grants.insert(
        "greedy".into(),
        Grant {
            pin: installed.fingerprint.clone(),
            capabilities: declared.capabilities.clone(),
            ..Default::default()
        },
    );
    let granted = get(&grants, &installed.fingerprint);
    assert_eq!(granted.basis, Basis::Granted);
    assert_eq!(granted.capabilities, declared.capabilities);

    // Replaced by other content: the grant pinned to the old fingerprint
    // gives nothing.
    let v2 = tar_gz(&[
        E::File(
            "SKILL.md",
            md("greedy", &format!("version: 2\n{DECLARES_EVERYTHING}")).as_bytes(),
        ),
        E::File("handler.wasm", b"\0asm"),
    ]);
    let path = env.source_file("greedy2.tar.gz", &v2);
    let force = InstallOptions {
        force: true,
        ..Default::default()
    };
    let replaced = env
        .install(
            InstallSource::Archive(path),
            &force,
            &InstallConfig::default(),
        )
        .expect("replaced");
    let stale = get(&grants, &replaced.fingerprint);
    assert!(matches!(stale.basis, Basis::StaleGrant { .. }), "{stale:?}");
    assert_eq!(stale.capabilities, Default::default());
}

#[test]
fn an_installed_handler_runs_with_pure_computation_only_until_granted() {
    let env = Env::new();
    let wasm = std::fs::read(guest("hostile-guest")).expect("hostile guest");
    let front = "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities:\n      kv: true\n      llm: true\n";
    let archive = tar_gz(&[
        E::File("SKILL.md", md("hostile", front).as_bytes()),
        E::File("handler.wasm", &wasm),
    ]);
    let installed = env
        .install_archive("hostile.tar.gz", &archive, &InstallConfig::default())
        .expect("installs");
    assert_eq!(installed.handler.as_deref(), Some("handler.wasm"));
    // Grants alone: the gate, which would keep this handler from running
    // at all (it imports sockets and http), is tested in tests/gate.rs and
    // by `an_installed_handler_is_gated_and_runs_only_once_approved`.
    std::fs::write(
        env.ws.workspace.join("skillhost.toml"),
        "[gate]\nsources = []\n",
    )
    .expect("config");

    let runner = env
        .ws
        .runner(Config::load(&env.ws.paths()).expect("config"));
    let o = run(&runner, "hostile", "kv", json!({}));
    assert_eq!(o.grants.as_deref(), Some("not granted"), "{o:?}");
    let f = o.failure.as_ref().expect("kv is refused");
    assert_eq!(f.class, "Denied", "{f:?}");
    assert!(f.message.contains("kv"), "{}", f.message);
    let o = run(&runner, "hostile", "model", json!({}));
    assert_eq!(o.failure.as_ref().map(|f| f.class.as_str()), Some("Denied"));

    // `skills grant` (through the real binary) pins the grant to the
    // fingerprint the install reported.
    let out = env.ws.run_cli(&["skills", "grant", "hostile", "--kv"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(&installed.fingerprint),
        "{}",
        out.stdout
    );
    let config = Config::load(&env.ws.paths()).expect("config");
    let runner = env.ws.runner(config);
    let o = run(&runner, "hostile", "kv", json!({}));
    assert_eq!(
        o.output.as_ref().map(|o| o.body.as_str()),
        Some("42"),
        "granted kv works: {:?}",
        o.failure
    );
}

// ---------------------------------------------------------------------------
// A ClawHub-compatible registry on this machine.

/// One skill the registry serves.
#[derive(Clone)]
struct Listing {
    owner: &'static str,
    slug: &'static str,
    /// Versions and their zips, oldest first; the last is `latestVersion`.
    versions: Vec<(&'static str, Vec<u8>)>,
    /// `moderation` as the registry sends it (absent when clean).
    moderation: Option<Value>,
    /// The owner handle the metadata names, when it lies.
    claimed_owner: Option<&'static str>,
    /// Send downloads in chunks, without a Content-Length.
    chunked: bool,
}

struct Registry {
    base: String,
    requests: Arc<Mutex<Vec<String>>>,
    _rt: tokio::runtime::Runtime,
}

impl Registry {
    fn start(listings: Vec<Listing>) -> Registry {
        use http_body_util::{BodyExt, Full, StreamBody};
        use hyper::body::{Bytes, Frame};
        use hyper::service::service_fn;

        let rt = runtime();
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (seen, listings) = (requests.clone(), Arc::new(listings));
        rt.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (seen, listings) = (seen.clone(), listings.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let uri = req.uri().to_string();
                        seen.lock().expect("lock").push(uri);
                        let (status, ctype, body, chunked) = answer(&listings, req.uri());
                        let body = if chunked {
                            let frames: Vec<_> = body
                                .chunks(64 << 10)
                                .map(|c| {
                                    Ok::<_, std::convert::Infallible>(Frame::data(
                                        Bytes::copy_from_slice(c),
                                    ))
                                })
                                .collect();
                            StreamBody::new(futures::stream::iter(frames)).boxed()
                        } else {
                            Full::new(Bytes::from(body)).boxed()
                        };
                        let response = hyper::Response::builder()
                            .status(status)
                            .header("content-type", ctype)
                            .body(body)
                            .expect("response");
                        async move { Ok::<_, std::convert::Infallible>(response) }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        Registry {
            base,
            requests,
            _rt: rt,
        }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }

    fn config(&self) -> InstallConfig {
        InstallConfig {
            registry: self.base.clone(),
            ..InstallConfig::default()
        }
    }
}

/// The registry's answer to one request, in ClawHub's v1 shapes: status,
/// content type, body, and whether to send it in chunks.
fn answer(listings: &[Listing], uri: &hyper::Uri) -> (u16, &'static str, Vec<u8>, bool) {
    let query: BTreeMap<String, String> = uri
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    let find = |slug: &str| {
        listings.iter().find(|l| {
            l.slug == slug
                && query
                    .get("ownerHandle")
                    .is_none_or(|o| o.eq_ignore_ascii_case(l.owner))
        })
    };
    let not_found = (
        404,
        "text/plain; charset=utf-8",
        b"Skill not found".to_vec(),
        false,
    );
    let path = uri.path();
    if let Some(slug) = path.strip_prefix("/api/v1/skills/") {
        let Some(l) = find(slug) else {
            return not_found;
        };
        let (latest, _) = l.versions.last().expect("a version");
        let body = json!({
            "skill": {
                "slug": l.slug,
                "displayName": "Demo",
                "summary": "A demo skill.",
                "tags": { "latest": latest },
                "stats": { "comments": 0, "downloads": 12, "stars": 3, "versions": l.versions.len() },
                "createdAt": 1_730_000_000_000_u64,
                "updatedAt": 1_730_000_000_000_u64,
            },
            "latestVersion": {
                "version": latest,
                "createdAt": 1_730_000_000_000_u64,
                "changelog": "Initial release.",
                "license": "MIT-0",
            },
            "metadata": null,
            "owner": {
                "handle": l.claimed_owner.unwrap_or(l.owner),
                "displayName": "Owner",
                "image": null,
            },
            "moderation": l.moderation,
        });
        return (
            200,
            "application/json",
            body.to_string().into_bytes(),
            false,
        );
    }
    if path == "/api/v1/download" {
        let Some(l) = query.get("slug").and_then(|s| find(s)) else {
            return not_found;
        };
        let version = query
            .get("version")
            .cloned()
            .or_else(|| l.versions.last().map(|v| v.0.to_owned()));
        return match l.versions.iter().find(|v| Some(v.0) == version.as_deref()) {
            Some((_, zip)) => (200, "application/zip", zip.clone(), l.chunked),
            None => (
                404,
                "text/plain; charset=utf-8",
                b"Version not found".to_vec(),
                false,
            ),
        };
    }
    not_found
}

/// A version's zip as ClawHub builds one: the files at the root, deflated,
/// dated 1980-01-01, and the registry's `_meta.json`.
fn clawhub_zip(slug: &str, version: &str, files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(6));
    let meta = json!({
        "ownerId": "users_k57abc",
        "slug": slug,
        "version": version,
        "publishedAt": 1_730_000_000_000_u64,
    });
    let meta = serde_json::to_vec_pretty(&meta).expect("json");
    let mut all: Vec<(&str, &[u8])> = files.to_vec();
    all.push(("_meta.json", &meta));
    all.sort_by_key(|(p, _)| *p);
    for (path, bytes) in all {
        w.start_file(path, opts).expect("start");
        w.write_all(bytes).expect("write");
    }
    w.finish().expect("zip").into_inner()
}

/// Bytes that do not compress (xorshift).
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn demo(owner: &'static str, slug: &'static str) -> Listing {
    Listing {
        owner,
        slug,
        versions: vec![
            (
                "1.0.0",
                clawhub_zip(
                    slug,
                    "1.0.0",
                    &[("SKILL.md", md(slug, "version: 1.0.0\n").as_bytes())],
                ),
            ),
            (
                "1.2.0",
                clawhub_zip(
                    slug,
                    "1.2.0",
                    &[
                        ("SKILL.md", md(slug, "version: 1.2.0\n").as_bytes()),
                        ("references/guide.md", b"# Guide\n"),
                    ],
                ),
            ),
        ],
        moderation: None,
        claimed_owner: None,
        chunked: false,
    }
}

#[test]
fn a_registry_reference_installs_the_latest_version_through_the_cli() {
    let env = Env::new();
    let registry = Registry::start(vec![demo("steipete", "gifgrep")]);
    let out = env.ws.run_cli(&[
        "skills",
        "install",
        "steipete/gifgrep",
        "--registry",
        &registry.base,
        "--json",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    assert_eq!(report["name"], "gifgrep");
    assert_eq!(report["source"], "installed");
    assert_eq!(
        report["origin"],
        json!({
            "kind": "registry",
            "registry": registry.base,
            "owner": "steipete",
            "slug": "gifgrep",
            "version": "1.2.0",
        })
    );
    let dir = env.installed().join("gifgrep");
    assert!(
        std::fs::read_to_string(dir.join("SKILL.md"))
            .expect("read")
            .contains("version: 1.2.0")
    );
    assert!(dir.join("references/guide.md").is_file());
    assert_eq!(
        registry.requests(),
        [
            "/api/v1/skills/gifgrep?ownerHandle=steipete",
            "/api/v1/download?slug=gifgrep&ownerHandle=steipete&version=1.2.0",
        ]
    );
    assert_eq!(
        env.catalog().get("gifgrep").map(|s| s.source),
        Some(Source::Installed)
    );
}

#[test]
fn a_registry_version_can_be_pinned_and_the_config_names_the_registry() {
    let env = Env::new();
    let registry = Registry::start(vec![demo("openclaw", "demo")]);
    let source = InstallSource::parse("@OpenClaw/demo@1.0.0", &env.ws.workspace).expect("parses");
    let installed = runtime()
        .block_on(install::install(
            &env.ws.paths(),
            &source,
            &InstallOptions::default(),
            &registry.config(),
        ))
        .expect("installs");
    assert!(matches!(
        &installed.origin,
        Origin::Registry { version, owner, .. } if version == "1.0.0" && owner == "openclaw"
    ));
    assert!(!installed.dir.join("references").exists(), "1.0.0 has none");
    assert_eq!(
        registry.requests().last().map(String::as_str),
        Some("/api/v1/download?slug=demo&ownerHandle=openclaw&version=1.0.0")
    );
}

#[test]
fn the_registry_is_trusted_for_nothing_it_does_not_prove() {
    let env = Env::new();
    let outside_rel = "../../../../outside/escaped.txt";
    let hostile_zip = clawhub_zip(
        "evil",
        "1.0.0",
        &[
            ("SKILL.md", md("evil", "").as_bytes()),
            (outside_rel, b"pwned"),
        ],
    );
    let huge = clawhub_zip(
        "huge",
        "1.0.0",
        &[
            ("SKILL.md", md("huge", "").as_bytes()),
            ("noise.bin", &noise(3 << 20)),
        ],
    );
    let registry = Registry::start(vec![
        Listing {
            claimed_owner: Some("mallory"),
            ..demo("alice", "impostor")
        },
        Listing {
            moderation: Some(json!({
                "isSuspicious": true, "isMalwareBlocked": true, "verdict": "malicious",
                "reasonCodes": ["malicious.exfiltration"], "summary": "Detected: exfiltration",
                "engineVersion": "v2.0.0", "updatedAt": 0
            })),
            ..demo("alice", "malware")
        },
        Listing {
            moderation: Some(json!({
                "isSuspicious": true, "isMalwareBlocked": false, "verdict": "suspicious",
                "reasonCodes": ["suspicious.dynamic_code_execution"],
                "summary": "Detected: suspicious.dynamic_code_execution"
            })),
            ..demo("alice", "sketchy")
        },
        Listing {
            owner: "alice",
            slug: "evil",
            versions: vec![("1.0.0", hostile_zip)],
            moderation: None,
            claimed_owner: None,
            chunked: false,
        },
        Listing {
            owner: "alice",
            slug: "huge",
            versions: vec![("1.0.0", huge.clone())],
            moderation: None,
            claimed_owner: None,
            chunked: false,
        },
        Listing {
            owner: "alice",
            slug: "huge-chunked",
            versions: vec![("1.0.0", huge.clone())],
            moderation: None,
            claimed_owner: None,
            chunked: true,
        },
    ]);
    let config = InstallConfig {
        max_archive_bytes: 1 << 20,
        ..registry.config()
    };
    let try_install = |reference: &str, options: &InstallOptions| {
        let source = InstallSource::parse(reference, &env.ws.workspace).expect("a reference");
        runtime().block_on(install::install(&env.ws.paths(), &source, options, &config))
    };
    let plain = InstallOptions::default();
    let before = env.snapshot();
    let cases: Vec<(&str, &str)> = vec![
        ("alice/impostor", "gave mallory's skill for alice/impostor"),
        ("alice/malware", "blocked by the registry as malware"),
        ("alice/sketchy", "--allow-suspicious"),
        ("alice/evil", "`..`"),
        ("alice/huge", "max_archive_bytes"),
        // No Content-Length: the bytes are counted as they arrive.
        ("alice/huge-chunked", "max_archive_bytes"),
        ("alice/nothing", "alice/nothing is not in the registry"),
        (
            "alice/evil@9.9.9",
            "alice/evil@9.9.9 is not in the registry",
        ),
    ];
    for (reference, needle) in cases {
        let e = try_install(reference, &plain).expect_err(reference);
        assert!(e.to_string().contains(needle), "{reference}: {e}");
        env.assert_no_trace(&before, reference);
    }
    assert!(!env.outside.join("escaped.txt").exists());

    let consent = InstallOptions {
        allow_suspicious: true,
        ..Default::default()
    };
    let sketchy = try_install("alice/sketchy", &consent).expect("with consent");
    assert_eq!(sketchy.name, "sketchy");
    let e = try_install("alice/malware", &consent).expect_err("never malware");
    assert!(e.to_string().contains("malware"), "{e}");
}

#[test]
fn a_registry_must_be_https_unless_it_is_this_machine() {
    let env = Env::new();
    let source = InstallSource::parse("alice/demo", &env.ws.workspace).expect("a reference");
    let config = InstallConfig {
        registry: "http://registry.example.com".into(),
        ..InstallConfig::default()
    };
    let e = runtime()
        .block_on(install::install(
            &env.ws.paths(),
            &source,
            &InstallOptions::default(),
            &config,
        ))
        .expect_err("plain http elsewhere");
    assert!(e.to_string().contains("only https"), "{e}");
}

#[test]
fn a_source_is_a_path_when_one_exists_else_a_registry_reference() {
    let env = Env::new();
    let cwd = &env.ws.workspace;
    std::fs::create_dir_all(cwd.join("alice/demo")).expect("mkdir");
    assert_eq!(
        InstallSource::parse("alice/demo", cwd).expect("a path"),
        InstallSource::Folder(cwd.join("alice/demo").canonicalize().expect("real"))
    );
    assert!(matches!(
        InstallSource::parse("clawhub:alice/demo", cwd).expect("forced registry"),
        InstallSource::Registry(_)
    ));
    assert!(matches!(
        InstallSource::parse("bob/demo", cwd).expect("no such path"),
        InstallSource::Registry(r) if r.owner == "bob"
    ));
    for missing in ["./bob/demo", "nothing-here", "a/b/c"] {
        let e = InstallSource::parse(missing, cwd).expect_err(missing);
        assert!(e.to_string().contains("neither a file"), "{missing}: {e}");
    }
}

#[test]
fn an_installed_handler_is_gated_and_runs_only_once_approved() {
    let env = Env::new();
    let src = env.sources.join("echoer");
    std::fs::create_dir_all(src.join("tests")).expect("mkdir");
    std::fs::write(
        src.join("SKILL.md"),
        md(
            "echoer",
            "metadata:\n  skillhost:\n    handler: handler.wasm\n",
        ),
    )
    .expect("SKILL.md");
    std::fs::copy(guest("echo-guest"), src.join("handler.wasm")).expect("handler");
    std::fs::write(
        src.join("tests/cases.jsonl"),
        "{\"task\": \"hi\", \"output\": \"hi\"}\n",
    )
    .expect("cases");

    // The install runs the gate; an installed handler waits for approval.
    let out = env
        .ws
        .run_cli(&["skills", "install", &src.display().to_string()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("gate:        passed (1 case(s))"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("skillhost handler approve echoer"),
        "{}",
        out.stdout
    );
    let refused = env.ws.run_cli(&["run", "--skill", "echoer", "hi"]);
    assert_ne!(refused.code, 0, "{}", refused.stdout);
    assert!(
        refused.stderr.contains("HandlerNotApproved"),
        "{}",
        refused.stderr
    );

    let approved = env.ws.run_cli(&["handler", "approve", "echoer"]);
    assert_eq!(approved.code, 0, "{}", approved.stderr);
    let ran = env.ws.run_cli(&["run", "--skill", "echoer", "hi"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.stdout.trim(), "hi");

    // A handler that imports what no capability permits is rejected at
    // install: the skill is installed, its handler stays quarantined.
    let hostile = env.sources.join("hostile");
    std::fs::create_dir_all(&hostile).expect("mkdir");
    std::fs::write(
        hostile.join("SKILL.md"),
        md(
            "hostile",
            "metadata:\n  skillhost:\n    handler: handler.wasm\n",
        ),
    )
    .expect("SKILL.md");
    std::fs::copy(guest("hostile-guest"), hostile.join("handler.wasm")).expect("handler");
    let out = env.ws.run_cli(&[
        "skills",
        "install",
        "--json",
        &hostile.display().to_string(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = out.json();
    assert_eq!(report["gate"]["passed"], false, "{report}");
    assert_eq!(report["gate"]["state"], "quarantined", "{report}");
    let refused = env.ws.run_cli(&["run", "--skill", "hostile", "kv"]);
    assert!(
        refused.stderr.contains("HandlerNotApproved"),
        "{}",
        refused.stderr
    );
}
