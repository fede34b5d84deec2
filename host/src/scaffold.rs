//! `skillhost handler new`: a new skill folder with a handler in one of
//! four languages that builds (`./build.sh`) and runs as generated. The
//! templates are embedded, so an installed binary can scaffold.

use std::path::{Path, PathBuf};

use crate::skill::is_spec_name;

#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error(
        "invalid skill name {0:?}: use 1-64 lowercase letters, digits and single hyphens, starting with a letter (e.g. `unit-converter`)"
    )]
    InvalidName(String),
    #[error("{} already exists; choose another name or remove it", .0.display())]
    Exists(PathBuf),
    #[error("guest SDK not found at {}", path.display())]
    GuestSdkMissing {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a crate (no Cargo.toml)", .0.display())]
    NotACrate(PathBuf),
    #[error("cannot create {}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot make {} executable", path.display())]
    MakeExecutable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The languages a handler can be scaffolded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Js,
    Python,
    C,
}

impl Lang {
    pub const ALL: &[Lang] = &[Lang::Rust, Lang::Js, Lang::Python, Lang::C];

    /// The language's name, for people.
    pub fn display(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::Js => "JavaScript",
            Lang::Python => "Python",
            Lang::C => "C",
        }
    }

    /// Its `--lang` value.
    pub fn flag(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Js => "js",
            Lang::Python => "python",
            Lang::C => "c",
        }
    }
}

/// The WIT contract, copied into non-Rust scaffolds so that they build
/// without a skillhost checkout (Rust gets it through the guest SDK).
const SKILL_WIT: &str = include_str!("../../wit/skill.wit");

/// Template files, embedded so that an installed binary can scaffold.
/// `(path in the skill folder, contents, executable)`.
fn templates(lang: Lang) -> Vec<(&'static str, &'static str, bool)> {
    let mut files = vec![
        (
            "SKILL.md",
            include_str!("../templates/common/SKILL.md"),
            false,
        ),
        (
            "README.md",
            include_str!("../templates/common/README.md"),
            false,
        ),
        (
            ".gitignore",
            include_str!("../templates/common/gitignore"),
            false,
        ),
    ];
    match lang {
        Lang::Rust => files.extend([
            (
                "handler/Cargo.toml",
                include_str!("../templates/rust/Cargo.toml"),
                false,
            ),
            (
                "handler/src/lib.rs",
                include_str!("../templates/rust/lib.rs"),
                false,
            ),
            ("build.sh", include_str!("../templates/rust/build.sh"), true),
        ]),
        Lang::Js => files.extend([
            (
                "handler.js",
                include_str!("../templates/js/handler.js"),
                false,
            ),
            (
                "package.json",
                include_str!("../templates/js/package.json"),
                false,
            ),
            ("build.sh", include_str!("../templates/js/build.sh"), true),
            ("wit/skill.wit", SKILL_WIT, false),
        ]),
        Lang::Python => files.extend([
            ("app.py", include_str!("../templates/python/app.py"), false),
            (
                "build.sh",
                include_str!("../templates/python/build.sh"),
                true,
            ),
            ("wit/skill.wit", SKILL_WIT, false),
        ]),
        Lang::C => files.extend([
            ("handler.c", include_str!("../templates/c/handler.c"), false),
            ("build.sh", include_str!("../templates/c/build.sh"), true),
            ("wit/skill.wit", SKILL_WIT, false),
        ]),
    }
    files
}

/// A skill name is also a folder name, a crate name and part of a file
/// name, so only `[a-z0-9-]`, starting with a letter, no `--` or trailing
/// `-` (the agentskills.io rule), at most 64 characters.
pub fn validate_name(name: &str) -> Result<(), ScaffoldError> {
    let starts_with_letter = name.bytes().next().is_some_and(|b| b.is_ascii_lowercase());
    if name.len() > 64 || !starts_with_letter || !is_spec_name(name) {
        return Err(ScaffoldError::InvalidName(name.to_owned()));
    }
    Ok(())
}

/// The guest SDK crate: `explicit`, else the checkout this binary was
/// built from; canonical, and a crate.
pub fn guest_sdk_dir(explicit: Option<&Path>) -> Result<PathBuf, ScaffoldError> {
    let p = explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../guest-sdk"));
    let p = p
        .canonicalize()
        .map_err(|source| ScaffoldError::GuestSdkMissing { path: p, source })?;
    if !p.join("Cargo.toml").is_file() {
        return Err(ScaffoldError::NotACrate(p));
    }
    Ok(p)
}

/// The `[dependencies]` line for the Rust guest SDK. The path form is used
/// when a checkout is known (the one this binary was built from, or
/// `--guest-sdk`), because the SDK and the host's WIT must match; otherwise
/// the crates.io name, with a comment saying how to switch.
fn guest_sdk_dependency(explicit: Option<&Path>) -> Result<String, ScaffoldError> {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../guest-sdk");
    let known = explicit.is_some() || built_from.join("Cargo.toml").is_file();
    Ok(if known {
        let p = guest_sdk_dir(explicit)?;
        // TOML basic string: escape backslashes and quotes.
        let s = p
            .display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        format!("skillhost-guest = {{ path = \"{s}\" }}")
    } else {
        "# The skillhost guest SDK. If it is not on crates.io in your registry,\n\
         # depend on a skillhost checkout instead:\n\
         # skillhost-guest = { path = \"/path/to/skillhost/guest-sdk\" }\n\
         skillhost-guest = \"0.1\""
            .to_owned()
    })
}

