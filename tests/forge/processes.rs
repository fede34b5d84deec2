//! Two `skillhost` processes forging at once; `kill -9` in the middle of improvement writes.

use super::*;

#[test]
fn two_processes_forging_at_once_lose_nothing_and_leave_no_partial_file() {
    let ws = workspace();
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[forge.improve]\nenabled = false\n",
    )
    .expect("config");
    write_script(
        &ws,
        "a.json",
        "alpha-copier",
        "Mirrors alpha files between folders.",
        "notes/a.md",
        "out/a.md",
    );
    write_script(
        &ws,
        "b.json",
        "beta-archiver",
        "Archives beta documents for later review.",
        "notes/b.md",
        "out/b.md",
    );
    let spawn = |script: &str, src: &str, dst: &str| {
        ws.cli()
            .args([
                "run",
                "--skill",
                SKILL,
                "--model",
                &format!("scripted:{script}"),
            ])
            .args(["-c", &format!("src={src}"), "-c", &format!("dst={dst}")])
            .arg("copy the note over")
            // Each write pauses halfway, so the two overlap.
            .env("SKILLHOST_TEST_FORGE_PAUSE_MS", "300")
            .env("RUST_LOG", "skillhost=debug")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let a = spawn("a.json", "notes/a.md", "out/a.md");
    let b = spawn("b.json", "notes/b.md", "out/b.md");
    let mut logs = String::new();
    for child in [a, b] {
        let out = harness::CliResult::from(child.wait_with_output().expect("wait"));
        assert_eq!(out.code, 0, "{}", out.stderr);
        logs.push_str(&out.stderr);
    }
    let writer = SkillWriter::new(&ws.paths());
    // The logs say why, should a skill be missing (this failed once, under
    // load, and did not reproduce).
    assert_eq!(
        writer.forged_slugs(),
        vec!["alpha-copier", "beta-archiver"],
        "logs of both processes:\n{logs}"
    );
    for name in ["alpha-copier", "beta-archiver"] {
        let dir = writer.forged_root().join(name);
        let bytes = std::fs::read(dir.join("SKILL.md")).expect("read");
        let parsed = parse_skill(&bytes, name).expect("parses");
        assert_eq!(parsed.name, name);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .expect("ls")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["SKILL.md"], "no temporary file left");
    }
}

#[test]
fn kill_9_in_the_middle_of_improvement_writes_leaves_the_old_or_the_new_file() {
    let kills: usize = std::env::var("SKILLHOST_TEST_FORGE_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let ws = workspace();
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        "[forge.improve]\ncooldown_secs = 0\n",
    )
    .expect("config");
    let dir = skill_md(&ws).parent().expect("dir").to_path_buf();
    let pause_ms = 200u64;
    let (mut killed_mid_write, mut kept_old, mut got_new) = (0, 0, 0);
    for i in 0..kills {
        let old = std::fs::read(skill_md(&ws)).expect("read");
        let script = format!("improve-{i}.json");
        let proposal = format!(
            "---\nname: notes-helper\ndescription: Version {i}.\nallowed-tools: [read_file, write_file]\nmetadata:\n  skillhost:\n    capabilities:\n      files: {{ read: [\"workspace:notes\"], write: [\"workspace:out\"] }}\n---\n\n{}\n",
            format!("Instructions, version {i}. ").repeat(200)
        );
        std::fs::write(
            ws.workspace.join(&script),
            serde_json::to_string(&vec![reply(&proposal)]).expect("json"),
        )
        .expect("script");
        let mut child = ws
            .cli()
            .args([
                "skills",
                "improve",
                SKILL,
                "--model",
                &format!("scripted:{script}"),
            ])
            .env("SKILLHOST_TEST_FORGE_PAUSE_MS", pause_ms.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        // Wait until the temporary file exists (the write has begun), or
        // the process ended.
        let mut saw_temp = false;
        loop {
            if std::fs::read_dir(&dir).expect("ls").flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".SKILL.md.forge-")
            }) {
                saw_temp = true;
                break;
            }
            if child.try_wait().expect("try_wait").is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        if saw_temp {
            // Half the kills land in the pause; the others a little later,
            // around the rename.
            if i % 2 == 1 {
                std::thread::sleep(std::time::Duration::from_millis(
                    pause_ms + (i as u64 * 7) % 40,
                ));
            }
            let _ = child.kill();
            killed_mid_write += 1;
        }
        let _ = child.wait();
        let now = std::fs::read(skill_md(&ws)).expect("the file is still there");
        let parsed = parse_skill(&now, SKILL).expect("it parses");
        assert!(
            now == old || parsed.description == format!("Version {i}."),
            "iteration {i}: neither the old nor the new file:\n{}",
            String::from_utf8_lossy(&now)
        );
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        if saw_temp {
            if now == old {
                kept_old += 1;
            } else {
                got_new += 1;
            }
        }
    }
    // For the record (`--nocapture`): where the kills landed.
    eprintln!(
        "{killed_mid_write} of {kills} killed mid-write: {kept_old} left the old file, {got_new} the new one"
    );
    assert!(
        killed_mid_write * 2 >= kills,
        "only {killed_mid_write} of {kills} processes were killed mid-write"
    );
}
