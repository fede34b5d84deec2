//! New skills from successful runs.
//!
//! A run qualifies when it succeeded in the model loop with at least
//! `[forge.create] min_tool_calls` successful tool calls. Its successful
//! calls, in order, become:
//!
//! - a **pipeline skill** (`metadata.skillhost.pipeline`) when the sequence
//!   replays: every string argument is the task (`{{task}}`), a context
//!   value (`{{context.KEY}}`, declared in `context_fields`), an earlier
//!   result (`{{step[N].result}}`, also inside a longer string), or a
//!   constant that does not come from this task's words;
//! - otherwise a **written procedure**: the steps as instructions.
//!
//! Reads of the calling skill's own files (`read_skill_file`,
//! `list_skill_files`) are left out: in a new skill they would read the
//! new skill's folder.
//!
//! Capabilities are the least the recorded steps needed, taken from what
//! the skill the run used had in effect: the file grants covering the
//! paths read and written, the hosts fetched. Never more.
//!
//! **Similarity** (near-duplicates): `0.5 × J + 0.5 × T`, where `J` is the
//! Jaccard index of the two descriptions' word sets (lowercase, letters
//! and digits, stop words and the forge's own boilerplate left out) and
//! `T` is `1 − d / max(len)`, with `d` the edit distance between the two
//! tool sequences (each tool one symbol; two empty sequences: 1, one
//! empty: 0). A skill's tool sequence is its `metadata.skillhost.uses`,
//! else its pipeline's tools, else empty. A draft whose similarity to any
//! skill of the catalog or of the forged root is above
//! `[forge.create] similarity` is skipped.
//!
//! - `generalize`: a run's steps as a pipeline with references, and the
//!   least capabilities they needed.
//! - `similarity`: the near-duplicate measure.
//! - `naming`: the name and description a draft gets, from the task's
//!   words or from a model.
//! - `write`: a draft written under the forged root, past near-duplicates
//!   and the cap.

mod generalize;
mod naming;
mod similarity;
mod write;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::{CreateConfig, rfc3339};
use crate::skill::{Capabilities, ContextField};
use crate::store::RunRecord;
use generalize::{least_capabilities, replay};

pub use naming::{default_name, name_with_model};
pub use similarity::similarity;
pub use write::{Neighbours, write};

/// Tools that read the calling skill's own folder.
const OWN_FILE_TOOLS: [&str; 2] = ["read_skill_file", "list_skill_files"];

/// A skill ready to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub name: String,
    pub description: String,
    /// The markdown body.
    pub instructions: String,
    /// The tools it uses, in order.
    pub uses: Vec<String>,
    /// The runs it comes from.
    pub runs: Vec<i64>,
    pub context_fields: BTreeMap<String, ContextField>,
    /// `metadata.skillhost.pipeline`, when the sequence replays.
    pub pipeline: Option<Value>,
    pub capabilities: Capabilities,
    /// The skill the run used.
    pub origin: String,
}

/// What writing a draft came to.
#[derive(Debug, Clone, PartialEq)]
pub enum CreateOutcome {
    Written {
        name: String,
        path: PathBuf,
        /// Forged skills removed to stay within `max_skills`.
        evicted: Vec<String>,
    },
    /// Too close to an existing skill: nothing written.
    NearDuplicate { of: String, similarity: f64 },
}

/// One successful tool call of a run.
#[derive(Debug, Clone)]
struct Call {
    tool: String,
    arguments: Value,
    result: Option<Value>,
}

/// The successful tool calls of a run, in order.
fn calls(run: &RunRecord) -> Vec<Call> {
    run.steps
        .iter()
        .filter(|s| s.kind == "tool" && s.error.is_none())
        .filter_map(|s| {
            Some(Call {
                tool: s.tool.clone()?,
                arguments: s.detail.get("arguments").cloned().unwrap_or(Value::Null),
                result: s.detail.get("result").cloned(),
            })
        })
        .collect()
}

/// Whether `run` may become a skill.
pub fn qualifies(run: &RunRecord, config: &CreateConfig) -> bool {
    run.success && run.tier == "model" && calls(run).len() >= config.min_tool_calls.max(1)
}

