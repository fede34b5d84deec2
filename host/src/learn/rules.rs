//! Rules: conditions → actions, of three kinds (prevention before a run,
//! validation after it, recovery on a tool error), kept in a readable,
//! diffable `rules.json` with their statistics. Confidence is the mean of a
//! Beta posterior over "the run succeeded when the rule was applied"; a rule
//! whose posterior says it does not help is disabled, with the reason.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::condition::{self, Compiled, Condition, ConditionError, Facts};

pub const RULES_FILE: &str = "rules.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Prevention,
    Validation,
    Recovery,
}

impl std::fmt::Display for Kind {
    /// The lower-case name, as in `rules.json`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Kind::Prevention => "prevention",
            Kind::Validation => "validation",
            Kind::Recovery => "recovery",
        })
    }
}

/// What a rule does when it fires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Sets a context field when it is missing or empty, or holds only the
    /// skill's declared default (the caller did not give it; see
    /// [`Setting::given`]); a value the caller gave is replaced only with
    /// `force`.
    SetField {
        field: String,
        value: Value,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        force: bool,
    },
    /// Adds a flag to the context's `_flags` list.
    AddFlag { flag: String },
    /// Adds an instruction for the model (in its prompt) and the handler
    /// (in the context's `_instructions` list).
    AddInstruction { text: String },
    /// Fails the run before it starts when the field is missing.
    RequireField { field: String, message: String },
    /// A value only the user or the operator can know (a timezone): a rule
    /// never invents it. When the field is missing it is filled from the
    /// operator's `[defaults]` in skillhost.toml, and the run says so; with
    /// no default, a run no model answers (handler, pipeline, template:
    /// they can only guess) is refused before the call with `fix`, and a
    /// model, which can be told the value is unknown, goes on without it.
    UseDefault { field: String, fix: String },
}

/// What actions may draw on besides the context.
#[derive(Debug, Clone, Copy, Default)]
pub struct Setting<'a> {
    /// The operator's `[defaults]` (skillhost.toml).
    pub defaults: Option<&'a Map<String, Value>>,
    /// A model answers the run (see [`Action::UseDefault`]).
    pub model_answers: bool,
    /// The context the caller gave, before the skill's declared defaults
    /// were filled in. A field not in it holds only a default, which is no
    /// one's decision, so `set_field` may replace it (a declared `false`
    /// would otherwise block every rule that sets a flag). `None`: every
    /// present value counts as given.
    pub given: Option<&'a Map<String, Value>>,
}

/// Where a rule came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Origin {
    /// The pattern it was made from, or "model" for a model proposal.
    pub pattern: String,
    /// Failures (run ids) it was learned from, the first few.
    pub failures: Vec<i64>,
    /// How many failures of the class were seen.
    pub failure_count: u64,
    /// The model that proposed the rule (`PROVIDER:MODEL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Why the model thinks the rule helps, in its words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
}

/// How a proposed rule fared when replayed over the recorded runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Replay {
    /// Recorded failures of the rule's class, and how many it matched.
    pub failures: u64,
    pub failures_matched: u64,
    /// Recorded successful runs of the skill, and how many it matched.
    pub successes: u64,
    pub successes_matched: u64,
    /// `kept: ...` or `rejected: ...`, with the figures and thresholds.
    pub verdict: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    pub id: String,
    pub kind: Kind,
    /// The failure class the rule addresses.
    pub class: String,
    /// A skill name, or `*` for every skill.
    pub scope: String,
    /// When the rule applies (prevention, recovery) or what in the output
    /// shows the failure (validation).
    pub conditions: Vec<Condition>,
    /// Prevention: what to change. Validation: the remedy before the retry.
    /// Recovery: what to change after a tool error.
    pub actions: Vec<Action>,
    pub origin: Origin,
    /// Posterior mean of Beta(1 + succeeded, 1 + applied - succeeded).
    pub confidence: f64,
    pub applied: u64,
    pub succeeded: u64,
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<String>,
    /// Rejected model proposals are kept, with their replay figures.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rejected: bool,
    /// For model proposals: the replay that kept or rejected the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay>,
    /// Removed by the operator: a tombstone. The rule stays in the file so
    /// that no learning cycle or proposal brings its id back, until
    /// `skillhost rules restore ID`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
}

