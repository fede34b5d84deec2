//! Helpers shared by the catalog tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

// tests/integration.rs loads this file as `support`: its modules are the
// other files of tests/support/.
pub mod model_server;

/// `../shared/skill-corpus` from the repository root, or `$SKILLHOST_CORPUS`.
/// `None` (and a printed note) when it is absent, so the suite runs anywhere.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("SKILLHOST_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/skill-corpus"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping: skill corpus not found at {}", dir.display());
        None
    }
}

/// Writes `text` to `root/rel`, creating folders.
pub fn write(root: &Path, rel: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("has a parent")).expect("create folders");
    std::fs::write(&path, text).expect("write file");
    path
}

/// A minimal valid skill `name` under `root/name/SKILL.md`.
pub fn write_skill(root: &Path, name: &str, description: &str) -> PathBuf {
    write(
        root,
        &format!("{name}/SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
    )
}

/// A temporary folder, in RAM (`/dev/shm`) where there is one: tests that
/// create and remove thousands of folders stay fast on a busy disk.
pub fn fast_tempdir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::Builder::new()
            .prefix("skillhost-test-")
            .tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().expect("tempdir")
}
