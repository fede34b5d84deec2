//! Replacing, uninstalling, a killed install's leftovers, names an install may not take.

use super::*;

#[test]
fn an_installed_skill_is_replaced_only_with_force_and_in_one_step() {
    let env = Env::new();
    let v1 = env.source_file(
        "tool-v1.tar.gz",
        &tar_gz(&[
            E::File("SKILL.md", md("tool", "").as_bytes()),
            E::File("old-only.txt", b"old"),
        ]),
    );
    let v2 = env.source_file(
        "tool-v2.tar.gz",
        &tar_gz(&[E::File("SKILL.md", md("tool", "version: 2\n").as_bytes())]),
    );
    let config = InstallConfig::default();
    let first = env
        .install(
            InstallSource::Archive(v1),
            &InstallOptions::default(),
            &config,
        )
        .expect("first install");
    let e = env
        .install(
            InstallSource::Archive(v2.clone()),
            &InstallOptions::default(),
            &config,
        )
        .expect_err("already installed");
    assert!(e.to_string().contains("--force"), "{e}");
    assert!(env.installed().join("tool/old-only.txt").is_file(), "kept");

    let force = InstallOptions {
        force: true,
        ..Default::default()
    };
    let second = env
        .install(InstallSource::Archive(v2), &force, &config)
        .expect("replaced");
    assert_eq!(second.replaced.as_deref(), Some(first.fingerprint.as_str()));
    assert_ne!(second.fingerprint, first.fingerprint);
    assert!(
        !env.installed().join("tool/old-only.txt").exists(),
        "the old folder went whole"
    );
    let staging: Vec<_> = std::fs::read_dir(env.installed().join(".staging"))
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(staging, ["lock"], "nothing left behind");
}

#[test]
fn uninstall_removes_installed_skills_and_refuses_every_other_kind() {
    let env = Env::new();
    let src = env.sources.join("gone");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("gone", "")).expect("write");
    let out = env
        .ws
        .run_cli(&["skills", "install", src.to_str().expect("utf-8")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    crate::support::write_skill(&env.ws.home.join("skills"), "mine", "A user skill.");

    for (name, kind) in [("email-writer", "bundled"), ("mine", "user")] {
        let out = env.ws.run_cli(&["skills", "uninstall", name]);
        assert_ne!(out.code, 0, "{name}");
        assert!(
            out.stderr.contains(&format!("`{name}` is a {kind} skill"))
                && out.stderr.contains("only installed skills"),
            "{name}: {}",
            out.stderr
        );
    }
    assert!(env.ws.home.join("skills/mine/SKILL.md").is_file());

    let out = env.ws.run_cli(&["skills", "uninstall", "gone"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("uninstalled `gone`"),
        "{}",
        out.stdout
    );
    assert!(!env.installed().join("gone").exists());
    assert!(env.catalog().get("gone").is_none());
    let out = env.ws.run_cli(&["skills", "uninstall", "gone"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("no installed skill named `gone`"),
        "{}",
        out.stderr
    );
}

#[test]
fn what_a_killed_install_left_is_never_in_the_catalog_and_is_cleared_next_time() {
    let env = Env::new();
    // A complete skill, half-way: unpacked in staging, not yet moved.
    let leftover = env.installed().join(".staging/install-99999-0/pkg");
    std::fs::create_dir_all(&leftover).expect("mkdir");
    std::fs::write(leftover.join("SKILL.md"), md("half", "")).expect("write");
    assert!(
        env.catalog().get("half").is_none(),
        "staging is not searched"
    );

    let src = env.sources.join("whole");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("whole", "")).expect("write");
    env.install(
        InstallSource::Folder(src),
        &InstallOptions::default(),
        &InstallConfig::default(),
    )
    .expect("installs");
    assert!(!leftover.exists(), "the next install cleared it");
}

#[test]
fn an_installed_skill_may_not_take_a_user_skills_name() {
    let env = Env::new();
    crate::support::write_skill(&env.ws.home.join("skills"), "twin", "The user's twin.");
    let src = env.sources.join("twin");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("twin", "")).expect("write");
    let before = env.snapshot();
    let e = env
        .install(
            InstallSource::Folder(src),
            &InstallOptions::default(),
            &InstallConfig::default(),
        )
        .expect_err("refused");
    assert!(
        matches!(&e, InstallError::NameTaken { kind: Source::User, path, .. }
            if *path == env.ws.home.join("skills/twin/SKILL.md")),
        "{e}"
    );
    env.assert_no_trace(&before, "a user skill's name");
}