/// Disable a rule once it was applied this often and its posterior says
/// success when applied is below [`MIN_HELPFUL`] with ~95% confidence.
pub const MIN_APPLICATIONS: u64 = 8;
pub const MIN_HELPFUL: f64 = 0.5;

impl Rule {
    /// A rule never applied yet: enabled, with the flat prior's confidence.
    pub fn new(
        id: String,
        kind: Kind,
        class: &str,
        scope: &str,
        conditions: Vec<Condition>,
        actions: Vec<Action>,
        origin: Origin,
    ) -> Rule {
        Rule {
            id,
            kind,
            class: class.to_owned(),
            scope: scope.to_owned(),
            conditions,
            actions,
            origin,
            confidence: 0.5,
            applied: 0,
            succeeded: 0,
            enabled: true,
            disabled_reason: None,
            rejected: false,
            replay: None,
            removed: false,
        }
    }

    pub fn posterior(&self) -> (f64, f64) {
        let a = 1.0 + self.succeeded as f64;
        let b = 1.0 + self.applied.saturating_sub(self.succeeded) as f64;
        (a, b)
    }

    /// Records one application and its outcome; disables the rule when it
    /// evidently does not help.
    pub fn record(&mut self, success: bool) {
        self.applied += 1;
        if success {
            self.succeeded += 1;
        }
        let (a, b) = self.posterior();
        let mean = a / (a + b);
        let sd = (a * b / ((a + b).powi(2) * (a + b + 1.0))).sqrt();
        self.confidence = mean;
        if self.enabled && self.applied >= MIN_APPLICATIONS && mean + 2.0 * sd < MIN_HELPFUL {
            self.enabled = false;
            self.disabled_reason = Some(format!(
                "runs succeeded {} of {} times when it was applied (posterior mean {:.2}, upper bound {:.2} < {MIN_HELPFUL})",
                self.succeeded,
                self.applied,
                mean,
                mean + 2.0 * sd
            ));
        }
    }

    /// The pattern, the model (with its replay verdict) or a person.
    fn source(&self) -> String {
        let o = &self.origin;
        match &o.model {
            Some(model) => format!(
                "proposed by {model}; replay {}",
                self.replay
                    .as_ref()
                    .map(|r| r.verdict.as_str())
                    .filter(|v| !v.is_empty())
                    .unwrap_or("not recorded")
            ),
            None if o.pattern.is_empty() => "written by hand".to_owned(),
            None => format!("pattern {}", o.pattern),
        }
    }

    /// Where the rule came from, in one line: the pattern, or the model
    /// that proposed it with its replay figures; the runs it was learned
    /// from, and which of those a person marked failed (`marked`, from the
    /// store's verdicts).
    pub fn origin_line(&self, marked: &[i64]) -> String {
        let o = &self.origin;
        let list = |ids: &[i64]| {
            ids.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut line = self.source();
        if !o.failures.is_empty() {
            line.push_str(&format!(
                "; from {} failure(s), e.g. runs {}",
                o.failure_count,
                list(&o.failures)
            ));
        }
        let marked: Vec<i64> = o
            .failures
            .iter()
            .copied()
            .filter(|id| marked.contains(id))
            .collect();
        if !marked.is_empty() {
            line.push_str(&format!(
                "; marked failed by a person (runs mark): runs {}",
                list(&marked)
            ));
        }
        line
    }

    pub fn in_scope(&self, skill: &str) -> bool {
        self.scope == "*" || self.scope == skill
    }

    /// Whether it is in force, and if not why.
    pub fn state(&self) -> RuleState<'_> {
        if self.removed {
            RuleState::Removed
        } else if self.rejected {
            RuleState::Rejected {
                verdict: self.replay.as_ref().map(|p| p.verdict.as_str()),
            }
        } else if self.enabled {
            RuleState::Enabled
        } else {
            RuleState::Disabled {
                reason: self.disabled_reason.as_deref(),
            }
        }
    }
}

