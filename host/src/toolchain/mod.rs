//! The toolchains that build handlers: finding them (`ToolEnv`), building
//! a handler folder in any of the four languages (`build`), saying what is
//! present and what installs the rest (`doctor`), installing it
//! (`install`), the bubblewrap box a model's handler is built in
//! (`buildbox`, for `forge handler`; `doctor` checks it can start), and a
//! new handler folder from a template (`scaffold`, `handler new`).
//!
//! Tools are looked up where the project's installers put them:
//! `$SKILLHOST_HOME/tools` (`skillhost toolchain install`), the checkout's
//! `target/example-tools` (`.ci/install-example-toolchains.sh`), then PATH.

mod build;
pub mod buildbox;
#[cfg(feature = "handler-build")]
mod c;
mod doctor;
pub mod scaffold;

use std::path::{Path, PathBuf};
use std::process::Command;

pub use build::{Built, build};
pub use doctor::{Check, LangReport, doctor, install, install_plan, report};

pub use scaffold::Lang;

/// Pinned tool versions: what `toolchain install` installs and what the
/// examples and scaffolds are tested with.
pub const COMPONENTIZE_JS_VERSION: &str = "0.23.0";
/// componentize-js imports it at build time but lists it only as a
/// devDependency of its own, so npm would not install it.
pub const PREVIEW2_SHIM_VERSION: &str = "0.25.0";
pub const COMPONENTIZE_PY_VERSION: &str = "0.25.1";
/// The Debian LLVM whose clang, lld and compiler-rt target wasm32.
pub const LLVM_VERSION: u32 = 19;
/// The world every handler implements (wit/skill.wit).
pub const HANDLER_WORLD: &str = "handler";

#[derive(Debug, thiserror::Error)]
pub enum ToolchainError {
    #[error("{} does not exist or is not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error(
        "cannot tell the handler's language in {}: expected handler/Cargo.toml or Cargo.toml (Rust), package.json or handler.js (JavaScript), app.py (Python) or a .c file (C)",
        .0.display()
    )]
    UnknownLanguage(PathBuf),
    #[error("{} has no SKILL.md: a handler is built inside its skill folder", .0.display())]
    NoSkillMd(PathBuf),
    #[error("{}: {message}", path.display())]
    BadSkillMd { path: PathBuf, message: String },
    #[error("{what} is not installed{}; install it with: {install}", found_in(.looked_in))]
    Missing {
        what: String,
        looked_in: Vec<PathBuf>,
        install: String,
    },
    #[error("{0}")]
    Unsupported(String),
    #[error("cannot run {program}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("{step} failed ({status}){}", tail(.output))]
    Failed {
        step: String,
        status: String,
        output: String,
    },
    #[error("{step}: {message}")]
    InProcess { step: &'static str, message: String },
    #[error("{} from {}", what, path.display())]
    NoOutput { what: String, path: PathBuf },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn found_in(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return String::new();
    }
    let list: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    format!(" (looked in {} and PATH)", list.join(", "))
}

fn tail(output: &str) -> String {
    let output = output.trim();
    if output.is_empty() {
        String::new()
    } else {
        format!(":\n{output}")
    }
}

/// Where tools are found and installed. Built once at the edge from the
/// process environment (`from_env`), or by hand in tests.
#[derive(Debug, Clone)]
pub struct ToolEnv {
    /// Where `toolchain install` puts npm and pip packages:
    /// `$SKILLHOST_HOME/tools`.
    pub install_dir: PathBuf,
    /// Searched in order before PATH: `install_dir`, then the checkout's
    /// `target/example-tools` when there is one. Each may hold `bin/`,
    /// `venv/bin/` and `node_modules/`.
    pub tool_dirs: Vec<PathBuf>,
    /// PATH.
    pub path: Vec<PathBuf>,
    /// `$CC_WASM`: the clang to use instead of clang-19 / clang.
    pub clang: Option<PathBuf>,
    /// `$WASI_SYSROOT`: a wasi-libc sysroot instead of Debian's.
    pub wasi_sysroot: Option<PathBuf>,
}

impl ToolEnv {
    /// From the environment: `home` is `$SKILLHOST_HOME`; the checkout's
    /// tools are `$SKILLHOST_EXAMPLE_TOOLS` if set (empty: none), else
    /// `target/example-tools` of the checkout this binary was built from
    /// (`$CARGO_TARGET_DIR` when set), if it exists.
    pub fn from_env(home: &Path) -> Self {
        let install_dir = home.join("tools");
        let mut tool_dirs = vec![install_dir.clone()];
        let example_tools = match std::env::var_os("SKILLHOST_EXAMPLE_TOOLS") {
            Some(d) if d.is_empty() => None,
            Some(d) => Some(PathBuf::from(d)),
            None => checkout_example_tools(),
        };
        tool_dirs.extend(example_tools.filter(|d| d.is_dir()));
        let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        ToolEnv {
            install_dir,
            tool_dirs,
            path: std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default(),
            clang: non_empty("CC_WASM").map(PathBuf::from),
            wasi_sysroot: non_empty("WASI_SYSROOT").map(PathBuf::from),
        }
    }

