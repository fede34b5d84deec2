//! The operator's edits of the rules (`skillhost rules enable|disable|
//! remove|restore`): read, edit and write under the rules' lock, as a run's
//! statistics are, so neither loses the other's change.

use std::path::Path;

use super::book::RulesAt;
use super::rules::{RuleSet, RulesError};

/// What the operator does to one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleEdit {
    /// Enabled, overriding a failed replay or a disabling by statistics.
    Enable,
    Disable,
    /// Out of force and never learned again: the rule is kept as a
    /// tombstone (see [`Rule::removed`](super::rules::Rule::removed)).
    Remove,
    /// Undoes `Remove`: the rule is back in the state it was removed in.
    Restore,
}

#[derive(Debug, thiserror::Error)]
pub enum RuleEditError {
    #[error("no rule `{0}`; see `skillhost rules list`")]
    NoSuchRule(String),
    #[error("rule `{0}` is a rejected proposal with no conditions; remove it instead")]
    NothingToEnable(String),
    #[error("rule `{0}` is removed; `skillhost rules restore {0}` first")]
    Removed(String),
    #[error("rule `{0}` is already removed")]
    AlreadyRemoved(String),
    #[error("rule `{0}` is not removed; nothing to restore")]
    NotRemoved(String),
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
            RuleEdit::Enable | RuleEdit::Disable if rule.removed => {
                return Err(RuleEditError::Removed(id.to_owned()));
            }
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
            RuleEdit::Remove if rule.removed => {
                return Err(RuleEditError::AlreadyRemoved(id.to_owned()));
            }
            RuleEdit::Remove => rule.removed = true,
            RuleEdit::Restore if !rule.removed => {
                return Err(RuleEditError::NotRemoved(id.to_owned()));
            }
            RuleEdit::Restore => rule.removed = false,
        }
        Ok(())
    }
}

/// Applies `edit` to the rule `id` of the rules file at `path`.
pub fn edit_rule(path: &Path, id: &str, edit: RuleEdit) -> Result<(), RuleEditError> {
    edit_rule_at(RulesAt::File(path), id, edit)
}

/// Applies `edit` to the rule `id` of the rules `at`.
pub fn edit_rule_at(at: RulesAt<'_>, id: &str, edit: RuleEdit) -> Result<(), RuleEditError> {
    at.update(|set| set.edit(id, edit).map(|()| ((), true)))?;
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
        let set = RuleSet::load(&path).expect("load");
        let active: Vec<String> = set.active().0.into_iter().map(|a| a.rule.id).collect();
        assert_eq!(active, ["a"], "a removed rule is out of force");
        assert!(
            set.get("b").is_some_and(|b| b.removed),
            "kept as a tombstone"
        );
        let e = edit_rule(&path, "b", RuleEdit::Remove).expect_err("gone");
        assert_eq!(e.to_string(), "rule `b` is already removed");
        let e = edit_rule(&path, "b", RuleEdit::Enable).expect_err("removed");
        assert_eq!(
            e.to_string(),
            "rule `b` is removed; `skillhost rules restore b` first"
        );
        edit_rule(&path, "b", RuleEdit::Restore).expect("restore");
        assert_eq!(RuleSet::load(&path).expect("load").active().0.len(), 2);
        let e = edit_rule(&path, "b", RuleEdit::Restore).expect_err("in force");
        assert_eq!(e.to_string(), "rule `b` is not removed; nothing to restore");
        let e = edit_rule(&path, "c", RuleEdit::Remove).expect_err("no such rule");
        assert_eq!(e.to_string(), "no rule `c`; see `skillhost rules list`");
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
