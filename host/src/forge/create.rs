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

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::history::{self, Event, EventKind};
use super::writer::{Expect, SKILL_FILE, SkillWriter};
use super::{CreateConfig, ForgeError, check_slug, now_secs, rfc3339};
use crate::llm::{ChatRequest, Message, Provider};
use crate::skill::{Capabilities, Catalog, ContextField, FieldKind, LimitSpec, parse_skill};
use crate::store::RunRecord;

/// Tools that read the calling skill's own folder.
const OWN_FILE_TOOLS: [&str; 2] = ["read_skill_file", "list_skill_files"];
/// Results shorter than this are not looked for inside later arguments
/// (a short result such as `ok` would match by chance).
const MIN_REF_LEN: usize = 8;
/// Constants this short are not treated as coming from the task.
const MIN_TASK_WORD: usize = 3;

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
    let flow = uses.join(" → ");
    let task = crate::llm::excerpt(&one_line(&run.task), 200);
    let (description, pipeline, context_fields) = match replay {
        Some((pipeline, fields)) => (
            format!("Runs {flow} as one pipeline, for tasks like \"{task}\"."),
            Some(pipeline),
            fields,
        ),
        None => (
            format!("A procedure with {flow}, for tasks like \"{task}\"."),
            None,
            BTreeMap::new(),
        ),
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

/// The run's steps as a pipeline with references, and the context fields
/// it reads; `None` when some argument is specific to this task.
fn replay(
    steps: &[Call],
    task: &str,
    context: &Map<String, Value>,
) -> Option<(Value, BTreeMap<String, ContextField>)> {
    if steps.iter().any(|c| c.tool == crate::tools::pipeline::NAME) {
        return None;
    }
    let mut fields = BTreeMap::new();
    let mut out = Vec::new();
    for (i, call) in steps.iter().enumerate() {
        let args = generalize(&call.arguments, task, context, &steps[..i], &mut fields)?;
        out.push(json!({ "tool": call.tool, "args": args }));
    }
    Some((json!({ "steps": out, "result": "last" }), fields))
}

fn generalize(
    v: &Value,
    task: &str,
    context: &Map<String, Value>,
    earlier: &[Call],
    fields: &mut BTreeMap<String, ContextField>,
) -> Option<Value> {
    Some(match v {
        Value::String(s) => Value::String(generalize_str(s, task, context, earlier, fields)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| generalize(i, task, context, earlier, fields))
                .collect::<Option<_>>()?,
        ),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| Some((k.clone(), generalize(v, task, context, earlier, fields)?)))
                .collect::<Option<_>>()?,
        ),
        other => other.clone(),
    })
}

fn generalize_str(
    s: &str,
    task: &str,
    context: &Map<String, Value>,
    earlier: &[Call],
    fields: &mut BTreeMap<String, ContextField>,
) -> Option<String> {
    if s.is_empty() {
        return Some(String::new());
    }
    if s == task {
        return Some("{{task}}".into());
    }
    if let Some((k, _)) = context
        .iter()
        .find(|(_, v)| v.as_str().is_some_and(|c| !c.is_empty() && c == s))
    {
        fields.insert(
            k.clone(),
            ContextField {
                kind: FieldKind::String,
                default: None,
                description: None,
                required: true,
            },
        );
        return Some(format!("{{{{context.{k}}}}}"));
    }
    // The latest earlier result found in the string stands for it.
    for (j, call) in earlier.iter().enumerate().rev() {
        let Some(result) = &call.result else { continue };
        let text = crate::tools::pipeline::as_text(result);
        if text.is_empty() {
            continue;
        }
        let reference = format!("{{{{step[{j}].result}}}}");
        if s == text {
            return Some(reference);
        }
        if text.len() >= MIN_REF_LEN && s.contains(&text) {
            return Some(s.replace(&text, &reference));
        }
    }
    let lower_task = task.to_lowercase();
    let from_task = s.len() >= MIN_TASK_WORD && lower_task.contains(&s.to_lowercase());
    // A value that came from this task's words would not fit the next one.
    (!from_task && !s.contains("{{")).then(|| s.to_owned())
}

