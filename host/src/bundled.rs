//! The skills shipped inside the binary (built by `build.rs` from
//! `skills/`), materialised once per content version into
//! `$SKILLHOST_HOME/bundled/<id>/` so that every later stage sees plain
//! folders: one mechanism for reading skills, whatever their source.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

mod files {
    include!(concat!(env!("OUT_DIR"), "/bundled_files.rs"));
}

/// The bundled files: (path relative to the bundle root, bytes).
pub fn files() -> &'static [(&'static str, &'static [u8])] {
    files::FILES
}

/// A short content id of the whole bundle: a new build with other bytes
/// materialises into a new folder and never mixes with an old one.
pub fn bundle_id() -> String {
    let mut h = Sha256::new();
    for (path, bytes) in files() {
        h.update((path.len() as u64).to_le_bytes());
        h.update(path.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    crate::types::hex(&h.finalize()[..8])
}

/// Makes sure the bundle exists under `home/bundled/<id>` and returns that
/// folder. Written to a temporary folder first and renamed into place, so a
/// concurrent process or a crash never leaves a half-written bundle behind.
pub fn materialize(home: &Path) -> io::Result<PathBuf> {
    let parent = home.join("bundled");
    let dest = parent.join(bundle_id());
    if dest.is_dir() {
        return Ok(dest);
    }
    fs::create_dir_all(&parent)?;
    let tmp = parent.join(format!(".tmp-{}-{}", bundle_id(), std::process::id()));
    if tmp.exists() {
        fs::remove_dir_all(&tmp)?;
    }
    for (rel, bytes) in files() {
        let rel = Path::new(rel);
        // Paths come from our own build script; refuse anything odd anyway.
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("bundled path {} is not relative", rel.display()),
            ));
        }
        let path = tmp.join(rel);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::write(&path, bytes)?;
    }
    match fs::rename(&tmp, &dest) {
        Ok(()) => Ok(dest),
        // Another process materialised the same bundle first: use theirs.
        Err(_) if dest.is_dir() => {
            let _ = fs::remove_dir_all(&tmp);
            Ok(dest)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_has_skills_with_compiled_handlers() {
        let names: Vec<&str> = files().iter().map(|(p, _)| *p).collect();
        for skill in ["email-writer", "text-summarizer", "data-inspector"] {
            assert!(
                names.contains(&format!("{skill}/SKILL.md").as_str()),
                "{names:?}"
            );
            let wasm = files()
                .iter()
                .find(|(p, _)| *p == format!("{skill}/handler.wasm"))
                .map(|(_, b)| *b)
                .expect("handler compiled into the bundle");
            assert_eq!(&wasm[..4], b"\0asm", "{skill} handler is wasm");
        }
    }

    #[test]
    fn materialize_is_idempotent() {
        let home = tempfile::tempdir().expect("tempdir");
        let a = materialize(home.path()).expect("first");
        let b = materialize(home.path()).expect("second");
        assert_eq!(a, b);
        assert!(a.join("email-writer/SKILL.md").is_file());
        assert!(a.join("email-writer/handler.wasm").is_file());
    }
}
