//! The operator's edits of `rules.json` (`skillhost rules enable|disable|
//! remove`): read, edit and write under the file's lock, as a run's
//! statistics are, so neither loses the other's change.

use std::path::Path;

use super::lock;
use super::rules::{RuleSet, RulesError};

/// What the operator does to one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleEdit {
    /// Enabled, overriding a failed replay or a disabling by statistics.
    Enable,
    Disable,
    Remove,
}

#[derive(Debug, thiserror::Error)]
pub enum RuleEditError {
    #[error("no rule `{0}`; see `skillhost rules list`")]
    NoSuchRule(String),
    #[error("rule `{0}` is a rejected proposal with no conditions; remove it instead")]
    NothingToEnable(String),
    #[error(transparent)]
    Rules(#[from] RulesError),
}

impl RuleSet {
    /// Applies `edit` to the rule `id`.
    pub fn edit(&mut self, id: &str, edit: RuleEdit) -> Result<(), RuleEditError> {
        let Some(rule) = self.get_mut(id) else {
            return Err(RuleEditError::NoSuchRule(id.to_owned()));
        };
        match edit {
            RuleEdit::Enable => {
                // The record of a model answer that was no rule at all: it
                // has nothing to apply, and no condition would hold it back.
                if rule.rejected && rule.conditions.is_empty() {
                    return Err(RuleEditError::NothingToEnable(id.to_owned()));
                }
                // The operator overrides a failed replay knowingly.
                rule.rejected = false;
                rule.enabled = true;
                rule.disabled_reason = None;
            }
            RuleEdit::Disable => {
                rule.enabled = false;
                rule.disabled_reason = Some("disabled by the operator".into());
            }
            RuleEdit::Remove => self.rules.retain(|r| r.id != id),
        }
        Ok(())
    }
}

/// Applies `edit` to the rule `id` of the rules file at `path`.
pub fn edit_rule(path: &Path, id: &str, edit: RuleEdit) -> Result<(), RuleEditError> {
    let _lock = lock(path);
    let mut set = RuleSet::load(path)?;
    set.edit(id, edit)?;
    set.save(path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::rules::{Kind, RULES_FILE, tests::rule};

    #[test]
    fn enable_disable_and_remove_persist() {
        let d = tempfile::tempdir().expect("tempdir");
        let path = d.path().join("learning").join(RULES_FILE);
        let mut set = RuleSet::default();
        set.insert(rule("a", Kind::Prevention));
        set.insert(rule("b", Kind::Validation));
        set.save(&path).expect("save");

        edit_rule(&path, "a", RuleEdit::Disable).expect("disable");
        let a = RuleSet::load(&path).expect("load").rules[0].clone();
        assert!(!a.enabled);
        assert_eq!(
            a.disabled_reason.as_deref(),
            Some("disabled by the operator")
        );

        edit_rule(&path, "a", RuleEdit::Enable).expect("enable");
        let a = RuleSet::load(&path).expect("load").rules[0].clone();
        assert!(a.enabled && a.disabled_reason.is_none());

        edit_rule(&path, "b", RuleEdit::Remove).expect("remove");
        let ids: Vec<String> = RuleSet::load(&path)
            .expect("load")
            .rules
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, ["a"]);
        let e = edit_rule(&path, "b", RuleEdit::Remove).expect_err("gone");
        assert_eq!(e.to_string(), "no rule `b`; see `skillhost rules list`");
    }

    #[test]
    fn a_rejected_proposal_is_enabled_only_when_it_has_conditions() {
        let mut set = RuleSet::default();
        let mut failed_replay = rule("replayed", Kind::Prevention);
        failed_replay.rejected = true;
        failed_replay.enabled = false;
        let mut no_rule = failed_replay.clone();
        no_rule.id = "empty".into();
        no_rule.conditions.clear();
        set.insert(failed_replay);
        set.insert(no_rule);

        set.edit("replayed", RuleEdit::Enable).expect("override");
        let r = set.get("replayed").expect("rule");
        assert!(r.enabled && !r.rejected);

        let e = set
            .edit("empty", RuleEdit::Enable)
            .expect_err("nothing to enable");
        assert_eq!(
            e.to_string(),
            "rule `empty` is a rejected proposal with no conditions; remove it instead"
        );
        let r = set.get("empty").expect("rule");
        assert!(r.rejected && !r.enabled, "left as it was");
    }
}
