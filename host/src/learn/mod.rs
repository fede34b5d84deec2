//! Learning: every run recorded, recurring failures turned into readable
//! rules (prevention, validation, recovery). The ablation that proves the
//! gain is in `eval`.
//!
//! [`Learning`] is what the task pipeline talks to: it applies the enabled
//! rules at the three points of a run and keeps their statistics. The
//! operator's edits of the rules are in [`edit`].

pub mod book;
pub mod condition;
pub mod cycle;
pub mod edit;
pub mod patterns;
pub mod propose;
pub mod redact;
pub mod rules;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use book::RuleBook;
use condition::{Compiled, Condition, Facts};
use rules::{Active, Kind, RuleSet, RulesError};

/// `[learning]` in skillhost.toml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LearningConfig {
    /// Record every run in the store.
    pub record: bool,
    /// Apply learned rules.
    pub apply: bool,
    /// Run a learning cycle every N recorded runs (0: only `skillhost learn`).
    pub auto_every: u64,
    /// Most MiB of recorded runs held in memory for the database (at least
    /// 1); past it, a run's answer waits for the run writer.
    pub record_queue_mb: u64,
    pub thresholds: cycle::Thresholds,
    /// Start from the shipped pattern library (false: rules come only from
    /// your own patterns, `runs mark` feedback and model proposals).
    pub shipped_patterns: bool,
    /// Rules proposed by the configured model for classes no pattern knows.
    pub proposals: propose::ProposalConfig,
}

impl Default for LearningConfig {
    fn default() -> Self {
        LearningConfig {
            record: true,
            apply: true,
            auto_every: 25,
            record_queue_mb: 64,
            thresholds: cycle::Thresholds::default(),
            shipped_patterns: true,
            proposals: propose::ProposalConfig::default(),
        }
    }
}

pub(crate) use crate::types::share;

/// Which rules a run may use (the arms of an ablation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleFilter {
    None,
    /// No rules; a run the skill's validators fail is tried once more with
    /// the same prompt (the control: what asking twice alone is worth).
    RetryOnly,
    PreventionOnly,
    All,
}

/// A rule that fired on a run, and what it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Applied {
    pub id: String,
    pub kind: Kind,
    pub effect: String,
}

impl Applied {
    /// What `rule` (of the kind it is) did.
    fn of(rule: &rules::Rule, effect: &rules::Effect) -> Applied {
        Applied {
            id: rule.id.clone(),
            kind: rule.kind,
            effect: effect.changes.join("; "),
        }
    }
}

/// What prevention did to a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prevented {
    pub applied: Vec<Applied>,
    /// The run must fail before it starts, with this message.
    pub refused: Option<String>,
    /// What the user must be told (values taken from `[defaults]`).
    pub notices: Vec<String>,
}

/// The rules in force, with their compiled conditions; statistics are
/// written back to where the rules are kept (when they are kept: see
/// [`book`]) after each run.
pub struct Learning {
    book: Option<RuleBook>,
    filter: RuleFilter,
    /// What every run reads. Held only to read it or to swap in new rules,
    /// never across I/O: the statistics are written back by the run
    /// writer, at the lowest priority, behind the rules' own lock (another
    /// process's edit, or a shared store's round trip), and no run may
    /// wait for that.
    state: Mutex<State>,
    /// Held across a write-back or reload and the swap after it, so that
    /// rules read earlier never replace rules written later.
    writing: Mutex<()>,
}

struct State {
    set: RuleSet,
    active: Vec<Active>,
}

impl Learning {
    /// Rules from the rules file at `path` (missing file: none yet).
    pub fn open(path: &Path, filter: RuleFilter) -> Result<(Learning, Vec<String>), RulesError> {
        Learning::open_book(RuleBook::file(path.to_path_buf()), filter)
    }

    /// Rules from `book` (none written yet: none).
    pub fn open_book(
        book: RuleBook,
        filter: RuleFilter,
    ) -> Result<(Learning, Vec<String>), RulesError> {
        let set = book.at().load()?;
        let (learning, warnings) = Learning::from_set(set, filter);
        Ok((
            Learning {
                book: Some(book),
                ..learning
            },
            warnings,
        ))
    }