/// A deterministic draft from a qualifying run: name and description from
/// the task and the tools. `bound` is what the run's skill had in effect.
/// `None` when the run does not qualify.
pub fn draft_from_run(
    run: &RunRecord,
    bound: &Capabilities,
    config: &CreateConfig,
) -> Option<Draft> {
    if !qualifies(run, config) {
        return None;
    }
    let steps: Vec<Call> = calls(run)
        .into_iter()
        .filter(|c| !OWN_FILE_TOOLS.contains(&c.tool.as_str()))
        .collect();
    if steps.is_empty() {
        return None;
    }
    let uses: Vec<String> = steps.iter().map(|c| c.tool.clone()).collect();
    let context = run.context.as_object().cloned().unwrap_or_default();
    let replay = replay(&steps, &run.task, &context);
    let capabilities = least_capabilities(&steps, bound);
    let name = default_name(&run.task, &uses);
    let description = description(&uses, &run.task, replay.is_some());
    let (pipeline, context_fields) = match replay {
        Some((pipeline, fields)) => (Some(pipeline), fields),
        None => (None, BTreeMap::new()),
    };
    let mut draft = Draft {
        name,
        description,
        instructions: String::new(),
        uses,
        runs: vec![run.id],
        context_fields,
        pipeline,
        capabilities,
        origin: run.skill.clone(),
    };
    draft.instructions = procedure(&draft, &steps, run);
    Some(draft)
}
/// What a draft does: its tools in order, one pipeline when it replays,
/// and the kind of task it was made from.
fn description(uses: &[String], task: &str, replays: bool) -> String {
    let flow = uses.join(" → ");
    let task = crate::llm::excerpt(&one_line(task), 200);
    if replays {
        format!("Runs {flow} as one pipeline, for tasks like \"{task}\".")
    } else {
        format!("A procedure with {flow}, for tasks like \"{task}\".")
    }
}

