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

#[test]
fn slugs_and_paths_are_checked_before_anything_is_written() {
    let ws = workspace();
    let writer = SkillWriter::new(&ws.paths());
    let lock = writer.lock().expect("lock");
    let long = "a".repeat(65);
    for bad in [
        "../x", "/etc/x", "a/b", "", &long, "héllo", "Upper", "x y", ".", "..",
    ] {
        let c = Capabilities::default();
        let e = Expect {
            name: bad,
            capabilities: &c,
            allowed_tools: None,
            handler: None,
            limits: LimitSpec::default(),
            bounded: true,
        };
        let err = writer.create(&lock, bad, &simple(bad), &e).expect_err(bad);
        assert!(matches!(err, ForgeError::BadSlug(_)), "{bad}: {err}");
    }
    assert!(
        !writer.forged_root().exists(),
        "a refused slug touches nothing, not even the forged root"
    );
    let ok = "a".repeat(64);
    let c = Capabilities::default();
    let e = Expect {
        name: &ok,
        capabilities: &c,
        allowed_tools: None,
        handler: None,
        limits: LimitSpec::default(),
        bounded: true,
    };
    writer
        .create(&lock, &ok, &simple(&ok), &e)
        .expect("64 characters are fine");
    let err = writer
        .create(&lock, &ok, &simple(&ok), &e)
        .expect_err("exists");
    assert!(matches!(err, ForgeError::Exists(_)), "{err}");
}