    /// In-memory rules (ablation, tests).
    pub fn from_set(set: RuleSet, filter: RuleFilter) -> (Learning, Vec<String>) {
        let (active, warnings) = set.active();
        (
            Learning {
                book: None,
                filter,
                state: Mutex::new(State { set, active }),
                writing: Mutex::new(()),
            },
            warnings,
        )
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn rules(&self) -> RuleSet {
        self.state().set.clone()
    }

    /// Whether a run its validators fail is tried once more unchanged
    /// (the retry-only control; no rule is in force then).
    pub fn retries_unchanged(&self) -> bool {
        self.filter == RuleFilter::RetryOnly
    }

    fn allowed(&self, kind: Kind) -> bool {
        match self.filter {
            RuleFilter::None | RuleFilter::RetryOnly => false,
            RuleFilter::PreventionOnly => kind == Kind::Prevention,
            RuleFilter::All => true,
        }
    }

    /// Prevention: every matching rule edits the context and instructions.
    /// Returns what fired and, if a rule requires a missing field, the
    /// refusal message.
    pub fn prevent(
        &self,
        skill: &str,
        task: &str,
        context: &mut Map<String, Value>,
        instructions: &mut Vec<String>,
        setting: &rules::Setting<'_>,
    ) -> Prevented {
        let mut out = Prevented::default();
        if !self.allowed(Kind::Prevention) {
            return out;
        }
        let state = self.state();
        for a in state
            .active
            .iter()
            .filter(|a| a.rule.kind == Kind::Prevention && a.rule.in_scope(skill))
        {
            let facts = Facts {
                task,
                skill,
                context,
                output: None,
                failure: None,
            };
            if !a.matches(&facts) {
                continue;
            }
            let effect = rules::apply(&a.rule.actions, context, instructions, setting);
            out.applied.push(Applied::of(&a.rule, &effect));
            if out.refused.is_none() {
                out.refused = effect.refused;
            }
            out.notices.extend(effect.notices);
        }
        out
    }

    /// Validation: the first rule whose conditions hold on the output it
    /// validates (`facts.output`: the answer, or the one a validator
    /// rejected), rules of the run's failure class tried first. A class
    /// name alone fires nothing: the rule's own conditions decide, so a
    /// remedy is applied only where its evidence is. Returns the rule id,
    /// class and remedy actions, made specific to this output: `{evidence}`
    /// in an instruction becomes what the conditions found (quoted), and a
    /// remedy that does not quote it gets a line that does, so the retry
    /// always tells the model something its first prompt did not.
    pub fn validation_for(
        &self,
        facts: &Facts<'_>,
    ) -> Option<(String, String, Vec<rules::Action>)> {
        if !self.allowed(Kind::Validation) {
            return None;
        }
        let state = self.state();
        let candidates = || {
            state
                .active
                .iter()
                .filter(|a| a.rule.kind == Kind::Validation && a.rule.in_scope(facts.skill))
        };
        let same_class = |a: &&Active| facts.failure == Some(a.rule.class.as_str());
        candidates()
            .filter(same_class)
            .chain(candidates().filter(|a| !same_class(a)))
            .find(|a| a.matches(facts))
            .map(|a| {
                let evidence = a.evidence(facts);
                (
                    a.rule.id.clone(),
                    a.rule.class.clone(),
                    with_evidence(&a.rule.class, &a.rule.actions, &evidence),
                )
            })
    }

    /// Whether validation rule `id` (in force) finds its failure in `facts`.
    pub fn finds(&self, id: &str, facts: &Facts<'_>) -> bool {
        self.allowed(Kind::Validation)
            && self
                .state()
                .active
                .iter()
                .any(|a| a.rule.id == id && a.rule.kind == Kind::Validation && a.matches(facts))
    }

    /// Recovery after a tool error of `class` with `message`.
    pub fn recover(
        &self,
        skill: &str,
        task: &str,
        class: &str,
        message: &str,
        context: &mut Map<String, Value>,
        defaults: Option<&Map<String, Value>>,
    ) -> Option<Applied> {
        if !self.allowed(Kind::Recovery) {
            return None;
        }
        let state = self.state();
        let snapshot = context.clone();
        let facts = Facts {
            task,
            skill,
            context: &snapshot,
            output: Some(message),
            failure: Some(class),
        };
        let a = state
            .active
            .iter()
            .filter(|a| {
                a.rule.kind == Kind::Recovery && a.rule.in_scope(skill) && a.rule.class == class
            })
            .find(|a| a.matches(&facts))?;
        let mut instructions = Vec::new();
        // Recovery runs inside the model loop: a model answers.
        let setting = rules::Setting {
            defaults,
            model_answers: true,
            given: None,
        };
        let effect = rules::apply(&a.rule.actions, context, &mut instructions, &setting);
        Some(Applied::of(&a.rule, &effect))
    }

    /// Whether statistics are written where the rules are kept (a write
    /// each time they are recorded, so a host batches them) or stay in
    /// memory.
    pub fn is_kept(&self) -> bool {
        self.book.is_some()
    }

    /// Updates the statistics of the rules that fired on a run, disables
    /// those that evidently do not help, and saves.
    pub fn record(&self, applied: &[Applied], success: bool) -> Result<(), RulesError> {
        self.record_batch(&[RuleOutcome {
            rules: applied.iter().map(|a| a.id.clone()).collect(),
            success,
        }])
    }

    /// [`record`](Self::record) for many runs at once: one read and one
    /// write of the rules, under their lock.
    pub fn record_batch(&self, runs: &[RuleOutcome]) -> Result<(), RulesError> {
        if runs.iter().all(|r| r.rules.is_empty()) {
            return Ok(());
        }
        let tally = |set: &mut RuleSet| {
            for run in runs {
                for id in &run.rules {
                    if let Some(r) = set.get_mut(id) {
                        r.record(run.success);
                    }
                }
            }
        };
        // Another process or host may have changed the rules: merge into
        // theirs.
        if let Some(book) = &self.book {
            let _writing = self.writing();
            let ((), fresh) = book.at().update(|set| {
                tally(set);
                Ok::<_, RulesError>(((), true))
            })?;
            self.swap(fresh);
        } else {
            let mut state = self.state();
            let State { set, active } = &mut *state;
            tally(set);
            *active = set.active().0;
        }
        Ok(())
    }

    /// Puts `fresh` in force; its conditions are compiled before the runs'
    /// lock is taken.
    fn swap(&self, fresh: RuleSet) {
        let active = fresh.active().0;
        let mut state = self.state();
        state.active = active;
        state.set = fresh;
    }

    fn writing(&self) -> std::sync::MutexGuard<'_, ()> {
        self.writing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads the rules again (after a learning cycle, or another host,
    /// changed them).
    pub fn reload(&self) -> Result<(), RulesError> {
        let Some(book) = &self.book else {
            return Ok(());
        };
        let _writing = self.writing();
        self.swap(book.at().load()?);
        Ok(())
    }
}

/// At most this many findings are quoted, each cut to [`EVIDENCE_CHARS`].
const EVIDENCE_ITEMS: usize = 3;
const EVIDENCE_CHARS: usize = 60;

/// `actions` with `{evidence}` replaced by the quoted findings; when no
/// instruction quotes them and there are findings, one that does is added.
fn with_evidence(
    class: &str,
    actions: &[rules::Action],
    evidence: &[String],
) -> Vec<rules::Action> {
    let quoted = if evidence.is_empty() {
        "nothing specific".to_owned()
    } else {
        evidence
            .iter()
            .take(EVIDENCE_ITEMS)
            .map(|e| format!("'{}'", e.chars().take(EVIDENCE_CHARS).collect::<String>()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut quotes = false;
    let mut out: Vec<rules::Action> = actions
        .iter()
        .map(|a| match a {
            rules::Action::AddInstruction { text } if text.contains("{evidence}") => {
                quotes = true;
                rules::Action::AddInstruction {
                    text: text.replace("{evidence}", &quoted),
                }
            }
            other => other.clone(),
        })
        .collect();
    if !quotes && !evidence.is_empty() {
        out.push(rules::Action::AddInstruction {
            text: format!(
                "Your previous answer failed the {class} check (found: {quoted}); fix that."
            ),
        });
    }
    out
}

/// The rules that fired on one run, and whether it succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleOutcome {
    pub rules: Vec<String>,
    pub success: bool,
}

impl From<&crate::store::RunRecord> for RuleOutcome {
    fn from(run: &crate::store::RunRecord) -> Self {
        RuleOutcome {
            rules: run
                .rules_applied
                .iter()
                .map(|a| a.rule_id.clone())
                .collect(),
            success: run.success,
        }
    }
}

/// An exclusive lock on `<path>.lock` for read-modify-write of rules.json
/// by several processes; released when dropped.
pub fn lock(path: &Path) -> Option<std::fs::File> {
    let lock_path = path.with_extension("json.lock");
    if let Some(dir) = lock_path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    crate::fsutil::lock_file(&lock_path).ok()
}

/// A skill's own validators (`metadata.skillhost.validators`).
#[derive(Debug, Clone)]
pub struct Validator {
    pub class: String,
    pub message: String,
    conditions: Vec<Compiled>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ValidatorSpec {
    class: String,
    #[serde(default)]
    message: String,
    when: Vec<Condition>,
}

/// Parses a skill's validators; invalid ones are reported and skipped.
pub fn validators(raw: &[Value]) -> (Vec<Validator>, Vec<String>) {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for (i, v) in raw.iter().enumerate() {
        match serde_json::from_value::<ValidatorSpec>(v.clone()) {
            Ok(spec) => match condition::compile_all(&spec.when) {
                Ok(conditions) => ok.push(Validator {
                    message: if spec.message.is_empty() {
                        format!("the answer failed the skill's {} check", spec.class)
                    } else {
                        spec.message
                    },
                    class: spec.class,
                    conditions,
                }),
                Err(e) => bad.push(format!("validator {i}: {e}")),
            },
            Err(e) => bad.push(format!("validator {i}: {e}")),
        }
    }
    (ok, bad)
}

impl Validator {
    pub fn fails(&self, facts: &Facts<'_>) -> bool {
        condition::all(&self.conditions, facts)
    }
}

pub fn rules_path(state_dir: &Path) -> PathBuf {
    state_dir.join("learning").join(rules::RULES_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use condition::Op;
    use rules::{Action, Origin, Rule};
    use serde_json::json;

    /// The shipped TimezoneError validation: a bare time in the answer.
    fn timezone_validation() -> Rule {
        Rule::new(
            "validate-tz".into(),
            Kind::Validation,
            "TimezoneError",
            "*",
            vec![
                Condition {
                    field: "output.body".into(),
                    op: Op::Matches,
                    value: json!("(?i)\\b\\d{1,2}\\s*pm\\b"),
                    not: false,
                },
                Condition {
                    field: "output.body".into(),
                    op: Op::Matches,
                    value: json!("\\bUTC\\b"),
                    not: true,
                },
            ],
            vec![Action::AddInstruction {
                text: "Give the timezone.".into(),
            }],
            Origin::default(),
        )
    }

    fn fires(learning: &Learning, output: Option<&str>, failure: &str) -> Option<String> {
        let context = Map::new();
        learning
            .validation_for(&Facts {
                task: "Email Dana",
                skill: "email-writer",
                context: &context,
                output,
                failure: Some(failure),
            })
            .map(|(id, _, _)| id)
    }

    /// Whether some thread waits for the `flock` on the file with inode
    /// `ino` (`/proc/locks` lists waiters with `->`).
    #[cfg(target_os = "linux")]
    fn flock_waited_for(ino: u64) -> bool {
        let suffix = format!(":{ino}");
        std::fs::read_to_string("/proc/locks").is_ok_and(|locks| {
            locks.lines().any(|l| {
                l.contains("->")
                    && l.contains("FLOCK")
                    && l.split_whitespace().any(|f| f.ends_with(&suffix))
            })
        })
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn runs_read_the_rules_while_statistics_wait_for_the_rules_file() {
        use std::os::unix::fs::MetadataExt;
        use std::sync::{Arc, mpsc};
        use std::time::Duration;
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("rules.json");
        RuleSet {
            rules: vec![timezone_validation()],
        }
        .save(&path)
        .unwrap();
        let learning = Arc::new(Learning::open(&path, RuleFilter::All).unwrap().0);

        // Another process is editing the rules, so the write-back of a
        // batch's statistics waits for the file.
        let held = lock(&path).expect("the rules file's lock");
        let ino = std::fs::metadata(path.with_extension("json.lock"))
            .unwrap()
            .ino();
        let writer = {
            let learning = learning.clone();
            std::thread::spawn(move || {
                learning.record_batch(&[RuleOutcome {
                    rules: vec!["validate-tz".into()],
                    success: true,
                }])
            })
        };
        let waiting = (0..6000).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            flock_waited_for(ino)
        });
        assert!(waiting, "the write-back never reached the rules file");

        // A run meanwhile reads the rules in force; the guard only keeps a
        // failure from hanging the test run.
        let (tx, rx) = mpsc::channel();
        let reader = learning.clone();
        std::thread::spawn(move || {
            let _ = tx.send(fires(&reader, Some("See you at 3pm"), "TimezoneError"));
        });
        let fired = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a run waited for the rules file's lock");
        assert_eq!(fired.as_deref(), Some("validate-tz"));
        assert!(!writer.is_finished());

        drop(held);
        writer.join().unwrap().unwrap();
        let stats = &learning.rules().rules[0];
        assert_eq!((stats.applied, stats.succeeded), (1, 1));
        let on_disk = &RuleSet::load(&path).unwrap().rules[0];
        assert_eq!((on_disk.applied, on_disk.succeeded), (1, 1));
    }

    #[test]
    fn a_remedy_quotes_what_its_conditions_found() {
        let mut quoting = timezone_validation();
        quoting.actions = vec![Action::AddInstruction {
            text: "The draft gives {evidence} with no timezone.".into(),
        }];
        let mut silent = timezone_validation();
        silent.id = "validate-silent".into();
        silent.class = "OtherError".into();
        let remedy = |rule: Rule, class: &str| {
            let (learning, _) = Learning::from_set(RuleSet { rules: vec![rule] }, RuleFilter::All);
            let context = Map::new();
            learning
                .validation_for(&Facts {
                    task: "Email Dana",
                    skill: "email-writer",
                    context: &context,
                    output: Some("See you at 3pm, or 4 pm."),
                    failure: Some(class),
                })
                .map(|(_, _, actions)| actions)
                .expect("fires")
        };
        assert_eq!(
            remedy(quoting, "TimezoneError"),
            vec![Action::AddInstruction {
                text: "The draft gives '3pm', '4 pm' with no timezone.".into()
            }]
        );
        // A remedy that does not quote its evidence gets a line that does:
        // the retry's prompt differs from the first attempt's.
        let actions = remedy(silent, "OtherError");
        assert_eq!(actions.len(), 2);
        assert!(
            matches!(&actions[1], Action::AddInstruction { text } if text.contains("'3pm', '4 pm'")),
            "{actions:?}"
        );
    }

    #[test]
    fn a_validation_rule_fires_on_its_evidence_not_on_its_class_name() {
        let set = RuleSet {
            rules: vec![timezone_validation()],
        };
        let (learning, warnings) = Learning::from_set(set, RuleFilter::All);
        assert!(warnings.is_empty(), "{warnings:?}");
        // Same class, and the output shows the bare time: fires.
        assert_eq!(
            fires(&learning, Some("See you at 3pm."), "TimezoneError").as_deref(),
            Some("validate-tz")
        );
        // Same class, but the output's condition does not hold: nothing.
        assert_eq!(
            fires(&learning, Some("See you at 3pm (UTC)."), "TimezoneError"),
            None
        );
        // Same class, no output to look at: nothing either.
        assert_eq!(fires(&learning, None, "TimezoneError"), None);
    }
}
