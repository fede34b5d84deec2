//! Issue 39, findings 1 and 2: what the build box holds and what a build
//! may use. Built for real, past the source check (as if it had missed a
//! spelling), in the box the forge makes.

use super::*;
use skillhost::forge::handler::{self as forge_handler, BuildError, BuildSettings, HandlerConfig};

/// Builds `source` as the forge would but without the source check, with
/// `config`; the result and `build.log` (empty when the slot is gone).
fn build_raw(
    ws: &Workspace,
    name: &str,
    source: &str,
    config: &HandlerConfig,
) -> (PathBuf, Result<forge_handler::Built, BuildError>, String) {
    let settings = BuildSettings::new(config, &harness::cache_dir());
    let slot = ws.workspace.join(".skillhost/quarantine/raw").join(name);
    std::fs::create_dir_all(&slot).expect("mkdir");
    forge_handler::write_project(&slot, source, HandlerLang::Rust, &settings).expect("project");
    let built = forge_handler::build(&slot, HandlerLang::Rust, &settings);
    let log = std::fs::read_to_string(slot.join("build.log")).unwrap_or_default();
    (slot, built, log)
}

/// The error's text and the log of a build that must fail to compile.
fn failed(built: Result<forge_handler::Built, BuildError>, log: String) -> String {
    match built {
        Err(e @ BuildError::Failed { .. }) => format!("{e}\n{log}"),
        Ok(_) => panic!("it built"),
        Err(e) => panic!("a build failure, not {e:?}"),
    }
}

/// `compile_error!(include_str!(F))` for each file: rustc quotes the file
/// in an error spanned in src/, which the diagnostics filter passes on.
fn quote_files(files: &[&str]) -> String {
    let mut src = String::new();
    for f in files {
        src.push_str(&format!("compile_error!(include_str!(\"{f}\"));\n"));
    }
    src + GOOD_RUST
}

/// A private crate's source planted in the operator's registry, removed
/// when dropped.
struct PlantedCrate(PathBuf);

impl PlantedCrate {
    fn plant(marker: &str) -> PlantedCrate {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo")
            });
        let index = std::fs::read_dir(home.join("registry/src"))
            .expect("a registry")
            .flatten()
            .map(|e| e.path())
            .next()
            .expect("an index");
        let dir = index.join(format!("private-secrets-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).expect("mkdir");
        std::fs::write(dir.join("src/lib.rs"), format!("// {marker}\n")).expect("plant");
        PlantedCrate(dir)
    }
}

impl Drop for PlantedCrate {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The host paths nothing in the box may name.
fn host_paths(ws: &Workspace, slot: &Path) -> Vec<String> {
    let home = std::env::var("HOME").expect("HOME");
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo"));
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("checkout")
        .to_path_buf();
    [
        slot.to_path_buf(),
        ws.workspace.clone(),
        ws.home.clone(),
        harness::cache_dir(),
        PathBuf::from(cargo_home),
        checkout,
        // The home as a folder (a bare `/root` is also a word of vendored
        // crates' test data).
        PathBuf::from(home).join(""),
    ]
    .iter()
    .map(|p| p.display().to_string())
    .collect()
}

#[test]
fn the_box_names_no_host_path_and_holds_no_registry_or_checkout() {
    let (ws, _) = workspace();
    let config = HandlerConfig::default();
    // The box's own manifest: a file the box can read is quoted into
    // the log, and it names only box paths.
    let (slot, built, log) = build_raw(&ws, "own", &quote_files(&["/box/src/Cargo.toml"]), &config);
    let text = failed(built, log);
    assert!(
        text.contains("skillhost-guest = { path = \"/box/sdk/skillhost-guest\" }"),
        "{text}"
    );
    let hosts = host_paths(&ws, &slot);
    // The mount table, which named every bind's host path; a private crate
    // planted in CARGO_HOME/registry/src; the checkout's own manifest. One
    // build each (a file rustc cannot read ends the build).
    let marker = format!("PRIVATE_CRATE_{}_{}", std::process::id(), line!());
    let planted = PlantedCrate::plant(&marker);
    let checkout_manifest = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../Cargo.toml")
        .canonicalize()
        .expect("checkout");
    let files = [
        PathBuf::from("/proc/self/mountinfo"),
        PathBuf::from("/proc/1/mountinfo"),
        planted.0.join("src/lib.rs"),
        checkout_manifest,
    ];
    for (i, file) in files.iter().enumerate() {
        let quoted = file.display().to_string();
        let (_, built, log) =
            build_raw(&ws, &format!("read-{i}"), &quote_files(&[&quoted]), &config);
        let text = failed(built, log);
        assert!(
            !text.contains(&marker),
            "the planted crate was read:\n{text}"
        );
        assert!(
            !text.contains("[workspace"),
            "the checkout's manifest was read:\n{text}"
        );
        for host in &hosts {
            // (the source names the planted crate and the manifest itself)
            if !quoted.starts_with(host.as_str()) {
                assert!(
                    !text.contains(host.as_str()),
                    "{quoted}: the build named {host}:\n{text}"
                );
            }
        }
        assert!(text.contains("error at src/lib.rs:1:"), "{text}");
    }
    drop(planted);
}

/// Every file under `dir` holding one of `needles`, with the needle.
fn naming(dir: &Path, needles: &[String]) -> Vec<(PathBuf, String)> {
    let set = regex::bytes::RegexSet::new(needles.iter().map(|n| regex::escape(n))).expect("set");
    snapshot(dir)
        .into_iter()
        .filter_map(|(p, bytes)| {
            set.matches(&bytes)
                .iter()
                .next()
                .map(|i| (p, needles[i].clone()))
        })
        .collect()
}

/// The build cache was shared by every workspace and writable in the box,
/// so one workspace's build could read another's slot path there. Each
/// build now has a target folder of its own, a copy of the kit's, which
/// was built in the box and names no host path (that the copy is removed
/// after the build: `boxed::tests`).
#[test]
fn each_build_has_its_own_target_and_the_kit_names_no_host_path() {
    let (ws, _) = workspace();
    let (slot, built, _) = build_raw(&ws, "own-target", GOOD_RUST, &HandlerConfig::default());
    let built = built.expect("it builds in the box");
    assert!(built.wasm.starts_with(b"\0asm"));
    let cache = harness::cache_dir().join("forge-handler-build");
    let kits: Vec<PathBuf> = std::fs::read_dir(cache.join("kits"))
        .expect("kits")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("READY").is_file())
        .collect();
    assert!(!kits.is_empty(), "a kit");
    for kit in kits {
        let named = naming(&kit, &host_paths(&ws, &slot));
        assert!(named.is_empty(), "the kit names host paths: {named:?}");
    }
}

