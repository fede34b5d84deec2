//! `tools`: host tools the handler may call by name through `call-tool`
//! (the tool policy applies on top).

use super::{Capability, Flag, Permit};
use crate::skill::Capabilities;

pub struct Tools;

impl Capability for Tools {
    fn key(&self) -> &'static str {
        "tools"
    }

    fn flags(&self) -> &'static [Flag] {
        &[Flag {
            name: "tool",
            value_name: Some("NAME"),
            help: "Host tool the handler may call (repeatable)",
        }]
    }

    fn grant_from_flag(&self, _flag: &str, values: &[String], into: &mut Capabilities) {
        into.tools.extend_from_slice(values);
    }

    fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities) {
        into.tools = declared
            .tools
            .iter()
            .filter(|t| granted.tools.contains(t))
            .cloned()
            .collect();
    }

    fn describe(&self, c: &Capabilities) -> Vec<String> {
        if c.tools.is_empty() {
            return Vec::new();
        }
        vec![format!("tools {}", c.tools.join(", "))]
    }

    fn imports(&self) -> &'static [Permit] {
        &[Permit {
            interface: "skillhost:skill/host",
            functions: &["call-tool"],
        }]
    }
}
