//! Rules a model proposes for failure classes that no pattern covers.
//!
//! A proposal is advice, not knowledge. Before it may fire it is replayed
//! over the skill's recorded runs: it is kept only when its conditions pick
//! out most failures of the class and few successful runs (the thresholds
//! are `[learning.proposals]`). Otherwise it is stored as rejected with the
//! figures, so the operator sees what was tried and why it was refused, and
//! the model is not asked again until the class has failed twice as often
//! as when the proposal was rejected.
//!
//! A model cannot widen what a skill may do through a proposal: rules only
//! have the rule language's actions, which edit the run's context and the
//! instructions it is given; grants, limits and tool policy stay as they
//! are, and the answer is parsed against that language, never executed.
//!
//! What the replay looks at depends on the rule's kind, because that is
//! what the rule would see when it fires: a prevention rule sees the task
//! and context before the run (no output), a validation rule also sees the
//! answer the run produced, and a recovery rule sees the tool error.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::condition::{self, Condition, Facts};
use super::cycle::slug;
use super::rules::{Action, Kind, Origin, Replay, Rule, RuleSet};
use crate::llm::{ChatRequest, Message, Provider, excerpt};
use crate::store::{FailureGroup, RunRecord};

/// `[learning.proposals]` in skillhost.toml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProposalConfig {
    /// Ask the configured model for rules (no model configured: never).
    pub enabled: bool,
    /// Recorded failures of a class before the model is asked: with fewer,
    /// a replay cannot tell a rule from a coincidence.
    pub min_failures: u64,
    /// Model calls per learning cycle, at most.
    pub max_per_cycle: usize,
    /// Keep a rule only if its conditions match at least this share of the
    /// class's recorded failures ...
    #[serde(deserialize_with = "super::share")]
    pub min_failure_match: f64,
    /// ... and at most this share of the skill's successful runs.
    #[serde(deserialize_with = "super::share")]
    pub max_success_match: f64,
    /// Failed and successful runs shown to the model (each).
    pub examples: usize,
}

impl Default for ProposalConfig {
    fn default() -> Self {
        ProposalConfig {
            enabled: true,
            min_failures: 3,
            max_per_cycle: 3,
            min_failure_match: 0.6,
            max_success_match: 0.1,
            examples: 6,
        }
    }
}

/// Bounds on what a model may propose, so a confused or hostile answer
/// cannot bloat `rules.json` or the prompts the rule later feeds.
const MAX_CONDITIONS: usize = 8;
const MAX_ACTIONS: usize = 8;
const MAX_TEXT: usize = 2_000;
/// Tokens the model may spend on its answer.
const ANSWER_TOKENS: u32 = 1_024;

/// The one slot for the model's rule for `class` in `scope`.
pub fn proposal_id(class: &str, scope: &str) -> String {
    format!("proposed-{}", slug(class, scope))
}

/// Why not to ask the model about `group`, or None to ask. Asked when no
/// pattern covers the class (the caller's job), it failed often enough, no
/// rule addresses it, and any earlier rejected proposal is stale (the class
/// has since failed twice as often). A disabled rule still addresses its
/// class: being switched off, by the operator or by its statistics, is a
/// verdict that stands until the rule is removed (`skillhost rules remove`).
pub fn reason_not_to_ask(
    group: &FailureGroup,
    rules: &RuleSet,
    cfg: &ProposalConfig,
) -> Option<String> {
    let min = cfg.min_failures.max(1);
    if group.count < min {
        return Some(format!("the model is asked once it failed {min} times"));
    }
    let covered = rules
        .rules
        .iter()
        .find(|r| r.class == group.class && r.in_scope(&group.skill) && !r.rejected);
    if let Some(rule) = covered {
        // The operator removed the rule for this class: asking the model
        // for another would undo that decision behind their back.
        if rule.removed {
            return Some(format!(
                "rule {} was removed by the operator (`skillhost rules restore {}`)",
                rule.id, rule.id
            ));
        }
        return Some(format!("rule {} addresses it", rule.id));
    }
    let id = proposal_id(&group.class, &group.skill);
    match rules.get(&id) {
        Some(earlier) if group.count < 2 * earlier.origin.failure_count.max(1) => Some(format!(
            "the model's proposal {id} was rejected; it is asked again once the class failed {} times",
            2 * earlier.origin.failure_count.max(1)
        )),
        _ => None,
    }
}