/// A rule's state; shown as `enabled`, `disabled: REASON`, or the replay's
/// verdict (`rejected` without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleState<'a> {
    Enabled,
    Disabled { reason: Option<&'a str> },
    Rejected { verdict: Option<&'a str> },
    Removed,
}

impl std::fmt::Display for RuleState<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuleState::Enabled => f.write_str("enabled"),
            RuleState::Disabled { reason } => write!(f, "disabled: {}", reason.unwrap_or_default()),
            RuleState::Rejected { verdict } => f.write_str(verdict.unwrap_or("rejected")),
            RuleState::Removed => f.write_str(
                "removed by the operator (not learned again; `skillhost rules restore ID`)",
            ),
        }
    }
}

/// A rule with its conditions compiled.
#[derive(Debug, Clone)]
pub struct Active {
    pub rule: Rule,
    conditions: Vec<Compiled>,
}

impl Active {
    pub fn new(rule: Rule) -> Result<Self, ConditionError> {
        let conditions = condition::compile_all(&rule.conditions)?;
        Ok(Active { rule, conditions })
    }

    pub fn matches(&self, facts: &Facts<'_>) -> bool {
        condition::all(&self.conditions, facts)
    }

    /// What the rule's conditions found (see [`Compiled::evidence`]),
    /// distinct, in order; conditions on the output first.
    pub fn evidence(&self, facts: &Facts<'_>) -> Vec<String> {
        let (output, other): (Vec<&Compiled>, Vec<&Compiled>) = self
            .conditions
            .iter()
            .partition(|c| c.source.field.starts_with("output"));
        let mut found: Vec<String> = Vec::new();
        for c in output.into_iter().chain(other) {
            for e in c.evidence(facts) {
                if !found.contains(&e) {
                    found.push(e);
                }
            }
        }
        found
    }
}

/// What applying actions did, for the run record and the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Effect {
    pub changes: Vec<String>,
    /// Set by `require_field` and `use_default`: the run must fail with
    /// this message.
    pub refused: Option<String>,
    /// What the user must be told (a value taken from `[defaults]`).
    pub notices: Vec<String>,
}

/// No value: absent, null, or an empty string or list.
fn missing(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(v)) => v.is_empty(),
        Some(_) => false,
    }
}

/// Applies `actions` to the context; instructions also land in
/// `instructions` for the model prompt.
pub fn apply(
    actions: &[Action],
    context: &mut Map<String, Value>,
    instructions: &mut Vec<String>,
    setting: &Setting<'_>,
) -> Effect {
    let mut effect = Effect::default();
    for a in actions {
        match a {
            Action::SetField {
                field,
                value,
                force,
            } => {
                let only_default = setting.given.is_some_and(|g| !g.contains_key(field));
                if *force || only_default || missing(context.get(field)) {
                    set_field(context, field, value, &mut effect);
                }
            }
            Action::AddFlag { flag } => add_flag(context, flag, &mut effect),
            Action::AddInstruction { text } => {
                if !instructions.contains(text) {
                    instructions.push(text.clone());
                    add_instruction(context, text, &mut effect);
                }
            }
            Action::RequireField { field, message } if missing(context.get(field)) => {
                refuse(field, message, &mut effect);
            }
            Action::RequireField { .. } => {}
            Action::UseDefault { field, fix } => {
                use_default(context, field, fix, setting, &mut effect);
            }
        }
    }
    effect
}

fn set_field(context: &mut Map<String, Value>, field: &str, value: &Value, effect: &mut Effect) {
    context.insert(field.to_owned(), value.clone());
    effect.changes.push(format!("set {field} = {value}"));
}

