//! `skillhost forge handler`: a scripted model writes a skill's handler,
//! the host builds it from source (cargo + wasm32-wasip2, componentize-js)
//! in a quarantine slot and gates it. A skill that answered on tier 2
//! answers the same on tier 1 with no model call; a wrong handler, a source
//! that reads the host, a build error and a build past its time limit are
//! each refused as they should be, and the skill is left as it was.

use crate::harness;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use harness::Workspace;
use serde_json::json;
use skillhost::config::Config;
use skillhost::exec::{Runner, Tier};
use skillhost::forge::handler::HandlerLang;
use skillhost::gate::author::{self, AttemptOutcome, Authored};
use skillhost::gate_policy::{self as approval, Check, FindingClass, HandlerState, Status};
use skillhost::llm::{Message, ScriptTurn, ScriptedProvider};

mod authoring;
mod build_box;
mod host_secrets;
mod shipped_cases;

const SKILL: &str = "shout";
const TASKS: [&str; 3] = ["hello world", "good morning", "skills are fun"];

const GOOD_RUST: &str = r#"use skillhost_guest::{HandlerResult, Output, Task};

fn handle(task: Task) -> HandlerResult {
    Ok(Output::text(task.description.to_uppercase()))
}

skillhost_guest::export_handler!(handle);
"#;

/// Compiles, answers, but in lower case: the gate's cases catch it.
const WRONG_RUST: &str = r#"use skillhost_guest::{HandlerResult, Output, Task};

fn handle(task: Task) -> HandlerResult {
    Ok(Output::text(task.description.to_lowercase()))
}

skillhost_guest::export_handler!(handle);
"#;

const GOOD_JS: &str = r#"export function handle(task) {
  return { body: task.description.toUpperCase(), contentType: "text/plain", flags: [] };
}
"#;

fn turn(text: &str) -> ScriptTurn {
    ScriptTurn {
        text: Some(text.to_owned()),
        ..ScriptTurn::default()
    }
}

/// A reply holding `source` in a ```FENCE block.
fn source_reply(fence: &str, source: &str) -> ScriptTurn {
    turn(&format!(
        "Here is the handler.\n\n```{fence}\n{source}```\n"
    ))
}

/// The workspace skill `shout`, with no handler: it answers through the model.
fn workspace() -> (Workspace, PathBuf) {
    let ws = Workspace::new();
    let dir = ws.workspace.join(".agents/skills").join(SKILL);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: shout\ndescription: Repeats the task in capital letters.\n---\n\n# Shout\n\nAnswer with the task, every letter in upper case, nothing else.\n",
    )
    .expect("write SKILL.md");
    (ws, dir)
}

fn config() -> Config {
    let mut c = Config::default();
    // Nothing but the runs themselves may ask the scripted model.
    c.forge.improve.enabled = false;
    c.forge.create.enabled = false;
    c
}

/// Runs the three tasks on tier 2 with a model answering in capitals;
/// answers the outputs, which are now recorded runs.
fn answer_on_tier_2(ws: &Workspace) -> Vec<String> {
    let model = Arc::new(ScriptedProvider::from_turns(
        "tier2",
        TASKS.iter().map(|t| turn(&t.to_uppercase())).collect(),
    ));
    let runner = ws.runner(config()).with_provider(model.clone());
    let outputs = TASKS
        .iter()
        .map(|t| {
            let out = harness::run(&runner, SKILL, t, json!({}));
            assert!(out.succeeded(), "{:?}", out.failure);
            assert_eq!(out.tier, Tier::Model);
            out.output.expect("an answer").body
        })
        .collect();
    assert!(runner.flush());
    assert_eq!(model.requests().len(), TASKS.len());
    outputs
}

fn author_with(
    runner: &Runner,
    turns: Vec<ScriptTurn>,
    lang: Option<HandlerLang>,
) -> (Result<Authored, author::AuthorError>, Arc<ScriptedProvider>) {
    let model = Arc::new(ScriptedProvider::from_turns("author", turns));
    let out = harness::runtime().block_on(author::author(runner, model.as_ref(), SKILL, lang));
    (out, model)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

/// The text of the last user message of a request the model got.
fn last_user_text(model: &ScriptedProvider, i: usize) -> String {
    let req = &model.requests()[i];
    req.messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::User(t) => Some(t.clone()),
            _ => None,
        })
        .expect("a user message")
}

/// A written handler passes and the runs after it are tier 1.
fn forge_good_handler(ws: &Workspace) -> (Runner, Vec<String>, Authored) {
    let outputs = answer_on_tier_2(ws);
    let runner = ws.runner(config());
    let (authored, model) = author_with(&runner, vec![source_reply("rust", GOOD_RUST)], None);
    let authored = authored.expect("forge handler");
    assert_eq!(model.requests().len(), 1, "passed on the first try");
    // The request carried the contract, the SDK, the instructions and the cases.
    let req = &model.requests()[0];
    let system = req.system.clone().unwrap_or_default();
    assert!(system.contains("world handler"), "the WIT");
    assert!(system.contains("export_handler"), "the guest SDK");
    let asked = last_user_text(&model, 0);
    assert!(asked.contains("every letter in upper case"), "{asked}");
    for (t, o) in TASKS.iter().zip(&outputs) {
        assert!(asked.contains(&format!("\"task\":\"{t}\"")), "{asked}");
        assert!(asked.contains(&format!("\"expected\":\"{o}\"")), "{asked}");
    }
    (runner, outputs, authored)
}