const SYSTEM: &str = r#"You write rules for skillhost, a host that runs agent skills and learns from their failures. A rule has conditions (all must hold) and actions. Answer with exactly one JSON object and nothing else:

{"kind": "prevention" | "validation" | "recovery",
 "conditions": [{"field": FIELD, "op": OP, "value": VALUE, "not": false}],
 "actions": [ACTION, ...],
 "rationale": "one sentence: why this prevents or catches the failure"}

kind: "prevention" runs before the skill and changes its input; "validation" reads the answer the skill produced and, when the conditions hold, retries once after the actions; "recovery" runs after a tool error of the class.
FIELD: "task.description", "context.NAME" (a context field), "output.body" (the answer; validation and recovery only; for recovery it is the tool's error message).
OP: "equals", "not-equals", "matches" (Rust regex; use (?i) for case-insensitive), "contains", "exists", "missing", "gt", "lt", "in" (value is a list). "not": true inverts a condition.
ACTION: {"action": "set_field", "field": NAME, "value": VALUE} | {"action": "add_flag", "flag": TEXT} | {"action": "add_instruction", "text": TEXT} | {"action": "require_field", "field": NAME, "message": TEXT} | {"action": "use_default", "field": NAME, "fix": TEXT} (a value only the user knows: the operator's default, else the run is refused with TEXT). In a validation rule's add_instruction, {evidence} is replaced by what its matches conditions found (quoted), so the retry tells the model what was wrong.

The conditions must hold for the failing runs and not for the successful ones: the rule is replayed over the recorded runs and discarded otherwise. Prefer conditions on what the task or context says over conditions that match every run."#;

/// The request that asks the model for one rule, showing it failures of
/// the class and, for contrast, successful runs of the same skill.
pub fn request(
    skill: &str,
    description: &str,
    group: &FailureGroup,
    failures: &[Example<'_>],
    successes: &[Example<'_>],
) -> ChatRequest {
    let (note, how) = if group.tool_error {
        (
            " (a tool error inside the run: propose a recovery rule)",
            "had a tool step failing with it",
        )
    } else {
        ("", "failed with it")
    };
    let mut prompt = format!(
        "Skill `{skill}`: {}\n\nFailure class `{}`{note}: {} of the skill's last {} recorded runs {how}.\n",
        excerpt(description, 500),
        group.class,
        group.runs_affected,
        group.runs,
    );
    prompt.push_str("\nFailed runs:\n");
    push_examples(&mut prompt, failures);
    prompt.push_str("\nSuccessful runs:\n");
    if successes.is_empty() {
        prompt.push_str("(none recorded)\n");
    }
    push_examples(&mut prompt, successes);
    prompt.push_str("\nPropose one rule for this failure class.");
    ChatRequest {
        system: Some(SYSTEM.to_owned()),
        messages: vec![Message::User(prompt)],
        tools: Vec::new(),
        max_tokens: Some(ANSWER_TOKENS),
    }
}

fn push_examples(prompt: &mut String, examples: &[Example<'_>]) {
    for e in examples {
        e.write(prompt);
    }
}

/// One recorded run as the model sees it.
pub struct Example<'a> {
    pub run: &'a RunRecord,
    /// For tool errors: the error message.
    pub tool_error: Option<&'a str>,
}

impl Example<'_> {
    fn write(&self, out: &mut String) {
        let r = self.run;
        out.push_str(&format!("- task: {}\n", excerpt(&r.task, 400)));
        out.push_str(&format!(
            "  context: {}\n",
            excerpt(&visible_context(&r.context).to_string(), 600)
        ));
        if let Some(body) = &r.output {
            out.push_str(&format!("  output: {}\n", excerpt(body, 400)));
        }
        if let Some(message) = self.tool_error.or(r.failure_message.as_deref()) {
            out.push_str(&format!("  error: {}\n", excerpt(message, 300)));
        }
    }
}

/// The context without the host's bookkeeping (`_instructions`, `_flags`),
/// which earlier rules wrote and the model should not build on.
fn visible_context(context: &Value) -> Value {
    match context.as_object() {
        Some(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with('_'))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => Value::Object(Map::new()),
    }
}

/// The model's answer, as a rule body.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Answer {
    pub kind: Kind,
    pub conditions: Vec<Condition>,
    pub actions: Vec<Action>,
    #[serde(default)]
    pub rationale: String,
}

/// Reads the model's answer: the JSON object in it (models like to wrap
/// it in prose or a code fence), checked against the rule language and the
/// size bounds. The error says what is wrong, for the rejected record.
pub fn parse(text: &str, group: &FailureGroup) -> Result<Answer, String> {
    let start = text.find('{');
    let end = text.rfind('}');
    let json = match (start, end) {
        (Some(s), Some(e)) if s < e => &text[s..=e],
        _ => return Err("no JSON object in the answer".into()),
    };
    let answer: Answer = serde_json::from_str(json).map_err(|e| e.to_string())?;
    if answer.conditions.is_empty() {
        return Err("no conditions: the rule would fire on every run".into());
    }
    if answer.actions.is_empty() {
        return Err("no actions: the rule would change nothing".into());
    }
    check_size(&answer, json.len())?;
    check_kind(group.tool_error, answer.kind)?;
    condition::compile_all(&answer.conditions).map_err(|e| e.to_string())?;
    Ok(answer)
}

/// At most `MAX_CONDITIONS` conditions and `MAX_ACTIONS` actions, of
/// bounded text.
fn check_size(answer: &Answer, json_len: usize) -> Result<(), String> {
    if answer.conditions.len() > MAX_CONDITIONS || answer.actions.len() > MAX_ACTIONS {
        return Err(format!(
            "{} conditions and {} actions; at most {MAX_CONDITIONS} and {MAX_ACTIONS}",
            answer.conditions.len(),
            answer.actions.len()
        ));
    }
    if json_len > MAX_TEXT * (MAX_CONDITIONS + MAX_ACTIONS) {
        return Err(format!("the rule is {json_len} bytes; too large"));
    }
    let long = answer.actions.iter().any(|a| match a {
        Action::AddInstruction { text } => text.len() > MAX_TEXT,
        Action::RequireField { message, .. } => message.len() > MAX_TEXT,
        Action::UseDefault { fix, .. } => fix.len() > MAX_TEXT,
        _ => false,
    });
    if long {
        return Err(format!("an action's text is over {MAX_TEXT} bytes"));
    }
    Ok(())
}

/// A tool error needs a recovery rule; a failed run a prevention or
/// validation rule.
fn check_kind(tool_error: bool, kind: Kind) -> Result<(), String> {
    match (tool_error, kind) {
        (true, Kind::Recovery) | (false, Kind::Prevention | Kind::Validation) => {}
        (true, _) => return Err("the failure is a tool error: it needs a recovery rule".into()),
        (false, Kind::Recovery) => {
            return Err(
                "a recovery rule only fires on tool errors; this failure ends the run".into(),
            );
        }
    }
    Ok(())
}

/// The recorded runs a proposal is replayed over: the skill's recent runs
/// and, for a tool-error class, the errors of that class in them.
pub struct Evidence<'a> {
    pub runs: &'a [RunRecord],
    pub tool_errors: &'a [(i64, String)],
}

impl<'a> Evidence<'a> {
    fn successes(&self) -> impl Iterator<Item = &'a RunRecord> {
        self.runs.iter().filter(|r| r.success)
    }

    /// The runs that ended with failure `class`.
    fn failures_of<'s>(&self, class: &'s str) -> impl Iterator<Item = &'a RunRecord> + use<'a, 's> {
        self.runs
            .iter()
            .filter(move |r| !r.success && r.failure_class.as_deref() == Some(class))
    }

    fn run(&self, id: i64) -> Option<&'a RunRecord> {
        self.runs.iter().find(|r| r.id == id)
    }

    /// The first tool error of the class recorded in run `id`.
    fn tool_error_in(&self, id: i64) -> Option<&'a str> {
        self.tool_errors
            .iter()
            .find(|(run, _)| *run == id)
            .map(|(_, m)| m.as_str())
    }
}

