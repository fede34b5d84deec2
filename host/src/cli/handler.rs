//! `skillhost handler ...`: look inside handler components, and scaffold
//! new handlers.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand, ValueEnum};

use super::Ctx;
use crate::sandbox::inspect::inspect;
use crate::types::Chain;

#[derive(Debug, Args)]
pub struct HandlerArgs {
    #[command(subcommand)]
    command: HandlerCommand,
}

#[derive(Debug, Subcommand)]
enum HandlerCommand {
    /// Print a component's imports, exports, size and language, and whether
    /// it fits the handler world.
    Inspect {
        /// A `.wasm` component.
        path: PathBuf,
        /// Also compile and link it against the host (slower for big components).
        #[arg(long)]
        link: bool,
        #[arg(long)]
        json: bool,
    },
    /// Scaffold a skill folder NAME with a handler in LANG that builds
    /// (`./build.sh`) and runs as generated.
    New {
        /// The skill's name: lowercase letters, digits and hyphens.
        name: String,
        /// The handler's language.
        #[arg(long, value_enum)]
        lang: Lang,
        /// Folder to create the skill folder in (default: the current one).
        #[arg(long, value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// (Rust) The guest SDK crate to depend on, by path. Default: the
        /// skillhost checkout this binary was built from, if it still exists,
        /// else the crates.io package `skillhost-guest`.
        #[arg(long, value_name = "PATH")]
        guest_sdk: Option<PathBuf>,
    },
}

/// The languages `handler new` can scaffold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    Rust,
    Js,
    Python,
    C,
}

impl Lang {
    fn display(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::Js => "JavaScript",
            Lang::Python => "Python",
            Lang::C => "C",
        }
    }
    fn flag(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Js => "js",
            Lang::Python => "python",
            Lang::C => "c",
        }
    }
}

