//! Handlers' key-value data, within quotas.

use super::*;

pub(super) fn kv_is_per_skill_and_survives_reopen(b: &dyn Backend) {
    {
        let s = default_store(b);
        s.kv_set("a", "k", b"1").expect("set");
        s.kv_set("a", "k", b"2").expect("overwrite");
        s.kv_set("b", "k", b"other").expect("set");
    }
    let s = default_store(b);
    assert_eq!(s.kv_get("a", "k").expect("get"), Some(b"2".to_vec()));
    assert_eq!(s.kv_get("b", "k").expect("get"), Some(b"other".to_vec()));
    s.kv_delete("a", "k").expect("delete");
    assert_eq!(s.kv_get("a", "k").expect("get"), None);
    s.kv_delete("a", "missing")
        .expect("deleting a missing key is fine");
}

fn quota_error(e: StoreError) -> (&'static str, u64, u64, u64) {
    let text = e.to_string();
    match e {
        StoreError::KvQuota {
            setting,
            quota,
            would,
            now,
            ..
        } => {
            assert!(text.contains(setting), "{text}");
            (setting, quota, would, now)
        }
        other => panic!("not a quota error: {other}"),
    }
}

pub(super) fn kv_bytes_quota_counts_keys_values_and_replacements(b: &dyn Backend) {
    let s = b.open(KvQuota {
        max_bytes: 100,
        max_keys: 1_000,
    });
    // Keys are 2 bytes, values 18: five entries fill the 100 bytes.
    for i in 0..5 {
        s.kv_set("a", &format!("k{i}"), &[b'x'; 18]).expect("fits");
    }
    assert_eq!(
        s.kv_usage("a").expect("usage"),
        KvUsage {
            keys: 5,
            bytes: 100
        }
    );
    let e = s
        .kv_set("a", "k5", b"")
        .expect_err("refused past the quota");
    assert_eq!(quota_error(e), ("kv_quota_kb", 100, 102, 100));
    // Replacing counts the old value out: the same size fits, one more
    // byte does not, and a smaller value frees room for a new key.
    s.kv_set("a", "k0", &[b'y'; 18])
        .expect("same size replaces");
    let e = s.kv_set("a", "k0", &[b'y'; 19]).expect_err("one byte over");
    assert_eq!(quota_error(e), ("kv_quota_kb", 100, 101, 100));
    s.kv_set("a", "k0", &[b'y'; 8]).expect("shrinks");
    s.kv_set("a", "k5", &[b'z'; 8])
        .expect("fits in the freed room");
    assert_eq!(
        s.kv_usage("a").expect("usage"),
        KvUsage {
            keys: 6,
            bytes: 100
        }
    );
    assert_eq!(s.kv_get("a", "k0").expect("get"), Some(vec![b'y'; 8]));
    assert_eq!(
        s.kv_get("a", "k6").expect("get"),
        None,
        "refused writes leave nothing"
    );
    // Keys count in bytes, not characters; the quota is per skill.
    let e = s.kv_set("a", "é", b"").expect_err("two bytes over");
    assert_eq!(quota_error(e), ("kv_quota_kb", 100, 102, 100));
    s.kv_set("b", "k0", &[b'x'; 98])
        .expect("another skill has its own quota");
    s.kv_delete("a", "k5").expect("delete frees room");
    s.kv_set("a", "k6", &[b'x'; 8])
        .expect("fits after the delete");
}

pub(super) fn kv_key_count_quota_and_a_lowered_quota(b: &dyn Backend) {
    let s = b.open(KvQuota {
        max_bytes: 1 << 20,
        max_keys: 3,
    });
    for k in ["a", "b", "c"] {
        s.kv_set("skill", k, b"1").expect("fits");
    }
    let e = s.kv_set("skill", "d", b"1").expect_err("a fourth key");
    assert_eq!(quota_error(e), ("kv_max_keys", 3, 4, 3));
    s.kv_set("skill", "c", b"replaced")
        .expect("replacing adds no key");
    drop(s);
    // The operator lowers the quota below what is stored: nothing may
    // grow, but the skill can still shrink its data.
    let s = b.open(KvQuota {
        max_bytes: 4,
        max_keys: 1,
    });
    let e = s.kv_set("skill", "a", b"11").expect_err("growing");
    assert_eq!(quota_error(e).0, "kv_quota_kb");
    s.kv_set("skill", "c", b"").expect("shrinking is allowed");
    assert!(s.kv_set("skill", "e", b"").is_err(), "a new key is refused");
}

/// Several hosts (stores) writing new keys of one skill at once: together
/// they store exactly what the quota allows, never more.
pub(super) fn concurrent_kv_writers_cannot_overrun_the_quota(b: &dyn Backend) {
    let quota = KvQuota {
        max_bytes: 1 << 20,
        max_keys: 10,
    };
    let stores: Vec<_> = (0..3).map(|_| b.open(quota)).collect();
    let written: usize = std::thread::scope(|scope| {
        let writers: Vec<_> = stores
            .iter()
            .enumerate()
            .map(|(w, s)| {
                scope.spawn(move || {
                    (0..8)
                        .filter(|i| s.kv_set("shared", &format!("w{w}-{i}"), b"v").is_ok())
                        .count()
                })
            })
            .collect();
        writers.into_iter().map(|h| h.join().expect("writer")).sum()
    });
    assert_eq!(written, 10);
    assert_eq!(stores[0].kv_usage("shared").expect("usage").keys, 10);
}
