use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::*;

#[test]
fn bwraps_status_says_whether_the_program_ran() {
    let started = "{ \"child-pid\": 42, \"pid-namespace\": 4026532178 }\n{ \"exit-code\": 101 }\n";
    assert_eq!(
        BoxStatus::parse(started),
        BoxStatus {
            child_pid: Some(42),
            exit_code: Some(101)
        }
    );
    // Set-up failed: no exit code (bwrap's message is on stderr).
    let failed = BoxStatus::parse("{ \"child-pid\": 42, \"net-namespace\": 1 }");
    assert_eq!(failed.exit_code, None);
    assert_eq!(BoxStatus::parse(""), BoxStatus::default());
}

fn rust_box(dir: &Path) -> RustBox {
    RustBox {
        sysroot: dir.join("home/.rustup/toolchain"),
        sdk: dir.join("cache/kits/k/sdk"),
        vendor: dir.join("cache/kits/k/vendor"),
        tools: dir.join("cache/kits/k/tools"),
        slot: dir.join("ws/slot"),
        target: dir.join("cache/builds/1-0"),
        kit_target: Some(dir.join("cache/kits/k/target")),
    }
}

/// The pairs of `flag a b` in `args`.
fn pairs<'a>(args: &'a [OsString], flag: &str) -> Vec<(&'a OsStr, &'a OsStr)> {
    args.windows(3)
        .filter(|w| w[0] == flag)
        .map(|w| (w[1].as_os_str(), w[2].as_os_str()))
        .collect()
}

#[test]
fn the_rust_box_binds_the_toolchain_the_kit_the_slot_and_its_target_at_box_paths() {
    let b = rust_box(Path::new("/x"));
    let args = bwrap_args(&b.spec(), Some(7), &[8, 9, 10, 11]);
    assert_shares_nothing(&args);
    assert_binds_at_box_paths(&args);
    assert_makes_its_files_and_names_box_paths_only(&args);
}

/// A new session in new namespaces, no network, no /proc, no
/// capabilities; its status on fd 7.
fn assert_shares_nothing(args: &[OsString]) {
    let has = |s: &str| args.iter().any(|a| a == s);
    for flag in [
        "--die-with-parent",
        "--new-session",
        "--unshare-all",
        "--clearenv",
    ] {
        assert!(has(flag), "{flag}: {args:?}");
    }
    assert!(!has("--share-net"), "no network");
    assert!(!has("--proc"), "no /proc: its mount table names host paths");
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--cap-drop" && w[1] == "ALL")
    );
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--json-status-fd" && w[1] == "7")
    );
}

/// The toolchain and the kit read-only, the slot and the build's target
/// read-write, and the kit's host units read-only over that target.
fn assert_binds_at_box_paths(args: &[OsString]) {
    let ro = pairs(args, "--ro-bind-try");
    let x = |p: &str| OsStr::new(p).to_owned();
    // Besides the system's files (/usr, /etc/ld.so.cache, ...).
    let ro: Vec<(OsString, OsString)> = ro
        .iter()
        .filter(|(_, at)| at.to_string_lossy().starts_with("/box/"))
        .map(|(a, b)| (a.to_os_string(), b.to_os_string()))
        .collect();
    assert_eq!(
        ro,
        [
            (x("/x/home/.rustup/toolchain"), x(BOX_TOOLCHAIN)),
            (x("/x/cache/kits/k/sdk"), x("/box/sdk")),
            (x("/x/cache/kits/k/vendor"), x(BOX_VENDOR)),
            (x("/x/cache/kits/k/tools"), x("/box/tools")),
            (x("/x/cache/kits/k/target"), x(BOX_KIT_TARGET)),
        ]
    );
    let rw: Vec<(&OsStr, &OsStr)> = pairs(args, "--bind");
    assert_eq!(
        rw,
        [
            (OsStr::new("/x/ws/slot"), OsStr::new(BOX_SRC)),
            (OsStr::new("/x/cache/builds/1-0"), OsStr::new(BOX_TARGET)),
        ]
    );
    // The kit's host units, read-only over the build's own target.
    let over: Vec<(&OsStr, &OsStr)> = pairs(args, "--ro-bind")
        .into_iter()
        .filter(|(_, at)| at.to_string_lossy().starts_with(BOX_TARGET))
        .collect();
    assert_eq!(
        over,
        [
            (
                OsStr::new("/x/cache/kits/k/target/release/deps"),
                OsStr::new("/box/target/release/deps")
            ),
            (
                OsStr::new("/x/cache/kits/k/target/release/build"),
                OsStr::new("/box/target/release/build")
            ),
        ]
    );
    let last_rw = args.iter().rposition(|a| a == "--bind").expect("binds");
    let first_over = args
        .iter()
        .rposition(|a| a == "/box/target/release/deps")
        .expect("over");
    assert!(first_over > last_rw, "bound over the target, after it");
}

