//! Hostile skill roots: each attack gives a warning, is not loaded (or is
//! loaded harmlessly), and never stops the good skill next to it.

use crate::support;

use std::path::Path;

use proptest::prelude::*;
use skillhost::skill::{Catalog, LoadOptions, Root, Source, Warning, parse_skill};
use support::{fast_tempdir, write, write_skill};

/// A root with one good skill; `attack` adds the hostile part and may
/// return a guard that cleans up before the temporary folder goes.
/// No test here times the load: each cap that keeps an attack cheap says so
/// in its warning, and the tests assert that warning (wall-clock limits
/// would only make the suite flaky on a busy machine).
fn load_with<G>(attack: impl FnOnce(&Path, &Path) -> G) -> Catalog {
    let tmp = fast_tempdir();
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&root).expect("mkdir root");
    std::fs::create_dir_all(&outside).expect("mkdir outside");
    write_skill(&root, "good", "A good skill.");
    let guard = attack(&root, &outside);
    let catalog = Catalog::load(&[Root::new(root, Source::User)], &LoadOptions::default());
    drop(guard);
    catalog
}

fn assert_good_loaded(catalog: &Catalog) {
    let good = catalog.get("good").expect("the good skill still loads");
    assert_eq!(good.description, "A good skill.");
}

fn warning_for<'a>(catalog: &'a Catalog, path_part: &str, text: &str) -> &'a Warning {
    catalog
        .warnings()
        .iter()
        .find(|w| w.path.to_string_lossy().contains(path_part) && w.message.contains(text))
        .unwrap_or_else(|| {
            panic!(
                "no warning on '{path_part}' containing '{text}': {:?}",
                catalog.warnings()
            )
        })
}

#[test]
fn symlinked_skill_file_outside_the_root_is_refused() {
    let catalog = load_with(|root, outside| {
        write(
            outside,
            "SKILL.md",
            "---\nname: evil\ndescription: read from outside\n---\n",
        );
        std::fs::create_dir_all(root.join("evil")).expect("mkdir");
        std::os::unix::fs::symlink(outside.join("SKILL.md"), root.join("evil/SKILL.md"))
            .expect("symlink");
    });
    assert_good_loaded(&catalog);
    assert!(catalog.get("evil").is_none());
    warning_for(&catalog, "evil/SKILL.md", "outside the skill root");
}

#[test]
fn relative_symlink_climbing_out_is_refused_too() {
    let catalog = load_with(|root, outside| {
        write(
            outside,
            "SKILL.md",
            "---\nname: evil\ndescription: read from outside\n---\n",
        );
        std::fs::create_dir_all(root.join("evil")).expect("mkdir");
        std::os::unix::fs::symlink("../../outside/SKILL.md", root.join("evil/SKILL.md"))
            .expect("symlink");
    });
    assert_good_loaded(&catalog);
    assert!(catalog.get("evil").is_none());
    warning_for(&catalog, "evil/SKILL.md", "outside the skill root");
}

#[test]
fn symlinked_skill_folder_outside_the_root_is_refused() {
    let catalog = load_with(|root, outside| {
        write_skill(outside, "evil", "read from outside");
        std::os::unix::fs::symlink(outside.join("evil"), root.join("evil")).expect("symlink");
    });
    assert_good_loaded(&catalog);
    assert!(catalog.get("evil").is_none());
    warning_for(&catalog, "evil", "outside the skill root");
}

#[test]
fn symlinks_inside_the_root_are_followed() {
    let catalog = load_with(|root, _| {
        write_skill(&root.join("store"), "linked", "kept inside");
        std::os::unix::fs::symlink("store/linked", root.join("linked")).expect("symlink");
    });
    assert_good_loaded(&catalog);
    assert_eq!(
        catalog.get("linked").expect("linked").description,
        "kept inside"
    );
}

#[test]
fn a_50_mb_skill_file_is_skipped_without_reading_it() {
    let catalog = load_with(|root, _| {
        std::fs::create_dir_all(root.join("huge")).expect("mkdir");
        let f = std::fs::File::create(root.join("huge/SKILL.md")).expect("create");
        f.set_len(50 << 20).expect("set_len");
    });
    assert_good_loaded(&catalog);
    assert!(catalog.get("huge").is_none());
    let w = warning_for(&catalog, "huge/SKILL.md", "over the");
    assert!(w.message.contains("52428800 bytes"), "{w}");
}

