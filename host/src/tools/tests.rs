//! Policy layers and pipelines, with small in-memory tools.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::pipeline::{self, Pipeline};
use super::*;
use crate::skill::{Capabilities, FileCapabilities, SkillMeta, Source};

fn skill(allowed_tools: Option<Vec<&str>>) -> Skill {
    Skill {
        name: "s".into(),
        description: "test".into(),
        body: String::new(),
        dir: std::env::temp_dir(),
        path: std::env::temp_dir().join("SKILL.md"),
        version: "sha256:0".into(),
        source: Source::Workspace,
        warnings: Vec::new(),
        meta: SkillMeta {
            allowed_tools: allowed_tools.map(|v| v.into_iter().map(String::from).collect()),
            ..SkillMeta::default()
        },
    }
}

/// Returns its arguments; optionally waits on a shared barrier first.
struct Echo {
    name: &'static str,
    barrier: Option<Arc<tokio::sync::Barrier>>,
}

impl Tool for Echo {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> String {
        "echo".into()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    fn call<'a>(
        &'a self,
        _t: &'a Toolbox,
        _cx: &'a CallContext<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            if let Some(b) = &self.barrier {
                b.wait().await;
            }
            Ok(args.get("v").cloned().unwrap_or(Value::Null))
        })
    }
}

fn toolbox(config: ToolsConfig, barrier: Option<Arc<tokio::sync::Barrier>>) -> Toolbox {
    let mut tb = Toolbox::new(
        Policy::new(config),
        std::env::temp_dir(),
        Arc::new(Catalog::from_skills(vec![])),
    );
    tb.register(Arc::new(Echo {
        name: "echo",
        barrier: None,
    }));
    tb.register(Arc::new(Echo {
        name: "meet",
        barrier,
    }));
    for t in builtin::all() {
        tb.register(t);
    }
    tb.register(Arc::new(http_fetch::HTTP_FETCH));
    tb.register(Arc::new(pipeline::EXECUTE_PIPELINE));
    tb
}

fn cx<'a>(skill: &'a Skill, grants: &'a Capabilities, trusted: bool) -> CallContext<'a> {
    CallContext {
        skill,
        grants,
        trusted,
        caller: Caller::Model,
        depth: 0,
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn pipe(v: Value) -> Pipeline {
    serde_json::from_value(v).expect("pipeline")
}

fn denied_by(r: Result<Value, ToolError>, layer: Layer) -> String {
    match r {
        Err(ToolError::Denied(d)) => {
            let m = d.to_string();
            assert!(
                m.starts_with(&layer.to_string()),
                "denied by the wrong layer: {m}"
            );
            m
        }
        other => panic!("expected a denial by {layer}, got {other:?}"),
    }
}

#[test]
fn global_layer_denies() {
    let s = skill(None);
    let g = Capabilities::default();
    let deny = ToolsConfig {
        deny: vec!["ec*".into()],
        ..ToolsConfig::default()
    };
    let r = rt().block_on(toolbox(deny, None).call("echo", json!({}), &cx(&s, &g, true)));
    denied_by(r, Layer::Global);
    let allow_only = ToolsConfig {
        allow: vec!["meet".into()],
        ..ToolsConfig::default()
    };
    let tb = toolbox(allow_only, None);
    let r = rt().block_on(tb.call("echo", json!({}), &cx(&s, &g, true)));
    denied_by(r, Layer::Global);
    assert_eq!(
        tb.allowed(&cx(&s, &g, true)).len(),
        1,
        "the model is offered only allowed tools"
    );
}

#[test]
fn allowed_tools_layer_denies() {
    let s = skill(Some(vec!["Read", "meet"]));
    let g = Capabilities::default();
    let tb = toolbox(ToolsConfig::default(), None);
    let r = rt().block_on(tb.call("echo", json!({}), &cx(&s, &g, true)));
    let m = denied_by(r, Layer::AllowedTools);
    assert!(m.contains("does not list `echo`"), "{m}");
    let names: Vec<String> = tb
        .allowed(&cx(&s, &g, true))
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        vec!["meet", "read_file", "read_skill_file"],
        "`Read` maps to our read tools"
    );
}

#[test]
fn trust_layer_denies() {
    let s = skill(None);
    let g = Capabilities::default();
    let tb = toolbox(ToolsConfig::default(), None);
    let r = rt().block_on(tb.call(
        "http_fetch",
        json!({"url": "https://example.com/"}),
        &cx(&s, &g, false),
    ));
    let m = denied_by(r, Layer::Trust);
    assert!(m.contains("skillhost skills grant s"), "{m}");
    // Tools confined to the skill's own files stay available.
    let names: Vec<String> = tb
        .allowed(&cx(&s, &g, false))
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, vec!["list_skill_files", "read_skill_file"]);
}

