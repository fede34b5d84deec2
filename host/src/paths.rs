//! Where skillhost keeps things: the user's home folder, the workspace and
//! the skill roots derived from them.

use std::path::{Path, PathBuf};

use crate::skill::{Root, Source};

/// The configuration file, in the workspace and the user folder.
pub const CONFIG_FILE: &str = "skillhost.toml";

/// The staging folder's name inside the installed root.
pub const INSTALL_STAGING: &str = ".staging";

/// The folders one invocation works with. Built once at the edge (CLI, MCP)
/// and passed down, so library code never reads the environment itself.
#[derive(Debug, Clone)]
pub struct Paths {
    /// `$SKILLHOST_HOME`, else `~/.skillhost`: user skills, user config, caches.
    pub home: PathBuf,
    /// The workspace (the current directory): `.skillhost/` state lives here.
    pub workspace: PathBuf,
    /// Where the bundled skills are materialised (see `bundled`).
    pub bundled: Option<PathBuf>,
    /// `--skills DIR` roots, in the order given (later wins).
    pub extra_skills: Vec<PathBuf>,
    /// `$SKILLHOST_CACHE_DIR`, if set.
    pub cache_override: Option<PathBuf>,
    /// How the workspace was chosen, which decides how a command printed
    /// for the operator names it (see [`Paths::workspace_is_implicit`]).
    pub workspace_origin: WorkspaceOrigin,
}

/// How the workspace of an invocation was chosen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WorkspaceOrigin {
    /// The current folder of a command the operator typed.
    #[default]
    CurrentDir,
    /// Named (`--workspace DIR`), or the current folder of a process the
    /// operator did not start from their shell (a client-launched server).
    Named,
    /// `$SKILLHOST_HOME/workspace`: the working folder was not writable.
    Fallback,
}