/// The run must fail with `message`: `field` is required.
fn refuse(field: &str, message: &str, effect: &mut Effect) {
    effect.refused = Some(message.to_owned());
    effect.changes.push(format!("required {field}"));
}

/// `flag` added to the context's `_flags`, once.
fn add_flag(context: &mut Map<String, Value>, flag: &str, effect: &mut Effect) {
    let flags = context
        .entry("_flags")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = flags
        && !list.iter().any(|f| f == flag)
    {
        list.push(Value::from(flag.to_owned()));
        effect.changes.push(format!("flag {flag}"));
    }
}

/// `text` added to the context's `_instructions`.
fn add_instruction(context: &mut Map<String, Value>, text: &str, effect: &mut Effect) {
    let list = context
        .entry("_instructions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(l) = list {
        l.push(Value::from(text.to_owned()));
    }
    effect.changes.push(format!("instruction: {text}"));
}

/// A missing `field` takes its value from `[defaults]` (and the user is
/// told); with none there, the run is refused with `fix`, unless the model
/// may answer without it.
fn use_default(
    context: &mut Map<String, Value>,
    field: &str,
    fix: &str,
    setting: &Setting<'_>,
    effect: &mut Effect,
) {
    if !missing(context.get(field)) {
        return;
    }
    let default = setting
        .defaults
        .and_then(|d| d.get(field))
        .filter(|v| !missing(Some(v)));
    if let Some(value) = default {
        context.insert(field.to_owned(), value.clone());
        effect
            .changes
            .push(format!("set {field} = {value} from [defaults]"));
        effect.notices.push(format!(
            "`{field}` was not given: used {value} from [defaults] in skillhost.toml"
        ));
    } else if !setting.model_answers {
        refuse(field, fix, effect);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a valid rules file: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read or write {location}: {source}")]
    Shared {
        location: String,
        source: crate::store::StoreError,
    },
    #[error("{location} are not a valid rule set: {message}")]
    SharedParse { location: String, message: String },
}

/// All rules, in a stable order (kind, scope, class, id).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
}

