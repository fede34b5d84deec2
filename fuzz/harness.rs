//! The bodies of the fuzz targets in `fuzz/` (cargo-fuzz, libFuzzer) and
//! of the stable test that replays their corpora and regression inputs
//! (`tests/fuzz_replay.rs`, which includes this file): one function per
//! target, so what a fuzzer found and what CI keeps checking are the same
//! code. A test harness, so it lives here, not in the shipped library,
//! and reaches skillhost through its public API only.
//!
//! Every function takes arbitrary bytes. The contract of each is that it
//! never panics (bad input is an error value) plus the properties it
//! asserts: an assertion failing here is a finding, exactly like a panic
//! inside the library. Inputs that hold several parts split them at NUL
//! bytes (`parts`), so seeds stay readable text.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use skillhost::config::{self, Config, Grant};
use skillhost::exec::{Runner, context};
use skillhost::gate_policy::{Check, GateConfig, Status};
use skillhost::learn::condition::Facts;
use skillhost::learn::rules::{self, RuleSet, Setting};
use skillhost::mcp::{self, SkillServer};
use skillhost::paths::Paths;
use skillhost::skill::{Capabilities, Catalog, LoadOptions, Root, Source, parse_skill};
use skillhost::tools::pipeline::{self, Pipeline};
use skillhost::tools::{Policy, SkillInvoker, Toolbox, ToolsConfig};
use skillhost::types::{BoxFuture, Failure, Output};

/// At most `n` parts of `data`, split at NUL bytes; the last part keeps
/// any further NULs.
fn parts(data: &[u8], n: usize) -> Vec<&[u8]> {
    data.splitn(n, |&b| b == 0).collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// SKILL.md front matter parser: one file, as the catalog reads it.
///
/// Contract: a parsed skill has a name and a non-empty description, and
/// parsing is deterministic.
pub fn skill_parse(data: &[u8]) {
    let Ok(first) = parse_skill(data, "fuzzed-skill") else {
        return;
    };
    assert!(!first.name.trim().is_empty(), "a parsed skill has a name");
    assert!(
        !first.description.trim().is_empty(),
        "a parsed skill has a description"
    );
    let again =
        parse_skill(data, "fuzzed-skill").map(|p| (p.name, p.description, p.body, p.warnings));
    assert_eq!(
        again,
        Ok((first.name, first.description, first.body, first.warnings)),
        "parsing the same bytes twice gives the same skill"
    );
}

/// A folder of its own for one call: removed when dropped, so a long fuzz
/// run leaves nothing behind.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> std::io::Result<Scratch> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "skillhost-fuzz-{what}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The catalog loader over a folder of up to four SKILL.md files (the
/// input's NUL-separated parts), each in a folder of its own.
///
/// Contract: every file is counted once (parsed or dropped); each parsed
/// file is in the catalog unless a same-named one came first; the catalog
/// finds every skill it holds by name, each as the parser reads its file;
/// search does not fail on the input's text.
pub fn catalog_load(data: &[u8]) {
    let Ok(scratch) = Scratch::new("catalog") else {
        return;
    };
    let files = parts(data, 4);
    for (i, bytes) in files.iter().enumerate() {
        let dir = scratch.0.join(format!("skill-{i}"));
        if std::fs::create_dir_all(&dir).is_err()
            || std::fs::write(dir.join("SKILL.md"), bytes).is_err()
        {
            return;
        }
    }
    let catalog = Catalog::load(
        &[Root::new(scratch.0.clone(), Source::Path)],
        &LoadOptions::default(),
    );
    let stats = catalog.stats();
    assert_eq!(stats.files, files.len(), "every file found: {stats:?}");
    assert_eq!(stats.parsed + stats.dropped, stats.files, "{stats:?}");
    assert_eq!(catalog.len(), stats.parsed - stats.duplicates, "{stats:?}");
    let parsed: Vec<_> = files
        .iter()
        .enumerate()
        .filter_map(|(i, b)| parse_skill(b, &format!("skill-{i}")).ok())
        .collect();
    assert_eq!(
        parsed.len(),
        stats.parsed,
        "the loader parses as parse_skill does"
    );
    for skill in catalog.skills() {
        let found = catalog.get(&skill.name).map(|s| &s.path);
        assert_eq!(
            found,
            Some(&skill.path),
            "the catalog finds `{}`",
            skill.name
        );
        assert!(
            parsed
                .iter()
                .any(|p| p.name == skill.name && p.description == skill.description),
            "`{}` is what the parser made of one of the files",
            skill.name
        );
    }
    let query = text(&data[..data.len().min(200)]);
    let _ = catalog.search(&query, 5);
}

/// Never called: the pipeline target checks and interpolates, it runs
/// nothing.
struct NoSkills;

impl SkillInvoker for NoSkills {
    fn invoke<'a>(
        &'a self,
        skill: &'a str,
        _task: &'a str,
        _context: Map<String, Value>,
        _depth: u32,
    ) -> BoxFuture<'a, Result<Output, Failure>> {
        Box::pin(async move {
            Err(Failure::new(
                skillhost::types::FailureClass::UnknownSkill,
                format!("no skill `{skill}` in the fuzz toolbox"),
            ))
        })
    }
}

