//! Installing skills into the user's installed root
//! (`$SKILLHOST_HOME/installed`, source `installed`) and uninstalling them.
//!
//! A skill comes from a folder, a `.tar.gz` or `.zip` archive, or a
//! ClawHub-compatible registry (`OWNER/SLUG`, see `registry`). Whatever
//! the source, it is unpacked into a fresh folder under
//! `installed/.staging/` (which the catalog never searches: see
//! `Paths::roots`), checked there, and renamed into place in one step, so
//! the catalog sees the whole skill or none of it, also after a crash:
//! a leftover of a killed install stays in `.staging/` and is removed by
//! the next install or uninstall. Installs and uninstalls take turns
//! through a lock in `.staging/`.
//!
//! What is checked, before anything is visible:
//! - the unpacking itself (see `extract`): no entry leaves the staging
//!   folder, no links or special files, caps on entries and bytes;
//! - a `SKILL.md` at the top (a single top-level folder is stripped), none
//!   deeper (a nested skill would slip into the catalog under a name of
//!   its own), that the catalog's parser reads, with a description;
//! - the name (`--name`, else the front matter's, else the source's) is a
//!   slug, `^[a-z0-9][a-z0-9_-]{0,63}$`, before any file operation uses it;
//!   when it differs from the front matter's, the `name:` line is
//!   rewritten so that the catalog, grants and `uninstall` agree on it;
//! - the name is no skill's of another source (bundled, forged, user,
//!   workspace, `--skills`): the catalog never lets an installed skill take
//!   such a name (see `Catalog::load`), so the install is refused and
//!   `--name` chooses another;
//! - a declared handler is a file of the skill.
//!
//! An installed skill gets no grants (`grants::effective` trusts no
//! `installed` source) and nothing else is written for it: the returned
//! [`Installed`] says what the caller may want to act on (its handler and
//! its fingerprint, for the validation gate). Replacing one (`force`)
//! swaps the folders in one step; grants stay pinned to the old
//! fingerprint, so they lapse unless the content is byte for byte the same.

mod extract;
mod registry;

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::audit::{self, Finding, Severity};
use crate::fsutil;
use crate::grants;
use crate::paths::{INSTALL_STAGING, Paths};
use crate::skill::{
    Capabilities, Catalog, LoadOptions, ParseError, ParsedSkill, SKILL_FILES, Source, parse_skill,
};

pub use registry::RegistryRef;

/// The default registry: ClawHub's public one.
pub const DEFAULT_REGISTRY: &str = "https://clawhub.ai";
const LOCK_FILE: &str = "lock";
/// Longest installed-skill name.
const MAX_NAME: usize = 64;
/// The catalog loads of an install ask for names, sources and paths only:
/// the install audits the staged folder itself.
const NAMES_ONLY: LoadOptions = LoadOptions {
    audit: false,
    ..LoadOptions::DEFAULT
};

/// `[install]` in skillhost.toml: where registry references resolve and
/// how much one install may unpack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InstallConfig {
    /// Base URL of the ClawHub-compatible registry for `OWNER/SLUG`.
    pub registry: String,
    /// Entries (files, folders, anything) one source may hold.
    pub max_entries: usize,
    /// Bytes all files together may unpack to (counted as written).
    pub max_total_bytes: u64,
    /// Bytes one file may unpack to.
    pub max_file_bytes: u64,
    /// Size of an archive file or a registry download.
    pub max_archive_bytes: u64,
    /// Folders deep one path may go.
    pub max_depth: usize,
    /// Seconds one registry request may take.
    pub timeout_secs: u64,
}

impl Default for InstallConfig {
    fn default() -> Self {
        InstallConfig {
            registry: DEFAULT_REGISTRY.to_owned(),
            max_entries: 4096,
            max_total_bytes: 128 << 20,
            // A Python handler built by componentize-py is ~40 MB.
            max_file_bytes: 64 << 20,
            max_archive_bytes: 64 << 20,
            max_depth: 16,
            timeout_secs: 60,
        }
    }
}

