//! skillhost: load agent skills from every dialect, run their handlers in
//! capability-scoped WebAssembly sandboxes, learn from every run.
//!
//! # Module map
//!
//! Modules form layers. A unit of this map uses only units of lower
//! layers, never one of its own layer or above, so there are no cycles and
//! each layer can be read, tested and replaced on its own.
//! `tests/architecture.rs` reads this list and the module paths of every
//! source file (`crate::`, `super::`, `self::`), and fails on an edge that
//! goes up or sideways, or on a module missing here.
//!
//! A unit is a top-level module, folder and all: a folder sits on one
//! layer, and the test also fails on an import between top-level modules
//! that does not go down, or that closes a cycle. (The map may place a
//! submodule on its own, below its folder, as a unit apart from it; none
//! is placed today.)
//!
//! - layer 0: `types`, `fsutil`, `sys`, `audit`: shared values and errors
//!   (answers, failures and their classes, service errors, tool
//!   descriptions, bytes as hex), file helpers, thread priority, the audit
//!   of a skill's text.
//! - layer 1: `skill`, `bundled`, `mcp_admission`: parsing every SKILL.md
//!   dialect, discovery, the catalog, search, a skill's pin (its
//!   fingerprint); the skills built into the binary; backpressure for the
//!   MCP server (places to run calls, a bounded queue, the session limit,
//!   and their defaults from the machine), below `config`, which holds
//!   its settings.
//! - layer 2: `paths`, `grants`: where things live (and which paths are
//!   the host's own, and the two skillhost.toml files); the capabilities,
//!   each one unit (`grants/kv.rs`, ...): its front-matter key, grant and
//!   flag, intersection and description, the imports it permits, its
//!   per-call state and the host service it reaches (`KvHost`,
//!   `ModelHost`, `ToolHost`, injected by whoever runs the call), and the
//!   guards it owns (`grants/files/`: the file guard; `grants/http/`: the
//!   wasi:http guard and the outbound network guard, `grants::netguard`,
//!   which the host's own fetches use too); declared ∩ granted, what a
//!   grant request writes, and the grants of a skillhost.toml file, read
//!   and written.
//! - layer 3: `sandbox`, `store`, `llm`, `tools`, `install`, `toolchain`: the wasmtime
//!   sandbox (a call's store composed from each capability's per-call
//!   state and guards, every capability's host functions linked once per
//!   engine); the store behind `RunStore` and its concern traits (runs, key-value data,
//!   gate records, shared documents; an SQLite file by default, PostgreSQL
//!   for many hosts); model providers; the tool
//!   registry and its policy; installing skills from a folder, an archive
//!   or a registry into the installed root, and uninstalling them; the
//!   toolchains that build handlers (finding, checking, installing them,
//!   `handler build`) and a new skill folder with a handler from a
//!   template (`handler new`). None of them knows the others.
//! - layer 4: `learn`, `forge`, `gate_policy`, `shared`, `judge`: rules
//!   from recorded failures, applied to runs; the operator's edits of them.
//!   Skills written from successful runs and improved in place, through
//!   one checked, atomic writer, with their history; recurring tool
//!   sequences mined from the runs; handlers written by a model, checked,
//!   built offline under a time limit and admitted into their skill (cargo
//!   feature `forge`). The validation gate's settings, reports and
//!   approvals, pinned to an artifact's bytes: what `exec` asks before it
//!   runs a gated handler. What the hosts on one store share: the
//!   workspace's grants and the forged and installed skills, as documents
//!   of the store, and how a host follows them. The optional model judge of a skill's text, its
//!   verdicts cached by hash. None knows the others.
//! - layer 5: `config`: `skillhost.toml`, collecting each module's own
//!   settings type.
//! - layer 6: `granting`: granting and revoking a skill's capabilities,
//!   pinned to its fingerprint, into a skillhost.toml or the shared store;
//!   the grant command a notice prints.
//! - layer 7: `exec`: a task's path, with a thin `Runner` front
//!   (`exec/mod.rs`), one entry for every caller (`entry`) and a file per
//!   step: `select`, `flow` (prevention, the attempt, validation and its
//!   retry), `tiers` (the `Call` each tier gets, `call`), one per tier
//!   (`handler`, `pipeline`, `model_loop`, `template`), `admit` (a
//!   handler read, approved and compiled), `outcome` and `record`; the
//!   layer-3 services offered to the sandbox; recording the run, and after
//!   it (off the request path) handing the runs to `forge::after_runs`
//!   and swapping in the reloaded catalog; following what other hosts
//!   share (`shared::follow`).
//! - layer 8: `eval`, `app`, `gate`: ablations, simulated
//!   models and their scenarios; wiring a runner from paths,
//!   configuration, model and rules; the validation gate's checks of a
//!   handler (static, then its cases in the sandbox), which store their
//!   report and apply the approval policy, and the loop that has a model
//!   write a handler, builds and gates it, feeds failures back and admits
//!   it (`gate::author`).
//! - layer 9: `mcp`: the MCP server over `exec`.
//! - layer 10: `cli`: argument parsing and the commands' printing; each
//!   command calls the library.

pub mod app;
pub mod audit;
pub mod bundled;
pub mod cli;
pub mod config;
pub mod eval;
pub mod exec;
#[cfg(feature = "forge")]
pub mod forge;
pub mod fsutil;
pub mod gate;
pub mod gate_policy;
pub mod granting;
pub mod grants;
pub mod install;
pub mod judge;
pub mod learn;
pub mod llm;
pub mod mcp;
pub mod mcp_admission;
pub mod paths;
pub mod sandbox;
pub mod shared;
pub mod skill;
pub mod store;
pub mod sys;
pub mod toolchain;
pub mod tools;
pub mod types;
