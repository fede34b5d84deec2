//! Forge: skills that grow from runs and improve in place.
//!
//! - `writer`: the one path every forged or improved SKILL.md takes to
//!   disk (slug and path checks, validation, atomic replace, a lock shared
//!   by every process of the workspace).
//! - `create`: a skill drafted from a successful run (a pipeline when the
//!   tool sequence replays, else a written procedure), near-duplicates
//!   skipped, the least recently used forged skill evicted past the cap.
//! - `improve`: a model's proposed SKILL.md, validated, with an audit
//!   trail in the front matter and a cooldown per skill.
//! - `history`: previous versions and the log of attempts; rollback.
//! - `mine`: contiguous tool sequences that recur across recorded runs.
//! - `handler`: handlers written by a model: the request, the source
//!   checked before it builds, the build (in a box, time limit), and
//!   admitting a gated artifact into its skill.
//! - `buildbox` (in `toolchain`, re-exported here): the bubblewrap box
//!   that build runs in and the filter its compiler diagnostics pass.
//!
//! See docs/forge.md. The exec stage calls into this off the request
//! path (the run writer's thread).

pub use crate::toolchain::buildbox;
pub mod after_runs;
pub mod create;
pub mod handler;
pub mod history;
pub mod improve;
pub mod mine;
pub mod writer;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use create::{CreateOutcome, Draft};
pub use improve::ImproveOutcome;
pub use writer::{ForgeLock, Invalid, SkillWriter, check_slug};

/// `[forge]` in skillhost.toml.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ForgeConfig {
    pub create: CreateConfig,
    pub improve: ImproveConfig,
    pub mine: mine::MineConfig,
    pub handler: handler::HandlerConfig,
}

/// `[forge.create]`: new skills from successful runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CreateConfig {
    pub enabled: bool,
    /// Successful tool calls a run needs before it becomes a skill.
    pub min_tool_calls: usize,
    /// Above this similarity (0 to 1) to an existing skill, a draft is
    /// a near-duplicate and skipped (see `create::similarity`).
    #[serde(deserialize_with = "crate::types::share")]
    pub similarity: f64,
    /// Forged skills kept; past it the least recently used one goes.
    pub max_skills: usize,
}

impl Default for CreateConfig {
    fn default() -> Self {
        CreateConfig {
            enabled: true,
            min_tool_calls: 3,
            similarity: 0.85,
            max_skills: 50,
        }
    }
}

/// `[forge.improve]`: a model's improvements of a skill after it was used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ImproveConfig {
    pub enabled: bool,
    /// One attempt per skill per this many seconds.
    pub cooldown_secs: u64,
}

impl Default for ImproveConfig {
    fn default() -> Self {
        ImproveConfig {
            enabled: true,
            cooldown_secs: 3600,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    #[error("`{0}` is not a skill name the forge writes: use 1 to 64 of a-z, 0-9, `_` and `-`")]
    BadSlug(String),
    #[error("{path} resolves outside {root}: nothing written")]
    OutsideRoot { path: PathBuf, root: PathBuf },
    #[error("{0} is a symbolic link: nothing written")]
    Link(PathBuf),
    #[error("a skill already exists at {0}")]
    Exists(PathBuf),
    #[error("skill `{name}` is a {kind} skill: the forge never writes it")]
    NotEditable {
        name: String,
        kind: crate::skill::Source,
    },
    #[error("{0} changed while it was being rewritten: nothing written")]
    Changed(PathBuf),
    #[error("the proposed SKILL.md is refused: {0}")]
    Invalid(#[from] Invalid),
    #[error("no skill named `{0}`")]
    UnknownSkill(String),
    #[error("skill `{name}` has no saved version {version}; see `skillhost skills history {name}`")]
    UnknownVersion { name: String, version: u32 },
    #[error("cannot {action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl ForgeError {
    pub(crate) fn io(
        action: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| ForgeError::Io {
            action,
            path,
            source,
        }
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `secs` (since the Unix epoch) as RFC 3339 in UTC (`2025-01-31T12:00:00Z`).
pub fn rfc3339(secs: i64) -> String {
    let t = crate::types::UtcTime::from_unix(secs);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_of_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_735_689_599), "2024-12-31T23:59:59Z");
    }

    #[test]
    fn config_defaults_and_bad_share() {
        let c = ForgeConfig::default();
        assert_eq!(c.create.min_tool_calls, 3);
        assert_eq!(c.create.similarity, 0.85);
        assert_eq!(c.improve.cooldown_secs, 3600);
        let e = toml::from_str::<ForgeConfig>("[create]\nsimilarity = 85\n")
            .expect_err("not a share")
            .to_string();
        assert!(e.contains("not a share"), "{e}");
    }
}
