//! A skill's files as a runner knows them: read, fingerprinted and
//! compiled once, and read again only when one changed on disk.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::ValidatorSet;
use crate::gate_policy;
use crate::sandbox::{self, Handler};
use crate::skill::{FileIdentity, Reach, Skill, SkillFileError, TreeError};
use crate::types::lock;

/// Biggest handler component read from disk (interpreter-based components
/// for JavaScript and Python are 10-20 MB).
const MAX_HANDLER_BYTES: u64 = 128 << 20;
/// Biggest SKILL.md read from disk.
pub(crate) const MAX_SKILL_MD_BYTES: u64 = 4 << 20;

/// What a runner read of its skills' files, by SKILL.md path. Shared by
/// a runner's clones; every map is whole after a panic elsewhere.
#[derive(Default)]
pub(super) struct FileCache {
    /// Each skill's files, fingerprint and compiled handler.
    known: Mutex<HashMap<PathBuf, KnownFiles>>,
    /// Each skill's folder, as read for its pin.
    trees: Mutex<HashMap<PathBuf, crate::skill::TreeDigest>>,
    /// Each skill's compiled validators (the catalog does not change
    /// under a runner).
    validators: Mutex<HashMap<PathBuf, Arc<ValidatorSet>>>,
}

impl FileCache {
    /// The fingerprint of `skill`'s files and its handler, read and hashed
    /// only when a file changed since this runner last saw it (see
    /// [`FileIdentity`](crate::skill::FileIdentity)): a run of an unchanged
    /// skill neither reads its handler nor hashes it.
    pub(super) fn skill_files(&self, skill: &Skill) -> Result<SkillFiles, SkillFileError> {
        if let Some(files) = self.unchanged_files(skill) {
            return Ok(files);
        }
        // The fingerprint covers both files, so both are read.
        let read_at = std::time::SystemTime::now();
        let (md, md_id) = skill.read_file_identified(&skill.file_name(), MAX_SKILL_MD_BYTES)?;
        let wasm = match skill.meta.skillhost.handler.as_deref() {
            Some(rel) => Some(skill.read_file_identified(rel, MAX_HANDLER_BYTES)?),
            None => None,
        };
        let fingerprint = sandbox::fingerprint(&md, wasm.as_ref().map(|(b, _)| b.as_slice()));
        let handler = wasm
            .as_ref()
            .map(|(bytes, _)| sandbox::Artifact::new(Arc::from(bytes.as_slice())));
        let artifact = handler.as_ref().map(|a| a.hash().to_owned());
        lock(&self.known).insert(
            skill.path.clone(),
            KnownFiles {
                md: md_id,
                wasm: wasm.as_ref().map(|(_, id)| *id),
                read_at,
                fingerprint: fingerprint.clone(),
                artifact: artifact.clone(),
                handler: None,
            },
        );
        Ok(SkillFiles {
            fingerprint,
            artifact,
            handler: handler.map(HandlerFiles::Read),
        })
    }

    /// What [`FileCache::skill_files`] would answer, when no file changed:
    /// two `stat`s, no reading, so it may run on an async worker. `None`
    /// when something must be read, which is also where whatever is wrong
    /// with a file (missing, too large, outside the folder) is reported.
    pub(super) fn unchanged_files(&self, skill: &Skill) -> Option<SkillFiles> {
        let known = self.trusted_known(skill)?;
        if skill.current_identity(&skill.file_name())? != known.md {
            return None;
        }
        let wasm = match skill.meta.skillhost.handler.as_deref() {
            Some(rel) => Some(skill.current_identity(rel)?),
            None => None,
        };
        if wasm != known.wasm {
            return None;
        }
        let handler = match (wasm, known.handler) {
            (None, _) => None,
            (Some(_), Some(h)) => Some(HandlerFiles::Loaded(h)),
            // Read by a call that is still compiling it (concurrent first
            // calls): this call reads too, then finds the compile's result
            // in the sandbox's cache or waits for it.
            (Some(_), None) => return None,
        };
        Some(SkillFiles {
            fingerprint: known.fingerprint,
            artifact: known.artifact,
            handler,
        })
    }

    /// The skill's validators, compiled once per runner (their regular
    /// expressions took milliseconds per run), with what did not compile.
    /// The gate reads a handler's answers through them too.
    pub(super) fn validators(&self, skill: &Skill) -> Arc<ValidatorSet> {
        if let Some(v) = lock(&self.validators).get(&skill.path) {
            return v.clone();
        }
        let compiled = Arc::new(crate::learn::validators(&skill.meta.skillhost.validators));
        lock(&self.validators).insert(skill.path.clone(), compiled.clone());
        compiled
    }

