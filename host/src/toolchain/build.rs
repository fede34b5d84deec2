//! `skillhost handler build`: a skill folder's handler, in whichever of the
//! four languages it is written, built into the component its SKILL.md
//! points at.

use std::path::{Component, Path, PathBuf};

use super::doctor::{componentize_js_cli, install_command};
use super::{HANDLER_WORLD, Lang, ToolEnv, ToolchainError, detect, run};
use crate::skill::parse_skill;
use crate::toolchain::scaffold::SKILL_WIT;

/// A built handler.
#[derive(Debug, Clone)]
pub struct Built {
    pub lang: Lang,
    /// Where the component was written: the SKILL.md's handler path.
    pub output: PathBuf,
    pub size: u64,
}

/// Builds the handler of the skill folder `dir`. `progress` gets one line
/// per step. The component replaces the old one only once it is complete.
pub fn build(
    env: &ToolEnv,
    dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Built, ToolchainError> {
    let lang = detect(dir)?;
    // Tools run inside the folder; every path handed to them is absolute.
    let dir = &dir
        .canonicalize()
        .map_err(|_| ToolchainError::NotAFolder(dir.to_path_buf()))?;
    let output = dir.join(handler_path(dir)?);
    progress(&format!(
        "building the {} handler in {} into {}",
        lang.display(),
        dir.display(),
        output.display()
    ));
    let partial = clear_partial(&output)?;
    let build = match lang {
        Lang::Rust => build_rust,
        Lang::Js => build_js,
        Lang::Python => build_python,
        Lang::C => build_c,
    };
    if let Err(e) = build(env, dir, &partial, progress) {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    let size = written_size(&partial, lang, dir)?;
    std::fs::rename(&partial, &output).map_err(|source| ToolchainError::Write {
        path: output.clone(),
        source,
    })?;
    Ok(Built { lang, output, size })
}

/// The size of the component the `lang` build of `dir` wrote at `partial`.
fn written_size(partial: &Path, lang: Lang, dir: &Path) -> Result<u64, ToolchainError> {
    Ok(std::fs::metadata(partial)
        .map_err(|_| ToolchainError::NoOutput {
            what: format!("no component was written by the {} build", lang.display()),
            path: dir.to_path_buf(),
        })?
        .len())
}

/// Where the component is written before it is renamed over `output`,
/// its folder made. Whatever is there already goes first: tools would
/// write through a planted symlink.
fn clear_partial(output: &Path) -> Result<PathBuf, ToolchainError> {
    let partial = output.with_extension("wasm.partial");
    if partial.symlink_metadata().is_ok() {
        std::fs::remove_file(&partial).map_err(|source| ToolchainError::Write {
            path: partial.clone(),
            source,
        })?;
    }
    if let Some(parent) = output.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ToolchainError::Write {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    Ok(partial)
}

/// `metadata.skillhost.handler` of `dir/SKILL.md`: a relative path inside
/// the folder (default `handler.wasm` when the skill names none).
fn handler_path(dir: &Path) -> Result<PathBuf, ToolchainError> {
    let md = dir.join("SKILL.md");
    let bytes = std::fs::read(&md).map_err(|_| ToolchainError::NoSkillMd(dir.to_path_buf()))?;
    let folder = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let parsed = parse_skill(&bytes, &folder).map_err(|e| ToolchainError::BadSkillMd {
        path: md.clone(),
        message: e.to_string(),
    })?;
    let rel = parsed
        .meta
        .skillhost
        .handler
        .unwrap_or_else(|| "handler.wasm".to_owned());
    let path = PathBuf::from(&rel);
    let inside = !rel.is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(ToolchainError::BadSkillMd {
            path: md,
            message: format!(
                "metadata.skillhost.handler {rel:?} must be a relative path inside the skill folder"
            ),
        });
    }
    Ok(path)
}

/// The WIT to build against: the folder's own `wit/`, else the contract
/// this binary speaks, written into the scratch folder.
fn wit_dir(dir: &Path) -> Result<PathBuf, ToolchainError> {
    let own = dir.join("wit");
    if own.is_dir() {
        return Ok(own);
    }
    let wit = scratch_dir(dir)?.join("wit");
    write(&wit.join("skill.wit"), SKILL_WIT.as_bytes())?;
    Ok(wit)
}

pub(super) fn write(path: &Path, bytes: &[u8]) -> Result<(), ToolchainError> {
    let err = |source| ToolchainError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(err)?;
    }
    std::fs::write(path, bytes).map_err(err)
}

/// The build's scratch folder, `dir/build` (ignored by the scaffold's
/// .gitignore), emptied first (a symlink there is removed, not followed).
fn scratch_dir(dir: &Path) -> Result<PathBuf, ToolchainError> {
    let scratch = dir.join("build");
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch).map_err(|source| ToolchainError::Write {
            path: scratch.clone(),
            source,
        })?;
    }
    std::fs::create_dir_all(&scratch).map_err(|source| ToolchainError::Write {
        path: scratch.clone(),
        source,
    })?;
    Ok(scratch)
}