/// Why an install or uninstall did not happen. Nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(
        "`{0}` is not a name an installed skill can have: lowercase letters, digits, `-` and `_`, starting with a letter or digit, at most 64 characters (choose one with --name)"
    )]
    BadName(String),
    #[error("`{0}` is neither a file or folder nor a registry reference OWNER/SKILL[@VERSION]")]
    UnknownSource(String),
    #[error("{0} is not a .tar.gz or .zip archive")]
    NotAnArchive(PathBuf),
    #[error("entry `{entry}` refused: {reason}")]
    Refused { entry: String, reason: String },
    #[error("more than {max} entries: refused (the cap is `[install] max_entries`)")]
    TooManyEntries { max: usize },
    #[error(
        "the skill unpacks to more than {max} bytes: refused (the cap is `[install] max_total_bytes`)"
    )]
    TooLarge { max: u64 },
    #[error(
        "`{entry}` unpacks to more than {max} bytes: refused (the cap is `[install] max_file_bytes`)"
    )]
    FileTooLarge { entry: String, max: u64 },
    #[error("the archive is over {max} bytes: refused (the cap is `[install] max_archive_bytes`)")]
    DownloadTooLarge { max: u64 },
    #[error("{0}")]
    Archive(String),
    #[error(
        "no SKILL.md at the top of the source (nor of its single top-level folder); found: {found}"
    )]
    NoSkillFile { found: String },
    #[error("`{0}` is a second skill inside this one: install each skill on its own")]
    NestedSkill(String),
    #[error("{file} cannot be read as a skill: {source}")]
    Parse {
        file: String,
        #[source]
        source: ParseError,
    },
    #[error("{file} is {size} bytes; the catalog reads at most {max}")]
    SkillFileTooLarge { file: String, size: u64, max: u64 },
    #[error("{0}")]
    Rename(String),
    #[error(
        "`{name}` is the name of the {kind} skill {}: an installed skill never takes the name of a skill of another source; install it under another name with --name NEW{hint}",
        .path.display()
    )]
    NameTaken {
        name: String,
        kind: Source,
        /// The SKILL.md of the skill that has the name.
        path: PathBuf,
        /// `` (e.g. --name SLUG)`` when the source's own name is free.
        hint: String,
    },
    #[error("the skill declares the handler `{0}`, which is not one of its files")]
    HandlerMissing(String),
    #[error("skill `{name}` is already installed at {}; add --force to replace it", .dir.display())]
    AlreadyInstalled { name: String, dir: PathBuf },
    #[error("{} is not a folder of an installed skill; remove it by hand", .0.display())]
    NotReplaceable(PathBuf),
    #[error("{} is a symbolic link: skillhost installs only into a real folder", .0.display())]
    Link(PathBuf),
    #[error("skill `{name}` is a {kind} skill ({}); only installed skills can be uninstalled", .dir.display())]
    NotInstalled {
        name: String,
        kind: Source,
        dir: PathBuf,
    },
    #[error("no installed skill named `{0}`; see `skillhost skills list`")]
    UnknownSkill(String),
    #[error("registry {url}: {reason}")]
    BadRegistry { url: String, reason: String },
    #[error("{0} is not in the registry")]
    NotInRegistry(String),
    #[error("the registry gave {owner}'s skill for {asked}: refused")]
    OwnerMismatch { asked: String, owner: String },
    #[error("{skill} is blocked by the registry as malware: refused ({why})")]
    Blocked { skill: String, why: String },
    #[error(
        "{skill} is flagged as suspicious by the registry ({why}); read it first, then add --allow-suspicious to install it anyway"
    )]
    Suspicious { skill: String, why: String },
    #[error(
        "{skill}: the skill text audit found {} high-severity finding(s); read them, then add --allow-suspicious to install it anyway:\n{}",
        .findings.iter().filter(|f| f.severity == Severity::High).count(),
        list_findings(.findings)
    )]
    Flagged {
        skill: String,
        findings: Vec<Finding>,
    },
    #[error("{url} answered {status}: {message}")]
    RegistryStatus {
        url: String,
        status: u16,
        message: String,
    },
    #[error("{url}: {reason}")]
    RegistryAnswer { url: String, reason: String },
    #[error("cannot reach the registry: {0}")]
    Http(String),
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl InstallError {
    fn io(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> InstallError {
        let path = path.to_path_buf();
        move |source| InstallError::Io {
            action,
            path,
            source,
        }
    }
}

/// Where a skill comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallSource {
    Folder(PathBuf),
    /// A `.tar.gz` or `.zip` file (told apart by content, not name).
    Archive(PathBuf),
    Registry(RegistryRef),
}

impl InstallSource {
    /// Reads a command-line source: an existing path (relative to `cwd`)
    /// is a folder or an archive; `clawhub:OWNER/SLUG` or a plain
    /// `OWNER/SLUG` that is no path is a registry reference.
    pub fn parse(text: &str, cwd: &Path) -> Result<InstallSource, InstallError> {
        if let Some(reference) = text.strip_prefix("clawhub:") {
            return RegistryRef::parse(reference)
                .map(InstallSource::Registry)
                .ok_or_else(|| InstallError::UnknownSource(text.to_owned()));
        }
        let path = cwd.join(text);
        match fs::metadata(&path) {
            Ok(m) => {
                let path = path.canonicalize().unwrap_or(path);
                return Ok(if m.is_dir() {
                    InstallSource::Folder(path)
                } else {
                    InstallSource::Archive(path)
                });
            }
            Err(_) if fs::symlink_metadata(&path).is_ok() => {
                return Err(InstallError::Io {
                    action: "follow",
                    path,
                    source: io::Error::new(io::ErrorKind::NotFound, "dangling symbolic link"),
                });
            }
            Err(_) => {}
        }
        let looks_like_path = text.starts_with('.') || text.starts_with('/') || text.ends_with('/');
        match RegistryRef::parse(text) {
            Some(r) if !looks_like_path => Ok(InstallSource::Registry(r)),
            _ => Err(InstallError::UnknownSource(text.to_owned())),
        }
    }
}

