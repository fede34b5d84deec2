//! The forge: skills written from runs, improved in place, through one
//! checked, atomic writer. Library-level checks of the writer, creation,
//! improvement and history; end to end through a runner (the new skill is
//! in the catalog for the next run); two `skillhost` processes forging at
//! once; and `kill -9` in the middle of improvement writes
//! (`SKILLHOST_TEST_FORGE_KILLS=100` for a hundred; 10 by default).

use crate::harness;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use harness::Workspace;
use serde_json::{Value, json};
use skillhost::config::Config;
use skillhost::forge::create::{self, Neighbours};
use skillhost::forge::history::{self, EventKind};
use skillhost::forge::writer::{self, Expect};
use skillhost::forge::{
    CreateConfig, CreateOutcome, ForgeError, ImproveConfig, ImproveOutcome, Invalid, SkillWriter,
};
use skillhost::llm::{ScriptToolCall, ScriptTurn, ScriptedProvider};
use skillhost::skill::{Capabilities, Catalog, LimitSpec, LoadOptions, Source, parse_skill};
use skillhost::store::{RunRecord, StepRecord};

mod creation;
mod improve;
mod processes;
mod runs;

const SKILL: &str = "notes-helper";

/// A workspace skill (trusted by source) that may read `notes/` and write
/// `out/`, with two notes to work on.
fn workspace() -> Workspace {
    let ws = Workspace::new();
    let dir = ws.workspace.join(".skillhost/skills").join(SKILL);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: notes-helper\ndescription: Helps with note files.\nallowed-tools: [read_file, write_file]\nmetadata:\n  context_fields:\n    src: { type: string, default: \"\" }\n    dst: { type: string, default: \"\" }\n  skillhost:\n    capabilities:\n      files: { read: [\"workspace:notes\"], write: [\"workspace:out\"] }\n---\n\nRead the note and write it where asked.\n",
    )
    .expect("write skill");
    std::fs::create_dir_all(ws.workspace.join("notes")).expect("mkdir");
    std::fs::create_dir_all(ws.workspace.join("out")).expect("mkdir");
    std::fs::write(ws.workspace.join("notes/a.md"), "Alpha note: sales grew.").expect("w");
    std::fs::write(ws.workspace.join("notes/b.md"), "Beta note: costs fell.").expect("w");
    ws
}

fn skill_md(ws: &Workspace) -> PathBuf {
    ws.workspace
        .join(".skillhost/skills")
        .join(SKILL)
        .join("SKILL.md")
}

fn catalog(ws: &Workspace) -> Catalog {
    Catalog::load(&ws.paths().roots(), &LoadOptions::default())
}

fn call(name: &str, args: Value) -> ScriptToolCall {
    ScriptToolCall {
        id: None,
        name: name.into(),
        arguments: args,
    }
}

fn text(t: &str) -> ScriptTurn {
    ScriptTurn {
        text: Some(t.into()),
        ..ScriptTurn::default()
    }
}

/// The model's side of a run that copies `src` to `dst` and reads it back.
fn copy_turns(src: &str, dst: &str, content: &str) -> Vec<ScriptTurn> {
    vec![
        ScriptTurn {
            tool_calls: vec![call("read_file", json!({"path": src}))],
            ..ScriptTurn::default()
        },
        ScriptTurn {
            tool_calls: vec![call("write_file", json!({"path": dst, "content": content}))],
            ..ScriptTurn::default()
        },
        ScriptTurn {
            tool_calls: vec![call("read_file", json!({"path": dst}))],
            ..ScriptTurn::default()
        },
        text("copied"),
    ]
}

fn naming(name: &str, description: &str) -> ScriptTurn {
    text(
        &json!({"name": name, "description": description, "instructions": "Copy the note to the destination and read it back."})
            .to_string(),
    )
}

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

/// A recorded successful model-loop run of `notes-helper` with `tools`.
fn run_of(id: i64, task: &str, tools: &[&str]) -> RunRecord {
    RunRecord {
        id,
        at: 0,
        skill: SKILL.into(),
        skill_version: "v".into(),
        task: task.into(),
        tier: "model".into(),
        success: true,
        failure_class: None,
        failure_message: None,
        context: json!({}),
        output: Some("done".into()),
        duration_us: 1,
        model_calls: 4,
        origin: "test".into(),
        steps: tools
            .iter()
            .enumerate()
            .map(|(i, t)| tool_step(t, json!({"n": i}), json!(format!("result {i}"))))
            .collect(),
        rules_applied: vec![],
    }
}

fn caps() -> Capabilities {
    let mut c = Capabilities::default();
    c.files.read = vec!["workspace:notes".into()];
    c.files.write = vec!["workspace:out".into()];
    c
}

fn simple(name: &str) -> String {
    format!("---\nname: {name}\ndescription: A test skill.\n---\n\nBody.\n")
}

/// Stderr lines of the `tracing` events inside `f`.
fn captured<T>(f: impl FnOnce() -> T) -> (T, String) {
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Sink {
        type Writer = Sink;
        fn make_writer(&'a self) -> Sink {
            self.clone()
        }
    }
    let sink = Sink::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(sink.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let out = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8_lossy(&sink.0.lock().expect("lock")).into_owned();
    (out, text)
}

fn improve_cfg(cooldown_secs: u64) -> ImproveConfig {
    ImproveConfig {
        enabled: true,
        cooldown_secs,
    }
}

fn reply(skill_md: &str) -> ScriptTurn {
    text(&json!({"improved": true, "reason": "clearer", "skill_md": skill_md}).to_string())
}

fn improve_once(ws: &Workspace, turn: ScriptTurn, cooldown: u64) -> ImproveOutcome {
    let cat = catalog(ws);
    let skill = cat.get(SKILL).expect("skill");
    let writer = SkillWriter::new(&ws.paths());
    let provider = ScriptedProvider::from_turns("test", vec![turn]);
    harness::runtime()
        .block_on(skillhost::forge::improve::improve(
            &writer,
            skill,
            &[],
            &provider,
            &improve_cfg(cooldown),
        ))
        .expect("improve")
}

const HEAD: &str = "---\nname: notes-helper\ndescription: Helps with note files, better.\nallowed-tools: [read_file, write_file]\nmetadata:\n  skillhost:\n    capabilities:\n      files: { read: [\"workspace:notes\"], write: [\"workspace:out\"] }\n";

/// The script of one CLI run that forges a skill named `name`.
fn write_script(ws: &Workspace, file: &str, name: &str, description: &str, src: &str, dst: &str) {
    let content = std::fs::read_to_string(ws.workspace.join(src)).expect("note");
    let mut turns = copy_turns(src, dst, &content);
    turns.push(naming(name, description));
    std::fs::write(
        ws.workspace.join(file),
        serde_json::to_string(&turns).expect("json"),
    )
    .expect("write script");
}