/// The part of `bound` the steps used: file grants covering the paths
/// read and written, HTTP hosts fetched.
fn least_capabilities(steps: &[Call], bound: &Capabilities) -> Capabilities {
    let mut out = Capabilities::default();
    let covers = |entry: &str, path: &str| {
        entry.strip_prefix("workspace:").is_some_and(|dir| {
            let dir = dir.trim_end_matches('/');
            let dir = if dir == "." { "" } else { dir };
            Path::new(path).strip_prefix(dir).is_ok()
        })
    };
    let keep = |list: &[String], into: &mut Vec<String>, path: &str| {
        if let Some(e) = list.iter().find(|e| covers(e, path))
            && !into.contains(e)
        {
            into.push(e.clone());
            return true;
        }
        false
    };
    for c in steps {
        let arg = |k: &str| c.arguments.get(k).and_then(Value::as_str).unwrap_or("");
        match c.tool.as_str() {
            "read_file" => {
                let path = arg("path");
                if !keep(&bound.files.read, &mut out.files.read, path) {
                    keep(&bound.files.write, &mut out.files.write, path);
                }
            }
            "write_file" => {
                keep(&bound.files.write, &mut out.files.write, arg("path"));
            }
            "http_fetch" => {
                let host = url::Url::parse(arg("url"))
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_owned))
                    .unwrap_or_default();
                if let Some(h) = bound.http.iter().find(|h| host_matches(h, &host))
                    && !out.http.contains(h)
                {
                    out.http.push(h.clone());
                }
            }
            _ => {}
        }
    }
    out
}

fn host_matches(pattern: &str, host: &str) -> bool {
    let (p, h) = (pattern.to_ascii_lowercase(), host.to_ascii_lowercase());
    match p.strip_prefix("*.") {
        Some(suffix) => h.ends_with(&format!(".{suffix}")),
        None => p == h,
    }
}

const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "to",
    "of",
    "in",
    "into",
    "for",
    "and",
    "or",
    "on",
    "with",
    "from",
    "by",
    "at",
    "it",
    "its",
    "this",
    "that",
    "is",
    "be",
    "please",
    "my",
    "me",
    "you",
    "your",
    "as",
    "then",
    "all",
    "some",
    "out",
    "up",
    // The forge's own descriptions.
    "runs",
    "one",
    "pipeline",
    "procedure",
    "tasks",
    "like",
];

/// Lowercase words of letters and digits, without stop words.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(str::to_owned)
        .collect()
}

/// The name a draft gets without a model: the task's first content words,
/// else its tools. Public for the fuzz targets (the `fuzzing` module).
#[doc(hidden)]
pub fn default_name(task: &str, uses: &[String]) -> String {
    let mut parts: Vec<String> = words(task).into_iter().take(4).collect();
    if parts.is_empty() {
        parts = uses
            .iter()
            .map(|t| t.trim_start_matches("skill_").replace('_', "-"))
            .collect();
    }
    let mut name = String::new();
    for p in parts {
        let p: String = p
            .chars()
            .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
            .collect();
        if p.is_empty() || name.len() + p.len() + 1 > 56 {
            continue;
        }
        if !name.is_empty() {
            name.push('-');
        }
        name.push_str(&p);
    }
    if name.is_empty() {
        "forged-skill".into()
    } else {
        name
    }
}

/// Near-duplicate measure; see the module docs.
pub fn similarity(a_desc: &str, a_tools: &[String], b_desc: &str, b_tools: &[String]) -> f64 {
    let a: BTreeSet<String> = words(a_desc).into_iter().collect();
    let b: BTreeSet<String> = words(b_desc).into_iter().collect();
    let union = a.union(&b).count();
    let text = if union == 0 {
        1.0
    } else {
        a.intersection(&b).count() as f64 / union as f64
    };
    let tools = match (a_tools.len(), b_tools.len()) {
        (0, 0) => 1.0,
        (0, _) | (_, 0) => 0.0,
        (n, m) => 1.0 - edit_distance(a_tools, b_tools) as f64 / n.max(m) as f64,
    };
    0.5 * text + 0.5 * tools
}