    /// What this runner read of `skill`, if it may stand for the files (see
    /// [`FileIdentity::trusted_if_read_at`]).
    pub(super) fn trusted_known(&self, skill: &Skill) -> Option<KnownFiles> {
        let known = lock(&self.known).get(&skill.path).cloned()?;
        let trusted = known.md.trusted_if_read_at(known.read_at)
            && known
                .wasm
                .is_none_or(|w| w.trusted_if_read_at(known.read_at));
        trusted.then_some(known)
    }

    /// Keeps the handler compiled from the files fingerprinted `fingerprint`.
    pub(super) fn remember_handler(&self, skill: &Skill, fingerprint: &str, handler: &Handler) {
        if let Some(k) = lock(&self.known).get_mut(&skill.path)
            && k.fingerprint == fingerprint
        {
            k.handler = Some(handler.clone());
        }
    }
}

/// Largest tree confirmed on an async worker (one `lstat` per entry); a
/// bigger one is confirmed on the blocking pool.
const SCAN_ON_WORKER_MAX: usize = 64;

impl FileCache {
    /// The pin of `skill` as its folder is now ([`gate_policy::skill_pin`]),
    /// what approvals and grants hold. An unchanged tree costs one `lstat`
    /// per entry it pins (see `Skill::tree_unchanged`); a changed one is
    /// listed again and only the files that changed are read.
    pub(super) fn skill_pin(&self, skill: &Skill) -> Result<String, TreeError> {
        if let Some(pin) = self.unchanged_pin(skill, usize::MAX) {
            return Ok(pin);
        }
        let known = lock(&self.trees).get(&skill.path).cloned();
        let scan = skill.scan_tree(&Reach::of(skill))?;
        let tree = skill.digest_tree(scan, known.as_ref())?;
        let pin = gate_policy::pin(&skill.version, tree.digest());
        lock(&self.trees).insert(skill.path.clone(), tree);
        Ok(pin)
    }

    /// The pin, when no entry of a tree of at most `max` entries changed
    /// since this runner read it; `None` when something must be read.
    fn unchanged_pin(&self, skill: &Skill, max: usize) -> Option<String> {
        let known = lock(&self.trees).get(&skill.path).cloned()?;
        if known.len() > max {
            return None;
        }
        skill
            .tree_unchanged(&known)
            .then(|| gate_policy::pin(&skill.version, known.digest()))
    }

    /// [`FileCache::skill_pin`] without blocking an async worker on
    /// reads: an unchanged small tree is confirmed here, anything else on
    /// the blocking pool.
    pub(super) async fn skill_pin_off_the_workers(
        self: &Arc<Self>,
        skill: &Skill,
    ) -> Result<String, String> {
        if let Some(pin) = self.unchanged_pin(skill, SCAN_ON_WORKER_MAX) {
            return Ok(pin);
        }
        let (cache, owned) = (self.clone(), skill.clone());
        tokio::task::spawn_blocking(move || cache.skill_pin(&owned).map_err(|e| e.to_string()))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
    }
}

/// The bytes of the SKILL.md file and, if the skill has one, its handler
/// component (read inside the skill folder, size-capped).
pub fn read_skill_and_handler(skill: &Skill) -> Result<(Vec<u8>, Option<Vec<u8>>), SkillFileError> {
    let md = skill.read_file(&skill.file_name(), MAX_SKILL_MD_BYTES)?;
    let wasm = match &skill.meta.skillhost.handler {
        Some(rel) => Some(skill.read_file(rel, MAX_HANDLER_BYTES)?),
        None => None,
    };
    Ok((md, wasm))
}

/// The files of a skill as a runner last read them.
#[derive(Clone)]
pub(super) struct KnownFiles {
    md: FileIdentity,
    wasm: Option<FileIdentity>,
    /// When the read that saw them started.
    read_at: std::time::SystemTime,
    fingerprint: String,
    /// `sha256:` of the handler's bytes.
    artifact: Option<String>,
    /// Compiled from exactly these files, once a run loaded it.
    handler: Option<Handler>,
}

pub(super) struct SkillFiles {
    pub(super) fingerprint: String,
    /// `sha256:` of the handler's bytes, what a gate approval is pinned to.
    pub(super) artifact: Option<String>,
    pub(super) handler: Option<HandlerFiles>,
}

pub(super) enum HandlerFiles {
    /// Unchanged since it was compiled.
    Loaded(Handler),
    /// Read now; to be loaded.
    Read(sandbox::Artifact),
}
