//! Shared helpers for the sandbox and CLI tests: build the test guest
//! components once per test binary, lay out throwaway workspaces, and run
//! the real `skillhost` binary against them.

#![allow(dead_code)]

pub mod load;
pub mod mcp_http;
pub mod mcp_stdio;
pub mod postgres;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use skillhost::config::Config;
use skillhost::exec::{RunOutcome, RunRequest, Runner};
use skillhost::paths::Paths;
use skillhost::skill::{Catalog, LoadOptions};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ is in the repo")
        .to_path_buf()
}

/// The build folder tests and their builds share.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|d| {
            if d.is_absolute() {
                d
            } else {
                repo_root().join(d)
            }
        })
        .unwrap_or_else(|| repo_root().join("target"))
}

/// Compiled components are cached here for every test of every binary, so
/// each guest is compiled once per checkout, not once per test.
pub fn cache_dir() -> PathBuf {
    target_dir().join("test-component-cache")
}

/// Builds the guest components under `tests/guests` (once per process;
/// cargo itself makes concurrent builds from other test binaries safe).
pub fn guest(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = BUILT
        .get_or_init(|| {
            // A folder of this checkout's own: where several checkouts share
            // one target dir, a build of another's test guests would
            // otherwise replace these files under a running test.
            let checkout = {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                repo_root().hash(&mut h);
                format!("{:016x}", h.finish())
            };
            let out = target_dir().join("test-guests").join(checkout);
            let status = Command::new(env!("CARGO"))
                .current_dir(repo_root())
                .args(["build", "--quiet", "--profile", "guest", "--target", "wasm32-wasip2"])
                .args(["-p", "echo-guest", "-p", "hostile-guest", "-p", "counter-guest"])
                .args(["-p", "probe-guest"])
                .arg("--target-dir")
                .arg(&out)
                .env_remove("RUSTFLAGS")
                .env_remove("CARGO_ENCODED_RUSTFLAGS")
                .status()
                .map_err(|e| format!("cannot run cargo: {e}"))?;
            if !status.success() {
                return Err("building the test guests failed (is the wasm32-wasip2 target installed? `rustup target add wasm32-wasip2`)".into());
            }
            Ok(out.join("wasm32-wasip2").join("guest"))
        })
        .as_ref()
        .unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join(format!("{}.wasm", name.replace('-', "_")));
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// A throwaway home + workspace + skill root.
pub struct Workspace {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub workspace: PathBuf,
    /// A `--skills` root for test skills.
    pub skills: PathBuf,
}

impl Workspace {
    /// A rules.json with one enabled prevention rule that harms the
    /// text-summarizer (it forces `sentences` to 0): learning must find it
    /// harmful, and the operator can disable it.
    pub fn write_harmful_summarizer_rule(&self) {
        let rules = serde_json::json!({"rules": [{
            "id": "prevent-bad-text-summarizer",
            "kind": "prevention",
            "class": "Made-up",
            "scope": "text-summarizer",
            "conditions": [],
            "actions": [{"action": "set_field", "field": "sentences", "value": 0, "force": true}],
            "origin": {"pattern": "test", "failures": [], "failure_count": 0},
            "confidence": 0.5, "applied": 0, "succeeded": 0, "enabled": true
        }]});
        let dir = self.workspace.join(".skillhost/learning");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("rules.json"), rules.to_string()).expect("write");
    }

    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let workspace = dir.path().join("ws");
        let skills = dir.path().join("skills");
        for d in [&home, &workspace, &skills] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        Workspace {
            _dir: dir,
            home,
            workspace,
            skills,
        }
    }

    /// Writes `skills/NAME/SKILL.md` with `front` (YAML lines, indented as
    /// top-level keys) and copies `handler` to `handler.wasm`.
    pub fn add_skill(&self, name: &str, front: &str, handler: Option<&Path>) -> PathBuf {
        let dir = self.skills.join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let md = format!(
            "---\nname: {name}\ndescription: Test skill {name}.\n{front}\n---\n\n# {name}\n\nTest skill.\n"
        );
        std::fs::write(dir.join("SKILL.md"), md).expect("write SKILL.md");
        if let Some(h) = handler {
            std::fs::copy(h, dir.join("handler.wasm")).expect("copy handler");
        }
        dir
    }

    pub fn paths(&self) -> Paths {
        Paths {
            home: self.home.clone(),
            workspace: self.workspace.clone(),
            bundled: None,
            extra_skills: vec![self.skills.clone()],
            cache_override: Some(cache_dir()),
            workspace_origin: Default::default(),
        }
    }

    /// A runner over this workspace's skills with `config`.
    pub fn runner(&self, config: Config) -> Runner {
        let paths = self.paths();
        let catalog = Catalog::load(&paths.roots(), &LoadOptions::default());
        Runner::new(paths, config, catalog)
    }

    /// Grants skill `name` of this workspace everything it declares, pinned
    /// to its fingerprint, in `config` (what `skills grant NAME` writes).
    pub fn grant_declared(&self, config: &mut Config, name: &str) {
        let probe = self.runner(Config::default());
        let catalog = probe.catalog();
        let skill = catalog.get(name).expect("the skill loads");
        config.grants.insert(
            name.to_owned(),
            skillhost::config::Grant {
                pin: skill.pin().expect("fingerprint"),
                capabilities: skill.meta.skillhost.capabilities.clone(),
                ..Default::default()
            },
        );
    }

    /// The real binary, isolated in this workspace.
    pub fn cli(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_skillhost"));
        c.current_dir(&self.workspace)
            .env("SKILLHOST_HOME", &self.home)
            .env("SKILLHOST_CACHE_DIR", cache_dir())
            .env_remove("RUST_BACKTRACE")
            // Diagnostics at the default level, whatever the shell asks.
            .env_remove("RUST_LOG");
        c
    }

    /// `cli` with its caches in this workspace's home, as a user's are,
    /// not in the component cache the tests share (the audit's findings
    /// cache included); the raw output.
    pub fn output(&self, args: &[&str]) -> Output {
        self.cli()
            .env_remove("SKILLHOST_CACHE_DIR")
            .args(args)
            .output()
            .expect("run skillhost")
    }

    pub fn run_cli(&self, args: &[&str]) -> CliResult {
        let out = self.cli().args(args).output().expect("run skillhost");
        CliResult::from(out)
    }

    /// `run_cli` that must succeed; its stdout.
    pub fn run_ok(&self, args: &[&str]) -> String {
        let r = self.run_cli(args);
        assert_eq!(
            r.code, 0,
            "skillhost {args:?} failed:\n{}\n{}",
            r.stdout, r.stderr
        );
        r.stdout
    }
}

pub struct CliResult {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for CliResult {
    fn from(o: Output) -> Self {
        CliResult {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl CliResult {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!("stdout is not JSON ({e}): {}\n{}", self.stdout, self.stderr)
        })
    }
}

/// Runs `task` on `skill` with context pairs, on a fresh single-use runtime.
/// A two-worker runtime, like the machine's two cores.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

pub fn run(runner: &Runner, skill: &str, task: &str, context: serde_json::Value) -> RunOutcome {
    let req = RunRequest {
        task: task.to_owned(),
        skill: Some(skill.to_owned()),
        context: context.as_object().cloned().unwrap_or_default(),
    };
    let rt = runtime();
    rt.block_on(runner.run(&req)).expect("run")
}

/// The time of each of `n` calls of `f` (benchmarks take medians and p99
/// from these).
pub fn call_times(n: usize, mut f: impl FnMut()) -> Vec<std::time::Duration> {
    (0..n)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed()
        })
        .collect()
}
