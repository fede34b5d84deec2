//! Where skillhost keeps things: the user's home folder, the workspace and
//! the skill roots derived from them.

use std::path::{Path, PathBuf};

use crate::skill::{Root, Source};

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
}

impl Paths {
    /// Paths from the process environment: `SKILLHOST_HOME` or the home
    /// directory, and the current directory as the workspace.
    pub fn from_env(extra_skills: Vec<PathBuf>) -> std::io::Result<Self> {
        let workspace = std::env::current_dir()?;
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
        })
    }

    /// The workspace's state folder: store, rules, workspace config.
    pub fn state_dir(&self) -> PathBuf {
        self.workspace.join(".skillhost")
    }

    /// Cache of compiled components, shared by every workspace of this user.
    /// `$SKILLHOST_CACHE_DIR` moves it (tests share one across homes).
    pub fn cache_dir(&self) -> PathBuf {
        match &self.cache_override {
            Some(dir) => dir.clone(),
            None => self.home.join("cache"),
        }
    }

    /// Skill roots, lowest priority first.
    pub fn roots(&self) -> Vec<Root> {
        let mut roots = Vec::new();
        if let Some(b) = &self.bundled {
            roots.push(Root::new(b.clone(), Source::Bundled));
        }
        roots.push(Root::new(self.home.join("skills"), Source::User));
        roots.push(Root::new(
            self.workspace.join(".skillhost").join("skills"),
            Source::Workspace,
        ));
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

fn absolute(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}