/// What the caller asks of an install beyond the source.
#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    /// The name to install under, instead of the skill's own.
    pub name: Option<String>,
    /// Replace an installed skill of the same name.
    pub force: bool,
    /// Install a skill the registry flags as suspicious, or one with a
    /// high-severity finding of the skill text audit (the findings are
    /// still recorded and reported).
    pub allow_suspicious: bool,
    /// The registry for this install, over `[install] registry`.
    pub registry: Option<String>,
    /// Whether `config` was read from skillhost.toml (the command line's
    /// case): its registry is then reached at public addresses only, as a
    /// workspace may have written it. `registry` above, and a config a
    /// program builds itself, are the caller's own choice.
    pub config_from_files: bool,
}

/// Where an installed skill came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Origin {
    Folder {
        path: PathBuf,
    },
    Archive {
        path: PathBuf,
    },
    Registry {
        registry: String,
        owner: String,
        slug: String,
        version: String,
    },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Folder { path } | Origin::Archive { path } => write!(f, "{}", path.display()),
            Origin::Registry {
                registry,
                owner,
                slug,
                version,
            } => write!(f, "{owner}/{slug}@{version} from {registry}"),
        }
    }
}

/// A skill that is now installed: what the caller may act on (the gate
/// takes its handler and fingerprint).
#[derive(Debug, Clone, Serialize)]
pub struct Installed {
    pub name: String,
    /// Its folder: `installed/NAME`.
    pub dir: PathBuf,
    /// Always `installed`: what the catalog will say, and what decides its
    /// (absent) trust.
    pub source: Source,
    pub origin: Origin,
    /// The handler's path inside the folder, when it has one.
    pub handler: Option<String>,
    /// What grants and approvals are pinned to (SKILL.md + handler).
    pub fingerprint: String,
    /// What its SKILL.md asks for; none of it is granted.
    pub declared: Capabilities,
    /// The fingerprint of the installed skill this one replaced.
    pub replaced: Option<String>,
    /// The front matter's name, when the skill was installed under another.
    pub renamed_from: Option<String>,
    pub files: usize,
    pub bytes: u64,
    /// A skill of the same name in a root the catalog prefers: the one it
    /// will use instead.
    pub shadowed_by: Option<Shadow>,
    /// What the catalog's parser noticed in its SKILL.md.
    pub warnings: Vec<String>,
    /// What the skill text audit found in the staged folder (also in the
    /// install record). A high finding means `--allow-suspicious` let it in.
    pub audit: Vec<Finding>,
    /// The install record: `$SKILLHOST_HOME/install-records/NAME.json`.
    pub record: PathBuf,
}

/// What an install leaves beside the skill: where it came from and what
/// the audit found then (`install-records/NAME.json` under the home).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InstallRecord {
    pub name: String,
    /// `Origin` as JSON (`kind` and its fields).
    pub origin: serde_json::Value,
    pub fingerprint: String,
    /// Seconds since the Unix epoch.
    pub installed_at: u64,
    pub audit: RecordedAudit,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedAudit {
    pub findings: Vec<Finding>,
    /// A high finding was let through by `--allow-suspicious`.
    pub allowed_suspicious: bool,
}

/// The install record of skill `name` (see [`InstallRecord`]).
pub fn record_path(paths: &Paths, name: &str) -> PathBuf {
    paths
        .home
        .join("install-records")
        .join(format!("{name}.json"))
}