fn edit_distance(a: &[String], b: &[String]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(x != y);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A skill's tool sequence, for [`similarity`].
fn tool_sequence(meta: &crate::skill::SkillMeta) -> Vec<String> {
    if !meta.skillhost.uses.is_empty() {
        return meta.skillhost.uses.clone();
    }
    meta.skillhost
        .pipeline
        .as_ref()
        .and_then(|p| p.get("steps"))
        .and_then(Value::as_array)
        .map(|steps| {
            steps
                .iter()
                .filter_map(|s| s.get("tool").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
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

const NAMING_SYSTEM: &str = "You turn a successful agent trajectory into a reusable skill. \
Reply with one JSON object and nothing else: {\"name\": \"lowercase-words-with-dashes (at most 64 of a-z, 0-9, _ and -)\", \
\"description\": \"one sentence: what the skill does and when to use it\", \"instructions\": \"markdown instructions for doing such tasks\"}.";

#[derive(Deserialize)]
struct Naming {
    name: String,
    description: String,
    instructions: String,
}

/// Asks the model to name and describe the draft from its trajectory;
/// keeps the deterministic draft when the answer is missing or unusable.
/// True when the model's answer was taken.
pub async fn name_with_model(draft: &mut Draft, run: &RunRecord, provider: &dyn Provider) -> bool {
    let mut prompt = format!(
        "Task: {}\nSkill used: `{}`\nSuccessful tool calls, in order:\n",
        crate::llm::excerpt(&run.task, 500),
        run.skill
    );
    for c in calls(run) {
        prompt.push_str(&format!(
            "- {} {}\n",
            c.tool,
            crate::llm::excerpt(&c.arguments.to_string(), 300)
        ));
    }
    prompt.push_str(&format!(
        "Final answer: {}\n",
        crate::llm::excerpt(run.output.as_deref().unwrap_or(""), 500)
    ));
    let request = ChatRequest {
        system: Some(NAMING_SYSTEM.to_owned()),
        messages: vec![Message::User(prompt)],
        tools: Vec::new(),
        max_tokens: Some(4096),
    };
    let text = match provider.chat(&request).await {
        Ok(r) => r.text.unwrap_or_default(),
        Err(e) => {
            tracing::info!(
                "forge: the model did not name the new skill ({e}); named from the task"
            );
            return false;
        }
    };
    let parsed = text
        .find('{')
        .zip(text.rfind('}'))
        .filter(|(a, b)| a < b)
        .and_then(|(a, b)| serde_json::from_str::<Naming>(&text[a..=b]).ok());
    let Some(n) = parsed else {
        tracing::info!(
            "forge: the model's name for the new skill is not the JSON asked for; named from the task"
        );
        return false;
    };
    let description = one_line(&n.description);
    let good = check_slug(&n.name).is_ok()
        && !description.is_empty()
        && description.len() <= 1024
        && !n.instructions.trim().is_empty()
        && n.instructions.len() <= 16 << 10;
    if !good {
        tracing::info!(
            name = %n.name,
            "forge: the model's name, description or instructions are unusable; named from the task"
        );
        return false;
    }
    let steps = draft
        .instructions
        .split_once("## Steps")
        .map(|(_, s)| format!("\n\n## Recorded steps{s}"))
        .unwrap_or_default();
    draft.name = n.name;
    draft.description = description;
    draft.instructions = format!("{}{steps}", n.instructions.trim());
    true
}

/// What the forge needs to know of the skills around a draft.
pub struct Neighbours<'a> {
    pub catalog: &'a Catalog,
    /// When a forged skill was last used (seconds since the Unix epoch):
    /// its latest recorded run.
    pub last_used: &'a dyn Fn(&str) -> Option<i64>,
}

/// Writes `draft` under the forged root, unless it is a near-duplicate of
/// a skill of the catalog or of the forged root (read from disk, so that a
/// skill another process just forged counts). Past `max_skills` the least
/// recently used forged skill is evicted first. `bound`: what the run's
/// skill had in effect, and its `allowed-tools`.
pub fn write(
    writer: &SkillWriter,
    draft: &Draft,
    bound: (&Capabilities, Option<&[String]>),
    config: &CreateConfig,
    around: &Neighbours<'_>,
) -> Result<CreateOutcome, ForgeError> {
    check_slug(&draft.name)?;
    let lock = writer.lock()?;
    let on_disk = forged_on_disk(writer);
    // The most similar skill first.
    let mut best: Option<(String, f64)> = None;
    let mut consider = |name: &str, desc: &str, tools: &[String]| {
        let s = similarity(&draft.description, &draft.uses, desc, tools);
        if best.as_ref().is_none_or(|(_, b)| s > *b) {
            best = Some((name.to_owned(), s));
        }
    };
    for s in around.catalog.skills() {
        consider(&s.name, &s.description, &tool_sequence(&s.meta));
    }
    for (slug, parsed) in &on_disk {
        consider(slug, &parsed.description, &tool_sequence(&parsed.meta));
    }
    if let Some((of, s)) = best
        && s > config.similarity
    {
        tracing::info!(
            skill = %draft.name,
            similar_to = %of,
            similarity = s,
            "forge: near-duplicate skipped"
        );
        return Ok(CreateOutcome::NearDuplicate { of, similarity: s });
    }
    let taken = |n: &str| around.catalog.get(n).is_some() || on_disk.iter().any(|(s, _)| s == n);
    let name = unique_name(&draft.name, taken);
    let mut evicted = Vec::new();
    let mut present: Vec<String> = on_disk.iter().map(|(s, _)| s.clone()).collect();
    while !present.is_empty() && present.len() >= config.max_skills {
        let Some(victim) = least_recently_used(writer, &present, around.last_used) else {
            break;
        };
        writer.remove(&lock, &victim)?;
        tracing::warn!(
            skill = %victim,
            max_skills = config.max_skills,
            "forge: evicted the least recently used forged skill"
        );
        let _ = history::append(
            &lock,
            &writer.forge_dir(),
            &victim,
            &Event::new(
                EventKind::Evicted,
                format!(
                    "least recently used past max_skills = {}",
                    config.max_skills
                ),
            ),
        );
        present.retain(|p| *p != victim);
        evicted.push(victim);
    }
    let draft = Draft {
        name: name.clone(),
        instructions: draft.instructions.replacen(
            &format!("# {}\n", draft.name),
            &format!("# {name}\n"),
            1,
        ),
        ..draft.clone()
    };
    let text = render(&draft, now_secs());
    let expect = Expect {
        name: &name,
        capabilities: bound.0,
        allowed_tools: bound.1,
        handler: None,
        limits: LimitSpec::default(),
        bounded: true,
    };
    let path = writer.create(&lock, &name, &text, &expect)?;
    let _ = history::append(
        &lock,
        &writer.forge_dir(),
        &name,
        &Event::new(
            EventKind::Created,
            format!("from run(s) {:?} of skill `{}`", draft.runs, draft.origin),
        ),
    );
    tracing::info!(skill = %name, path = %path.display(), "forge: new skill");
    Ok(CreateOutcome::Written {
        name,
        path,
        evicted,
    })
}

/// `base`, or `base-2`, `base-3`, ... when taken.
fn unique_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_owned();
    }
    let stem: String = base.chars().take(60).collect();
    (2..)
        .map(|n| format!("{stem}-{n}"))
        .find(|n| !taken(n))
        .unwrap_or_else(|| base.to_owned())
}

/// The forged skills on disk, parsed.
fn forged_on_disk(writer: &SkillWriter) -> Vec<(String, crate::skill::ParsedSkill)> {
    writer
        .forged_slugs()
        .into_iter()
        .filter_map(|slug| {
            let bytes = std::fs::read(writer.forged_root().join(&slug).join(SKILL_FILE)).ok()?;
            let parsed = parse_skill(&bytes, &slug).ok()?;
            Some((slug, parsed))
        })
        .collect()
}

/// The forged skill used longest ago: its latest run, else when its file
/// was written.
fn least_recently_used(
    writer: &SkillWriter,
    slugs: &[String],
    last_used: &dyn Fn(&str) -> Option<i64>,
) -> Option<String> {
    slugs
        .iter()
        .map(|s| {
            let written = std::fs::metadata(writer.forged_root().join(s).join(SKILL_FILE))
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs() as i64);
            (last_used(s).unwrap_or(written).max(written), s)
        })
        .min()
        .map(|(_, s)| s.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn similarity_is_one_for_the_same_and_low_for_unrelated() {
        let t = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let a = t(&["read_file", "skill_x", "write_file"]);
        assert_eq!(
            similarity("Summarize sales notes", &a, "Summarize sales notes", &a),
            1.0
        );
        let s = similarity(
            "Summarize sales notes",
            &a,
            "Fetch the weather",
            &t(&["http_fetch"]),
        );
        assert!(s < 0.2, "{s}");
        let near = similarity(
            "Runs read_file → write_file, for tasks like \"summarize the q3 sales notes\"",
            &a,
            "Runs read_file → write_file, for tasks like \"summarize the q4 sales notes\"",
            &a,
        );
        assert!(near > 0.85, "{near}");
    }

    #[test]
    fn default_names_are_slugs() {
        for task in [
            "Turn the Q3 sales notes into a brief in out/",
            "",
            "ÉCRIRE ÇA",
            "../../x",
        ] {
            let n = default_name(task, &["skill_text-summarizer".into()]);
            assert!(check_slug(&n).is_ok(), "{task:?} -> {n}");
        }
    }
}
