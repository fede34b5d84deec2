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
use skillhost::gate::policy::{self as approval, Check, FindingClass, HandlerState, Status};
use skillhost::llm::{Message, ScriptTurn, ScriptedProvider};

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

#[test]
fn a_skill_that_answered_on_tier_2_gets_a_handler_and_answers_the_same_on_tier_1() {
    let (ws, dir) = workspace();
    let (runner, outputs, authored) = forge_good_handler(&ws);
    assert_eq!(authored.attempts.len(), 1);
    let attempt = &authored.attempts[0];
    assert!(
        matches!(attempt.outcome, AttemptOutcome::Passed { .. }),
        "{attempt:?}"
    );
    let slot = attempt.slot.clone().expect("a slot");
    assert!(slot.starts_with(ws.workspace.join(".skillhost/quarantine").join(SKILL)));
    assert!(slot.join("gate-report.json").is_file());
    assert!(slot.join("build.log").is_file());
    let admission = authored.admitted.expect("admitted");
    assert_eq!(admission.state, HandlerState::Enabled, "generated: auto");
    let wasm = std::fs::read(dir.join("handler.wasm")).expect("in the skill folder");
    assert_eq!(skillhost::sandbox::artifact_hash(&wasm), admission.artifact);
    let md = std::fs::read_to_string(dir.join("SKILL.md")).expect("SKILL.md");
    assert!(md.contains("handler: handler.wasm"), "{md}");
    assert!(md.contains("handler_generated: true"), "{md}");
    let store = runner.store().expect("store");
    let report = approval::latest_report(store, SKILL)
        .expect("read")
        .expect("stored");
    assert!(report.report.passed());
    assert_eq!(report.report.cases.len(), TASKS.len());

    // The same tasks on tier 1, with a model at hand that is never asked.
    let model = Arc::new(ScriptedProvider::from_turns("unused", Vec::new()));
    let runner = ws.runner(config()).with_provider(model.clone());
    for (t, want) in TASKS.iter().zip(&outputs) {
        let out = harness::run(&runner, SKILL, t, json!({}));
        assert!(out.succeeded(), "{:?}", out.failure);
        assert_eq!(out.tier, Tier::Handler);
        assert_eq!(out.model_calls, 0);
        assert_eq!(&out.output.expect("answer").body, want);
    }
    assert!(model.requests().is_empty(), "no model call on tier 1");

    // `skills rollback` undoes it: the skill answers through the model again.
    let skill = runner.catalog().get(SKILL).cloned().expect("skill");
    let writer = skillhost::forge::SkillWriter::new(&ws.paths());
    skillhost::forge::history::rollback(&writer, &skill, None).expect("rollback");
    let model = Arc::new(ScriptedProvider::from_turns("again", vec![turn("HI")]));
    let runner = ws.runner(config()).with_provider(model);
    let out = harness::run(&runner, SKILL, "hi", json!({}));
    assert_eq!(out.tier, Tier::Model);
}

#[test]
fn a_generated_handler_whose_artifact_changed_after_approval_is_refused() {
    let (ws, dir) = workspace();
    let (_, _, authored) = forge_good_handler(&ws);
    assert_eq!(
        authored.admitted.expect("admitted").state,
        HandlerState::Enabled
    );
    // A workspace skill is not gated by source; its generated handler is.
    assert!(
        !Config::default()
            .gate
            .gates(skillhost::skill::Source::Workspace)
    );
    // Another component, valid and answering, in its place.
    std::fs::copy(harness::guest("echo-guest"), dir.join("handler.wasm")).expect("replace");
    let model = Arc::new(ScriptedProvider::from_turns("unused", Vec::new()));
    let runner = ws.runner(config()).with_provider(model.clone());
    let out = harness::run(&runner, SKILL, "hello world", json!({}));
    let failure = out.failure.expect("refused");
    assert_eq!(failure.class.as_str(), "HandlerNotApproved", "{failure:?}");
    assert!(failure.message.contains("artifact changed"), "{failure:?}");
    assert!(model.requests().is_empty(), "no fallback to the model");
}