/// Counts how many failures of the class, and how many successful runs,
/// the conditions match; `verdict` is left for [`judge`].
pub fn replay(
    kind: Kind,
    class: &str,
    conditions: &[Condition],
    evidence: &Evidence<'_>,
) -> Result<Replay, condition::ConditionError> {
    let compiled = condition::compile_all(conditions)?;
    // What the rule sees on a recorded run: a prevention rule fires before
    // there is an answer; a validation rule must find the failure in the
    // answer, never in the label the run was later given.
    let seen = |run: &RunRecord| {
        let answer = match kind {
            Kind::Validation => run.output.as_deref(),
            _ => None,
        };
        holds_on(&compiled, run, answer, None)
    };
    let (successes, successes_matched) = tally(evidence.successes().map(seen));
    let (failures, failures_matched) = if kind == Kind::Recovery {
        tally(evidence.tool_errors.iter().filter_map(|(id, message)| {
            let run = evidence.run(*id)?;
            Some(holds_on(&compiled, run, Some(message), Some(class)))
        }))
    } else {
        tally(evidence.failures_of(class).map(seen))
    };
    Ok(Replay {
        failures,
        failures_matched,
        successes,
        successes_matched,
        verdict: String::new(),
    })
}

/// Whether the conditions hold on a recorded run, with the answer and
/// failure the rule would see.
fn holds_on(
    compiled: &[condition::Compiled],
    run: &RunRecord,
    output: Option<&str>,
    failure: Option<&str>,
) -> bool {
    let empty = Map::new();
    let context = run.context.as_object().unwrap_or(&empty);
    condition::all(
        compiled,
        &Facts {
            task: &run.task,
            skill: &run.skill,
            context,
            output,
            failure,
        },
    )
}

