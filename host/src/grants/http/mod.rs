//! `http`: host names (exact, or `*.example.com`) the handler's outbound
//! HTTP may reach. Its wasi:http guard ([`guard`]) checks each request's
//! host and the addresses it resolves to ([`netguard`], which the host's
//! own fetches use too); the sandbox installs the guard as a call's
//! request hooks.

pub(crate) mod guard;
pub mod netguard;

use super::{CallSetup, Capability, Flag, HostCapability, Permit};
use crate::skill::Capabilities;
use netguard::pattern_covers;

pub struct Http;

/// Its per-call enforcement is wasi:http's, through its guard (the call's
/// request hooks) and the network guard: no service, no state here.
impl HostCapability for Http {
    type Service = ();
    type State = ();

    fn call_state(_call: &CallSetup<'_>, _service: &()) {}
}

impl Capability for Http {
    fn key(&self) -> &'static str {
        "http"
    }

    fn flags(&self) -> &'static [Flag] {
        &[Flag {
            name: "http",
            value_name: Some("HOST"),
            help: "Host the handler may reach over HTTP (repeatable)",
        }]
    }

    fn grant_from_flag(&self, _flag: &str, values: &[String], into: &mut Capabilities) {
        into.http.extend_from_slice(values);
    }

    /// A host pattern on one side narrows a broader pattern on the other.
    fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities) {
        into.http = declared
            .http
            .iter()
            .filter_map(|d| {
                granted.http.iter().find_map(|g| {
                    if pattern_covers(g, d) {
                        Some(d.clone())
                    } else if pattern_covers(d, g) {
                        Some(g.clone())
                    } else {
                        None
                    }
                })
            })
            .collect();
    }

    fn describe(&self, c: &Capabilities) -> Vec<String> {
        if c.http.is_empty() {
            return Vec::new();
        }
        vec![format!("http {}", c.http.join(", "))]
    }

    fn imports(&self) -> &'static [Permit] {
        &[
            Permit {
                interface: "wasi:http/types",
                functions: &[],
            },
            Permit {
                interface: "wasi:http/outgoing-handler",
                functions: &[],
            },
        ]
    }
}
