//! The MCP mapping without a client: which skills are tools, their schema,
//! error results, resources and prompts. The end-to-end test with the
//! official Python client is `tests/mcp_python.rs`.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::*;
use crate::config::Config;
use crate::paths::Paths;
use crate::skill::{Catalog, LoadOptions, Root, Source};

fn write_skill(root: &Path, name: &str, front: &str, body: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Skill {name}.\n{front}\n---\n\n{body}\n"),
    )
    .expect("write");
}

pub(super) struct Fixture {
    _dir: tempfile::TempDir,
    pub(super) server: SkillServer,
}

pub(super) fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    write_skill(
        &root,
        "greeter",
        "metadata:\n  context_fields:\n    name: { type: string, required: true, description: Who to greet }\n    loud: { type: bool, default: false }\n  skillhost:\n    template: \"Hello {{context.name}}: {{task}}\"",
        "# Greeter\n\nGreet people.",
    );
    write_skill(
        &root,
        "manual-only",
        "disable-model-invocation: true\nmetadata:\n  skillhost:\n    template: \"done: {{task}}\"",
        "Only when asked.",
    );
    write_skill(
        &root,
        "instructions-only",
        "user-invocable: false",
        "Just prose.",
    );
    std::fs::create_dir_all(root.join("greeter/references")).expect("mkdir");
    std::fs::write(root.join("greeter/references/tone.md"), "Be kind.").expect("write");
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&home).expect("mkdir");
    std::fs::create_dir_all(&ws).expect("mkdir");
    let paths = Paths {
        home: home.clone(),
        workspace: ws,
        bundled: None,
        extra_skills: vec![root.clone()],
        cache_override: Some(home.join("cache")),
        workspace_origin: Default::default(),
    };
    let catalog = Catalog::load(&[Root::new(root, Source::Path)], &LoadOptions::default());
    assert_eq!(catalog.len(), 3, "{:?}", catalog.warnings());
    let runner = Runner::new(paths, Config::default(), catalog);
    Fixture {
        _dir: dir,
        server: SkillServer::new(runner),
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn text(r: &rmcp::model::CallToolResult) -> String {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

#[test]
fn only_skills_that_run_without_a_model_are_tools() {
    let f = fixture();
    let names: Vec<String> = f
        .server
        .tools()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        names,
        [
            LIST_SKILLS,
            READ_SKILL,
            "skill_greeter",
            "skill_manual-only"
        ],
        "the prose-only skill is read, not run"
    );
}

#[test]
fn a_skill_tool_schema_is_the_task_plus_its_context_fields() {
    let f = fixture();
    let tools = f.server.tools();
    let greeter = tools
        .iter()
        .find(|t| t.name == "skill_greeter")
        .expect("greeter tool");
    let schema = Value::Object((*greeter.input_schema).clone());
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["task"]["type"], "string");
    assert_eq!(schema["properties"]["name"]["type"], "string");
    assert_eq!(schema["properties"]["loud"]["type"], "boolean");
    assert_eq!(schema["properties"]["loud"]["default"], false);
    assert_eq!(schema["required"], json!(["task", "name"]));
    let manual = tools
        .iter()
        .find(|t| t.name == "skill_manual-only")
        .expect("manual tool");
    assert!(
        manual
            .description
            .as_deref()
            .is_some_and(|d| d.contains("only when the user asks")),
        "{:?}",
        manual.description
    );
}

#[test]
fn a_call_runs_the_skill_like_run_does() {
    let f = fixture();
    let r = block_on(f.server.call(
        "skill_greeter",
        args(json!({ "task": "welcome aboard", "name": "Dana", "loud": "yes" })),
    ))
    .expect("known tool");
    assert_eq!(r.is_error, Some(false));
    assert_eq!(text(&r), "Hello Dana: welcome aboard");
}

