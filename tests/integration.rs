//! Every integration test, in one binary.
//!
//! Each test binary links all of skillhost with wasmtime and cranelift, so
//! one binary per file cost ~100 MB of disk and a multi-second link apiece;
//! as modules of one binary they share both, and the guest components and
//! example builds that the harness makes once per process.
//!
//! Run one file's tests with `cargo test --test integration MODULE::`,
//! e.g. `cargo test --test integration sandbox_attacks::`.

// clippy.toml lets tests unwrap and expect, but clippy 1.95 counts only
// `#[test]` functions of this crate as tests, not their helpers
// (rust-clippy#13981).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test that cannot set up fails there, naming the step"
)]

mod harness;
#[path = "support/catalog.rs"]
mod support;

mod ablation_real_model;
mod architecture;
mod audit;
mod audit_flow;
mod audit_judge;
mod capability_counter;
mod capability_example;
mod catalog_cli;
mod catalog_corpus;
mod catalog_hostile;
mod cli_logging;
mod cli_run;
mod crash_safety;
mod examples;
#[cfg(feature = "forge")]
mod forge;
mod forge_eval;
#[cfg(feature = "forge")]
mod forge_handler;
mod forge_usage;
mod fuzz_replay;
mod gate;
mod growth_install;
mod growth_trust;
mod honest_eval;
mod honest_rules;
mod install;
mod learning;
mod llm_providers;
mod mcp_backpressure;
mod mcp_concurrency;
mod mcp_load;
mod mcp_python;
mod model_loop;
mod net_rebinding;
mod newcomer_ux;
mod quotas;
mod real_model;
mod recording;
mod sandbox_attacks;
mod security_leaks;
mod shared_state;
mod store;
mod store_concerns;
mod tiered;
mod toolchain;
