//! `skillhost handler new`: a new skill folder with a handler in one of
//! four languages that builds (`skillhost handler build`, or the folder's
//! `./build.sh`) and runs as generated. The
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
    #[error("the guest SDK carried by this binary is broken: {0}")]
    BundledSdk(String),
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
pub const SKILL_WIT: &str = include_str!("../../../wit/skill.wit");

/// Template files, embedded so that an installed binary can scaffold:
/// the common ones, then the language's own.
fn templates(lang: Lang) -> Vec<Template> {
    let own: &[Template] = match lang {
        Lang::Rust => &RUST_TEMPLATES,
        Lang::Js => &JS_TEMPLATES,
        Lang::Python => &PYTHON_TEMPLATES,
        Lang::C => &C_TEMPLATES,
    };
    COMMON_TEMPLATES.iter().chain(own).copied().collect()
}

/// `(path in the skill folder, contents, executable)`.
type Template = (&'static str, &'static str, bool);

const COMMON_TEMPLATES: [Template; 4] = [
    (
        "SKILL.md",
        include_str!("../../templates/common/SKILL.md"),
        false,
    ),
    (
        "README.md",
        include_str!("../../templates/common/README.md"),
        false,
    ),
    (
        ".gitignore",
        include_str!("../../templates/common/gitignore"),
        false,
    ),
    (
        "build.sh",
        include_str!("../../templates/common/build.sh"),
        true,
    ),
];

const RUST_TEMPLATES: [Template; 2] = [
    (
        "handler/Cargo.toml",
        include_str!("../../templates/rust/Cargo.toml"),
        false,
    ),
    (
        "handler/src/lib.rs",
        include_str!("../../templates/rust/lib.rs"),
        false,
    ),
];

const JS_TEMPLATES: [Template; 3] = [
    (
        "handler.js",
        include_str!("../../templates/js/handler.js"),
        false,
    ),
    (
        "package.json",
        include_str!("../../templates/js/package.json"),
        false,
    ),
    ("wit/skill.wit", SKILL_WIT, false),
];

const PYTHON_TEMPLATES: [Template; 2] = [
    (
        "app.py",
        include_str!("../../templates/python/app.py"),
        false,
    ),
    ("wit/skill.wit", SKILL_WIT, false),
];

const C_TEMPLATES: [Template; 2] = [
    (
        "handler.c",
        include_str!("../../templates/c/handler.c"),
        false,
    ),
    ("wit/skill.wit", SKILL_WIT, false),
];

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

/// The guest SDK crate's files, carried by the binary so that a Rust
/// scaffold builds without the checkout and without a registry entry.
/// (path in the crate, contents); a test checks that no file is left out.
const GUEST_SDK_FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../../../guest-sdk/Cargo.toml")),
    ("src/lib.rs", include_str!("../../../guest-sdk/src/lib.rs")),
];

/// The workspace manifest the SDK inherits its package fields and
/// dependency versions from.
const WORKSPACE_MANIFEST: &str = include_str!("../../../Cargo.toml");

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

/// The SDK's manifest with what it inherits from the workspace written in,
/// so that it builds on its own.
fn standalone_sdk_manifest() -> Result<String, ScaffoldError> {
    standalone_manifest(GUEST_SDK_FILES[0].1, WORKSPACE_MANIFEST).map_err(ScaffoldError::BundledSdk)
}

/// `sdk` (a crate's manifest) with what it inherits from `workspace` (its
/// workspace's manifest) written in; the error says what is missing.
pub(crate) fn standalone_manifest(sdk: &str, workspace: &str) -> Result<String, String> {
    let workspace: toml_edit::DocumentMut = workspace
        .parse()
        .map_err(|e| format!("workspace Cargo.toml: {e}"))?;
    let mut manifest: toml_edit::DocumentMut = sdk
        .parse()
        .map_err(|e| format!("guest-sdk/Cargo.toml: {e}"))?;
    for (section, from) in [("package", "package"), ("dependencies", "dependencies")] {
        if let Some(table) = manifest
            .get_mut(section)
            .and_then(toml_edit::Item::as_table_like_mut)
        {
            inherit_keys(table, &workspace, from)?;
        }
    }
    // `[lints] workspace = true` becomes the workspace's own lint table.
    let inherits_lints = manifest
        .get("lints")
        .and_then(|l| l.get("workspace"))
        .and_then(toml_edit::Item::as_bool)
        == Some(true);
    if inherits_lints {
        manifest.insert(
            "lints",
            toml_edit::Item::Table(workspace_lints(&workspace)?),
        );
    }
    Ok(manifest.to_string())
}