#[test]
fn a_symlinked_forged_root_or_skill_folder_is_refused_and_nothing_written() {
    let ws = workspace();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let paths = ws.paths();
    let root = paths.forged_root();
    std::os::unix::fs::symlink(elsewhere.path(), &root).expect("symlink the forged root");
    let writer = SkillWriter::new(&paths);
    let lock = writer.lock().expect("lock");
    let c = Capabilities::default();
    let e = Expect {
        name: "evil",
        capabilities: &c,
        allowed_tools: None,
        handler: None,
        limits: LimitSpec::default(),
        bounded: true,
    };
    let err = writer
        .create(&lock, "evil", &simple("evil"), &e)
        .expect_err("link");
    assert!(
        matches!(err, ForgeError::Link(_) | ForgeError::OutsideRoot { .. }),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(elsewhere.path()).expect("ls").count(), 0);

    // A skill folder that is a link out of a real forged root.
    std::fs::remove_file(&root).expect("unlink");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::os::unix::fs::symlink(elsewhere.path(), root.join("evil")).expect("symlink");
    let err = writer
        .create(&lock, "evil", &simple("evil"), &e)
        .expect_err("link");
    assert!(matches!(err, ForgeError::Link(_)), "{err}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).expect("ls").count(), 0);

    // Replacing a file outside every editable root.
    let outside = elsewhere.path().join("SKILL.md");
    std::fs::write(&outside, simple("evil")).expect("write");
    let old = parse_skill(simple("evil").as_bytes(), "evil").expect("parse");
    let err = writer
        .replace(
            &lock,
            &outside,
            simple("evil").as_bytes(),
            &simple("evil").replace("A test", "An evil"),
            &Expect::replacing(&old),
        )
        .expect_err("outside");
    assert!(matches!(err, ForgeError::OutsideRoot { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(&outside).expect("read"),
        simple("evil")
    );
}

#[test]
fn near_duplicates_are_skipped_with_a_note() {
    let ws = workspace();
    let writer = SkillWriter::new(&ws.paths());
    let cat = catalog(&ws);
    let config = CreateConfig::default();
    let never = |_: &str| None;
    let around = Neighbours {
        catalog: &cat,
        last_used: &never,
    };
    let tools = ["read_file", "write_file", "read_file"];
    let first = create::draft_from_run(
        &run_of(1, "summarize the q3 sales notes", &tools),
        &caps(),
        &config,
    )
    .expect("qualifies");
    let out = create::write(&writer, &first, (&caps(), None), &config, &around).expect("write");
    assert!(matches!(out, CreateOutcome::Written { .. }), "{out:?}");
    let again = create::draft_from_run(
        &run_of(2, "summarize the q4 sales notes", &tools),
        &caps(),
        &config,
    )
    .expect("qualifies");
    let out = create::write(&writer, &again, (&caps(), None), &config, &around).expect("write");
    match out {
        CreateOutcome::NearDuplicate { of, similarity } => {
            assert_eq!(of, first.name);
            assert!(similarity > 0.85, "{similarity}");
        }
        other => panic!("expected a near-duplicate, got {other:?}"),
    }
    assert_eq!(writer.forged_slugs(), vec![first.name.clone()]);
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

#[test]
fn past_max_skills_the_least_recently_used_forged_skill_is_evicted_and_logged() {
    let ws = workspace();
    let writer = SkillWriter::new(&ws.paths());
    let cat = catalog(&ws);
    let config = CreateConfig {
        max_skills: 2,
        ..CreateConfig::default()
    };
    let drafts: Vec<_> = [
        ("alpha beta", vec!["read_file", "read_file", "read_file"]),
        (
            "gamma delta",
            vec!["write_file", "write_file", "write_file"],
        ),
        (
            "epsilon zeta",
            vec!["http_fetch", "http_fetch", "http_fetch"],
        ),
    ]
    .iter()
    .enumerate()
    .map(|(i, (task, tools))| {
        create::draft_from_run(&run_of(i as i64, task, tools), &caps(), &config).expect("qualifies")
    })
    .collect();
    // "alpha-beta" was used most recently, "gamma-delta" long ago.
    let last_used = |name: &str| match name {
        "alpha-beta" => Some(i64::MAX / 2),
        "gamma-delta" => Some(1),
        _ => None,
    };
    let around = Neighbours {
        catalog: &cat,
        last_used: &last_used,
    };
    for d in &drafts[..2] {
        create::write(&writer, d, (&caps(), None), &config, &around).expect("write");
    }
    let (out, log) =
        captured(|| create::write(&writer, &drafts[2], (&caps(), None), &config, &around));
    match out.expect("write") {
        CreateOutcome::Written { name, evicted, .. } => {
            assert_eq!(name, "epsilon-zeta");
            assert_eq!(evicted, vec!["gamma-delta".to_owned()]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(writer.forged_slugs(), vec!["alpha-beta", "epsilon-zeta"]);
    assert!(
        log.contains("WARN") && log.contains("evicted") && log.contains("gamma-delta"),
        "{log}"
    );
    let events = history::events(&writer.forge_dir(), "gamma-delta");
    assert_eq!(events.last().map(|e| e.kind), Some(EventKind::Evicted));
    // The workspace skill is never a candidate.
    assert!(skill_md(&ws).is_file());
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

#[test]
fn every_invalid_proposal_is_refused_with_its_reason_and_the_file_is_byte_identical() {
    let ws = workspace();
    let before = std::fs::read(skill_md(&ws)).expect("read");
    let big = format!("{HEAD}---\n\n{}\n", "x".repeat(70 << 10));
    let cases: Vec<(&str, ScriptTurn)> = vec![
        ("JSON", text("Sure! Here is a better skill.")),
        ("skill_md", text(r#"{"improved": true, "reason": "x"}"#)),
        (
            "name",
            reply(&format!(
                "{}---\nBody.\n",
                HEAD.replace("name: notes-helper", "name: other")
            )),
        ),
        (
            "description",
            reply(
                "---\nname: notes-helper\nallowed-tools: [read_file, write_file]\n---\n\nBody paragraph.\n",
            ),
        ),
        (
            "capabilities",
            reply(&format!(
                "{HEAD}      http: [evil.example.com]\n---\nBody.\n"
            )),
        ),
        (
            "allowed-tools",
            reply(&format!(
                "{}---\nBody.\n",
                HEAD.replace(
                    "[read_file, write_file]",
                    "[read_file, write_file, http_fetch]"
                )
            )),
        ),
        (
            "allowed-tools",
            reply(&format!(
                "{}---\nBody.\n",
                HEAD.replace("allowed-tools: [read_file, write_file]\n", "")
            )),
        ),
        (
            "handler",
            reply(&format!("{HEAD}    handler: evil.wasm\n---\nBody.\n")),
        ),
        (
            "limits",
            reply(&format!(
                "{HEAD}    limits: {{ memory_mb: 512 }}\n---\nBody.\n"
            )),
        ),
        ("bytes", reply(&big)),
        (
            "front matter",
            reply("Just a better body, no front matter."),
        ),
        ("front matter", reply("---\nname: [unclosed\n---\nBody.\n")),
    ];
    for (why, turn) in cases {
        let out = improve_once(&ws, turn, 0);
        match &out {
            ImproveOutcome::Rejected { reason } => {
                assert!(
                    reason.contains(why),
                    "case `{why}`: the reason should say so: {reason}"
                )
            }
            other => panic!("case `{why}`: expected a rejection, got {other:?}"),
        }
        assert_eq!(
            std::fs::read(skill_md(&ws)).expect("read"),
            before,
            "case `{why}`: the file must be byte-identical"
        );
    }
    let writer = SkillWriter::new(&ws.paths());
    let events = history::events(&writer.forge_dir(), SKILL);
    assert_eq!(events.len(), 12);
    assert!(events.iter().all(|e| e.kind == EventKind::Rejected));
    assert!(
        history::versions(&writer.forge_dir(), SKILL)
            .expect("versions")
            .is_empty()
    );
    // What a JSON reply cannot carry: bytes that are not UTF-8.
    let old = parse_skill(&before, SKILL).expect("parse");
    assert!(matches!(
        writer::validate(
            b"---\nname: notes-helper\ndescription: \xff\n---\n",
            &Expect::replacing(&old)
        ),
        Err(Invalid::NotUtf8)
    ));
}

#[test]
fn one_attempt_per_cooldown_and_a_second_is_a_silent_no_op() {
    let ws = workspace();
    let first = improve_once(
        &ws,
        text(r#"{"improved": false, "reason": "already clear"}"#),
        3600,
    );
    assert!(
        matches!(first, ImproveOutcome::Declined { .. }),
        "{first:?}"
    );
    let before = std::fs::read(skill_md(&ws)).expect("read");
    // The script has a valid proposal; inside the window it is never asked.
    let cat = catalog(&ws);
    let provider =
        ScriptedProvider::from_turns("test", vec![reply(&format!("{HEAD}---\nBetter.\n"))]);
    let writer = SkillWriter::new(&ws.paths());
    let (second, log) = captured(|| {
        harness::runtime()
            .block_on(skillhost::forge::improve::improve(
                &writer,
                cat.get(SKILL).expect("skill"),
                &[],
                &provider,
                &improve_cfg(3600),
            ))
            .expect("improve")
    });
    assert_eq!(second, ImproveOutcome::Cooldown);
    assert!(provider.requests().is_empty(), "the model is not asked");
    assert!(log.trim().is_empty(), "silent: {log}");
    assert_eq!(std::fs::read(skill_md(&ws)).expect("read"), before);
    assert_eq!(history::events(&writer.forge_dir(), SKILL).len(), 1);
}

#[test]
fn an_improvement_keeps_history_and_rollback_restores_the_exact_bytes() {
    let ws = workspace();
    let original = std::fs::read(skill_md(&ws)).expect("read");
    let out = improve_once(
        &ws,
        reply(&format!("{HEAD}---\n\nBetter instructions.\n")),
        0,
    );
    assert!(
        matches!(
            out,
            ImproveOutcome::Improved {
                saved_version: 1,
                ..
            }
        ),
        "{out:?}"
    );
    let improved = std::fs::read(skill_md(&ws)).expect("read");
    let parsed = parse_skill(&improved, SKILL).expect("parses");
    assert_eq!(parsed.description, "Helps with note files, better.");
    let trail = &parsed.meta.skillhost.history;
    assert_eq!(trail.len(), 1, "{trail:?}");
    assert_eq!(trail[0]["reason"], "clearer");
    assert_eq!(
        trail[0]["previous"],
        skillhost::skill::content_version(&original)
    );
    assert!(
        trail[0]["updated_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );

    // Through the CLI: history lists the saved version; rollback restores it.
    let h = ws.run_cli(&["skills", "history", SKILL]);
    assert_eq!(h.code, 0, "{}", h.stderr);
    assert!(h.stdout.contains("saved versions"), "{}", h.stdout);
    assert!(h.stdout.contains("improved"), "{}", h.stdout);
    let r = ws.run_cli(&["skills", "rollback", SKILL]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("restored version 1"), "{}", r.stdout);
    assert_eq!(std::fs::read(skill_md(&ws)).expect("read"), original);
    let writer = SkillWriter::new(&ws.paths());
    let versions = history::versions(&writer.forge_dir(), SKILL).expect("versions");
    assert_eq!(versions.len(), 2, "the rolled-back content is kept too");
    // Rolling back the rollback gives the improvement again.
    let r = ws.run_cli(&["skills", "rollback", SKILL, "2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::read(skill_md(&ws)).expect("read"), improved);
    let r = ws.run_cli(&["skills", "rollback", SKILL, "9"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("no saved version 9"), "{}", r.stderr);
}

#[test]
fn an_improved_skill_with_a_grant_is_told_its_grant_no_longer_applies() {
    let ws = workspace();
    let g = ws.run_cli(&["skills", "grant", SKILL]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    std::fs::write(
        ws.workspace.join("improve.json"),
        serde_json::to_string(&vec![reply(&format!("{HEAD}---\n\nBetter.\n"))]).expect("json"),
    )
    .expect("write");
    let r = ws.run_cli(&[
        "skills",
        "improve",
        SKILL,
        "--model",
        "scripted:improve.json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("improved `notes-helper`"), "{}", r.stdout);
    assert!(
        r.stdout.contains("new fingerprint") && r.stdout.contains("no longer applies"),
        "{}",
        r.stdout
    );
}

#[test]
fn bundled_and_path_skills_are_never_modified() {
    let ws = workspace();
    ws.add_skill("from-path", "", None);
    let mut paths = ws.paths();
    let bundled = skillhost::bundled::materialize(&ws.home).expect("bundled");
    paths.bundled = Some(bundled.clone());
    let cat = Catalog::load(&paths.roots(), &LoadOptions::default());
    let writer = SkillWriter::new(&paths);
    let bundled_skill = cat
        .skills()
        .iter()
        .find(|s| s.source == Source::Bundled)
        .expect("a bundled skill");
    let path_skill = cat.get("from-path").expect("path skill");
    let snapshot = ws_files(&bundled);
    for skill in [bundled_skill, path_skill] {
        let provider = ScriptedProvider::from_turns("t", vec![reply(&simple(&skill.name))]);
        let e = harness::runtime()
            .block_on(skillhost::forge::improve::improve(
                &writer,
                skill,
                &[],
                &provider,
                &improve_cfg(0),
            ))
            .expect_err("not editable");
        assert!(matches!(e, ForgeError::NotEditable { .. }), "{e}");
        assert!(provider.requests().is_empty());
        let e = history::rollback(&writer, skill, None).expect_err("not editable");
        assert!(matches!(e, ForgeError::NotEditable { .. }), "{e}");
        // Even asked directly, the writer refuses a file outside its roots.
        let old = parse_skill(&std::fs::read(&skill.path).expect("read"), &skill.name).expect("p");
        let lock = writer.lock().expect("lock");
        let current = std::fs::read(&skill.path).expect("read");
        let e = writer
            .replace(
                &lock,
                &skill.path,
                &current,
                &simple(&skill.name),
                &Expect::replacing(&old),
            )
            .expect_err("outside");
        assert!(
            matches!(e, ForgeError::OutsideRoot { .. } | ForgeError::BadSlug(_)),
            "{e}"
        );
    }
    assert_eq!(ws_files(&bundled), snapshot);
}

fn ws_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(b) = std::fs::read(&p) {
                out.push((p, b));
            }
        }
    }
    out.sort();
    out
}

/// A runner with `provider` that forges (and does not improve).
fn forging_runner(ws: &Workspace, provider: Arc<ScriptedProvider>) -> skillhost::exec::Runner {
    let mut config = Config::default();
    config.forge.improve.enabled = false;
    skillhost::exec::Runner::new(ws.paths(), config, catalog(ws)).with_provider(provider)
}

/// Runs `notes-helper` copying notes/a.md to out/a.md; waits for the
/// forging that follows.
fn copy_a(runner: &skillhost::exec::Runner) -> skillhost::exec::RunOutcome {
    let out = harness::run(
        runner,
        SKILL,
        "copy the note over",
        json!({"src": "notes/a.md", "dst": "out/a.md"}),
    );
    assert!(out.succeeded(), "{:?}", out.failure);
    assert!(runner.flush());
    out
}

#[test]
fn a_run_becomes_a_pipeline_skill_that_the_next_run_in_the_same_process_uses() {
    let ws = workspace();
    let mut turns = copy_turns("notes/a.md", "out/a.md", "Alpha note: sales grew.");
    turns.push(naming(
        "copy-note",
        "Copies a note from notes/ to out/ and reads the copy back.",
    ));
    let provider = Arc::new(ScriptedProvider::from_turns("test", turns));
    let paths = ws.paths();
    let runner = forging_runner(&ws, provider.clone());
    let rx = runner.catalog_cell().subscribe();
    let out = copy_a(&runner);
    let path = paths.forged_root().join("copy-note/SKILL.md");
    let text = std::fs::read_to_string(&path).expect("forged SKILL.md");
    let parsed = parse_skill(text.as_bytes(), "copy-note").expect("parses");
    let sh = &parsed.meta.skillhost;
    assert_eq!(sh.source.as_deref(), Some("forged"));
    assert_eq!(sh.runs, vec![out.run_id.expect("recorded")]);
    assert_eq!(sh.uses, vec!["read_file", "write_file", "read_file"]);
    assert!(sh.created_at.is_some());
    assert_eq!(sh.capabilities, caps(), "the least the steps needed");
    let steps = sh.pipeline.as_ref().expect("a pipeline")["steps"].clone();
    assert_eq!(steps[0]["args"]["path"], "{{context.src}}");
    assert_eq!(steps[1]["args"]["content"], "{{step[0].result}}");
    assert_eq!(steps[1]["args"]["path"], "{{context.dst}}");
    assert!(parsed.meta.context_fields.contains_key("src"));

    // In the catalog of the same runner, now, and announced.
    assert!(rx.has_changed().unwrap_or(false), "the swap is announced");
    let catalog = runner.catalog();
    let forged = catalog.get("copy-note").expect("in the catalog");
    assert_eq!(forged.source, Source::Forged);
    let out = harness::run(
        &runner,
        "copy-note",
        "copy it",
        json!({"src": "notes/b.md", "dst": "out/b.md"}),
    );
    assert!(out.succeeded(), "{:?}", out.failure);
    assert_eq!(out.tier, skillhost::exec::Tier::Pipeline);
    assert_eq!(
        std::fs::read_to_string(ws.workspace.join("out/b.md")).expect("written"),
        "Beta note: costs fell."
    );
    assert_eq!(provider.requests().len(), 5, "four turns and the naming");
    // `skills list` shows its source.
    let l = ws.run_cli(&["skills", "list", "--format", "json"]);
    let listed = l.json();
    let row = listed
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == "copy-note"))
        .cloned()
        .expect("listed");
    assert_eq!(row["source"], "forged");
}

#[test]
fn a_model_answer_that_is_not_a_usable_name_falls_back_to_the_task() {
    let ws = workspace();
    let mut turns = copy_turns("notes/a.md", "out/a.md", "Alpha note: sales grew.");
    turns.push(text(
        r#"{"name": "../../etc", "description": "x", "instructions": "y"}"#,
    ));
    let runner = forging_runner(&ws, Arc::new(ScriptedProvider::from_turns("test", turns)));
    copy_a(&runner);
    let writer = SkillWriter::new(&ws.paths());
    assert_eq!(writer.forged_slugs(), vec!["copy-note-over"]);
    assert!(!ws.workspace.join(".skillhost/etc").exists());
}

/// A runner whose only automatic forging is mining every `every` runs.
fn mining_runner(ws: &Workspace, every: u64) -> skillhost::exec::Runner {
    let mut config = Config::default();
    config.forge.improve.enabled = false;
    config.forge.mine.auto_every = every;
    let provider = ScriptedProvider::from_turns("test", vec![text("nothing to copy")]);
    skillhost::exec::Runner::new(ws.paths(), config, catalog(ws)).with_provider(Arc::new(provider))
}

/// One run of `notes-helper` that makes no tool call (so it forges
/// nothing itself); waits for what follows it on the writer.
fn idle_run(runner: &skillhost::exec::Runner) {
    let out = harness::run(runner, SKILL, "anything to copy?", json!({}));
    assert!(out.succeeded(), "{:?}", out.failure);
    assert!(runner.flush());
}

#[test]
fn mining_runs_by_itself_every_n_runs_and_writes_a_recurring_sequence_once() {
    let ws = workspace();
    let store = skillhost::exec::open_store(&ws.paths(), &Default::default()).expect("store");
    let seq = ["read_file", "write_file", "read_file"];
    let planted: Vec<RunRecord> = (0..5).map(|_| run_of(0, "copy a note", &seq)).collect();
    let ids = store.record_runs(&planted).expect("record");
    drop(store);
    let writer = SkillWriter::new(&ws.paths());

    // Off: six runs stored, no pass.
    idle_run(&mining_runner(&ws, 0));
    assert!(writer.forged_slugs().is_empty());

    // Every 7 runs: the seventh crosses it.
    let runner = mining_runner(&ws, 7);
    let rx = runner.catalog_cell().subscribe();
    idle_run(&runner);
    let slugs = writer.forged_slugs();
    assert_eq!(slugs.len(), 1, "{slugs:?}");
    let text = std::fs::read_to_string(writer.forged_root().join(&slugs[0]).join("SKILL.md"))
        .expect("forged");
    let parsed = parse_skill(text.as_bytes(), &slugs[0]).expect("parses");
    assert_eq!(parsed.meta.skillhost.uses, seq);
    assert_eq!(
        parsed.meta.skillhost.runs, ids,
        "cites every supporting run"
    );
    assert!(
        rx.has_changed().unwrap_or(false),
        "the new catalog is announced"
    );
    assert!(runner.catalog().get(&slugs[0]).is_some());

    // The next pass finds the same sequence: a near-duplicate, not a second skill.
    drop(runner);
    idle_run(&mining_runner(&ws, 1));
    assert_eq!(writer.forged_slugs(), slugs);
}

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

#[test]
fn two_processes_forging_at_once_lose_nothing_and_leave_no_partial_file() {
    let ws = workspace();
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[forge.improve]\nenabled = false\n",
    )
    .expect("config");
    write_script(
        &ws,
        "a.json",
        "alpha-copier",
        "Mirrors alpha files between folders.",
        "notes/a.md",
        "out/a.md",
    );
    write_script(
        &ws,
        "b.json",
        "beta-archiver",
        "Archives beta documents for later review.",
        "notes/b.md",
        "out/b.md",
    );
    let spawn = |script: &str, src: &str, dst: &str| {
        ws.cli()
            .args([
                "run",
                "--skill",
                SKILL,
                "--model",
                &format!("scripted:{script}"),
            ])
            .args(["-c", &format!("src={src}"), "-c", &format!("dst={dst}")])
            .arg("copy the note over")
            // Each write pauses halfway, so the two overlap.
            .env("SKILLHOST_TEST_FORGE_PAUSE_MS", "300")
            .env("RUST_LOG", "skillhost=debug")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let a = spawn("a.json", "notes/a.md", "out/a.md");
    let b = spawn("b.json", "notes/b.md", "out/b.md");
    let mut logs = String::new();
    for child in [a, b] {
        let out = harness::CliResult::from(child.wait_with_output().expect("wait"));
        assert_eq!(out.code, 0, "{}", out.stderr);
        logs.push_str(&out.stderr);
    }
    let writer = SkillWriter::new(&ws.paths());
    // The logs say why, should a skill be missing (this failed once, under
    // load, and did not reproduce).
    assert_eq!(
        writer.forged_slugs(),
        vec!["alpha-copier", "beta-archiver"],
        "logs of both processes:\n{logs}"
    );
    for name in ["alpha-copier", "beta-archiver"] {
        let dir = writer.forged_root().join(name);
        let bytes = std::fs::read(dir.join("SKILL.md")).expect("read");
        let parsed = parse_skill(&bytes, name).expect("parses");
        assert_eq!(parsed.name, name);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .expect("ls")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["SKILL.md"], "no temporary file left");
    }
}

#[test]
fn kill_9_in_the_middle_of_improvement_writes_leaves_the_old_or_the_new_file() {
    let kills: usize = std::env::var("SKILLHOST_TEST_FORGE_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let ws = workspace();
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[forge.improve]\ncooldown_secs = 0\n",
    )
    .expect("config");
    let dir = skill_md(&ws).parent().expect("dir").to_path_buf();
    let pause_ms = 200u64;
    let (mut killed_mid_write, mut kept_old, mut got_new) = (0, 0, 0);
    for i in 0..kills {
        let old = std::fs::read(skill_md(&ws)).expect("read");
        let script = format!("improve-{i}.json");
        let proposal = format!(
            "---\nname: notes-helper\ndescription: Version {i}.\nallowed-tools: [read_file, write_file]\nmetadata:\n  skillhost:\n    capabilities:\n      files: {{ read: [\"workspace:notes\"], write: [\"workspace:out\"] }}\n---\n\n{}\n",
            format!("Instructions, version {i}. ").repeat(200)
        );
        std::fs::write(
            ws.workspace.join(&script),
            serde_json::to_string(&vec![reply(&proposal)]).expect("json"),
        )
        .expect("script");
        let mut child = ws
            .cli()
            .args([
                "skills",
                "improve",
                SKILL,
                "--model",
                &format!("scripted:{script}"),
            ])
            .env("SKILLHOST_TEST_FORGE_PAUSE_MS", pause_ms.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        // Wait until the temporary file exists (the write has begun), or
        // the process ended.
        let mut saw_temp = false;
        loop {
            if std::fs::read_dir(&dir).expect("ls").flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".SKILL.md.forge-")
            }) {
                saw_temp = true;
                break;
            }
            if child.try_wait().expect("try_wait").is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        if saw_temp {
            // Half the kills land in the pause; the others a little later,
            // around the rename.
            if i % 2 == 1 {
                std::thread::sleep(std::time::Duration::from_millis(
                    pause_ms + (i as u64 * 7) % 40,
                ));
            }
            let _ = child.kill();
            killed_mid_write += 1;
        }
        let _ = child.wait();
        let now = std::fs::read(skill_md(&ws)).expect("the file is still there");
        let parsed = parse_skill(&now, SKILL).expect("it parses");
        assert!(
            now == old || parsed.description == format!("Version {i}."),
            "iteration {i}: neither the old nor the new file:\n{}",
            String::from_utf8_lossy(&now)
        );
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        if saw_temp {
            if now == old {
                kept_old += 1;
            } else {
                got_new += 1;
            }
        }
    }
    // For the record (`--nocapture`): where the kills landed.
    eprintln!(
        "{killed_mid_write} of {kills} killed mid-write: {kept_old} left the old file, {got_new} the new one"
    );
    assert!(
        killed_mid_write * 2 >= kills,
        "only {killed_mid_write} of {kills} processes were killed mid-write"
    );
}

#[test]
fn a_forge_config_loads_and_a_typo_is_refused() {
    let ws = workspace();
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[forge.create]\nmin_tool_calls = 5\nmax_skills = 7\n[forge.improve]\ncooldown_secs = 60\n",
    )
    .expect("write");
    let c = Config::load(&ws.paths()).expect("load");
    assert_eq!(c.forge.create.min_tool_calls, 5);
    assert_eq!(c.forge.create.max_skills, 7);
    assert_eq!(c.forge.create.similarity, 0.85);
    assert_eq!(c.forge.improve.cooldown_secs, 60);
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[forge.create]\nmin_tool_cals = 5\n",
    )
    .expect("write");
    let e = Config::load(&ws.paths()).expect_err("typo").to_string();
    assert!(e.contains("min_tool_cals"), "{e}");
}

#[test]
fn mcp_clients_hear_tools_list_changed_when_a_skill_is_forged() {
    use std::io::{BufRead, BufReader, Write};
    let ws = workspace();
    // A template makes it an MCP tool; with a model configured it runs
    // the model loop.
    let md = skill_md(&ws);
    let text = std::fs::read_to_string(&md).expect("read");
    let text = text.replace(
        "  skillhost:\n",
        "  skillhost:\n    template: \"{{task}}\"\n",
    );
    std::fs::write(&md, text).expect("write");
    write_script(
        &ws,
        "script.json",
        "copy-note",
        "Copies a note and reads it back.",
        "notes/a.md",
        "out/a.md",
    );
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[model]\nprovider = \"scripted\"\nscript = \"script.json\"\n[forge.improve]\nenabled = false\n",
    )
    .expect("config");
    let mut child = ws
        .cli()
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line)
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });
    let mut send = move |v: Value| {
        writeln!(stdin, "{v}").expect("send");
        stdin.flush().expect("flush");
    };
    // A guard against a hang, not a measurement.
    let next = || {
        rx.recv_timeout(std::time::Duration::from_secs(120))
            .expect("a message from the server")
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "forge-test", "version": "1"}}}),
    );
    let init = next();
    assert_eq!(
        init["result"]["capabilities"]["tools"]["listChanged"], true,
        "{init}"
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "skill_notes-helper",
        "arguments": {"task": "copy the note over", "src": "notes/a.md", "dst": "out/a.md"}}}),
    );
    let (mut answered, mut changed) = (false, false);
    while !(answered && changed) {
        let m = next();
        if m["id"] == 2 {
            assert_eq!(m["result"]["isError"], false, "{m}");
            answered = true;
        } else if m["method"] == "notifications/tools/list_changed" {
            changed = true;
        }
    }
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}));
    let list = loop {
        let m = next();
        if m["id"] == 3 {
            break m;
        }
    };
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"skill_copy-note"), "{names:?}");
    drop(send); // closes stdin: the server ends
    let _ = child.wait();
}