#[test]
fn bad_input_is_an_error_result_with_a_class_not_a_crash() {
    let f = fixture();
    let cases = [
        (json!({ "name": "Dana" }), "InvalidArguments"),
        (json!({ "task": 7, "name": "Dana" }), "InvalidArguments"),
        (json!({ "task": "hi" }), "InvalidContext"),
        (
            json!({ "task": "hi", "name": "D", "loud": "maybe" }),
            "InvalidContext",
        ),
        (
            json!({ "task": "hi", "name": "D", "loud": [1] }),
            "InvalidContext",
        ),
    ];
    for (a, class) in cases {
        let r = block_on(f.server.call("skill_greeter", args(a.clone()))).expect("known tool");
        assert_eq!(r.is_error, Some(true), "{a}");
        assert!(
            text(&r).starts_with(&format!("{class}: ")),
            "{a}: {}",
            text(&r)
        );
        let s = r.structured_content.expect("structured");
        assert_eq!(s["class"], class);
        assert!(s["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}

#[test]
fn an_unknown_tool_is_a_protocol_error() {
    let f = fixture();
    let e = block_on(f.server.call("skill_nope", Map::new())).expect_err("unknown tool");
    assert!(e.message.contains("skill_nope"), "{}", e.message);
}

#[test]
fn list_and_read_skill_give_progressive_disclosure() {
    let f = fixture();
    let r = block_on(f.server.call(LIST_SKILLS, Map::new())).expect("tool");
    let s = r.structured_content.expect("structured");
    let skills = s["skills"].as_array().expect("array");
    assert_eq!(skills.len(), 3);
    let manual = skills
        .iter()
        .find(|s| s["name"] == "manual-only")
        .expect("listed");
    assert_eq!(manual["model_invocable"], false);
    assert_eq!(manual["tool"], "skill_manual-only");
    let prose = skills
        .iter()
        .find(|s| s["name"] == "instructions-only")
        .expect("listed");
    assert_eq!(prose["runnable"], false);
    assert_eq!(prose["tool"], Value::Null);

    let r = block_on(
        f.server
            .call(READ_SKILL, args(json!({ "name": "greeter" }))),
    )
    .expect("tool");
    assert!(text(&r).contains("Greet people."), "{}", text(&r));
    let r = block_on(f.server.call(
        READ_SKILL,
        args(json!({ "name": "greeter", "path": "references/tone.md" })),
    ))
    .expect("tool");
    assert_eq!(text(&r), "Be kind.");
    for (a, class) in [
        (
            json!({ "name": "greeter", "path": "../manual-only/SKILL.md" }),
            "Denied",
        ),
        (
            json!({ "name": "greeter", "path": "/etc/passwd" }),
            "Denied",
        ),
        (
            json!({ "name": "greeter", "path": "missing.md" }),
            "NotFound",
        ),
        (json!({ "name": "nope" }), "UnknownSkill"),
        (json!({}), "InvalidArguments"),
    ] {
        let r = block_on(f.server.call(READ_SKILL, args(a.clone()))).expect("tool");
        assert_eq!(r.is_error, Some(true), "{a}");
        assert!(
            text(&r).starts_with(&format!("{class}: ")),
            "{a}: {}",
            text(&r)
        );
    }
}

#[test]
fn skill_files_are_resources_and_reads_stay_inside() {
    let f = fixture();
    let uris: Vec<String> = f.server.resources().iter().map(|r| r.uri.clone()).collect();
    assert!(
        uris.contains(&"skill://greeter/SKILL.md".to_owned()),
        "{uris:?}"
    );
    assert!(
        uris.contains(&"skill://greeter/references/tone.md".to_owned()),
        "{uris:?}"
    );
    let md = f
        .server
        .resources()
        .into_iter()
        .find(|r| r.uri == "skill://greeter/SKILL.md")
        .expect("listed");
    assert_eq!(md.mime_type.as_deref(), Some("text/markdown"));

    let r = f
        .server
        .read("skill://greeter/references/tone.md")
        .expect("read");
    let v = serde_json::to_value(&r).expect("json");
    assert_eq!(v["contents"][0]["text"], "Be kind.");
    for bad in [
        "skill://greeter/../manual-only/SKILL.md",
        "skill://greeter/%2E%2E/manual-only/SKILL.md",
        "skill://nope/SKILL.md",
        "file:///etc/passwd",
    ] {
        assert!(f.server.read(bad).is_err(), "{bad} must be refused");
    }
}

/// The server of one skill, `proj`, under `dir`, whose folder is also the
/// workspace: its `.skillhost/` holds the host's store, its handler was
/// built in place, and `notes.txt` links to the store.
fn own_workspace_server(dir: &std::path::Path) -> SkillServer {
    let root = dir.join("skills");
    write_skill(&root, "proj", "", "A project that is its own workspace.");
    let ws = root.join("proj");
    for (file, text) in [
        (".skillhost/skillhost.db", "recorded tasks"),
        (".env", "TOKEN=x"),
        (".git/config", "[core]"),
        ("handler/target/release/h.wasm", "build output"),
        ("handler/src/lib.rs", "fn main() {}"),
        ("node_modules/dep/index.js", "dep"),
        ("__pycache__/m.pyc", "cache"),
    ] {
        let path = ws.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    std::os::unix::fs::symlink(".skillhost/skillhost.db", ws.join("notes.txt")).expect("symlink");
    let home = dir.join("home");
    std::fs::create_dir_all(&home).expect("mkdir");
    let paths = Paths {
        home: home.clone(),
        workspace: ws.clone(),
        bundled: None,
        extra_skills: vec![root.clone()],
        cache_override: Some(home.join("cache")),
        workspace_origin: Default::default(),
    };
    let catalog = Catalog::load(&[Root::new(root, Source::Path)], &LoadOptions::default());
    SkillServer::new(Runner::new(paths, Config::default(), catalog))
}

#[test]
fn host_files_dotfiles_and_build_output_are_not_resources() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = own_workspace_server(dir.path());
    let uris: Vec<String> = server.resources().iter().map(|r| r.uri.clone()).collect();
    assert_eq!(
        uris,
        ["skill://proj/SKILL.md", "skill://proj/handler/src/lib.rs"],
        "only the skill's own content is listed"
    );
    let server_path = dir.path().to_string_lossy().into_owned();
    for private in [
        ".skillhost/skillhost.db",
        "%2Eskillhost/skillhost.db",
        "handler/../.skillhost/skillhost.db",
        ".env",
        ".git/config",
        "handler/target/release/h.wasm",
        "node_modules/dep/index.js",
        "__pycache__/m.pyc",
        "notes.txt",
    ] {
        let uri = format!("skill://proj/{private}");
        let e = server.read(&uri).expect_err(&uri);
        assert!(
            e.message.contains("not part of the skill's content"),
            "{uri}: {}",
            e.message
        );
        let r = block_on(server.call(
            READ_SKILL,
            args(json!({ "name": "proj", "path": private.replace("%2E", ".") })),
        ))
        .expect("tool");
        assert_eq!(r.is_error, Some(true), "{private}: {}", text(&r));
        assert!(text(&r).starts_with("Denied: "), "{private}: {}", text(&r));
    }
    // Errors name the resource, not where the skill lives on the server.
    for uri in [
        "skill://proj/missing.md",
        "skill://proj/handler",
        "skill://proj/../outside.md",
    ] {
        let e = server.read(uri).expect_err(uri);
        assert!(e.message.contains(uri), "{uri}: {}", e.message);
        assert!(!e.message.contains(&server_path), "{uri}: {}", e.message);
    }
    let r = block_on(server.call(
        READ_SKILL,
        args(json!({ "name": "proj", "path": "missing.md" })),
    ))
    .expect("tool");
    assert!(!text(&r).contains(&server_path), "{}", text(&r));
}

#[test]
fn user_invocable_skills_are_prompts() {
    let f = fixture();
    let prompts = f.server.prompts();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["greeter", "manual-only"]);
    let greeter = &prompts[0];
    let arg_names: Vec<(&str, Option<bool>)> = greeter
        .arguments
        .iter()
        .flatten()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(
        arg_names,
        [
            ("task", Some(true)),
            ("loud", Some(false)),
            ("name", Some(true))
        ]
    );
    let p = f
        .server
        .prompt(
            "greeter",
            &args(json!({ "task": "say hi", "name": "Dana" })),
        )
        .expect("prompt");
    let v = serde_json::to_value(&p).expect("json");
    let msg = v["messages"][0]["content"]["text"].as_str().expect("text");
    assert!(msg.contains("Task: say hi"), "{msg}");
    assert!(msg.contains("- name: Dana"), "{msg}");
    assert!(msg.contains("Greet people."), "{msg}");
    assert!(
        f.server.prompt("greeter", &Map::new()).is_err(),
        "task is required"
    );
    assert!(
        f.server
            .prompt("instructions-only", &args(json!({"task": "x"})))
            .is_err()
    );
}

#[test]
fn a_skill_call_past_the_places_and_queue_is_a_busy_error_and_listing_is_not() {
    let f = fixture();
    let gate = std::sync::Arc::new(crate::mcp_admission::CallGate::new(
        &crate::mcp_admission::Limits {
            calls: 1,
            queued: 0,
            sessions: 1,
        },
    ));
    let server = f.server.clone().with_call_gate(gate.clone());
    block_on(async {
        let held = gate.enter().await.expect("the one place");
        let e = server
            .call("skill_manual-only", args(json!({ "task": "hi" })))
            .await
            .expect_err("busy");
        assert_eq!(e.code, BUSY_CODE);
        assert!(e.message.starts_with("Busy:"), "{}", e.message);
        let data = e.data.expect("data");
        assert_eq!(data["class"], "Busy");
        assert_eq!(
            data["retryAfterSeconds"],
            crate::mcp_admission::RETRY_AFTER_SECS
        );
        // Listing and reading take no place.
        assert!(server.call(LIST_SKILLS, Map::new()).await.is_ok());
        drop(held);
        let r = server
            .call("skill_manual-only", args(json!({ "task": "hi" })))
            .await
            .expect("a place again");
        assert_eq!(text(&r), "done: hi");
    });
}

#[test]
fn a_missing_or_empty_token_variable_is_named() {
    let var = "SKILLHOST_TEST_TOKEN_THAT_IS_NEVER_SET";
    let e = BearerToken::from_env(var).expect_err("unset");
    assert!(e.to_string().contains(var), "{e}");
}

#[test]
fn a_token_is_checked_whole_and_as_bearer() {
    let token = BearerToken("s3cret".into());
    let header = |v: &str| http::HeaderValue::from_str(v).expect("header");
    assert!(token.admits(Some(&header("Bearer s3cret"))));
    for wrong in [
        "Bearer s3cre",
        "Bearer s3cret2",
        "Basic s3cret",
        "s3cret",
        "Bearer ",
    ] {
        assert!(!token.admits(Some(&header(wrong))), "{wrong}");
    }
    assert!(!token.admits(None));
    assert_eq!(format!("{token:?}"), "BearerToken(..)", "never printed");
}

#[test]
fn remote_binds_need_an_explicit_opt_in() {
    let local: std::net::SocketAddr = "127.0.0.1:8080".parse().expect("addr");
    let local6: std::net::SocketAddr = "[::1]:8080".parse().expect("addr");
    let any: std::net::SocketAddr = "0.0.0.0:8080".parse().expect("addr");
    assert!(check_bind(local, false, false).is_ok());
    assert!(check_bind(local6, false, false).is_ok());
    assert!(matches!(
        check_bind(any, false, false),
        Err(McpError::RemoteBind(_))
    ));
    // Opting in is not enough: remote clients must present a token.
    assert!(matches!(
        check_bind(any, true, false),
        Err(McpError::RemoteWithoutToken(_))
    ));
    assert!(matches!(
        check_bind(any, false, true),
        Err(McpError::RemoteBind(_))
    ));
    assert!(check_bind(any, true, true).is_ok());
}

#[test]
fn pages_follow_their_cursors_and_bad_cursors_are_refused() {
    let items: Vec<usize> = (0..PAGE_SIZE * 2 + 7).collect();
    let with = |cursor: Option<&str>| {
        Some(rmcp::model::PaginatedRequestParams::default().with_cursor(cursor.map(str::to_owned)))
    };
    let (first, next) = page(items.clone(), None).expect("first page");
    assert_eq!((first.len(), first[0]), (PAGE_SIZE, 0));
    let next = next.expect("a second page");
    let (second, next) = page(items.clone(), with(Some(&next))).expect("second page");
    assert_eq!(second[0], PAGE_SIZE);
    let (third, last) = page(items.clone(), with(next.as_deref())).expect("third page");
    assert_eq!((third.len(), last), (7, None));
    for bad in ["-1", "abc", "99999"] {
        let e = page(items.clone(), with(Some(bad))).expect_err(bad);
        assert!(e.message.contains("invalid cursor"), "{bad}: {}", e.message);
    }
    let (empty, none) = page(Vec::<u8>::new(), None).expect("empty list");
    assert!(empty.is_empty() && none.is_none());
}

#[test]
fn a_run_that_cannot_start_keeps_its_class_and_its_cause() {
    use crate::exec::RunError;
    use crate::sandbox::SandboxError;
    let cause = std::sync::Arc::new(std::io::Error::other("no threads left"));
    let e = RunError::from(SandboxError::Engine(cause));
    assert_eq!(e.class(), "SandboxError");
    assert_eq!(RunError::NoMatch.class(), "NoMatch");
    assert_eq!(
        crate::types::Chain(&e).to_string(),
        "cannot set up the wasm engine: no threads left"
    );
}

/// The call places are sized for the memory a call really gets: a default
/// above the ceiling counts as the ceiling, and one too large to count in
/// bytes does not wrap around to a small one.
#[test]
fn call_places_follow_the_memory_a_call_is_given() {
    let limits_with = |memory_mb: u64| {
        let dir = tempfile::tempdir().expect("tempdir");
        let paths = Paths {
            home: dir.path().join("home"),
            workspace: dir.path().join("ws"),
            bundled: None,
            extra_skills: Vec::new(),
            cache_override: Some(dir.path().join("cache")),
            workspace_origin: Default::default(),
        };
        let mut config = Config::default();
        config.limits.memory_mb = memory_mb;
        let runner = Runner::new(paths, config, Catalog::load(&[], &LoadOptions::default()));
        resolve_limits(&runner, &crate::mcp_admission::McpConfig::default()).expect("limits")
    };
    let ceiling = crate::sandbox::LimitDefaults::default().max_memory_mb;
    let at_ceiling = limits_with(ceiling);
    assert_eq!(limits_with(ceiling * 4), at_ceiling);
    // 2^44 MiB is 2^64 bytes: shifted into bytes it used to wrap to 0.
    assert_eq!(limits_with(1 << 44), at_ceiling);
    assert!(limits_with(1).calls >= at_ceiling.calls);
}