fn toolbox() -> &'static Toolbox {
    static TOOLBOX: OnceLock<Toolbox> = OnceLock::new();
    TOOLBOX.get_or_init(|| {
        Toolbox::standard(
            Policy::new(ToolsConfig::default()),
            std::env::temp_dir(),
            Arc::new(Catalog::from_skills(Vec::new())),
            Arc::new(NoSkills),
        )
    })
}

/// The same JSON value with every string replaced by "": its shape.
fn shape(v: &Value) -> Value {
    match v {
        Value::String(_) => Value::String(String::new()),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
        }
        other => other.clone(),
    }
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| strings(i, out)),
        _ => {}
    }
}

/// Pipeline validation (against the standard tools) and interpolation of
/// each step's arguments with the other steps' arguments as results.
///
/// Contract: a valid pipeline has 1..=max steps and refers only to
/// earlier steps; interpolation keeps the arguments' shape and leaves a
/// string without `{{step[` as it was.
pub fn pipeline(data: &[u8]) {
    let Ok(pipeline) = serde_json::from_slice::<Pipeline>(data) else {
        return;
    };
    let tools = toolbox();
    if let Ok(deps) = pipeline::validate(tools, &pipeline) {
        let max = tools.policy.config.pipeline_max_steps;
        assert!(!pipeline.steps.is_empty() && pipeline.steps.len() <= max);
        assert_eq!(deps.len(), pipeline.steps.len());
        for (i, refs) in deps.iter().enumerate() {
            assert!(refs.iter().all(|&r| r < i), "step {i} refers to {refs:?}");
        }
    }
    let results: Vec<Option<Value>> = pipeline
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| (i % 3 != 2).then(|| s.args.clone()))
        .collect();
    for step in &pipeline.steps {
        let out = pipeline::interpolate(&step.args, &results);
        assert_eq!(
            shape(&out),
            shape(&step.args),
            "interpolation keeps the shape"
        );
        let (mut before, mut after) = (Vec::new(), Vec::new());
        strings(&step.args, &mut before);
        strings(&out, &mut after);
        for (b, a) in before.iter().zip(&after) {
            if !b.contains("{{step[") {
                assert_eq!(a, b, "a string without references is left as it was");
            }
        }
    }
}

