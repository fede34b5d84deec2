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
//!   workspace, `--skills`), nor a look-alike of one (the same skeleton:
//!   case, separators and confusable characters folded, see
//!   `skill::skeleton`), nor a look-alike of another installed skill's:
//!   the catalog never lets an installed skill take such a name (see
//!   `Catalog::load`), so the install is refused and `--name` chooses
//!   another;
//! - a declared handler is a file of the skill.
//!
//! An installed skill gets no grants (`grants::effective` trusts no
//! `installed` source) and nothing else is written for it: the returned
//! [`Installed`] says what the caller may want to act on (its handler and
//! its fingerprint, for the validation gate). Replacing one (`force`)
//! swaps the folders in one step; grants and approvals stay pinned to the
//! old fingerprint (every file a run can read), so they lapse unless that
//! content is byte for byte the same, and the replacement's handler is
//! gated again.
//!
//! - `unpack`: what a folder or archive unpacks to, and where its SKILL.md is.
//! - `staging`: the installed root's `.staging/` folder, under its lock.
//! - `place`: an unpacked skill checked in staging and put in place.
//! - `rename`: the SKILL.md's `name` set to the name it installs as.
//! - `records`: what an install leaves beside the skill.
//! - `uninstall`: removing an installed skill.

mod extract;
mod place;
mod records;
mod registry;
mod rename;
mod staging;
mod uninstall;
mod unpack;

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::audit::{Finding, Severity};
use crate::paths::Paths;
use crate::skill::{Capabilities, LoadOptions, ParseError, Source};
use place::install_payload;
use unpack::Payload;

pub use records::{InstallRecord, RecordedAudit, list_findings, read_record, record_path};
pub use registry::RegistryRef;
pub use uninstall::uninstall;

/// The default registry: ClawHub's public one.
pub const DEFAULT_REGISTRY: &str = "https://clawhub.ai";
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
    #[error("cannot pin skill `{name}` for grants and approvals: {reason}")]
    Unpinnable { name: String, reason: String },
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
        "{} the {kind} skill {}: an installed skill never takes the name of another skill, nor one that differs from it only in case, separators ('-', '_', '.', spaces) or look-alike characters; install it under another name with --name NEW{hint}",
        taken_as(.name, .holder),
        .path.display()
    )]
    NameTaken {
        /// The name asked for.
        name: String,
        /// The name of the skill that has it: `name` or a look-alike.
        holder: String,
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
    /// What grants and approvals are pinned to: its SKILL.md and every
    /// file of its folder a run can read (see `Skill::pin`).
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

/// "`NAME` is the name of", or "`NAME` looks like `HOLDER`, the name of".
fn taken_as(name: &str, holder: &str) -> String {
    if name == holder {
        format!("`{name}` is the name of")
    } else {
        format!("`{name}` looks like `{holder}`, the name of")
    }
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
            let (base, named_by) = registry_base(&options, &config);
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
    let (payload, default, origin) = match source {
        InstallSource::Folder(dir) => (
            Payload::Folder(dir),
            file_name(dir),
            Origin::Folder { path: dir.clone() },
        ),
        InstallSource::Archive(file) => (
            Payload::File(open_archive(file, config)?, file.clone()),
            archive_stem(file),
            Origin::Archive { path: file.clone() },
        ),
        InstallSource::Registry(r) => {
            return Err(InstallError::UnknownSource(format!(
                "{r} (a registry reference: use the async install)"
            )));
        }
    };
    install_payload(paths, payload, &default, origin, options, config)
}

/// The registry to ask, and who named it: `--registry`, else the
/// configured one (named by a config file when the options come from one).
fn registry_base<'a>(
    options: &'a InstallOptions,
    config: &'a InstallConfig,
) -> (&'a str, registry::NamedBy) {
    match &options.registry {
        Some(url) => (url.as_str(), registry::NamedBy::Operator),
        None if options.config_from_files => {
            (config.registry.as_str(), registry::NamedBy::ConfigFile)
        }
        None => (config.registry.as_str(), registry::NamedBy::Operator),
    }
}

/// The archive `file`, opened, within `max_archive_bytes`.
fn open_archive(file: &Path, config: &InstallConfig) -> Result<File, InstallError> {
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
    Ok(opened)
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
}