#[test]
fn a_wrong_handler_is_rejected_and_the_skill_keeps_answering_on_tier_2() {
    let (ws, dir) = workspace();
    answer_on_tier_2(&ws);
    let before = snapshot(&dir);
    let runner = ws.runner(config());
    let (authored, model) = author_with(
        &runner,
        vec![
            source_reply("rust", WRONG_RUST),
            source_reply("rust", WRONG_RUST),
        ],
        Some(HandlerLang::Rust),
    );
    let authored = authored.expect("forge handler");
    assert!(authored.admitted.is_none());
    assert_eq!(authored.attempts.len(), 2, "[forge.handler] attempts = 2");
    for a in &authored.attempts {
        assert!(
            matches!(a.outcome, AttemptOutcome::Rejected { .. }),
            "{a:?}"
        );
    }
    // The retry told the model what the gate found.
    let feedback = last_user_text(&model, 1);
    assert!(feedback.contains("WrongAnswer"), "{feedback}");
    assert!(feedback.contains("HELLO WORLD"), "{feedback}");
    // The report is stored and kept beside the artifact.
    let report = approval::latest_report(runner.store().expect("store"), SKILL)
        .expect("read")
        .expect("stored");
    let cases = report.report.verdict(Check::Cases).expect("cases");
    assert_eq!(cases.status, Status::Fail);
    assert_eq!(cases.class, Some(FindingClass::WrongAnswer));
    let slot = authored.attempts[1].slot.clone().expect("slot");
    assert!(slot.join("gate-report.json").is_file());
    // Nothing in the skill folder changed; it answers on tier 2.
    assert_eq!(snapshot(&dir), before);
    let model = Arc::new(ScriptedProvider::from_turns("tier2", vec![turn("HI")]));
    let runner = ws.runner(config()).with_provider(model);
    let out = harness::run(&runner, SKILL, "hi", json!({}));
    assert_eq!(out.tier, Tier::Model);
    assert_eq!(out.output.expect("answer").body, "HI");
}