/// `depth` nested folders, built and removed through directory handles:
/// the full path is far beyond PATH_MAX, and `remove_dir_all` would need
/// one open descriptor per level.
struct DeepTree {
    top: std::path::PathBuf,
    depth: usize,
}

impl DeepTree {
    fn create(top: &Path, depth: usize) -> DeepTree {
        use cap_std::fs::Dir;
        std::fs::create_dir_all(top).expect("mkdir");
        let mut dir = Dir::open_ambient_dir(top, cap_std::ambient_authority()).expect("open");
        for _ in 0..depth {
            dir.create_dir("d").expect("create nested");
            dir = dir.open_dir("d").expect("open nested");
        }
        dir.write(
            "SKILL.md",
            "---\nname: bottom\ndescription: too deep\n---\n",
        )
        .expect("write");
        DeepTree {
            top: top.to_path_buf(),
            depth,
        }
    }
}

impl Drop for DeepTree {
    /// Down to the bottom, then up one parent at a time, removing as it goes.
    fn drop(&mut self) {
        use cap_std::fs::Dir;
        let Ok(mut dir) = Dir::open_ambient_dir(&self.top, cap_std::ambient_authority()) else {
            return;
        };
        for _ in 0..self.depth {
            match dir.open_dir("d") {
                Ok(d) => dir = d,
                Err(_) => return,
            }
        }
        let _ = dir.remove_file("SKILL.md");
        for _ in 0..self.depth {
            let Ok(parent) = dir.open_parent_dir(cap_std::ambient_authority()) else {
                return;
            };
            if parent.remove_dir("d").is_err() {
                return;
            }
            dir = parent;
        }
    }
}

#[test]
fn ten_thousand_nested_folders_stop_at_the_depth_limit() {
    let catalog = load_with(|root, _| DeepTree::create(&root.join("deep"), 10_000));
    assert_good_loaded(&catalog);
    assert!(catalog.get("bottom").is_none());
    warning_for(&catalog, "deep", "levels below the root are not searched");
}

#[test]
fn a_yaml_alias_bomb_is_refused() {
    let catalog = load_with(|root, _| {
        let mut fm = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let levels = ["b", "c", "d", "e", "f", "g", "h", "i"];
        let mut prev = "a";
        for l in levels {
            let refs = vec![format!("*{prev}"); 9].join(",");
            fm.push_str(&format!("{l}: &{l} [{refs}]\n"));
            prev = l;
        }
        write(
            root,
            "bomb/SKILL.md",
            format!("---\nname: bomb\ndescription: laughs\n{fm}---\n"),
        );
    });
    assert_good_loaded(&catalog);
    assert!(catalog.get("bomb").is_none());
    let w = warning_for(&catalog, "bomb/SKILL.md", "skipped");
    assert!(
        w.message.contains("alias") || w.message.contains("repetition"),
        "{w}"
    );
}

#[test]
fn deeply_nested_brackets_are_refused() {
    let catalog = load_with(|root, _| {
        // Just under the 1 MiB cap: libyaml is quadratic in flow depth.
        let deep = "[".repeat(1_000_000);
        write(
            root,
            "nested/SKILL.md",
            format!("---\nname: nested\ndescription: d\nx: {deep}\n---\n"),
        );
        let deep = "[".repeat(200_000);
        write(
            root,
            "nested-small/SKILL.md",
            format!("---\nname: nested-small\ndescription: d\nx: {deep}\n---\n"),
        );
    });
    assert_good_loaded(&catalog);
    assert!(catalog.get("nested").is_none() && catalog.get("nested-small").is_none());
    warning_for(&catalog, "nested/SKILL.md", "at most 262144 are read");
    warning_for(&catalog, "nested-small/SKILL.md", "512 levels deep");
}

