//! The one path every forged or improved SKILL.md takes to disk.
//!
//! - The name is checked against `^[a-z0-9_-]{1,64}$` before any file
//!   operation.
//! - The resolved path (symlinks included, the forged root's own too) must
//!   lie inside the forged root, or, for an improvement, inside a user or
//!   workspace skill root; anything else aborts with a logged error and
//!   writes nothing.
//! - Atomic: a temporary file in the same folder → validate what was
//!   written (UTF-8, front matter parses with the catalog's own parser,
//!   name unchanged, description present, capabilities and allowed-tools
//!   not widened, size cap) → fsync → rename → fsync the folder. A reader,
//!   or a process killed at any point, sees the old file or the new one.
//! - Every write holds [`ForgeLock`], an exclusive lock on
//!   `.skillhost/forge/forge.lock` shared by every process of the
//!   workspace, so two processes forging at once take turns.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::ForgeError;
use crate::paths::Paths;
use crate::skill::{Capabilities, LimitSpec, ParsedSkill, Source, parse_skill};
use crate::types::constant_regex;

/// Largest SKILL.md the forge writes.
pub const MAX_SKILL_BYTES: usize = 64 << 10;
pub const SKILL_FILE: &str = "SKILL.md";
/// Temporary files are `.SKILL.md.forge-PID-N` beside the target.
const TMP_PREFIX: &str = ".SKILL.md.forge-";
const LOCK_FILE: &str = "forge.lock";

static SLUG: LazyLock<Regex> = LazyLock::new(|| constant_regex(r"^[a-z0-9_-]{1,64}$"));

/// Whether `slug` may name a forged skill (and its folder).
pub fn check_slug(slug: &str) -> Result<(), ForgeError> {
    if SLUG.is_match(slug) {
        Ok(())
    } else {
        Err(ForgeError::BadSlug(slug.to_owned()))
    }
}

/// Why a proposed SKILL.md is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum Invalid {
    #[error("it is {size} bytes, over the {max}-byte cap")]
    TooLarge { size: usize, max: usize },
    #[error("it is not UTF-8")]
    NotUtf8,
    #[error("its front matter does not parse: {0}")]
    Parse(String),
    #[error("its front matter has no description")]
    NoDescription,
    #[error("its name is `{found}`, not `{expected}`")]
    NameChanged { expected: String, found: String },
    #[error("it asks for capabilities beyond what it had: {0}")]
    Widened(String),
    #[error("its allowed-tools reach beyond what they did: {0}")]
    ToolsWidened(String),
    #[error("it changes the handler")]
    HandlerChanged,
    #[error("it raises its limits")]
    LimitsRaised,
}

/// What a written SKILL.md must be.
#[derive(Debug, Clone)]
pub struct Expect<'a> {
    pub name: &'a str,
    /// The most it may declare.
    pub capabilities: &'a Capabilities,
    /// The most its `allowed-tools` may list; `None`: no bound.
    pub allowed_tools: Option<&'a [String]>,
    /// Its handler, unchanged.
    pub handler: Option<&'a str>,
    /// Its limits, never raised.
    pub limits: LimitSpec,
    /// Off for a rollback: a version the skill had before is restored as
    /// it was.
    pub bounded: bool,
}

impl<'a> Expect<'a> {
    /// A SKILL.md replacing `old` (parsed): same name, nothing widened.
    pub fn replacing(old: &'a ParsedSkill) -> Self {
        Expect {
            name: &old.name,
            capabilities: &old.meta.skillhost.capabilities,
            allowed_tools: old.meta.allowed_tools.as_deref(),
            handler: old.meta.skillhost.handler.as_deref(),
            limits: old.meta.skillhost.limits,
            bounded: true,
        }
    }
}

