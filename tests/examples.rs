//! The example handlers in `examples/` (the same unit converter in Rust,
//! JavaScript, Python and C) and `skillhost handler new` for each language.
//!
//! Each example is built by its own `build.sh` (`skillhost handler build`)
//! once per test process, then
//! run through the real `skillhost run` on one table of inputs. Every
//! language must give exactly the table's answer or failure, so all four
//! are checked to behave identically, not just to "work". A toolchain that
//! is missing fails the test with a message naming it: CI installs them all
//! (.ci/install-example-toolchains.sh), and a silent skip would hide a
//! broken example.
//!
//! The JavaScript and Python components are 12-18 MB and take a minute to
//! compile in a debug build; `SKILLHOST_CACHE_DIR` points at the harness's
//! shared cache so that happens once per checkout, not once per run.

use crate::harness;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use harness::{Workspace, repo_root};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Rust,
    Js,
    Python,
    C,
}

const LANGS: [Lang; 4] = [Lang::Rust, Lang::Js, Lang::Python, Lang::C];

impl Lang {
    fn dir(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Js => "js",
            Lang::Python => "python",
            Lang::C => "c",
        }
    }
    /// What `handler inspect` must report.
    fn language(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::Js => "JavaScript",
            Lang::Python => "Python",
            Lang::C => "C",
        }
    }
    /// The toolchain a failed build points at.
    fn toolchain(self) -> &'static str {
        match self {
            Lang::Rust => "Rust (cargo with the wasm32-wasip2 target)",
            Lang::Js => {
                "JavaScript (node + @bytecodealliance/componentize-js 0.23 in target/example-tools/node_modules)"
            }
            Lang::Python => "Python (componentize-py 0.25.1 in target/example-tools/venv)",
            Lang::C => "C (clang-19, lld-19, libclang-rt-19-dev-wasm32, wasi-libc)",
        }
    }
    /// The scaffold's source file that says "Hello, ".
    fn source(self) -> &'static str {
        match self {
            Lang::Rust => "handler/src/lib.rs",
            Lang::Js => "handler.js",
            Lang::Python => "app.py",
            Lang::C => "handler.c",
        }
    }
    fn index(self) -> usize {
        LANGS.iter().position(|l| *l == self).unwrap_or(0)
    }
}

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        Some(d) if d.is_absolute() => d,
        Some(d) => repo_root().join(d),
        None => repo_root().join("target"),
    }
}

fn tools_dir() -> PathBuf {
    target_dir().join("example-tools")
}

/// The toolchain channel pinned in rust-toolchain.toml: scaffolded crates
/// live outside the repo, where rustup would otherwise pick its default
/// toolchain (which may lack the wasm32-wasip2 target).
fn pinned_toolchain() -> Option<String> {
    let text = std::fs::read_to_string(repo_root().join("rust-toolchain.toml")).ok()?;
    text.lines()
        .find_map(|l| l.trim().strip_prefix("channel"))
        .and_then(|rest| rest.split('"').nth(1))
        .map(str::to_owned)
}

/// A folder of `wit-bindgen` and `wasm-tools` stand-ins that fail loudly:
/// first on PATH, they prove that no build calls either.
fn decoy_tools() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("skillhost-decoys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir decoys");
        for tool in ["wit-bindgen", "wasm-tools"] {
            let path = dir.join(tool);
            std::fs::write(
                &path,
                format!("#!/bin/sh\necho '{tool} was called, but builds must not need it' >&2\nexit 97\n"),
            )
            .expect("write decoy");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .expect("chmod decoy");
        }
        dir
    })
}

/// The environment a build runs in: skillhost (`$SKILLHOST`, which the
/// build.sh files call) finds the tools the install script put in
/// target/example-tools; PATH has the user's system tools but not
/// target/example-tools/bin (where an old install script put wit-bindgen
/// and wasm-tools), and decoys of those two come first.
fn toolchain_env<'a>(cmd: &'a mut Command, home: &Path) -> &'a mut Command {
    let old_bin = tools_dir().join("bin");
    let mut path = vec![decoy_tools().to_path_buf()];
    if let Some(p) = std::env::var_os("PATH") {
        path.extend(std::env::split_paths(&p).filter(|d| *d != old_bin));
    }
    cmd.env("PATH", std::env::join_paths(path).expect("PATH"))
        .env("SKILLHOST", env!("CARGO_BIN_EXE_skillhost"))
        .env("SKILLHOST_HOME", home)
        .env("SKILLHOST_EXAMPLE_TOOLS", tools_dir())
        .env_remove("WASI_ADAPTER")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    if let Some(t) = pinned_toolchain() {
        cmd.env("RUSTUP_TOOLCHAIN", t);
    }
    cmd
}