/// The made files (the user database, cargo's config, rustc's wrapper),
/// and an environment that names box paths only.
fn assert_makes_its_files_and_names_box_paths_only(args: &[OsString]) {
    let data: Vec<&OsStr> = pairs(args, "--ro-bind-data")
        .into_iter()
        .map(|(_, at)| at)
        .collect();
    assert_eq!(
        data,
        ["/etc/passwd", "/etc/group", "/box/cargo/config.toml",].map(OsStr::new)
    );
    let env = pairs(args, "--setenv");
    for (k, v) in &env {
        assert!(
            !v.to_string_lossy().contains("/x"),
            "{k:?} names a host path: {v:?}"
        );
    }
    let var = |k: &str| {
        env.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    };
    assert_eq!(var("CARGO_HOME").as_deref(), Some("/box/cargo"));
    assert_eq!(var("CARGO_TARGET_DIR").as_deref(), Some(BOX_TARGET));
    assert_eq!(var("RUSTC").as_deref(), Some("/box/toolchain/bin/rustc"));
    assert_eq!(var("HOME").as_deref(), Some(BOX_HOME));
}

/// Every file's text under `dir` (not following links), with its path.
fn texts_under(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            texts_under(&p, out);
        } else if kind.is_file() {
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap_or_default()).into_owned();
            out.push((p, text));
        }
    }
}

struct Planted {
    root: PathBuf,
    home: PathBuf,
    cargo_home: PathBuf,
    checkout: PathBuf,
    marker: String,
}

/// A host to hide: a home with a secret, a CARGO_HOME with credentials and
/// a private crate in its registry, a checkout with its manifest, and the
/// box's own folders.
fn plant(root: &Path, b: &RustBox) -> Planted {
    let marker = format!("box-secret-{}", std::process::id());
    let home = root.join("home");
    let cargo_home = home.join(".cargo");
    let checkout = root.join("checkout");
    let private = cargo_home.join("registry/src/index/private-1.0.0/src");
    for dir in [
        &b.sysroot.join("bin"),
        &b.sdk.join("skillhost-guest/src"),
        &b.vendor.join("serde-1.0.0"),
        &b.slot.join("src"),
        &b.target,
        &private,
        &checkout,
    ] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    let write = |p: PathBuf, text: &str| std::fs::write(p, text).expect("write");
    write(home.join("secret.txt"), &marker);
    write(cargo_home.join("credentials.toml"), &marker);
    write(private.join("lib.rs"), &marker);
    write(checkout.join("Cargo.toml"), &marker);
    write(root.join("ws/beside-the-slot.txt"), &marker);
    write(b.slot.join("src/lib.rs"), "fn handle() {}");
    write(b.vendor.join("serde-1.0.0/lib.rs"), "vendored");
    Planted {
        root: root.to_path_buf(),
        home,
        cargo_home,
        checkout,
        marker,
    }
}

/// What the box shows of itself: its environment, every path in it but
/// the system's, and the text of every file of its own (not `/usr`, not
/// the toolchain); then what it could not read or write.
const SURVEY: &str = r#"
    echo "== env"; env
    echo "== paths"; find / -path /usr -prune -o -path /box/toolchain -prune -o -print 2>/dev/null
    echo "== mountinfo"; cat /proc/self/mountinfo /proc/1/mountinfo 2>&1 | head -5
    echo "== texts"
    find /box /etc /tmp -path /box/toolchain -prune -o -type f -print 2>/dev/null | while read -r f; do cat "$f"; echo; done
    echo "== writes"
    for d in /box/src /box/target /box/sdk /box/vendor /box/toolchain /box/cargo /box/target/release/deps /box/kit-target /; do
        (echo x > "$d/w") 2>/dev/null && echo "wrote $d"
    done
    (echo x > /box/target/unit.rlib) 2>/dev/null && echo "wrote through a link to the kit"
    echo "== end"
"#;