/// Checks `bytes` as a SKILL.md the forge may write.
pub fn validate(bytes: &[u8], expect: &Expect<'_>) -> Result<ParsedSkill, Invalid> {
    if bytes.len() > MAX_SKILL_BYTES {
        return Err(Invalid::TooLarge {
            size: bytes.len(),
            max: MAX_SKILL_BYTES,
        });
    }
    std::str::from_utf8(bytes).map_err(|_| Invalid::NotUtf8)?;
    let parsed = parse_skill(bytes, expect.name).map_err(|e| Invalid::Parse(e.to_string()))?;
    // The catalog's parser is lenient; a written skill must not need it to be.
    if let Some(w) = parsed.warnings.iter().find(|w| {
        w.starts_with("no YAML front matter")
            || w.starts_with("front matter has no `---`")
            || w.starts_with("metadata.skillhost ignored")
            || w.contains("not closed")
    }) {
        return Err(Invalid::Parse(w.clone()));
    }
    let found = parsed.meta.raw.get("name").and_then(|v| v.as_str());
    if found != Some(expect.name) {
        return Err(Invalid::NameChanged {
            expected: expect.name.to_owned(),
            found: found.unwrap_or("").to_owned(),
        });
    }
    let described = parsed
        .meta
        .raw
        .get("description")
        .and_then(|v| v.as_str())
        .is_some_and(|d| !d.trim().is_empty());
    if !described {
        return Err(Invalid::NoDescription);
    }
    if expect.bounded {
        check_bounds(&parsed, expect)?;
    }
    Ok(parsed)
}

fn check_bounds(parsed: &ParsedSkill, expect: &Expect<'_>) -> Result<(), Invalid> {
    let sh = &parsed.meta.skillhost;
    let kept = crate::grants::intersect(&sh.capabilities, expect.capabilities);
    if kept != sh.capabilities {
        return Err(Invalid::Widened(format!(
            "{} (it had {})",
            crate::grants::describe(&sh.capabilities),
            crate::grants::describe(expect.capabilities)
        )));
    }
    if let Some(bound) = expect.allowed_tools {
        match &parsed.meta.allowed_tools {
            None => return Err(Invalid::ToolsWidened("any tool (no allowed-tools)".into())),
            Some(list) => {
                let extra: Vec<&str> = list
                    .iter()
                    .filter(|t| !bound.contains(t))
                    .map(String::as_str)
                    .collect();
                if !extra.is_empty() {
                    return Err(Invalid::ToolsWidened(extra.join(", ")));
                }
            }
        }
    }
    if sh.handler.as_deref() != expect.handler {
        return Err(Invalid::HandlerChanged);
    }
    if raises(&sh.limits, &expect.limits) {
        return Err(Invalid::LimitsRaised);
    }
    Ok(())
}

/// Whether `new` asks for more than `old` on any limit (a limit `old`
/// leaves at the default may not be set at all).
fn raises(new: &LimitSpec, old: &LimitSpec) -> bool {
    fn more<T: PartialOrd>(new: Option<T>, old: Option<T>) -> bool {
        match (new, old) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(n), Some(o)) => n > o,
        }
    }
    more(new.memory_mb, old.memory_mb)
        || more(new.timeout_ms, old.timeout_ms)
        || more(new.output_kb, old.output_kb)
        || more(new.tables, old.tables)
        || more(new.table_elements, old.table_elements)
        || more(new.instances, old.instances)
}

/// Held while forge files change; every process of the workspace takes it.
#[derive(Debug)]
pub struct ForgeLock {
    _file: File,
}

/// Writes forged and improved skills of one workspace.
#[derive(Debug, Clone)]
pub struct SkillWriter {
    state_dir: PathBuf,
    forged_root: PathBuf,
    /// User and workspace roots: skills there may be improved.
    editable: Vec<PathBuf>,
}

impl SkillWriter {
    pub fn new(paths: &Paths) -> Self {
        let editable = paths
            .roots()
            .into_iter()
            .filter(|r| matches!(r.source, Source::User | Source::Workspace))
            .map(|r| r.dir)
            .collect();
        SkillWriter {
            state_dir: paths.state_dir(),
            forged_root: paths.forged_root(),
            editable,
        }
    }

    /// `.skillhost/skills/forged`.
    pub fn forged_root(&self) -> &Path {
        &self.forged_root
    }

    /// `.skillhost/forge`: the lock, saved versions and the attempt log.
    pub fn forge_dir(&self) -> PathBuf {
        self.state_dir.join("forge")
    }

    /// Waits for the workspace's forge lock.
    pub fn lock(&self) -> Result<ForgeLock, ForgeError> {
        let dir = self.forge_dir();
        fs::create_dir_all(&dir).map_err(ForgeError::io("create", &dir))?;
        let path = dir.join(LOCK_FILE);
        let file = crate::fsutil::lock_file(&path).map_err(ForgeError::io("lock", &path))?;
        Ok(ForgeLock { _file: file })
    }