#[test]
fn invalid_utf8_loads_with_replacement_and_a_warning() {
    let catalog = load_with(|root, _| {
        write(
            root,
            "latin1/SKILL.md",
            b"---\nname: latin1\ndescription: caf\xe9 \xff\xfe\n---\n".as_slice(),
        );
    });
    assert_good_loaded(&catalog);
    let s = catalog.get("latin1").expect("loaded leniently");
    assert_eq!(s.description, "caf\u{fffd} \u{fffd}\u{fffd}");
    warning_for(&catalog, "latin1/SKILL.md", "not valid UTF-8");
}

#[test]
fn front_matter_that_is_a_list_or_a_scalar_is_skipped() {
    let catalog = load_with(|root, _| {
        write(
            root,
            "list/SKILL.md",
            "---\n- name\n- description\n---\nBody text.\n",
        );
        write(root, "scalar/SKILL.md", "---\n42\n---\nBody text.\n");
    });
    assert_good_loaded(&catalog);
    assert!(catalog.get("list").is_none() && catalog.get("scalar").is_none());
    warning_for(&catalog, "list/SKILL.md", "front matter is a list");
    warning_for(&catalog, "scalar/SKILL.md", "front matter is a number");
}

#[test]
fn unclosed_front_matter_gives_a_warning() {
    let catalog = load_with(|root, _| {
        write(
            root,
            "open/SKILL.md",
            "---\nname: open\ndescription: Never closed.\n",
        );
        write(
            root,
            "rule/SKILL.md",
            "---\n\nJust markdown after a rule.\n",
        );
        write(root, "empty/SKILL.md", "---\n");
    });
    assert_good_loaded(&catalog);
    assert_eq!(
        catalog.get("open").expect("open").description,
        "Never closed."
    );
    assert_eq!(
        catalog.get("rule").expect("rule").description,
        "Just markdown after a rule."
    );
    assert!(catalog.get("empty").is_none());
    warning_for(&catalog, "open/SKILL.md", "never closed");
    warning_for(&catalog, "rule/SKILL.md", "never closed");
    warning_for(&catalog, "empty/SKILL.md", "no description");
}

#[test]
fn a_fifo_named_skill_md_is_not_opened() {
    let catalog = load_with(|root, _| {
        std::fs::create_dir_all(root.join("fifo")).expect("mkdir");
        let status = std::process::Command::new("mkfifo")
            .arg(root.join("fifo/SKILL.md"))
            .status()
            .expect("mkfifo runs");
        assert!(status.success());
    });
    assert_good_loaded(&catalog);
    warning_for(&catalog, "fifo/SKILL.md", "not a regular file");
}

#[test]
fn a_bad_skillhost_block_keeps_the_skill_without_capabilities() {
    let catalog = load_with(|root, _| {
        write(
            root,
            "greedy/SKILL.md",
            "---\nname: greedy\ndescription: asks too much\nmetadata:\n  skillhost:\n    handler: h.wasm\n    capabilities: { http: ['*'], shell: true }\n---\n",
        );
    });
    assert_good_loaded(&catalog);
    let s = catalog.get("greedy").expect("kept");
    assert_eq!(s.meta.skillhost, Default::default());
    warning_for(&catalog, "greedy/SKILL.md", "metadata.skillhost ignored");
}

/// Bytes that look like SKILL.md often enough to reach every parser path.
fn skillish() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"---\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"name: x\n".to_vec()),
        Just(b"description: a: b\n".to_vec()),
        Just(b"description: >\n  folded\n".to_vec()),
        Just(b"metadata: {\"k\": [1, 2,],}\n".to_vec()),
        Just(b"  - item\n".to_vec()),
        Just(b"&a [x, *a]\n".to_vec()),
        Just(b"*a\n".to_vec()),
        Just(b"\t\n".to_vec()),
        Just(b"# heading\n\n".to_vec()),
        Just(b"```\n".to_vec()),
        Just(b"...\n".to_vec()),
        Just(b"!!binary aGk=\n".to_vec()),
        Just(b"[[{{".to_vec()),
        Just(b"]}".to_vec()),
        Just(b"? ".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..24),
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_or_hang(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = parse_skill(&bytes, "folder");
    }

    #[test]
    fn skill_like_bytes_never_panic_or_hang(bytes in skillish()) {
        if let Ok(p) = parse_skill(&bytes, "folder") {
            prop_assert!(!p.description.trim().is_empty());
            prop_assert!(!p.name.is_empty());
        }
    }
}
