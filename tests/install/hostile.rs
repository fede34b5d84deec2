//! Hostile archives and folders: each refused, nothing written outside; the caps.

use super::*;

/// Each case is refused with an error that names the problem, writes
/// nothing outside the installed root and leaves nothing in it.
fn assert_all_refused(env: &Env, ext: &str, cases: Vec<(&str, Vec<u8>, &str)>) {
    let config = small_caps();
    let before = env.snapshot();
    for (case, bytes, needle) in cases {
        let e = env
            .install_archive(&format!("hostile{ext}"), &bytes, &config)
            .expect_err(case);
        assert!(
            e.to_string().contains(needle),
            "{case}: the error should say {needle:?}: {e}"
        );
        env.assert_no_trace(&before, case);
        assert!(!env.outside.join("escaped.txt").exists(), "{case}");
        assert!(!env.outside.join("pwned.txt").exists(), "{case}");
    }
}

#[test]
fn each_hostile_tarball_is_refused_and_writes_nothing_outside() {
    let env = Env::new();
    let skill = md("hostile", "");
    let skill = skill.as_bytes();
    let outside = env.outside.to_str().expect("utf-8").to_owned();
    let abs = format!("{outside}/escaped.txt");
    let secret = format!("{outside}/secret.txt");
    // From the staging folder (installed/.staging/install-N/), four `..`
    // reach the temporary folder that holds `outside/`.
    let up = "../../../../outside/escaped.txt";
    let far_up = format!("{}{}", "../".repeat(40), &abs[1..]);
    let zeros = vec![0u8; (1 << 20) + 1];
    let many: Vec<String> = (0..60).map(|i| format!("f{i}.txt")).collect();
    let mut many_entries = vec![E::File("SKILL.md", skill)];
    many_entries.extend(many.iter().map(|n| E::File(n, b"x")));
    let parts: Vec<String> = (0..5).map(|i| format!("part{i}.bin")).collect();
    let big = vec![7u8; 1 << 20];
    let mut total_entries = vec![E::File("SKILL.md", skill)];
    total_entries.extend(parts.iter().map(|n| E::File(n, &big)));

    let cases = vec![
        (
            "a `..` path",
            tar_gz(&[E::File("SKILL.md", skill), E::File(up, b"pwned")]),
            "`..`",
        ),
        (
            "a `..` path in a GNU long name",
            tar_gz(&[E::File("SKILL.md", skill), E::File(&far_up, b"pwned")]),
            "`..`",
        ),
        (
            "an absolute path",
            tar_gz(&[E::File("SKILL.md", skill), E::File(&abs, b"pwned")]),
            "absolute path",
        ),
        (
            "a symlink out, then a write through it",
            tar_gz(&[
                E::File("SKILL.md", skill),
                E::Symlink("out", &outside),
                E::File("out/pwned.txt", b"pwned"),
            ]),
            "symbolic link",
        ),
        (
            "a relative symlink out",
            tar_gz(&[
                E::File("SKILL.md", skill),
                E::Symlink("up", "../../../../outside"),
            ]),
            "symbolic link",
        ),
        (
            "a hard link to a file outside",
            tar_gz(&[E::File("SKILL.md", skill), E::HardLink("h", &secret)]),
            "hard link",
        ),
        (
            "a device file",
            tar_gz(&[E::File("SKILL.md", skill), E::CharDevice("null")]),
            "device file",
        ),
        (
            "a named pipe",
            tar_gz(&[E::File("SKILL.md", skill), E::Fifo("pipe")]),
            "named pipe",
        ),
        (
            "the same name twice",
            tar_gz(&[E::File("SKILL.md", skill), E::File("SKILL.md", b"---\n")]),
            "appears twice",
        ),
        (
            "a file over the per-file cap",
            tar_gz(&[E::File("SKILL.md", skill), E::File("big.bin", &zeros)]),
            "max_file_bytes",
        ),
        (
            "files over the total cap",
            tar_gz(&total_entries),
            "max_total_bytes",
        ),
        (
            "more entries than the cap",
            tar_gz(&many_entries),
            "max_entries",
        ),
    ];
    assert_all_refused(&env, ".tar.gz", cases);
}