/// Issue 39, finding 2: a 600 MB static built (2.8 GB of memory) and its
/// artifact was read whole. With the file size limit lowered to keep the
/// test cheap, a 16 MB static is refused by the limit, with an error that
/// names it, and nothing of the slot is left.
#[test]
fn a_build_over_the_file_size_limit_is_refused_and_its_slot_removed() {
    let (ws, _) = workspace();
    let config = HandlerConfig {
        build_max_file_mb: 4,
        ..HandlerConfig::default()
    };
    let source = format!("#[used]\nstatic BIG: [u8; 16 << 20] = [7; 16 << 20];\n{GOOD_RUST}");
    let (slot, built, _) = build_raw(&ws, "big-static", &source, &config);
    match built {
        Err(
            e @ BuildError::Failed {
                refused_by_limit: true,
                ..
            },
        ) => {
            let msg = e.to_string();
            assert!(
                msg.contains("over the limit of 4 MB") && msg.contains("build_max_file_mb"),
                "{msg}"
            );
        }
        Ok(b) => panic!("it built, {} bytes", b.wasm.len()),
        Err(e) => panic!("not refused by a limit: {e}"),
    }
    assert!(!slot.exists(), "the refused slot was left");
}

/// Issue 39, finding 2, memory: the same kind of static, large enough that
/// compiling it needs more than the build's memory, is refused by that
/// limit, named, and its slot removed; the same handler without it builds
/// under the same limit.
#[test]
fn a_build_over_the_memory_limit_is_refused_and_an_honest_one_builds_under_it() {
    let (ws, _) = workspace();
    let config = HandlerConfig {
        build_memory_mb: 1536,
        ..HandlerConfig::default()
    };
    let (_, honest, _) = build_raw(&ws, "honest", GOOD_RUST, &config);
    honest.unwrap_or_else(|e| panic!("an honest handler under 1536 MB: {e}"));
    let source = format!("#[used]\nstatic BIG: [u8; 768 << 20] = [7; 768 << 20];\n{GOOD_RUST}");
    let (slot, built, _) = build_raw(&ws, "huge-static", &source, &config);
    match built {
        Err(
            e @ BuildError::Failed {
                refused_by_limit: true,
                ..
            },
        ) => {
            let msg = e.to_string();
            assert!(
                msg.contains("out of its 1536 MB of memory") && msg.contains("build_memory_mb"),
                "{msg}"
            );
        }
        Ok(b) => panic!("it built, {} bytes", b.wasm.len()),
        Err(e) => panic!("not refused by a limit: {e}"),
    }
    assert!(!slot.exists(), "the refused slot was left");
}