pub fn run(args: HandlerArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.command {
        HandlerCommand::Inspect { path, link, json } => inspect_cmd(&path, link, json, ctx),
        HandlerCommand::New {
            name,
            lang,
            dir,
            guest_sdk,
        } => {
            let created = scaffold(&name, lang, &dir, guest_sdk.as_deref())?;
            outln!("created {} ({} handler)", created.display(), lang.display())?;
            outln!("next: {}/build.sh", created.display())?;
            outln!(
                "then: skillhost --skills {} run \"say hello\" --skill {name}",
                dir.display()
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn inspect_cmd(path: &Path, link: bool, json: bool, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut report = inspect(&bytes).with_context(|| path.display().to_string())?;
    if link && report.fits_handler_world() {
        let sandbox = ctx.runner()?.sandbox()?;
        if let Err(e) = sandbox.load(&bytes) {
            report.problems.push(Chain(&e).to_string());
        }
    }
    if json {
        let mut v = serde_json::to_value(&report)?;
        v["fits_handler_world"] = report.fits_handler_world().into();
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        outln!("component: {}", path.display())?;
        outln!("size:      {} bytes", report.size)?;
        outln!(
            "language:  {}",
            report.language.as_deref().unwrap_or("unknown")
        )?;
        outln!("exports:")?;
        for e in &report.exports {
            outln!("  {e}")?;
        }
        outln!("imports:")?;
        for i in &report.imports {
            outln!("  {i}")?;
        }
        if !report.producers.is_empty() {
            outln!("producers:")?;
            for p in &report.producers {
                outln!("  {p}")?;
            }
        }
        if report.fits_handler_world() {
            outln!("handler world: fits")?;
        } else {
            outln!("handler world: does not fit")?;
            for p in &report.problems {
                outln!("  - {p}")?;
            }
        }
    }
    Ok(if report.fits_handler_world() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The WIT contract, copied into non-Rust scaffolds so that they build
/// without a skillhost checkout (Rust gets it through the guest SDK).
const SKILL_WIT: &str = include_str!("../../../wit/skill.wit");

/// Template files, embedded so that an installed binary can scaffold.
/// `(path in the skill folder, contents, executable)`.
fn templates(lang: Lang) -> Vec<(&'static str, &'static str, bool)> {
    let mut files = vec![
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
    ];
    match lang {
        Lang::Rust => files.extend([
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
            (
                "build.sh",
                include_str!("../../templates/rust/build.sh"),
                true,
            ),
        ]),
        Lang::Js => files.extend([
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
            (
                "build.sh",
                include_str!("../../templates/js/build.sh"),
                true,
            ),
            ("wit/skill.wit", SKILL_WIT, false),
        ]),
        Lang::Python => files.extend([
            (
                "app.py",
                include_str!("../../templates/python/app.py"),
                false,
            ),
            (
                "build.sh",
                include_str!("../../templates/python/build.sh"),
                true,
            ),
            ("wit/skill.wit", SKILL_WIT, false),
        ]),
        Lang::C => files.extend([
            (
                "handler.c",
                include_str!("../../templates/c/handler.c"),
                false,
            ),
            ("build.sh", include_str!("../../templates/c/build.sh"), true),
            ("wit/skill.wit", SKILL_WIT, false),
        ]),
    }
    files
}

/// A skill name is also a folder name, a crate name and part of a file
/// name, so only `[a-z0-9-]`, starting with a letter, no `--` or trailing
/// `-` (the agentskills.io rule), at most 64 characters.
pub fn validate_name(name: &str) -> anyhow::Result<()> {
    let ok_chars = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if name.is_empty()
        || name.len() > 64
        || !ok_chars
        || !name.as_bytes()[0].is_ascii_lowercase()
        || name.ends_with('-')
        || name.contains("--")
    {
        bail!(
            "invalid skill name {name:?}: use 1-64 lowercase letters, digits and single hyphens, starting with a letter (e.g. `unit-converter`)"
        );
    }
    Ok(())
}

/// The `[dependencies]` line for the Rust guest SDK. The path form is used
/// when a checkout is known (the one this binary was built from, or
/// `--guest-sdk`), because the SDK and the host's WIT must match; otherwise
/// the crates.io name, with a comment saying how to switch.
fn guest_sdk_dependency(explicit: Option<&Path>) -> anyhow::Result<String> {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../guest-sdk");
    let path = match explicit {
        Some(p) => Some(p.to_path_buf()),
        None => built_from
            .join("Cargo.toml")
            .is_file()
            .then_some(built_from),
    };
    Ok(match path {
        Some(p) => {
            let p = p
                .canonicalize()
                .with_context(|| format!("guest SDK not found at {}", p.display()))?;
            if !p.join("Cargo.toml").is_file() {
                bail!("{} is not a crate (no Cargo.toml)", p.display());
            }
            // TOML basic string: escape backslashes and quotes.
            let s = p
                .display()
                .to_string()
                .replace('\\', "\\\\")
                .replace('"', "\\\"");
            format!("skillhost-guest = {{ path = \"{s}\" }}")
        }
        None => "# The skillhost guest SDK. If it is not on crates.io in your registry,\n\
                 # depend on a skillhost checkout instead:\n\
                 # skillhost-guest = { path = \"/path/to/skillhost/guest-sdk\" }\n\
                 skillhost-guest = \"0.1\""
            .to_owned(),
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
) -> anyhow::Result<PathBuf> {
    validate_name(name)?;
    let root = dir.join(name);
    if root.exists() || root.is_symlink() {
        bail!(
            "{} already exists; choose another name or remove it",
            root.display()
        );
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
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // create_dir (not _all): fails if someone created it meanwhile.
    std::fs::create_dir(&root).with_context(|| format!("cannot create {}", root.display()))?;
    let written = (|| -> anyhow::Result<()> {
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
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
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
fn make_executable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path)?.permissions();
    perms.set_mode(perms.mode() | 0o755);
    std::fs::set_permissions(path, perms)
        .with_context(|| format!("cannot make {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> anyhow::Result<()> {
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
        let dir = std::env::temp_dir().join(format!("skillhost-scaffold-{}", std::process::id()));
        assert!(scaffold("../evil", Lang::C, &dir, None).is_err());
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
}
