//! A gate case and a run look the same from inside: the probe guest
//! reports what a handler can observe, through the gate and through a run,
//! and the reports have the same distribution. A handler that tells them
//! apart by its monotonic clock answers a run as it answered the gate, and
//! one that turns bad once its key-value store holds a key is never
//! enabled by itself.

use super::*;

use skillhost::gate_policy::Approve;
use skillhost::skill::Source;

/// What the probe reports, one part a task (see tests/guests/probe).
const PARTS: [&str; 6] = ["clocks", "random", "world", "kv", "llm", "tool"];

/// Gates and runs per part: each a sample of the distribution.
const SAMPLES: usize = 3;

/// The probe's answers when it thinks it is judged.
const GOOD: &str = "Hello! How can I help?";

/// Where every call's monotonic clock starts: 2^50 ns plus less than
/// 2^55 ns (`sandbox::state`), a call lasting well under an hour.
const MONO_FROM: u64 = 1 << 50;
const MONO_BELOW: u64 = (1 << 50) + (1 << 55) + 3_600_000_000_000;

fn probe() -> Vec<u8> {
    std::fs::read(guest("probe-guest")).expect("probe guest")
}

/// The probe as skill `name` of the `--skills` root, declaring a folder
/// to read and the key-value store, all granted; `cases` shipped.
fn probe_skill(ws: &Workspace, name: &str, cases: &str) -> Config {
    let front = "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities: { kv: true, files: { read: [data] } }";
    let dir = write_skill(&ws.skills, name, front, &probe(), Some(cases));
    std::fs::create_dir_all(dir.join("data")).expect("mkdir data");
    let mut config = Config::default();
    ws.grant_declared(&mut config, name);
    // It asks the model and a tool, which it does not declare, to show
    // what both answer: the import is let through, the calls are denied.
    config
        .gate
        .allow_imports
        .insert(name.to_owned(), vec!["skillhost:skill/host".to_owned()]);
    config
}

/// A case per task of `tasks` that takes any answer.
fn any_answer(tasks: &[&str]) -> String {
    tasks
        .iter()
        .map(|t| format!("{{\"task\": \"{t}\", \"output\": \"any\", \"compare\": \"class\"}}\n"))
        .collect()
}

/// `part`'s answers in `SAMPLES` gates and in `SAMPLES` runs.
struct Seen {
    gate: Vec<String>,
    run: Vec<String>,
}

fn observe(ws: &Workspace, config: &Config) -> Vec<(&'static str, Seen)> {
    let mut seen: Vec<(&str, Seen)> = PARTS
        .iter()
        .map(|p| {
            (
                *p,
                Seen {
                    gate: Vec::new(),
                    run: Vec::new(),
                },
            )
        })
        .collect();
    // Gates first: a run becomes a recorded case of the next gate.
    for _ in 0..SAMPLES {
        let report = gate_report(ws, config.clone(), "probe");
        for (part, s) in &mut seen {
            let case = report.cases.iter().find(|c| c.task == *part);
            let case = case.unwrap_or_else(|| panic!("no case {part}: {report:#?}"));
            s.gate.push(case.got.clone());
        }
    }
    let runner = ws.runner(config.clone());
    for _ in 0..SAMPLES {
        for (part, s) in &mut seen {
            let out = harness::run(&runner, "probe", part, serde_json::json!({}));
            assert_eq!(out.tier, skillhost::exec::Tier::Handler, "{out:?}");
            s.run.push(out.output.expect("an answer").body);
        }
    }
    seen
}

/// The `key=value` fields of a probe answer.
fn fields(answer: &str) -> Vec<(String, String)> {
    answer
        .split(' ')
        .filter_map(|f| f.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn field(answer: &str, key: &str) -> String {
    fields(answer)
        .into_iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("no {key} in {answer}"))
        .1
}

fn number(answer: &str, key: &str) -> u64 {
    field(answer, key).parse().expect("a number")
}

fn assert_all_distinct(values: &[String], what: &str) {
    let mut sorted = values.to_vec();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), values.len(), "{what} repeated: {values:?}");
}

/// Clocks: the real wall time, the same resolutions, the monotonic clock
/// in the same range and fresh for every call, gate or run.
fn assert_clocks_alike(s: &Seen, before_s: u64, after_s: u64) {
    let all: Vec<&String> = s.gate.iter().chain(&s.run).collect();
    for a in &all {
        let wall = number(a, "wall_s");
        assert!(
            (before_s..=after_s).contains(&wall),
            "wall clock {wall} outside the real {before_s}..={after_s}: {a}"
        );
        let mono = number(a, "mono_ns");
        assert!(
            (MONO_FROM..MONO_BELOW).contains(&mono),
            "monotonic {mono}: {a}"
        );
    }
    for key in ["wall_res_ns", "mono_res_ns"] {
        let values: Vec<String> = all.iter().map(|a| field(a, key)).collect();
        assert!(values.windows(2).all(|w| w[0] == w[1]), "{key}: {values:?}");
    }
    let monos: Vec<String> = all.iter().map(|a| field(a, "mono_ns")).collect();
    assert_all_distinct(&monos, "a monotonic start");
}

