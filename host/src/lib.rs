//! skillhost: load agent skills from every dialect, run their handlers in
//! capability-scoped WebAssembly sandboxes.
//!
//! One module per stage of a task's path (see DESIGN.md): `skill` finds and
//! parses skills, `exec` runs a task, `sandbox` isolates handlers, `store`
//! keeps state; `cli` only parses arguments and prints.

pub mod bundled;
pub mod cli;
pub mod config;
pub mod exec;
pub mod fsutil;
pub mod learn;
pub mod llm;
pub mod mcp;
pub mod netguard;
pub mod paths;
pub mod sandbox;
pub mod skill;
pub mod store;
pub mod tools;
