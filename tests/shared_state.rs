//! Hosts on one PostgreSQL store share their learned rules, grants and
//! forged skills: what one host changes holds on another as soon as the
//! store's announcement reaches it (LISTEN/NOTIFY, milliseconds), while
//! that other host keeps running (an `mcp --http` server, never
//! restarted). Two hosts' learning cycles at once add each rule once.
//!
//! The tests use the server SKILLHOST_TEST_POSTGRES_URL names and say they
//! were skipped without it, except under CI, where that is a failure.

use std::sync::Arc;

use serde_json::Value;
use skillhost::store::{PgStore, RunLog, RunRecord, SharedStore};

use crate::harness::mcp_http::{McpHttpServer, McpSession};
use crate::harness::postgres::{TestDatabase, use_database};
use crate::harness::{Workspace, guest, runtime};

const TASK: &str = "Email Dana about the review at 3pm";

/// The failure class of a skill call's result (None: it succeeded).
fn failure_class(result: &Value) -> Option<String> {
    if result["isError"] != true {
        return None;
    }
    Some(
        result["structuredContent"]["class"]
            .as_str()
            .unwrap_or("?")
            .to_owned(),
    )
}

/// Calls `skill` with `task` on B's session until `holds` says B took in
/// another host's change, and answers that result. The change reaches B
/// with the store's announcement, milliseconds after it was made; the
/// guard is a bound on a hang, not a measure.
fn call_until(
    rt: &tokio::runtime::Runtime,
    session: &McpSession,
    id: &mut u64,
    (skill, task): (&str, &str),
    holds: impl Fn(&Value) -> bool,
) -> Value {
    let guard = std::time::Instant::now();
    loop {
        *id += 1;
        let result = rt.block_on(session.call_skill(*id, skill, task));
        if holds(&result) {
            return result;
        }
        assert!(
            guard.elapsed() < std::time::Duration::from_secs(120),
            "B never took in the change: {result}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Waits until `holds`, as B takes in another host's change; the guard is
/// a bound on a hang, not a measure.
fn wait_until(never: &str, holds: impl Fn() -> bool) {
    let guard = std::time::Instant::now();
    while !holds() {
        assert!(
            guard.elapsed() < std::time::Duration::from_secs(120),
            "{never}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_rule_learned_on_one_host_fires_on_another_without_a_restart() {
    let Some(db) = TestDatabase::new("shared_rule") else {
        return;
    };
    let (a, b) = (Workspace::new(), Workspace::new());
    use_database(&a, &db.url);
    use_database(&b, &db.url);
    let server = McpHttpServer::start(&b, &[]);
    let rt = runtime();
    let session = rt.block_on(McpSession::open(&server.url));

    // No rule yet: B's handler fails on the missing timezone.
    let before = rt.block_on(session.call_skill(1, "email-writer", TASK));
    assert_eq!(
        failure_class(&before).as_deref(),
        Some("TimezoneError"),
        "{before}"
    );

    // A records the same failure and learns from every host's runs.
    for _ in 0..2 {
        let r = a.run_cli(&["run", TASK, "--json"]);
        assert_eq!(
            r.json()["failure"]["class"],
            "TimezoneError",
            "{}",
            r.stdout
        );
    }
    let learned = a.run_ok(&["learn"]);
    assert!(
        learned.contains("+ prevent-timezoneerror-email-writer"),
        "{learned}"
    );
    for ws in [&a, &b] {
        assert!(
            !ws.workspace.join(".skillhost/learning/rules.json").exists(),
            "the rules are in the shared store, not a host's file"
        );
    }

    // B applies it: refused with the fix, not guessed.
    let mut id = 1;
    let after = call_until(&rt, &session, &mut id, ("email-writer", TASK), |r| {
        failure_class(r).as_deref() != Some("TimezoneError")
    });
    assert_eq!(
        failure_class(&after).as_deref(),
        Some("RequiredField"),
        "{after}"
    );
    assert!(text(&after).contains("timezone"), "{after}");

    // B sees the rule by its CLI as well, and disabling it there holds on
    // B's server.
    let listed = b.run_ok(&["rules", "list"]);
    assert!(
        listed.contains("prevent-timezoneerror-email-writer"),
        "{listed}"
    );
    b.run_ok(&["rules", "disable", "prevent-timezoneerror-email-writer"]);
    let disabled = call_until(&rt, &session, &mut id, ("email-writer", TASK), |r| {
        failure_class(r).as_deref() != Some("RequiredField")
    });
    assert_eq!(
        failure_class(&disabled).as_deref(),
        Some("TimezoneError"),
        "{disabled}"
    );
}

#[test]
fn a_skill_and_its_grant_shared_by_one_host_hold_on_another_without_a_restart() {
    let Some(db) = TestDatabase::new("shared_grant") else {
        return;
    };
    let (a, b) = (Workspace::new(), Workspace::new());
    for ws in [&a, &b] {
        // Forged skills are trusted by default; here they need a grant.
        // Their handlers need the gate's approval too, which has tests of
        // its own: not here.
        std::fs::write(
            ws.workspace.join("skillhost.toml"),
            format!(
                "[store]\nurl = \"{}\"\n\n[trust]\nforged = false\n\n[gate]\nsources = []\n",
                db.url
            ),
        )
        .expect("write skillhost.toml");
    }
    let server = McpHttpServer::start(&b, &[]);
    let rt = runtime();
    let session = rt.block_on(McpSession::open(&server.url));
    let tools = |id| {
        let listed = rt.block_on(session.request(id, "tools/list", serde_json::json!({})));
        listed["result"]["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|t| t["name"].as_str())
                    .map(String::from)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    assert!(!tools(1).contains(&"skill_counter".to_owned()));

    // A skill in A's forged root, as the forge writes one, shared by A's
    // next skills command.
    let dir = a.workspace.join(".skillhost/skills/forged/counter");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: counter\ndescription: Counts in its key-value store.\nmetadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities: { kv: true }\n---\nCount.\n",
    )
    .expect("write SKILL.md");
    std::fs::copy(guest("hostile-guest"), dir.join("handler.wasm")).expect("copy handler");
    a.run_ok(&["skills", "list"]);

    // Announced (LISTEN/NOTIFY): B takes the skill in before any of its
    // clients asks. (The wait is a guard, not a measure.)
    let arrived = b
        .workspace
        .join(".skillhost/skills/forged/counter/SKILL.md");
    wait_until("B never took in the skill A shared", || arrived.exists());
    assert!(
        tools(2).contains(&"skill_counter".to_owned()),
        "B lists the skill A forged"
    );
    let denied = rt.block_on(session.call_skill(3, "counter", "kv"));
    assert!(
        text(&denied).contains("not granted"),
        "not granted yet: {denied}"
    );

    let granted = a.run_ok(&["skills", "grant", "counter"]);
    assert!(granted.contains("shared by the hosts"), "{granted}");
    let mut id = 100;
    let counted = call_until(&rt, &session, &mut id, ("counter", "kv"), |r| {
        !text(r).contains("not granted")
    });
    assert_eq!(failure_class(&counted), None, "{counted}");
    assert_eq!(text(&counted).trim(), "42", "{counted}");

    let revoked = a.run_ok(&["skills", "revoke", "counter"]);
    assert!(revoked.contains("shared by the hosts"), "{revoked}");
    let denied = call_until(&rt, &session, &mut id, ("counter", "kv"), |r| {
        failure_class(r).is_some()
    });
    assert!(text(&denied).contains("not granted"), "revoked: {denied}");

    // A removes the skill: B removes it too.
    std::fs::remove_dir_all(&dir).expect("remove");
    a.run_ok(&["skills", "list"]);
    wait_until("B kept the skill A removed", || !arrived.exists());
    assert!(!tools(6).contains(&"skill_counter".to_owned()));
}

/// Two hosts run a learning cycle over the same failures at the same
/// moment: the rule is added once, by one of them, and the other reports
/// it as known.
#[test]
fn two_hosts_learning_at_once_add_each_rule_once() {
    let Some(db) = TestDatabase::new("shared_learning") else {
        return;
    };
    {
        let store = PgStore::open(&db.url).expect("open");
        let runs: Vec<RunRecord> = (0..6)
            .map(|i| {
                let mut r = RunRecord::new("email-writer", false, i);
                r.task = TASK.into();
                r.failure_class = Some("TimezoneError".into());
                r.failure_message = Some("no timezone".into());
                r
            })
            .collect();
        store.record_runs(&runs).expect("record");
    }
    let hosts: Vec<Workspace> = (0..2).map(|_| Workspace::new()).collect();
    let barrier = Arc::new(std::sync::Barrier::new(hosts.len()));
    let added: Vec<usize> = std::thread::scope(|scope| {
        let cycles: Vec<_> = hosts
            .iter()
            .map(|ws| {
                let (barrier, url) = (barrier.clone(), db.url.clone());
                scope.spawn(move || {
                    let store = PgStore::open(&url).expect("open");
                    let paths = ws.paths();
                    let catalog = skillhost::app::catalog(&paths);
                    barrier.wait();
                    let report = runtime()
                        .block_on(skillhost::learn::cycle::learn_from_store(
                            &store,
                            SharedStore::of(&store),
                            &paths,
                            &catalog,
                            &Default::default(),
                            None,
                        ))
                        .expect("cycle");
                    report.rules_added
                })
            })
            .collect();
        cycles
            .into_iter()
            .map(|c| c.join().expect("cycle"))
            .collect()
    });
    // One cycle added the rules, the other found them there.
    assert_eq!(
        added.iter().filter(|n| **n > 0).count(),
        1,
        "one host added: {added:?}"
    );
    let store = PgStore::open(&db.url).expect("open");
    let rules = skillhost::learn::book::RulesAt::of(
        SharedStore::of(&store),
        std::path::Path::new("unused"),
    )
    .load()
    .expect("rules");
    let mut ids: Vec<&str> = rules.rules.iter().map(|r| r.id.as_str()).collect();
    assert!(
        ids.contains(&"prevent-timezoneerror-email-writer"),
        "{ids:?}"
    );
    assert_eq!(ids.len(), added.iter().sum::<usize>(), "{ids:?}");
    ids.dedup();
    assert_eq!(ids.len(), rules.rules.len(), "no rule twice: {ids:?}");
}