/// Runs `cmd` (a build.sh, or `skillhost handler build`) for a handler in
/// `lang`; on failure, a message naming the toolchain. A Rust crate
/// builds into its own corner of target/, not into target/ itself, whose
/// lock the workspace's own builds hold.
fn run_build(lang: Lang, mut cmd: Command, home: &Path, cargo_target: &str) -> Result<(), String> {
    toolchain_env(&mut cmd, home).env(
        "CARGO_TARGET_DIR",
        target_dir().join("examples").join(cargo_target),
    );
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "building the {lang:?} handler with {shown} failed; the {} toolchain is missing or broken \
         (install it with .ci/install-example-toolchains.sh).\nstdout:\n{}\nstderr:\n{}",
        lang.toolchain(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    ))
}

fn build_sh(script: &Path) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg(script);
    cmd
}

/// The example's skill root (`examples/<lang>`), after building its
/// handler once per process.
fn example(lang: Lang) -> PathBuf {
    static BUILT: [OnceLock<Result<(), String>>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let root = repo_root().join("examples").join(lang.dir());
    let skill = root.join("unit-converter");
    BUILT[lang.index()]
        .get_or_init(|| {
            let home = tempfile::tempdir().map_err(|e| e.to_string())?;
            run_build(
                lang,
                build_sh(&skill.join("build.sh")),
                home.path(),
                lang.dir(),
            )
        })
        .as_ref()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        skill.join("handler.wasm").is_file(),
        "{lang:?}: no handler.wasm"
    );
    root
}

/// One row of the shared table: a task, context pairs, and the exact answer
/// (`Ok`) or failure class and message (`Err`).
struct Case {
    task: &'static str,
    context: &'static [&'static str],
    expect: Result<&'static str, (&'static str, &'static str)>,
}