/// The keys of `table` marked `workspace = true`, given the value of
/// `workspace.FROM.KEY`.
fn inherit_keys(
    table: &mut dyn toml_edit::TableLike,
    workspace: &toml_edit::DocumentMut,
    from: &str,
) -> Result<(), String> {
    let inherited: Vec<String> = table
        .iter()
        .filter(|(_, v)| v.get("workspace").and_then(toml_edit::Item::as_bool) == Some(true))
        .map(|(k, _)| k.to_owned())
        .collect();
    for key in inherited {
        let value = workspace
            .get("workspace")
            .and_then(|w| w.get(from))
            .and_then(|t| t.get(&key))
            .cloned()
            .ok_or_else(|| format!("workspace.{from}.{key} is not in the workspace"))?;
        table.insert(&key, value);
    }
    Ok(())
}

/// The workspace's lint table. The header comments speak of the
/// workspace; the lints keep theirs.
fn workspace_lints(workspace: &toml_edit::DocumentMut) -> Result<toml_edit::Table, String> {
    let mut lints = workspace
        .get("workspace")
        .and_then(|w| w.get("lints"))
        .and_then(toml_edit::Item::as_table)
        .cloned()
        .ok_or_else(|| "workspace.lints is not in the workspace".to_owned())?;
    for (_, tool) in lints.iter_mut() {
        if let Some(t) = tool.as_table_mut() {
            t.decor_mut().clear();
        }
    }
    Ok(lints)
}

/// A short content id of the SDK and the WIT it builds against.
fn guest_sdk_id() -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (path, text) in GUEST_SDK_FILES.iter().chain([&("wit", SKILL_WIT)]) {
        h.update((path.len() as u64).to_le_bytes());
        h.update(path.as_bytes());
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    }
    crate::types::hex(&h.finalize()[..6])
}

/// Writes the SDK carried by the binary to
/// `home/sdk/<version>-<content id>/skillhost-guest` (with the WIT beside it
/// in `wit/`, where the SDK looks) unless it is there already, and returns
/// that crate folder. Written to a temporary folder and renamed into place,
/// so no one sees half an SDK.
pub fn materialize_guest_sdk(home: &Path) -> Result<PathBuf, ScaffoldError> {
    let parent = home.join("sdk");
    let version = env!("CARGO_PKG_VERSION");
    let dest = parent.join(format!("{version}-{}", guest_sdk_id()));
    let krate = dest.join("skillhost-guest");
    if krate.join("Cargo.toml").is_file() {
        return Ok(krate);
    }
    std::fs::create_dir_all(&parent).map_err(create_error(&parent))?;
    let tmp = parent.join(format!(".tmp-{}-{}", guest_sdk_id(), std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(create_error(&tmp))?;
    }
    write_sdk_files(&tmp)?;
    match std::fs::rename(&tmp, &dest) {
        Ok(()) => Ok(krate),
        // Another process wrote the same SDK first: use theirs.
        Err(_) if krate.join("Cargo.toml").is_file() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(krate)
        }
        Err(e) => Err(create_error(&dest)(e)),
    }
}

fn create_error(path: &Path) -> impl FnOnce(std::io::Error) -> ScaffoldError {
    let path = path.to_path_buf();
    move |source| ScaffoldError::Create { path, source }
}

/// The SDK (its manifest standalone) and the WIT, written under `dir`.
fn write_sdk_files(dir: &Path) -> Result<(), ScaffoldError> {
    let manifest = standalone_sdk_manifest()?;
    let files = GUEST_SDK_FILES
        .iter()
        .map(|(rel, text)| {
            let text = if *rel == "Cargo.toml" {
                manifest.as_str()
            } else {
                text
            };
            (format!("skillhost-guest/{rel}"), text)
        })
        .chain([("wit/skill.wit".to_owned(), SKILL_WIT)]);
    for (rel, text) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(create_error(parent))?;
        }
        std::fs::write(&path, text).map_err(|source| ScaffoldError::Write {
            path: path.clone(),
            source,
        })?;
    }
    Ok(())
}

/// The `[dependencies]` line for the Rust guest SDK: `explicit` (a
/// checkout's `guest-sdk`), else the SDK this binary carries, written
/// under `home`. Either way a path: the SDK and the host's WIT must match.
fn guest_sdk_dependency(explicit: Option<&Path>, home: &Path) -> Result<String, ScaffoldError> {
    let p = match explicit {
        Some(p) => guest_sdk_dir(Some(p))?,
        None => materialize_guest_sdk(home)?,
    };
    // TOML basic string: escape backslashes and quotes.
    let s = p
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    Ok(format!("skillhost-guest = {{ path = \"{s}\" }}"))
}

/// Writes the skill folder `dir/name` for `lang`. Validates the name and
/// refuses an existing folder before touching the filesystem; on a failure
/// half-way it removes what it created.
pub fn scaffold(
    name: &str,
    lang: Lang,
    dir: &Path,
    guest_sdk: Option<&Path>,
    home: &Path,
) -> Result<PathBuf, ScaffoldError> {
    validate_name(name)?;
    let root = dir.join(name);
    if root.exists() || root.is_symlink() {
        return Err(ScaffoldError::Exists(root));
    }
    let sdk = match lang {
        Lang::Rust => guest_sdk_dependency(guest_sdk, home)?,
        _ => String::new(),
    };
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{name_snake}}", &name.replace('-', "_"))
            .replace("{{lang}}", lang.display())
            .replace("{{lang_flag}}", lang.flag())
            .replace("{{guest_sdk}}", &sdk)
    };
    std::fs::create_dir_all(dir).map_err(create_error(dir))?;
    // create_dir (not _all): fails if someone created it meanwhile.
    std::fs::create_dir(&root).map_err(create_error(&root))?;
    if let Err(e) = write_templates(&root, lang, &fill) {
        let _ = std::fs::remove_dir_all(&root);
        return Err(e);
    }
    Ok(root)
}