#[test]
fn each_hostile_zip_is_refused_and_writes_nothing_outside() {
    let env = Env::new();
    let skill = md("hostile", "");
    let skill = skill.as_bytes();
    let outside = env.outside.to_str().expect("utf-8").to_owned();
    let abs = format!("{outside}/escaped.txt");
    let up = "../../../../outside/escaped.txt";
    let many: Vec<String> = (0..60).map(|i| format!("f{i}.txt")).collect();
    let mut many_entries = vec![E::File("SKILL.md", skill)];
    many_entries.extend(many.iter().map(|n| E::File(n, b"x")));
    // Zip bombs: 1 MiB of zeros deflates to about 1 KiB.
    let mib = vec![0u8; 1 << 20];
    let parts: Vec<String> = (0..6).map(|i| format!("part{i}.bin")).collect();
    let mut bomb_entries = vec![E::File("SKILL.md", skill)];
    bomb_entries.extend(parts.iter().map(|n| E::File(n, &mib[..(1 << 20) - 1])));
    let bomb = zip(&bomb_entries);
    assert!(bomb.len() < 64 << 10, "a real bomb: {} bytes", bomb.len());
    let big = vec![0u8; 2 << 20];

    let cases = vec![
        (
            "a `..` path",
            zip(&[E::File("SKILL.md", skill), E::File(up, b"pwned")]),
            "`..`",
        ),
        (
            "a `..` path with backslashes",
            zip(&[
                E::File("SKILL.md", skill),
                E::File("..\\..\\..\\..\\outside\\escaped.txt", b"pwned"),
            ]),
            "backslash",
        ),
        (
            "an absolute path",
            zip(&[E::File("SKILL.md", skill), E::File(&abs, b"pwned")]),
            "absolute path",
        ),
        (
            "a symlink out, then a write through it",
            zip(&[
                E::File("SKILL.md", skill),
                E::Symlink("out", &outside),
                E::File("out/pwned.txt", b"pwned"),
            ]),
            "symbolic link",
        ),
        (
            "a device file",
            zip(&[E::File("SKILL.md", skill), E::CharDevice("null")]),
            "device file",
        ),
        (
            "a named pipe",
            zip(&[E::File("SKILL.md", skill), E::Fifo("pipe")]),
            "named pipe",
        ),
        (
            "a bomb: one file over the per-file cap",
            zip(&[E::File("SKILL.md", skill), E::File("big.bin", &big)]),
            "max_file_bytes",
        ),
        ("a bomb: files over the total cap", bomb, "max_total_bytes"),
        (
            "more entries than the cap",
            zip(&many_entries),
            "max_entries",
        ),
    ];
    assert_all_refused(&env, ".zip", cases);

    // A header that claims 10 bytes for 2 MiB: the bytes read are counted,
    // so the lie gets nothing past the cap (the reader may also catch the
    // mismatch itself).
    let before = env.snapshot();
    let e = env
        .install_archive("liar.zip", &lying_zip(2 << 20, 10), &small_caps())
        .expect_err("a lying header");
    assert!(
        matches!(
            e,
            InstallError::FileTooLarge { .. } | InstallError::Archive(_)
        ),
        "{e}"
    );
    env.assert_no_trace(&before, "a lying zip header");
}

#[test]
fn a_folder_with_a_link_or_a_pipe_is_refused() {
    let env = Env::new();
    let src = env.sources.join("linky");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("linky", "")).expect("write");
    std::os::unix::fs::symlink(env.outside.join("secret.txt"), src.join("secret.txt"))
        .expect("symlink");
    let before = env.snapshot();
    let e = env
        .install(
            InstallSource::Folder(src.clone()),
            &InstallOptions::default(),
            &InstallConfig::default(),
        )
        .expect_err("a symlink");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    env.assert_no_trace(&before, "a folder with a symlink");

    std::fs::remove_file(src.join("secret.txt")).expect("rm");
    let fifo = std::ffi::CString::new(src.join("pipe").to_str().expect("utf-8")).expect("c");
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0, "mkfifo");
    let before = env.snapshot();
    let e = env
        .install(
            InstallSource::Folder(src),
            &InstallOptions::default(),
            &InstallConfig::default(),
        )
        .expect_err("a fifo");
    assert!(e.to_string().contains("named pipe"), "{e}");
    env.assert_no_trace(&before, "a folder with a fifo");
}

#[test]
fn a_folder_over_the_caps_is_refused() {
    let env = Env::new();
    let src = env.sources.join("fat");
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::write(src.join("SKILL.md"), md("fat", "")).expect("write");
    std::fs::write(src.join("big.bin"), vec![1u8; (1 << 20) + 1]).expect("write");
    let before = env.snapshot();
    let e = env
        .install(
            InstallSource::Folder(src.clone()),
            &InstallOptions::default(),
            &small_caps(),
        )
        .expect_err("over max_file_bytes");
    assert!(e.to_string().contains("max_file_bytes"), "{e}");
    env.assert_no_trace(&before, "a file over the cap");

    std::fs::remove_file(src.join("big.bin")).expect("rm");
    for i in 0..60 {
        std::fs::write(src.join(format!("f{i}")), "x").expect("write");
    }
    let e = env
        .install(
            InstallSource::Folder(src),
            &InstallOptions::default(),
            &small_caps(),
        )
        .expect_err("over max_entries");
    assert!(e.to_string().contains("max_entries"), "{e}");
    env.assert_no_trace(&before, "more files than the cap");
}

#[test]
fn the_caps_come_from_the_install_section_of_the_config() {
    let env = Env::new();
    std::fs::write(
        env.ws.workspace.join("skillhost.toml"),
        "[install]\nmax_entries = 3\n",
    )
    .expect("write config");
    let archive = tar_gz(&[
        E::File("SKILL.md", md("four", "").as_bytes()),
        E::File("a", b"a"),
        E::File("b", b"b"),
        E::File("c", b"c"),
    ]);
    let path = env.source_file("four.tar.gz", &archive);
    let out = env
        .ws
        .run_cli(&["skills", "install", path.to_str().expect("utf-8")]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("more than 3 entries") && out.stderr.contains("max_entries"),
        "{}",
        out.stderr
    );
    assert!(!env.installed().join("four").exists());
}
