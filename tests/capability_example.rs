//! The worked example in `host/src/grants/mod.rs` (a made-up `clock`
//! capability) is true: a copy of this checkout with exactly that file,
//! that field and that registry entry builds, and the new grant is read
//! from front matter, intersected and described. Compiles the crate once
//! more, under another package name (about a minute and a half, sharing
//! the target folder's dependencies).

use std::path::Path;
use std::process::Command;

use crate::harness::{repo_root, target_dir};

/// The ```text block after "Adding one" in the grants module's docs.
fn example_from_docs(grants_mod: &str) -> String {
    example_block(grants_mod, "///")
}

/// The ```text block after the doc line starting "Adding one", in doc
/// comments that start with `marker` (`///` or `//!`).
pub(crate) fn example_block(source: &str, marker: &str) -> String {
    let adding = format!("{marker} Adding one");
    let (open, close) = (format!("{marker} ```text"), format!("{marker} ```"));
    let mut lines = source
        .lines()
        .map(|l| l.trim_start())
        .skip_while(|l| !l.starts_with(&adding))
        .skip_while(|l| *l != open)
        .skip(1);
    let mut out = String::new();
    for l in lines.by_ref() {
        if l == close {
            return out;
        }
        let text = l.strip_prefix(marker).unwrap_or(l);
        out.push_str(text.strip_prefix(' ').unwrap_or(text));
        out.push('\n');
    }
    panic!("no example after {adding:?} in a ```text block");
}

pub(crate) fn replace_once(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert_eq!(text.matches(from).count(), 1, "{from:?} once in {path:?}");
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}

/// The files git tracks in `root`, copied into a new temporary folder.
pub(crate) fn copy_checkout(root: &Path) -> tempfile::TempDir {
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .expect("git ls-files (the example test copies the checkout)");
    assert!(listed.status.success(), "git ls-files failed");
    let copy = tempfile::tempdir().expect("tempdir");
    for rel in listed.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let rel = Path::new(std::str::from_utf8(rel).expect("UTF-8 path"));
        let (from, to) = (root.join(rel), copy.path().join(rel));
        if !from.is_file() {
            continue;
        }
        std::fs::create_dir_all(to.parent().expect("a parent")).expect("mkdir");
        std::fs::copy(&from, &to).expect("copy");
    }
    copy
}

/// Renames the copy's package to `package` and runs its `grants::` unit
/// tests with `env`, sharing this checkout's target folder; their output,
/// once they passed.
pub(crate) fn test_grants_of_copy(copy: &Path, package: &str, env: &[(&str, &Path)]) -> String {
    let out = cargo_in_copy(copy, package, &["--lib", "grants::"], env);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout
}

/// Renames the copy's package to `package` and runs `cargo test
/// --offline -p package ARGS` in it with `env`, sharing this checkout's
/// target folder. Another package name: cargo's unit hashes leave out a
/// path package's location, so a copy named `skillhost` would build into
/// the same artefacts (and build-script output) as this checkout's. The
/// dependencies are shared all the same.
pub(crate) fn cargo_in_copy(
    copy: &Path,
    package: &str,
    args: &[&str],
    env: &[(&str, &Path)],
) -> std::process::Output {
    let manifest = copy.join("host/Cargo.toml");
    replace_once(
        &manifest,
        "name = \"skillhost\"\nversion",
        &format!("name = \"{package}\"\nversion"),
    );
    replace_once(
        &manifest,
        "[[bin]]\nname = \"skillhost\"\npath = \"src/main.rs\"\n",
        "",
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["test", "--offline", "-p", package])
        .args(args)
        .current_dir(copy)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run cargo")
}

#[test]
fn a_new_capability_is_one_file_one_field_and_its_entry() {
    let root = repo_root();
    let copy = copy_checkout(&root);
    let src = copy.path().join("host/src");
    let grants = src.join("grants/mod.rs");
    let example = example_from_docs(&std::fs::read_to_string(&grants).expect("grants docs"));
    // The file, plus a check that the grant works end to end (not docs).
    std::fs::write(
        src.join("grants/clock.rs"),
        format!(
            "{example}\n#[cfg(test)]\nmod example_tests {{\n{}\n}}\n",
            r##"    use super::*;

    #[test]
    fn the_clock_grant_is_declared_granted_and_described() {
        let declared: Capabilities = serde_json::from_str(r#"{"clock": true}"#).unwrap();
        let granted = Capabilities { clock: true, ..Default::default() };
        let both = crate::grants::intersect(&declared, &granted);
        assert!(both.clock);
        assert_eq!(crate::grants::describe(&both), "clock");
        assert!(!crate::grants::intersect(&declared, &Capabilities::default()).clock);
        // `skills grant NAME --clock` (its options come from the flags).
        let flags = crate::grants::CAPABILITIES.iter().flat_map(|c| c.flags());
        assert!(flags.map(|f| f.name).any(|n| n == "clock"));
    }"##
        ),
    )
    .expect("write clock.rs");
    // The field.
    replace_once(
        &src.join("skill/model.rs"),
        "    pub kv: bool,\n}",
        "    pub kv: bool,\n    pub clock: bool,\n}",
    );
    // Its entry in the registry.
    replace_once(&grants, "mod files;\n", "mod clock;\nmod files;\n");
    replace_once(
        &grants,
        "    kv: kv::Kv,\n}",
        "    kv: kv::Kv,\n    clock: clock::Clock,\n}",
    );

    let stdout = test_grants_of_copy(copy.path(), "skillhost-clock-example", &[]);
    assert!(
        stdout.contains("the_clock_grant_is_declared_granted_and_described ... ok"),
        "{stdout}"
    );
    assert!(
        stdout.contains("every_field_of_capabilities_has_its_capability_and_no_more ... ok"),
        "{stdout}"
    );
}