/// Forge slug and path checks: the input's lines are a proposed name, a
/// task, a description and (the rest) instructions.
///
/// Contract: a name `check_slug` accepts is one plain path component
/// inside the forged root; the name made from any task is accepted; a
/// skill the forge renders under an accepted name passes the forge's own
/// validation with its name and description unchanged.
#[cfg(feature = "forge")]
pub fn forge_slug(data: &[u8]) {
    use skillhost::forge::create::{Draft, default_name, render};
    use skillhost::forge::writer::{Expect, validate};
    use std::path::Component;

    let input = text(data);
    let mut lines = input.splitn(4, '\n');
    let name = lines.next().unwrap_or_default();
    let task = lines.next().unwrap_or_default();
    let description = lines.next().unwrap_or_default();
    let instructions = lines.next().unwrap_or_default();

    let made = default_name(task, &[name.to_owned()]);
    assert!(
        skillhost::forge::check_slug(&made).is_ok(),
        "{task:?} -> {made:?}"
    );

    if skillhost::forge::check_slug(name).is_err() {
        return;
    }
    let root = Path::new("/forged");
    let path = root.join(name);
    assert_eq!(path.parent(), Some(root), "`{name}` stays in the root");
    assert!(
        Path::new(name)
            .components()
            .all(|c| matches!(c, Component::Normal(_))),
        "`{name}` is one plain component"
    );
    assert_eq!(Path::new(name).components().count(), 1);

    if description.trim().is_empty() {
        return;
    }
    let draft = Draft {
        name: name.to_owned(),
        description: description.to_owned(),
        instructions: instructions.to_owned(),
        uses: vec!["read_file".to_owned()],
        runs: vec![1],
        context_fields: Default::default(),
        pipeline: None,
        capabilities: Capabilities::default(),
        origin: "fuzzed".to_owned(),
    };
    let rendered = render(&draft, 0);
    let caps = Capabilities::default();
    let expect = Expect {
        name,
        capabilities: &caps,
        allowed_tools: None,
        handler: None,
        limits: Default::default(),
        bounded: true,
    };
    if rendered.len() > skillhost::forge::writer::MAX_SKILL_BYTES {
        return;
    }
    match validate(rendered.as_bytes(), &expect) {
        Ok(parsed) => {
            assert_eq!(parsed.name, name);
            assert_eq!(parsed.description, description.trim(), "{rendered}");
        }
        Err(e) => panic!("the forge refuses what it rendered itself: {e}\n{rendered}"),
    }
}

/// Without the forge there is nothing to check.
#[cfg(not(feature = "forge"))]
pub fn forge_slug(_data: &[u8]) {}

/// Rule conditions: a rules.json (first part) whose active rules are
/// evaluated on an output (second part) and applied to a context (third
/// part, when it is a JSON object).
///
/// Contract: a rule set that parses serializes and parses back to the
/// same rules; evaluation and actions never fail on any output.
pub fn rule_condition(data: &[u8]) {
    let p = parts(data, 3);
    let Ok(set) = serde_json::from_slice::<RuleSet>(p[0]) else {
        return;
    };
    let json = serde_json::to_string(&set).expect("a parsed rule set serializes");
    let back: RuleSet = serde_json::from_str(&json).expect("a serialized rule set parses");
    assert_eq!(
        serde_json::to_string(&back).ok(),
        Some(json),
        "rules.json round trip"
    );
    let output = p.get(1).map(|b| text(b)).unwrap_or_default();
    let given: Map<String, Value> = p
        .get(2)
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or_default();
    let (active, _refused) = set.active();
    for rule in &active {
        let facts = Facts {
            task: &output,
            skill: "fuzzed",
            context: &given,
            output: Some(&output),
            failure: Some("Crash"),
        };
        if rule.matches(&facts) {
            let mut context = given.clone();
            let mut instructions = Vec::new();
            let setting = Setting {
                defaults: Some(&given),
                model_answers: false,
                given: Some(&given),
            };
            let _ = rules::apply(
                &rule.rule.actions,
                &mut context,
                &mut instructions,
                &setting,
            );
        }
    }
}