    /// An executable `name`: in the tool folders (`bin/`, `venv/bin/`,
    /// `node_modules/.bin/`), then on PATH.
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        self.tool_dirs
            .iter()
            .flat_map(|d| {
                [
                    d.join("bin"),
                    d.join("venv").join("bin"),
                    d.join("node_modules").join(".bin"),
                ]
            })
            .chain(self.path.iter().cloned())
            .map(|d| d.join(name))
            .find(|p| is_executable(p))
    }

    /// An executable on PATH only (system tools: node, python3, clang).
    pub fn find_on_path(&self, name: &str) -> Option<PathBuf> {
        self.path
            .iter()
            .map(|d| d.join(name))
            .find(|p| is_executable(p))
    }

    /// PATH as one value, for the tools we start (a venv's script or npm
    /// finds its interpreter through it).
    fn path_var(&self) -> std::ffi::OsString {
        std::env::join_paths(&self.path).unwrap_or_default()
    }

    /// A command for `program` with this environment's PATH.
    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        // Tools written in Rust would print pages of backtrace with errors.
        cmd.env("PATH", self.path_var())
            .env_remove("RUST_BACKTRACE");
        cmd
    }
}

/// `target/example-tools` of the checkout this binary was built from.
fn checkout_example_tools() -> Option<PathBuf> {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    if !checkout.join("Cargo.toml").is_file() {
        return None;
    }
    let target = match std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        Some(t) if t.is_absolute() => t,
        Some(t) => checkout.join(t),
        None => checkout.join("target"),
    };
    Some(target.join("example-tools"))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// The first line a program prints for `args` (its version), if it runs.
fn first_line(env: &ToolEnv, program: &Path, args: &[&str]) -> Option<String> {
    let out = env.command(program).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&text)
        .lines()
        .next()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
}

/// Runs a command to its end; its output is kept for the error.
fn run(step: &str, cmd: &mut Command) -> Result<(), ToolchainError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd
        .output()
        .map_err(|source| ToolchainError::Spawn { program, source })?;
    if out.status.success() {
        return Ok(());
    }
    let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
    output.push_str(&String::from_utf8_lossy(&out.stderr));
    Err(ToolchainError::Failed {
        step: step.to_owned(),
        status: out.status.to_string(),
        output,
    })
}

/// The language of the handler in a skill folder, from its files.
pub fn detect(dir: &Path) -> Result<Lang, ToolchainError> {
    if !dir.is_dir() {
        return Err(ToolchainError::NotAFolder(dir.to_path_buf()));
    }
    let has = |rel: &str| dir.join(rel).is_file();
    if has("handler/Cargo.toml") || has("Cargo.toml") {
        return Ok(Lang::Rust);
    }
    if has("package.json") || has("handler.js") {
        return Ok(Lang::Js);
    }
    if has("app.py") {
        return Ok(Lang::Python);
    }
    if !c_sources(dir)?.is_empty() {
        return Ok(Lang::C);
    }
    Err(ToolchainError::UnknownLanguage(dir.to_path_buf()))
}

/// The `.c` files directly in `dir`, sorted.
fn c_sources(dir: &Path) -> Result<Vec<PathBuf>, ToolchainError> {
    let read = |source| ToolchainError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let path = entry.map_err(read)?.path();
        if path.extension().is_some_and(|e| e == "c") && path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

pub(crate) use crate::sys::is_root;

/// `apt-get install` of `packages`, with sudo unless we are root.
fn apt_command(packages: &[String]) -> String {
    let sudo = if is_root() { "" } else { "sudo " };
    format!("{sudo}apt-get install -y {}", packages.join(" "))
}

/// [`apt_command`] for messages elsewhere (the forge's build box).
pub fn apt_install(packages: &[&str]) -> String {
    apt_command(&packages.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_comes_from_the_folder() {
        let d = tempfile::tempdir().expect("tempdir");
        let cases: [(&str, Option<Lang>); 6] = [
            ("handler/Cargo.toml", Some(Lang::Rust)),
            ("Cargo.toml", Some(Lang::Rust)),
            ("package.json", Some(Lang::Js)),
            ("app.py", Some(Lang::Python)),
            ("handler.c", Some(Lang::C)),
            ("README.md", None),
        ];
        for (i, (file, want)) in cases.iter().enumerate() {
            let dir = d.path().join(i.to_string());
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, "").expect("write");
            match (detect(&dir), want) {
                (Ok(got), Some(want)) => assert_eq!(got, *want, "{file}"),
                (Err(e), None) => assert!(e.to_string().contains("cannot tell"), "{e}"),
                (got, want) => panic!("{file}: got {got:?}, want {want:?}"),
            }
        }
        let e = detect(&d.path().join("missing")).expect_err("missing");
        assert!(e.to_string().contains("is not a folder"), "{e}");
    }

    #[test]
    fn tools_are_found_in_tool_folders_before_path() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().expect("tempdir");
        let mk = |p: &Path| {
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, "#!/bin/sh\n").expect("write");
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        };
        let tools = d.path().join("tools");
        let on_path = d.path().join("path");
        mk(&tools.join("venv/bin/componentize-py"));
        mk(&on_path.join("componentize-py"));
        mk(&on_path.join("node"));
        std::fs::write(on_path.join("not-executable"), "").expect("write");
        let env = ToolEnv {
            install_dir: tools.clone(),
            tool_dirs: vec![tools.clone()],
            path: vec![on_path.clone()],
            clang: None,
            wasi_sysroot: None,
        };
        assert_eq!(
            env.find("componentize-py"),
            Some(tools.join("venv/bin/componentize-py"))
        );
        assert_eq!(env.find("node"), Some(on_path.join("node")));
        assert_eq!(env.find("not-executable"), None);
        assert_eq!(
            env.find_on_path("componentize-py"),
            Some(on_path.join("componentize-py"))
        );
    }
}
