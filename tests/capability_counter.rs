//! The worked example in `host/src/grants/call.rs` (a made-up `counter`
//! capability with an interface, per-call state and a host service of its
//! own) is true: a copy of this checkout with exactly that folder, that
//! field and that registry entry builds, and a real handler that imports
//! `skillhost:counter/counter` counts within each call, reports to the
//! host's tally, and is refused without the grant. Compiles the crate once
//! more under another package name, like `capability_example`.

use crate::capability_example::{copy_checkout, example_block, replace_once, test_grants_of_copy};
use crate::harness::{guest, repo_root};

/// The check that goes into the example's folder: calls through the real
/// sandbox, not the docs.
const EXAMPLE_TESTS: &str = r##"
#[cfg(test)]
mod example_tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;
    use crate::grants::{Effective, Permitter, Services};
    use crate::sandbox::{CallRequest, FileRoots, Limits, Sandbox, SandboxOptions};
    use crate::types::{Failure, Output};

    #[derive(Default)]
    struct Total(AtomicU64);

    impl Tally for Total {
        fn add(&self, _skill: &str) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    async fn call(
        sandbox: &Sandbox,
        handler: &crate::sandbox::Handler,
        granted: bool,
        times: &str,
        services: &Services,
    ) -> (Result<Output, Failure>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let roots = FileRoots {
            skill_dir: dir.path().to_path_buf(),
            workspace: dir.path().to_path_buf(),
            skill_files: Vec::new(),
            control: Default::default(),
        };
        let grants = Effective {
            capabilities: Capabilities { counter: granted, ..Default::default() },
            ..Effective::none()
        };
        let context = serde_json::Map::new();
        let req = CallRequest {
            skill: "counting",
            description: times,
            context: &context,
            grants: &grants,
            limits: Limits::default(),
            roots: &roots,
            services: services.clone(),
            entropy: Default::default(),
        };
        let out = sandbox.call(handler, &req).await;
        (out.result, out.events)
    }

    #[tokio::test]
    async fn the_counter_counts_per_call_reports_to_its_service_and_needs_its_grant() {
        let wasm = std::fs::read(std::env::var("COUNTER_GUEST_WASM").unwrap()).unwrap();
        let sandbox = Sandbox::new(&SandboxOptions::default()).unwrap();
        let handler = sandbox.load(&wasm).unwrap();
        let total = Arc::new(Total::default());
        let services = Services::default().with::<dyn Tally>(total.clone());

        let (three, _) = call(&sandbox, &handler, true, "3", &services).await;
        assert_eq!(three.unwrap().body, "count 3");
        // Per-call state: the next call starts from zero.
        let (two, _) = call(&sandbox, &handler, true, "2", &services).await;
        assert_eq!(two.unwrap().body, "count 2");
        // The host's service heard every step of both calls.
        assert_eq!(total.0.load(Ordering::SeqCst), 5);

        let (refused, events) = call(&sandbox, &handler, false, "4", &services).await;
        let failure = refused.unwrap_err();
        assert_eq!(failure.class.as_str(), "CounterRefused");
        assert!(failure.message.contains("not granted to skill `counting`"), "{}", failure.message);
        assert!(events.iter().any(|e| e.starts_with("denied: ")), "{events:?}");
        assert_eq!(total.0.load(Ordering::SeqCst), 5, "a refused step reaches no service");

        // The gate's import check knows who permits the interface.
        assert_eq!(
            crate::grants::permitter("skillhost:counter/counter", Some("increment")),
            Permitter::Capability("counter")
        );
    }
}
"##;

#[test]
fn a_capability_with_host_services_is_one_folder_one_field_and_its_entry() {
    let wasm = guest("counter-guest");
    let root = repo_root();
    let copy = copy_checkout(&root);
    let src = copy.path().join("host/src");
    let docs = std::fs::read_to_string(src.join("grants/call.rs")).expect("grants/call.rs");
    let example = example_block(&docs, "//!");
    // The folder.
    std::fs::create_dir_all(src.join("grants/counter")).expect("mkdir");
    std::fs::write(
        src.join("grants/counter/mod.rs"),
        format!("{example}{EXAMPLE_TESTS}"),
    )
    .expect("write counter/mod.rs");
    // The field.
    replace_once(
        &src.join("skill/model.rs"),
        "    pub kv: bool,\n}",
        "    pub kv: bool,\n    pub counter: bool,\n}",
    );
    // Its entry in the registry.
    let grants = src.join("grants/mod.rs");
    replace_once(&grants, "mod files;\n", "mod counter;\nmod files;\n");
    replace_once(
        &grants,
        "    &kv::Kv,\n];",
        "    &kv::Kv,\n    &counter::Counter,\n];",
    );
    let stdout = test_grants_of_copy(
        copy.path(),
        "skillhost-counter-example",
        &[("COUNTER_GUEST_WASM", &wasm)],
    );
    assert!(
        stdout.contains(
            "the_counter_counts_per_call_reports_to_its_service_and_needs_its_grant ... ok"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("every_field_of_capabilities_has_its_capability_and_no_more ... ok"),
        "{stdout}"
    );
}