/// The templates of `lang` written under `root`, filled (the WIT as it is).
fn write_templates(
    root: &Path,
    lang: Lang,
    fill: &dyn Fn(&str) -> String,
) -> Result<(), ScaffoldError> {
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
        let e = scaffold("../evil", Lang::C, &dir, None, &dir).expect_err("bad name");
        assert_eq!(
            e.to_string(),
            "invalid skill name \"../evil\": use 1-64 lowercase letters, digits and single hyphens, starting with a letter (e.g. `unit-converter`)"
        );
        assert!(!dir.exists(), "nothing is created for a bad name");
    }

    #[test]
    fn scaffolds_every_language_and_refuses_to_overwrite() {
        let home = tempfile::tempdir().expect("tempdir");
        let home = home.path();
        let dir =
            std::env::temp_dir().join(format!("skillhost-scaffold-ok-{}", std::process::id()));
        for (lang, entry) in [
            (Lang::Rust, "handler/src/lib.rs"),
            (Lang::Js, "handler.js"),
            (Lang::Python, "app.py"),
            (Lang::C, "handler.c"),
        ] {
            let name = format!("demo-{}", lang.flag());
            let root = scaffold(&name, lang, &dir, None, home).expect("scaffold");
            assert!(root.join(entry).is_file(), "{lang:?}: {entry}");
            let md = std::fs::read_to_string(root.join("SKILL.md")).expect("SKILL.md");
            assert!(md.contains(&format!("name: {name}")), "{md}");
            assert!(!md.contains("{{"), "unfilled placeholder: {md}");
            let e = scaffold(&name, lang, &dir, None, home).expect_err("overwrite");
            assert!(e.to_string().contains("already exists"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_guest_sdk_that_is_not_a_crate_is_refused_and_nothing_is_left() {
        let d = tempfile::tempdir().expect("tempdir");
        let e =
            scaffold("demo", Lang::Rust, d.path(), Some(d.path()), d.path()).expect_err("no crate");
        assert!(
            e.to_string().ends_with("is not a crate (no Cargo.toml)"),
            "{e}"
        );
        let missing = d.path().join("missing");
        let e =
            scaffold("demo", Lang::Rust, d.path(), Some(&missing), d.path()).expect_err("missing");
        assert!(matches!(e, ScaffoldError::GuestSdkMissing { .. }), "{e}");
        assert!(!d.path().join("demo").exists());
    }

    #[test]
    fn the_carried_guest_sdk_has_every_file_of_the_crate_and_builds_on_its_own() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../guest-sdk");
        let mut on_disk = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("read guest-sdk") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path.strip_prefix(&root).expect("inside");
                    on_disk.push(rel.to_string_lossy().into_owned());
                }
            }
        }
        on_disk.sort();
        let mut carried: Vec<String> = GUEST_SDK_FILES
            .iter()
            .map(|(p, _)| (*p).to_owned())
            .collect();
        carried.sort();
        assert_eq!(carried, on_disk, "add the new SDK file to GUEST_SDK_FILES");

        let home = tempfile::tempdir().expect("tempdir");
        let krate = materialize_guest_sdk(home.path()).expect("materialize");
        assert!(
            krate.starts_with(home.path().join("sdk")),
            "{}",
            krate.display()
        );
        assert_eq!(materialize_guest_sdk(home.path()).expect("again"), krate);
        let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).expect("Cargo.toml");
        assert!(!manifest.contains("workspace"), "{manifest}");
        assert!(manifest.contains("[lints.clippy]"), "{manifest}");
        assert!(manifest.contains("edition = \"2024\""), "{manifest}");
        assert!(
            manifest.contains("serde = { version = \"1\", features = [\"derive\"] }"),
            "{manifest}"
        );
        // The SDK reads the WIT at `../wit`.
        assert_eq!(
            std::fs::read_to_string(krate.join("../wit/skill.wit")).expect("wit"),
            SKILL_WIT
        );

        let d = tempfile::tempdir().expect("tempdir");
        let folder = scaffold("demo", Lang::Rust, d.path(), None, home.path()).expect("scaffold");
        let cargo = std::fs::read_to_string(folder.join("handler/Cargo.toml")).expect("read");
        assert!(
            cargo.contains(&format!(
                "skillhost-guest = {{ path = \"{}\" }}",
                krate.display()
            )),
            "{cargo}"
        );
    }
}