/// How many, and how many matched.
fn tally(matched: impl Iterator<Item = bool>) -> (u64, u64) {
    matched.fold((0, 0), |(n, hit), m| (n + 1, hit + u64::from(m)))
}

/// Keeps or rejects a replayed rule; writes the verdict. True: keep.
pub fn judge(r: &mut Replay, cfg: &ProposalConfig) -> bool {
    let share = |n: u64, of: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let fail_share = share(r.failures_matched, r.failures);
    let success_share = share(r.successes_matched, r.successes);
    let figures = format!(
        "matches {} of {} failures ({:.0}%) and {} of {} successful runs ({:.0}%)",
        r.failures_matched,
        r.failures,
        fail_share * 100.0,
        r.successes_matched,
        r.successes,
        success_share * 100.0
    );
    let why = reason_to_reject(r.failures, fail_share, success_share, cfg);
    r.verdict = match &why {
        None => format!("kept: {figures}"),
        Some(why) => format!("rejected: {why}; {figures}"),
    };
    why.is_none()
}

/// Why a rule that matched these shares of failures and successes is
/// rejected, if it is.
fn reason_to_reject(
    failures: u64,
    fail_share: f64,
    success_share: f64,
    cfg: &ProposalConfig,
) -> Option<String> {
    if failures == 0 {
        Some("no recorded failures to replay it on".to_owned())
    } else if fail_share < cfg.min_failure_match {
        Some(format!(
            "too few failures matched (need at least {:.0}%)",
            cfg.min_failure_match * 100.0
        ))
    } else if success_share > cfg.max_success_match {
        Some(format!(
            "too many successful runs matched (at most {:.0}%)",
            cfg.max_success_match * 100.0
        ))
    } else {
        None
    }
}

/// The rule for a proposal, kept or rejected. `answer` is the parsed
/// answer, or why the answer was not a rule (stored rejected, so the
/// operator sees it and the model is not asked again at once).
pub fn rule(
    group: &FailureGroup,
    model: &str,
    answer: Result<Answer, String>,
    evidence: &Evidence<'_>,
    cfg: &ProposalConfig,
) -> Rule {
    let answer = match answer {
        Ok(a) => a,
        Err(why) => return unusable_answer(group, model, &why),
    };
    let mut figures = match replay(answer.kind, &group.class, &answer.conditions, evidence) {
        Ok(r) => r,
        // `parse` compiled the conditions already; kept for safety.
        Err(e) => Replay {
            verdict: format!("rejected: {e}"),
            ..Replay::default()
        },
    };
    let keep = figures.verdict.is_empty() && judge(&mut figures, cfg);
    let rationale = Some(excerpt(&answer.rationale, MAX_TEXT)).filter(|r| !r.is_empty());
    let mut rule = Rule::new(
        proposal_id(&group.class, &group.skill),
        answer.kind,
        &group.class,
        &group.skill,
        answer.conditions,
        answer.actions,
        proposal_origin(group, model, rationale),
    );
    rule.enabled = keep;
    rule.rejected = !keep;
    rule.replay = Some(figures);
    rule
}

