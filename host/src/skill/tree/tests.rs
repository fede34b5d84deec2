use std::fs;
use std::path::Path;

use super::*;
use crate::skill::{SkillMeta, Source};

fn skill_in(dir: &Path, read: &[&str], write: &[&str]) -> Skill {
    let mut meta = SkillMeta::default();
    meta.skillhost.handler = Some("handler.wasm".into());
    let files = &mut meta.skillhost.capabilities.files;
    files.read = read.iter().map(|s| (*s).to_owned()).collect();
    files.write = write.iter().map(|s| (*s).to_owned()).collect();
    Skill {
        name: "s".into(),
        description: "d".into(),
        body: String::new(),
        dir: dir.to_path_buf(),
        path: dir.join("SKILL.md"),
        version: String::new(),
        source: Source::Installed,
        warnings: Vec::new(),
        meta,
    }
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

fn digest(s: &Skill) -> String {
    s.tree_digest().expect("digest").digest().to_owned()
}

/// A folder with every kind of file a skill ships.
fn folder() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (rel, text) in [
        ("SKILL.md", "---\nname: s\n---\n"),
        ("handler.wasm", "wasm"),
        ("references/answer.txt", "42"),
        ("scripts/run.sh", "echo"),
        ("templates/t.md", "t"),
        ("assets/logo.svg", "<svg/>"),
        ("tests/cases.jsonl", "{}"),
        (".git/HEAD", "ref"),
        ("target/cache.bin", "build"),
    ] {
        write(tmp.path(), rel, text);
    }
    tmp
}

#[test]
fn every_file_a_reader_can_reach_is_pinned() {
    let tmp = folder();
    let s = skill_in(tmp.path(), &[], &[]);
    let before = digest(&s);
    assert_eq!(digest(&s), before, "the same folder, the same digest");
    for rel in [
        "references/answer.txt",
        "scripts/run.sh",
        "templates/t.md",
        "assets/logo.svg",
        "tests/cases.jsonl",
        "handler.wasm",
        "SKILL.md",
    ] {
        let old = fs::read(tmp.path().join(rel)).expect("read");
        write(tmp.path(), rel, "changed");
        assert_ne!(digest(&s), before, "{rel} is not pinned");
        fs::write(tmp.path().join(rel), old).expect("restore");
        assert_eq!(digest(&s), before);
    }
    // A new file, a new empty folder, a rename: all change it.
    write(tmp.path(), "references/more.txt", "x");
    assert_ne!(digest(&s), before);
    fs::remove_file(tmp.path().join("references/more.txt")).expect("rm");
    fs::create_dir(tmp.path().join("empty")).expect("mkdir");
    assert_ne!(digest(&s), before);
    fs::remove_dir(tmp.path().join("empty")).expect("rmdir");
    fs::rename(
        tmp.path().join("templates/t.md"),
        tmp.path().join("templates/u.md"),
    )
    .expect("rename");
    assert_ne!(digest(&s), before);
}

#[test]
fn what_no_reader_reaches_is_not_pinned_until_a_declared_folder_reaches_it() {
    let tmp = folder();
    let s = skill_in(tmp.path(), &[], &[]);
    let before = digest(&s);
    // Build output and dot-folders: no model tool serves them, and the
    // sandbox mounts only what the skill declares.
    write(tmp.path(), "target/cache.bin", "rebuilt");
    write(tmp.path(), ".git/HEAD", "moved");
    write(tmp.path(), ".editor.swp", "x");
    assert_eq!(digest(&s), before);
    // Declared, it is mounted: pinned, under a symlinked name too.
    let declared = skill_in(tmp.path(), &["target"], &[]);
    let d = digest(&declared);
    write(tmp.path(), "target/cache.bin", "planted");
    assert_ne!(digest(&declared), d);
    std::os::unix::fs::symlink(".git", tmp.path().join("data")).expect("symlink");
    let via_link = skill_in(tmp.path(), &["data"], &[]);
    let d = digest(&via_link);
    write(tmp.path(), ".git/HEAD", "planted");
    assert_ne!(digest(&via_link), d, "the folder a link leads to is pinned");
}

