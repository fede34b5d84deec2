use super::*;

#[test]
fn content_version_is_sha256_hex() {
    assert_eq!(
        content_version(b"abc"),
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("has parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

#[test]
fn later_roots_override_and_same_root_duplicates_warn() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    write(&a, "x/SKILL.md", "---\nname: x\ndescription: from a\n---\n");
    write(
        &a,
        "y/SKILL.md",
        "---\nname: y\ndescription: y from a\n---\n",
    );
    write(&a, "z/SKILL.md", "---\nname: y\ndescription: dup\n---\n");
    write(&b, "x/SKILL.md", "---\nname: x\ndescription: from b\n---\n");
    let cat = Catalog::load(
        &[Root::new(a, Source::User), Root::new(b, Source::Path)],
        &LoadOptions::default(),
    );
    let x = cat.get("x").expect("x");
    assert_eq!(x.description, "from b");
    assert_eq!(x.source, Source::Path);
    assert_eq!(cat.get("y").expect("y").description, "y from a");
    assert_eq!(cat.stats().overridden, 1);
    assert_eq!(cat.stats().duplicates, 1);
    assert!(
        cat.warnings()
            .iter()
            .any(|w| w.message.contains("same root"))
    );
    assert_eq!(
        cat.skills()
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["x", "y"]
    );
}

#[test]
fn an_installed_skill_never_takes_another_sources_name_whatever_the_root_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = |n: &str| tmp.path().join(n);
    let md = |name: &str, d: &str| format!("---\nname: {name}\ndescription: {d}\n---\n");
    write(&dir("bundled"), "mail/SKILL.md", &md("mail", "bundled"));
    write(&dir("forged"), "made/SKILL.md", &md("made", "forged"));
    write(&dir("user"), "mine/SKILL.md", &md("mine", "user"));
    // Installed skills after every other root, each under a name taken.
    for (folder, name) in [("a", "mail"), ("b", "made"), ("c", "mine"), ("d", "own")] {
        write(
            &dir("installed"),
            &format!("{folder}/SKILL.md"),
            &md(name, "installed"),
        );
    }
    let cat = Catalog::load(
        &[
            Root::new(dir("bundled"), Source::Bundled),
            Root::new(dir("forged"), Source::Forged),
            Root::new(dir("user"), Source::User),
            Root::new(dir("installed"), Source::Installed),
        ],
        &LoadOptions::default(),
    );
    for (name, source) in [
        ("mail", Source::Bundled),
        ("made", Source::Forged),
        ("mine", Source::User),
        ("own", Source::Installed),
    ] {
        assert_eq!(cat.get(name).map(|s| s.source), Some(source), "{name}");
    }
    assert_eq!(cat.stats().overridden, 3);
    let shadowed: Vec<_> = cat
        .shadowed()
        .iter()
        .map(|s| (s.name.as_str(), s.source))
        .collect();
    assert_eq!(
        shadowed,
        [
            ("made", Source::Installed),
            ("mail", Source::Installed),
            ("mine", Source::Installed)
        ]
    );
    assert_eq!(cat.shadowed_by("mail")[0].path, dir("installed/a/SKILL.md"));
    assert!(cat.shadowed_by("own").is_empty());
    let w = cat
        .warnings()
        .iter()
        .find(|w| w.path == dir("installed/a/SKILL.md"))
        .expect("a warning for the shadowed skill");
    assert!(
        w.message.contains("the bundled skill 'mail'") && w.message.contains("--name NEW"),
        "{w}"
    );
    // The same holds for ready-made skills.
    let skill = |source| Skill {
        source,
        ..cat.get("mail").expect("mail").clone()
    };
    let cat = Catalog::from_skills(vec![skill(Source::Bundled), skill(Source::Installed)]);
    assert_eq!(cat.get("mail").map(|s| s.source), Some(Source::Bundled));
    let cat = Catalog::from_skills(vec![skill(Source::Installed), skill(Source::User)]);
    assert_eq!(cat.get("mail").map(|s| s.source), Some(Source::User));
    assert_eq!(cat.shadowed()[0].source, Source::Installed);
}

#[test]
fn look_alike_names_are_one_name_across_and_within_roots() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = |n: &str| tmp.path().join(n);
    let md = |name: &str| format!("---\nname: {name}\ndescription: d\n---\n");
    write(&dir("bundled"), "e/SKILL.md", &md("email-writer"));
    write(&dir("bundled"), "t/SKILL.md", &md("text-summarizer"));
    for (i, twin) in [
        "email_writer",
        "e-mail-writer",
        "EmailWriter",
        "еmail-writer",
    ]
    .iter()
    .enumerate()
    {
        write(&dir("installed"), &format!("{i}/SKILL.md"), &md(twin));
    }
    write(&dir("user"), "t/SKILL.md", &md("text_summarizer"));
    write(&dir("user"), "u/SKILL.md", &md("text.summarizer"));
    let cat = Catalog::load(
        &[
            Root::new(dir("bundled"), Source::Bundled),
            Root::new(dir("installed"), Source::Installed),
            Root::new(dir("user"), Source::User),
        ],
        &LoadOptions::default(),
    );
    let names: Vec<_> = cat.skills().iter().map(|s| s.name.as_str()).collect();
    // A user look-alike replaces the bundled skill, as a later root
    // does; no installed look-alike is used.
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(names[0], "email-writer");
    assert_eq!(
        cat.look_alike("Text-Summarizer").map(|s| s.source),
        Some(Source::User)
    );
    // Each installed look-alike lost to the bundled skill; the user's
    // second look-alike was the same name within its root.
    assert_eq!(cat.shadowed_by("email-writer").len(), 4);
    assert_eq!(cat.stats().duplicates, 1);
    let warned = |needle: &str| cat.warnings().iter().any(|w| w.message.contains(needle));
    assert!(warned("not used: the bundled skill 'email-writer'"));
    assert!(warned("is the same name"));
    assert!(warned("skipped: skill"));
    assert!(warned("'text-summarizer' is the same name"));
    assert!(warned("in the same root ('text"));
}

