//! `skillhost doctor` and `skillhost toolchain install`: for each language,
//! what is present and the one command that installs the rest on a Debian
//! machine; and that command's work, into `$SKILLHOST_HOME/tools` where it
//! is not a system package.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{
    COMPONENTIZE_JS_VERSION, COMPONENTIZE_PY_VERSION, LLVM_VERSION, Lang, PREVIEW2_SHIM_VERSION,
    ToolEnv, ToolchainError, apt_command, first_line, run,
};

/// One thing a language needs: found (with its version or location), or not.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Check {
    pub what: String,
    /// Version or location; None: missing.
    pub found: Option<String>,
}

/// A language's checks and, when something is missing, the command that
/// installs it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LangReport {
    #[serde(serialize_with = "lang_flag")]
    pub lang: Lang,
    pub checks: Vec<Check>,
    pub install: Option<String>,
}

fn lang_flag<S: serde::Serializer>(lang: &Lang, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(lang.flag())
}

impl LangReport {
    pub fn ready(&self) -> bool {
        self.checks.iter().all(|c| c.found.is_some())
    }
}

/// Every language's report.
pub fn doctor(env: &ToolEnv) -> Vec<LangReport> {
    Lang::ALL.iter().map(|&l| report(env, l)).collect()
}

fn check(what: impl Into<String>, found: Option<String>) -> Check {
    Check {
        what: what.into(),
        found,
    }
}

fn version_of(env: &ToolEnv, program: &Path) -> String {
    let version = first_line(env, program, &["--version"]).unwrap_or_else(|| "?".to_owned());
    format!("{version} ({})", program.display())
}

/// One language's report.
pub fn report(env: &ToolEnv, lang: Lang) -> LangReport {
    let checks = match lang {
        Lang::Rust => rust_checks(env),
        Lang::Js => js_checks(env),
        Lang::Python => python_checks(env),
        Lang::C => c_checks(env).0,
    };
    let ready = checks.iter().all(|c| c.found.is_some());
    LangReport {
        lang,
        checks,
        install: (!ready).then(|| install_command(env, lang)),
    }
}

const RUSTUP_INSTALL: &str = "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --target wasm32-wasip2";

/// Whether rustup lists the wasm32-wasip2 target as installed.
fn wasm_target_installed(env: &ToolEnv) -> bool {
    env.find_on_path("rustup").is_some_and(|rustup| {
        env.command(&rustup)
            .args(["target", "list", "--installed"])
            .output()
            .is_ok_and(|out| {
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .any(|l| l.trim() == "wasm32-wasip2")
            })
    })
}

fn rust_checks(env: &ToolEnv) -> Vec<Check> {
    let cargo = env.find_on_path("cargo");
    let target = wasm_target_installed(env).then(|| "installed".to_owned());
    let mut checks = vec![
        check("cargo", cargo.map(|c| version_of(env, &c))),
        check("the wasm32-wasip2 target (rustup)", target),
    ];
    // Only a host with the forge builds model-written handlers.
    if cfg!(feature = "forge") {
        checks.push(bwrap_check(env));
    }
    checks
}

/// What `forge handler` builds a model's handler in.
const BWRAP_WHAT: &str = "bubblewrap (bwrap), the box `forge handler` builds in";