/// Where a proposed rule comes from: the model, on the group's failures.
fn proposal_origin(group: &FailureGroup, model: &str, rationale: Option<String>) -> Origin {
    Origin {
        pattern: "model".into(),
        failures: group.sample_runs.clone(),
        failure_count: group.count,
        model: Some(model.to_owned()),
        rationale,
    }
}

/// A rejected, empty rule saying `why` the model's answer is not one.
fn unusable_answer(group: &FailureGroup, model: &str, why: &str) -> Rule {
    let kind = if group.tool_error {
        Kind::Recovery
    } else {
        Kind::Prevention
    };
    let mut rule = Rule::new(
        proposal_id(&group.class, &group.skill),
        kind,
        &group.class,
        &group.skill,
        Vec::new(),
        Vec::new(),
        proposal_origin(group, model, None),
    );
    rule.enabled = false;
    rule.rejected = true;
    rule.replay = Some(Replay {
        verdict: format!("rejected: the model's answer is not a usable rule: {why}"),
        ..Replay::default()
    });
    rule
}

/// Asks `model` for a rule for `group` and replays it. An unreachable or
/// failing model is an error (nothing is stored; the next cycle asks
/// again); an answer that is not a usable rule is a rejected rule.
pub async fn propose(
    model: &dyn Provider,
    skill_description: &str,
    group: &FailureGroup,
    evidence: &Evidence<'_>,
    cfg: &ProposalConfig,
) -> Result<Rule, crate::llm::LlmError> {
    let failures = failure_examples(group, evidence, cfg.examples);
    let successes: Vec<Example<'_>> = evidence
        .successes()
        .take(cfg.examples)
        .map(|run| Example {
            run,
            tool_error: None,
        })
        .collect();
    let req = request(
        &group.skill,
        skill_description,
        group,
        &failures,
        &successes,
    );
    let answer = model.chat(&req).await?;
    let text = answer.text.unwrap_or_default();
    let parsed = parse(&text, group).map_err(|why| {
        format!(
            "{why} (the answer began: {})",
            excerpt(&text.replace('\n', " "), 160)
        )
    });
    Ok(rule(group, &model.name(), parsed, evidence, cfg))
}

