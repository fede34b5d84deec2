//! Compiled components on disk, keyed by the component's content hash and
//! the engine's compatibility hash, so a second process start does not
//! recompile and an engine upgrade never loads a stale artifact.
//!
//! Loading a compiled artifact runs native code produced by the compiler,
//! so the cache folder is created private to the user (0700) and files are
//! written atomically; a file that fails to load is recompiled.

use std::fs;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

pub(crate) fn content_hash(wasm: &[u8]) -> String {
    format!("sha256:{}", crate::types::hex(&Sha256::digest(wasm)))
}

pub(crate) struct DiskCache {
    dir: PathBuf,
    engine_key: String,
}

impl DiskCache {
    pub(crate) fn new(dir: PathBuf, engine: &Engine) -> Self {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        DiskCache {
            dir,
            engine_key: format!("{:016x}", h.finish()),
        }
    }

    fn path(&self, hash: &str) -> PathBuf {
        let hex = hash.trim_start_matches("sha256:");
        self.dir.join(format!(
            "{}-{}.cwasm",
            &hex[..hex.len().min(40)],
            self.engine_key
        ))
    }

    pub(crate) fn load(&self, engine: &Engine, hash: &str) -> Option<Component> {
        let path = self.path(hash);
        if !path.is_file() {
            return None;
        }
        // SAFETY: the file was written by `store` below from a component this
        // engine compiled, into a folder only this user can write; wasmtime
        // checks the engine compatibility header and rejects other files.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(c) => Some(c),
            Err(_) => {
                let _ = fs::remove_file(&path);
                None
            }
        }
    }

    /// Drops a component's file, once better code for it is cached.
    pub(crate) fn remove(&self, hash: &str) {
        let _ = fs::remove_file(self.path(hash));
    }

    pub(crate) fn store(&self, hash: &str, component: &Component) -> std::io::Result<()> {
        create_private_dir(&self.dir)?;
        let bytes = component
            .serialize()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        crate::fsutil::write_atomic(&self.path(hash), &bytes)
    }
}

fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }
    #[cfg(not(unix))]
    {
        fs::create_dir_all(dir)
    }
}
