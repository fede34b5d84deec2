//! `kv`: the handler may use its own key-value store (per skill, within
//! the `[limits]` quota).

use super::{Capability, Flag, Permit};
use crate::skill::Capabilities;

pub struct Kv;

impl Capability for Kv {
    fn key(&self) -> &'static str {
        "kv"
    }

    fn flags(&self) -> &'static [Flag] {
        &[Flag {
            name: "kv",
            value_name: None,
            help: "Let the handler use its key-value store",
        }]
    }

    fn grant_from_flag(&self, _flag: &str, _values: &[String], into: &mut Capabilities) {
        into.kv = true;
    }

    fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities) {
        into.kv = declared.kv && granted.kv;
    }

    fn describe(&self, c: &Capabilities) -> Vec<String> {
        if c.kv { vec!["kv".into()] } else { Vec::new() }
    }

    fn imports(&self) -> &'static [Permit] {
        &[Permit {
            interface: "skillhost:skill/host",
            functions: &["kv-get", "kv-set", "kv-delete"],
        }]
    }
}