/// Random numbers: every source fresh for every call, gate or run.
fn assert_random_alike(s: &Seen) {
    let all: Vec<&String> = s.gate.iter().chain(&s.run).collect();
    let keys = |a: &str| -> Vec<String> { fields(a).into_iter().map(|(k, _)| k).collect() };
    assert!(all.iter().all(|a| keys(a) == keys(all[0])), "{all:?}");
    for key in ["secure", "insecure", "seed"] {
        let values: Vec<String> = all.iter().map(|a| field(a, key)).collect();
        assert_all_distinct(&values, key);
    }
}

#[test]
fn the_probe_sees_the_same_distribution_in_the_gate_and_in_a_run() {
    let ws = Workspace::new();
    let config = probe_skill(&ws, "probe", &any_answer(&PARTS));
    let now_s = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs()
    };
    let before_s = now_s();
    let seen = observe(&ws, &config);
    let after_s = now_s();
    for (part, s) in &seen {
        match *part {
            "clocks" => assert_clocks_alike(s, before_s, after_s),
            "random" => assert_random_alike(s),
            // Everything else is a constant, the same in both.
            _ => {
                let first = &s.gate[0];
                assert!(
                    s.gate.iter().chain(&s.run).all(|a| a == first),
                    "{part}: gate {:?}, run {:?}",
                    s.gate,
                    s.run
                );
            }
        }
    }
    let constant = |part: &str| &seen.iter().find(|(p, _)| *p == part).expect("part").1.run[0];
    let world = constant("world");
    for want in [
        "env=[]",
        "args=[]",
        "cwd=None",
        "preopens=[\"data\"]",
        "Closed",
    ] {
        assert!(world.contains(want), "{want} in {world}");
    }
    assert_eq!(constant("kv"), "Ok(None)");
    for part in ["llm", "tool"] {
        let answer = constant(part);
        assert!(
            answer.contains("Denied") && answer.contains("not granted"),
            "{answer}"
        );
    }
}

#[test]
fn a_handler_keyed_on_its_monotonic_clock_answers_a_run_as_it_answered_the_gate() {
    let ws = Workspace::new();
    let case = format!("{{\"task\": \"uptime\", \"output\": \"{GOOD}\"}}\n");
    let config = probe_skill(&ws, "probe", &case.repeat(3));
    let report = gate_report(&ws, config.clone(), "probe");
    assert!(report.passed(), "{report:#?}");
    let runner = ws.runner(config);
    for _ in 0..SAMPLES {
        let out = harness::run(&runner, "probe", "uptime", serde_json::json!({}));
        assert_eq!(out.output.expect("an answer").body, GOOD);
    }
}

#[test]
fn a_handler_that_turns_bad_once_its_store_holds_a_key_is_not_enabled_by_itself() {
    let ws = Workspace::new();
    let case = format!("{{\"task\": \"remember\", \"output\": \"{GOOD}\"}}\n");
    let mut config = probe_skill(&ws, "probe", &case.repeat(3));
    // As eager as the policy gets: gated, enabled by itself after one case.
    config.gate.sources = vec![Source::Path];
    config.gate.approve = Some(Approve::Auto);
    config.gate.auto_min_cases = 1;
    let (runner, gated) = gate_skill(&ws, config.clone(), "probe");
    // Every case starts from an empty store, so it passes them all ...
    assert!(gated.report.passed(), "{:#?}", gated.report);
    assert_eq!(gated.report.answers_compared(), 3);
    // ... and is held for the operator, saying why.
    assert_eq!(gated.state, Some(HandlerState::Passed));
    assert!(
        gated
            .report
            .hand_only
            .iter()
            .any(|h| h.contains("key-value store")),
        "{:?}",
        gated.report.hand_only
    );
    let why = config.gate.why_manual(&gated.report);
    assert!(why.contains("key-value store"), "{why}");
    // Not enabled, it does not run: no second call reaches the bad answer.
    for _ in 0..2 {
        let out = harness::run(&runner, "probe", "remember", serde_json::json!({}));
        let failure = out.failure.expect("refused");
        assert_eq!(failure.class.as_str(), "HandlerNotApproved", "{failure:?}");
    }
}