impl Case {
    const fn ok(task: &'static str, context: &'static [&'static str], body: &'static str) -> Case {
        Case {
            task,
            context,
            expect: Ok(body),
        }
    }
    const fn err(task: &'static str, class: &'static str, message: &'static str) -> Case {
        Case {
            task,
            context: &[],
            expect: Err((class, message)),
        }
    }
}

/// The shared table every language must answer exactly.
const CASES: &[Case] = &[
    Case::ok("convert 5 km to mi", &[], "5 km = 3.1069 mi"),
    Case::ok("convert 100 C to F", &[], "100 C = 212 F"),
    Case::ok("Convert -40 Fahrenheit into celsius", &[], "-40 F = -40 C"),
    Case::ok("convert 12.5 lbs in kg", &[], "12.5 lb = 5.6699 kg"),
    Case::ok("convert 1 in to cm", &[], "1 in = 2.54 cm"),
    Case::ok("0 K to C", &[], "0 K = -273.15 C"),
    Case::ok("convert .5 oz to g", &[], "0.5 oz = 14.1748 g"),
    Case::ok(
        "convert this please",
        &["value=3", "from=ft", "to=m"],
        "3 ft = 0.9144 m",
    ),
    Case::ok("convert 5 km to mi", &["to= yd "], "5 km = 5468.0665 yd"),
    Case::err(
        "convert 5 furlong to mi",
        "UnknownUnit",
        "unknown unit \"furlong\"; valid units: m, km, cm, mi, yd, ft, in, kg, g, lb, oz, C, F, K",
    ),
    Case::err(
        "convert 5 km to kg",
        "IncompatibleUnits",
        "cannot convert km (length) to kg (mass)",
    ),
    Case::err(
        "convert five km to mi",
        "InvalidInput",
        "\"five\" is not a number",
    ),
    Case::err(
        "convert 1e3 m to km",
        "InvalidInput",
        "\"1e3\" is not a number",
    ),
    Case::err(
        "what is the weather",
        "InvalidInput",
        "write the task as \"convert 5 km to mi\", or set the context fields value, from and to",
    ),
    Case::err(
        "convert 2000000 m to km",
        "InvalidInput",
        "value must be between -1000000 and 1000000",
    ),
];

/// Runs one case through `skillhost run --json`: the answer body, or the
/// failure's class and message.
fn run_case(ws: &Workspace, root: &Path, case: &Case) -> Result<String, (String, String)> {
    let mut cmd = ws.cli();
    cmd.arg("--skills")
        .arg(root)
        .args(["run", case.task, "--skill", "unit-converter", "--json"]);
    for pair in case.context {
        cmd.args(["-c", pair]);
    }
    let out = harness::CliResult::from(cmd.output().expect("run skillhost"));
    let v = out.json();
    assert_eq!(
        v["tier"], "handler",
        "the handler did not answer: {}",
        out.stdout
    );
    match v["failure"].as_object() {
        None => {
            assert_eq!(out.code, 0, "{}", out.stderr);
            Ok(v["output"]["body"].as_str().unwrap_or_default().to_owned())
        }
        Some(f) => {
            assert_eq!(out.code, 1, "a failure exits 1: {}", out.stderr);
            let s = |k: &str| {
                f.get(k)
                    .and_then(|x| x.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            Err((s("class"), s("message")))
        }
    }
}

/// Builds the example, checks `handler inspect` names its language, and
/// runs the whole table.
fn check_example(lang: Lang) {
    let root = example(lang);
    let ws = Workspace::new();
    let wasm = root.join("unit-converter/handler.wasm");
    let inspect = ws.run_cli(&["handler", "inspect", "--json", &wasm.display().to_string()]);
    assert_eq!(inspect.code, 0, "{}{}", inspect.stdout, inspect.stderr);
    let report = inspect.json();
    assert_eq!(
        report["language"],
        lang.language(),
        "{lang:?}: {}",
        inspect.stdout
    );
    assert_eq!(report["fits_handler_world"], true);

    let mut wrong = Vec::new();
    for case in CASES {
        let got = run_case(&ws, &root, case);
        let want = case
            .expect
            .map(str::to_owned)
            .map_err(|(c, m)| (c.to_owned(), m.to_owned()));
        if got != want {
            wrong.push(format!(
                "  {:?} {:?}\n    got  {got:?}\n    want {want:?}",
                case.task, case.context
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{lang:?} handler differs from the shared table:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn rust_example_converts_and_classifies_failures() {
    check_example(Lang::Rust);
}

#[test]
fn js_example_converts_and_classifies_failures() {
    check_example(Lang::Js);
}

#[test]
fn python_example_converts_and_classifies_failures() {
    check_example(Lang::Python);
}

// C handlers are built in-process, by the `handler-build` feature.
#[cfg(feature = "handler-build")]
#[test]
fn c_example_converts_and_classifies_failures() {
    check_example(Lang::C);
}

/// `handler new NAME --lang L`, then its build.sh, then `skillhost run`.
fn check_scaffold(lang: Lang) {
    let ws = Workspace::new();
    let name = format!("hello-{}", lang.dir());
    let skills = ws.skills.display().to_string();
    let folder = scaffold_once(&ws, lang, &name);
    if lang == Lang::Rust {
        assert_sdk_from_binary(&ws, &folder);
    }
    build_as_generated(&ws, lang, &folder);
    // The generated SKILL.md promises this for `-c name=Ada`.
    let md = std::fs::read_to_string(folder.join("SKILL.md")).expect("SKILL.md");
    assert!(md.contains("`Hello, NAME! You asked: TASK`"), "{md}");
    assert_eq!(
        greet(&ws, &skills, &name),
        "Hello, Ada! You asked: say hello"
    );

    // A change, rebuilt with `skillhost handler build`, shows on the next run.
    edit_and_rebuild(&ws, lang, &folder);
    assert_eq!(
        greet(&ws, &skills, &name),
        "Howdy, Ada! You asked: say hello"
    );

    let empty = ws.run_cli(&["--skills", &skills, "run", " ", "--skill", &name, "--json"]);
    assert_eq!(
        empty.json()["failure"]["class"],
        "InvalidInput",
        "{}",
        empty.stdout
    );
    assert_inspected_as(&ws, lang, &folder.join("handler.wasm"));
}

/// `handler new NAME --lang L` into the workspace's skills, which a second
/// `handler new` of the same name must not overwrite; the new folder.
fn scaffold_once(ws: &Workspace, lang: Lang, name: &str) -> PathBuf {
    let skills = ws.skills.display().to_string();
    let args = [
        "handler",
        "new",
        name,
        "--lang",
        lang.dir(),
        "--dir",
        &skills,
    ];
    let new = ws.run_cli(&args);
    assert_eq!(new.code, 0, "handler new: {}{}", new.stdout, new.stderr);
    let again = ws.run_cli(&args);
    assert_ne!(again.code, 0, "handler new overwrote an existing folder");
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    ws.skills.join(name)
}

/// The Rust scaffold's SDK comes from the binary, not from a checkout or a
/// registry.
fn assert_sdk_from_binary(ws: &Workspace, folder: &Path) {
    let manifest = std::fs::read_to_string(folder.join("handler/Cargo.toml")).expect("read");
    let sdk = ws
        .home
        .join("sdk")
        .canonicalize()
        .expect("the SDK was written");
    assert!(
        manifest.contains(&format!("path = \"{}/", sdk.display())),
        "{manifest}"
    );
    assert!(
        !manifest.contains(&repo_root().display().to_string()),
        "{manifest}"
    );
}

/// Runs the scaffold's own build.sh, offline.
fn build_as_generated(ws: &Workspace, lang: Lang, folder: &Path) {
    if let Err(e) = run_build(
        lang,
        offline(build_sh(&folder.join("build.sh"))),
        &ws.home,
        "scaffolded",
    ) {
        panic!("the scaffolded {lang:?} handler does not build as generated: {e}");
    }
}

/// Offline: the Rust scaffold resolves from the local registry cache.
fn offline(mut cmd: Command) -> Command {
    cmd.env("CARGO_NET_OFFLINE", "true");
    cmd
}

/// The scaffolded skill's answer to "say hello" with `-c name=Ada`.
fn greet(ws: &Workspace, skills: &str, name: &str) -> String {
    let out = ws.run_cli(&[
        "--skills",
        skills,
        "run",
        "say hello",
        "--skill",
        name,
        "-c",
        "name=Ada",
        "--json",
    ]);
    let v = out.json();
    assert_eq!(v["tier"], "handler", "{}", out.stdout);
    v["output"]["body"].as_str().unwrap_or_default().to_owned()
}

/// Makes the scaffold say "Howdy, " instead of "Hello, " and rebuilds it
/// with `skillhost handler build`.
fn edit_and_rebuild(ws: &Workspace, lang: Lang, folder: &Path) {
    let source = folder.join(lang.source());
    let text = std::fs::read_to_string(&source).expect("read source");
    assert!(text.contains("Hello, "), "{text}");
    std::fs::write(&source, text.replace("Hello, ", "Howdy, ")).expect("edit source");
    let mut rebuild = ws.cli();
    rebuild.args(["handler", "build"]).arg(folder);
    if let Err(e) = run_build(lang, offline(rebuild), &ws.home, "scaffolded") {
        panic!("the edited {lang:?} handler does not rebuild: {e}");
    }
}

/// `handler inspect` names the language `wasm` was written in.
fn assert_inspected_as(ws: &Workspace, lang: Lang, wasm: &Path) {
    let inspect = ws.run_cli(&["handler", "inspect", "--json", &wasm.display().to_string()]);
    assert_eq!(
        inspect.json()["language"],
        lang.language(),
        "{}",
        inspect.stdout
    );
}

#[test]
fn handler_new_rust_builds_and_runs() {
    check_scaffold(Lang::Rust);
}

#[test]
fn handler_new_js_builds_and_runs() {
    check_scaffold(Lang::Js);
}

#[test]
fn handler_new_python_builds_and_runs() {
    check_scaffold(Lang::Python);
}

// C handlers are built in-process, by the `handler-build` feature.
#[cfg(feature = "handler-build")]
#[test]
fn handler_new_c_builds_and_runs() {
    check_scaffold(Lang::C);
}

#[test]
fn handler_new_refuses_bad_names_before_writing() {
    let ws = Workspace::new();
    let skills = ws.skills.display().to_string();
    for bad in ["../escape", "Upper", "a b", "9lives", "double--hyphen", ""] {
        let out = ws.run_cli(&["handler", "new", bad, "--lang", "c", "--dir", &skills]);
        assert_ne!(out.code, 0, "{bad:?} accepted");
        assert!(
            out.stderr.contains("invalid skill name"),
            "{bad:?}: {}",
            out.stderr
        );
    }
    let left: Vec<_> = std::fs::read_dir(&ws.skills).expect("read").collect();
    assert!(left.is_empty(), "something was written for a bad name");
    assert!(
        !ws.skills
            .parent()
            .map(|p| p.join("escape").exists())
            .unwrap_or(false)
    );
}

/// The Python example imports what its runtime imports, used or not:
/// wasi:sockets, wasi:filesystem and every function of the host interface.
/// The gate rejects it for a skill that declares none of them, and it
/// passes (the shared table as its cases) only through the documented
/// route: the operator lets exactly those imports through for this skill,
/// and the report lists each one.
#[test]
fn python_example_passes_the_gate_only_through_the_documented_route() {
    let root = example(Lang::Python);
    let ws = Workspace::new();
    let dir = ws.skills.join("unit-converter");
    std::fs::create_dir_all(dir.join("tests")).expect("mkdir");
    for f in ["SKILL.md", "handler.wasm"] {
        std::fs::copy(root.join("unit-converter").join(f), dir.join(f)).expect("copy");
    }
    let lines: Vec<String> = CASES
        .iter()
        .map(|c| {
            let context: serde_json::Map<String, serde_json::Value> = c
                .context
                .iter()
                .map(|pair| {
                    let (k, v) = pair.split_once('=').expect("KEY=VALUE");
                    (k.to_owned(), serde_json::Value::String(v.to_owned()))
                })
                .collect();
            let expect = match c.expect {
                Ok(body) => serde_json::json!({ "output": body }),
                Err((class, message)) => {
                    serde_json::json!({ "failure": class, "message": message })
                }
            };
            let mut line = serde_json::json!({ "task": c.task, "context": context });
            if let (Some(l), Some(e)) = (line.as_object_mut(), expect.as_object()) {
                l.extend(e.clone());
            }
            line.to_string()
        })
        .collect();
    std::fs::write(dir.join("tests/cases.jsonl"), lines.join("\n")).expect("write cases");
    let skills = ws.skills.display().to_string();
    let gate = |ws: &Workspace| {
        ws.run_cli(&[
            "--skills",
            &skills,
            "handler",
            "gate",
            "unit-converter",
            "--json",
        ])
    };

    let rejected = gate(&ws);
    assert_eq!(rejected.code, 1, "{}{}", rejected.stdout, rejected.stderr);
    let report = &rejected.json()["report"];
    let imports = report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|v| v["check"] == "imports"))
        .expect("imports verdict");
    assert_eq!(imports["status"], "fail", "{report}");
    assert_eq!(imports["class"], "UndeclaredImport", "{report}");
    let refused = imports["details"].to_string();
    for i in [
        "wasi:sockets/tcp",
        "wasi:filesystem/preopens",
        "skillhost:skill/host#complete",
    ] {
        assert!(refused.contains(i), "{i} not refused: {refused}");
    }
    assert!(
        report["cases"].as_array().is_some_and(|c| c.is_empty()),
        "nothing ran"
    );

    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[gate.allow_imports]\nunit-converter = [\"wasi:sockets\", \"wasi:filesystem\", \"skillhost:skill/host\"]\n",
    )
    .expect("write config");
    let passed = gate(&ws);
    let v = passed.json();
    let report = &v["report"];
    assert_eq!(passed.code, 0, "{report:#}\n{}", passed.stderr);
    assert_eq!(report["outcome"], "passed");
    let imports = report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|v| v["check"] == "imports"))
        .expect("imports verdict");
    assert!(
        imports["explanation"]
            .as_str()
            .is_some_and(|e| e.contains("[gate.allow_imports]")),
        "{imports}"
    );
    let let_through = imports["details"].as_array().expect("listed");
    assert!(
        let_through.iter().all(|d| d
            .as_str()
            .is_some_and(|d| d.starts_with("let through by [gate.allow_imports] unit-converter"))),
        "{imports}"
    );
    assert_eq!(
        report["cases"].as_array().map(Vec::len),
        Some(CASES.len()),
        "{report:#}"
    );
}