#[test]
fn grants_layer_denies() {
    let s = skill(None);
    let tb = toolbox(ToolsConfig::default(), None);
    let g = Capabilities {
        files: FileCapabilities {
            read: vec!["workspace:notes".into()],
            write: vec![],
        },
        http: vec!["api.example.com".into()],
        ..Capabilities::default()
    };
    let c = cx(&s, &g, true);
    let r = rt().block_on(tb.call("read_file", json!({"path": "secrets/key.txt"}), &c));
    denied_by(r, Layer::Grants);
    let r = rt().block_on(tb.call("read_file", json!({"path": "notes/../secrets/key.txt"}), &c));
    denied_by(r, Layer::Grants);
    let r = rt().block_on(tb.call(
        "write_file",
        json!({"path": "notes/x.txt", "content": "x"}),
        &c,
    ));
    denied_by(r, Layer::Grants);
    let r = rt().block_on(tb.call(
        "http_fetch",
        json!({"url": "https://evil.example.org/"}),
        &c,
    ));
    denied_by(r, Layer::Grants);
    // Granted host, but it resolves to loopback: the guard refuses it.
    let g2 = Capabilities {
        http: vec!["localhost".into()],
        ..Capabilities::default()
    };
    let r = rt().block_on(tb.call(
        "http_fetch",
        json!({"url": "http://localhost:9/"}),
        &cx(&s, &g2, true),
    ));
    let m = denied_by(r, Layer::Grants);
    assert!(m.contains("loopback"), "{m}");
}

#[test]
fn denials_name_what_was_refused_and_keep_their_text() {
    let s = skill(None);
    let tb = toolbox(ToolsConfig::default(), None);
    let g = Capabilities::default();
    let c = cx(&s, &g, true);
    let denied = |name: &str, args: Value| match tb.check(name, &args, &c) {
        Err(ToolError::Denied(d)) => d,
        other => panic!("{name}: expected a denial, got {other:?}"),
    };
    let d = denied("http_fetch", json!({"url": "https://evil.example.org/"}));
    assert_eq!(
        d.reason,
        Denied::Net(crate::grants::netguard::NetDenied::HostNotGranted(
            "evil.example.org".into()
        ))
    );
    assert_eq!(
        d.to_string(),
        "sandbox grants: host `evil.example.org` is not granted to this skill"
    );
    let d = denied("write_file", json!({"path": "notes/x.txt", "content": "x"}));
    assert!(
        matches!(&d.reason, Denied::NoFileGrant { path, write: true, .. } if path == "notes/x.txt"),
        "{d:?}"
    );
    assert_eq!(
        d.to_string(),
        "sandbox grants: skill `s` has no write grant covering `workspace:notes/x.txt`"
    );
    let d = denied("read_skill_file", json!({"path": "SKILL.md", "skill": 7}));
    assert_eq!(
        d.to_string(),
        "sandbox grants: `read_skill_file` reads only the files of the calling skill `s`, not of skill 7"
    );
    let d = denied("http_fetch", json!({"url": "nope"}));
    assert!(
        matches!(d.reason, Denied::Url(UrlError::NotAUrl { .. })),
        "{d:?}"
    );
    assert!(
        d.to_string()
            .starts_with("sandbox grants: InvalidArguments: `nope` is not a URL: "),
        "{d}"
    );
}