fn missing(env: &ToolEnv, lang: Lang, what: &str, in_tools: bool) -> ToolchainError {
    ToolchainError::Missing {
        what: what.to_owned(),
        looked_in: if in_tools {
            env.tool_dirs.clone()
        } else {
            Vec::new()
        },
        install: install_command(env, lang),
    }
}

fn build_rust(
    env: &ToolEnv,
    dir: &Path,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<(), ToolchainError> {
    // The crate is `handler/` when the folder has one, else the folder.
    let manifest = Some(dir.join("handler/Cargo.toml"))
        .filter(|m| m.is_file())
        .unwrap_or_else(|| dir.join("Cargo.toml"));
    let crate_dir = manifest.parent().unwrap_or(dir);
    let cargo = env
        .find_on_path("cargo")
        .ok_or_else(|| missing(env, Lang::Rust, "cargo", false))?;
    check_wasm_target(env, crate_dir)?;
    progress(&format!(
        "cargo build --release --target wasm32-wasip2 --manifest-path {}",
        manifest.display()
    ));
    let cmd = cargo_build(env, &cargo, &manifest, crate_dir);
    let (status, stdout) = run_streaming_stderr(cmd, &cargo, progress)?;
    if !status.success() {
        return Err(ToolchainError::Failed {
            step: "cargo build".to_owned(),
            status: status.to_string(),
            output: String::new(),
        });
    }
    let manifest = manifest.canonicalize().unwrap_or(manifest);
    let wasm = built_wasm(&stdout, &manifest).ok_or_else(|| ToolchainError::NoOutput {
        what: "cargo built no .wasm (is the crate a `cdylib`?)".to_owned(),
        path: manifest.clone(),
    })?;
    std::fs::copy(&wasm, out).map_err(|source| ToolchainError::Write {
        path: out.to_path_buf(),
        source,
    })?;
    Ok(())
}

/// `cargo build` of the crate of `manifest` for wasm32-wasip2. Cargo's own
/// progress and diagnostics come on stderr (the caller prints them,
/// escaped); artifacts come as JSON on stdout.
fn cargo_build(
    env: &ToolEnv,
    cargo: &Path,
    manifest: &Path,
    crate_dir: &Path,
) -> std::process::Command {
    let mut cmd = env.command(cargo);
    cmd.args([
        "build",
        "--release",
        "--target",
        "wasm32-wasip2",
        "--message-format=json-render-diagnostics",
        "--manifest-path",
    ])
    .arg(manifest)
    .current_dir(crate_dir)
    // The host's flags (e.g. -C target-cpu) are not the guest's.
    .env_remove("RUSTFLAGS")
    .env_remove("CARGO_ENCODED_RUSTFLAGS");
    cmd
}

/// With rustup on the path, the wasm32-wasip2 target must be installed
/// (as rustup sees it from `crate_dir`, which may pin a toolchain).
fn check_wasm_target(env: &ToolEnv, crate_dir: &Path) -> Result<(), ToolchainError> {
    let Some(rustup) = env.find_on_path("rustup") else {
        return Ok(());
    };
    let installed = env
        .command(&rustup)
        .args(["target", "list", "--installed"])
        .current_dir(crate_dir)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim() == "wasm32-wasip2")
        })
        .unwrap_or(true);
    if installed {
        return Ok(());
    }
    Err(missing(
        env,
        Lang::Rust,
        "the Rust target wasm32-wasip2",
        false,
    ))
}

/// The `.wasm` that cargo's JSON messages (`stdout`) say the crate of
/// `manifest` built.
fn built_wasm(stdout: &[u8], manifest: &Path) -> Option<PathBuf> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter(|m| m["manifest_path"].as_str().map(Path::new) == Some(manifest))
        .flat_map(|m| {
            m["filenames"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|f| f.as_str().map(PathBuf::from))
        })
        .find(|f| f.extension().is_some_and(|e| e == "wasm"))
}

