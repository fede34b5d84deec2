//! A learning cycle: failures grouped by (skill, class), frequent ones
//! matched against the pattern library and turned into rules. Rule ids are
//! derived from (kind, class, scope), so a cycle never duplicates a rule.

use serde::Serialize;

use super::patterns::{Library, Pattern, Stage};
use super::rules::{Kind, Origin, Rule, RuleSet};
use crate::store::{FailureGroup, RunLog, SharedStore};

/// When a group of failures is worth a rule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// At least this many failures of the class.
    pub min_failures: u64,
    /// And at least this share of the skill's runs.
    #[serde(deserialize_with = "super::share")]
    pub min_frequency: f64,
    /// Over this many most recent runs.
    pub window: usize,
}

impl Default for Thresholds {
    fn default() -> Self {
        // One failure is enough when a pattern backs the class: the pattern
        // is the knowledge, the failure shows it applies here, and a rule
        // that does not help disables itself.
        Thresholds {
            min_failures: 1,
            min_frequency: 0.01,
            window: 5_000,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct GroupReport {
    pub skill: String,
    pub class: String,
    /// Failed runs, or failing tool steps when `tool_error`.
    pub failures: u64,
    /// Runs that failed, or had a failing tool step.
    pub runs_affected: u64,
    pub runs: u64,
    /// A tool step's error inside runs, which may still have succeeded.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tool_error: bool,
    pub outcome: String,
    pub rules_added: Vec<String>,
    /// Above the thresholds, but no pattern knows the class: a candidate
    /// for a model proposal.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_pattern: bool,
}

impl GroupReport {
    /// A group's figures, its outcome still to write.
    fn of(g: &FailureGroup) -> GroupReport {
        GroupReport {
            skill: g.skill.clone(),
            class: g.class.clone(),
            failures: g.count,
            runs_affected: g.runs_affected,
            runs: g.runs,
            tool_error: g.tool_error,
            outcome: String::new(),
            rules_added: Vec::new(),
            no_pattern: false,
        }
    }

    /// What happened, in words that do not call a run failed when only a
    /// tool step inside it did.
    pub fn summary(&self) -> String {
        let of = |n: u64| {
            format!(
                "{n} of {} run{}",
                self.runs,
                if self.runs == 1 { "" } else { "s" }
            )
        };
        if !self.tool_error {
            return format!("{} failed", of(self.failures));
        }
        let mut s = format!("{} had a failing tool step", of(self.runs_affected));
        if self.failures != self.runs_affected {
            s.push_str(&format!(" ({} failing steps)", self.failures));
        }
        s
    }

    /// Adds what a later step did to the outcome `run` reported.
    fn add_outcome(&mut self, more: impl std::fmt::Display) {
        self.outcome = format!("{}; {more}", self.outcome);
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CycleReport {
    pub groups: Vec<GroupReport>,
    pub rules_added: usize,
    /// Model proposals that failed their replay (stored as rejected).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules_rejected: Vec<String>,
    /// Rules learned from an older version of their pattern, brought up to
    /// its current one (see [`refresh_from_patterns`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules_updated: Vec<String>,
}

impl CycleReport {
    /// Whether the rules file changed, so runs must read it again.
    pub fn changed_rules(&self) -> bool {
        self.rules_added > 0 || !self.rules_updated.is_empty()
    }
}

pub fn rule_id(kind: Kind, class: &str, scope: &str) -> String {
    let kind = match kind {
        Kind::Prevention => "prevent",
        Kind::Validation => "validate",
        Kind::Recovery => "recover",
    };
    format!("{kind}-{}", slug(class, scope))
}

/// `class-scope` in lower case, anything but ASCII letters and digits
/// replaced by `-`: the stable part of a rule id.
pub fn slug(class: &str, scope: &str) -> String {
    format!("{class}-{scope}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn make(kind: Kind, class: &str, scope: &str, stage: &Stage, group: &FailureGroup) -> Rule {
    Rule::new(
        rule_id(kind, class, scope),
        kind,
        class,
        scope,
        stage.conditions.clone(),
        stage.actions.clone(),
        Origin {
            pattern: class.to_owned(),
            failures: group.sample_runs.clone(),
            failure_count: group.count,
            ..Origin::default()
        },
    )
}

/// Rules learned from a pattern follow the pattern's current version: a
/// rule an older skillhost wrote (`set_field timezone=UTC`, from before a
/// rule could no longer invent a value only the user knows) takes the
/// pattern's present conditions and actions. Its statistics start over,
/// since they measured the old behaviour; whether it is enabled is the
/// operator's and stays. A removed rule is updated under its tombstone, so
/// `rules restore` brings back the current version. Model proposals have
/// no pattern and are left alone. Returns the ids updated.
pub fn refresh_from_patterns(
    library_for: &dyn Fn(&str) -> Library,
    rules: &mut RuleSet,
) -> Vec<String> {
    let mut updated = Vec::new();
    for rule in &mut rules.rules {
        if rule.origin.model.is_some() || rule.origin.pattern.is_empty() {
            continue;
        }
        let library = library_for(&rule.scope);
        let Some(pattern) = library.get(&rule.origin.pattern) else {
            continue;
        };
        let stage = match rule.kind {
            Kind::Prevention => &pattern.prevention,
            Kind::Validation => &pattern.validation,
            Kind::Recovery => &pattern.recovery,
        };
        let Some(stage) = stage else { continue };
        if rule.conditions == stage.conditions && rule.actions == stage.actions {
            continue;
        }
        rule.conditions = stage.conditions.clone();
        rule.actions = stage.actions.clone();
        (rule.applied, rule.succeeded) = (0, 0);
        let (a, b) = rule.posterior();
        rule.confidence = a / (a + b);
        updated.push(rule.id.clone());
    }
    updated
}

/// Turns failure groups into rules (adding to `rules`); `library_for`
/// gives the pattern library for a skill (shipped + user + skill-local).
/// The report has one entry per group, in the same order.
pub fn run(
    groups: &[FailureGroup],
    library_for: &dyn Fn(&str) -> Library,
    rules: &mut RuleSet,
    t: &Thresholds,
) -> CycleReport {
    let mut report = CycleReport::default();
    for g in groups {
        let gr = learn_group(g, library_for, rules, t);
        report.rules_added += gr.rules_added.len();
        report.groups.push(gr);
    }
    report
}

/// One group: below the thresholds, without a pattern, or the pattern's
/// stages added as rules (those the operator removed are not).
fn learn_group(
    g: &FailureGroup,
    library_for: &dyn Fn(&str) -> Library,
    rules: &mut RuleSet,
    t: &Thresholds,
) -> GroupReport {
    let mut gr = GroupReport::of(g);
    if let Some(why) = below_thresholds(g, t) {
        gr.outcome = why;
        return gr;
    }
    let library = library_for(&g.skill);
    let Some(pattern) = library.get(&g.class) else {
        gr.outcome = "no pattern for this class".into();
        gr.no_pattern = true;
        return gr;
    };
    let removed = add_pattern_rules(g, pattern, rules, &mut gr.rules_added);
    gr.outcome = if gr.rules_added.is_empty() {
        "rules already exist".into()
    } else {
        format!(
            "added {} rule(s) from pattern {}",
            gr.rules_added.len(),
            g.class
        )
    };
    if !removed.is_empty() {
        gr.add_outcome(format_args!(
            "not learned again, removed by the operator: {}",
            removed.join(", ")
        ));
    }
    gr
}

/// Why the group is too small to learn from, if it is.
fn below_thresholds(g: &FailureGroup, t: &Thresholds) -> Option<String> {
    let frequency = if g.runs == 0 {
        0.0
    } else {
        g.count as f64 / g.runs as f64
    };
    (g.count < t.min_failures || frequency < t.min_frequency).then(|| {
        format!(
            "below thresholds ({} failures, {:.1}% of runs; need {} and {:.1}%)",
            g.count,
            frequency * 100.0,
            t.min_failures,
            t.min_frequency * 100.0
        )
    })
}

/// Adds a rule per stage of `pattern` that applies to the group (recovery
/// for a tool step's error, else prevention and validation), pushing the
/// ids added to `added`; returns the ids the operator removed.
fn add_pattern_rules(
    g: &FailureGroup,
    pattern: &Pattern,
    rules: &mut RuleSet,
    added: &mut Vec<String>,
) -> Vec<String> {
    let scope = match pattern.scope.as_deref() {
        Some("global") => "*".to_owned(),
        _ => g.skill.clone(),
    };
    let stages: Vec<(Kind, &Option<Stage>)> = if g.tool_error {
        vec![(Kind::Recovery, &pattern.recovery)]
    } else {
        vec![
            (Kind::Prevention, &pattern.prevention),
            (Kind::Validation, &pattern.validation),
        ]
    };
    let mut removed = Vec::new();
    for (kind, stage) in stages {
        let Some(stage) = stage else { continue };
        if kind == Kind::Prevention && !pattern.preventable {
            continue;
        }
        let rule = make(kind, &g.class, &scope, stage, g);
        let id = rule.id.clone();
        if rules.get(&id).is_some_and(|r| r.removed) {
            removed.push(id);
        } else if rules.insert(rule) {
            added.push(id);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_step_failure_is_not_called_a_failed_run() {
        let mut g = run(
            &[FailureGroup {
                tool_error: true,
                count: 6,
                runs_affected: 4,
                ..group("HttpError", 6, 4)
            }],
            &|_| Library::default(),
            &mut RuleSet::default(),
            &Thresholds::default(),
        )
        .groups
        .remove(0);
        assert_eq!(
            g.summary(),
            "4 of 4 runs had a failing tool step (6 failing steps)"
        );
        g.failures = 4;
        assert_eq!(g.summary(), "4 of 4 runs had a failing tool step");
        g.tool_error = false;
        g.runs = 1;
        g.failures = 1;
        assert_eq!(g.summary(), "1 of 1 run failed");
    }

    fn group(class: &str, count: u64, runs: u64) -> FailureGroup {
        FailureGroup {
            skill: "email-writer".into(),
            class: class.into(),
            tool_error: false,
            count,
            runs_affected: count,
            runs,
            sample_runs: vec![1, 2, 3],
        }
    }

    #[test]
    fn frequent_failures_become_rules_once() {
        let lib = |_: &str| Library::shipped().expect("shipped");
        let mut rules = RuleSet::default();
        let groups = vec![
            group("TimezoneError", 10, 50),
            group("FormatError", 3, 50),
            group("SpamTriggerError", 1, 50),
        ];
        let strict = Thresholds {
            min_failures: 2,
            ..Thresholds::default()
        };
        let r = run(&groups, &lib, &mut rules, &strict);
        let ids: Vec<&str> = rules.rules.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                "prevent-timezoneerror-email-writer",
                "validate-timezoneerror-email-writer",
                "validate-formaterror-email-writer"
            ],
            "FormatError is not preventable; one SpamTriggerError is below the threshold"
        );
        assert_eq!(r.rules_added, 3);
        // A second cycle over the same failures adds nothing.
        let again = run(&groups, &lib, &mut rules, &strict);
        assert_eq!(again.rules_added, 0);
        assert_eq!(rules.rules.len(), 3);
    }

    #[test]
    fn a_rule_from_an_older_pattern_takes_its_current_version() {
        use crate::learn::edit::RuleEdit;
        use crate::learn::rules::Action;
        let lib = |_: &str| Library::shipped().expect("shipped");
        let mut rules = RuleSet::default();
        run(
            &[group("TimezoneError", 10, 50)],
            &lib,
            &mut rules,
            &Thresholds::default(),
        );
        let (prevent, validate) = (
            "prevent-timezoneerror-email-writer",
            "validate-timezoneerror-email-writer",
        );
        let invented = Action::SetField {
            field: "timezone".into(),
            value: "UTC".into(),
            force: false,
        };
        // As an older skillhost wrote them: a guessed timezone, with
        // statistics; one of them removed by the operator.
        for id in [prevent, validate] {
            let r = rules.rules.iter_mut().find(|r| r.id == id).expect(id);
            r.actions = vec![invented.clone()];
            (r.applied, r.succeeded) = (40, 39);
        }
        rules.edit(validate, RuleEdit::Remove).expect("remove");
        let mut proposal = rules.get(prevent).expect("rule").clone();
        proposal.id = "prevent-model-proposal".into();
        proposal.origin.model = Some("scripted:m".into());
        rules.insert(proposal);

        let updated = refresh_from_patterns(&lib, &mut rules);
        assert_eq!(updated, vec![prevent, validate]);
        for id in [prevent, validate] {
            let r = rules.get(id).expect(id);
            assert!(
                r.actions.iter().all(|a| *a != invented)
                    && r.actions
                        .iter()
                        .any(|a| matches!(a, Action::UseDefault { .. })),
                "{id}: {:?}",
                r.actions
            );
            assert_eq!(
                (r.applied, r.succeeded),
                (0, 0),
                "{id}: statistics start over"
            );
        }
        assert!(
            rules.get(validate).is_some_and(|r| r.removed),
            "still removed"
        );
        assert_eq!(
            rules
                .get("prevent-model-proposal")
                .map(|r| r.actions.clone()),
            Some(vec![invented]),
            "a model's proposal has no pattern to follow"
        );
        assert!(refresh_from_patterns(&lib, &mut rules).is_empty(), "once");
    }

    #[test]
    fn a_removed_rule_is_not_learned_again_until_restored() {
        use crate::learn::edit::RuleEdit;
        let lib = |_: &str| Library::shipped().expect("shipped");
        let mut rules = RuleSet::default();
        let groups = vec![group("TimezoneError", 10, 50)];
        run(&groups, &lib, &mut rules, &Thresholds::default());
        let id = "prevent-timezoneerror-email-writer";
        rules.edit(id, RuleEdit::Remove).expect("remove");
        // More failures of the class: the cycle leaves the tombstone alone.
        let again = run(
            &[group("TimezoneError", 30, 90)],
            &lib,
            &mut rules,
            &Thresholds::default(),
        );
        assert_eq!(again.rules_added, 0);
        assert!(
            again.groups[0].outcome.contains(
                "not learned again, removed by the operator: prevent-timezoneerror-email-writer"
            ),
            "{}",
            again.groups[0].outcome
        );
        assert!(rules.get(id).is_some_and(|r| r.removed));
        assert!(rules.active().0.iter().all(|a| a.rule.id != id));
        rules.edit(id, RuleEdit::Restore).expect("restore");
        assert!(rules.active().0.iter().any(|a| a.rule.id == id));
    }

    #[test]
    fn unknown_classes_are_reported_not_invented() {
        let lib = |_: &str| Library::shipped().expect("shipped");
        let mut rules = RuleSet::default();
        let r = run(
            &[group("WeirdError", 9, 10)],
            &lib,
            &mut rules,
            &Thresholds::default(),
        );
        assert!(rules.rules.is_empty());
        assert_eq!(r.groups[0].outcome, "no pattern for this class");
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Rules(#[from] super::rules::RulesError),
}

/// A cycle over the workspace's runs, writing the workspace's rules under
/// their lock (`.skillhost/learning/rules.json`, or the `shared` store's
/// when hosts share one: see [`super::book`]; two hosts' cycles at once
/// add each rule once). Patterns: shipped, then
/// `$SKILLHOST_HOME/patterns/`, then the skill's own `patterns.yaml`. With a `model`, classes no pattern
/// knows get a rule proposed by it (see [`super::propose`]); the lock is not
/// held while the model thinks.
pub async fn learn_from_store(
    runs: &dyn RunLog,
    shared: Option<SharedStore<'_>>,
    paths: &crate::paths::Paths,
    catalog: &crate::skill::Catalog,
    config: &super::LearningConfig,
    model: Option<&dyn crate::llm::Provider>,
) -> Result<CycleReport, LearnError> {
    let groups = runs.failure_groups(config.thresholds.window)?;
    let path = super::rules_path(&paths.state_dir());
    let at = super::book::RulesAt::of(shared, &path);
    if groups.is_empty() && !at.exists()? {
        // Nothing failed and nothing learned: no pattern to load, no rule
        // to touch. (With rules, they may still need refreshing.)
        return Ok(CycleReport::default());
    }
    let (base, _warnings) = Library::load(&paths.home.join("patterns"), config.shipped_patterns);
    let library_for = |skill: &str| skill_library(&base, catalog, skill);
    let ask = model.is_some() && config.proposals.enabled;
    let ((mut report, candidates), _) = at.update(|rules| {
        Ok::<_, LearnError>(update_rules(&groups, &library_for, rules, config, ask))
    })?;
    let Some(model) = model else {
        return Ok(report);
    };
    // The model is asked without holding the rules lock: it may take seconds.
    let asker = Asker {
        runs,
        catalog,
        config,
        model,
    };
    for i in candidates {
        match asker.propose(&groups[i]).await? {
            Ok(rule) => record_proposal(at, rule, i, &mut report)?,
            Err(e) => report.groups[i].add_outcome(format_args!("asking the model failed: {e}")),
        }
    }
    Ok(report)
}

/// The rules brought up to their patterns, then the cycle over `groups`;
/// with `ask`, the groups to ask the model about. Also whether the rules
/// changed (so they must be saved).
fn update_rules(
    groups: &[FailureGroup],
    library_for: &dyn Fn(&str) -> Library,
    rules: &mut RuleSet,
    config: &super::LearningConfig,
    ask: bool,
) -> ((CycleReport, Vec<usize>), bool) {
    let rules_updated = refresh_from_patterns(library_for, rules);
    let mut report = run(groups, library_for, rules, &config.thresholds);
    report.rules_updated = rules_updated;
    let candidates = if ask {
        proposal_candidates(groups, &mut report, rules, &config.proposals)
    } else {
        Vec::new()
    };
    let changed = report.changed_rules();
    ((report, candidates), changed)
}

/// The shipped and user patterns `base`, plus the skill's own
/// `patterns.yaml` when it has one.
fn skill_library(base: &Library, catalog: &crate::skill::Catalog, skill: &str) -> Library {
    let mut lib = base.clone();
    if let Some(s) = catalog.get(skill) {
        let local = s.dir.join("patterns.yaml");
        if local.is_file() {
            let _ = lib.add_file(&local);
        }
    }
    lib
}

/// What asking the model for a rule needs.
struct Asker<'a> {
    runs: &'a dyn RunLog,
    catalog: &'a crate::skill::Catalog,
    config: &'a super::LearningConfig,
    model: &'a dyn crate::llm::Provider,
}

impl Asker<'_> {
    /// The model's rule for `group`, from its recent runs (and tool errors).
    async fn propose(
        &self,
        group: &FailureGroup,
    ) -> Result<Result<Rule, crate::llm::LlmError>, LearnError> {
        let window = self.config.thresholds.window;
        let runs = self.runs.recent_runs_of(&group.skill, window)?;
        let tool_errors = if group.tool_error {
            self.runs
                .tool_errors_of(&group.skill, &group.class, window)?
        } else {
            Vec::new()
        };
        let evidence = super::propose::Evidence {
            runs: &runs,
            tool_errors: &tool_errors,
        };
        let description = self
            .catalog
            .get(&group.skill)
            .map(|s| s.description.as_str())
            .unwrap_or_default();
        let cfg = &self.config.proposals;
        Ok(super::propose::propose(self.model, description, group, &evidence, cfg).await)
    }
}

/// Stores a proposed rule (unless one was proposed meanwhile) and reports
/// it in group `i`: added when its replay kept it, else rejected.
fn record_proposal(
    at: super::book::RulesAt<'_>,
    rule: Rule,
    i: usize,
    report: &mut CycleReport,
) -> Result<(), LearnError> {
    let gr = &mut report.groups[i];
    let (id, kept) = (rule.id.clone(), !rule.rejected);
    let verdict = rule.replay.as_ref().map(|r| r.verdict.clone());
    let proposed = format!(
        "the model proposed a {} rule, {}",
        rule.kind,
        verdict.unwrap_or_default()
    );
    if !store_proposal(at, rule)? {
        gr.add_outcome("a rule was proposed meanwhile");
        return Ok(());
    }
    gr.add_outcome(proposed);
    if kept {
        gr.rules_added.push(id);
        report.rules_added += 1;
    } else {
        report.rules_rejected.push(id);
    }
    Ok(())
}

/// The groups to ask the model about (indices into `groups`, which `run`
/// reported one by one, in order), at most `max_per_cycle`; the others
/// without a pattern get the reason in their outcome.
fn proposal_candidates(
    groups: &[FailureGroup],
    report: &mut CycleReport,
    rules: &RuleSet,
    cfg: &super::propose::ProposalConfig,
) -> Vec<usize> {
    let mut candidates = Vec::new();
    for (i, gr) in report.groups.iter_mut().enumerate() {
        if !gr.no_pattern {
            continue;
        }
        let why = super::propose::reason_not_to_ask(&groups[i], rules, cfg).or_else(|| {
            (candidates.len() >= cfg.max_per_cycle).then(|| {
                format!(
                    "the model is asked in a later cycle (at most {} per cycle)",
                    cfg.max_per_cycle
                )
            })
        });
        match why {
            Some(why) => gr.add_outcome(why),
            None => candidates.push(i),
        }
    }
    candidates
}

/// Writes a proposal under the rules lock, replacing a rejected one in its
/// slot. False when another process stored a live rule there meanwhile.
fn store_proposal(at: super::book::RulesAt<'_>, rule: Rule) -> Result<bool, LearnError> {
    let (stored, _) = at.update(|rules| {
        if rules.get(&rule.id).is_some_and(|r| !r.rejected) {
            return Ok::<_, LearnError>((false, false));
        }
        rules.rules.retain(|r| r.id != rule.id);
        rules.insert(rule);
        Ok((true, true))
    })?;
    Ok(stored)
}