/// Issue 39, finding 1: the box held the host's paths (its mount table
/// named CARGO_HOME, the checkout, the slot and the cache) and the
/// operator's registry and workspace manifest. The box as the forge makes
/// it, run for real with a shell in place of cargo: nothing in it, not
/// its environment, its paths, its files nor a mount table, names a host
/// path or holds a planted secret; it writes only the slot and its target.
#[test]
fn the_real_box_names_no_host_path_and_holds_no_secret() {
    let bwrap =
        find_bwrap(&[]).unwrap_or_else(|| panic!("bubblewrap is not installed: {BWRAP_INSTALL}"));
    let d = tempfile::tempdir().expect("tempdir");
    let root = d.path().canonicalize().expect("canonical");
    let b = rust_box(&root);
    let p = plant(&root, &b);
    let kit = b.kit_target.as_ref().expect("kit");
    for rel in KIT_SHARED {
        std::fs::create_dir_all(kit.join(rel)).expect("mkdir");
        std::fs::create_dir_all(b.target.join(rel)).expect("mkdir");
    }
    // A large unit of the kit, as a staged target links to it.
    std::fs::write(kit.join("unit.rlib"), "kit unit").expect("write");
    std::os::unix::fs::symlink(
        Path::new(BOX_KIT_TARGET).join("unit.rlib"),
        b.target.join("unit.rlib"),
    )
    .expect("link");
    let out = std::process::Command::new(&bwrap)
        .args(bwrap_args(&b.spec(), None, &[]))
        .args(["/bin/bash", "-c", SURVEY])
        .env("SKILLHOST_BOX_TEST_SECRET", &p.marker)
        .output()
        .expect("run bwrap");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("== end"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains(&p.marker), "a secret was read:\n{stdout}");
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    for host in [
        p.root.display().to_string(),
        p.home.display().to_string(),
        p.cargo_home.display().to_string(),
        p.checkout.display().to_string(),
        home,
    ] {
        assert!(!stdout.contains(&host), "the box names {host}:\n{stdout}");
    }
    let section = |name: &str| {
        let from = stdout.find(&format!("== {name}\n")).expect(name) + name.len() + 4;
        let to = stdout[from..]
            .find("\n== ")
            .map_or(stdout.len(), |i| from + i);
        stdout[from..to].to_owned()
    };
    assert!(
        section("mountinfo").contains("No such file"),
        "no /proc: {}",
        section("mountinfo")
    );
    let paths = section("paths");
    assert!(paths.contains("/box/src/src/lib.rs"), "{paths}");
    assert!(paths.contains("/box/vendor/serde-1.0.0/lib.rs"), "{paths}");
    assert!(!paths.contains("private"), "no registry: {paths}");
    assert!(section("texts").contains("vendored"));
    assert_eq!(
        section("writes"),
        "wrote /box/src\nwrote /box/target\nwrote /box/cargo"
    );
    assert!(!section("env").contains("SKILLHOST_BOX_TEST_SECRET"));
    assert!(b.slot.join("w").is_file(), "the write landed in the slot");
    assert_eq!(
        std::fs::read_to_string(kit.join("unit.rlib")).expect("kit unit"),
        "kit unit",
        "a linked unit of the kit is not written through its link"
    );
    let mut kit_texts = Vec::new();
    texts_under(&b.vendor, &mut kit_texts);
    assert_eq!(kit_texts.len(), 1, "the kit is as it was: {kit_texts:?}");
}

/// The kit's files: the SDK made standalone, its source and the WIT.
#[test]
fn the_kit_holds_the_sdk_standalone_and_its_wit() {
    let d = tempfile::tempdir().expect("tempdir");
    let checkout = d.path().join("checkout");
    let sdk = checkout.join("guest-sdk");
    std::fs::create_dir_all(sdk.join("src")).expect("mkdir");
    std::fs::create_dir_all(checkout.join("wit")).expect("mkdir");
    std::fs::write(
        checkout.join("Cargo.toml"),
        "[workspace]\n[workspace.package]\nedition = \"2024\"\n[workspace.dependencies]\nserde = \"1\"\n",
    )
    .expect("write");
    std::fs::write(
        sdk.join("Cargo.toml"),
        "[package]\nname = \"skillhost-guest\"\nversion = \"0.1.0\"\nedition.workspace = true\n[dependencies]\nserde.workspace = true\n",
    )
    .expect("write");
    std::fs::write(sdk.join("src/lib.rs"), "//! sdk").expect("write");
    std::fs::write(checkout.join("wit/skill.wit"), "package x:y;").expect("write");
    let files = sdk_files(&sdk).expect("files");
    let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "skillhost-guest/Cargo.toml",
            "skillhost-guest/src/lib.rs",
            "wit/skill.wit"
        ]
    );
    let manifest = String::from_utf8_lossy(&files[0].1);
    assert!(!manifest.contains("workspace"), "{manifest}");
    assert!(manifest.contains("edition = \"2024\""), "{manifest}");
    let a = kit_id(&files, &[b"lock"]);
    assert_eq!(a, kit_id(&files, &[b"lock"]));
    assert_ne!(a, kit_id(&files, &[b"another lock"]));
}