/// Component inspection and the gate's static checks on arbitrary bytes,
/// for a skill that declares nothing and for one that declares everything
/// but files.
///
/// Contract: inspection and the artifact check agree; the checks come in
/// the gate's order, a failure names its class and a pass none.
pub fn gate_statics(data: &[u8]) {
    let config = GateConfig::default();
    let everything = Capabilities {
        http: vec!["example.com".to_owned()],
        tools: vec!["read_file".to_owned()],
        llm: true,
        kv: true,
        ..Capabilities::default()
    };
    let inspected = skillhost::sandbox::inspect::inspect(data);
    for declared in [&Capabilities::default(), &everything] {
        let (checks, inspection) =
            skillhost::gate::static_checks(data, declared, &config, 1 << 20, 1 << 20);
        let order: Vec<Check> = checks.iter().map(|v| v.check).collect();
        match &inspection {
            Some(_) => {
                assert!(inspected.is_ok(), "the gate passed what inspection refused");
                assert_eq!(
                    order,
                    [
                        Check::Artifact,
                        Check::World,
                        Check::Imports,
                        Check::Capabilities
                    ]
                );
            }
            None => assert_eq!(order, [Check::Artifact]),
        }
        if inspected.is_err() || data.len() > 1 << 20 {
            assert_eq!(checks[0].status, Status::Fail);
        }
        for v in &checks {
            assert_eq!(
                v.class.is_some(),
                v.status == Status::Fail,
                "a failure names its class, a pass none: {v:?}"
            );
        }
    }
}

/// What the MCP target serves: three skills in a folder of their own, and
/// a file beside them that no request may read.
struct McpFixture {
    server: SkillServer,
    _dir: Scratch,
}

const SECRET: &str = "fuzz-secret-7f3a91";

fn mcp_fixture() -> Option<&'static McpFixture> {
    static FIXTURE: OnceLock<Option<McpFixture>> = OnceLock::new();
    FIXTURE
        .get_or_init(|| {
            let dir = Scratch::new("mcp").ok()?;
            let root = dir.0.join("skills");
            let skill = |name: &str, front: &str, body: &str| -> Option<()> {
                let d = root.join(name);
                std::fs::create_dir_all(&d).ok()?;
                std::fs::write(
                    d.join("SKILL.md"),
                    format!("---\nname: {name}\ndescription: Skill {name}.\n{front}\n---\n\n{body}\n"),
                )
                .ok()
            };
            skill(
                "greeter",
                "metadata:\n  context_fields:\n    name: { type: string, required: true }\n    loud: { type: bool, default: false }\n    times: { type: integer }\n  skillhost:\n    template: \"Hello {{context.name}}: {{task}}\"",
                "# Greeter\n\nGreet people.",
            )?;
            skill("manual-only", "disable-model-invocation: true", "Only when asked.")?;
            skill("prose", "user-invocable: false", "Just prose.")?;
            std::fs::create_dir_all(root.join("greeter/references")).ok()?;
            std::fs::write(root.join("greeter/references/tone.md"), "Be kind.").ok()?;
            std::fs::write(dir.0.join("secret.txt"), SECRET).ok()?;
            std::fs::write(root.join("secret.txt"), SECRET).ok()?;
            let (home, workspace) = (dir.0.join("home"), dir.0.join("ws"));
            std::fs::create_dir_all(&home).ok()?;
            std::fs::create_dir_all(&workspace).ok()?;
            let paths = Paths {
                home: home.clone(),
                workspace,
                bundled: None,
                extra_skills: vec![root.clone()],
                cache_override: Some(home.join("cache")),
                workspace_origin: Default::default(),
            };
            let catalog = Catalog::load(&[Root::new(root, Source::Path)], &LoadOptions::default());
            let runner = Runner::new(paths, Config::default(), catalog);
            Some(McpFixture {
                server: SkillServer::new(runner),
                _dir: dir,
            })
        })
        .as_ref()
}

/// What a reply shows the client, checked for the secret.
fn assert_no_secret<T: serde::Serialize>(reply: &T) {
    let shown = serde_json::to_string(reply).unwrap_or_default();
    assert!(
        !shown.contains(SECRET),
        "a reply leaked a file outside the skills: {shown}"
    );
}