#[test]
fn a_source_that_reads_a_host_file_is_refused_before_any_build() {
    let (ws, dir) = workspace();
    let before = snapshot(&dir);
    let runner = ws.runner(config());
    let reading = "const SECRET: &str = include_str!(\"/etc/passwd\");\n".to_owned() + GOOD_RUST;
    let (authored, model) = author_with(
        &runner,
        vec![
            source_reply("rust", &reading),
            turn("I cannot write Rust today."),
        ],
        None,
    );
    let authored = authored.expect("forge handler");
    assert!(authored.admitted.is_none());
    for a in &authored.attempts {
        assert!(matches!(a.outcome, AttemptOutcome::Refused { .. }), "{a:?}");
        assert!(a.slot.is_none() && a.build_ms.is_none(), "nothing built");
    }
    assert!(
        !ws.workspace
            .join(".skillhost/quarantine")
            .join(SKILL)
            .exists(),
        "no slot was made"
    );
    let feedback = last_user_text(&model, 1);
    assert!(feedback.contains("include_str"), "{feedback}");
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn a_build_error_is_fed_back_and_the_retry_passes() {
    let (ws, dir) = workspace();
    answer_on_tier_2(&ws);
    let runner = ws.runner(config());
    let broken = GOOD_RUST.replace("to_uppercase()", "to_uppercase() + 1");
    let (authored, model) = author_with(
        &runner,
        vec![
            source_reply("rust", &broken),
            source_reply("rust", GOOD_RUST),
        ],
        None,
    );
    let authored = authored.expect("forge handler");
    assert!(
        matches!(
            authored.attempts[0].outcome,
            AttemptOutcome::BuildFailed { .. }
        ),
        "{:?}",
        authored.attempts[0]
    );
    let feedback = last_user_text(&model, 1);
    assert!(
        feedback.contains("error[E"),
        "the compiler's words: {feedback}"
    );
    assert!(
        matches!(authored.attempts[1].outcome, AttemptOutcome::Passed { .. }),
        "{:?}",
        authored.attempts[1]
    );
    assert!(authored.admitted.is_some());
    assert!(dir.join("handler.wasm").is_file());
}

/// Processes whose working folder is under `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        if let Ok(cwd) = std::fs::read_link(e.path().join("cwd"))
            && cwd.starts_with(dir)
        {
            found.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

#[test]
fn a_build_past_its_time_limit_is_killed_with_its_process_group() {
    let (ws, dir) = workspace();
    let before = snapshot(&dir);
    let mut config = config();
    config.forge.handler.build_timeout_secs = 1;
    config.forge.handler.attempts = 1;
    let runner = ws.runner(config);
    // Constant evaluation that never ends (the lint that would stop it is
    // allowed), so rustc runs until it is killed.
    let endless = "#![allow(long_running_const_eval)]\nconst N: u64 = { let mut i = 0u64; loop { i = i.wrapping_add(1); if i == 0 { break i; } } };\n".to_owned()
        + &GOOD_RUST.replace("to_uppercase())", "to_uppercase() + &N.to_string())");
    let (authored, _) = author_with(&runner, vec![source_reply("rust", &endless)], None);
    let authored = authored.expect("forge handler");
    let a = &authored.attempts[0];
    match &a.outcome {
        AttemptOutcome::TimedOut { reason } => {
            assert!(reason.contains("was killed"), "{reason}")
        }
        other => panic!("not killed: {other:?}"),
    }
    let slot = a.slot.clone().expect("slot");
    assert_eq!(
        processes_in(&slot),
        Vec::<String>::new(),
        "nothing left running"
    );
    assert!(authored.admitted.is_none());
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn a_scripted_js_handler_passes_the_gate() {
    // Where .ci/install-example-toolchains.sh puts it (as the examples' tests
    // expect), not examples/js/: a clean checkout has nothing there.
    let tool = harness::target_dir().join("example-tools/node_modules/.bin/componentize-js");
    assert!(
        tool.is_file(),
        "the JavaScript toolchain is missing: node + @bytecodealliance/componentize-js 0.23 in target/example-tools/node_modules (.ci/install-example-toolchains.sh); looked for {}",
        tool.display()
    );
    let (ws, dir) = workspace();
    let outputs = answer_on_tier_2(&ws);
    let mut config = config();
    config.forge.handler.componentize_js = Some(tool);
    // componentize-js's runtime imports interfaces the handler never uses;
    // the gate lets them through only by the documented per-skill setting.
    config.gate.allow_imports.insert(
        SKILL.to_owned(),
        ["wasi:sockets", "wasi:filesystem", "skillhost:skill/host"]
            .map(str::to_owned)
            .to_vec(),
    );
    let runner = ws.runner(config.clone());
    let (authored, _) = author_with(
        &runner,
        vec![source_reply("js", GOOD_JS)],
        Some(HandlerLang::Js),
    );
    let authored = authored.expect("forge handler");
    assert!(
        matches!(authored.attempts[0].outcome, AttemptOutcome::Passed { .. }),
        "{:?}",
        authored.attempts
    );
    assert!(authored.admitted.is_some());
    assert!(dir.join("handler.wasm").is_file());
    let runner = ws.runner(config);
    for (t, want) in TASKS.iter().zip(&outputs) {
        let out = harness::run(&runner, SKILL, t, json!({}));
        assert_eq!(out.tier, Tier::Handler);
        assert_eq!(&out.output.expect("answer").body, want);
    }
}

#[test]
fn the_cli_needs_a_model_and_exits_1_when_no_handler_passed() {
    let (ws, dir) = workspace();
    let before = snapshot(&dir);
    let no_model = ws.run_cli(&["forge", "handler", SKILL]);
    assert_eq!(no_model.code, 1, "{}", no_model.stderr);
    assert!(
        no_model.stderr.contains("needs a model"),
        "{}",
        no_model.stderr
    );
    let script = ws.workspace.join("author.json");
    let reading = "const X: &[u8] = include_bytes!(\"/etc/passwd\");\n".to_owned() + GOOD_RUST;
    let turns = json!([
        {"text": format!("```rust\n{reading}```\n")},
        {"text": "no code this time"}
    ]);
    std::fs::write(&script, turns.to_string()).expect("write script");
    let model = format!("scripted:{}", script.display());
    let out = ws.run_cli(&["forge", "handler", SKILL, "--model", &model]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("attempt 1: refused before building: line 1: it names `include_bytes`"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("attempt 2: refused before building: the reply holds no ```rust block"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("no handler for `shout`"),
        "{}",
        out.stdout
    );
    assert_eq!(snapshot(&dir), before);
    // Bundled skills are never modified.
    let bundled = ws.run_cli(&["forge", "handler", "nonexistent-skill", "--model", &model]);
    assert_eq!(bundled.code, 1);
    assert!(
        bundled.stderr.contains("no skill named"),
        "{}",
        bundled.stderr
    );
}

// ---------------------------------------------------------------------------
// Issue 30, finding 1: the compiler reads host files and hands them to the
// model. A `macro_rules!` taking `path`, a file and a module name
// (`#[$a = $f] mod $n;`) made rustc read any file the operator could, and
// its error quoted the file into the build log, the model's next prompt
// and the operator's terminal.

/// The trick of the finding: each `read!` makes rustc read a file as a
/// module of the handler.
fn path_trick(files: &[&str]) -> String {
    let mut src = String::from(
        "macro_rules! read { ($a:ident, $f:literal, $n:ident) => { #[$a = $f] mod $n; } }\n",
    );
    for (i, f) in files.iter().enumerate() {
        src.push_str(&format!("read!(path, \"{f}\", m{i});\n"));
    }
    src + GOOD_RUST
}

/// Every file under `dir` whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    snapshot(dir)
        .into_iter()
        .filter(|(_, bytes)| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        .map(|(p, _)| p)
        .collect()
}

/// Builds `source` as the forge would, but without the source check (as
/// if the check had missed a spelling), `build_box` as given. Returns the
/// error's text and `build.log`.
fn build_unchecked(
    ws: &Workspace,
    source: &str,
    build_box: skillhost::forge::buildbox::BuildBox,
) -> (String, String) {
    use skillhost::forge::handler::{self as forge_handler, BuildSettings};
    let mut config = config().forge.handler;
    config.build_box = build_box;
    let settings = BuildSettings::new(&config, &harness::cache_dir());
    let slot = ws
        .workspace
        .join(".skillhost/quarantine/unchecked")
        .join(build_box.name());
    std::fs::create_dir_all(&slot).expect("mkdir");
    forge_handler::write_project(&slot, source, HandlerLang::Rust, &settings).expect("project");
    let err = match forge_handler::build(&slot, HandlerLang::Rust, &settings) {
        Ok(_) => panic!("it built"),
        Err(e) => e,
    };
    assert!(
        matches!(err, forge_handler::BuildError::Failed { .. }),
        "a build failure, not {err:?}"
    );
    let log = std::fs::read_to_string(slot.join("build.log")).expect("build.log");
    (err.to_string(), log)
}

/// A process of the operator's with a secret in its environment, which
/// rustc could read as `/proc/PID/environ` (same user).
struct SecretHolder(std::process::Child);

impl SecretHolder {
    fn start(marker: &str) -> SecretHolder {
        SecretHolder(
            std::process::Command::new("sleep")
                .arg("120")
                .env("SKILLHOST_OPERATOR_SECRET", marker)
                .spawn()
                .expect("run sleep"),
        )
    }
}

impl Drop for SecretHolder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_path_trick_reads_nothing_of_the_host_even_past_the_source_check() {
    use skillhost::forge::buildbox::{BuildBox, WITHHELD};
    use skillhost::forge::handler::check_source;
    let (ws, _) = workspace();
    let marker = format!("PLANTED_SECRET_{}_{}", std::process::id(), line!());
    // Outside everything the forge uses: beside the workspace.
    let secret = ws.home.join("credentials");
    std::fs::write(&secret, format!("{marker} = 1\n")).expect("plant");
    let holder = SecretHolder::start(&marker);
    let source = path_trick(&[
        &secret.display().to_string(),
        "/proc/self/environ",
        &format!("/proc/{}/environ", holder.0.id()),
    ]);
    // The cheap filter refuses it...
    assert!(check_source(&source, HandlerLang::Rust).is_err());

    // ...but nothing relies on it. In the box the files are not there:
    // rustc says it cannot read the first, about the handler's own line.
    let (err, log) = build_unchecked(&ws, &source, BuildBox::Bwrap);
    for text in [&err, &log] {
        assert!(!text.contains(&marker), "the secret leaked:\n{text}");
        assert!(!text.contains("SKILLHOST_OPERATOR_SECRET"), "{text}");
    }
    assert!(
        log.contains(&format!("couldn't read `{}`", secret.display())),
        "{log}"
    );
    assert!(log.contains("--> src/lib.rs"), "{log}");

    // Unboxed (the operator's unsafe choice), rustc does read them; what
    // it says about them is withheld, in the log as in the error.
    let (err, log) = build_unchecked(&ws, &source, BuildBox::None);
    for text in [&err, &log] {
        assert!(!text.contains(&marker), "the secret leaked:\n{text}");
        assert!(!text.contains("SKILLHOST_OPERATOR_SECRET"), "{text}");
    }
    assert!(log.contains(WITHHELD), "the read was withheld: {log}");
    drop(holder);
}

/// A model server speaking OpenAI's chat completions on 127.0.0.1. Each
/// request is answered by the next of `replies` (called then, so that a
/// reply can name the pid of the process asking) and its body is kept:
/// the model log.
struct ModelServer {
    base: String,
    bodies: Arc<std::sync::Mutex<Vec<String>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

type Reply = Box<dyn Fn() -> String + Send + Sync>;

impl ModelServer {
    fn start(replies: Vec<Reply>) -> ModelServer {
        use std::io::{BufRead, BufReader, Read, Write};
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
        let bodies = Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let replies = Arc::new(replies);
        let next = Arc::new(AtomicUsize::new(0));
        let (bodies2, stop2) = (bodies.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop2.load(Ordering::SeqCst) {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                };
                let (bodies, replies, next) = (bodies2.clone(), replies.clone(), next.clone());
                std::thread::spawn(move || {
                    stream.set_nonblocking(false).expect("blocking");
                    let mut r = BufReader::new(stream.try_clone().expect("clone"));
                    let mut w = stream;
                    loop {
                        let mut len = 0usize;
                        let mut line = String::new();
                        loop {
                            line.clear();
                            if r.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            let l = line.trim_end();
                            if l.is_empty() {
                                break;
                            }
                            if let Some((k, v)) = l.split_once(':')
                                && k.eq_ignore_ascii_case("content-length")
                            {
                                len = v.trim().parse().unwrap_or(0);
                            }
                        }
                        let mut body = vec![0u8; len];
                        if r.read_exact(&mut body).is_err() {
                            return;
                        }
                        bodies
                            .lock()
                            .expect("lock")
                            .push(String::from_utf8_lossy(&body).into_owned());
                        let text = replies
                            .get(next.fetch_add(1, Ordering::SeqCst))
                            .map(|f| f())
                            .unwrap_or_else(|| "no more replies".to_owned());
                        let reply = json!({
                            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                         "finish_reason": "stop"}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                        })
                        .to_string();
                        let head = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                            reply.len()
                        );
                        if w.write_all(head.as_bytes()).is_err()
                            || w.write_all(reply.as_bytes()).is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        ModelServer { base, bodies, stop }
    }

    fn bodies(&self) -> Vec<String> {
        self.bodies.lock().expect("lock").clone()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The finding end to end, through the real binary: a model answers with
/// the path trick aimed at a planted file, at the skillhost process's own
/// environment (which holds a secret) and at another process's, then with
/// a handler that builds (in the box). The secret is nowhere: not on the
/// terminal, not in what the model was sent, not in the slot's build log
/// or gate report, not anywhere under the workspace.
#[test]
fn the_cli_never_shows_the_model_or_the_operator_a_host_secret() {
    let (ws, _) = workspace();
    let marker = format!("CLI_SECRET_{}_{}", std::process::id(), line!());
    let secret = ws.home.join("planted-credentials");
    std::fs::write(&secret, format!("{marker} = 1\n")).expect("plant");
    let holder = SecretHolder::start(&marker);
    let skillhost_pid = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let trick = {
        let (secret, other, pid) = (
            secret.display().to_string(),
            holder.0.id(),
            skillhost_pid.clone(),
        );
        move || {
            let own = format!(
                "/proc/{}/environ",
                pid.load(std::sync::atomic::Ordering::SeqCst)
            );
            let source = path_trick(&[
                &secret,
                "/proc/self/environ",
                &own,
                &format!("/proc/{other}/environ"),
            ]);
            format!("Here it is.\n\n```rust\n{source}```\n")
        }
    };
    let good = || format!("```rust\n{GOOD_RUST}```\n");
    let server = ModelServer::start(vec![Box::new(trick), Box::new(good)]);
    let mut cmd = ws.cli();
    cmd.args([
        "forge",
        "handler",
        SKILL,
        "--model",
        "openai:test-model",
        "--base-url",
        &server.base,
        "--api-key-env",
        "SKILLHOST_TEST_MODEL_KEY",
    ])
    .env("SKILLHOST_TEST_MODEL_KEY", "sk-not-a-secret")
    .env("SKILLHOST_OPERATOR_SECRET", &marker)
    .env("RUST_LOG", "debug")
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("run skillhost");
    skillhost_pid.store(child.id(), std::sync::atomic::Ordering::SeqCst);
    let out = harness::CliResult::from(child.wait_with_output().expect("wait"));
    let bodies = server.bodies();
    assert_eq!(
        bodies.len(),
        2,
        "two attempts: {}\n{}",
        out.stdout,
        out.stderr
    );
    // The trick was asked for with the skillhost process's own pid.
    assert!(
        out.stdout.contains("attempt 1: refused before building"),
        "{}",
        out.stdout
    );
    for (what, text) in [
        ("stdout", &out.stdout),
        ("stderr", &out.stderr),
        ("the second request (the feedback)", &bodies[1]),
    ] {
        assert!(
            !text.contains(&marker),
            "the secret reached {what}:\n{text}"
        );
        assert!(
            !text.contains("SKILLHOST_OPERATOR_SECRET"),
            "the environment reached {what}:\n{text}"
        );
    }
    for body in &bodies {
        assert!(!body.contains(&marker), "the model was sent the secret");
    }
    assert_eq!(
        files_holding(&ws.workspace, &marker),
        Vec::<PathBuf>::new(),
        "a file of the workspace (build.log, gate report, store) holds the secret"
    );
    // The second attempt was built, in the box, and gated.
    let slot = out
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("slot: "))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("a slot: {}", out.stdout));
    assert!(slot.join("build.log").is_file());
    assert!(slot.join("gate-report.json").is_file(), "{}", out.stdout);
    drop(holder);
}

/// Without bubblewrap the forge builds nothing (fail closed) and says what
/// installs it; `build_box = "none"` is the operator's explicit way out,
/// and it warns.
#[test]
fn without_bubblewrap_the_build_fails_closed() {
    let (ws, _) = workspace();
    let script = ws.workspace.join("author.json");
    let turns = json!([{"text": format!("```rust\n{GOOD_RUST}```\n")}]);
    std::fs::write(&script, turns.to_string()).expect("write script");
    let model = format!("scripted:{}", script.display());
    // A PATH with cargo and rustc but no bwrap; the system folders are
    // searched too, so hide them by pointing at a bwrap that cannot start
    // a box: a PATH entry whose `bwrap` fails.
    let fake = ws.workspace.join("fake-bin");
    std::fs::create_dir_all(&fake).expect("mkdir");
    let bwrap = fake.join("bwrap");
    std::fs::write(
        &bwrap,
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
    )
    .expect("write");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = std::env::join_paths(std::iter::once(fake.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let out = harness::CliResult::from(
        ws.cli()
            .args(["forge", "handler", SKILL, "--model", &model])
            .env("PATH", &path)
            .output()
            .expect("run"),
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("bubblewrap (bwrap) is not available")
            && out.stderr.contains("could not start the build's box")
            && out
                .stderr
                .contains("No permissions to create new namespace"),
        "{}",
        out.stderr
    );
    let handler = ws
        .workspace
        .join(".agents/skills")
        .join(SKILL)
        .join("handler.wasm");
    assert!(!handler.exists());
    let quarantine = ws.workspace.join(".skillhost/quarantine");
    if quarantine.exists() {
        assert!(
            snapshot(&quarantine)
                .iter()
                .all(|(p, _)| p.file_name() != Some(std::ffi::OsStr::new("handler.wasm"))),
            "nothing was built"
        );
    }
    // The operator's explicit choice: unboxed, with a warning each build.
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[forge.handler]\nbuild_box = \"none\"\n",
    )
    .expect("config");
    let out = harness::CliResult::from(
        ws.cli()
            .args(["forge", "handler", SKILL, "--model", &model])
            .env("PATH", &path)
            .output()
            .expect("run"),
    );
    assert!(
        out.stderr
            .contains("warning: building a model's rust handler without a box"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stdout.contains("  slot: "),
        "it was built: {}",
        out.stdout
    );
}