#[test]
fn workspace_files_under_grants() {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(ws.path().join("notes")).expect("mkdir");
    std::fs::write(ws.path().join("notes/a.txt"), "alpha").expect("write");
    std::os::unix::fs::symlink("/etc/passwd", ws.path().join("notes/leak")).expect("symlink");
    let mut tb = toolbox(ToolsConfig::default(), None);
    tb.workspace = PathBuf::from(ws.path());
    let s = skill(None);
    let g = Capabilities {
        files: FileCapabilities {
            read: vec![],
            write: vec!["workspace:notes".into()],
        },
        ..Capabilities::default()
    };
    let c = cx(&s, &g, true);
    let rt = rt();
    assert_eq!(
        rt.block_on(tb.call("read_file", json!({"path": "notes/a.txt"}), &c)),
        Ok(json!("alpha"))
    );
    rt.block_on(tb.call(
        "write_file",
        json!({"path": "notes/sub/b.txt", "content": "beta"}),
        &c,
    ))
    .expect("write");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes/sub/b.txt")).expect("read"),
        "beta"
    );
    let r = rt.block_on(tb.call("read_file", json!({"path": "notes/leak"}), &c));
    assert!(
        matches!(r, Err(ToolError::Failed { .. })),
        "symlink out of the folder must fail: {r:?}"
    );
}

#[test]
fn write_file_never_reaches_the_hosts_control_files() {
    let ws = tempfile::tempdir().expect("tempdir");
    let root = ws.path().canonicalize().expect("canonical");
    std::fs::write(root.join("skillhost.toml"), "# operator\n").expect("write");
    std::fs::create_dir_all(root.join(".agents/skills")).expect("mkdir");
    let paths = crate::paths::Paths {
        home: root.join("home"),
        workspace: root.clone(),
        bundled: None,
        extra_skills: Vec::new(),
        cache_override: None,
        workspace_origin: Default::default(),
    };
    let mut tb = toolbox(ToolsConfig::default(), None);
    tb.workspace = root.clone();
    tb.control = Arc::new(paths.control_paths());
    let s = skill(None);
    let g = Capabilities {
        files: FileCapabilities {
            read: vec![],
            write: vec!["workspace:.".into(), "workspace:.agents".into()],
        },
        ..Capabilities::default()
    };
    let c = cx(&s, &g, true);
    let rt = rt();
    for path in [
        "skillhost.toml",
        ".agents/skills/evil/SKILL.md",
        "notes.txt",
    ] {
        let r = rt.block_on(tb.call("write_file", json!({"path": path, "content": "x"}), &c));
        match r {
            Err(ToolError::Denied(m)) => {
                assert!(m.to_string().contains("covers skillhost's own"), "{m}")
            }
            other => panic!("{path}: {other:?}"),
        }
    }
    assert_eq!(
        std::fs::read_to_string(root.join("skillhost.toml")).expect("read"),
        "# operator\n"
    );
    assert!(!root.join(".agents/skills/evil").exists());
}

