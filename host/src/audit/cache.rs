//! What the audit found in a text it has seen before, kept across
//! processes: every command loads the catalog, and auditing an unchanged
//! skill again gives the same findings. An entry is keyed by the text's
//! `sha256` and its file name, under the rules' own hash (the rules file,
//! the phrase table, the vendor and package lists, and [`SCANNER`]): new
//! rules or data or a new scanner start an empty cache.
//!
//! The file lives in the host's cache folder, beside the compiled handler
//! code, which is trusted far more than this: whoever can write there can
//! already change what runs. A file that cannot be read, or is not the
//! cache of these rules, is an empty cache; nothing fails for it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Finding;

/// Bump when the scanner's code changes what it finds for the same rules
/// (3: the flow analysis of scripts and code blocks, `flow/`; 4: the
/// prose phrase table, windows and quoted examples; 6: unverified root
/// installs; 7: the intent analysis of prose, `intent/`; 8: loaders,
/// shell decoders, batch files, escapes and XOR, pickles).
pub const SCANNER: u32 = 10;
/// Largest cache file read.
const MAX_FILE_BYTES: u64 = 64 << 20;
/// Most entries kept; past it the file starts over with this load's.
const MAX_ENTRIES: usize = 200_000;

/// The hash of the rules, the other data files and the scanner, which
/// every entry is under.
fn rules_hash() -> &'static str {
    static HASH: LazyLock<String> = LazyLock::new(|| {
        let mut h = Sha256::new();
        h.update(SCANNER.to_le_bytes());
        // Every data file the audit reads: a changed vendor list, phrase
        // table or package list changes the findings as a rule does.
        for data in [
            super::RULES_TOML,
            super::PROSE_TOML,
            super::VENDORS_TOML,
            super::PACKAGES_TOML,
            super::LEXICON_TOML,
            super::SAFEGUARDS_TOML,
        ] {
            h.update((data.len() as u64).to_le_bytes());
            h.update(data.as_bytes());
        }
        hex(&h.finalize())
    });
    &HASH
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The key of a text read from `file` whose `sha256` (as the catalog's
/// content version, `sha256:HEX`) is `version`.
pub fn key(file: &str, version: &str) -> String {
    format!("{version} {file}")
}

#[derive(Serialize, Deserialize)]
struct Stored {
    rules: String,
    entries: HashMap<String, Vec<Finding>>,
}

/// Findings by text, read from `path` once and written back by [`save`].
///
/// [`save`]: FindingsCache::save
#[derive(Debug)]
pub struct FindingsCache {
    path: PathBuf,
    known: HashMap<String, Vec<Finding>>,
    added: Mutex<HashMap<String, Vec<Finding>>>,
}

impl FindingsCache {
    /// The cache in `path`; empty when there is none, or it cannot be
    /// read, or it was written for other rules.
    pub fn open(path: &Path) -> FindingsCache {
        let known = read(path).unwrap_or_default();
        FindingsCache {
            path: path.to_path_buf(),
            known,
            added: Mutex::new(HashMap::new()),
        }
    }

    /// The findings of the text with `key`, audited by `audit` when this
    /// cache has not seen it.
    pub fn get_or_audit(&self, key: String, audit: impl FnOnce() -> Vec<Finding>) -> Vec<Finding> {
        if let Some(f) = self.known.get(&key) {
            return f.clone();
        }
        if let Some(f) = self.added().get(&key) {
            return f.clone();
        }
        let findings = audit();
        self.added().insert(key, findings.clone());
        findings
    }

    fn added(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Finding>>> {
        self.added.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many texts were audited rather than found here.
    pub fn misses(&self) -> usize {
        self.added().len()
    }

    /// Writes what was audited since [`open`](Self::open) beside what was
    /// there, atomically; nothing when nothing was added.
    pub fn save(&self) -> std::io::Result<()> {
        let added = std::mem::take(&mut *self.added());
        if added.is_empty() {
            return Ok(());
        }
        let mut entries = if self.known.len() + added.len() > MAX_ENTRIES {
            HashMap::new()
        } else {
            self.known.clone()
        };
        entries.extend(added);
        let stored = Stored {
            rules: rules_hash().to_owned(),
            entries,
        };
        let bytes = serde_json::to_vec(&stored).map_err(std::io::Error::other)?;
        write_replacing(&self.path, &bytes)
    }
}

/// A file beside `path`, then renamed over it: a reader sees the old
/// cache or the new one. (`fsutil` is of this layer: not used here.)
fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map_or_else(|| "audit".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

fn read(path: &Path) -> Option<HashMap<String, Vec<Finding>>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).ok()?;
    let stored: Stored = serde_json::from_slice(&bytes).ok()?;
    (stored.rules == rules_hash()).then_some(stored.entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(rule: &str) -> Finding {
        Finding {
            rule: rule.into(),
            severity: super::super::Severity::High,
            file: "SKILL.md".into(),
            line: 1,
            column: 1,
            excerpt: "x".into(),
        }
    }

    #[test]
    fn a_text_seen_before_is_not_audited_again_and_a_changed_one_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.json");
        let cache = FindingsCache::open(&path);
        let k = key("SKILL.md", "sha256:aa");
        let got = cache.get_or_audit(k.clone(), || vec![finding("pipe-to-shell")]);
        assert_eq!(got, vec![finding("pipe-to-shell")]);
        assert_eq!(cache.misses(), 1);
        cache.save().expect("save");

        let cache = FindingsCache::open(&path);
        let got = cache.get_or_audit(k, || panic!("audited again"));
        assert_eq!(got, vec![finding("pipe-to-shell")]);
        // Another text, or the same text under another file name, is new.
        let mut audited = 0;
        for k in [key("SKILL.md", "sha256:bb"), key("run.sh", "sha256:aa")] {
            cache.get_or_audit(k, || {
                audited += 1;
                Vec::new()
            });
        }
        assert_eq!(audited, 2);
        assert_eq!(cache.misses(), 2);
    }

    #[test]
    fn a_cache_of_other_rules_or_a_damaged_file_is_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.json");
        let k = key("SKILL.md", "sha256:cc");
        let other = Stored {
            rules: "other rules".into(),
            entries: HashMap::from([(k.clone(), vec![finding("planted")])]),
        };
        std::fs::write(&path, serde_json::to_vec(&other).expect("json")).expect("write");
        let cache = FindingsCache::open(&path);
        assert_eq!(cache.get_or_audit(k.clone(), Vec::new), Vec::new());
        std::fs::write(&path, b"{not json").expect("write");
        let cache = FindingsCache::open(&path);
        assert_eq!(cache.get_or_audit(k, Vec::new), Vec::new());
        // Nothing added, nothing written.
        let untouched = std::fs::read(&path).expect("read");
        FindingsCache::open(&path).save().expect("save");
        assert_eq!(std::fs::read(&path).expect("read"), untouched);
    }
}