/// The body of a draft: what it does and the recorded steps.
fn procedure(draft: &Draft, steps: &[Call], run: &RunRecord) -> String {
    let mut s = format!(
        "# {}\n\nForged from run {} of skill `{}`, task: \"{}\".\n\n",
        draft.name,
        run.id,
        run.skill,
        crate::llm::excerpt(&one_line(&run.task), 300)
    );
    if draft.pipeline.is_some() {
        s.push_str(
            "This skill replays the steps below as a pipeline (`metadata.skillhost.pipeline`).\n\n",
        );
    } else {
        s.push_str(
            "Follow these steps, adapting the arguments to the task at hand; each step may use what the steps before it returned.\n\n",
        );
    }
    s.push_str("## Steps\n\n");
    for (i, c) in steps.iter().enumerate() {
        let args = crate::llm::excerpt(&c.arguments.to_string(), 300);
        s.push_str(&format!("{}. `{}` with `{args}`\n", i + 1, c.tool));
    }
    s
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A SKILL.md from front matter and body.
pub(crate) fn compose(front: &Map<String, Value>, body: &str) -> String {
    let yaml = serde_norway::to_string(&Value::Object(front.clone())).unwrap_or_default();
    let yaml = yaml.strip_prefix("---\n").unwrap_or(&yaml);
    format!("---\n{yaml}---\n\n{}\n", body.trim())
}

/// The SKILL.md of a draft.
pub fn render(draft: &Draft, created_at: i64) -> String {
    let mut sh = Map::new();
    sh.insert("source".into(), json!("forged"));
    sh.insert("created_at".into(), json!(rfc3339(created_at)));
    sh.insert("runs".into(), json!(draft.runs));
    sh.insert("uses".into(), json!(draft.uses));
    if draft.capabilities != Capabilities::default() {
        sh.insert(
            "capabilities".into(),
            serde_json::to_value(&draft.capabilities).unwrap_or(Value::Null),
        );
    }
    if let Some(p) = &draft.pipeline {
        sh.insert("pipeline".into(), p.clone());
    }
    let mut metadata = Map::new();
    if !draft.context_fields.is_empty() {
        metadata.insert(
            "context_fields".into(),
            serde_json::to_value(&draft.context_fields).unwrap_or(Value::Null),
        );
    }
    metadata.insert("skillhost".into(), Value::Object(sh));
    let mut allowed: Vec<&str> = Vec::new();
    for t in &draft.uses {
        if !allowed.contains(&t.as_str()) {
            allowed.push(t);
        }
    }
    let mut front = Map::new();
    front.insert("name".into(), json!(draft.name));
    front.insert("description".into(), json!(draft.description));
    front.insert("allowed-tools".into(), json!(allowed));
    front.insert("metadata".into(), Value::Object(metadata));
    compose(&front, &draft.instructions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::parse_skill;
    use crate::store::StepRecord;

    fn tool_step(tool: &str, args: Value, result: Value) -> StepRecord {
        StepRecord {
            kind: "tool".into(),
            tool: Some(tool.into()),
            detail: json!({"kind": "tool", "tool": tool, "arguments": args, "result": result}),
            error: None,
            error_class: None,
            duration_us: 1,
        }
    }

    pub(crate) fn run_with(task: &str, context: Value, steps: Vec<StepRecord>) -> RunRecord {
        RunRecord {
            id: 7,
            at: 0,
            skill: "origin".into(),
            skill_version: "v".into(),
            task: task.into(),
            tier: "model".into(),
            success: true,
            failure_class: None,
            failure_message: None,
            context,
            output: Some("done".into()),
            duration_us: 1,
            model_calls: 4,
            origin: "test".into(),
            steps,
            rules_applied: vec![],
        }
    }

    fn bound() -> Capabilities {
        Capabilities {
            files: crate::skill::FileCapabilities {
                read: vec!["workspace:notes".into(), "workspace:other".into()],
                write: vec!["workspace:out".into()],
            },
            http: vec!["api.example.com".into()],
            ..Capabilities::default()
        }
    }

    #[test]
    fn a_replayable_run_becomes_a_pipeline_with_context_fields_and_references() {
        let run = run_with(
            "summarize the notes",
            json!({"file": "notes/q3.md"}),
            vec![
                tool_step(
                    "read_file",
                    json!({"path": "notes/q3.md"}),
                    json!("Q3 sales grew by 4 percent."),
                ),
                tool_step(
                    "skill_text-summarizer",
                    json!({"task": "Q3 sales grew by 4 percent."}),
                    json!("Sales grew."),
                ),
                tool_step(
                    "write_file",
                    json!({"path": "out/brief.md", "content": "Sales grew."}),
                    json!("ok"),
                ),
            ],
        );
        let d = draft_from_run(&run, &bound(), &CreateConfig::default()).expect("qualifies");
        let p = d.pipeline.clone().expect("replays");
        assert_eq!(p["steps"][0]["args"]["path"], "{{context.file}}");
        assert_eq!(p["steps"][1]["args"]["task"], "{{step[0].result}}");
        assert_eq!(p["steps"][2]["args"]["content"], "{{step[1].result}}");
        assert!(d.context_fields.contains_key("file"));
        assert_eq!(
            d.capabilities.files.read,
            vec!["workspace:notes".to_owned()]
        );
        assert_eq!(d.capabilities.files.write, vec!["workspace:out".to_owned()]);
        assert!(d.capabilities.http.is_empty(), "not used");
        assert_eq!(d.name, "summarize-notes");
        let text = render(&d, 0);
        let parsed = parse_skill(text.as_bytes(), "summarize-notes").expect("parses");
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        assert_eq!(parsed.meta.skillhost.source.as_deref(), Some("forged"));
        assert_eq!(parsed.meta.skillhost.runs, vec![7]);
        assert!(parsed.meta.skillhost.pipeline.is_some());
        assert_eq!(parsed.meta.skillhost.capabilities, d.capabilities);
    }

    #[test]
    fn an_argument_from_the_task_words_makes_a_written_procedure() {
        let run = run_with(
            "turn the Q3 sales notes into a brief",
            json!({}),
            vec![
                tool_step(
                    "read_file",
                    json!({"path": "notes/q3-sales.md"}),
                    json!("text of the notes"),
                ),
                tool_step("read_file", json!({"path": "Q3 sales"}), json!("more")),
                tool_step(
                    "write_file",
                    json!({"path": "out/b.md", "content": "x"}),
                    json!("ok"),
                ),
            ],
        );
        let d = draft_from_run(&run, &bound(), &CreateConfig::default()).expect("qualifies");
        assert!(d.pipeline.is_none());
        assert!(d.instructions.contains("## Steps"), "{}", d.instructions);
        assert!(
            d.description.starts_with("A procedure"),
            "{}",
            d.description
        );
    }

    #[test]
    fn too_few_calls_a_failure_or_another_tier_do_not_qualify() {
        let steps = vec![
            tool_step("read_file", json!({"path": "notes/a"}), json!("a")),
            tool_step("read_file", json!({"path": "notes/b"}), json!("b")),
        ];
        let c = CreateConfig::default();
        assert!(draft_from_run(&run_with("t", json!({}), steps.clone()), &bound(), &c).is_none());
        let mut three = steps.clone();
        three.push(tool_step(
            "read_file",
            json!({"path": "notes/c"}),
            json!("c"),
        ));
        let mut failed = run_with("t", json!({}), three.clone());
        failed.success = false;
        assert!(draft_from_run(&failed, &bound(), &c).is_none());
        let mut pipeline = run_with("t", json!({}), three.clone());
        pipeline.tier = "pipeline".into();
        assert!(draft_from_run(&pipeline, &bound(), &c).is_none());
        assert!(draft_from_run(&run_with("t", json!({}), three), &bound(), &c).is_some());
    }
}
