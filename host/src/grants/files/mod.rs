//! `files`: folders the handler may read (`files.read`) or write
//! (`files.write`), relative to the skill folder or `workspace:PATH`. The
//! sandbox preopens them (refusing the host's own paths) when it builds the
//! call's WASI context, and links `wasi:filesystem` through this
//! capability's guard ([`guard`]: open files, write quota, no links).

pub(crate) mod guard;

use super::{CallSetup, Capability, Flag, HostCapability, Permit};
use crate::skill::Capabilities;

pub struct Files;

/// Its per-call enforcement is WASI's own, configured from the grant
/// (preopened folders), and its file guard's: no service, no state here.
impl HostCapability for Files {
    type Service = ();
    type State = ();

    fn call_state(_call: &CallSetup<'_>, _service: &()) {}
}

impl Capability for Files {
    fn key(&self) -> &'static str {
        "files"
    }

    fn flags(&self) -> &'static [Flag] {
        &[
            Flag {
                name: "read",
                value_name: Some("PATH"),
                help: "Directory the handler may read (as the skill declares it; repeatable)",
            },
            Flag {
                name: "write",
                value_name: Some("PATH"),
                help: "Directory the handler may write (repeatable)",
            },
        ]
    }

    fn grant_from_flag(&self, flag: &str, values: &[String], into: &mut Capabilities) {
        match flag {
            "read" => into.files.read.extend_from_slice(values),
            _ => into.files.write.extend_from_slice(values),
        }
    }

    fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities) {
        into.files.read = common_paths(&declared.files.read, &granted.files.read);
        into.files.write = common_paths(&declared.files.write, &granted.files.write);
    }

    fn describe(&self, c: &Capabilities) -> Vec<String> {
        let mut parts = Vec::new();
        if !c.files.read.is_empty() {
            parts.push(format!("read {}", c.files.read.join(", ")));
        }
        if !c.files.write.is_empty() {
            parts.push(format!("write {}", c.files.write.join(", ")));
        }
        parts
    }

    fn imports(&self) -> &'static [Permit] {
        &[
            Permit {
                interface: "wasi:filesystem/types",
                functions: &[],
            },
            Permit {
                interface: "wasi:filesystem/preopens",
                functions: &[],
            },
        ]
    }
}

/// Paths on both sides, compared without surrounding blanks or a
/// trailing `/`.
fn common_paths(a: &[String], b: &[String]) -> Vec<String> {
    let norm = |p: &String| p.trim().trim_end_matches('/').to_owned();
    a.iter()
        .filter(|p| b.iter().any(|q| norm(q) == norm(p)))
        .cloned()
        .collect()
}