/// bubblewrap: installed, and able to start a box here (a container may
/// refuse it the namespaces it needs).
fn bwrap_check(env: &ToolEnv) -> Check {
    use super::buildbox::{self, BoxSpec};
    let Some(bwrap) = buildbox::find_bwrap(&env.path) else {
        return check(BWRAP_WHAT, None);
    };
    let spec = BoxSpec {
        chdir: PathBuf::from("/"),
        ..BoxSpec::default()
    };
    let probe = Command::new(&bwrap)
        .args(buildbox::bwrap_args(&spec, None, &[]))
        .arg("true")
        .stdin(std::process::Stdio::null())
        .output();
    match probe {
        Ok(out) if out.status.success() => check(BWRAP_WHAT, Some(version_of(env, &bwrap))),
        Ok(out) => check(
            format!(
                "{BWRAP_WHAT}: {} cannot start a box here ({}); see docs/forge.md",
                bwrap.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            None,
        ),
        Err(e) => check(
            format!("{BWRAP_WHAT}: cannot run {}: {e}", bwrap.display()),
            None,
        ),
    }
}

/// Whether `bwrap` is missing (not: present but unable to start a box).
fn bwrap_missing(env: &ToolEnv) -> bool {
    cfg!(feature = "forge") && super::buildbox::find_bwrap(&env.path).is_none()
}

/// componentize-js's `src/cli.js`: in a `node_modules` of `dir` or a folder
/// above it (the handler's own `npm install`), else of a tool folder.
pub fn componentize_js_cli(env: &ToolEnv, dir: Option<&Path>) -> Option<PathBuf> {
    let rel = Path::new("node_modules/@bytecodealliance/componentize-js/src/cli.js");
    let dir = dir.and_then(|d| d.canonicalize().ok());
    dir.iter()
        .flat_map(|d| d.ancestors())
        .chain(env.tool_dirs.iter().map(PathBuf::as_path))
        .map(|d| d.join(rel))
        .find(|p| p.is_file())
}

fn js_checks(env: &ToolEnv) -> Vec<Check> {
    let node = env.find_on_path("node");
    let npm = env.find_on_path("npm");
    let componentize = componentize_js_cli(env, None).map(|cli| {
        // .../componentize-js/src/cli.js -> .../componentize-js/package.json
        let package = cli
            .parent()
            .and_then(Path::parent)
            .map(|p| p.join("package.json"));
        let version = package
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["version"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "?".to_owned());
        format!("{version} ({})", cli.display())
    });
    let mut checks = vec![check("node", node.map(|n| version_of(env, &n)))];
    // npm is needed only to install componentize-js.
    if componentize.is_none() {
        checks.push(check("npm", npm.map(|n| version_of(env, &n))));
    }
    checks.push(check("componentize-js", componentize));
    checks
}

fn python_checks(env: &ToolEnv) -> Vec<Check> {
    let tool = env.find("componentize-py");
    let mut checks = Vec::new();
    if tool.is_none() {
        // Installing it takes python3 with the venv module (Debian's
        // Python refuses `pip install` outside a venv).
        let python = env.find_on_path("python3");
        let venv = python.as_ref().and_then(|p| {
            run(
                "python3 -m ensurepip",
                env.command(p).args(["-c", "import ensurepip, venv"]),
            )
            .ok()
            .map(|()| "available".to_owned())
        });
        checks.push(check("python3", python.map(|p| version_of(env, &p))));
        checks.push(check("the python3 venv module", venv));
    }
    checks.push(check("componentize-py", tool.map(|t| version_of(env, &t))));
    checks
}

/// The clang that builds C handlers: `$CC_WASM`, else clang-19, else clang.
pub fn find_clang(env: &ToolEnv) -> Option<PathBuf> {
    if let Some(c) = &env.clang {
        return if c.is_absolute() {
            Some(c.clone())
        } else {
            env.find_on_path(&c.to_string_lossy())
        };
    }
    env.find_on_path(&format!("clang-{LLVM_VERSION}"))
        .or_else(|| env.find_on_path("clang"))
}

/// The C checks and the Debian packages of those that are missing.
fn c_checks(env: &ToolEnv) -> (Vec<Check>, Vec<String>) {
    let clang = find_clang(env);
    let asked = |args: &[&str]| {
        clang
            .as_ref()
            .and_then(|c| first_line(env, c, args))
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() && p.is_file())
            .map(|p| p.display().to_string())
    };
    let lld = asked(&["-print-prog-name=wasm-ld"]);
    let compiler_rt = asked(&["--target=wasm32-wasi", "-print-libgcc-file-name"]);
    let wasi_libc = wasi_libc(env).map(|p| p.display().to_string());
    let checks = vec![
        (
            format!("clang-{LLVM_VERSION}"),
            clang.map(|c| version_of(env, &c)),
        ),
        (format!("wasm-ld (lld-{LLVM_VERSION})"), lld),
        ("compiler-rt for wasm32".to_owned(), compiler_rt),
        ("wasi-libc".to_owned(), wasi_libc),
    ];
    // One Debian package per check, in the same order.
    let packages = c_packages();
    let missing = checks
        .iter()
        .zip(packages)
        .filter(|((_, found), _)| found.is_none())
        .map(|(_, p)| p)
        .collect();
    let checks = checks
        .into_iter()
        .map(|(what, found)| check(what, found))
        .collect();
    (checks, missing)
}

