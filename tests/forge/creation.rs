//! Creating skills: slugs and paths, symlinks, near duplicates, eviction, the forge config.

use super::*;

#[test]
fn slugs_and_paths_are_checked_before_anything_is_written() {
    let ws = workspace();
    let writer = SkillWriter::new(&ws.paths());
    let lock = writer.lock().expect("lock");
    let long = "a".repeat(65);
    for bad in [
        "../x", "/etc/x", "a/b", "", &long, "héllo", "Upper", "x y", ".", "..",
    ] {
        let c = Capabilities::default();
        let e = Expect {
            name: bad,
            capabilities: &c,
            allowed_tools: None,
            handler: None,
            limits: LimitSpec::default(),
            bounded: true,
        };
        let err = writer.create(&lock, bad, &simple(bad), &e).expect_err(bad);
        assert!(matches!(err, ForgeError::BadSlug(_)), "{bad}: {err}");
    }
    assert!(
        !writer.forged_root().exists(),
        "a refused slug touches nothing, not even the forged root"
    );
    let ok = "a".repeat(64);
    let c = Capabilities::default();
    let e = Expect {
        name: &ok,
        capabilities: &c,
        allowed_tools: None,
        handler: None,
        limits: LimitSpec::default(),
        bounded: true,
    };
    writer
        .create(&lock, &ok, &simple(&ok), &e)
        .expect("64 characters are fine");
    let err = writer
        .create(&lock, &ok, &simple(&ok), &e)
        .expect_err("exists");
    assert!(matches!(err, ForgeError::Exists(_)), "{err}");
}

#[test]
fn a_symlinked_forged_root_or_skill_folder_is_refused_and_nothing_written() {
    let ws = workspace();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let paths = ws.paths();
    let root = paths.forged_root();
    std::os::unix::fs::symlink(elsewhere.path(), &root).expect("symlink the forged root");
    let writer = SkillWriter::new(&paths);
    let lock = writer.lock().expect("lock");
    let c = Capabilities::default();
    let e = Expect {
        name: "evil",
        capabilities: &c,
        allowed_tools: None,
        handler: None,
        limits: LimitSpec::default(),
        bounded: true,
    };
    let err = writer
        .create(&lock, "evil", &simple("evil"), &e)
        .expect_err("link");
    assert!(
        matches!(err, ForgeError::Link(_) | ForgeError::OutsideRoot { .. }),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(elsewhere.path()).expect("ls").count(), 0);

    // A skill folder that is a link out of a real forged root.
    std::fs::remove_file(&root).expect("unlink");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::os::unix::fs::symlink(elsewhere.path(), root.join("evil")).expect("symlink");
    let err = writer
        .create(&lock, "evil", &simple("evil"), &e)
        .expect_err("link");
    assert!(matches!(err, ForgeError::Link(_)), "{err}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).expect("ls").count(), 0);

    // Replacing a file outside every editable root.
    let outside = elsewhere.path().join("SKILL.md");
    std::fs::write(&outside, simple("evil")).expect("write");
    let old = parse_skill(simple("evil").as_bytes(), "evil").expect("parse");
    let err = writer
        .replace(
            &lock,
            &outside,
            simple("evil").as_bytes(),
            &simple("evil").replace("A test", "An evil"),
            &Expect::replacing(&old),
        )
        .expect_err("outside");
    assert!(matches!(err, ForgeError::OutsideRoot { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(&outside).expect("read"),
        simple("evil")
    );
}

#[test]
fn near_duplicates_are_skipped_with_a_note() {
    let ws = workspace();
    let writer = SkillWriter::new(&ws.paths());
    let cat = catalog(&ws);
    let config = CreateConfig::default();
    let never = |_: &str| None;
    let around = Neighbours {
        catalog: &cat,
        last_used: &never,
    };
    let tools = ["read_file", "write_file", "read_file"];
    let first = create::draft_from_run(
        &run_of(1, "summarize the q3 sales notes", &tools),
        &caps(),
        &config,
    )
    .expect("qualifies");
    let out = create::write(&writer, &first, (&caps(), None), &config, &around).expect("write");
    assert!(matches!(out, CreateOutcome::Written { .. }), "{out:?}");
    let again = create::draft_from_run(
        &run_of(2, "summarize the q4 sales notes", &tools),
        &caps(),
        &config,
    )
    .expect("qualifies");
    let out = create::write(&writer, &again, (&caps(), None), &config, &around).expect("write");
    match out {
        CreateOutcome::NearDuplicate { of, similarity } => {
            assert_eq!(of, first.name);
            assert!(similarity > 0.85, "{similarity}");
        }
        other => panic!("expected a near-duplicate, got {other:?}"),
    }
    assert_eq!(writer.forged_slugs(), vec![first.name.clone()]);
}

#[test]
fn past_max_skills_the_least_recently_used_forged_skill_is_evicted_and_logged() {
    let ws = workspace();
    let writer = SkillWriter::new(&ws.paths());
    let cat = catalog(&ws);
    let config = CreateConfig {
        max_skills: 2,
        ..CreateConfig::default()
    };
    let drafts: Vec<_> = [
        ("alpha beta", vec!["read_file", "read_file", "read_file"]),
        (
            "gamma delta",
            vec!["write_file", "write_file", "write_file"],
        ),
        (
            "epsilon zeta",
            vec!["http_fetch", "http_fetch", "http_fetch"],
        ),
    ]
    .iter()
    .enumerate()
    .map(|(i, (task, tools))| {
        create::draft_from_run(&run_of(i as i64, task, tools), &caps(), &config).expect("qualifies")
    })
    .collect();
    // "alpha-beta" was used most recently, "gamma-delta" long ago.
    let last_used = |name: &str| match name {
        "alpha-beta" => Some(i64::MAX / 2),
        "gamma-delta" => Some(1),
        _ => None,
    };
    let around = Neighbours {
        catalog: &cat,
        last_used: &last_used,
    };
    for d in &drafts[..2] {
        create::write(&writer, d, (&caps(), None), &config, &around).expect("write");
    }
    let (out, log) =
        captured(|| create::write(&writer, &drafts[2], (&caps(), None), &config, &around));
    match out.expect("write") {
        CreateOutcome::Written { name, evicted, .. } => {
            assert_eq!(name, "epsilon-zeta");
            assert_eq!(evicted, vec!["gamma-delta".to_owned()]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(writer.forged_slugs(), vec!["alpha-beta", "epsilon-zeta"]);
    assert!(
        log.contains("WARN") && log.contains("evicted") && log.contains("gamma-delta"),
        "{log}"
    );
    let events = history::events(&writer.forge_dir(), "gamma-delta");
    assert_eq!(events.last().map(|e| e.kind), Some(EventKind::Evicted));
    // The workspace skill is never a candidate.
    assert!(skill_md(&ws).is_file());
}

#[test]
fn a_forge_config_loads_and_a_typo_is_refused() {
    let ws = workspace();
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[forge.create]\nmin_tool_calls = 5\nmax_skills = 7\n[forge.improve]\ncooldown_secs = 60\n",
    )
    .expect("write");
    let c = Config::load(&ws.paths()).expect("load");
    assert_eq!(c.forge.create.min_tool_calls, 5);
    assert_eq!(c.forge.create.max_skills, 7);
    assert_eq!(c.forge.create.similarity, 0.85);
    assert_eq!(c.forge.improve.cooldown_secs, 60);
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[forge.create]\nmin_tool_cals = 5\n",
    )
    .expect("write");
    let e = Config::load(&ws.paths()).expect_err("typo").to_string();
    assert!(e.contains("min_tool_cals"), "{e}");
}