/// MCP JSON-RPC messages: the bytes parsed as a client message, as the
/// transports do, then handed to the server's own handlers: tool calls
/// (`list_skills`, `read_skill`, and a skill tool's arguments typed by its
/// context fields, without running it), resource reads, prompts, and
/// list pagination.
///
/// Contract: a message that parses serializes and parses back, and after
/// that one pass the round trip is exact; every bad argument is an error
/// value; no reply holds a file outside the skills' folders.
pub fn mcp_message(data: &[u8]) {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};

    let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(data) else {
        return;
    };
    // rmcp keeps unknown fields of a tool call when it parses and writes
    // them out, but they do not survive a second parse
    // (fuzz/regressions/mcp_message/unknown-call-fields): the first pass
    // normalises. The server only parses client messages, never echoes them.
    let json = serde_json::to_value(&message).expect("a parsed message serializes");
    let normal: ClientJsonRpcMessage =
        serde_json::from_value(json).expect("a serialized message parses");
    let json = serde_json::to_value(&normal).expect("a parsed message serializes");
    let back: ClientJsonRpcMessage =
        serde_json::from_value(json.clone()).expect("a serialized message parses");
    assert_eq!(
        serde_json::to_value(&back).ok(),
        Some(json),
        "JSON-RPC round trip"
    );

    let JsonRpcMessage::Request(request) = message else {
        return;
    };
    let Some(fixture) = mcp_fixture() else {
        return;
    };
    let server = &fixture.server;
    match request.request {
        ClientRequest::CallToolRequest(call) => {
            let name = call.params.name.to_string();
            let args = call.params.arguments.unwrap_or_default();
            if name == mcp::LIST_SKILLS || name == mcp::READ_SKILL {
                let reply = futures::executor::block_on(server.call(&name, args));
                assert_no_secret(&reply);
            } else if let Some(skill) = server
                .runner()
                .catalog()
                .get(name.trim_start_matches("skill_"))
            {
                let _ = context::coerce_json(&skill.meta.context_fields, args);
            }
        }
        ClientRequest::ReadResourceRequest(read) => {
            assert_no_secret(&server.read(&read.params.uri));
        }
        ClientRequest::GetPromptRequest(prompt) => {
            let args = prompt.params.arguments.unwrap_or_default();
            assert_no_secret(&server.prompt(&prompt.params.name, &args));
        }
        ClientRequest::ListToolsRequest(list) => {
            let _ = mcp::page(server.tools(), list.params);
        }
        ClientRequest::ListResourcesRequest(list) => {
            let _ = mcp::page(server.resources(), list.params);
        }
        ClientRequest::ListPromptsRequest(list) => {
            let _ = mcp::page(server.prompts(), list.params);
        }
        _ => {}
    }
}

/// skillhost.toml: one or two layers (user, workspace) merged as the host
/// merges the two files, and a grant written into the first.
///
/// Contract: a config that parses serializes to TOML that parses to the
/// same config; writing a grant into a file that parses as TOML leaves a
/// file that parses and holds exactly that grant.
pub fn config_toml(data: &[u8]) {
    let p = parts(data, 2);
    let layers: Vec<String> = p.iter().map(|b| text(b)).collect();
    let refs: Vec<&str> = layers.iter().map(String::as_str).collect();
    if let Ok(config) = config::from_layers(&refs) {
        // A value TOML cannot hold (e.g. a JSON null in `[defaults]`) is an
        // error value here, not a panic; what serializes must read back.
        if let Ok(toml_text) = toml::to_string(&config) {
            let back = config::from_layers(&[&toml_text])
                .unwrap_or_else(|e| panic!("a serialized config parses: {e}\n{toml_text}"));
            assert_eq!(
                toml::to_string(&back).ok().as_deref(),
                Some(toml_text.as_str()),
                "skillhost.toml round trip"
            );
        }
    }

    let file = Path::new("skillhost.toml");
    let skill = layers
        .get(1)
        .and_then(|l| l.lines().next())
        .filter(|s| !s.is_empty())
        .unwrap_or("fuzzed");
    let grant = Grant::default();
    if layers[0].parse::<toml::Table>().is_err() {
        return;
    }
    if let Ok(edited) = skillhost::grants::with_grant(&layers[0], file, skill, Some(&grant)) {
        let table: toml::Table = edited
            .parse()
            .unwrap_or_else(|e| panic!("a file with a grant written parses: {e}\n{edited}"));
        let written = table
            .get("grants")
            .and_then(|g| g.get(skill))
            .cloned()
            .unwrap_or_else(|| panic!("the grant of `{skill}` is in the file\n{edited}"));
        assert_eq!(written.try_into::<Grant>().ok(), Some(grant), "{edited}");
        let removed = skillhost::grants::with_grant(&edited, file, skill, None)
            .unwrap_or_else(|e| panic!("a grant written can be removed: {e}"));
        let table: toml::Table = removed.parse().unwrap_or_default();
        assert!(
            table.get("grants").and_then(|g| g.get(skill)).is_none(),
            "the grant of `{skill}` is gone\n{removed}"
        );
    }
}