    /// Writes the new forged skill `slug` (`forged/SLUG/SKILL.md`); an
    /// existing one is not replaced. `text` must name itself `slug`.
    pub fn create(
        &self,
        _lock: &ForgeLock,
        slug: &str,
        text: &str,
        expect: &Expect<'_>,
    ) -> Result<PathBuf, ForgeError> {
        logged(self.create_inner(slug, text, expect))
    }

    fn create_inner(
        &self,
        slug: &str,
        text: &str,
        expect: &Expect<'_>,
    ) -> Result<PathBuf, ForgeError> {
        check_slug(slug)?;
        if expect.name != slug {
            return Err(Invalid::NameChanged {
                expected: slug.to_owned(),
                found: expect.name.to_owned(),
            }
            .into());
        }
        let root = self.checked_forged_root()?;
        let dir = root.join(slug);
        let created = match fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_symlink() => return Err(ForgeError::Link(dir)),
            Ok(m) if !m.is_dir() => return Err(ForgeError::Exists(dir)),
            Ok(_) => false,
            Err(_) => {
                fs::create_dir(&dir).map_err(ForgeError::io("create", &dir))?;
                true
            }
        };
        let result = (|| {
            inside(&dir, &root)?;
            let target = dir.join(SKILL_FILE);
            if fs::symlink_metadata(&target).is_ok() {
                return Err(ForgeError::Exists(target));
            }
            write_validated(&dir, SKILL_FILE, text.as_bytes(), expect)?;
            Ok(target)
        })();
        if result.is_err() && created {
            let _ = fs::remove_dir(&dir);
        }
        result
    }

    /// Replaces the SKILL.md at `path` with `text`, if the file still holds
    /// `old` and `path` is a forged, user or workspace skill.
    pub fn replace(
        &self,
        _lock: &ForgeLock,
        path: &Path,
        old: &[u8],
        text: &str,
        expect: &Expect<'_>,
    ) -> Result<(), ForgeError> {
        logged(self.replace_inner(path, old, text, expect))
    }

    fn replace_inner(
        &self,
        path: &Path,
        old: &[u8],
        text: &str,
        expect: &Expect<'_>,
    ) -> Result<(), ForgeError> {
        check_slug(expect.name)?;
        let (dir, file) = self.editable_file(path)?;
        let current = fs::read(path).map_err(ForgeError::io("read", path))?;
        if current != old {
            return Err(ForgeError::Changed(path.to_path_buf()));
        }
        write_validated(&dir, &file, text.as_bytes(), expect)?;
        Ok(())
    }

    /// Removes the forged skill `slug` (eviction): its SKILL.md first, so
    /// the skill is gone in one step, then the rest of its folder.
    pub fn remove(&self, _lock: &ForgeLock, slug: &str) -> Result<(), ForgeError> {
        logged((|| {
            check_slug(slug)?;
            let root = self.checked_forged_root()?;
            let dir = root.join(slug);
            if fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(ForgeError::Link(dir));
            }
            inside(&dir, &root)?;
            let md = dir.join(SKILL_FILE);
            match fs::remove_file(&md) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(ForgeError::io("remove", &md)(e)),
            }
            sync_dir(&dir);
            fs::remove_dir_all(&dir).map_err(ForgeError::io("remove", &dir))
        })())
    }

    /// The forged skills on disk (folder names with a SKILL.md), sorted.
    pub fn forged_slugs(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(&self.forged_root) else {
            return Vec::new();
        };
        let mut out: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| {
                check_slug(n).is_ok() && self.forged_root.join(n).join(SKILL_FILE).is_file()
            })
            .collect();
        out.sort();
        out
    }

    /// The forged root, made if missing; refused when it, or a folder
    /// above it inside `.skillhost`, is a link that leads elsewhere.
    fn checked_forged_root(&self) -> Result<PathBuf, ForgeError> {
        if fs::symlink_metadata(&self.forged_root).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(ForgeError::Link(self.forged_root.clone()));
        }
        fs::create_dir_all(&self.forged_root)
            .map_err(ForgeError::io("create", &self.forged_root))?;
        let state = self
            .state_dir
            .canonicalize()
            .map_err(ForgeError::io("resolve", &self.state_dir))?;
        let expected = state.join("skills").join("forged");
        let real = self
            .forged_root
            .canonicalize()
            .map_err(ForgeError::io("resolve", &self.forged_root))?;
        if real != expected {
            return Err(ForgeError::OutsideRoot {
                path: real,
                root: expected,
            });
        }
        Ok(real)
    }

    /// The roots `path` (resolved: `real`) may be edited under: the
    /// forged root, checked, for a path in it; else the editable roots.
    fn roots_of(&self, path: &Path, real: &Path) -> Result<Vec<PathBuf>, ForgeError> {
        if path.starts_with(&self.forged_root) {
            return Ok(vec![self.checked_forged_root()?]);
        }
        let mut roots = Vec::new();
        let forged = self.forged_root.canonicalize().ok();
        for r in &self.editable {
            if let Ok(c) = r.canonicalize() {
                // The workspace root holds the forged one, which has
                // its own checks above.
                if forged.as_ref().is_some_and(|f| real.starts_with(f)) {
                    continue;
                }
                roots.push(c);
            }
        }
        Ok(roots)
    }

    /// The folder and file name of an editable skill's SKILL.md, after
    /// checking that it resolves inside the forged root or a user or
    /// workspace root and is no link.
    fn editable_file(&self, path: &Path) -> Result<(PathBuf, String), ForgeError> {
        if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(ForgeError::Link(path.to_path_buf()));
        }
        let real = path
            .canonicalize()
            .map_err(ForgeError::io("resolve", path))?;
        let roots = self.roots_of(path, &real)?;
        let Some(_) = roots.iter().find(|r| real.starts_with(r) && real != **r) else {
            return Err(ForgeError::OutsideRoot {
                path: real,
                root: self.forged_root.clone(),
            });
        };
        let dir = real
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| ForgeError::OutsideRoot {
                path: real.clone(),
                root: self.forged_root.clone(),
            })?;
        let file = real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| SKILL_FILE.to_owned());
        Ok((dir, file))
    }
}

