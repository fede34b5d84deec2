//! `llm`: the handler may ask the configured model for completions
//! (`complete` of the host interface).

use super::{Capability, Flag, Permit};
use crate::skill::Capabilities;

pub struct Llm;

impl Capability for Llm {
    fn key(&self) -> &'static str {
        "llm"
    }

    fn flags(&self) -> &'static [Flag] {
        &[Flag {
            name: "llm",
            value_name: None,
            help: "Let the handler ask the configured model",
        }]
    }

    fn grant_from_flag(&self, _flag: &str, _values: &[String], into: &mut Capabilities) {
        into.llm = true;
    }

    fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities) {
        into.llm = declared.llm && granted.llm;
    }

    fn describe(&self, c: &Capabilities) -> Vec<String> {
        if c.llm {
            vec!["llm".into()]
        } else {
            Vec::new()
        }
    }

    fn imports(&self) -> &'static [Permit] {
        &[Permit {
            interface: "skillhost:skill/host",
            functions: &["complete"],
        }]
    }
}
