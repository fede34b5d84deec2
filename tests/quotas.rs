//! What a handler can make the host keep: the key-value store has a quota
//! per skill (bytes and keys, `[limits] kv_quota_kb` and `kv_max_keys`),
//! and a store that could not be opened once is opened on the next use.

use crate::harness;

use harness::{Workspace, guest, run};
use serde_json::json;
use skillhost::config::Config;
use skillhost::exec::{RunOutcome, Runner};

const KV_FRONT: &str = r#"metadata:
  skillhost:
    handler: handler.wasm
    capabilities:
      kv: true"#;

/// The hostile guest as skill `flooder`, granted the key-value store, with
/// the workspace's `skillhost.toml` (if any) as its config.
fn flooder(toml: Option<&str>) -> (Workspace, Runner) {
    let ws = Workspace::new();
    ws.add_skill("flooder", KV_FRONT, Some(&guest("hostile-guest")));
    if let Some(text) = toml {
        std::fs::write(ws.workspace.join("skillhost.toml"), text).expect("write config");
    }
    let mut config = Config::load(&ws.paths()).expect("config loads");
    ws.grant_declared(&mut config, "flooder");
    let runner = ws.runner(config);
    (ws, runner)
}

fn flood(runner: &Runner, context: serde_json::Value) -> RunOutcome {
    run(runner, "flooder", "kv-flood", context)
}

/// The call ended with the quota error naming `setting`; returns its message.
fn refused_by(outcome: &RunOutcome, setting: &str) -> String {
    if let Some(o) = &outcome.output {
        panic!("the flood was not stopped: {}", o.body);
    }
    let f = outcome.failure.as_ref().expect("a failure");
    assert_eq!(f.class, "LimitExceeded", "{f:?}");
    assert!(
        f.message.contains("quota") && f.message.contains(setting),
        "the message should name the quota `{setting}`: {}",
        f.message
    );
    f.message.clone()
}

/// The figure after `prefix` in `text`.
fn number_after(text: &str, prefix: &str) -> u64 {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix:?} in {text}"))
        + prefix.len();
    text[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a number after {prefix:?} in {text}"))
}

#[test]
fn a_kv_flood_stops_at_the_default_byte_quota() {
    let (_ws, runner) = flooder(None);
    let o = flood(&runner, json!({ "size": 60 << 10 }));
    let message = refused_by(&o, "kv_quota_kb");
    assert!(message.contains("1048576"), "names the quota: {message}");
    let usage = runner
        .store()
        .expect("store")
        .kv_usage("flooder")
        .expect("usage");
    assert!(usage.bytes <= 1 << 20, "{usage:?} over the 1 MiB default");
    assert_eq!(
        usage.bytes,
        number_after(&message, "stored "),
        "what the guest got in is what is stored: {message}"
    );
    assert!(
        usage.bytes + (60 << 10) > 1 << 20,
        "refused only when the next value did not fit: {usage:?}"
    );
    // The skill keeps working within what is left.
    let next = run(&runner, "flooder", "kv", json!({}));
    assert_eq!(
        next.output.map(|o| o.body).as_deref(),
        Some("42"),
        "next call: {:?}",
        next.failure
    );
}

#[test]
fn the_key_quota_comes_from_skillhost_toml() {
    let (_ws, runner) = flooder(Some("[limits]\nkv_max_keys = 10\nkv_quota_kb = 64\n"));
    let o = flood(&runner, json!({ "size": 1 }));
    let message = refused_by(&o, "kv_max_keys");
    assert!(message.contains("stored 80 bytes in 10 keys"), "{message}");
    let store = runner.store().expect("store");
    let usage = store.kv_usage("flooder").expect("usage");
    assert_eq!((usage.keys, usage.bytes), (10, 80));
    let o = run(&runner, "flooder", "kv", json!({}));
    let f = o.failure.expect("`counter` would be an eleventh key");
    assert!(f.message.contains("kv_max_keys"), "{f:?}");
    store.kv_delete("flooder", "flood-0").expect("delete");

    // The byte quota from the same file, 64 KiB, with replaced values
    // counted out: flood-0 is new (ten keys), flood-1 and flood-2 replace
    // 8-byte entries, flood-3 would go over.
    let o = flood(&runner, json!({ "size": 20 << 10 }));
    let message = refused_by(&o, "kv_quota_kb");
    assert!(
        message.contains("stored 61461 bytes in 3 keys"),
        "{message}"
    );
    let usage = store.kv_usage("flooder").expect("usage");
    assert_eq!(
        (usage.keys, usage.bytes),
        (10, 3 * (7 + (20 << 10)) + 7 * 8)
    );
    assert!(usage.bytes <= 64 << 10, "{usage:?}");
}

#[test]
fn a_store_that_failed_to_open_is_opened_on_the_next_use() {
    let (ws, runner) = flooder(None);
    // The state folder's path is taken by a file: the store cannot open.
    let state = ws.workspace.join(".skillhost");
    assert!(!state.exists(), "nothing has opened the store yet");
    std::fs::write(&state, "in the way").expect("write");
    let o = run(&runner, "flooder", "kv", json!({}));
    let f = o
        .failure
        .as_ref()
        .expect("kv fails while the store cannot open");
    assert!(f.message.contains("store"), "{f:?}");
    assert!(o.run_id.is_none());
    assert!(
        o.operator_notes
            .iter()
            .any(|n| n.starts_with("run not recorded")),
        "{:?}",
        o.operator_notes
    );
    assert!(
        o.notices.iter().all(|n| !n.contains("not recorded")),
        "an operator's note is not a notice for the caller: {:?}",
        o.notices
    );
    assert!(runner.store().is_err());

    // The cause goes away; the same runner opens the store on its next use.
    std::fs::remove_file(&state).expect("remove");
    let o = run(&runner, "flooder", "kv", json!({}));
    assert_eq!(
        o.output.as_ref().map(|o| o.body.as_str()),
        Some("42"),
        "{:?}",
        o.failure
    );
    assert!(o.run_id.is_some(), "recorded: {:?}", o.notices);
    let store = runner.store().expect("store opens");
    assert_eq!(
        store.kv_get("flooder", "counter").expect("get"),
        Some(b"42".to_vec())
    );
}
