//! Recording is off the request path and loses no run on a crash: calls
//! are answered while another process holds the database's write lock, and
//! the runs of a server killed before it could write them are stored by the
//! next command that reads runs. What waits for the database is bounded:
//! past `record_queue_mb`, answers wait for the writer.

use serde_json::Value;
use skillhost::store::RunLog;

use crate::harness::mcp_http::{McpHttpServer, McpSession};
use crate::harness::{Workspace, guest, runtime};

const ECHO: &str = "metadata:\n  skillhost:\n    handler: handler.wasm";

/// Takes the write lock of `ws`'s store as another process would: until
/// the connection rolls back, nothing can be written to it.
fn lock_store(ws: &Workspace) -> rusqlite::Connection {
    let blocker = connect(ws);
    blocker
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("take the write lock");
    blocker
}

#[test]
fn runs_queued_when_the_server_is_killed_are_stored_from_its_journal() {
    let ws = Workspace::new();
    ws.add_skill("note", ECHO, Some(&guest("echo-guest")));
    let skills = ws.skills.display().to_string();
    let server = McpHttpServer::start(&ws, &["--skills", &skills]);

    let rt = runtime();
    rt.block_on(async {
        let s = McpSession::open(&server.url).await;
        // The first run opens the store and takes a block of run ids.
        let first = s.call_skill(1, "note", "first").await;
        assert_eq!(first["isError"], Value::Bool(false), "{first}");

        // Another process takes the write lock: nothing can be written.
        let blocker = lock_store(&ws);
        for i in 0..5 {
            let r = s
                .call_skill(10 + i, "note", &format!("while locked {i}"))
                .await;
            assert_eq!(r["isError"], Value::Bool(false), "{r}");
        }
        // Killed with the five runs queued behind the lock.
        drop(server);
        blocker.execute_batch("ROLLBACK").expect("release");
    });

    let listed = ws.run_cli(&["runs", "list", "--json", "--limit", "100"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let runs: Vec<Value> = serde_json::from_str(&listed.stdout).expect("JSON runs");
    let mut tasks: Vec<&str> = runs.iter().filter_map(|r| r["task"].as_str()).collect();
    tasks.sort_unstable();
    assert_eq!(
        tasks,
        [
            "first",
            "while locked 0",
            "while locked 1",
            "while locked 2",
            "while locked 3",
            "while locked 4"
        ]
    );
    let left = journal_files(&ws);
    assert!(left.is_empty(), "replayed journals are removed: {left:?}");

    // Replaying again adds nothing.
    let again = ws.run_cli(&["runs", "list", "--json", "--limit", "100"]);
    let runs_again: Vec<Value> = serde_json::from_str(&again.stdout).expect("JSON runs");
    assert_eq!(runs_again.len(), 6);
}

#[test]
fn answers_wait_once_the_run_queue_is_full_and_every_run_is_stored() {
    use std::sync::mpsc;
    use std::time::Duration;

    let ws = Workspace::new();
    ws.add_skill("note", ECHO, Some(&guest("echo-guest")));
    let mut config = skillhost::config::Config::default();
    config.learning.record_queue_mb = 1;
    config.learning.auto_every = 0;
    let runner = ws.runner(config);
    // The first run opens the store and takes a block of run ids.
    crate::harness::run(&runner, "note", "first", serde_json::json!({}));
    assert!(runner.flush(), "the first run is stored");

    // Another process takes the write lock: the writer cannot store.
    let blocker = lock_store(&ws);
    // Each run is about 0.5 MiB queued (the task, and the echo's answer).
    const RUNS: usize = 12;
    let big = |i: usize| format!("{i} {}", "x".repeat(250 << 10));
    let (answered, answers) = mpsc::channel();
    let caller = {
        let runner = runner.clone();
        std::thread::spawn(move || {
            for i in 0..RUNS {
                let o = crate::harness::run(&runner, "note", &big(i), serde_json::json!({}));
                assert!(o.failure.is_none(), "{:?}", o.failure);
                let _ = answered.send(i);
            }
        })
    };
    // Answers stop once the queue holds its 1 MiB. Five seconds are for a
    // recorder without a bound to answer all twelve (it takes milliseconds);
    // a bounded one passes however long it is given.
    let mut before_unlock = Vec::new();
    while let Ok(i) = answers.recv_timeout(Duration::from_secs(5)) {
        before_unlock.push(i);
    }
    assert!(
        !before_unlock.is_empty() && before_unlock.len() < RUNS,
        "answered while the database was locked: {before_unlock:?}"
    );

    // The database can be written again: every answer comes, every run is
    // stored.
    blocker.execute_batch("ROLLBACK").expect("release");
    caller.join().expect("every run answered");
    let after: Vec<usize> = answers.try_iter().collect();
    assert_eq!(before_unlock.len() + after.len(), RUNS);
    let store = runner.store().expect("every run is stored");
    assert_eq!(store.run_count().expect("count"), RUNS as u64 + 1);
}

/// A run whose block of ids is used up while the writer cannot fetch the
/// next (the database is locked) waits for it without holding its thread:
/// on the same single-threaded runtime, the task that unlocks the database
/// runs meanwhile, and every run is recorded.
#[test]
fn a_run_waits_for_its_id_without_holding_its_thread() {
    use skillhost::exec::{RUN_ID_BLOCK, RunRequest};
    use std::sync::atomic::{AtomicU64, Ordering};

    let ws = Workspace::new();
    ws.add_skill(
        "note",
        "metadata:\n  skillhost:\n    template: \"{{task}}\"",
        None,
    );
    let runner = ws.runner(skillhost::config::Config::default());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let request = |task: String| RunRequest {
        task,
        skill: Some("note".into()),
        context: serde_json::Map::new(),
    };
    // The first run takes the first block of ids.
    let first = rt
        .block_on(runner.run(&request("first".into())))
        .expect("run");
    assert!(first.run_id.is_some(), "{:?}", first.notices);
    assert!(runner.flush());

    let blocker = lock_store(&ws);
    let done = AtomicU64::new(0);
    let runs = RUN_ID_BLOCK + 4;
    let (ids, ()) = rt.block_on(async {
        let run_all = async {
            let mut ids = Vec::new();
            for i in 0..runs {
                let o = runner.run(&request(format!("t{i}"))).await.expect("run");
                ids.push(o.run_id);
                done.fetch_add(1, Ordering::SeqCst);
            }
            ids
        };
        // Once the first block is used up, the runs wait for the writer,
        // which waits for the lock this task holds.
        let unlock = async {
            while done.load(Ordering::SeqCst) < RUN_ID_BLOCK - 1 {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            blocker.execute_batch("ROLLBACK").expect("release");
        };
        futures::join!(run_all, unlock)
    });
    assert_eq!(ids.len() as u64, runs);
    assert!(
        ids.iter().all(Option::is_some),
        "runs went unrecorded: {}",
        ids.iter().filter(|i| i.is_none()).count()
    );
    let store = runner.store().expect("every run is stored");
    assert_eq!(store.run_count().expect("count"), runs + 1);
}

#[test]
fn a_runner_dropped_normally_leaves_every_run_in_the_database_and_no_journal() {
    let ws = Workspace::new();
    ws.add_skill("note", ECHO, Some(&guest("echo-guest")));
    let runner = ws.runner(skillhost::config::Config::default());
    let ids: Vec<i64> = (0..20)
        .map(|i| {
            crate::harness::run(&runner, "note", &format!("task {i}"), serde_json::json!({}))
                .run_id
                .expect("recorded")
        })
        .collect();
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 20, "every run has its own id: {ids:?}");
    drop(runner);

    let store =
        skillhost::store::SqliteStore::open_in(&ws.workspace.join(".skillhost")).expect("store");
    assert_eq!(store.run_count().expect("count"), 20);
    for id in ids {
        assert!(store.get_run(id).expect("query").is_some(), "run {id}");
    }
    let left = journal_files(&ws);
    assert!(left.is_empty(), "{left:?}");

    // The ids a runner took and did not use went back: the next runner
    // continues where this one stopped.
    let next = ws.runner(skillhost::config::Config::default());
    let o = crate::harness::run(&next, "note", "after", serde_json::json!({}));
    assert_eq!(o.run_id, unique.last().map(|id| id + 1));
}

/// A long-lived runner (an MCP server) keeps what it read of a skill's
/// files, and must still see every change: a rewritten handler loses its
/// grant and its new code runs, both while the file's times are fresh and
/// once they are old enough to be trusted.
#[test]
fn a_long_lived_runner_sees_a_changed_handler() {
    let ws = Workspace::new();
    let dir = ws.add_skill("note", ECHO, Some(&guest("echo-guest")));
    let mut config = skillhost::config::Config::default();
    ws.grant_declared(&mut config, "note");
    let runner = ws.runner(config);
    let run = |task: &str| crate::harness::run(&runner, "note", task, serde_json::json!({}));

    let first = run("hi");
    assert_eq!(first.grants.as_deref(), Some("granted"), "{first:?}");
    assert_eq!(first.output.as_ref().map(|o| o.body.as_str()), Some("hi"));
    // Old enough that the runner trusts the file's identity from now on.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let settled = run("hi");
    assert_eq!(settled.grants.as_deref(), Some("granted"));

    // Same path, other bytes: the hostile guest answers "fine" to "ok",
    // where echo would answer "ok".
    std::fs::copy(guest("hostile-guest"), dir.join("handler.wasm")).expect("replace");
    let changed = run("ok");
    assert!(
        changed
            .grants
            .as_deref()
            .is_some_and(|g| g.starts_with("grant is stale")),
        "{changed:?}"
    );
    assert_eq!(
        changed.output.as_ref().map(|o| o.body.as_str()),
        Some("fine"),
        "{changed:?}"
    );
    let again = run("ok");
    assert_eq!(again.grants, changed.grants);
    assert_eq!(again.output, changed.output);
}

/// Every `auto_every` runs a learning cycle runs on the writer, not in the
/// request: the runs that cross the threshold answer without a notice of
/// it, and once the queue is flushed the rule it learned is in rules.json.
#[test]
fn the_automatic_learning_cycle_runs_in_the_background() {
    let ws = Workspace::new();
    // Every answer fails FormatError, a class the shipped patterns know.
    ws.add_skill(
        "plain",
        r#"metadata:
  skillhost:
    validators:
      - class: FormatError
        when:
          - { field: output.body, op: matches, value: "^Subject: ", not: true }
    template: "no subject line: {{task}}""#,
        None,
    );
    let mut config = skillhost::config::Config::default();
    config.learning.auto_every = 2;
    let runner = ws.runner(config);
    for i in 0..2 {
        let o = crate::harness::run(&runner, "plain", &format!("t{i}"), serde_json::json!({}));
        assert_eq!(
            o.failure.as_ref().map(|f| f.class.as_str()),
            Some("FormatError")
        );
        assert!(
            o.notices.iter().all(|n| !n.contains("learning cycle")),
            "{:?}",
            o.notices
        );
    }
    assert!(runner.flush(), "the queue drains");
    let rules = std::fs::read_to_string(
        ws.workspace
            .join(".skillhost")
            .join("learning")
            .join("rules.json"),
    )
    .expect("the cycle wrote rules.json");
    assert!(rules.contains("formaterror-plain"), "{rules}");
}

/// The files in `ws`'s run journal.
fn journal_files(ws: &Workspace) -> Vec<std::path::PathBuf> {
    let journal = ws.workspace.join(".skillhost").join("journal");
    std::fs::read_dir(&journal)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// The tasks of the runs in `ws`'s store, sorted, read by a connection of
/// the test's own (no journal replayed).
fn stored_tasks(ws: &Workspace) -> Vec<String> {
    let store =
        skillhost::store::SqliteStore::open_in(&ws.workspace.join(".skillhost")).expect("store");
    let mut tasks: Vec<String> = store
        .list_runs(1000)
        .expect("runs")
        .into_iter()
        .map(|r| r.task)
        .collect();
    tasks.sort_unstable();
    tasks
}

/// A workspace with the echo skill `note`, and a runner (no learning
/// cycles) whose first run, "first", is stored.
fn note_with_a_stored_run() -> (Workspace, skillhost::exec::Runner) {
    let ws = Workspace::new();
    ws.add_skill("note", ECHO, Some(&guest("echo-guest")));
    let mut config = skillhost::config::Config::default();
    config.learning.auto_every = 0;
    let runner = ws.runner(config);
    crate::harness::run(&runner, "note", "first", serde_json::json!({}));
    assert!(runner.flush(), "the first run is stored");
    (ws, runner)
}

/// A connection to `ws`'s store of the test's own, as another process's.
fn connect(ws: &Workspace) -> rusqlite::Connection {
    let db = ws.workspace.join(".skillhost").join("skillhost.db");
    rusqlite::Connection::open(&db).expect("open the store")
}

/// `ws`'s store runs `sql` (a trigger made or dropped) as another process.
fn alter_store(ws: &Workspace, sql: &str) {
    connect(ws).execute_batch(sql).expect("alter the store");
}

/// A store that cannot be written for a while (here every insert fails
/// at once, as with a database that is down) is tried again for as long
/// as the process lives: once it can be written, the runs made meanwhile
/// are stored by this process, and the journal holds nothing after it.
#[test]
fn runs_made_while_the_store_fails_are_stored_once_it_recovers() {
    let (ws, runner) = note_with_a_stored_run();

    // Every insert fails, and not for its data: a table the trigger needs
    // is missing.
    alter_store(
        &ws,
        "CREATE TRIGGER outage BEFORE INSERT ON runs BEGIN INSERT INTO unavailable VALUES (1); END",
    );
    for i in 0..3 {
        let o = crate::harness::run(
            &runner,
            "note",
            &format!("during {i}"),
            serde_json::json!({}),
        );
        assert!(
            o.failure.is_none(),
            "answered while the store fails: {:?}",
            o.failure
        );
    }
    // Longer than a writer that gave up after its retries (4.3 s) took;
    // one that keeps trying passes however long this is.
    std::thread::sleep(std::time::Duration::from_secs(6));
    assert_eq!(stored_tasks(&ws), ["first"], "nothing is stored meanwhile");

    alter_store(&ws, "DROP TRIGGER outage");
    crate::harness::run(&runner, "note", "after", serde_json::json!({}));
    assert!(
        runner.flush(),
        "every run is stored once the store recovers"
    );
    assert_eq!(
        stored_tasks(&ws),
        ["after", "during 0", "during 1", "during 2", "first"]
    );
    drop(runner);
    let left = journal_files(&ws);
    assert!(left.is_empty(), "the journal holds stored runs: {left:?}");
}

/// A flush (what `gate`, `learn` and `forge` do before they read the
/// store) gives up on a store that keeps failing, rather than wait out its
/// minute; the runs stay queued and are stored once it recovers.
#[test]
fn a_flush_gives_up_on_a_store_that_keeps_failing() {
    let (ws, runner) = note_with_a_stored_run();
    alter_store(
        &ws,
        "CREATE TRIGGER outage BEFORE INSERT ON runs BEGIN INSERT INTO unavailable VALUES (1); END",
    );
    crate::harness::run(&runner, "note", "during", serde_json::json!({}));

    // An ordering, not a time threshold: the outage ends when the flush
    // returns, or after 30 s if it does not, and a flush that waited for
    // it then reports the run stored.
    let (returned, wait) = std::sync::mpsc::channel::<()>();
    let lifter = {
        let ws_dir = ws.workspace.clone();
        std::thread::spawn(move || {
            let lifted_early = wait
                .recv_timeout(std::time::Duration::from_secs(30))
                .is_err();
            rusqlite::Connection::open(ws_dir.join(".skillhost").join("skillhost.db"))
                .and_then(|c| c.execute_batch("DROP TRIGGER outage"))
                .expect("end the outage");
            lifted_early
        })
    };
    let flushed = runner.flush();
    let _ = returned.send(());
    let lifted_early = lifter.join().expect("the lifter");
    assert!(
        !flushed && !lifted_early,
        "the flush returned during the outage, the run not stored"
    );
    assert!(runner.flush(), "stored once the store recovers");
    assert_eq!(stored_tasks(&ws), ["during", "first"]);
}

/// A run the store refuses for its data would be refused at every try: it
/// is set aside in `refused-runs.jsonl`, and the runs around it are
/// stored.
#[test]
fn a_run_the_store_refuses_is_set_aside_and_the_others_are_stored() {
    let (ws, runner) = note_with_a_stored_run();

    alter_store(
        &ws,
        "CREATE TRIGGER refuse BEFORE INSERT ON runs WHEN NEW.task = 'poison'
         BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
    );
    // Made at once, so that they are likely one batch.
    for task in ["before", "poison", "after"] {
        crate::harness::run(&runner, "note", task, serde_json::json!({}));
    }
    assert!(runner.flush(), "the writer is done with every run");
    assert_eq!(stored_tasks(&ws), ["after", "before", "first"]);
    let refused = std::fs::read_to_string(ws.workspace.join(".skillhost/refused-runs.jsonl"))
        .expect("the refused run is kept");
    let kept: Vec<Value> = refused
        .lines()
        .map(|l| serde_json::from_str(l).expect("a run as JSON"))
        .collect();
    assert_eq!(kept.len(), 1, "{refused}");
    assert_eq!(kept[0]["task"], "poison");
}
