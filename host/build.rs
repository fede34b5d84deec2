//! Builds the bundled skills' handlers from source (Rust, for
//! wasm32-wasip2) and embeds every bundled skill file in the binary, so a
//! user never downloads or commits a `.wasm` and an installed `skillhost`
//! carries its defaults with it.
//!
//! The guest build is a nested `cargo build` into its own target directory
//! (`<target>/guests`): sharing the outer one would deadlock on cargo's lock.
//!
//! A build script reports failure by panicking (cargo prints the message and
//! stops the build), so `expect` naming the step is its error path.
#![allow(
    clippy::expect_used,
    reason = "a build script fails by panicking with the step named"
)]

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const GUEST_TARGET: &str = "wasm32-wasip2";
const GUEST_PROFILE: &str = "guest";

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest_dir
        .parent()
        .expect("host/ lives inside the workspace")
        .to_path_buf();
    let skills_dir = root.join("skills");
    for watched in [
        "skills",
        "guest-sdk/src",
        "guest-sdk/Cargo.toml",
        "wit",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    let skills = bundled_skills(&skills_dir);
    let with_handler: Vec<&BundledSkill> = skills
        .iter()
        .filter(|s| s.handler_crate.is_some())
        .collect();
    let target_dir = guest_target_dir(&root);
    if !with_handler.is_empty() {
        build_guests(&root, &target_dir, &with_handler);
    }

    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for skill in &skills {
        collect_files(&skill.dir, &skill.dir, &skill.name, &mut files);
        if let Some(krate) = &skill.handler_crate {
            let wasm = target_dir
                .join(GUEST_TARGET)
                .join(GUEST_PROFILE)
                .join(format!("{}.wasm", krate.replace('-', "_")));
            files.push((format!("{}/handler.wasm", skill.name), wasm));
        }
    }
    files.sort();

    let mut code = String::from(
        "/// Every bundled skill file: (path relative to the bundle root, bytes).\n\
         pub static FILES: &[(&str, &[u8])] = &[\n",
    );
    for (rel, path) in &files {
        writeln!(
            code,
            "    ({rel:?}, include_bytes!({:?})),",
            path.display().to_string()
        )
        .expect("string write");
    }
    code.push_str("];\n");
    let out = PathBuf::from(env::var("OUT_DIR").expect("set by cargo")).join("bundled_files.rs");
    fs::write(&out, code).expect("write bundled_files.rs");
}

struct BundledSkill {
    name: String,
    dir: PathBuf,
    /// Package name of `skills/NAME/handler/Cargo.toml`, if the skill has one.
    handler_crate: Option<String>,
}

fn bundled_skills(skills_dir: &Path) -> Vec<BundledSkill> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(skills_dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        if !dir.join("SKILL.md").is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let manifest = dir.join("handler").join("Cargo.toml");
        let handler_crate = fs::read_to_string(&manifest).ok().map(|text| {
            text.lines()
                .find_map(|l| {
                    let l = l.trim();
                    l.strip_prefix("name").map(|r| {
                        r.trim_start()
                            .trim_start_matches('=')
                            .trim()
                            .trim_matches('"')
                            .to_owned()
                    })
                })
                .unwrap_or_else(|| panic!("{} has no package name", manifest.display()))
        });
        out.push(BundledSkill {
            name,
            dir,
            handler_crate,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Every file of a skill folder except its handler's source and build output.
fn collect_files(base: &Path, dir: &Path, skill: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !(dir == base && name == "handler") && name != "target" {
                collect_files(base, &path, skill, out);
            }
        } else if kind.is_file() && !name.ends_with(".wasm") {
            let rel = path.strip_prefix(base).expect("walked from base");
            let rel = rel.to_string_lossy().replace('\\', "/");
            out.push((format!("{skill}/{rel}"), path));
        }
    }
}

fn guest_target_dir(root: &Path) -> PathBuf {
    env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|d| if d.is_absolute() { d } else { root.join(d) })
        .unwrap_or_else(|| root.join("target"))
        .join("guests")
}

fn build_guests(root: &Path, target_dir: &Path, skills: &[&BundledSkill]) {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args([
            "build",
            "--quiet",
            "--profile",
            GUEST_PROFILE,
            "--target",
            GUEST_TARGET,
        ])
        .arg("--target-dir")
        .arg(target_dir);
    for s in skills {
        cmd.args(["-p", s.handler_crate.as_deref().expect("filtered")]);
    }
    // The outer build's settings are for the host, not for wasm guests.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_LLVM_COV",
        "LLVM_PROFILE_FILE",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("could not run cargo for the guest handlers: {e}"));
    if !status.success() {
        panic!(
            "building the bundled skill handlers for {GUEST_TARGET} failed (see above). \
             If the target is missing, run `rustup target add {GUEST_TARGET}`."
        );
    }
}
