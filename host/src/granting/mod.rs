//! The operator's grants: the edits (`skillhost skills grant|revoke`),
//! each pinned to the skill's fingerprint ([`Skill::pin`]), and the grant
//! command a notice tells the operator to run ([`grant_command`]). What
//! is granted is decided in `grants`, which writes it into a
//! skillhost.toml ([`write_grant`]); a workspace grant goes to the store
//! the hosts share instead, when there is one ([`write_shared_grant`]).
//!
//! [`Skill::pin`]: crate::skill::Skill::pin

mod command;

use std::path::PathBuf;

use crate::grants::{Grant, GrantFileError, GrantRequest, file_grants, grant_for, write_grant};
use crate::paths::{ConfigFile, Paths};
use crate::shared::grants::{SharedGrantsError, write_shared_grant};
use crate::skill::{Capabilities, Catalog, TreeError};
use crate::store::RunStore;

pub use command::{GrantFile, grant_command, shell_quote};

#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    #[error(
        "no skill named `{0}`; see `skillhost skills list` (a skill loaded with `--skills DIR` needs the same `--skills DIR` here)"
    )]
    UnknownSkill(String),
    #[error("cannot pin skill `{skill}` to a grant")]
    Unreadable {
        skill: String,
        #[source]
        source: TreeError,
    },
    #[error("skill `{0}` has no grant to revoke")]
    NoGrant(String),
    #[error("skill `{name}` is not granted in {asked}, but in {granted_in}: revoke it there{hint}")]
    GrantedElsewhere {
        name: String,
        asked: PathBuf,
        granted_in: PathBuf,
        hint: &'static str,
    },
    #[error(transparent)]
    File(#[from] GrantFileError),
    #[error(transparent)]
    Shared(#[from] SharedGrantsError),
}

/// Where a grant was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantedIn {
    File(PathBuf),
    /// The store the hosts share (its location, for messages).
    Shared(String),
}

impl std::fmt::Display for GrantedIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GrantedIn::File(path) => write!(f, "{}", path.display()),
            GrantedIn::Shared(location) => write!(f, "the store shared by the hosts ({location})"),
        }
    }
}

/// A grant as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    pub skill: String,
    pub grant: Grant,
    /// Where it was written.
    pub written_to: GrantedIn,
    /// What a run will get, when that is less than what was granted.
    pub narrowed: Option<Capabilities>,
}

/// Grants the skill `name` what `request` asks (see [`grant_for`]), pinned
/// to its current fingerprint (every file of its folder a run can read,
/// see `Skill::pin`: an edit of any of them voids the grant), in
/// `file`; the file keeps everything else.
/// A workspace grant goes to the store instead when the hosts share one
/// (`shared`), so that every host applies it.
pub fn grant(
    paths: &Paths,
    catalog: &Catalog,
    name: &str,
    request: &GrantRequest,
    file: ConfigFile,
    shared: Option<&dyn RunStore>,
) -> Result<Granted, GrantError> {
    let skill = catalog
        .get(name)
        .ok_or_else(|| GrantError::UnknownSkill(name.to_owned()))?;
    let pin = skill.pin().map_err(|source| GrantError::Unreadable {
        skill: skill.name.clone(),
        source,
    })?;
    let declared = &skill.meta.skillhost;
    let (grant, narrowed) = grant_for(&declared.capabilities, &declared.limits, request, pin);
    let written_to = match shared_for(file, shared) {
        Some((state, location)) => {
            write_shared_grant(state, &skill.name, Some(&grant))?;
            GrantedIn::Shared(location)
        }
        None => {
            let path = file.path(paths);
            write_grant(&path, &skill.name, Some(&grant))?;
            GrantedIn::File(path)
        }
    };
    Ok(Granted {
        skill: skill.name.clone(),
        grant,
        written_to,
        narrowed,
    })
}

/// The shared state a grant in `file` goes to, if the hosts share a store:
/// only the workspace's grants are shared; a user's stay in their file.
fn shared_for(
    file: ConfigFile,
    store: Option<&dyn RunStore>,
) -> Option<(&dyn crate::store::SharedState, String)> {
    let store = store?;
    match (file, store.shared()) {
        (ConfigFile::Workspace, Some(state)) => Some((state, store.location())),
        _ => None,
    }
}