/// Reads the install record of skill `name`, if there is one.
pub fn read_record(paths: &Paths, name: &str) -> Option<InstallRecord> {
    check_name(name).ok()?;
    let text = fs::read(record_path(paths, name)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Findings one a line: `file:line:col: rule severity: excerpt`.
pub fn list_findings(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| {
            format!(
                "  {}:{}:{}: {} {}: {}",
                audit::escape(&f.file, 200),
                f.line,
                f.column,
                f.rule,
                f.severity,
                f.excerpt
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The skill the catalog prefers over an installed one of the same name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shadow {
    pub source: Source,
    /// Its SKILL.md.
    pub path: PathBuf,
}

impl Installed {
    pub fn has_handler(&self) -> bool {
        self.handler.is_some()
    }
}

/// A skill that is no longer installed.
#[derive(Debug, Clone, Serialize)]
pub struct Uninstalled {
    pub name: String,
    /// Where it was.
    pub dir: PathBuf,
}

/// Whether `name` may name an installed skill (and its folder).
pub fn check_name(name: &str) -> Result<(), InstallError> {
    let bytes = name.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= MAX_NAME
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_'));
    if ok {
        Ok(())
    } else {
        Err(InstallError::BadName(name.to_owned()))
    }
}

/// Installs from any source; a registry is asked over the network, the
/// file work runs off the async workers.
pub async fn install(
    paths: &Paths,
    source: &InstallSource,
    options: &InstallOptions,
    config: &InstallConfig,
) -> Result<Installed, InstallError> {
    if let Some(n) = &options.name {
        check_name(n)?;
    }
    let (paths, options, config) = (paths.clone(), options.clone(), config.clone());
    let work = match source {
        InstallSource::Registry(reference) => {
            let (base, named_by) = match &options.registry {
                Some(url) => (url.as_str(), registry::NamedBy::Operator),
                None if options.config_from_files => {
                    (config.registry.as_str(), registry::NamedBy::ConfigFile)
                }
                None => (config.registry.as_str(), registry::NamedBy::Operator),
            };
            let fetched =
                registry::fetch(reference, base, named_by, &config, options.allow_suspicious)
                    .await?;
            let reference = reference.clone();
            tokio::task::spawn_blocking(move || {
                let origin = Origin::Registry {
                    registry: fetched.registry,
                    owner: reference.owner,
                    slug: fetched.slug.clone(),
                    version: fetched.version,
                };
                let payload = Payload::Bytes(fetched.archive);
                install_payload(&paths, payload, &fetched.slug, origin, &options, &config)
            })
        }
        local => {
            let local = local.clone();
            tokio::task::spawn_blocking(move || install_local(&paths, &local, &options, &config))
        }
    };
    work.await.map_err(|e| InstallError::Io {
        action: "finish",
        path: PathBuf::from("the install"),
        source: io::Error::other(e.to_string()),
    })?
}

/// Installs from a folder or an archive (a registry reference needs
/// [`install`]).
pub fn install_local(
    paths: &Paths,
    source: &InstallSource,
    options: &InstallOptions,
    config: &InstallConfig,
) -> Result<Installed, InstallError> {
    if let Some(n) = &options.name {
        check_name(n)?;
    }
    match source {
        InstallSource::Folder(dir) => {
            let origin = Origin::Folder { path: dir.clone() };
            let default = file_name(dir);
            install_payload(
                paths,
                Payload::Folder(dir),
                &default,
                origin,
                options,
                config,
            )
        }
        InstallSource::Archive(file) => {
            let origin = Origin::Archive { path: file.clone() };
            let opened = File::open(file).map_err(InstallError::io("open", file))?;
            let size = opened
                .metadata()
                .map_err(InstallError::io("read", file))?
                .len();
            if size > config.max_archive_bytes {
                return Err(InstallError::DownloadTooLarge {
                    max: config.max_archive_bytes,
                });
            }
            let default = archive_stem(file);
            install_payload(
                paths,
                Payload::File(opened, file.clone()),
                &default,
                origin,
                options,
                config,
            )
        }
        InstallSource::Registry(r) => Err(InstallError::UnknownSource(format!(
            "{r} (a registry reference: use the async install)"
        ))),
    }
}

/// `tool.tar.gz` → `tool`, `tool-1.0.zip` → `tool-1.0`.
fn archive_stem(file: &Path) -> String {
    let name = file_name(file);
    for ext in [".tar.gz", ".tgz", ".zip"] {
        if let Some(stem) = name.strip_suffix(ext) {
            return stem.to_owned();
        }
    }
    name
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What is unpacked.
enum Payload<'a> {
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

fn unpack(payload: Payload<'_>, sink: &mut extract::Sink<'_>) -> Result<(), InstallError> {
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

/// The installed root and its staging folder, locked for this process.
struct Staging {
    /// The installed root, resolved.
    root: PathBuf,
    dir: PathBuf,
    /// The other roots of the invocation: names an install may not take.
    others: Vec<crate::skill::Root>,
    /// Where install records go (see [`record_path`]).
    records: PathBuf,
    _lock: File,
}

impl Staging {
    /// Makes the installed root and `.staging/` if missing (refusing links
    /// for either), waits for the lock, and removes what a killed install
    /// or uninstall left there.
    fn open(paths: &Paths) -> Result<Staging, InstallError> {
        let root = paths.installed_root();
        refuse_link(&root)?;
        fs::create_dir_all(&root).map_err(InstallError::io("create", &root))?;
        let root = root
            .canonicalize()
            .map_err(InstallError::io("resolve", &root))?;
        let dir = root.join(INSTALL_STAGING);
        refuse_link(&dir)?;
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(InstallError::io("create", &dir)(e)),
        }
        let lock_path = dir.join(LOCK_FILE);
        let lock =
            crate::fsutil::lock_file(&lock_path).map_err(InstallError::io("lock", &lock_path))?;
        let others = paths
            .roots()
            .into_iter()
            .filter(|r| !r.source.is_foreign())
            .collect();
        let staging = Staging {
            root,
            dir,
            others,
            records: record_path(paths, "x")
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            _lock: lock,
        };
        staging.remove_leftovers();
        Ok(staging)
    }

    /// Under the lock, nothing in `.staging/` but the lock belongs to a
    /// live process.
    fn remove_leftovers(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            if e.file_name() == LOCK_FILE {
                continue;
            }
            let path = e.path();
            let removed = if e.file_type().is_ok_and(|t| t.is_dir()) {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            match removed {
                Ok(()) => {
                    tracing::info!("removed {} (left by an unfinished install)", path.display())
                }
                Err(err) => tracing::warn!("cannot remove {}: {err}", path.display()),
            }
        }
    }

    /// A new, empty folder in `.staging/`.
    fn work_dir(&self, purpose: &str) -> Result<PathBuf, InstallError> {
        let path = self
            .dir
            .join(format!("{purpose}-{}-{}", std::process::id(), unique()));
        fs::create_dir(&path).map_err(InstallError::io("create", &path))?;
        Ok(path)
    }

    /// A name in `.staging/` that does not exist yet.
    fn spare_path(&self, purpose: &str) -> PathBuf {
        self.dir
            .join(format!("{purpose}-{}-{}", std::process::id(), unique()))
    }

    /// Refuses `name` when a skill of another source has it: the catalog
    /// would never use the installed skill under it. `alternative` (the
    /// source's own name) is suggested when no skill has it.
    fn check_free(&self, name: &str, alternative: &str) -> Result<(), InstallError> {
        let catalog = Catalog::load(&self.others, &NAMES_ONLY);
        let Some(holder) = catalog.get(name) else {
            return Ok(());
        };
        let hint = if alternative != name
            && check_name(alternative).is_ok()
            && catalog.get(alternative).is_none()
            && fs::symlink_metadata(self.root.join(alternative)).is_err()
        {
            format!(" (e.g. --name {alternative})")
        } else {
            String::new()
        };
        Err(InstallError::NameTaken {
            name: name.to_owned(),
            kind: holder.source,
            path: holder.path.clone(),
            hint,
        })
    }
}

fn refuse_link(path: &Path) -> Result<(), InstallError> {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(InstallError::Link(path.to_path_buf()));
    }
    Ok(())
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// The whole install: stage, check, put in place, report.
fn install_payload(
    paths: &Paths,
    payload: Payload<'_>,
    default_name: &str,
    origin: Origin,
    options: &InstallOptions,
    config: &InstallConfig,
) -> Result<Installed, InstallError> {
    let staging = Staging::open(paths)?;
    let work = staging.work_dir("install")?;
    let result = stage_and_place(
        &staging,
        &work,
        payload,
        default_name,
        origin,
        options,
        config,
    );
    // The work folder holds what was refused, or the replaced skill; it
    // is gone when the skill was its whole content.
    match fs::remove_dir_all(&work) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            tracing::warn!("cannot remove {}: {e}", work.display());
        }
        _ => {}
    }
    let mut installed = result?;
    drop(staging);
    let catalog = Catalog::load(&paths.roots(), &NAMES_ONLY);
    match catalog.get(&installed.name) {
        Some(s) if s.source != Source::Installed => {
            installed.shadowed_by = Some(Shadow {
                source: s.source,
                path: s.path.clone(),
            });
        }
        Some(_) => {}
        None => installed
            .warnings
            .push("the catalog does not list it: see `skillhost skills list`".into()),
    }
    tracing::info!(
        name = %installed.name,
        fingerprint = %installed.fingerprint,
        "installed a skill from {}",
        installed.origin
    );
    Ok(installed)
}

fn stage_and_place(
    staging: &Staging,
    work: &Path,
    payload: Payload<'_>,
    default_name: &str,
    origin: Origin,
    options: &InstallOptions,
    config: &InstallConfig,
) -> Result<Installed, InstallError> {
    let mut sink = extract::Sink::new(work, config)?;
    unpack(payload, &mut sink)?;
    let unpacked = sink.finish();

    let top = top_folder(&unpacked.files, &unpacked.dirs);
    let skill_dir = work.join(&top);
    let md_rel = skill_file(&unpacked.files, &top)?;
    if let Some(nested) = unpacked.files.iter().find(|f| {
        f.parent() != Some(top.as_path())
            && f.file_name()
                .is_some_and(|n| SKILL_FILES.iter().any(|s| n == *s))
    }) {
        return Err(InstallError::NestedSkill(nested.display().to_string()));
    }
    let md_path = work.join(&md_rel);
    let md_name = file_name(&md_path);
    let max_md = LoadOptions::default().max_file_bytes;
    let mut md = fs::read(&md_path).map_err(InstallError::io("read", &md_path))?;
    if md.len() as u64 > max_md {
        return Err(InstallError::SkillFileTooLarge {
            file: md_name,
            size: md.len() as u64,
            max: max_md,
        });
    }

    let fallback = match (&options.name, top.file_name()) {
        (Some(n), _) => n.clone(),
        (None, Some(folder)) => folder.to_string_lossy().into_owned(),
        (None, None) => default_name.to_owned(),
    };
    let mut parsed = parse_skill(&md, &fallback).map_err(|source| InstallError::Parse {
        file: md_name.clone(),
        source,
    })?;
    let name = options.name.clone().unwrap_or_else(|| parsed.name.clone());
    check_name(&name)?;
    staging.check_free(&name, default_name)?;
    let renamed_from = if parsed.name != name {
        let old = std::mem::take(&mut parsed.name);
        (md, parsed) = with_name(&md, &name, &fallback)?;
        fsutil::write_atomic(&md_path, &md).map_err(InstallError::io("write", &md_path))?;
        Some(old)
    } else {
        None
    };

    let handler = match &parsed.meta.skillhost.handler {
        Some(rel) => Some((
            rel.clone(),
            read_handler(work, &top, rel, &unpacked.files, config)?,
        )),
        None => None,
    };
    let fingerprint = grants::fingerprint(&md, handler.as_ref().map(|(_, b)| b.as_slice()));
    let findings = audit_staged(&skill_dir, &name, options)?;

    let target = staging.root.join(&name);
    let replaced = place(
        staging,
        &skill_dir,
        &target,
        &name,
        options.force,
        config.max_file_bytes,
    )?;
    fsutil::sync_dir(&staging.root);

    let record = staging.records.join(format!("{name}.json"));
    let written = InstallRecord {
        name: name.clone(),
        origin: serde_json::to_value(&origin).unwrap_or_default(),
        fingerprint: fingerprint.clone(),
        installed_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        audit: RecordedAudit {
            allowed_suspicious: audit::has_high(&findings),
            findings: findings.clone(),
        },
    };
    let mut warnings = parsed.warnings;
    warnings.extend(write_record(&record, &written).err().map(|e| {
        // The skill is in place; the record is what `skills list` and a
        // person read later. The catalog audits it again at every load.
        format!("cannot write the install record {}: {e}", record.display())
    }));

    Ok(Installed {
        name,
        dir: target,
        source: Source::Installed,
        origin,
        handler: handler.map(|(rel, _)| rel),
        fingerprint,
        declared: parsed.meta.skillhost.capabilities.clone(),
        replaced,
        renamed_from,
        files: unpacked.files.len(),
        bytes: unpacked.bytes,
        shadowed_by: None,
        warnings,
        audit: findings,
        record,
    })
}

/// The bytes of the handler `rel` that the staged SKILL.md names: a file
/// of the unpacked folder `top`, or the install is refused.
fn read_handler(
    work: &Path,
    top: &Path,
    rel: &str,
    files: &[PathBuf],
    config: &InstallConfig,
) -> Result<Vec<u8>, InstallError> {
    let inside = extract::relative_path(rel.as_bytes(), config.max_depth)
        .ok()
        .flatten()
        .map(|p| top.join(p))
        .filter(|p| files.contains(p))
        .ok_or_else(|| InstallError::HandlerMissing(rel.to_owned()))?;
    let path = work.join(inside);
    fs::read(&path).map_err(InstallError::io("read", &path))
}

/// The text audit of the staged folder, before anything is visible: a
/// high finding refuses the install unless the caller allows it.
fn audit_staged(
    skill_dir: &Path,
    name: &str,
    options: &InstallOptions,
) -> Result<Vec<audit::Finding>, InstallError> {
    let findings = audit::audit_folder(skill_dir)
        .map_err(|e| InstallError::Io {
            action: "audit",
            path: skill_dir.to_path_buf(),
            source: io::Error::other(e.to_string()),
        })?
        .findings;
    if audit::has_high(&findings) && !options.allow_suspicious {
        return Err(InstallError::Flagged {
            skill: name.to_owned(),
            findings,
        });
    }
    Ok(findings)
}

fn write_record(path: &Path, record: &InstallRecord) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let json = serde_json::to_vec_pretty(record).map_err(io::Error::other)?;
    fsutil::write_atomic(path, &json)
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

/// Puts `staged` at `target`: a new name in one rename that refuses to
/// replace anything; with `force`, swapped with the installed folder in
/// one step. Returns the replaced skill's fingerprint.
fn place(
    staging: &Staging,
    staged: &Path,
    target: &Path,
    name: &str,
    force: bool,
    max_handler: u64,
) -> Result<Option<String>, InstallError> {
    let exists = || InstallError::AlreadyInstalled {
        name: name.to_owned(),
        dir: target.to_path_buf(),
    };
    let current = match fs::symlink_metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return match fsutil::rename_noreplace(staged, target) {
                Ok(()) => Ok(None),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(exists()),
                Err(e) => Err(InstallError::io("move into place", target)(e)),
            };
        }
        Err(e) => return Err(InstallError::io("inspect", target)(e)),
    };
    if !force {
        return Err(exists());
    }
    if current.file_type().is_symlink() || !current.is_dir() {
        return Err(InstallError::NotReplaceable(target.to_path_buf()));
    }
    let previous = fingerprint_of(target, max_handler);
    if fsutil::exchange(staged, target).map_err(InstallError::io("replace", target))? {
        return Ok(previous);
    }
    // No atomic swap here: the old folder moves aside, then the new one in.
    // In between the skill is absent, never half there.
    let aside = staging.spare_path("replaced");
    fs::rename(target, &aside).map_err(InstallError::io("move aside", target))?;
    if let Err(e) = fs::rename(staged, target) {
        let _ = fs::rename(&aside, target);
        return Err(InstallError::io("move into place", target)(e));
    }
    let _ = fs::remove_dir_all(&aside);
    Ok(previous)
}

/// The fingerprint of the skill in `dir`, read as the catalog reads it
/// (inside the folder, no link out).
fn fingerprint_of(dir: &Path, max_handler: u64) -> Option<String> {
    let root = crate::skill::Root::new(dir.to_path_buf(), Source::Installed);
    let catalog = Catalog::load(std::slice::from_ref(&root), &NAMES_ONLY);
    let skill = catalog.skills().iter().find(|s| s.dir == root.dir)?;
    let md = skill
        .read_file(&skill.file_name(), LoadOptions::default().max_file_bytes)
        .ok()?;
    let handler = match &skill.meta.skillhost.handler {
        Some(rel) => Some(skill.read_file(rel, max_handler).ok()?),
        None => None,
    };
    Some(grants::fingerprint(&md, handler.as_deref()))
}

/// `md` with its front matter's `name` set to `name`: the `name:` line
/// (and its continuation lines) replaced, or one added after the opening
/// `---`, or a front matter block added. Refused unless the result reads
/// back as the same skill under the new name.
fn with_name(
    md: &[u8],
    name: &str,
    fallback: &str,
) -> Result<(Vec<u8>, ParsedSkill), InstallError> {
    let refuse = |why: &str| {
        InstallError::Rename(format!(
            "cannot install the skill as `{name}`: {why}; set `name: {name}` in its SKILL.md instead"
        ))
    };
    let text = std::str::from_utf8(md).map_err(|_| refuse("its SKILL.md is not UTF-8"))?;
    let (bom, text) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let line = format!("name: \"{name}\"");
    let mut lines = text.split_inclusive('\n').peekable();
    let mut out = String::from(bom);
    // Leading blank lines, then the opening `---`.
    let mut opened = false;
    while let Some(&l) = lines.peek() {
        if l.trim().is_empty() {
            out.push_str(l);
            lines.next();
            continue;
        }
        if l.trim_end() == "---" {
            let eol = if l.ends_with("\r\n") { "\r\n" } else { "\n" };
            out.push_str(l);
            lines.next();
            opened = true;
            let mut done = false;
            while let Some(l) = lines.next() {
                let t = l.trim_end();
                if !done && (t == "---" || t == "...") {
                    out.push_str(&line);
                    out.push_str(eol);
                    done = true;
                    out.push_str(l);
                    break;
                }
                if t.starts_with("name:") {
                    // Drop the old value and its continuation lines.
                    while lines
                        .peek()
                        .is_some_and(|n| n.starts_with(' ') || n.starts_with('\t'))
                    {
                        lines.next();
                    }
                    continue;
                }
                out.push_str(l);
            }
            if !done {
                return Err(refuse("its front matter is never closed"));
            }
        }
        break;
    }
    if !opened {
        out = format!("{bom}---\n{line}\n---\n{text}");
    } else {
        out.extend(lines);
    }
    let before = parse_skill(md, fallback).map_err(|e| refuse(&e.to_string()))?;
    let after = parse_skill(out.as_bytes(), name).map_err(|e| refuse(&e.to_string()))?;
    let without_name = |v: &serde_json::Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("name");
        }
        v
    };
    let same = after.name == name
        && after.description == before.description
        && after.body == before.body
        && without_name(&after.meta.raw) == without_name(&before.meta.raw);
    if !same {
        return Err(refuse("its front matter could not be edited safely"));
    }
    Ok((out.into_bytes(), after))
}

