//! Tiered compiling (`[sandbox] compiler = "tiered"`): a first load
//! compiles with Winch and says so; Cranelift's code replaces Winch's in
//! the background and is what the disk cache keeps; a cache hit never
//! compiles; and every limit holds on Winch's code as on Cranelift's.

use crate::harness;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness::guest;
use serde_json::Map;
use skillhost::sandbox::{
    CallOutcome, CallRequest, CompileNotice, Compiler, Effective, FileRoots, Handler,
    HandlerOrigin, Limits, Sandbox, SandboxOptions, Services, Tier,
};

fn sandbox(cache: &std::path::Path, compiler: Compiler) -> Sandbox {
    Sandbox::new(&SandboxOptions {
        cache_dir: Some(cache.to_path_buf()),
        compiler,
        ..SandboxOptions::default()
    })
    .expect("sandbox")
}

/// Loads `wasm`, recording the compile notices.
fn load(sandbox: &Sandbox, wasm: &Arc<[u8]>) -> (Handler, Vec<CompileNotice>) {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let seen = notices.clone();
    let h = harness::runtime()
        .block_on(
            sandbox.load_async_with(wasm.clone(), move |n| seen.lock().expect("notices").push(n)),
        )
        .expect("load");
    let n = notices.lock().expect("notices").clone();
    (h, n)
}

fn call(sandbox: &Sandbox, handler: &Handler, what: &str, limits: Limits) -> CallOutcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let roots = FileRoots {
        skill_dir: dir.path().to_path_buf(),
        workspace: dir.path().to_path_buf(),
        skill_files: Vec::new(),
        control: Default::default(),
    };
    let grants = Effective::none();
    let context = Map::new();
    let req = CallRequest {
        skill: "guest",
        description: what,
        context: &context,
        grants: &grants,
        limits,
        roots: &roots,
        services: Services::default(),
    };
    harness::runtime().block_on(sandbox.call(handler, &req))
}

fn files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

#[test]
fn a_miss_says_it_compiles_and_a_hit_does_not() {
    let wasm: Arc<[u8]> = Arc::from(std::fs::read(guest("echo-guest")).expect("read"));
    let cache = tempfile::tempdir().expect("tempdir");
    let s = sandbox(cache.path(), Compiler::Tiered);
    let (h, notices) = load(&s, &wasm);
    assert_eq!(
        (h.origin, h.tier),
        (HandlerOrigin::Compiled, Tier::Baseline)
    );
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].bytes, wasm.len());
    assert_eq!(notices[0].tier, Tier::Baseline);
    assert_eq!(
        call(&s, &h, "hi", Limits::default()).result.map(|o| o.body),
        Ok("hi".to_owned())
    );
    // Cranelift's code replaces Winch's, in memory and on disk.
    assert!(s.wait_optimised(Duration::from_secs(600)), "Cranelift done");
    let (h, notices) = load(&s, &wasm);
    assert_eq!(
        (h.origin, h.tier),
        (HandlerOrigin::MemoryCache, Tier::Optimized)
    );
    assert!(notices.is_empty(), "a memory hit: {notices:?}");
    assert_eq!(files(cache.path()), 1, "only Cranelift's code is kept");
    // A new process starts from Cranelift's code, without a compile.
    let again = sandbox(cache.path(), Compiler::Tiered);
    let (h, notices) = load(&again, &wasm);
    assert_eq!(
        (h.origin, h.tier),
        (HandlerOrigin::DiskCache, Tier::Optimized)
    );
    assert!(notices.is_empty(), "a disk hit: {notices:?}");
    // Cranelift only: one notice, for Cranelift.
    let other = tempfile::tempdir().expect("tempdir");
    let (h, notices) = load(&sandbox(other.path(), Compiler::Cranelift), &wasm);
    assert_eq!(h.tier, Tier::Optimized);
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].tier, Tier::Optimized);
}

#[test]
fn a_process_that_exits_early_keeps_winchs_code() {
    let wasm: Arc<[u8]> = Arc::from(std::fs::read(guest("echo-guest")).expect("read"));
    let cache = tempfile::tempdir().expect("tempdir");
    let first = sandbox(cache.path(), Compiler::Tiered);
    let (h, _) = load(&first, &wasm);
    assert_eq!(h.tier, Tier::Baseline);
    // A new sandbox loads Winch's code from disk (or Cranelift's, if its
    // background compile was quicker) rather than compiling again.
    let second = sandbox(cache.path(), Compiler::Tiered);
    let (h, notices) = load(&second, &wasm);
    assert!(notices.is_empty(), "compiled again: {notices:?}");
    assert_eq!(h.origin, HandlerOrigin::DiskCache);
    assert!(first.wait_optimised(Duration::from_secs(600)));
    assert!(second.wait_optimised(Duration::from_secs(600)));
}

#[test]
fn limits_hold_on_winchs_code() {
    let wasm: Arc<[u8]> = Arc::from(std::fs::read(guest("hostile-guest")).expect("read"));
    let cache = tempfile::tempdir().expect("tempdir");
    let s = sandbox(cache.path(), Compiler::Tiered);
    let (h, _) = load(&s, &wasm);
    assert_eq!(h.tier, Tier::Baseline);
    let short = Limits {
        timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    for (what, class, needle) in [
        ("spin", "LimitExceeded", "time"),
        ("memory", "LimitExceeded", "memory"),
        ("recurse", "LimitExceeded", "stack"),
        ("panic", "Trap", "aborted"),
    ] {
        let f = call(&s, &h, what, short).result.expect_err(what);
        assert_eq!(f.class, class, "{what}: {f}");
        assert!(f.message.contains(needle), "{what}: {f}");
    }
    assert_eq!(
        call(&s, &h, "ok", short).result.map(|o| o.body),
        Ok("fine".to_owned())
    );
}