/// Runs `cmd`, passing each line of its stderr to `progress` as it comes
/// (nothing of the child reaches the terminal but through the caller's
/// printing), and returns its status and whole stdout.
fn run_streaming_stderr(
    mut cmd: std::process::Command,
    program: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<(std::process::ExitStatus, Vec<u8>), ToolchainError> {
    use std::io::{BufRead as _, Read as _};
    use std::process::Stdio;
    let spawn_error = |source| ToolchainError::Spawn {
        program: program.display().to_string(),
        source,
    };
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let mut stdout_pipe = child.stdout.take();
    // stdout is read on its own thread, so that neither pipe fills while
    // the other is read.
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(pipe) = stdout_pipe.as_mut() {
            let _ = pipe.read_to_end(&mut out);
        }
        out
    });
    if let Some(stderr) = child.stderr.take() {
        for line in std::io::BufReader::new(stderr)
            .split(b'\n')
            .map_while(Result::ok)
        {
            progress(String::from_utf8_lossy(&line).trim_end_matches('\r'));
        }
    }
    let status = child.wait().map_err(spawn_error)?;
    Ok((status, reader.join().unwrap_or_default()))
}

fn build_js(
    env: &ToolEnv,
    dir: &Path,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<(), ToolchainError> {
    let entry = dir.join("handler.js");
    if !entry.is_file() {
        return Err(ToolchainError::NoOutput {
            what: "no handler.js (the JavaScript handler's entry point)".to_owned(),
            path: dir.to_path_buf(),
        });
    }
    let (node, cli) = js_tools(env, dir)?;
    let wit = wit_dir(dir)?;
    progress(&format!(
        "componentize-js {} (the JavaScript engine is compiled in: this takes a while)",
        cli.display()
    ));
    run(
        "componentize-js",
        env.command(&node)
            .arg(&cli)
            .arg(&entry)
            .arg("--wit")
            .arg(&wit)
            .args(["--world-name", HANDLER_WORLD])
            // No fetch()/HTTP: the imports stay the handler world + WASI.
            .args(["--disable", "http", "fetch-event", "-o"])
            .arg(out)
            .current_dir(dir),
    )
}

/// node, and the componentize-js the skill folder (or one above it) has.
fn js_tools(env: &ToolEnv, dir: &Path) -> Result<(PathBuf, PathBuf), ToolchainError> {
    let node = env
        .find_on_path("node")
        .ok_or_else(|| missing(env, Lang::Js, "node", false))?;
    let cli = componentize_js_cli(env, Some(dir)).ok_or_else(|| {
        missing(
            env,
            Lang::Js,
            &format!(
                "componentize-js (node_modules/@bytecodealliance/componentize-js, in {} or a folder above it)",
                dir.display()
            ),
            true,
        )
    })?;
    Ok((node, cli))
}

fn build_python(
    env: &ToolEnv,
    dir: &Path,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<(), ToolchainError> {
    let tool = env
        .find("componentize-py")
        .ok_or_else(|| missing(env, Lang::Python, "componentize-py", true))?;
    let wit = wit_dir(dir)?;
    progress(&format!("componentize-py {} (app.py)", tool.display()));
    run(
        "componentize-py",
        env.command(&tool)
            .arg("-d")
            .arg(&wit)
            .args(["-w", HANDLER_WORLD, "componentize", "app", "-o"])
            .arg(out)
            .current_dir(dir),
    )
}

fn build_c(
    env: &ToolEnv,
    dir: &Path,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<(), ToolchainError> {
    #[cfg(feature = "handler-build")]
    {
        let clang = super::doctor::find_clang(env).ok_or_else(|| missing_clang(env))?;
        let sources = super::c_sources(dir)?;
        let wit = wit_dir(dir)?;
        let (bindings, core) = (dir.join("build/bindings"), dir.join("build/core.wasm"));
        progress("C bindings for the handler world (wit-bindgen-c, in-process)");
        super::c::bindings(&wit, HANDLER_WORLD, &bindings)?;
        progress(&format!(
            "{} --target=wasm32-wasi (wasi-libc)",
            clang.display()
        ));
        let mut cmd = clang_command(env, &clang, &bindings, &sources, &core);
        run("clang", cmd.current_dir(dir)).map_err(|e| with_c_install_hint(env, e))?;
        progress(
            "componentizing with the WASI preview1 reactor adapter (wit-component, in-process)",
        );
        let module = std::fs::read(&core).map_err(|source| ToolchainError::Read {
            path: core.clone(),
            source,
        })?;
        write(out, &super::c::componentize(&module)?)
    }
    #[cfg(not(feature = "handler-build"))]
    {
        let _ = (env, dir, out, progress);
        Err(ToolchainError::Unsupported(
            "this skillhost was built without the `handler-build` feature, which builds C handlers"
                .to_owned(),
        ))
    }
}

#[cfg(feature = "handler-build")]
fn missing_clang(env: &ToolEnv) -> ToolchainError {
    missing(
        env,
        Lang::C,
        &format!("clang-{}", super::LLVM_VERSION),
        false,
    )
}

/// clang compiling `sources` and the world's `bindings` to the core
/// module `core`, against wasi-libc.
#[cfg(feature = "handler-build")]
fn clang_command(
    env: &ToolEnv,
    clang: &Path,
    bindings: &Path,
    sources: &[PathBuf],
    core: &Path,
) -> std::process::Command {
    let mut cmd = env.command(clang);
    cmd.args(["--target=wasm32-wasi", "-mexec-model=reactor", "-O2"])
        // No fused multiply-add: arithmetic rounds as in the other
        // languages' handlers.
        .args(["-ffp-contract=off", "-Wall", "-I"])
        .arg(bindings);
    if let Some(sysroot) = &env.wasi_sysroot {
        cmd.arg(format!("--sysroot={}", sysroot.display()));
    }
    cmd.arg("-o")
        .arg(core)
        .args(sources)
        .arg(bindings.join(format!("{HANDLER_WORLD}.c")))
        .arg(bindings.join(format!("{HANDLER_WORLD}_component_type.o")))
        // wasi-libc's DWARF triples the size; the producers section stays.
        .args(["-lm", "-Wl,--strip-debug"]);
    cmd
}

/// A failed clang step names how to install what it may have missed.
#[cfg(feature = "handler-build")]
fn with_c_install_hint(env: &ToolEnv, e: ToolchainError) -> ToolchainError {
    match e {
        ToolchainError::Failed { output, status, .. } => ToolchainError::Failed {
            step: format!(
                "clang (if it cannot find wasi-libc, wasm-ld or compiler-rt, install them with: {})",
                install_command(env, Lang::C)
            ),
            status,
            output,
        },
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill_with_handler(dir: &Path, handler: &str) {
        std::fs::create_dir_all(dir).expect("mkdir");
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: demo\ndescription: d\nmetadata:\n  skillhost:\n    handler: {handler:?}\n---\n"),
        )
        .expect("write");
    }

    #[test]
    fn the_output_stays_inside_the_skill_folder() {
        let d = tempfile::tempdir().expect("tempdir");
        for bad in ["../out.wasm", "/tmp/out.wasm", "a/../../out.wasm", ""] {
            skill_with_handler(d.path(), bad);
            let e = handler_path(d.path()).expect_err(bad);
            assert!(
                e.to_string().contains("inside the skill folder"),
                "{bad:?}: {e}"
            );
        }
        for good in ["handler.wasm", "out/h.wasm", "./h.wasm"] {
            skill_with_handler(d.path(), good);
            assert_eq!(handler_path(d.path()).expect(good), PathBuf::from(good));
        }
    }

    #[cfg(feature = "handler-build")]
    #[test]
    fn a_planted_symlink_is_never_written_through() {
        let d = tempfile::tempdir().expect("tempdir");
        let skill = d.path().join("demo");
        skill_with_handler(&skill, "handler.wasm");
        std::fs::write(skill.join("handler.c"), "this is not C").expect("write");
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep me").expect("write");
        std::os::unix::fs::symlink(&victim, skill.join("handler.wasm.partial")).expect("symlink");
        std::fs::create_dir_all(d.path().join("elsewhere")).expect("mkdir");
        std::fs::write(d.path().join("elsewhere/keep"), "keep me").expect("write");
        std::os::unix::fs::symlink(d.path().join("elsewhere"), skill.join("build"))
            .expect("symlink");
        let env = ToolEnv {
            install_dir: d.path().join("tools"),
            tool_dirs: vec![],
            path: vec![],
            // A "compiler" that fails: the build gets as far as clang.
            clang: Some(PathBuf::from("/bin/false")),
            wasi_sysroot: None,
        };
        let e = build(&env, &skill, &mut |_| {}).expect_err("clang fails");
        assert!(e.to_string().starts_with("clang (if it cannot find"), "{e}");
        assert!(
            skill.join("build/bindings/handler.h").is_file(),
            "got as far as clang"
        );
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep me");
        assert!(
            skill
                .join("handler.wasm.partial")
                .symlink_metadata()
                .is_err()
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("elsewhere/keep")).expect("kept"),
            "keep me"
        );
    }
}
