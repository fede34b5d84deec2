//! Handlers' key-value data: each skill's own keys, within a quota
//! ([`KvStore`]).

use super::StoreError;

/// How much one skill may keep in the key-value store: every key and value
/// byte together, and the number of keys (which bounds the rows, whose own
/// overhead the byte count does not see).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvQuota {
    pub max_bytes: u64,
    pub max_keys: u64,
}

/// The `[limits]` defaults (`kv_quota_kb`, `kv_max_keys`; a test in
/// `config` keeps the two equal). Runs use the configured quota.
impl Default for KvQuota {
    fn default() -> Self {
        KvQuota {
            max_bytes: 1024 * 1024,
            max_keys: 1_000,
        }
    }
}

/// What one skill keeps in the key-value store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KvUsage {
    pub keys: u64,
    /// Key and value bytes together.
    pub bytes: u64,
}

/// Refuses a key-value write of `entry` bytes (key and value) that would
/// take `skill` past `quota`, from `now` and the `replaced` entry's bytes
/// (none: a new key). The replaced value is counted out before the new one
/// is counted in. A write that does not grow the usage is always allowed,
/// so a skill left over a lowered quota can still shrink its data.
pub(super) fn check_kv_quota(
    skill: &str,
    quota: KvQuota,
    now: KvUsage,
    replaced: Option<u64>,
    entry: u64,
) -> Result<(), StoreError> {
    let would = KvUsage {
        keys: now.keys + u64::from(replaced.is_none()),
        bytes: now.bytes.saturating_sub(replaced.unwrap_or(0)) + entry,
    };
    for (setting, unit, quota, would, now) in [
        ("kv_max_keys", "keys", quota.max_keys, would.keys, now.keys),
        (
            "kv_quota_kb",
            "bytes",
            quota.max_bytes,
            would.bytes,
            now.bytes,
        ),
    ] {
        if would > quota && would > now {
            return Err(StoreError::KvQuota {
                skill: skill.to_owned(),
                setting,
                unit,
                quota,
                would,
                now,
            });
        }
    }
    Ok(())
}

/// Where each skill's key-value data is kept.
pub trait KvStore {
    fn kv_get(&self, skill: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Stores `value` under `key` for `skill`, within the skill's quota.
    ///
    /// The usage is read and the write made in one immediate transaction, so
    /// concurrent writers (other calls, other processes) cannot both fit
    /// under the quota and together exceed it. A replaced value is counted
    /// out before the new one is counted in. A write that does not grow the
    /// usage is always allowed, so a skill left over a lowered quota can
    /// still shrink its data.
    fn kv_set(&self, skill: &str, key: &str, value: &[u8]) -> Result<(), StoreError>;

    /// What `skill` keeps in the key-value store now.
    fn kv_usage(&self, skill: &str) -> Result<KvUsage, StoreError>;

    fn kv_delete(&self, skill: &str, key: &str) -> Result<(), StoreError>;

    /// Every key-value entry, (skill, key, value), by skill and key.
    fn kv_entries(&self) -> Result<Vec<(String, String, Vec<u8>)>, StoreError>;
}