#[test]
fn pipeline_checks_everything_before_running() {
    let s = skill(None);
    let g = Capabilities::default();
    let tb = toolbox(
        ToolsConfig {
            pipeline_allow: vec!["echo".into(), "meet".into()],
            pipeline_max_steps: 3,
            ..ToolsConfig::default()
        },
        None,
    );
    let c = cx(&s, &g, true);
    let rt = rt();
    let too_many = pipe(
        json!({"steps": [{"tool": "echo"}, {"tool": "echo"}, {"tool": "echo"}, {"tool": "echo"}]}),
    );
    assert!(matches!(
        rt.block_on(pipeline::run(&tb, &c, &too_many)),
        Err(ToolError::TooManySteps(_))
    ));
    let outside = pipe(
        json!({"steps": [{"tool": "echo"}, {"tool": "read_skill_file", "args": {"path": "x"}}]}),
    );
    assert!(matches!(
        rt.block_on(pipeline::run(&tb, &c, &outside)),
        Err(ToolError::UnknownTool(_))
    ));
    let missing = pipe(json!({"steps": [{"tool": "nope"}]}));
    assert!(matches!(
        rt.block_on(pipeline::run(&tb, &c, &missing)),
        Err(ToolError::UnknownTool(_))
    ));
    let forward = pipe(
        json!({"steps": [{"tool": "echo", "args": {"v": "{{step[1].result}}"}}, {"tool": "echo"}]}),
    );
    let e = rt
        .block_on(pipeline::run(&tb, &c, &forward))
        .expect_err("forward reference");
    assert!(e.to_string().contains("has not run yet"), "{e}");
    let dangling = pipe(json!({"steps": [{"tool": "echo", "args": {"v": "{{step[7].result}}"}}]}));
    let e = rt
        .block_on(pipeline::run(&tb, &c, &dangling))
        .expect_err("missing step");
    assert!(e.to_string().contains("does not exist"), "{e}");
    let recursive = pipe(json!({"steps": [{"tool": "execute_pipeline", "args": {"steps": []}}]}));
    let e = rt
        .block_on(pipeline::run(&tb, &c, &recursive))
        .expect_err("self call");
    assert!(
        e.to_string().contains("cannot call execute_pipeline"),
        "{e}"
    );
}

/// Counts its calls (a side effect a test can see) and returns `v`;
/// confined, so even an ungranted skill may use it.
struct Mark(Arc<AtomicUsize>);

impl Tool for Mark {
    fn name(&self) -> &str {
        "mark"
    }
    fn description(&self) -> String {
        "mark".into()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    fn confined(&self) -> bool {
        true
    }
    fn call<'a>(
        &'a self,
        _t: &'a Toolbox,
        _cx: &'a CallContext<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(args.get("v").cloned().unwrap_or(Value::Null))
        })
    }
}

/// A toolbox that denies `echo` and has [`Mark`], working in `workspace`,
/// and the count of `mark` calls.
fn marking_toolbox(workspace: &std::path::Path) -> (Toolbox, Arc<AtomicUsize>) {
    let marks = Arc::new(AtomicUsize::new(0));
    let mut tb = toolbox(
        ToolsConfig {
            deny: vec!["echo".into()],
            ..ToolsConfig::default()
        },
        None,
    );
    tb.workspace = PathBuf::from(workspace);
    tb.register(Arc::new(Mark(marks.clone())));
    (tb, marks)
}

/// A step each layer denies: the layer, the skill, whether it is trusted,
/// and the step.
fn denied_steps() -> [(Layer, Skill, bool, Value); 5] {
    [
        // A step that takes an earlier result still passes layers 1-3 first.
        (
            Layer::Global,
            skill(None),
            true,
            json!({"tool": "echo", "args": {"v": "{{step[0].result}}"}}),
        ),
        (
            Layer::AllowedTools,
            skill(Some(vec!["mark", "write_file"])),
            true,
            json!({"tool": "meet"}),
        ),
        (
            Layer::Trust,
            skill(None),
            false,
            json!({"tool": "http_fetch", "args": {"url": "https://example.com/"}}),
        ),
        (
            Layer::Grants,
            skill(None),
            true,
            json!({"tool": "http_fetch", "args": {"url": "http://127.0.0.1:9/"}}),
        ),
        (
            Layer::Grants,
            skill(None),
            true,
            json!({"tool": "read_skill_file", "args": {"skill": "other", "path": "secret.txt"}}),
        ),
    ]
}

