//! skillhost: load agent skills from every dialect, run their handlers in
//! capability-scoped WebAssembly sandboxes, learn from every run.
//!
//! # Module map
//!
//! Modules form layers. A module uses only modules of lower layers, never
//! one of its own layer or above, so there are no cycles and each layer can
//! be read, tested and replaced on its own. `tests/architecture.rs` reads
//! this list and the `use crate::` edges of every source file, and fails on
//! an edge that goes up or sideways, or on a module missing here.
//!
//! - layer 0: `types`, `fsutil`, `sys`, `bundled`, `netguard`, `audit`: shared values
//!   and errors (answers, failures and their classes, service errors, tool
//!   descriptions), file helpers, thread priority, the skills built into
//!   the binary, the outbound network guard, the audit of a skill's text.
//! - layer 1: `skill`, `admission`: parsing every SKILL.md dialect,
//!   discovery, the catalog, search; backpressure for a server (places to
//!   run calls, a bounded queue, the session limit, and their defaults from
//!   the machine).
//! - layer 2: `paths`, `grants`, `scaffold`: where things live (and which
//!   paths are the host's own); what a skill may use, declared ∩ granted,
//!   and what a grant request writes; a new skill folder with a handler
//!   from a template.
//! - layer 3: `sandbox`, `store`, `llm`, `tools`, `install`, `toolchain`: the wasmtime
//!   sandbox (it defines the services it calls out to: `ToolHost`,
//!   `ModelHost`, `KvHost`); the store behind the `RunStore` trait (an
//!   SQLite file by default, PostgreSQL for many hosts); model providers; the tool
//!   registry and its policy; installing skills from a folder, an archive
//!   or a registry into the installed root, and uninstalling them; the
//!   toolchains that build handlers (finding, checking, installing them,
//!   `handler build`). None of them knows the others.
//! - layer 4: `learn`, `forge`, `approval`: rules from recorded failures,
//!   applied to runs; the operator's edits of them. Skills written from
//!   successful runs and improved in place, through one checked, atomic
//!   writer, with their history; recurring tool sequences mined from the
//!   runs; handlers written by a model, checked, built offline under a
//!   time limit and admitted into their skill (cargo feature `forge`). The validation gate's settings, reports
//!   and approvals, pinned to an artifact's bytes: what `exec` asks before
//!   it runs a gated handler. None knows the others.
//! - layer 5: `config`: `skillhost.toml`, collecting each module's own
//!   settings type.
//! - layer 6: `exec`: a task's path through the tiers, wiring the layer-3
//!   services into the sandbox, recording the run, and after it (off the
//!   request path) forging and improving skills and swapping in the
//!   reloaded catalog.
//! - layer 7: `eval`, `ops`, `app`, `gate`: ablations, simulated models
//!   and their scenarios; granting and revoking a skill's capabilities in
//!   `skillhost.toml`, pinned to its fingerprint; wiring a runner from
//!   paths, configuration, model and rules; the validation gate's checks
//!   of a handler (static, then its cases in the sandbox), its stored
//!   report and the approval policy; the loop that has a model write a
//!   handler, builds and gates it, feeds failures back and admits it
//!   (`gate::author`).
//! - layer 8: `mcp`: the MCP server over `exec`.
//! - layer 9: `cli`, `fuzzing`: argument parsing and the commands' printing; each
//!   command calls the library. The bodies of the fuzz targets (`fuzz/`)
//!   and of the test that replays their inputs on stable; not an API.

pub mod admission;
pub mod app;
pub mod approval;
pub mod audit;
pub mod bundled;
pub mod cli;
pub mod config;
pub mod eval;
pub mod exec;
#[cfg(feature = "forge")]
pub mod forge;
pub mod fsutil;
#[doc(hidden)]
pub mod fuzzing;
pub mod gate;
pub mod grants;
pub mod install;
pub mod learn;
pub mod llm;
pub mod mcp;
pub mod netguard;
pub mod ops;
pub mod paths;
pub mod sandbox;
pub mod scaffold;
pub mod skill;
pub mod store;
pub mod sys;
pub mod toolchain;
pub mod tools;
pub mod types;