#[test]
fn a_staged_tree_copies_small_files_with_their_times_and_links_large_ones() {
    let d = tempfile::tempdir().expect("tempdir");
    let from = d.path().join("from");
    std::fs::create_dir_all(from.join("a/b")).expect("mkdir");
    std::fs::write(from.join("a/b/f"), "x").expect("write");
    let large = vec![b'u'; usize::try_from(LINK_MIN_BYTES).expect("size")];
    std::fs::write(from.join("a/unit.rlib"), &large).expect("write");
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    std::fs::File::options()
        .write(true)
        .open(from.join("a/b/f"))
        .and_then(|f| f.set_modified(old))
        .expect("touch");
    let to = d.path().join("to");
    std::fs::create_dir_all(from.join("shared/x")).expect("mkdir");
    std::fs::write(from.join("shared/x/big"), "host unit").expect("write");
    let linked_at = Path::new("/box/kit-target");
    assert_eq!(
        stage_tree(&from, &to, &["shared"], linked_at).expect("stage"),
        1
    );
    let copied = std::fs::symlink_metadata(to.join("a/b/f")).expect("copied");
    assert!(copied.is_file());
    assert_eq!(copied.modified().expect("mtime"), old);
    assert_eq!(
        std::fs::read_link(to.join("a/unit.rlib")).expect("a link"),
        linked_at.join("a/unit.rlib"),
        "a large unit links to the kit as the box binds it"
    );
    assert!(to.join("shared").is_dir(), "made, to bind over");
    assert!(!to.join("shared/x").exists(), "not copied");
}

#[test]
fn vendored_crates_keep_their_package_checksum_and_lose_the_per_file_ones() {
    let d = tempfile::tempdir().expect("tempdir");
    let krate = d.path().join("serde-1.0.0");
    std::fs::create_dir_all(&krate).expect("mkdir");
    std::fs::write(
        krate.join(".cargo-checksum.json"),
        r#"{"files":{"src/lib.rs":"ab12"},"package":"cd34"}"#,
    )
    .expect("write");
    std::fs::write(d.path().join("not-a-crate"), "x").expect("write");
    drop_file_checksums(d.path()).expect("drop");
    let sums: serde_json::Value =
        serde_json::from_slice(&std::fs::read(krate.join(".cargo-checksum.json")).expect("read"))
            .expect("json");
    assert_eq!(sums["files"], serde_json::json!({}));
    assert_eq!(sums["package"], "cd34");
}

#[test]
fn a_new_kit_removes_kits_unused_for_long_and_keeps_the_rest() {
    let d = tempfile::tempdir().expect("tempdir");
    let kit = |name: &str, ready: bool, age_days: u64| {
        let k = Kit {
            dir: d.path().join(name),
        };
        std::fs::create_dir_all(k.target()).expect("mkdir");
        if ready {
            k.mark_ready().expect("ready");
        }
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(age_days * 86_400);
        let marker = if ready {
            k.dir.join("READY")
        } else {
            k.dir.clone()
        };
        std::fs::File::open(&marker)
            .and_then(|f| f.set_modified(then))
            .expect("age");
        k
    };
    let new = kit("new", true, 0);
    let recent = kit("recent", true, 3);
    let old = kit("old", true, 30);
    let old_unfinished = kit("old.tmp", false, 30);
    let used_again = kit("used-again", true, 30);
    used_again.mark_used();
    let removed = remove_unused_kits(d.path(), &new.dir, KIT_UNUSED_FOR);
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert!(!old.dir.exists() && !old_unfinished.dir.exists());
    for kept in [&new, &recent, &used_again] {
        assert!(kept.ready(), "{} kept", kept.dir.display());
    }
}
