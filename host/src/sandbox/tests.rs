//! The sandbox's own tests: limits and traps, compile checks, caching.

use wasmtime::Store;
use wasmtime::component::Component;

use super::call::{Stage, check_failure, check_output, classify};
use super::limits::LimitHit;
use super::*;

fn limits(memory_mb: usize) -> Limits {
    Limits {
        memory_bytes: memory_mb << 20,
        ..Limits::default()
    }
}

/// Instantiates a component under the call limiter alone: how that
/// went, and the first limit the limiter refused.
async fn instantiate_with(
    sandbox: &Sandbox,
    wat: &str,
    limits: Limits,
) -> (wasmtime::Result<()>, Option<LimitHit>) {
    let bytes = wat::parse_str(wat).expect("wat");
    let component = Component::new(sandbox.engine(), &bytes).expect("component");
    let mut store = Store::new(sandbox.engine(), limits::Limiter::new(limits));
    store.limiter(|l| l);
    store.set_epoch_deadline(1 << 40);
    let linker: Linker<limits::Limiter> = Linker::new(sandbox.engine());
    let r = linker.instantiate_async(&mut store, &component).await;
    (r.map(|_| ()), store.data().hit)
}

async fn instantiate(sandbox: &Sandbox, wat: &str, limits: Limits) -> (bool, Option<String>) {
    let (r, hit) = instantiate_with(sandbox, wat, limits).await;
    (r.is_ok(), hit.map(|h| h.to_string()))
}

/// How a failed instantiation is reported.
async fn instantiate_failure(sandbox: &Sandbox, wat: &str, limits: Limits) -> Failure {
    let (r, hit) = instantiate_with(sandbox, wat, limits).await;
    let e = r.expect_err("instantiation fails");
    classify(&e, Stage::Instantiate, hit, b"", limits)
}

#[tokio::test]
async fn limits_and_traps_are_told_apart_by_type_not_text() {
    let sandbox = Sandbox::new(&SandboxOptions::default()).expect("sandbox");
    // wasmtime refuses the third instance with an untyped message.
    let three = "(component (core module $m)
        (core instance (instantiate $m)) (core instance (instantiate $m))
        (core instance (instantiate $m)))";
    let l = Limits {
        instances: 2,
        ..Limits::default()
    };
    let f = instantiate_failure(&sandbox, three, l).await;
    assert_eq!(f.class, FailureClass::LimitExceeded, "{f}");
    assert!(f.message.contains("instance count"), "{f}");
    let tables = "(component (core module $m (table 1 funcref) (table 1 funcref)
        (table 1 funcref)) (core instance (instantiate $m)))";
    let l = Limits {
        tables: 2,
        ..Limits::default()
    };
    let f = instantiate_failure(&sandbox, tables, l).await;
    assert_eq!(f.class, FailureClass::LimitExceeded, "{f}");
    // A start function that traps ran guest code: a trap, not a limit.
    let traps = "(component (core module $m (func $s unreachable) (start $s))
        (core instance (instantiate $m)))";
    let f = instantiate_failure(&sandbox, traps, Limits::default()).await;
    assert_eq!(f.class, FailureClass::Trap, "{f}");
    assert!(f.message.starts_with("the handler aborted"), "{f}");
    // The host budget, raised by the epoch callback as the call's error.
    let l = Limits::default();
    let e = wasmtime::Error::new(LimitHit::HostMemory { limit: 80 << 20 });
    let f = classify(&e, Stage::Call, None, b"", l);
    assert_eq!(f.class, FailureClass::LimitExceeded, "{f}");
    assert!(f.message.starts_with("host memory"), "{f}");
    // Anything else is a trap, with the whole chain.
    let e = wasmtime::Error::msg("inner").context("outer");
    let f = classify(&e, Stage::Call, None, b"", l);
    assert_eq!(f, Failure::new(FailureClass::Trap, "outer: inner"));
}

#[tokio::test]
async fn the_memory_limit_covers_all_memories_of_a_call() {
    let sandbox = Sandbox::new(&SandboxOptions::default()).expect("sandbox");
    // Eight memories of 16 MiB each: 128 MiB in all, over a 64 MiB limit
    // that each one alone would fit.
    let eight = format!(
        "(component (core module $m {}) (core instance (instantiate $m)))",
        "(memory 256) ".repeat(8)
    );
    let (ok, hit) = instantiate(&sandbox, &eight, limits(64)).await;
    assert!(!ok, "over the limit in all");
    assert!(
        hit.as_deref().is_some_and(|h| h.contains("memory")),
        "{hit:?}"
    );
    let (ok, _) = instantiate(&sandbox, &eight, limits(128)).await;
    assert!(ok, "fits in 128 MiB");
    // Growing from a start function counts the same way. The second
    // grow is refused (memory.grow returns -1, no trap): the limiter
    // records the refusal.
    let grows = "(component (core module $m (memory 1) (memory 1)
          (func $start (drop (memory.grow 0 (i32.const 600))) (drop (memory.grow 1 (i32.const 600))))
          (start $start))
        (core instance (instantiate $m)))";
    let (ok, hit) = instantiate(&sandbox, grows, limits(64)).await;
    assert!(ok, "instantiates");
    assert!(
        hit.as_deref().is_some_and(|h| h.contains("in all")),
        "{hit:?}"
    );
}