/// Up to `n` failures to show the model: runs with the tool error, or
/// failed runs of the class.
fn failure_examples<'a>(
    group: &FailureGroup,
    evidence: &Evidence<'a>,
    n: usize,
) -> Vec<Example<'a>> {
    if group.tool_error {
        evidence
            .runs
            .iter()
            .filter_map(|run| {
                evidence.tool_error_in(run.id).map(|m| Example {
                    run,
                    tool_error: Some(m),
                })
            })
            .take(n)
            .collect()
    } else {
        evidence
            .failures_of(&group.class)
            .take(n)
            .map(|run| Example {
                run,
                tool_error: None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn group(tool_error: bool) -> FailureGroup {
        FailureGroup {
            skill: "greeter".into(),
            class: "ToneError".into(),
            tool_error,
            count: 4,
            runs_affected: 4,
            runs: 10,
            sample_runs: vec![1, 2],
        }
    }

    fn run(id: i64, task: &str, failure: Option<&str>, output: &str) -> RunRecord {
        RunRecord {
            id,
            at: 0,
            skill: "greeter".into(),
            skill_version: String::new(),
            task: task.into(),
            tier: "template".into(),
            success: failure.is_none(),
            failure_class: failure.map(str::to_owned),
            failure_message: failure.map(|f| format!("{f}: too casual")),
            context: json!({"name": "Ada"}),
            output: Some(output.into()),
            duration_us: 0,
            model_calls: 0,
            origin: String::new(),
            steps: Vec::new(),
            rules_applied: Vec::new(),
        }
    }

    /// Four formal tasks failed with ToneError, six others went well.
    fn runs() -> Vec<RunRecord> {
        let mut v = Vec::new();
        for i in 0..4 {
            v.push(run(
                i,
                &format!("a formal letter #{i}"),
                Some("ToneError"),
                "Hey Ada",
            ));
        }
        for i in 4..10 {
            v.push(run(i, &format!("a note #{i}"), None, "Hey Ada"));
        }
        v
    }

    fn answer(kind: &str, conditions: Value) -> String {
        json!({
            "kind": kind,
            "conditions": conditions,
            "actions": [{"action": "set_field", "field": "greeting", "value": "Dear"}],
            "rationale": "formal tasks need a formal greeting"
        })
        .to_string()
    }

    fn decide(text: &str) -> Rule {
        let runs = runs();
        let evidence = Evidence {
            runs: &runs,
            tool_errors: &[],
        };
        let g = group(false);
        rule(
            &g,
            "scripted:test",
            parse(text, &g),
            &evidence,
            &ProposalConfig::default(),
        )
    }

    #[test]
    fn a_rule_that_singles_out_the_failures_is_kept() {
        let text = format!(
            "Here you go:\n```json\n{}\n```",
            answer(
                "prevention",
                json!([{"field": "task.description", "op": "matches", "value": "(?i)formal"}])
            )
        );
        let r = decide(&text);
        let replay = r.replay.clone().expect("replay figures");
        assert!(r.enabled && !r.rejected, "{replay:?}");
        assert_eq!(
            (
                replay.failures,
                replay.failures_matched,
                replay.successes,
                replay.successes_matched
            ),
            (4, 4, 6, 0)
        );
        assert!(replay.verdict.starts_with("kept: matches 4 of 4 failures"));
        assert_eq!(r.id, "proposed-toneerror-greeter");
        assert_eq!(r.origin.pattern, "model");
        assert_eq!(r.origin.model.as_deref(), Some("scripted:test"));
        assert_eq!(
            r.origin.rationale.as_deref(),
            Some("formal tasks need a formal greeting")
        );
    }

    #[test]
    fn a_rule_that_matches_successes_too_is_rejected_with_figures() {
        let r = decide(&answer(
            "prevention",
            json!([{"field": "context.name", "op": "exists"}]),
        ));
        assert!(r.rejected && !r.enabled);
        let replay = r.replay.expect("figures");
        assert_eq!((replay.failures_matched, replay.successes_matched), (4, 6));
        assert!(
            replay
                .verdict
                .starts_with("rejected: too many successful runs matched (at most 10%)"),
            "{}",
            replay.verdict
        );
    }

    #[test]
    fn a_rule_that_misses_most_failures_is_rejected() {
        let r = decide(&answer(
            "prevention",
            json!([{"field": "task.description", "op": "contains", "value": "#1"}]),
        ));
        assert!(r.rejected);
        let verdict = r.replay.expect("figures").verdict;
        assert!(
            verdict.contains("too few failures matched") && verdict.contains("1 of 4 failures"),
            "{verdict}"
        );
    }

    #[test]
    fn validation_rules_replay_against_the_answer_not_the_label() {
        // Every answer is "Hey Ada": a validation rule on the output cannot
        // tell failures from successes, and a rule on the failure label
        // would only restate it.
        let r = decide(&answer(
            "validation",
            json!([{"field": "output.body", "op": "matches", "value": "^Hey"}]),
        ));
        assert!(r.rejected, "matches every success too");
        let r = decide(&answer(
            "validation",
            json!([{"field": "output.failure", "op": "equals", "value": "ToneError"}]),
        ));
        assert!(r.rejected);
        assert_eq!(r.replay.expect("figures").failures_matched, 0);
    }

    #[test]
    fn answers_that_are_not_rules_are_rejected_with_the_reason() {
        let g = group(false);
        for (text, why) in [
            ("I cannot help with that.", "no JSON object"),
            (
                r#"{"kind": "prevention", "conditions": [], "actions": [{"action": "add_flag", "flag": "x"}]}"#,
                "no conditions",
            ),
            (
                r#"{"kind": "prevention", "conditions": [{"field": "task", "op": "startswith", "value": "x"}], "actions": [{"action": "add_flag", "flag": "x"}]}"#,
                "unknown variant `startswith`",
            ),
            (
                r#"{"kind": "prevention", "conditions": [{"field": "env.HOME", "op": "exists"}], "actions": [{"action": "add_flag", "flag": "x"}]}"#,
                "unknown field `env.HOME`",
            ),
            (
                r#"{"kind": "prevention", "conditions": [{"field": "task", "op": "matches", "value": "("}], "actions": [{"action": "add_flag", "flag": "x"}]}"#,
                "invalid regex",
            ),
            (
                r#"{"kind": "recovery", "conditions": [{"field": "task", "op": "exists"}], "actions": [{"action": "add_flag", "flag": "x"}]}"#,
                "only fires on tool errors",
            ),
            (
                r#"{"kind": "prevention", "conditions": [{"field": "task", "op": "exists"}], "actions": [{"action": "run_shell", "cmd": "rm -rf /"}]}"#,
                "unknown variant `run_shell`",
            ),
        ] {
            let err = parse(text, &g).expect_err(text);
            assert!(err.contains(why), "{text}: {err}");
        }
        let long = json!({
            "kind": "prevention",
            "conditions": [{"field": "task", "op": "exists"}],
            "actions": [{"action": "add_instruction", "text": "x".repeat(MAX_TEXT + 1)}]
        })
        .to_string();
        assert!(parse(&long, &g).expect_err("too long").contains("over"));

        let r = decide("no rule today");
        assert!(r.rejected && r.conditions.is_empty());
        assert!(
            r.replay
                .expect("verdict")
                .verdict
                .contains("not a usable rule: no JSON object")
        );
    }

    #[test]
    fn recovery_rules_replay_over_tool_errors() {
        let mut runs = runs();
        for r in &mut runs {
            r.success = true;
            r.failure_class = None;
        }
        let errors = vec![
            (1, "http_fetch: timed out after 10s".to_owned()),
            (2, "http_fetch: timed out after 10s".to_owned()),
            (3, "http_fetch: connection reset".to_owned()),
        ];
        let evidence = Evidence {
            runs: &runs,
            tool_errors: &errors,
        };
        let conditions = vec![Condition {
            field: "output.body".into(),
            op: condition::Op::Contains,
            value: json!("timed out"),
            not: false,
        }];
        let r = replay(Kind::Recovery, "ToneError", &conditions, &evidence).expect("replay");
        assert_eq!((r.failures, r.failures_matched), (3, 2));
        assert_eq!(r.successes_matched, 0, "no tool error, no match");
    }

    #[test]
    fn the_model_is_asked_once_per_class_until_failures_double() {
        let cfg = ProposalConfig::default();
        let mut g = group(false);
        let mut rules = RuleSet::default();
        let why = |g: &FailureGroup, rules: &RuleSet| reason_not_to_ask(g, rules, &cfg);
        assert_eq!(why(&g, &rules), None);
        g.count = 2;
        assert_eq!(
            why(&g, &rules).as_deref(),
            Some("the model is asked once it failed 3 times")
        );
        g.count = 4;
        rules.insert(decide("nothing"));
        assert!(
            why(&g, &rules)
                .unwrap_or_default()
                .contains("was rejected; it is asked again once the class failed 8 times"),
            "{:?}",
            why(&g, &rules)
        );
        g.count = 8;
        assert_eq!(why(&g, &rules), None, "the class failed twice as often");
        let mut kept = decide(&answer(
            "prevention",
            json!([{"field": "task", "op": "matches", "value": "formal"}]),
        ));
        kept.enabled = false;
        rules.rules.clear();
        rules.insert(kept);
        assert_eq!(
            why(&g, &rules).as_deref(),
            Some("rule proposed-toneerror-greeter addresses it"),
            "even disabled, until removed"
        );
    }

    #[test]
    fn the_prompt_shows_failures_and_successes_without_bookkeeping() {
        let mut runs = runs();
        runs[0].context = json!({"name": "Ada", "_instructions": ["from an old rule"]});
        let failures: Vec<Example<'_>> = runs[..2]
            .iter()
            .map(|run| Example {
                run,
                tool_error: None,
            })
            .collect();
        let successes: Vec<Example<'_>> = runs[4..5]
            .iter()
            .map(|run| Example {
                run,
                tool_error: None,
            })
            .collect();
        let req = request(
            "greeter",
            "Greets people.",
            &group(false),
            &failures,
            &successes,
        );
        let Message::User(text) = &req.messages[0] else {
            panic!("a user message")
        };
        assert!(text.contains("Failure class `ToneError`"));
        assert!(text.contains("a formal letter #0") && text.contains("a note #4"));
        assert!(text.contains("ToneError: too casual"));
        assert!(!text.contains("from an old rule"));
        assert!(req.system.as_deref().unwrap_or("").contains("\"kind\""));
        assert!(req.tools.is_empty());
    }
}
