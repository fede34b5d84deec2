//! The `skillhost skills grant` command a notice tells the operator to run.
//! It has to work as printed, from the operator's shell: the same skill
//! must be found (its `--skills` root, its workspace) and the grant must
//! land in a file this process reads (see [`GrantFile`]).

use std::path::Path;

use crate::grants::file_grants;
use crate::paths::{ConfigFile, Paths, WorkspaceOrigin, user_file, workspace_file};
use crate::skill::{Skill, Source};

/// Whether the skill's grant, if any, is stale: a renewal goes where the
/// old grant is, so that it replaces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantFile {
    /// A new grant: the workspace's file, unless the workspace is the
    /// fallback a client-launched server uses, whose operator grants with
    /// `--user` (docs/mcp.md).
    New,
    /// Renew the grant where it is written.
    Renew,
}

/// `skillhost [--workspace WS] skills grant NAME [--skills ROOT] [--user] [EXTRA]`.
pub fn grant_command(paths: &Paths, skill: &Skill, which: GrantFile, extra: &[&str]) -> String {
    let file = match which {
        GrantFile::Renew if file_grants(&workspace_file(paths), &skill.name).unwrap_or(false) => {
            ConfigFile::Workspace
        }
        GrantFile::Renew if file_grants(&user_file(paths), &skill.name).unwrap_or(false) => {
            ConfigFile::User
        }
        _ if paths.workspace_origin == WorkspaceOrigin::Fallback => ConfigFile::User,
        _ => ConfigFile::Workspace,
    };
    let found_in_workspace = matches!(skill.source, Source::Workspace | Source::Forged);
    let mut words: Vec<String> = vec!["skillhost".into()];
    if !paths.workspace_is_implicit() && (file == ConfigFile::Workspace || found_in_workspace) {
        words.push("--workspace".into());
        words.push(shell_quote(&paths.workspace.to_string_lossy()));
    }
    words.extend(["skills".into(), "grant".into(), shell_quote(&skill.name)]);
    if skill.source == Source::Path
        && let Some(root) = path_root(paths, &skill.dir)
    {
        words.push("--skills".into());
        words.push(shell_quote(&root.to_string_lossy()));
    }
    if file == ConfigFile::User {
        words.push("--user".into());
    }
    words.extend(extra.iter().map(|w| (*w).to_owned()));
    words.join(" ")
}

/// The `--skills` root the skill in `dir` was loaded from: the deepest
/// one that holds it (a root may sit inside another).
fn path_root(paths: &Paths, dir: &Path) -> Option<std::path::PathBuf> {
    paths
        .roots()
        .into_iter()
        .filter(|r| r.source == Source::Path && dir.starts_with(&r.dir))
        .map(|r| r.dir)
        .max_by_key(|d| d.components().count())
}

/// `word` as one shell word: as it is when it has nothing a shell would
/// split or expand, else in single quotes.
pub fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:=@,%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::{Catalog, LoadOptions};

    fn skill_in(paths: &Paths, root: &Path, name: &str) -> Skill {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: D.\n---\nBody.\n"),
        )
        .expect("write");
        let catalog = Catalog::load(&paths.roots(), &LoadOptions::default());
        catalog.get(name).expect("loads").clone()
    }

    #[test]
    fn a_skill_from_a_skills_root_is_granted_with_that_root() {
        let d = tempfile::tempdir().expect("tempdir");
        let mut paths = Paths::under(d.path());
        let root = d.path().join("my skills");
        paths.extra_skills = vec![root.clone()];
        let skill = skill_in(&paths, &root, "mailer");
        let cmd = grant_command(&paths, &skill, GrantFile::New, &[]);
        assert_eq!(
            cmd,
            format!(
                "skillhost skills grant mailer --skills '{}'",
                root.display()
            )
        );
    }

    #[test]
    fn a_fallback_workspace_is_granted_for_the_user() {
        let d = tempfile::tempdir().expect("tempdir");
        let mut paths = Paths::under(d.path());
        paths.workspace_origin = WorkspaceOrigin::Fallback;
        let skill = skill_in(&paths, &paths.home.join("skills"), "mailer");
        let cmd = grant_command(&paths, &skill, GrantFile::New, &["--limits"]);
        assert_eq!(cmd, "skillhost skills grant mailer --user --limits");
    }

    #[test]
    fn a_named_workspace_is_named_in_the_command() {
        let d = tempfile::tempdir().expect("tempdir");
        let mut paths = Paths::under(d.path());
        paths.workspace_origin = WorkspaceOrigin::Named;
        let skill = skill_in(&paths, &paths.workspace_skills(), "mailer");
        let cmd = grant_command(&paths, &skill, GrantFile::New, &[]);
        assert_eq!(
            cmd,
            format!(
                "skillhost --workspace {} skills grant mailer",
                paths.workspace.display()
            )
        );
    }

    #[test]
    fn a_renewal_goes_to_the_file_that_holds_the_grant() {
        let d = tempfile::tempdir().expect("tempdir");
        let paths = Paths::under(d.path());
        let skill = skill_in(&paths, &paths.home.join("skills"), "mailer");
        std::fs::write(
            user_file(&paths),
            "[grants.mailer]\npin = \"sha256:old\"\nkv = true\n",
        )
        .expect("write");
        let cmd = grant_command(&paths, &skill, GrantFile::Renew, &[]);
        assert_eq!(cmd, "skillhost skills grant mailer --user");
        let new = grant_command(&paths, &skill, GrantFile::New, &[]);
        assert_eq!(new, "skillhost skills grant mailer");
    }

    #[test]
    fn words_a_shell_would_split_are_quoted() {
        assert_eq!(shell_quote("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
        assert_eq!(shell_quote(""), "''");
    }
}