/// Removes the grant of `name` from `file` (or from the store the hosts
/// share, where a workspace grant is); returns where. Refused when
/// `file` does not grant it, naming the other file when that one does: a
/// "revoked" while the grant still holds would mislead the operator.
pub fn revoke(
    paths: &Paths,
    name: &str,
    file: ConfigFile,
    shared: Option<&dyn RunStore>,
) -> Result<GrantedIn, GrantError> {
    if let Some((state, location)) = shared_for(file, shared)
        && write_shared_grant(state, name, None)?
    {
        return Ok(GrantedIn::Shared(location));
    }
    let path = file.path(paths);
    if !file_grants(&path, name)? {
        let (other, hint) = match file {
            ConfigFile::Workspace => (ConfigFile::User, " (with --user)"),
            ConfigFile::User => (ConfigFile::Workspace, " (without --user)"),
        };
        let granted_in = other.path(paths);
        if file_grants(&granted_in, name)? {
            return Err(GrantError::GrantedElsewhere {
                name: name.to_owned(),
                asked: path,
                granted_in,
                hint,
            });
        }
        return Err(GrantError::NoGrant(name.to_owned()));
    }
    write_grant(&path, name, None)?;
    Ok(GrantedIn::File(path))
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::*;
    use crate::config::Config;
    use crate::paths::{user_file, workspace_file};
    use crate::skill::LoadOptions;

    /// A workspace with one skill, `mailer`, declaring `llm` and a limit.
    fn workspace(dir: &Path) -> (Paths, Catalog) {
        let p = Paths::under(dir);
        let skill = p.workspace.join(".skillhost/skills/mailer");
        fs::create_dir_all(&skill).expect("mkdir");
        fs::write(
            skill.join("SKILL.md"),
            "---\nname: mailer\ndescription: Writes mail.\nmetadata:\n  skillhost:\n    capabilities:\n      llm: true\n    limits:\n      memory_mb: 256\n---\nWrite it.\n",
        )
        .expect("write SKILL.md");
        let catalog = Catalog::load(&p.roots(), &LoadOptions::default());
        (p, catalog)
    }

    fn grant_everything(p: &Paths, catalog: &Catalog, name: &str) -> Result<Granted, GrantError> {
        let request = GrantRequest::default();
        grant(p, catalog, name, &request, ConfigFile::Workspace, None)
    }

    #[test]
    fn grant_pins_what_the_skill_declares_and_revoke_removes_it() {
        let d = tempfile::tempdir().expect("tempdir");
        let (p, catalog) = workspace(d.path());
        let g = grant_everything(&p, &catalog, "mailer").expect("grant");
        assert_eq!(g.written_to, GrantedIn::File(workspace_file(&p)));
        assert!(g.grant.capabilities.llm, "{g:?}");
        assert_eq!(g.grant.limits.memory_mb, Some(256));
        assert!(g.grant.pin.starts_with("sha256:"), "{}", g.grant.pin);
        assert_eq!(Config::load(&p).expect("load").grants["mailer"], g.grant);

        assert_eq!(
            revoke(&p, "mailer", ConfigFile::Workspace, None).expect("revoke"),
            GrantedIn::File(workspace_file(&p))
        );
        assert!(Config::load(&p).expect("load").grants.is_empty());
        let e = revoke(&p, "mailer", ConfigFile::Workspace, None).expect_err("nothing left");
        assert_eq!(e.to_string(), "skill `mailer` has no grant to revoke");
    }

    #[test]
    fn revoking_from_the_file_that_lacks_the_grant_names_the_one_that_has_it() {
        let d = tempfile::tempdir().expect("tempdir");
        let (p, catalog) = workspace(d.path());
        let request = GrantRequest::default();
        grant(&p, &catalog, "mailer", &request, ConfigFile::User, None).expect("grant");
        let e = revoke(&p, "mailer", ConfigFile::Workspace, None).expect_err("not in this file");
        assert!(matches!(e, GrantError::GrantedElsewhere { .. }), "{e}");
        assert!(e.to_string().contains("with --user"), "{e}");
        // Nothing was removed: the grant still holds.
        assert!(
            Config::load(&p)
                .expect("load")
                .grants
                .contains_key("mailer")
        );
        revoke(&p, "mailer", ConfigFile::User, None).expect("revoke where it is");
        assert!(Config::load(&p).expect("load").grants.is_empty());
    }

    #[test]
    fn a_grant_beyond_the_declaration_says_what_a_run_gets() {
        let d = tempfile::tempdir().expect("tempdir");
        let (p, catalog) = workspace(d.path());
        let request = GrantRequest {
            capabilities: Capabilities {
                llm: true,
                kv: true,
                ..Capabilities::default()
            },
            limits: false,
        };
        let g = grant(&p, &catalog, "mailer", &request, ConfigFile::User, None).expect("grant");
        assert_eq!(g.written_to, GrantedIn::File(user_file(&p)));
        assert!(g.grant.capabilities.kv, "written as asked");
        let gets = g.narrowed.expect("kv is not declared");
        assert!(gets.llm && !gets.kv, "{gets:?}");
    }

    #[test]
    fn an_unknown_skill_is_refused_before_anything_is_written() {
        let d = tempfile::tempdir().expect("tempdir");
        let (p, catalog) = workspace(d.path());
        let e = grant_everything(&p, &catalog, "nope").expect_err("unknown");
        assert_eq!(
            e.to_string(),
            "no skill named `nope`; see `skillhost skills list` (a skill loaded with `--skills DIR` needs the same `--skills DIR` here)"
        );
        assert!(!workspace_file(&p).exists());
    }
}
