//! Forge: skills that grow from recorded runs.

pub mod mine;