/// The forge's Rust source check, against rustc's own lexer: one source.
///
/// Contract: a source the check accepts is one rustc's lexer reads cleanly
/// into exactly the lexemes the check saw (every literal and comment ends
/// where rustc ends it; the check compares them itself, this holds it to
/// that), and in which rustc's lexer sees no call of a macro that reads
/// the host (`include_str!`, `env!`, `compile_error!`, ...) however the
/// allowlists were walked.
#[cfg(feature = "forge")]
pub fn rust_source_check(data: &[u8]) {
    use skillhost::forge::handler::{
        HandlerLang, check_source, code_tokens, first_difference, lexemes, read_calls,
    };

    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    if check_source(source, HandlerLang::Rust).is_err() {
        return;
    }
    let saw = code_tokens(source).unwrap_or_else(|e| panic!("accepted untokenized: {e}"));
    if let Some((at, how)) = first_difference(source, &lexemes(&saw)) {
        panic!("accepted, but at byte {at} {how}\nsource: {source:?}");
    }
    let calls = read_calls(source);
    assert!(
        calls.is_empty(),
        "accepted, and rustc sees {calls:?}\nsource: {source:?}"
    );
}

/// Without the forge there is nothing to check.
#[cfg(not(feature = "forge"))]
pub fn rust_source_check(_data: &[u8]) {}

/// A target's body: arbitrary bytes in, a panic on a finding.
pub type Target = fn(&[u8]);

/// The target functions by name, for the replay test.
pub const TARGETS: &[(&str, Target)] = &[
    ("skill_parse", skill_parse),
    ("catalog_load", catalog_load),
    ("pipeline", pipeline),
    ("forge_slug", forge_slug),
    ("rule_condition", rule_condition),
    ("gate_statics", gate_statics),
    ("mcp_message", mcp_message),
    ("config_toml", config_toml),
    ("rust_source_check", rust_source_check),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The MCP target's secret check is not vacuous: the fixture serves
    /// its skills' files, the secret lies right beside them, and the
    /// check fails on a reply that shows it.
    #[test]
    fn the_mcp_fixture_serves_files_and_the_secret_check_bites() {
        let fixture = mcp_fixture().expect("the fixture");
        let server = &fixture.server;
        assert_eq!(server.runner().catalog().len(), 3);
        let tone = server
            .read("skill://greeter/references%2Ftone.md")
            .expect("a skill's own file");
        assert!(serde_json::to_string(&tone).is_ok_and(|t| t.contains("Be kind.")));
        assert!(server.read("skill://greeter/..%2Fsecret.txt").is_err());
        assert!(std::panic::catch_unwind(|| assert_no_secret(&SECRET)).is_err());
    }

    #[test]
    fn parts_split_at_nul_and_keep_the_rest_whole() {
        assert_eq!(parts(b"a\0b\0c", 2), [&b"a"[..], &b"b\0c"[..]]);
        assert_eq!(parts(b"", 3), [&b""[..]]);
    }
}