/// wasi-libc's `stdlib.h`: in `$WASI_SYSROOT`, else where Debian's
/// wasi-libc puts it (clang-19 finds it there by itself).
fn wasi_libc(env: &ToolEnv) -> Option<PathBuf> {
    let candidates = match &env.wasi_sysroot {
        Some(s) => vec![
            s.join("include/wasm32-wasi/stdlib.h"),
            s.join("include/wasm32-wasip1/stdlib.h"),
            s.join("include/stdlib.h"),
        ],
        None => vec![PathBuf::from("/usr/include/wasm32-wasi/stdlib.h")],
    };
    candidates.into_iter().find(|p| p.is_file())
}

/// The one command that installs what `lang` is missing here.
pub fn install_command(env: &ToolEnv, lang: Lang) -> String {
    let ours = format!("skillhost toolchain install {}", lang.flag());
    let then_ours = |system: Vec<String>| {
        if system.is_empty() {
            ours.clone()
        } else {
            format!("{} && {ours}", apt_command(&system))
        }
    };
    match lang {
        Lang::Rust => rust_install_command(env),
        Lang::Js => then_ours(
            [("node", "nodejs"), ("npm", "npm")]
                .iter()
                .filter(|(bin, _)| env.find_on_path(bin).is_none())
                .map(|(_, pkg)| (*pkg).to_owned())
                .collect(),
        ),
        Lang::Python => then_ours(missing_python_packages(env)),
        Lang::C => {
            let (_, missing) = c_checks(env);
            if missing.is_empty() {
                // Present but failing: reinstalling is the one command left.
                apt_command(&c_packages())
            } else {
                apt_command(&missing)
            }
        }
    }
}

/// rustup, or the wasm target; and bubblewrap for the build box.
fn rust_install_command(env: &ToolEnv) -> String {
    let mut steps = Vec::new();
    if env.find_on_path("cargo").is_none() || env.find_on_path("rustup").is_none() {
        steps.push(RUSTUP_INSTALL.to_owned());
    } else if !wasm_target_installed(env) {
        steps.push("rustup target add wasm32-wasip2".to_owned());
    }
    if bwrap_missing(env) {
        steps.push(apt_command(&["bubblewrap".to_owned()]));
    }
    if steps.is_empty() {
        // Present but failing: adding the target is the one command left.
        steps.push("rustup target add wasm32-wasip2".to_owned());
    }
    steps.join(" && ")
}