impl RuleSet {
    /// Reads `path`; a missing file is an empty set.
    pub fn load(path: &Path) -> Result<RuleSet, RulesError> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RuleSet::default()),
            Err(source) => {
                return Err(RulesError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|e| RulesError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    pub fn sort(&mut self) {
        self.rules.sort_by(|a, b| {
            (a.kind, &a.scope, &a.class, &a.id).cmp(&(b.kind, &b.scope, &b.class, &b.id))
        });
    }

    /// Pretty, sorted, atomically replaced.
    pub fn save(&mut self, path: &Path) -> Result<(), RulesError> {
        self.sort();
        let write_err = |source| RulesError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(write_err)?;
        }
        let text = self
            .to_json()
            .map_err(|e| write_err(std::io::Error::other(e)))?;
        crate::fsutil::write_atomic(path, text.as_bytes()).map_err(write_err)
    }

    /// Pretty, sorted JSON, as `rules.json` holds it.
    pub fn to_json(&mut self) -> Result<String, serde_json::Error> {
        self.sort();
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        Ok(text)
    }

    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Rule> {
        self.rules.iter_mut().find(|r| r.id == id)
    }

    /// Adds a rule unless one with the same id exists (a removed one, its
    /// tombstone, included); true if added.
    pub fn insert(&mut self, rule: Rule) -> bool {
        if self.get(&rule.id).is_some() {
            return false;
        }
        self.rules.push(rule);
        true
    }

    /// Enabled rules with compiled conditions; rules that fail to compile
    /// are skipped and reported.
    pub fn active(&self) -> (Vec<Active>, Vec<String>) {
        let mut ok = Vec::new();
        let mut bad = Vec::new();
        for r in self
            .rules
            .iter()
            .filter(|r| r.enabled && !r.rejected && !r.removed)
        {
            match Active::new(r.clone()) {
                Ok(a) => ok.push(a),
                Err(e) => bad.push(format!("rule {}: {e}", r.id)),
            }
        }
        (ok, bad)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::learn::condition::Op;
    use serde_json::json;

    pub(crate) fn rule(id: &str, kind: Kind) -> Rule {
        Rule::new(
            id.into(),
            kind,
            "TimezoneError",
            "email-writer",
            vec![Condition {
                field: "task.description".into(),
                op: Op::Matches,
                value: json!("(?i)\\dpm"),
                not: false,
            }],
            vec![
                Action::SetField {
                    field: "timezone".into(),
                    value: json!("UTC"),
                    force: false,
                },
                Action::AddInstruction {
                    text: "Give times with a timezone.".into(),
                },
            ],
            Origin {
                pattern: "TimezoneError".into(),
                failures: vec![1, 2],
                failure_count: 2,
                ..Origin::default()
            },
        )
    }

    #[test]
    fn rules_json_round_trips_in_stable_order() {
        let d = tempfile::tempdir().expect("tempdir");
        let path = d.path().join("learning").join(RULES_FILE);
        let mut set = RuleSet::default();
        assert!(set.insert(rule("b", Kind::Validation)));
        assert!(set.insert(rule("a", Kind::Prevention)));
        assert!(!set.insert(rule("a", Kind::Prevention)), "no duplicates");
        set.save(&path).expect("save");
        let first = fs::read_to_string(&path).expect("read");
        let loaded = RuleSet::load(&path).expect("load");
        assert_eq!(loaded, set);
        assert_eq!(loaded.rules[0].id, "a", "prevention sorts first");
        let mut again = loaded.clone();
        again.save(&path).expect("save again");
        assert_eq!(
            fs::read_to_string(&path).expect("read"),
            first,
            "saving is deterministic"
        );
        assert!(
            first.contains("\n  \"rules\": ["),
            "pretty-printed: {first}"
        );
    }

    #[test]
    fn a_rule_states_why_it_is_or_is_not_in_force() {
        let mut r = rule("x", Kind::Prevention);
        assert_eq!(r.state().to_string(), "enabled");
        r.enabled = false;
        assert_eq!(r.state().to_string(), "disabled: ");
        r.disabled_reason = Some("0 of 8 runs succeeded".into());
        assert_eq!(r.state().to_string(), "disabled: 0 of 8 runs succeeded");
        r.rejected = true;
        assert_eq!(r.state().to_string(), "rejected");
        r.replay = Some(Replay {
            verdict: "rejected: too many successful runs matched".into(),
            ..Replay::default()
        });
        assert_eq!(
            r.state().to_string(),
            "rejected: too many successful runs matched"
        );
    }

    #[test]
    fn beta_update_disables_a_harmful_rule() {
        let mut r = rule("x", Kind::Prevention);
        for _ in 0..MIN_APPLICATIONS - 1 {
            r.record(false);
        }
        assert!(r.enabled, "not before enough evidence");
        r.record(false);
        assert!(!r.enabled);
        assert!(
            r.disabled_reason
                .as_deref()
                .unwrap_or("")
                .contains("0 of 8"),
            "{:?}",
            r.disabled_reason
        );
        assert!(r.confidence < 0.2);

        let mut good = rule("y", Kind::Prevention);
        for i in 0..40 {
            good.record(i % 10 != 0);
        }
        assert!(good.enabled);
        assert!((good.confidence - 37.0 / 42.0).abs() < 1e-9);
    }

    #[test]
    fn actions_edit_context_and_instructions() {
        let mut ctx = Map::new();
        ctx.insert("timezone".into(), json!(""));
        let mut instr = Vec::new();
        let e = apply(
            &rule("x", Kind::Prevention).actions,
            &mut ctx,
            &mut instr,
            &Setting::default(),
        );
        assert_eq!(ctx["timezone"], "UTC");
        assert_eq!(instr, vec!["Give times with a timezone."]);
        assert_eq!(ctx["_instructions"], json!(["Give times with a timezone."]));
        assert_eq!(e.changes.len(), 2);
        // A value the caller gave is kept unless forced.
        ctx.insert("timezone".into(), json!("CET"));
        apply(
            &rule("x", Kind::Prevention).actions,
            &mut ctx,
            &mut instr,
            &Setting::default(),
        );
        assert_eq!(ctx["timezone"], "CET");
        let e = apply(
            &[Action::RequireField {
                field: "attachments".into(),
                message: "list the attachments".into(),
            }],
            &mut ctx,
            &mut instr,
            &Setting::default(),
        );
        assert_eq!(e.refused.as_deref(), Some("list the attachments"));
        apply(
            &[Action::AddFlag {
                flag: "rephrase".into(),
            }],
            &mut ctx,
            &mut instr,
            &Setting::default(),
        );
        assert_eq!(ctx["_flags"], json!(["rephrase"]));
    }

    #[test]
    fn use_default_never_invents_a_value() {
        let fix = "pass -c timezone=...";
        let actions = [Action::UseDefault {
            field: "timezone".into(),
            fix: fix.into(),
        }];
        let handler = Setting {
            defaults: None,
            model_answers: false,
            given: None,
        };
        // No default, no model: refused with the fix, nothing set.
        let mut ctx = Map::new();
        ctx.insert("timezone".into(), json!(""));
        let e = apply(&actions, &mut ctx, &mut Vec::new(), &handler);
        assert_eq!(e.refused.as_deref(), Some(fix));
        assert_eq!(ctx["timezone"], "");
        // A model can be told it is unknown: not refused, still nothing set.
        let model = Setting {
            model_answers: true,
            ..handler
        };
        let e = apply(&actions, &mut ctx, &mut Vec::new(), &model);
        assert!(e.refused.is_none() && e.changes.is_empty(), "{e:?}");
        assert_eq!(ctx["timezone"], "");
        // The operator's default is used, and said.
        let defaults = json!({"timezone": "Europe/Berlin"})
            .as_object()
            .cloned()
            .expect("object");
        let with_default = Setting {
            defaults: Some(&defaults),
            ..handler
        };
        let e = apply(&actions, &mut ctx, &mut Vec::new(), &with_default);
        assert!(e.refused.is_none());
        assert_eq!(ctx["timezone"], "Europe/Berlin");
        assert!(
            e.notices[0].contains("Europe/Berlin") && e.notices[0].contains("[defaults]"),
            "{e:?}"
        );
        // A value the user gave wins over the default.
        ctx.insert("timezone".into(), json!("Asia/Tokyo"));
        let e = apply(&actions, &mut ctx, &mut Vec::new(), &with_default);
        assert_eq!(ctx["timezone"], "Asia/Tokyo");
        assert!(e.notices.is_empty() && e.changes.is_empty());
    }

    #[test]
    fn set_field_replaces_a_declared_default_but_not_a_given_value() {
        let actions = [Action::SetField {
            field: "rephrase_spam".into(),
            value: json!(true),
            force: false,
        }];
        // The skill declares `rephrase_spam: false`; the caller gave nothing.
        let mut ctx = Map::new();
        ctx.insert("rephrase_spam".into(), json!(false));
        let nothing_given = Map::new();
        let e = apply(
            &actions,
            &mut ctx,
            &mut Vec::new(),
            &Setting {
                given: Some(&nothing_given),
                ..Setting::default()
            },
        );
        assert_eq!(ctx["rephrase_spam"], true, "{e:?}");
        assert_eq!(e.changes, ["set rephrase_spam = true"]);
        // The caller said false: kept.
        ctx.insert("rephrase_spam".into(), json!(false));
        let given = ctx.clone();
        let e = apply(
            &actions,
            &mut ctx,
            &mut Vec::new(),
            &Setting {
                given: Some(&given),
                ..Setting::default()
            },
        );
        assert_eq!(ctx["rephrase_spam"], false);
        assert!(e.changes.is_empty());
    }
}
