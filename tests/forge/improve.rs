//! Improving a skill in place: invalid proposals, cooldown, history and rollback, grants.

use super::*;

#[test]
fn every_invalid_proposal_is_refused_with_its_reason_and_the_file_is_byte_identical() {
    let ws = workspace();
    let before = std::fs::read(skill_md(&ws)).expect("read");
    let big = format!("{HEAD}---\n\n{}\n", "x".repeat(70 << 10));
    let cases: Vec<(&str, ScriptTurn)> = vec![
        ("JSON", text("Sure! Here is a better skill.")),
        ("skill_md", text(r#"{"improved": true, "reason": "x"}"#)),
        (
            "name",
            reply(&format!(
                "{}---\nBody.\n",
                HEAD.replace("name: notes-helper", "name: other")
            )),
        ),
        (
            "description",
            reply(
                "---\nname: notes-helper\nallowed-tools: [read_file, write_file]\n---\n\nBody paragraph.\n",
            ),
        ),
        (
            "capabilities",
            reply(&format!(
                "{HEAD}      http: [evil.example.com]\n---\nBody.\n"
            )),
        ),
        (
            "allowed-tools",
            reply(&format!(
                "{}---\nBody.\n",
                HEAD.replace(
                    "[read_file, write_file]",
                    "[read_file, write_file, http_fetch]"
                )
            )),
        ),
        (
            "allowed-tools",
            reply(&format!(
                "{}---\nBody.\n",
                HEAD.replace("allowed-tools: [read_file, write_file]\n", "")
            )),
        ),
        (
            "handler",
            reply(&format!("{HEAD}    handler: evil.wasm\n---\nBody.\n")),
        ),
        (
            "limits",
            reply(&format!(
                "{HEAD}    limits: {{ memory_mb: 512 }}\n---\nBody.\n"
            )),
        ),
        ("bytes", reply(&big)),
        (
            "front matter",
            reply("Just a better body, no front matter."),
        ),
        ("front matter", reply("---\nname: [unclosed\n---\nBody.\n")),
    ];
    for (why, turn) in cases {
        let out = improve_once(&ws, turn, 0);
        match &out {
            ImproveOutcome::Rejected { reason } => {
                assert!(
                    reason.contains(why),
                    "case `{why}`: the reason should say so: {reason}"
                )
            }
            other => panic!("case `{why}`: expected a rejection, got {other:?}"),
        }
        assert_eq!(
            std::fs::read(skill_md(&ws)).expect("read"),
            before,
            "case `{why}`: the file must be byte-identical"
        );
    }
    let writer = SkillWriter::new(&ws.paths());
    let events = history::events(&writer.forge_dir(), SKILL);
    assert_eq!(events.len(), 12);
    assert!(events.iter().all(|e| e.kind == EventKind::Rejected));
    assert!(
        history::versions(&writer.forge_dir(), SKILL)
            .expect("versions")
            .is_empty()
    );
    // What a JSON reply cannot carry: bytes that are not UTF-8.
    let old = parse_skill(&before, SKILL).expect("parse");
    assert!(matches!(
        writer::validate(
            b"---\nname: notes-helper\ndescription: \xff\n---\n",
            &Expect::replacing(&old)
        ),
        Err(Invalid::NotUtf8)
    ));
}

#[test]
fn one_attempt_per_cooldown_and_a_second_is_a_silent_no_op() {
    let ws = workspace();
    let first = improve_once(
        &ws,
        text(r#"{"improved": false, "reason": "already clear"}"#),
        3600,
    );
    assert!(
        matches!(first, ImproveOutcome::Declined { .. }),
        "{first:?}"
    );
    let before = std::fs::read(skill_md(&ws)).expect("read");
    // The script has a valid proposal; inside the window it is never asked.
    let cat = catalog(&ws);
    let provider =
        ScriptedProvider::from_turns("test", vec![reply(&format!("{HEAD}---\nBetter.\n"))]);
    let writer = SkillWriter::new(&ws.paths());
    let (second, log) = captured(|| {
        harness::runtime()
            .block_on(skillhost::forge::improve::improve(
                &writer,
                cat.get(SKILL).expect("skill"),
                &[],
                &provider,
                &improve_cfg(3600),
            ))
            .expect("improve")
    });
    assert_eq!(second, ImproveOutcome::Cooldown);
    assert!(provider.requests().is_empty(), "the model is not asked");
    assert!(log.trim().is_empty(), "silent: {log}");
    assert_eq!(std::fs::read(skill_md(&ws)).expect("read"), before);
    assert_eq!(history::events(&writer.forge_dir(), SKILL).len(), 1);
}

#[test]
fn an_improvement_keeps_history_and_rollback_restores_the_exact_bytes() {
    let ws = workspace();
    let original = std::fs::read(skill_md(&ws)).expect("read");
    let out = improve_once(
        &ws,
        reply(&format!("{HEAD}---\n\nBetter instructions.\n")),
        0,
    );
    assert!(
        matches!(
            out,
            ImproveOutcome::Improved {
                saved_version: 1,
                ..
            }
        ),
        "{out:?}"
    );
    let improved = std::fs::read(skill_md(&ws)).expect("read");
    let parsed = parse_skill(&improved, SKILL).expect("parses");
    assert_eq!(parsed.description, "Helps with note files, better.");
    let trail = &parsed.meta.skillhost.history;
    assert_eq!(trail.len(), 1, "{trail:?}");
    assert_eq!(trail[0]["reason"], "clearer");
    assert_eq!(
        trail[0]["previous"],
        skillhost::skill::content_version(&original)
    );
    assert!(
        trail[0]["updated_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );

    // Through the CLI: history lists the saved version; rollback restores it.
    let h = ws.run_cli(&["skills", "history", SKILL]);
    assert_eq!(h.code, 0, "{}", h.stderr);
    assert!(h.stdout.contains("saved versions"), "{}", h.stdout);
    assert!(h.stdout.contains("improved"), "{}", h.stdout);
    let r = ws.run_cli(&["skills", "rollback", SKILL]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("restored version 1"), "{}", r.stdout);
    assert_eq!(std::fs::read(skill_md(&ws)).expect("read"), original);
    let writer = SkillWriter::new(&ws.paths());
    let versions = history::versions(&writer.forge_dir(), SKILL).expect("versions");
    assert_eq!(versions.len(), 2, "the rolled-back content is kept too");
    // Rolling back the rollback gives the improvement again.
    let r = ws.run_cli(&["skills", "rollback", SKILL, "2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::read(skill_md(&ws)).expect("read"), improved);
    let r = ws.run_cli(&["skills", "rollback", SKILL, "9"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("no saved version 9"), "{}", r.stderr);
}

#[test]
fn an_improved_skill_with_a_grant_is_told_its_grant_no_longer_applies() {
    let ws = workspace();
    let g = ws.run_cli(&["skills", "grant", SKILL]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    std::fs::write(
        ws.workspace.join("improve.json"),
        serde_json::to_string(&vec![reply(&format!("{HEAD}---\n\nBetter.\n"))]).expect("json"),
    )
    .expect("write");
    let r = ws.run_cli(&[
        "skills",
        "improve",
        SKILL,
        "--model",
        "scripted:improve.json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("improved `notes-helper`"), "{}", r.stdout);
    assert!(
        r.stdout.contains("new fingerprint") && r.stdout.contains("no longer applies"),
        "{}",
        r.stdout
    );
}

#[test]
fn bundled_and_path_skills_are_never_modified() {
    let ws = workspace();
    ws.add_skill("from-path", "", None);
    let mut paths = ws.paths();
    let bundled = skillhost::bundled::materialize(&ws.home).expect("bundled");
    paths.bundled = Some(bundled.clone());
    let cat = Catalog::load(&paths.roots(), &LoadOptions::default());
    let writer = SkillWriter::new(&paths);
    let bundled_skill = cat
        .skills()
        .iter()
        .find(|s| s.source == Source::Bundled)
        .expect("a bundled skill");
    let path_skill = cat.get("from-path").expect("path skill");
    let snapshot = ws_files(&bundled);
    for skill in [bundled_skill, path_skill] {
        let provider = ScriptedProvider::from_turns("t", vec![reply(&simple(&skill.name))]);
        let e = harness::runtime()
            .block_on(skillhost::forge::improve::improve(
                &writer,
                skill,
                &[],
                &provider,
                &improve_cfg(0),
            ))
            .expect_err("not editable");
        assert!(matches!(e, ForgeError::NotEditable { .. }), "{e}");
        assert!(provider.requests().is_empty());
        let e = history::rollback(&writer, skill, None).expect_err("not editable");
        assert!(matches!(e, ForgeError::NotEditable { .. }), "{e}");
        // Even asked directly, the writer refuses a file outside its roots.
        let old = parse_skill(&std::fs::read(&skill.path).expect("read"), &skill.name).expect("p");
        let lock = writer.lock().expect("lock");
        let current = std::fs::read(&skill.path).expect("read");
        let e = writer
            .replace(
                &lock,
                &skill.path,
                &current,
                &simple(&skill.name),
                &Expect::replacing(&old),
            )
            .expect_err("outside");
        assert!(
            matches!(e, ForgeError::OutsideRoot { .. } | ForgeError::BadSlug(_)),
            "{e}"
        );
    }
    assert_eq!(ws_files(&bundled), snapshot);
}

fn ws_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(b) = std::fs::read(&p) {
                out.push((p, b));
            }
        }
    }
    out.sort();
    out
}