/// The Debian packages for a python3 that can make a venv.
fn missing_python_packages(env: &ToolEnv) -> Vec<String> {
    let python = env.find_on_path("python3");
    let venv_ok = python.as_ref().is_some_and(|p| {
        env.command(p)
            .args(["-c", "import ensurepip, venv"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    match (python.is_some(), venv_ok) {
        (false, _) => vec!["python3".to_owned(), "python3-venv".to_owned()],
        (true, false) => vec!["python3-venv".to_owned()],
        (true, true) => vec![],
    }
}

/// The Debian packages of the C toolchain: clang, wasm-ld, compiler-rt for
/// wasm32, wasi-libc.
fn c_packages() -> Vec<String> {
    vec![
        format!("clang-{LLVM_VERSION}"),
        format!("lld-{LLVM_VERSION}"),
        format!("libclang-rt-{LLVM_VERSION}-dev-wasm32"),
        "wasi-libc".to_owned(),
    ]
}

/// What `toolchain install LANG` runs, one command per line (for people).
pub fn install_plan(env: &ToolEnv, lang: Lang) -> Vec<String> {
    let tools = env.install_dir.display();
    match lang {
        Lang::Rust => {
            let mut plan = vec!["rustup target add wasm32-wasip2".to_owned()];
            if bwrap_missing(env) {
                plan.push("apt-get install -y bubblewrap".to_owned());
            }
            plan
        }
        Lang::Js => vec![format!(
            "npm install --prefix {tools} --no-audit --no-fund @bytecodealliance/componentize-js@{COMPONENTIZE_JS_VERSION} @bytecodealliance/preview2-shim@{PREVIEW2_SHIM_VERSION}"
        )],
        Lang::Python => vec![
            format!("python3 -m venv {tools}/venv"),
            format!(
                "{tools}/venv/bin/pip install --disable-pip-version-check componentize-py=={COMPONENTIZE_PY_VERSION}"
            ),
        ],
        Lang::C => vec![format!(
            "apt-get install -y --no-install-recommends {}",
            c_packages().join(" ")
        )],
    }
}

/// bubblewrap, the box `forge handler` builds a model's handler in: a
/// Debian package, installed as root.
fn install_bubblewrap(env: &ToolEnv, progress: &mut dyn FnMut(&str)) -> Result<(), ToolchainError> {
    let command = apt_command(&["bubblewrap".to_owned()]);
    if !super::is_root() {
        return Err(ToolchainError::Unsupported(format!(
            "bubblewrap, the box `forge handler` builds in, is a Debian package, installed as root: {command}"
        )));
    }
    let apt = env.find_on_path("apt-get").ok_or_else(|| {
        ToolchainError::Unsupported(
            "apt-get is not available: install bubblewrap (`bwrap`), the box `forge handler` builds in, with the system's package manager".to_owned(),
        )
    })?;
    progress("apt-get install -y bubblewrap");
    let install = [
        "install",
        "-y",
        "-qq",
        "--no-install-recommends",
        "bubblewrap",
    ];
    let step = "apt-get install bubblewrap";
    if apt_get(env, &apt, step, &install).is_err() {
        // A fresh machine has no package lists yet.
        progress("apt-get update");
        apt_get(env, &apt, "apt-get update", &["update", "-qq"])?;
        apt_get(env, &apt, step, &install)?;
    }
    Ok(())
}

/// The step `step`: `apt-get ARGS`, not interactive.
fn apt_get(env: &ToolEnv, apt: &Path, step: &str, args: &[&str]) -> Result<(), ToolchainError> {
    run(
        step,
        env.command(apt)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(args),
    )
}

/// Installs what `lang` needs: npm and pip packages into the tool folder,
/// pinned; the Rust target through rustup; Debian packages through
/// apt-get (as root only). What cannot be installed here is an error
/// naming the command that installs it.
pub fn install(
    env: &ToolEnv,
    lang: Lang,
    progress: &mut dyn FnMut(&str),
) -> Result<LangReport, ToolchainError> {
    match lang {
        Lang::Rust => install_rust(env, progress)?,
        Lang::Js => install_js(env, progress)?,
        Lang::Python => install_python(env, progress)?,
        Lang::C => install_c(env, progress)?,
    }
    Ok(report(env, lang))
}

/// `what` is missing and `lang`'s install needs it.
fn needed(env: &ToolEnv, lang: Lang, what: &str) -> ToolchainError {
    ToolchainError::Missing {
        what: what.to_owned(),
        looked_in: Vec::new(),
        install: install_command(env, lang),
    }
}

fn make_dir(dir: &Path) -> Result<(), ToolchainError> {
    std::fs::create_dir_all(dir).map_err(|source| ToolchainError::Write {
        path: dir.to_path_buf(),
        source,
    })
}

/// The wasm32-wasip2 target through rustup, and bubblewrap for the build
/// box when it is missing.
fn install_rust(env: &ToolEnv, progress: &mut dyn FnMut(&str)) -> Result<(), ToolchainError> {
    let rustup = env
        .find_on_path("rustup")
        .ok_or_else(|| needed(env, Lang::Rust, "rustup"))?;
    progress("rustup target add wasm32-wasip2");
    run(
        "rustup target add wasm32-wasip2",
        env.command(&rustup)
            .args(["target", "add", "wasm32-wasip2"]),
    )?;
    if bwrap_missing(env) {
        install_bubblewrap(env, progress)?;
    }
    Ok(())
}

/// componentize-js and the preview2 shim, pinned, into the tool folder.
fn install_js(env: &ToolEnv, progress: &mut dyn FnMut(&str)) -> Result<(), ToolchainError> {
    env.find_on_path("node")
        .ok_or_else(|| needed(env, Lang::Js, "node"))?;
    let npm = env
        .find_on_path("npm")
        .ok_or_else(|| needed(env, Lang::Js, "npm"))?;
    make_dir(&env.install_dir)?;
    progress(&install_plan(env, Lang::Js).join("; "));
    run(
        "npm install",
        env.command(&npm)
            .arg("install")
            .arg("--prefix")
            .arg(&env.install_dir)
            .args(["--no-audit", "--no-fund", "--loglevel=error"])
            .arg(format!(
                "@bytecodealliance/componentize-js@{COMPONENTIZE_JS_VERSION}"
            ))
            .arg(format!(
                "@bytecodealliance/preview2-shim@{PREVIEW2_SHIM_VERSION}"
            )),
    )
}

/// componentize-py, pinned, into a venv in the tool folder.
fn install_python(env: &ToolEnv, progress: &mut dyn FnMut(&str)) -> Result<(), ToolchainError> {
    let python = env
        .find_on_path("python3")
        .ok_or_else(|| needed(env, Lang::Python, "python3"))?;
    let venv = env.install_dir.join("venv");
    make_dir(&env.install_dir)?;
    if !venv.join("bin/python").exists() {
        progress(&format!("python3 -m venv {}", venv.display()));
        run(
            "python3 -m venv",
            env.command(&python).arg("-m").arg("venv").arg(&venv),
        )
        .map_err(|e| match e {
            ToolchainError::Failed { .. } => needed(env, Lang::Python, "the python3 venv module"),
            e => e,
        })?;
    }
    let plan = install_plan(env, Lang::Python);
    progress(plan.last().map(String::as_str).unwrap_or_default());
    run(
        "pip install componentize-py",
        Command::new(venv.join("bin/pip"))
            .env("PATH", env.path_var())
            .args(["install", "--disable-pip-version-check", "--quiet"])
            .arg(format!("componentize-py=={COMPONENTIZE_PY_VERSION}")),
    )
}

/// The Debian packages of the C toolchain that are missing, as root only.
fn install_c(env: &ToolEnv, progress: &mut dyn FnMut(&str)) -> Result<(), ToolchainError> {
    let (_, missing) = c_checks(env);
    if missing.is_empty() {
        progress("the C toolchain is installed already");
        return Ok(());
    }
    if !super::is_root() {
        return Err(ToolchainError::Unsupported(format!(
            "the C toolchain is Debian packages, installed as root: {}",
            apt_command(&missing)
        )));
    }
    let apt = env.find_on_path("apt-get").ok_or_else(|| {
        ToolchainError::Unsupported(format!(
            "apt-get is not available: install clang {LLVM_VERSION}, lld, compiler-rt for wasm32 and wasi-libc (or set CC_WASM and WASI_SYSROOT to a wasi-sdk)"
        ))
    })?;
    progress(&format!(
        "apt-get install -y --no-install-recommends {}",
        missing.join(" ")
    ));
    run(
        "apt-get install",
        env.command(&apt)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(&missing),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bare(dir: &Path) -> ToolEnv {
        ToolEnv {
            install_dir: dir.join("tools"),
            tool_dirs: vec![dir.join("tools")],
            path: vec![dir.join("empty")],
            clang: None,
            wasi_sysroot: Some(dir.join("no-sysroot")),
        }
    }

    #[test]
    fn nothing_installed_names_each_languages_install_command() {
        let d = tempfile::tempdir().expect("tempdir");
        let env = bare(d.path());
        let reports = doctor(&env);
        assert_eq!(reports.len(), 4);
        let sudo = if super::super::is_root() { "" } else { "sudo " };
        // bubblewrap is also looked for in the system's folders.
        let bwrap = if bwrap_missing(&env) {
            format!(" && {sudo}apt-get install -y bubblewrap")
        } else {
            String::new()
        };
        for r in &reports {
            assert!(!r.ready(), "{r:?}");
            let want = match r.lang {
                Lang::Rust => format!("{RUSTUP_INSTALL}{bwrap}"),
                Lang::Js => {
                    format!("{sudo}apt-get install -y nodejs npm && skillhost toolchain install js")
                }
                Lang::Python => format!(
                    "{sudo}apt-get install -y python3 python3-venv && skillhost toolchain install python"
                ),
                Lang::C => format!(
                    "{sudo}apt-get install -y clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc"
                ),
            };
            assert_eq!(r.install.as_deref(), Some(want.as_str()), "{:?}", r.lang);
        }
    }

    #[test]
    fn installing_without_the_system_tools_says_which_command_installs_them() {
        let d = tempfile::tempdir().expect("tempdir");
        let env = bare(d.path());
        let e = install(&env, Lang::Python, &mut |_| {}).expect_err("no python3");
        assert!(
            e.to_string()
                .starts_with("python3 is not installed; install it with: "),
            "{e}"
        );
        assert!(!env.install_dir.join("venv").exists(), "nothing half-made");
        let e = install(&env, Lang::Js, &mut |_| {}).expect_err("no node");
        assert!(
            e.to_string().contains("apt-get install -y nodejs npm"),
            "{e}"
        );
    }
}