#[test]
fn a_later_root_still_overrides_an_earlier_one_of_any_other_source() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let md = |d: &str| format!("---\nname: x\ndescription: {d}\n---\n");
    let installed = tmp.path().join("installed");
    let user = tmp.path().join("user");
    let ws = tmp.path().join("ws");
    write(&installed, "x/SKILL.md", &md("installed"));
    write(&user, "x/SKILL.md", &md("user"));
    write(&ws, "x/SKILL.md", &md("workspace"));
    let cat = Catalog::load(
        &[
            Root::new(installed.clone(), Source::Installed),
            Root::new(user.clone(), Source::User),
            Root::new(ws, Source::Workspace),
        ],
        &LoadOptions::default(),
    );
    assert_eq!(cat.get("x").map(|s| s.source), Some(Source::Workspace));
    let losers: Vec<_> = cat.shadowed_by("x").iter().map(|s| s.source).collect();
    assert_eq!(losers, [Source::Installed, Source::User]);
    // Only the installed one is a warning: a person's override is meant.
    let warned: Vec<_> = cat.warnings().iter().map(|w| w.path.clone()).collect();
    assert_eq!(warned, [installed.join("x/SKILL.md")]);
}

#[test]
fn a_root_skips_a_folder_that_is_a_root_of_its_own() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ws = tmp.path().join("skills");
    write(
        &ws,
        "mine/SKILL.md",
        "---\nname: mine\ndescription: d\n---\n",
    );
    write(
        &ws,
        "forged/made/SKILL.md",
        "---\nname: made\ndescription: d\n---\n",
    );
    let forged = ws.join("forged");
    let cat = Catalog::load(
        &[
            Root::new(forged.clone(), Source::Forged),
            Root::new(ws, Source::Workspace).skipping(forged),
        ],
        &LoadOptions::default(),
    );
    assert_eq!(cat.get("made").expect("made").source, Source::Forged);
    assert_eq!(cat.get("mine").expect("mine").source, Source::Workspace);
    assert_eq!(cat.stats().overridden, 0, "loaded once, from its own root");
}

#[test]
fn missing_root_is_silently_empty() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cat = Catalog::load(
        &[Root::new(tmp.path().join("nope"), Source::User)],
        &LoadOptions::default(),
    );
    assert!(cat.is_empty());
    assert!(cat.warnings().is_empty());
}

#[test]
fn root_that_is_itself_a_skill_and_hidden_folders() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("solo");
    write(
        &root,
        "SKILL.md",
        "---\nname: solo\ndescription: root skill\n---\n",
    );
    write(
        &root,
        ".curated/inner/skill.md",
        "---\nname: inner\ndescription: hidden ok\n---\n",
    );
    write(
        &root,
        ".git/g/SKILL.md",
        "---\nname: g\ndescription: never\n---\n",
    );
    write(
        &root,
        "node_modules/n/SKILL.md",
        "---\nname: n\ndescription: never\n---\n",
    );
    let cat = Catalog::load(&[Root::new(root, Source::Path)], &LoadOptions::default());
    let names: Vec<_> = cat.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["inner", "solo"]);
    assert!(
        cat.get("inner")
            .expect("inner")
            .path
            .ends_with(".curated/inner/skill.md")
    );
}

#[test]
fn caps_on_files_and_depth_warn() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for i in 0..5 {
        write(
            tmp.path(),
            &format!("s{i}/SKILL.md"),
            &format!("---\nname: s{i}\ndescription: d\n---\n"),
        );
    }
    write(
        tmp.path(),
        "a/b/c/deep/SKILL.md",
        "---\nname: deep\ndescription: d\n---\n",
    );
    let opts = LoadOptions {
        max_files: 3,
        ..LoadOptions::default()
    };
    let cat = Catalog::load(&[Root::new(tmp.path().to_path_buf(), Source::Path)], &opts);
    assert_eq!(cat.len(), 3);
    assert!(
        cat.warnings()
            .iter()
            .any(|w| w.message.contains("skill files (the cap)"))
    );

    let opts = LoadOptions {
        max_depth: 2,
        ..LoadOptions::default()
    };
    let cat = Catalog::load(&[Root::new(tmp.path().to_path_buf(), Source::Path)], &opts);
    assert!(cat.get("deep").is_none());
    assert_eq!(cat.len(), 5);
    assert!(
        cat.warnings()
            .iter()
            .any(|w| w.message.contains("levels below the root"))
    );
}