#[test]
fn a_step_denied_by_any_layer_is_refused_before_any_step_runs() {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(ws.path().join("data")).expect("mkdir");
    let (tb, marks) = marking_toolbox(ws.path());
    let g = Capabilities {
        files: FileCapabilities {
            read: vec![],
            write: vec!["workspace:data".into()],
        },
        ..Capabilities::default()
    };
    let write = json!({"tool": "write_file", "args": {"path": "data/x", "content": "x"}});
    let cases = denied_steps();
    let rt = rt();
    for parallel in [false, true] {
        for (layer, s, trusted, denied) in &cases {
            let mut steps = vec![json!({"tool": "mark"})];
            if *trusted {
                steps.push(write.clone());
            }
            steps.push(denied.clone());
            let p = pipe(json!({"steps": steps, "parallel": parallel}));
            let r = rt.block_on(pipeline::run(&tb, &cx(s, &g, *trusted), &p));
            let m = denied_by(r, *layer);
            assert!(m.contains("no step ran"), "{m}");
            assert_eq!(marks.load(Ordering::SeqCst), 0, "{layer}: a step ran");
            assert!(
                !ws.path().join("data/x").exists(),
                "{layer}: the file was written"
            );
        }
    }
    // The same steps without the refused one run, so nothing else stopped them.
    let s = skill(None);
    let p = pipe(json!({"steps": [{"tool": "mark"}, write]}));
    rt.block_on(pipeline::run(&tb, &cx(&s, &g, true), &p))
        .expect("run");
    assert_eq!(marks.load(Ordering::SeqCst), 1);
    assert!(ws.path().join("data/x").exists());
    // Arguments that come from an earlier result are checked when final.
    let p = pipe(json!({"steps": [
        {"tool": "mark", "args": {"v": "https://not-granted.example.org/"}},
        {"tool": "http_fetch", "args": {"url": "{{step[0].result}}"}}
    ]}));
    let r = rt.block_on(pipeline::run(&tb, &cx(&s, &g, true), &p));
    let e = r.expect_err("not granted");
    assert_eq!(e.class(), "Denied", "{e}");
}

#[test]
fn pipeline_interpolates_and_returns_last_or_all() {
    let s = skill(None);
    let g = Capabilities::default();
    let tb = toolbox(ToolsConfig::default(), None);
    let c = cx(&s, &g, true);
    let p = pipe(json!({
        "steps": [
            {"tool": "echo", "args": {"v": "{{step[0].result}} injected"}},
            {"tool": "echo", "args": {"v": "got <{{step[0].result}}>"}}
        ],
        "result": "last"
    }));
    // Step 0 gets its own (not yet existing) reference? No: refused up front.
    assert!(rt().block_on(pipeline::run(&tb, &c, &p)).is_err());
    let p = pipe(json!({
        "steps": [
            {"tool": "echo", "args": {"v": "a {{"}},
            {"tool": "echo", "args": {"v": "got <{{step[0].result}}>"}}
        ]
    }));
    let all = rt().block_on(pipeline::run(&tb, &c, &p)).expect("run");
    assert_eq!(
        all[1]["result"], "got <a >",
        "the substituted value had its `{{{{` removed"
    );
    assert_eq!(all[0]["tool"], "echo");
}

#[test]
fn parallel_steps_run_together_and_results_keep_step_order() {
    let s = skill(None);
    let g = Capabilities::default();
    // Both `meet` steps wait on a barrier for two: run one after the other,
    // they would never get past it.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let tb = toolbox(ToolsConfig::default(), Some(barrier));
    let c = cx(&s, &g, true);
    let p = pipe(json!({
        "parallel": true,
        "steps": [
            {"tool": "meet", "args": {"v": "first"}},
            {"tool": "meet", "args": {"v": "second"}},
            {"tool": "echo", "args": {"v": "{{step[0].result}}+{{step[1].result}}"}}
        ]
    }));
    let rt = rt();
    let all = rt
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(10), pipeline::run(&tb, &c, &p)).await
        })
        .expect("parallel steps must not wait for each other")
        .expect("run");
    let results: Vec<&Value> = all
        .as_array()
        .expect("array")
        .iter()
        .map(|r| &r["result"])
        .collect();
    assert_eq!(results, vec!["first", "second", "first+second"]);
}

