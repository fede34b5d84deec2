//! The worked example in `host/src/grants/call.rs` (a made-up `counter`
//! capability with its own WIT interface, per-call state and a host
//! service) is true: a copy of this checkout with exactly that folder,
//! that field and that entry in the `capabilities!` list builds, and a
//! real handler that imports `skillhost:counter/counter` counts within
//! each call, reports to the host's tally, and is refused without the
//! grant. And the typing holds: the same copy with its state or service
//! missing, or the service offered as the wrong type, does not compile,
//! and rustc names each mistake. Compiles the crate twice more under
//! other package names, like `capability_example`.

use std::path::Path;

use crate::capability_example::{
    cargo_in_copy, copy_checkout, example_block, replace_once, test_grants_of_copy,
};
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
        let tally: Arc<dyn Tally> = total.clone();
        let services = Services::default().with(tally);

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

        // The gate's import check knows who permits the interface, and
        // the handler check that the host links it.
        assert_eq!(
            crate::grants::permitter("skillhost:counter/counter", Some("increment")),
            Permitter::Capability("counter")
        );
        assert!(crate::grants::is_host_interface("skillhost:counter/counter"));
    }
}
"##;

/// The counter's folder (the example and `tests`) and its field in
/// `skill::Capabilities`, in the copy whose `host/src` is `src`.
fn add_counter_folder_and_field(src: &Path, tests: &str) {
    let docs = std::fs::read_to_string(src.join("grants/call.rs")).expect("grants/call.rs");
    let example = example_block(&docs, "//!");
    std::fs::create_dir_all(src.join("grants/counter")).expect("mkdir");
    std::fs::write(
        src.join("grants/counter/mod.rs"),
        format!("{example}{tests}"),
    )
    .expect("write counter/mod.rs");
    replace_once(
        &src.join("skill/model.rs"),
        "    pub kv: bool,\n}",
        "    pub kv: bool,\n    pub counter: bool,\n}",
    );
}

/// Its module and its entry in the `capabilities!` list.
fn add_counter_entry(src: &Path) {
    let grants = src.join("grants/mod.rs");
    replace_once(&grants, "mod files;\n", "mod counter;\nmod files;\n");
    replace_once(
        &grants,
        "    kv: kv::Kv,\n}",
        "    kv: kv::Kv,\n    counter: counter::Counter,\n}",
    );
}

#[test]
fn a_capability_with_host_services_is_one_folder_one_field_and_its_entry() {
    let wasm = guest("counter-guest");
    let root = repo_root();
    let copy = copy_checkout(&root);
    let src = copy.path().join("host/src");
    add_counter_folder_and_field(&src, EXAMPLE_TESTS);
    add_counter_entry(&src);
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

/// Code that reaches the counter's state and offers its service wrongly:
/// each line compiled, and failed only when a call ran, while states and
/// services were looked up by type.
const MISTAKES: &str = r##"
/// A host function's projection onto the counter's state.
pub fn its_state(states: &mut crate::grants::CallStates) -> &mut Count {
    &mut states.counter
}

pub struct Total;

impl Tally for Total {
    fn add(&self, _skill: &str) {}
}

/// The tally offered as its own type, not as `dyn Tally`.
pub fn offered_as_its_type(services: Services) -> Services {
    services.with(Arc::new(Total))
}
"##;

#[test]
fn a_missing_state_or_service_does_not_compile() {
    let root = repo_root();
    let copy = copy_checkout(&root);
    let src = copy.path().join("host/src");
    add_counter_folder_and_field(&src, MISTAKES);
    // Its module, but no entry in the list: the call has no field for it.
    replace_once(
        &src.join("grants/mod.rs"),
        "mod files;\n",
        "mod counter;\nmod files;\n",
    );
    // And the capability does not make its per-call state.
    let folder = src.join("grants/counter/mod.rs");
    let text = std::fs::read_to_string(&folder).expect("read");
    let (from, to) = (
        text.find("    fn call_state(").expect("call_state"),
        text.find("    fn add_to_linker").expect("add_to_linker"),
    );
    std::fs::write(&folder, format!("{}{}", &text[..from], &text[to..])).expect("write");

    let out = cargo_in_copy(
        copy.path(),
        "skillhost-counter-mistakes",
        &["--lib", "--no-run"],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the mistakes compiled:\n{stderr}");
    // rustc names each mistake (types as it prints them: `&mut
    // CallStates` or `&mut grants::CallStates`, by what else is in scope).
    let said = |code: &str, start: &str, end: &str| {
        stderr
            .lines()
            .any(|l| l.starts_with(code) && l.contains(start) && l.ends_with(end))
    };
    // A host function reaching a state the call does not have.
    assert!(
        said(
            "error[E0609]",
            "no field `counter` on type `&mut ",
            "CallStates`"
        ),
        "{stderr}"
    );
    // A service with no field in the call's services.
    assert!(
        said(
            "error[E0609]",
            "no field `counter` on type `&mut ",
            "Services`"
        ),
        "{stderr}"
    );
    // A capability that does not make its state.
    assert!(
        said(
            "error[E0046]",
            "not all trait items implemented",
            "missing: `call_state`"
        ),
        "{stderr}"
    );
    // A service offered as a type no capability takes.
    assert!(
        said("error[E0277]", "Arc<Total>: ", "Offer` is not satisfied"),
        "{stderr}"
    );
}
