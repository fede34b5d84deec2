//! An installed skill gets nothing it declares until granted; its handler runs once approved.

use super::*;

const DECLARES_EVERYTHING: &str = "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities:\n      files: { read: [data] }\n      http: [api.example.com]\n      tools: [web_search]\n      llm: true\n      kv: true\n";

#[test]
fn an_installed_skill_gets_none_of_its_declared_capabilities_until_granted() {
    let env = Env::new();
    let archive = tar_gz(&[
        E::File("SKILL.md", md("greedy", DECLARES_EVERYTHING).as_bytes()),
        E::File("handler.wasm", b"\0asm"),
    ]);
    let installed = env
        .install_archive("greedy.tar.gz", &archive, &InstallConfig::default())
        .expect("installs");
    assert!(installed.declared.llm && installed.declared.kv);
    let catalog = env.catalog();
    let skill = catalog.get("greedy").expect("listed");
    let declared = &skill.meta.skillhost;
    // Trust every source that can be trusted: installed is not one of them.
    let trust_all = TrustConfig {
        bundled: true,
        workspace: true,
        forged: true,
    };
    let get = |grants: &Grants, fingerprint: &str| {
        effective(
            &skill.name,
            skill.source,
            &declared.capabilities,
            &declared.limits,
            fingerprint,
            &trust_all,
            grants,
        )
    };
    let none = get(&Grants::new(), &installed.fingerprint);
    assert_eq!(none.basis, Basis::NotGranted);
    assert_eq!(none.capabilities, Default::default());

    let mut grants = Grants::new();
    grants.insert(
        "greedy".into(),
        Grant {
            pin: installed.fingerprint.clone(),
            capabilities: declared.capabilities.clone(),
            ..Default::default()
        },
    );
    let granted = get(&grants, &installed.fingerprint);
    assert_eq!(granted.basis, Basis::Granted);
    assert_eq!(granted.capabilities, declared.capabilities);

    // Replaced by other content: the grant pinned to the old fingerprint
    // gives nothing.
    let v2 = tar_gz(&[
        E::File(
            "SKILL.md",
            md("greedy", &format!("version: 2\n{DECLARES_EVERYTHING}")).as_bytes(),
        ),
        E::File("handler.wasm", b"\0asm"),
    ]);
    let path = env.source_file("greedy2.tar.gz", &v2);
    let force = InstallOptions {
        force: true,
        ..Default::default()
    };
    let replaced = env
        .install(
            InstallSource::Archive(path),
            &force,
            &InstallConfig::default(),
        )
        .expect("replaced");
    let stale = get(&grants, &replaced.fingerprint);
    assert!(matches!(stale.basis, Basis::StaleGrant { .. }), "{stale:?}");
    assert_eq!(stale.capabilities, Default::default());
}

#[test]
fn an_installed_handler_runs_with_pure_computation_only_until_granted() {
    let env = Env::new();
    let wasm = std::fs::read(guest("hostile-guest")).expect("hostile guest");
    let front = "metadata:\n  skillhost:\n    handler: handler.wasm\n    capabilities:\n      kv: true\n      llm: true\n";
    let archive = tar_gz(&[
        E::File("SKILL.md", md("hostile", front).as_bytes()),
        E::File("handler.wasm", &wasm),
    ]);
    let installed = env
        .install_archive("hostile.tar.gz", &archive, &InstallConfig::default())
        .expect("installs");
    assert_eq!(installed.handler.as_deref(), Some("handler.wasm"));
    // Grants alone: the gate, which would keep this handler from running
    // at all (it imports sockets and http), is tested in tests/gate/ and
    // by `an_installed_handler_is_gated_and_runs_only_once_approved`.
    std::fs::write(
        env.ws.workspace.join("skillhost.toml"),
        "[gate]\nsources = []\n",
    )
    .expect("config");

    let runner = env
        .ws
        .runner(Config::load(&env.ws.paths()).expect("config"));
    let o = run(&runner, "hostile", "kv", json!({}));
    assert_eq!(o.grants.as_deref(), Some("not granted"), "{o:?}");
    let f = o.failure.as_ref().expect("kv is refused");
    assert_eq!(f.class, "Denied", "{f:?}");
    assert!(f.message.contains("kv"), "{}", f.message);
    let o = run(&runner, "hostile", "model", json!({}));
    assert_eq!(o.failure.as_ref().map(|f| f.class.as_str()), Some("Denied"));

    // `skills grant` (through the real binary) pins the grant to the
    // fingerprint the install reported.
    let out = env.ws.run_cli(&["skills", "grant", "hostile", "--kv"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(&installed.fingerprint),
        "{}",
        out.stdout
    );
    let config = Config::load(&env.ws.paths()).expect("config");
    let runner = env.ws.runner(config);
    let o = run(&runner, "hostile", "kv", json!({}));
    assert_eq!(
        o.output.as_ref().map(|o| o.body.as_str()),
        Some("42"),
        "granted kv works: {:?}",
        o.failure
    );
}

#[test]
fn an_installed_handler_is_gated_and_runs_only_once_approved() {
    let env = Env::new();
    let src = env.sources.join("echoer");
    std::fs::create_dir_all(src.join("tests")).expect("mkdir");
    std::fs::write(
        src.join("SKILL.md"),
        md(
            "echoer",
            "metadata:\n  skillhost:\n    handler: handler.wasm\n",
        ),
    )
    .expect("SKILL.md");
    std::fs::copy(guest("echo-guest"), src.join("handler.wasm")).expect("handler");
    std::fs::write(
        src.join("tests/cases.jsonl"),
        "{\"task\": \"hi\", \"output\": \"hi\"}\n",
    )
    .expect("cases");

    // The install runs the gate; an installed handler waits for approval.
    let out = env
        .ws
        .run_cli(&["skills", "install", &src.display().to_string()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("gate:        passed (1 case(s))"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("skillhost handler approve echoer"),
        "{}",
        out.stdout
    );
    let refused = env.ws.run_cli(&["run", "--skill", "echoer", "hi"]);
    assert_ne!(refused.code, 0, "{}", refused.stdout);
    assert!(
        refused.stderr.contains("HandlerNotApproved"),
        "{}",
        refused.stderr
    );

    let approved = env.ws.run_cli(&["handler", "approve", "echoer"]);
    assert_eq!(approved.code, 0, "{}", approved.stderr);
    let ran = env.ws.run_cli(&["run", "--skill", "echoer", "hi"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.stdout.trim(), "hi");

    // A handler that imports what no capability permits is rejected at
    // install: the skill is installed, its handler stays quarantined.
    let hostile = env.sources.join("hostile");
    std::fs::create_dir_all(&hostile).expect("mkdir");
    std::fs::write(
        hostile.join("SKILL.md"),
        md(
            "hostile",
            "metadata:\n  skillhost:\n    handler: handler.wasm\n",
        ),
    )
    .expect("SKILL.md");
    std::fs::copy(guest("hostile-guest"), hostile.join("handler.wasm")).expect("handler");
    let out = env.ws.run_cli(&[
        "skills",
        "install",
        "--json",
        &hostile.display().to_string(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = out.json();
    assert_eq!(report["gate"]["passed"], false, "{report}");
    assert_eq!(report["gate"]["state"], "quarantined", "{report}");
    let refused = env.ws.run_cli(&["run", "--skill", "hostile", "kv"]);
    assert!(
        refused.stderr.contains("HandlerNotApproved"),
        "{}",
        refused.stderr
    );
}