#[test]
fn a_symlink_is_pinned_as_a_link_and_never_followed_out() {
    let tmp = folder();
    let outside = tempfile::tempdir().expect("tempdir");
    write(outside.path(), "secret", "one");
    std::os::unix::fs::symlink(
        outside.path().join("secret"),
        tmp.path().join("references/link"),
    )
    .expect("symlink");
    let s = skill_in(tmp.path(), &[], &[]);
    let before = digest(&s);
    write(outside.path(), "secret", "two");
    assert_eq!(digest(&s), before, "what a link leads out to is not read");
    fs::remove_file(tmp.path().join("references/link")).expect("rm");
    std::os::unix::fs::symlink("answer.txt", tmp.path().join("references/link")).expect("symlink");
    assert_ne!(digest(&s), before, "a link is pinned by where it leads");
}

#[test]
fn declared_write_folders_are_state_and_the_gate_report_is_the_hosts() {
    let tmp = folder();
    let s = skill_in(tmp.path(), &["references"], &["out"]);
    assert_eq!(Reach::of(&s).state(), [Path::new("out")]);
    let before = digest(&s);
    write(tmp.path(), "out/state.json", "{}");
    write(tmp.path(), HOST_REPORT_FILE, "{}");
    assert_eq!(digest(&s), before);
    // A write folder that holds the SKILL.md or the handler is not state.
    let root = skill_in(tmp.path(), &[], &["."]);
    assert!(Reach::of(&root).state().is_empty());
    let d = digest(&root);
    write(tmp.path(), HOST_REPORT_FILE, "{\"planted\": 1}");
    assert_ne!(digest(&root), d, "a mounted root reaches the report file");
}

#[test]
fn a_scan_confirms_an_unchanged_tree_and_a_digest_reads_only_what_changed() {
    let tmp = folder();
    let s = skill_in(tmp.path(), &[], &[]);
    let reach = Reach::of(&s);
    let first = s
        .digest_tree(s.scan_tree(&reach).expect("scan"), None)
        .expect("digest");
    // Trusted once read more than a tick after the last change.
    std::thread::sleep(std::time::Duration::from_millis(120));
    let read = s
        .digest_tree(s.scan_tree(&reach).expect("scan"), None)
        .expect("digest");
    assert_eq!(read.digest(), first.digest());
    assert!(s.tree_unchanged(&read));
    write(tmp.path(), "references/answer.txt", "43");
    assert!(!s.tree_unchanged(&read), "an edited file");
    let again = s
        .digest_tree(s.scan_tree(&reach).expect("scan"), Some(&read))
        .expect("digest");
    assert_eq!(again.digest(), digest(&s));
    assert_ne!(again.digest(), first.digest());
    // A file added to a pinned folder, or to the top, is seen without
    // listing: the folder it is in changed.
    std::thread::sleep(std::time::Duration::from_millis(120));
    let settled = s
        .digest_tree(s.scan_tree(&reach).expect("scan"), None)
        .expect("digest");
    assert!(s.tree_unchanged(&settled));
    for added in ["references/new.md", "new.md"] {
        write(tmp.path(), added, "x");
        assert!(!s.tree_unchanged(&settled), "{added}");
        fs::remove_file(tmp.path().join(added)).expect("rm");
    }
}

#[test]
fn a_folder_over_the_bounds_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "SKILL.md", "x");
    let many = tmp.path().join("data");
    fs::create_dir_all(&many).expect("mkdir");
    for i in 0..=MAX_TREE_ENTRIES {
        fs::write(many.join(i.to_string()), "").expect("write");
    }
    let s = skill_in(tmp.path(), &[], &[]);
    let e = s.tree_digest().expect_err("too many");
    assert!(matches!(e, TreeError::TooMany { .. }), "{e}");
    assert!(e.to_string().contains("too many to pin"), "{e}");
}