/// Writes the skill folder `dir/name` for `lang`. Validates the name and
/// refuses an existing folder before touching the filesystem; on a failure
/// half-way it removes what it created.
pub fn scaffold(
    name: &str,
    lang: Lang,
    dir: &Path,
    guest_sdk: Option<&Path>,
) -> Result<PathBuf, ScaffoldError> {
    validate_name(name)?;
    let root = dir.join(name);
    if root.exists() || root.is_symlink() {
        return Err(ScaffoldError::Exists(root));
    }
    let sdk = match lang {
        Lang::Rust => guest_sdk_dependency(guest_sdk)?,
        _ => String::new(),
    };
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{name_snake}}", &name.replace('-', "_"))
            .replace("{{lang}}", lang.display())
            .replace("{{lang_flag}}", lang.flag())
            .replace("{{guest_sdk}}", &sdk)
    };
    let create = |path: &Path, source| ScaffoldError::Create {
        path: path.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| create(dir, e))?;
    // create_dir (not _all): fails if someone created it meanwhile.
    std::fs::create_dir(&root).map_err(|e| create(&root, e))?;
    let written = (|| -> Result<(), ScaffoldError> {
        for (rel, text, executable) in templates(lang) {
            let path = root.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let text = if rel == "wit/skill.wit" {
                text.to_owned()
            } else {
                fill(text)
            };
            std::fs::write(&path, text).map_err(|source| ScaffoldError::Write {
                path: path.clone(),
                source,
            })?;
            if executable {
                make_executable(&path)?;
            }
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&root);
        return Err(e);
    }
    Ok(root)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), ScaffoldError> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path)?.permissions();
    perms.set_mode(perms.mode() | 0o755);
    std::fs::set_permissions(path, perms).map_err(|source| ScaffoldError::MakeExecutable {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> Result<(), ScaffoldError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_validated_before_anything_is_written() {
        for bad in [
            "",
            "Upper",
            "has space",
            "../escape",
            "a/b",
            "-lead",
            "trail-",
            "dou--ble",
            "1st",
            "ünï",
            "dot.name",
        ] {
            assert!(validate_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["a", "unit-converter", "x2", "my-skill-3"] {
            assert!(validate_name(good).is_ok(), "{good:?} refused");
        }
        assert!(validate_name(&"a".repeat(64)).is_ok());
        assert!(validate_name(&"a".repeat(65)).is_err());
        let dir = std::env::temp_dir().join(format!("skillhost-scaffold-{}", std::process::id()));
        let e = scaffold("../evil", Lang::C, &dir, None).expect_err("bad name");
        assert_eq!(
            e.to_string(),
            "invalid skill name \"../evil\": use 1-64 lowercase letters, digits and single hyphens, starting with a letter (e.g. `unit-converter`)"
        );
        assert!(!dir.exists(), "nothing is created for a bad name");
    }

    #[test]
    fn scaffolds_every_language_and_refuses_to_overwrite() {
        let dir =
            std::env::temp_dir().join(format!("skillhost-scaffold-ok-{}", std::process::id()));
        for (lang, entry) in [
            (Lang::Rust, "handler/src/lib.rs"),
            (Lang::Js, "handler.js"),
            (Lang::Python, "app.py"),
            (Lang::C, "handler.c"),
        ] {
            let name = format!("demo-{}", lang.flag());
            let root = scaffold(&name, lang, &dir, None).expect("scaffold");
            assert!(root.join(entry).is_file(), "{lang:?}: {entry}");
            let md = std::fs::read_to_string(root.join("SKILL.md")).expect("SKILL.md");
            assert!(md.contains(&format!("name: {name}")), "{md}");
            assert!(!md.contains("{{"), "unfilled placeholder: {md}");
            let e = scaffold(&name, lang, &dir, None).expect_err("overwrite");
            assert!(e.to_string().contains("already exists"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_guest_sdk_that_is_not_a_crate_is_refused_and_nothing_is_left() {
        let d = tempfile::tempdir().expect("tempdir");
        let e = scaffold("demo", Lang::Rust, d.path(), Some(d.path())).expect_err("no crate");
        assert!(
            e.to_string().ends_with("is not a crate (no Cargo.toml)"),
            "{e}"
        );
        let missing = d.path().join("missing");
        let e = scaffold("demo", Lang::Rust, d.path(), Some(&missing)).expect_err("missing");
        assert!(matches!(e, ScaffoldError::GuestSdkMissing { .. }), "{e}");
        assert!(!d.path().join("demo").exists());
    }
}
