//! Issue 39, findings 6 and 7: an approval and a grant hold every file of
//! the skill a run can read, and the latest verdict of the gate governs.

use super::*;

const CASES: &str = "{\"task\": \"hello\", \"output\": \"hello\"}\n";

/// Installed skill `greeter` (echo handler, a shipped case, a reference),
/// gated and approved by the operator: it runs.
fn approved_greeter(ws: &Workspace) -> PathBuf {
    let dir = write_skill(
        &ws.home.join("installed"),
        "greeter",
        HANDLER,
        &echo(),
        Some(CASES),
    );
    std::fs::create_dir_all(dir.join("references")).expect("mkdir");
    std::fs::write(dir.join("references/answer.txt"), "hello").expect("write");
    assert_eq!(ws.run_cli(&["handler", "gate", "greeter"]).code, 0);
    assert_eq!(ws.run_cli(&["handler", "approve", "greeter"]).code, 0);
    assert_eq!(run_greeter(ws).code, 0);
    dir
}

fn run_greeter(ws: &Workspace) -> harness::CliResult {
    ws.run_cli(&["run", "hello", "--skill", "greeter"])
}

/// The line of a refused run that says why.
fn refusal_line(r: &harness::CliResult) -> String {
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    r.stderr
        .lines()
        .find(|l| l.contains("HandlerNotApproved"))
        .unwrap_or_else(|| panic!("{}", r.stderr))
        .to_owned()
}

#[test]
fn an_edited_reference_of_an_approved_skill_voids_its_approval_until_it_passes_again() {
    let ws = Workspace::new();
    let dir = approved_greeter(&ws);
    // Any file it can read, the same size or not, a new one, a case.
    let edits: [(&str, &str); 3] = [
        ("references/answer.txt", "HELLO"),
        ("references/extra.md", "Answer every greeting in French."),
        (
            "tests/cases.jsonl",
            "{\"task\": \"hi\", \"output\": \"hi\"}\n",
        ),
    ];
    for (rel, text) in edits {
        let old = std::fs::read(dir.join(rel)).ok();
        std::fs::write(dir.join(rel), text).expect("edit");
        let line = refusal_line(&run_greeter(&ws));
        assert!(
            line.contains("the skill changed since approval (a file of its folder")
                && line.contains("run `skillhost handler gate greeter`"),
            "{rel}: {line}"
        );
        let report = ws
            .run_cli(&["handler", "report", "greeter", "--json"])
            .json();
        assert_eq!(report["state"], "quarantined", "{rel}: {report}");
        match old {
            Some(bytes) => std::fs::write(dir.join(rel), bytes).expect("restore"),
            None => std::fs::remove_file(dir.join(rel)).expect("remove"),
        }
        assert_eq!(run_greeter(&ws).code, 0, "{rel}: restored, it runs again");
    }
    // Edited, gated again and approved again: it runs.
    std::fs::write(dir.join("references/answer.txt"), "HELLO").expect("edit");
    assert_eq!(ws.run_cli(&["handler", "approve", "greeter"]).code, 1);
    assert_eq!(ws.run_cli(&["handler", "gate", "greeter"]).code, 0);
    assert_eq!(ws.run_cli(&["handler", "approve", "greeter"]).code, 0);
    let r = run_greeter(&ws);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "hello");
}

#[test]
fn an_edited_reference_voids_a_grant() {
    let ws = Workspace::new();
    let front =
        "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities: { kv: true }";
    let dir = ws.add_skill("counter", front, Some(&guest("hostile-guest")));
    std::fs::create_dir_all(dir.join("references")).expect("mkdir");
    std::fs::write(dir.join("references/notes.md"), "one").expect("write");
    let skills = ws.skills.to_string_lossy().into_owned();
    let args = ["--skills", &skills, "run", "kv", "--skill", "counter"];
    ws.run_ok(&["--skills", &skills, "skills", "grant", "counter"]);
    assert_eq!(ws.run_ok(&args).trim(), "42");

    std::fs::write(dir.join("references/notes.md"), "two").expect("edit");
    let r = ws.run_cli(&args);
    assert_eq!(r.code, 1, "the grant no longer applies: {}", r.stdout);
    assert!(
        r.stderr.contains("changed since it was granted"),
        "{}",
        r.stderr
    );
    ws.run_ok(&["--skills", &skills, "skills", "grant", "counter"]);
    assert_eq!(ws.run_ok(&args).trim(), "42");
}

#[test]
fn a_failing_gate_of_the_approved_handler_disables_it_at_once() {
    let ws = Workspace::new();
    approved_greeter(&ws);
    // The same bytes and folder, judged again under a stricter setting.
    let config = ws.workspace.join("skillhost.toml");
    std::fs::write(&config, "[gate]\nmax_artifact_kb = 1\n").expect("config");
    let g = ws.run_cli(&["handler", "gate", "greeter"]);
    assert_eq!(g.code, 1, "{}{}", g.stdout, g.stderr);
    assert!(
        g.stdout.contains("state: quarantined (last gate failed)"),
        "{}",
        g.stdout
    );
    let line = refusal_line(&run_greeter(&ws));
    assert!(line.contains("the gate rejected it"), "{line}");
    let r = ws.run_cli(&["handler", "report", "greeter"]);
    assert!(
        r.stdout
            .contains("state: quarantined (last gate failed), it does not run"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("state: enabled"), "{}", r.stdout);
    // Passing again is not enough: its approval is gone.
    std::fs::remove_file(&config).expect("rm");
    let g = ws.run_cli(&["handler", "gate", "greeter"]);
    assert!(g.stdout.contains("state: passed"), "{}", g.stdout);
    assert!(refusal_line(&run_greeter(&ws)).contains("waits for `skillhost handler approve"));
}

#[test]
fn install_force_of_a_version_whose_cases_fail_says_it_does_not_run_and_it_does_not() {
    let ws = Workspace::new();
    let src = ws.workspace.join("src");
    let v1 = write_skill(&src.join("v1"), "greeter", HANDLER, &echo(), Some(CASES));
    let out = ws.run_ok(&["skills", "install", v1.to_str().expect("utf8")]);
    assert!(out.contains("gate:        passed"), "{out}");
    assert_eq!(ws.run_cli(&["handler", "approve", "greeter"]).code, 0);
    assert_eq!(run_greeter(&ws).code, 0);

    // The same handler and SKILL.md; its case now fails.
    let failing = "{\"task\": \"hello\", \"output\": \"bye\"}\n";
    let v2 = write_skill(&src.join("v2"), "greeter", HANDLER, &echo(), Some(failing));
    let out = ws.run_ok(&["skills", "install", "--force", v2.to_str().expect("utf8")]);
    assert!(
        out.contains("gate:        rejected") && out.contains("does not run"),
        "{out}"
    );
    let line = refusal_line(&run_greeter(&ws));
    assert!(line.contains("the gate rejected it"), "{line}");
    let r = ws.run_cli(&["handler", "report", "greeter"]);
    assert!(
        r.stdout.contains("state: quarantined (last gate failed)"),
        "{}",
        r.stdout
    );
}
