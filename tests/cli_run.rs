//! End-to-end tests of `skillhost run`, `skills grant|revoke` and
//! `handler inspect` through the real binary, on the bundled skills and on
//! test skills, success and failure paths.

use crate::harness;

use harness::{Workspace, guest};

fn run_fails(ws: &Workspace, args: &[&str], class: &str) -> String {
    let r = ws.run_cli(args);
    assert_eq!(
        r.code, 1,
        "skillhost {args:?} should fail:\n{}\n{}",
        r.stdout, r.stderr
    );
    assert!(
        r.stderr.contains(class),
        "stderr should name {class}: {}",
        r.stderr
    );
    r.stderr
}

#[test]
fn email_writer_success_and_each_classified_failure() {
    let ws = Workspace::new();
    let out = ws.run_ok(&[
        "run",
        "Write an email to Dana about the budget review",
        "-c",
        "recipient=Dana",
        "-c",
        "sender=Sam",
    ]);
    assert!(out.starts_with("Subject: The budget review"), "{out}");
    assert!(
        out.contains("Hello Dana,") && out.trim_end().ends_with("Sam"),
        "{out}"
    );

    let err = run_fails(
        &ws,
        &["run", "Email the team about the call at 3pm"],
        "TimezoneError",
    );
    assert!(
        err.contains("`timezone`"),
        "the failure names the field that fixes it: {err}"
    );
    let out = ws.run_ok(&[
        "run",
        "Email the team about the call at 3pm",
        "-c",
        "timezone=UTC",
    ]);
    assert!(out.contains("3pm (UTC)"), "{out}");

    run_fails(
        &ws,
        &["run", "Email customers about our free upgrade"],
        "SpamTriggerError",
    );
    let r = ws.run_cli(&[
        "run",
        "Email customers about our free upgrade",
        "-c",
        "rephrase_spam=true",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let body = v["output"]["body"].as_str().expect("body");
    assert!(
        body.contains("complimentary") && !body.to_lowercase().contains("free"),
        "{body}"
    );
    assert_eq!(v["output"]["flags"], serde_json::json!(["rephrased"]));

    run_fails(
        &ws,
        &["run", "Email Joe the quarterly report"],
        "AttachmentError",
    );
    let out = ws.run_ok(&[
        "run",
        "Email Joe the quarterly report",
        "-c",
        "attachments=q3.pdf,notes.txt",
    ]);
    assert!(
        out.contains("Please find attached: q3.pdf, notes.txt."),
        "{out}"
    );
}

#[test]
fn json_outcome_has_output_skill_tier_timings_and_failure() {
    let ws = Workspace::new();
    let r = ws.run_cli(&["run", "Write an email about lunch at noon", "--json"]);
    assert_eq!(r.code, 1);
    let v = r.json();
    assert_eq!(v["skill"], "email-writer");
    assert_eq!(v["tier"], "handler");
    assert_eq!(v["failure"]["class"], "TimezoneError");
    assert!(v["output"].is_null());
    assert!(v["timings"]["total_us"].as_u64().expect("total") > 0);
    assert_eq!(v["grants"], "trusted (bundled skill)");
    assert_eq!(
        v["context"]["timezone"], "",
        "declared defaults are in the context"
    );
}

#[test]
fn text_summarizer_success_and_failure() {
    let ws = Workspace::new();
    let text = "Rust compiles to WebAssembly. Cats sleep a lot. WebAssembly components run Rust safely in a sandbox. \
                The weather was fine. Sandboxed WebAssembly keeps Rust handlers isolated.";
    let out = ws.run_ok(&[
        "run",
        "summarize this",
        "--skill",
        "text-summarizer",
        "-c",
        &format!("text={text}"),
        "-c",
        "sentences=2",
    ]);
    assert!(!out.contains("Cats") && !out.contains("weather"), "{out}");
    assert_eq!(out.matches('.').count(), 2, "{out}");
    let err = run_fails(
        &ws,
        &[
            "run",
            "summarize",
            "--skill",
            "text-summarizer",
            "-c",
            "sentences=0",
        ],
        "InvalidInput",
    );
    assert!(err.contains("between 1 and 20"), "{err}");
    let r = ws.run_cli(&[
        "run",
        "summarize",
        "--skill",
        "text-summarizer",
        "-c",
        "sentences=many",
    ]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("`sentences` must be an integer"),
        "{}",
        r.stderr
    );
}

#[test]
fn data_inspector_success_and_failure() {
    let ws = Workspace::new();
    let out = ws.run_ok(&[
        "run",
        "inspect this csv",
        "-c",
        "data=id,name\n1,Ana\n2,Bo\n",
    ]);
    assert!(out.starts_with("CSV: 2 rows x 2 columns"), "{out}");
    assert!(out.contains("id | integer | 0 | 2 | 1 | 2"), "{out}");
    let err = run_fails(
        &ws,
        &[
            "run",
            "inspect",
            "--skill",
            "data-inspector",
            "-c",
            "data={\"a\": [1, 2",
        ],
        "ParseError",
    );
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn a_skill_without_handler_answers_from_its_template() {
    let ws = Workspace::new();
    ws.add_skill(
        "greeter",
        "metadata:\n  context_fields:\n    who: { type: string, default: world }\n  skillhost:\n    template: \"Hello {{context.who}}: {{task}}\"",
        None,
    );
    let skills = ws.skills.to_string_lossy().into_owned();
    let out = ws.run_ok(&[
        "--skills", &skills, "run", "say hi", "--skill", "greeter", "-c", "who=Ana",
    ]);
    assert_eq!(out.trim(), "Hello Ana: say hi");
    ws.add_skill("plain", "", None);
    let out = ws.run_ok(&["--skills", &skills, "run", "do it", "--skill", "plain"]);
    assert!(
        out.contains("Test skill."),
        "the default template hands back the instructions: {out}"
    );
}

#[test]
fn unknown_skill_and_bad_context_are_clear_errors() {
    let ws = Workspace::new();
    let r = ws.run_cli(&["run", "x", "--skill", "nope"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("no skill named `nope`"), "{}", r.stderr);
    let r = ws.run_cli(&["run", "Write an email", "-c", "oops"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("KEY=VALUE"), "{}", r.stderr);
}

#[test]
fn grant_revoke_and_a_stale_grant_through_the_cli() {
    let ws = Workspace::new();
    let front =
        "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities: { kv: true }";
    let dir = ws.add_skill("counter", front, Some(&guest("hostile-guest")));
    let skills = ws.skills.to_string_lossy().into_owned();
    let args = [
        "--skills",
        skills.as_str(),
        "run",
        "kv",
        "--skill",
        "counter",
    ];

    let r = ws.run_cli(&args);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("Denied") && r.stderr.contains("not granted"),
        "{}",
        r.stderr
    );

    let out = ws.run_ok(&["--skills", &skills, "skills", "grant", "counter"]);
    assert!(out.contains("granted `counter` kv"), "{out}");
    assert!(
        std::fs::read_to_string(ws.workspace.join("skillhost.toml"))
            .expect("config")
            .contains("[grants.counter]")
    );
    assert_eq!(ws.run_ok(&args).trim(), "42");

    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "{}\nchanged\n",
            std::fs::read_to_string(dir.join("SKILL.md")).expect("read")
        ),
    )
    .expect("write");
    let r = ws.run_cli(&args);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("changed since it was granted"),
        "{}",
        r.stderr
    );

    ws.run_ok(&["--skills", &skills, "skills", "grant", "counter"]);
    assert_eq!(ws.run_ok(&args).trim(), "42");
    ws.run_ok(&["--skills", &skills, "skills", "revoke", "counter"]);
    assert_eq!(ws.run_cli(&args).code, 1);
    let r = ws.run_cli(&["--skills", &skills, "skills", "revoke", "counter"]);
    assert!(r.stderr.contains("no grant"), "{}", r.stderr);
}

#[test]
fn handler_inspect_reports_world_fit_and_language() {
    let ws = Workspace::new();
    let echo = guest("echo-guest");
    let r = ws.run_cli(&[
        "handler",
        "inspect",
        echo.to_str().expect("utf8"),
        "--json",
        "--link",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["fits_handler_world"], true);
    assert_eq!(v["language"], "Rust");
    assert!(
        v["exports"]
            .as_array()
            .expect("exports")
            .iter()
            .any(|e| e == "handle (func)")
    );
    assert!(v["imports"].as_array().expect("imports").iter().any(|i| {
        i.as_str()
            .unwrap_or("")
            .starts_with("skillhost:skill/types")
    }));

    let junk = ws.workspace.join("junk.wasm");
    std::fs::write(&junk, b"not wasm at all").expect("write");
    let r = ws.run_cli(&["handler", "inspect", junk.to_str().expect("utf8")]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("not a WebAssembly component"),
        "{}",
        r.stderr
    );
}