/// Why the folders given to an invocation cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PathsError {
    #[error("cannot read the current folder")]
    CurrentDir(#[source] std::io::Error),
    #[error("--{flag} {}: no such folder", .dir.display())]
    NoSuchFolder { flag: &'static str, dir: PathBuf },
}

impl Paths {
    /// Paths from the process environment: `SKILLHOST_HOME` or the home
    /// directory, and `workspace` (else the current directory) as the
    /// workspace. A `--skills` or `--workspace` folder that does not exist
    /// is an error naming it: a mistyped folder would otherwise be an
    /// empty root, and a grant or run would silently go elsewhere.
    pub fn from_env(
        extra_skills: Vec<PathBuf>,
        workspace: Option<PathBuf>,
    ) -> Result<Self, PathsError> {
        let cwd = std::env::current_dir().map_err(PathsError::CurrentDir)?;
        // Relative to where they were typed, whatever the workspace, and
        // without `..`, so that commands printed with them read plainly.
        let extra_skills = extra_skills
            .iter()
            .map(|d| match absolute(&cwd, d).canonicalize() {
                Ok(dir) if dir.is_dir() => Ok(dir),
                _ => Err(PathsError::NoSuchFolder {
                    flag: "skills",
                    dir: d.clone(),
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (workspace, workspace_origin) = match workspace {
            Some(dir) => {
                let dir = absolute(&cwd, &dir);
                if !dir.is_dir() {
                    return Err(PathsError::NoSuchFolder {
                        flag: "workspace",
                        dir,
                    });
                }
                (dir, WorkspaceOrigin::Named)
            }
            None => (cwd, WorkspaceOrigin::CurrentDir),
        };
        let home = match std::env::var_os("SKILLHOST_HOME") {
            Some(h) if !h.is_empty() => PathBuf::from(h),
            _ => dirs::home_dir()
                .map(|h| h.join(".skillhost"))
                .unwrap_or_else(|| workspace.join(".skillhost-home")),
        };
        let cache_override = std::env::var_os("SKILLHOST_CACHE_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from);
        Ok(Paths {
            home,
            workspace,
            bundled: None,
            extra_skills,
            cache_override,
            workspace_origin,
        })
    }

    /// Whether a command printed for the operator may leave the workspace
    /// out: only when it is the folder their shell is in.
    pub fn workspace_is_implicit(&self) -> bool {
        self.workspace_origin == WorkspaceOrigin::CurrentDir
    }

    /// For a process the operator did not start from a shell (an MCP
    /// server launched by a desktop client, often in `/`): keeps the
    /// workspace when its state folder can be written, else moves it to
    /// `$SKILLHOST_HOME/workspace`, so runs are recorded and learned from.
    /// Returns why the working folder was left, for the log.
    /// A workspace named with `--workspace` is kept as it is.
    pub fn settle_server_workspace(&mut self) -> Option<String> {
        if self.workspace_origin != WorkspaceOrigin::CurrentDir {
            return None;
        }
        self.workspace_origin = WorkspaceOrigin::Named;
        let e = ensure_writable(&self.state_dir()).err()?;
        let fallback = self.home.join("workspace");
        let why = format!(
            "cannot write {} ({e}); runs, rules and workspace state are kept in {} (`skillhost --workspace {} runs list` shows them)",
            self.state_dir().display(),
            fallback.join(".skillhost").display(),
            fallback.display()
        );
        self.workspace = fallback;
        self.workspace_origin = WorkspaceOrigin::Fallback;
        Some(why)
    }

    /// The workspace's state folder: store, rules, workspace config.
    pub fn state_dir(&self) -> PathBuf {
        self.workspace.join(".skillhost")
    }

    /// The workspace's own skills: `.skillhost/skills`.
    pub fn workspace_skills(&self) -> PathBuf {
        self.state_dir().join("skills")
    }

    /// Where the forge writes skills: `.skillhost/skills/forged`, a root of
    /// its own (source `forged`) that the workspace root does not search.
    pub fn forged_root(&self) -> PathBuf {
        self.workspace_skills().join("forged")
    }

    /// Where installing a skill puts it: `$SKILLHOST_HOME/installed`, a
    /// root of its own (source `installed`, untrusted by default).
    pub fn installed_root(&self) -> PathBuf {
        self.home.join("installed")
    }

    /// Where an install unpacks and checks a skill before it is moved into
    /// the installed root: inside it (one file system, so the move is one
    /// rename) but never searched by the catalog.
    pub fn install_staging(&self) -> PathBuf {
        self.installed_root().join(INSTALL_STAGING)
    }

    /// Where handlers wait for the validation gate before they are moved
    /// into a skill: `.skillhost/quarantine/SKILL/HASH/` (see `gate`).
    pub fn quarantine_dir(&self) -> PathBuf {
        self.state_dir().join("quarantine")
    }

    /// Cache of compiled components, shared by every workspace of this user.
    /// `$SKILLHOST_CACHE_DIR` moves it (tests share one across homes).
    pub fn cache_dir(&self) -> PathBuf {
        match &self.cache_override {
            Some(dir) => dir.clone(),
            None => self.home.join("cache"),
        }
    }

    /// What the skill text audit found in texts it saw before
    /// (`audit::FindingsCache`).
    pub fn audit_cache(&self) -> PathBuf {
        self.cache_dir().join("audit-findings.json")
    }

    /// Skill roots, lowest priority first: a later root's skill replaces
    /// an earlier one of the same name, except that an installed skill
    /// never replaces one of another source (`Catalog::load`). So, highest
    /// first: `--skills`, workspace, user, forged, bundled, installed.
    pub fn roots(&self) -> Vec<Root> {
        let mut roots = Vec::new();
        if let Some(b) = &self.bundled {
            roots.push(Root::new(b.clone(), Source::Bundled));
        }
        // Forged skills come right after the bundled ones: every skill a
        // person wrote overrides one of the same name.
        roots.push(Root::new(self.forged_root(), Source::Forged));
        // Unfinished installs wait in `installed/.staging`, out of sight.
        // Where this root sits decides nothing for a name another source
        // has: an installed skill loses it wherever it sits.
        roots.push(
            Root::new(self.installed_root(), Source::Installed).skipping(self.install_staging()),
        );
        roots.push(Root::new(self.home.join("skills"), Source::User));
        roots.push(
            Root::new(self.workspace_skills(), Source::Workspace).skipping(self.forged_root()),
        );
        roots.push(Root::new(
            self.workspace.join(".agents").join("skills"),
            Source::Workspace,
        ));
        for dir in &self.extra_skills {
            roots.push(Root::new(absolute(&self.workspace, dir), Source::Path));
        }
        roots
    }
}

impl Paths {
    /// The host's own files and folders, which no grant may reach.
    pub fn control_paths(&self) -> ControlPaths {
        let mut private = vec![
            self.workspace.join(CONFIG_FILE),
            self.state_dir(),
            self.home.clone(),
            self.cache_dir(),
        ];
        private.extend(self.bundled.iter().cloned());
        ControlPaths {
            private: private.iter().map(|p| canonical_or_lexical(p)).collect(),
            skill_roots: self
                .roots()
                .iter()
                .map(|r| canonical_or_lexical(&r.dir))
                .collect(),
        }
    }
}

/// Which of the two configuration files an edit goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigFile {
    /// `$SKILLHOST_HOME/skillhost.toml`.
    User,
    /// `./skillhost.toml`.
    Workspace,
}

impl ConfigFile {
    pub fn path(self, paths: &Paths) -> PathBuf {
        match self {
            ConfigFile::User => user_file(paths),
            ConfigFile::Workspace => workspace_file(paths),
        }
    }
}

/// `$SKILLHOST_HOME/skillhost.toml`.
pub fn user_file(paths: &Paths) -> PathBuf {
    paths.home.join(CONFIG_FILE)
}

/// The workspace's `skillhost.toml`.
pub fn workspace_file(paths: &Paths) -> PathBuf {
    paths.workspace.join(CONFIG_FILE)
}

#[cfg(test)]
impl Paths {
    /// `dir/home` and the workspace `dir/ws`, nothing else.
    pub(crate) fn under(dir: &Path) -> Paths {
        Paths {
            home: dir.join("home"),
            workspace: dir.join("ws"),
            bundled: None,
            extra_skills: vec![],
            cache_override: None,
            workspace_origin: WorkspaceOrigin::CurrentDir,
        }
    }
}

/// Creates `dir` if needed and checks that a file can be made in it.
pub fn ensure_writable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".write-probe-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}

/// The host's control paths: its config files, its state, its cache, its
/// home and every skill root. A file grant that would reach one (inside
/// it, or covering it) is refused, whatever the grant says, so a handler
/// can neither rewrite the host's configuration or skills nor read its
/// records. The one exception is the calling skill's own folder inside its
/// root, minus its `SKILL.md` and handler for writing.
#[derive(Debug, Clone, Default)]
pub struct ControlPaths {
    /// Never readable or writable through a grant, nor covered by one.
    pub private: Vec<PathBuf>,
    /// Skill roots: only the calling skill's own folder is reachable.
    pub skill_roots: Vec<PathBuf>,
}

/// The calling skill, for [`ControlPaths::check`].
#[derive(Debug, Clone, Copy)]
pub struct OwnSkill<'a> {
    pub dir: &'a Path,
    /// Files of the skill that define it (SKILL.md, the handler).
    pub defining_files: &'a [PathBuf],
}

/// Why a grant may not open a folder: the control path in the way.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlPathDenied {
    #[error(
        "it covers skillhost's own {}; grant a folder that does not contain it",
        .0.display()
    )]
    Covers(PathBuf),
    #[error(
        "it contains {}, which defines the skill; grant a subfolder for writing",
        .0.display()
    )]
    DefinesSkill(PathBuf),
    #[error("it is inside skillhost's own {}", .0.display())]
    Inside(PathBuf),
}