/// Removes the installed skill `name`: its folder is renamed into
/// `.staging/` (one step: the catalog no longer sees it) and then deleted.
/// Bundled, user, workspace, forged and `--skills` skills are refused.
pub fn uninstall(paths: &Paths, name: &str) -> Result<Uninstalled, InstallError> {
    let root = paths.installed_root();
    let direct = check_name(name).is_ok()
        && fs::symlink_metadata(root.join(name)).is_ok_and(|m| m.is_dir() || m.is_symlink());
    let dir = if direct {
        root.join(name)
    } else {
        // Not a folder of that name: a skill of another source, or one
        // whose folder is named otherwise.
        let catalog = Catalog::load(&paths.roots(), &NAMES_ONLY);
        let installed = Catalog::load(
            &[crate::skill::Root::new(root.clone(), Source::Installed)
                .skipping(paths.install_staging())],
            &NAMES_ONLY,
        );
        match (installed.get(name), catalog.get(name)) {
            (Some(s), _) if s.dir.parent() == Some(root.as_path()) => s.dir.clone(),
            (_, Some(s)) => {
                return Err(InstallError::NotInstalled {
                    name: name.to_owned(),
                    kind: s.source,
                    dir: s.dir.clone(),
                });
            }
            _ => return Err(InstallError::UnknownSkill(name.to_owned())),
        }
    };
    let staging = Staging::open(paths)?;
    let folder = dir
        .file_name()
        .ok_or_else(|| InstallError::UnknownSkill(name.to_owned()))?;
    let current = staging.root.join(folder);
    if fs::symlink_metadata(&current).is_err() {
        // Gone while waiting for the lock.
        return Err(InstallError::UnknownSkill(name.to_owned()));
    }
    let aside = staging.spare_path("removed");
    fs::rename(&current, &aside).map_err(InstallError::io("remove", &current))?;
    fsutil::sync_dir(&staging.root);
    let removed = if fs::symlink_metadata(&aside).is_ok_and(|m| m.is_dir()) {
        fs::remove_dir_all(&aside)
    } else {
        fs::remove_file(&aside)
    };
    if let Err(e) = removed {
        // Out of the catalog already; the next install clears the rest.
        tracing::warn!("cannot delete {}: {e}", aside.display());
    }
    let record = staging.records.join(format!("{name}.json"));
    if let Err(e) = fs::remove_file(&record)
        && e.kind() != io::ErrorKind::NotFound
    {
        tracing::warn!("cannot delete {}: {e}", record.display());
    }
    tracing::info!(name, "uninstalled a skill");
    Ok(Uninstalled {
        name: name.to_owned(),
        dir: current,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_slugs() {
        for ok in ["a", "0", "mail-writer", "a_b", &"x".repeat(64)] {
            check_name(ok).expect(ok);
        }
        for bad in [
            "",
            "-a",
            "_a",
            "A",
            "a b",
            "a/b",
            "..",
            ".a",
            "é",
            &"x".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

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

    fn renamed(md: &str) -> String {
        let (out, parsed) = with_name(md.as_bytes(), "new-name", "folder").expect("renamed");
        assert_eq!(parsed.name, "new-name");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn the_name_line_is_replaced_and_the_rest_kept() {
        assert_eq!(
            renamed("---\nname: Old Name\ndescription: Does it.\n---\nBody.\n"),
            "---\ndescription: Does it.\nname: \"new-name\"\n---\nBody.\n"
        );
        assert_eq!(
            renamed(
                "\u{feff}---\r\nname: >\r\n  folded\r\n  name\r\ndescription: d\r\n---\r\nB\r\n"
            ),
            "\u{feff}---\r\ndescription: d\r\nname: \"new-name\"\r\n---\r\nB\r\n"
        );
        assert_eq!(
            renamed("---\ndescription: d\n---\n"),
            "---\ndescription: d\nname: \"new-name\"\n---\n"
        );
        assert_eq!(
            renamed("# Title\n\nWhat it does.\n"),
            "---\nname: \"new-name\"\n---\n# Title\n\nWhat it does.\n"
        );
    }

    #[test]
    fn a_rename_that_would_change_the_skill_is_refused() {
        // Front matter without `---` lines: adding a block would turn the
        // keys into body text.
        let e =
            with_name(b"name: x\ndescription: Bare keys.\n\n# T\n", "y", "f").expect_err("refused");
        assert!(e.to_string().contains("set `name: y`"), "{e}");
        let e = with_name(b"---\nname: x\ndescription: d\n", "y", "f").expect_err("unclosed");
        assert!(e.to_string().contains("never closed"), "{e}");
        let e = with_name(b"---\nname: x\ndescription: caf\xe9\n---\n", "y", "f")
            .expect_err("not utf-8");
        assert!(e.to_string().contains("UTF-8"), "{e}");
    }
}