#[test]
fn a_cause_keeps_its_chain_out_of_the_message() {
    let e = SandboxError::InvalidComponent(cause(
        wasmtime::Error::msg("unknown opcode").context("failed to parse"),
    ));
    assert_eq!(e.to_string(), "not a valid WebAssembly component");
    assert_eq!(
        Chain(&e).to_string(),
        "not a valid WebAssembly component: failed to parse: unknown opcode"
    );
}

fn cache_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

#[test]
fn components_are_checked_before_compiling_and_cached_only_when_they_link() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = SandboxOptions {
        cache_dir: Some(dir.path().join("cache")),
        ..SandboxOptions::default()
    };
    let sandbox = Sandbox::new(&options).expect("sandbox");
    // Exports a `handle` of the wrong type: passes the export check,
    // fails linking, and must not be cached.
    let wrong = wat::parse_str(
        r#"(component
            (core module $m (func (export "f")))
            (core instance $i (instantiate $m))
            (func (export "handle") (canon lift (core func $i "f"))))"#,
    )
    .expect("wat");
    let e = sandbox.load(&wrong).err().expect("wrong world");
    assert!(matches!(e, SandboxError::WrongWorld(_)), "{e}");
    assert_eq!(cache_files(&dir.path().join("cache")), 0);
    // No `handle` at all: refused from its types, before compiling.
    let none = wat::parse_str("(component (core module $m (func (export \"f\"))))").expect("wat");
    let e = sandbox.load(&none).err().expect("no handle");
    assert!(
        e.to_string()
            .contains("does not export the function `handle`"),
        "{e}"
    );
    // A core module is not a component.
    let e = sandbox.load(b"\0asm\x01\0\0\0").err().expect("core module");
    assert!(matches!(e, SandboxError::InvalidComponent(_)), "{e}");
    assert_eq!(cache_files(&dir.path().join("cache")), 0);
}

#[test]
fn size_and_function_caps_refuse_a_compile_bomb_before_compiling() {
    // A function of 3 MiB of straight-line code: what a compile bomb is
    // made of (compile time and memory grow faster than its size).
    let body = "(drop (i32.const 1))".repeat(1 << 20);
    let bomb = wat::parse_str(format!(
        r#"(component
            (core module $m (func (export "f") {body}))
            (core instance $i (instantiate $m))
            (func (export "handle") (canon lift (core func $i "f"))))"#
    ))
    .expect("wat");
    let sandbox = Sandbox::new(&SandboxOptions::default()).expect("sandbox");
    let e = sandbox.load(&bomb).err().expect("too large a function");
    assert!(matches!(e, SandboxError::TooLarge { .. }), "{e}");
    assert!(e.to_string().contains("max_function_kb"), "{e}");
    assert_eq!(e.class(), "LimitExceeded");
    let small = Sandbox::new(&SandboxOptions {
        max_component_bytes: 1024,
        ..SandboxOptions::default()
    })
    .expect("sandbox");
    let e = small.load(&bomb).err().expect("too large a component");
    assert!(e.to_string().contains("max_component_mb"), "{e}");
}

#[test]
fn failure_classes_are_identifiers_and_count_as_output() {
    let l = Limits {
        output_bytes: 100,
        ..Limits::default()
    };
    assert_eq!(
        check_failure("TimezoneError".into(), "m".into(), l).class,
        "TimezoneError"
    );
    for bad in ["", "1abc", "a b", "x\ny", &"C".repeat(65)] {
        assert_eq!(
            check_failure(bad.into(), "m".into(), l).class,
            "InvalidFailure",
            "{bad:?}"
        );
    }
    assert_eq!(
        check_failure("Big".into(), "m".repeat(100), l).class,
        "OutputTooLarge"
    );
    let e = check_output("b".into(), "t".repeat(90), vec!["f".repeat(10)], l)
        .expect_err("over 100 bytes in all");
    assert_eq!(e.class, "OutputTooLarge");
    assert!(check_output("b".into(), "text/plain".into(), vec![], l).is_ok());
}