impl ControlPaths {
    /// Whether a grant may open `dir` (a canonical path), for reading or
    /// also writing. The error says which control path is in the way.
    pub fn check(
        &self,
        dir: &Path,
        own: Option<OwnSkill<'_>>,
        write: bool,
    ) -> Result<(), ControlPathDenied> {
        let covers = |p: &Path| p.starts_with(dir);
        for p in self.private.iter().chain(&self.skill_roots) {
            if covers(p) {
                return Err(ControlPathDenied::Covers(p.clone()));
            }
        }
        let own_dir = own.map(|o| canonical_or_lexical(o.dir));
        if let (Some(o), Some(own_dir)) = (own, &own_dir)
            && dir.starts_with(own_dir)
        {
            if write {
                for f in o.defining_files {
                    let f = canonical_or_lexical(f);
                    if f.starts_with(dir) {
                        return Err(ControlPathDenied::DefinesSkill(f));
                    }
                }
            }
            return Ok(());
        }
        for p in self.private.iter().chain(&self.skill_roots) {
            if dir.starts_with(p) {
                return Err(ControlPathDenied::Inside(p.clone()));
            }
        }
        Ok(())
    }
}

/// `p` with symlinks resolved as far as it exists, the rest appended, so
/// that it compares with canonical grant folders.
pub fn canonical_or_lexical(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let mut rest = Vec::new();
    let mut cur = p;
    while let Some(parent) = cur.parent() {
        if let Some(name) = cur.file_name() {
            rest.push(name.to_owned());
        }
        if let Ok(c) = parent.canonicalize() {
            let mut out = c;
            for n in rest.iter().rev() {
                out.push(n);
            }
            return out;
        }
        cur = parent;
    }
    p.to_path_buf()
}

fn absolute(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_keeps_a_writable_workspace_and_leaves_one_it_cannot_write() {
        let d = tempfile::tempdir().expect("tempdir");
        let mut writable = Paths::under(d.path());
        assert_eq!(writable.settle_server_workspace(), None);
        assert_eq!(writable.workspace, d.path().join("ws"));
        assert!(
            !writable.workspace_is_implicit(),
            "named in printed commands"
        );

        // `.skillhost` taken by a file: not writable, even for root.
        let mut blocked = Paths::under(d.path());
        std::fs::remove_dir_all(blocked.state_dir()).expect("rm");
        std::fs::write(blocked.state_dir(), "in the way").expect("write");
        let why = blocked.settle_server_workspace().expect("moved");
        assert_eq!(blocked.workspace, blocked.home.join("workspace"));
        assert_eq!(blocked.workspace_origin, WorkspaceOrigin::Fallback);
        assert!(
            why.contains("cannot write") && why.contains("--workspace"),
            "{why}"
        );

        // A workspace named with --workspace is kept, writable or not.
        let mut named = Paths::under(d.path());
        named.workspace_origin = WorkspaceOrigin::Named;
        assert_eq!(named.settle_server_workspace(), None);
        assert_eq!(named.workspace, d.path().join("ws"));
    }
}
