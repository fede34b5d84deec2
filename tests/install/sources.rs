//! Installing from each kind of source (folder, tarball, zip); names; what is not a whole skill.

use super::*;

#[test]
fn a_folder_installs_with_source_installed_and_the_report_the_gate_needs() {
    let env = Env::new();
    let src = env.sources.join("mailer");
    std::fs::create_dir_all(src.join("references")).expect("mkdir");
    std::fs::create_dir_all(src.join(".git")).expect("mkdir .git");
    std::fs::write(src.join(".git/HEAD"), "ref: main").expect("write");
    let front =
        "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities:\n      llm: true\n";
    std::fs::write(src.join("SKILL.md"), md("mailer", front)).expect("write");
    std::fs::write(src.join("handler.wasm"), b"\0asm not really").expect("write");
    std::fs::write(src.join("references/tone.md"), "Be brief.").expect("write");

    let out = env
        .ws
        .run_cli(&["skills", "install", src.to_str().expect("utf-8"), "--json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report = out.json();
    let dir = env.installed().join("mailer");
    assert_eq!(report["name"], "mailer");
    assert_eq!(report["source"], "installed");
    assert_eq!(report["dir"], json!(dir));
    assert_eq!(report["handler"], "handler.wasm");
    assert_eq!(report["origin"]["kind"], "folder");
    assert_eq!(report["declared"]["llm"], true);
    assert_eq!(report["files"], 3, "SKILL.md, handler, reference; not .git");
    // What grants and approvals hold: every file a run can read.
    let catalog = env.catalog();
    let expected = catalog.get("mailer").expect("listed").pin().expect("pin");
    assert_eq!(report["fingerprint"], expected.as_str());
    assert!(dir.join("references/tone.md").is_file());
    assert!(!dir.join(".git").exists());

    let list = env.ws.run_cli(&["skills", "list", "--json"]);
    let skills = list.json();
    let mailer = skills
        .as_array()
        .expect("array")
        .iter()
        .find(|s| s["name"] == "mailer")
        .expect("listed");
    assert_eq!(mailer["source"], "installed");
    assert_eq!(mailer["path"], json!(dir.join("SKILL.md")));
}

#[test]
fn a_tarball_installs_with_its_single_top_folder_stripped() {
    let env = Env::new();
    let archive = tar_gz(&[
        E::Dir("notes-1.0/"),
        E::File("notes-1.0/SKILL.md", md("notes", "").as_bytes()),
        E::Dir("notes-1.0/scripts/"),
        E::File("notes-1.0/scripts/run.sh", b"echo hi\n"),
    ]);
    let path = env.source_file("notes-1.0.tar.gz", &archive);
    let out = env
        .ws
        .run_cli(&["skills", "install", path.to_str().expect("utf-8")]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.starts_with("installed `notes` from "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("granted:     nothing"),
        "{}",
        out.stdout
    );
    let dir = env.installed().join("notes");
    assert_eq!(
        std::fs::read_to_string(dir.join("SKILL.md")).expect("read"),
        md("notes", "")
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("scripts/run.sh")).expect("read"),
        "echo hi\n"
    );
    let catalog = env.catalog();
    let skill = catalog.get("notes").expect("in the catalog");
    assert_eq!(skill.source, Source::Installed);
}

#[test]
fn a_zip_installs_and_its_modes_are_not_restored() {
    let env = Env::new();
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    w.start_file("SKILL.md", opts).expect("start");
    w.write_all(md("zipped", "").as_bytes()).expect("write");
    w.start_file("bin/tool", opts.unix_permissions(0o4755))
        .expect("start");
    w.write_all(b"#!/bin/sh\n").expect("write");
    let bytes = w.finish().expect("zip").into_inner();
    let installed = env
        .install_archive("zipped.zip", &bytes, &InstallConfig::default())
        .expect("installs");
    assert_eq!(installed.name, "zipped");
    assert_eq!(
        installed.origin,
        Origin::Archive {
            path: env.sources.join("zipped.zip")
        }
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(installed.dir.join("bin/tool"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o7111, 0, "no set-id or executable bits: {mode:o}");
}

#[test]
fn a_name_given_with_name_is_written_into_the_skill() {
    let env = Env::new();
    let src = env.sources.join("x");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("Fancy Name", "")).expect("write");
    let refused = env
        .install(
            InstallSource::Folder(src.clone()),
            &InstallOptions::default(),
            &InstallConfig::default(),
        )
        .expect_err("`Fancy Name` is no slug");
    assert!(
        matches!(&refused, InstallError::BadName(n) if n == "Fancy Name"),
        "{refused}"
    );
    assert!(refused.to_string().contains("--name"), "{refused}");
    let options = InstallOptions {
        name: Some("fancy".into()),
        ..Default::default()
    };
    let installed = env
        .install(
            InstallSource::Folder(src),
            &options,
            &InstallConfig::default(),
        )
        .expect("installs as fancy");
    assert_eq!(installed.renamed_from.as_deref(), Some("Fancy Name"));
    let catalog = env.catalog();
    let skill = catalog.get("fancy").expect("listed as fancy");
    assert_eq!(skill.dir, env.installed().join("fancy"));
    assert_eq!(skill.description, "The Fancy Name skill.");
    assert_eq!(
        installed.fingerprint,
        skill.pin().expect("fingerprint"),
        "the report's fingerprint is what grants are pinned to"
    );
}

#[test]
fn bad_names_are_refused_before_any_file_is_touched() {
    let env = Env::new();
    let src = env.sources.join("ok");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("ok", "")).expect("write");
    let before = env.snapshot();
    for bad in ["../evil", "/abs", "Upper", ".hidden", "a b", ""] {
        let options = InstallOptions {
            name: Some(bad.into()),
            ..Default::default()
        };
        let e = env
            .install(
                InstallSource::Folder(src.clone()),
                &options,
                &InstallConfig::default(),
            )
            .expect_err(bad);
        assert!(matches!(e, InstallError::BadName(_)), "{bad}: {e}");
    }
    assert!(!env.installed().exists(), "not even the root was made");
    env.assert_no_trace(&before, "bad names");
}

#[test]
fn what_is_not_a_whole_skill_is_refused() {
    let env = Env::new();
    let config = InstallConfig::default();
    let before = env.snapshot();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "no SKILL.md",
            tar_gz(&[E::File("README.md", b"# hi\n")]),
            "no SKILL.md at the top",
        ),
        (
            "SKILL.md only deeper than the top",
            tar_gz(&[
                E::File("a/b/SKILL.md", md("deep", "").as_bytes()),
                E::File("c.txt", b"c"),
            ]),
            "no SKILL.md at the top",
        ),
        (
            "a second skill inside",
            tar_gz(&[
                E::File("SKILL.md", md("outer", "").as_bytes()),
                E::File("inner/SKILL.md", md("email-writer", "").as_bytes()),
            ]),
            "a second skill inside",
        ),
        (
            "no description",
            tar_gz(&[E::File(
                "SKILL.md",
                b"---\nname: nodesc\n---\n# Only a title\n",
            )]),
            "no description",
        ),
        (
            "a handler that is not there",
            tar_gz(&[E::File(
                "SKILL.md",
                md(
                    "ghost",
                    "metadata:\n  skillhost:\n    handler: ../../../outside/secret.txt\n",
                )
                .as_bytes(),
            )]),
            "not one of its files",
        ),
        (
            "not an archive",
            b"plain text".to_vec(),
            "not a .tar.gz or .zip",
        ),
        (
            "a truncated tarball",
            tar_gz(&[E::File("SKILL.md", md("cut", "").as_bytes())])[..30].to_vec(),
            "not a readable .tar.gz",
        ),
    ];
    for (case, bytes, needle) in cases {
        let e = env
            .install_archive("case.tar.gz", &bytes, &config)
            .expect_err(case);
        assert!(e.to_string().contains(needle), "{case}: {e}");
        env.assert_no_trace(&before, case);
    }
}