fn offered_names(tb: &Toolbox, s: &Skill, g: &Capabilities, trusted: bool) -> Vec<String> {
    tb.offered(&cx(s, g, trusted))
        .into_iter()
        .map(|t| t.name)
        .collect()
}

#[test]
fn a_skill_with_only_its_skill_md_and_no_declared_tools_is_offered_no_tool() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("SKILL.md"), "---\nname: s\n---\n").expect("write");
    let mut s = skill(None);
    s.dir = dir.path().to_path_buf();
    let tb = toolbox(ToolsConfig::default(), None);
    let none: Vec<String> = Vec::new();
    assert_eq!(offered_names(&tb, &s, &Capabilities::default(), true), none);
    // Its own files once it has some; hidden files do not count, nor the
    // handler's component and source folder (the host's, not the model's).
    std::fs::write(dir.path().join(".DS_Store"), "x").expect("write");
    std::fs::create_dir(dir.path().join("handler")).expect("mkdir");
    std::fs::write(dir.path().join("handler/lib.rs"), "x").expect("write");
    std::fs::write(dir.path().join("h.wasm"), "x").expect("write");
    s.meta.skillhost.handler = Some("h.wasm".into());
    assert_eq!(offered_names(&tb, &s, &Capabilities::default(), true), none);
    std::fs::write(dir.path().join("reference.md"), "x").expect("write");
    assert_eq!(
        offered_names(&tb, &s, &Capabilities::default(), true),
        vec!["list_skill_files", "read_skill_file"]
    );
}

#[test]
fn grants_offer_the_tools_they_make_usable_and_only_to_a_trusted_skill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = skill(None);
    s.dir = dir.path().to_path_buf();
    let tb = toolbox(ToolsConfig::default(), None);
    let mut g = Capabilities {
        http: vec!["api.example.com".into()],
        ..Capabilities::default()
    };
    g.files.read = vec!["workspace:docs".into(), "data".into()];
    assert_eq!(
        offered_names(&tb, &s, &g, true),
        vec!["find_files", "http_fetch", "read_file"]
    );
    g.files.write = vec!["workspace:out".into()];
    assert_eq!(
        offered_names(&tb, &s, &g, true),
        vec!["find_files", "http_fetch", "read_file", "write_file"]
    );
    let none: Vec<String> = Vec::new();
    assert_eq!(
        offered_names(&tb, &s, &g, false),
        none,
        "untrusted: policy first"
    );
}

#[test]
fn tools_beyond_the_skill_are_offered_only_when_declared_and_usable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = skill(Some(vec!["meet", "execute_pipeline", "Read", "http_fetch"]));
    s.dir = dir.path().to_path_buf();
    let tb = toolbox(ToolsConfig::default(), None);
    // Declared but unusable (no files, no grants) stays out; `echo` is
    // usable but not declared.
    assert_eq!(
        offered_names(&tb, &s, &Capabilities::default(), true),
        vec!["execute_pipeline", "meet"]
    );
    let bare = skill(None);
    assert!(
        !offered_names(&tb, &bare, &Capabilities::default(), true).contains(&"meet".to_owned()),
        "a skill declaring neither tools nor capabilities works from its text"
    );
    // A workflow skill (it declares capabilities, no allowed-tools) is
    // offered what the policy allows.
    let mut workflow = skill(None);
    workflow.dir = dir.path().to_path_buf();
    workflow.meta.skillhost.capabilities.kv = true;
    let names = offered_names(&tb, &workflow, &Capabilities::default(), true);
    assert_eq!(names, vec!["echo", "execute_pipeline", "meet"]);
}