/// A refused or failed write is logged where it happens, whoever called.
fn logged<T>(r: Result<T, ForgeError>) -> Result<T, ForgeError> {
    if let Err(e) = &r {
        match e {
            ForgeError::Invalid(_) => tracing::info!("forge: {e}"),
            _ => tracing::error!("forge: {e}"),
        }
    }
    r
}

/// `dir` resolves to `root/NAME`.
fn inside(dir: &Path, root: &Path) -> Result<(), ForgeError> {
    let real = dir.canonicalize().map_err(ForgeError::io("resolve", dir))?;
    if real.parent() != Some(root) {
        return Err(ForgeError::OutsideRoot {
            path: real,
            root: root.to_path_buf(),
        });
    }
    Ok(())
}

/// Temporary file → validate what is on disk → fsync → rename → fsync the
/// folder. Temporary files left by a killed process are removed first
/// (the caller holds the lock, so no live writer owns one).
fn write_validated(
    dir: &Path,
    file: &str,
    bytes: &[u8],
    expect: &Expect<'_>,
) -> Result<ParsedSkill, ForgeError> {
    remove_stale_temps(dir);
    let tmp = dir.join(format!("{TMP_PREFIX}{}-{}", std::process::id(), unique()));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(ForgeError::io("create", &tmp))?;
        let half = bytes.len() / 2;
        f.write_all(&bytes[..half])
            .map_err(ForgeError::io("write", &tmp))?;
        test_pause();
        f.write_all(&bytes[half..])
            .map_err(ForgeError::io("write", &tmp))?;
        let written = fs::read(&tmp).map_err(ForgeError::io("read", &tmp))?;
        let parsed = validate(&written, expect)?;
        f.sync_all().map_err(ForgeError::io("sync", &tmp))?;
        let target = dir.join(file);
        fs::rename(&tmp, &target).map_err(ForgeError::io("rename", &target))?;
        sync_dir(dir);
        Ok(parsed)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with(TMP_PREFIX) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Makes a rename in `dir` durable.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Widens the window between the two halves of a write, so a test can kill
/// the process inside it. Debug builds only.
fn test_pause() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("SKILLHOST_TEST_FORGE_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}
