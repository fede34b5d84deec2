//! Effective grants: what a handler may use is what its skill declares ∩
//! what the operator granted. Trusted sources (bundled, workspace, by
//! default) are granted what they declare; everything else needs a grant
//! pinned to the skill's fingerprint, so a changed skill loses its grant.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::skill::{Capabilities, LimitSpec, Source};

#[macro_use]
mod call;
mod config_file;
mod files;
mod http;
mod kv;
mod llm;
mod tools;

pub(crate) use call::truncated;
pub use call::{
    CallSetup, CapabilityHost, Events, HOST_INTERFACE, HostCapability, HostError, MAX_EVENTS,
    Offer, Refusal,
};
pub use config_file::{GrantFileError, file_grants, with_grant, write_grant};
pub(crate) use files::guard as file_guard;
pub(crate) use http::guard as http_guard;
pub use http::netguard;
pub use kv::{KvCall, KvHost, MAX_KV_KEY, MAX_KV_VALUE};
pub use llm::{LlmCall, MAX_PROMPT, ModelHost};
pub use tools::{MAX_TOOL_ARGS, ToolHost, ToolsCall};

/// One kind of thing a handler may be granted. Each is a file of this
/// folder and one field of [`Capabilities`], which is what the skill
/// declares under `metadata.skillhost.capabilities.KEY`, what the operator
/// grants under `[grants.NAME] KEY` (both parsed by serde from that field)
/// and what the sandbox reads when it enforces the grant.
///
/// Adding one, a made-up `clock` that lets a handler read the real time
/// (without it, the wall clock reads as the epoch): the field
/// `pub clock: bool,` in `skill::Capabilities`; `mod clock;` and the entry
/// `clock: clock::Clock,` in the `capabilities!` list below; and this
/// file, `grants/clock.rs` (`tests/capability_example.rs` builds the
/// crate with exactly this):
///
/// ```text
/// //! `clock`: the handler may read the real wall-clock time.
///
/// use super::{CallSetup, Capability, Flag, HostCapability};
/// use crate::skill::Capabilities;
///
/// pub struct Clock;
///
/// /// No host service, no state and no host function of its own.
/// impl HostCapability for Clock {
///     type Service = ();
///     type State = ();
///
///     fn call_state(_call: &CallSetup<'_>, _service: &()) {}
/// }
///
/// impl Capability for Clock {
///     fn key(&self) -> &'static str {
///         "clock"
///     }
///
///     fn flags(&self) -> &'static [Flag] {
///         &[Flag {
///             name: "clock",
///             value_name: None,
///             help: "Let the handler read the real time",
///         }]
///     }
///
///     fn grant_from_flag(&self, _flag: &str, _values: &[String], into: &mut Capabilities) {
///         into.clock = true;
///     }
///
///     fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities) {
///         into.clock = declared.clock && granted.clock;
///     }
///
///     fn describe(&self, c: &Capabilities) -> Vec<String> {
///         if c.clock { vec!["clock".into()] } else { Vec::new() }
///     }
///
///     fn configure_wasi(&self, granted: &Capabilities, wasi: &mut wasmtime_wasi::WasiCtxBuilder) {
///         if !granted.clock {
///             wasi.wall_clock(Epoch);
///         }
///     }
/// }
///
/// /// A wall clock stopped at 1970-01-01.
/// struct Epoch;
///
/// impl wasmtime_wasi::HostWallClock for Epoch {
///     fn resolution(&self) -> std::time::Duration {
///         std::time::Duration::from_secs(1)
///     }
///     fn now(&self) -> std::time::Duration {
///         std::time::Duration::ZERO
///     }
/// }
/// ```
///
/// The front-matter key, the grant key, the `skills grant` flag, the
/// intersection and the description then all exist; `configure_wasi` is
/// the per-call setting; `imports` names the interfaces a component may
/// import when its skill may use the capability (the validation gate's
/// import check; the clock needs none beyond pure computation, so keeps
/// the empty default). A capability with host functions, a service or
/// per-call state has them in its [`HostCapability`] (`kv`, `llm`,
/// `tools`; see `grants/call.rs`); `files` and `http` are enforced
/// through WASI and guards of their own, which the sandbox installs
/// (`files/guard.rs`; `http/guard.rs` and the network guard,
/// `http/netguard.rs`), and the sandbox's control paths, against the same
/// field.
pub trait Capability: Sync {
    /// Its key in front matter and in grants: the field's name.
    fn key(&self) -> &'static str;
    /// The `skills grant` options that grant it.
    fn flags(&self) -> &'static [Flag];
    /// Adds what option `flag` gave (its values; none for a switch).
    fn grant_from_flag(&self, flag: &str, values: &[String], into: &mut Capabilities);
    /// declared ∩ granted for this capability, written into `into`.
    fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities);
    /// What `c` grants of it, in words; empty when nothing.
    fn describe(&self, c: &Capabilities) -> Vec<String>;
    /// Settings of the call's WASI context that follow from the grant.
    fn configure_wasi(&self, _granted: &Capabilities, _wasi: &mut wasmtime_wasi::WasiCtxBuilder) {}
    /// The interfaces (or functions of one) a handler's component may
    /// import when its skill may use this capability: what the validation
    /// gate checks a component's imports against before it runs.
    fn imports(&self) -> &'static [Permit] {
        &[]
    }
}

/// An import a capability (or pure computation) permits: a whole
/// interface, or some functions of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permit {
    /// `package:name/interface`, without a version.
    pub interface: &'static str,
    /// The functions permitted; empty for the whole interface.
    pub functions: &'static [&'static str],
}

impl Permit {
    const fn interface(interface: &'static str) -> Permit {
        Permit {
            interface,
            functions: &[],
        }
    }

    /// Whether it permits `function` of `interface` (`None`: the
    /// interface as a whole, or an interface without functions).
    fn covers(&self, interface: &str, function: Option<&str>) -> bool {
        self.interface == interface
            && (self.functions.is_empty() || function.is_some_and(|f| self.functions.contains(&f)))
    }
}

/// What every handler may import, with no capability: the host's log,
/// the WASI clocks and random numbers, and the plumbing a language's
/// standard library imports for them (streams, errors, polling) and for
/// stdio, the environment and exit, which the sandbox captures or leaves
/// empty. Nothing here reaches a file, a socket or the network.
pub const COMPUTATION_IMPORTS: &[Permit] = &[
    Permit::interface("skillhost:skill/types"),
    Permit {
        interface: "skillhost:skill/host",
        functions: &["log"],
    },
    Permit::interface("wasi:clocks/monotonic-clock"),
    Permit::interface("wasi:clocks/wall-clock"),
    Permit::interface("wasi:random/random"),
    Permit::interface("wasi:random/insecure"),
    Permit::interface("wasi:random/insecure-seed"),
    Permit::interface("wasi:io/error"),
    Permit::interface("wasi:io/poll"),
    Permit::interface("wasi:io/streams"),
    Permit::interface("wasi:cli/environment"),
    Permit::interface("wasi:cli/exit"),
    Permit::interface("wasi:cli/stdin"),
    Permit::interface("wasi:cli/stdout"),
    Permit::interface("wasi:cli/stderr"),
    Permit::interface("wasi:cli/terminal-input"),
    Permit::interface("wasi:cli/terminal-output"),
    Permit::interface("wasi:cli/terminal-stdin"),
    Permit::interface("wasi:cli/terminal-stdout"),
    Permit::interface("wasi:cli/terminal-stderr"),
];

/// Who permits an import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permitter {
    /// Every handler may import it.
    Computation,
    /// The capability of this key must be usable by the skill.
    Capability(&'static str),
    /// Nothing does: no capability grants it (e.g. `wasi:sockets`), or
    /// skillhost does not provide it at all.
    Nothing,
}

/// Which capability, if any, permits importing `function` of `interface`
/// (`package:name/interface`, version removed; `function` `None` for the
/// interface as a whole).
pub fn permitter(interface: &str, function: Option<&str>) -> Permitter {
    if COMPUTATION_IMPORTS
        .iter()
        .any(|p| p.covers(interface, function))
    {
        return Permitter::Computation;
    }
    CAPABILITIES
        .iter()
        .find(|c| c.imports().iter().any(|p| p.covers(interface, function)))
        .map_or(Permitter::Nothing, |c| Permitter::Capability(c.key()))
}

/// The keys of the capabilities `c` uses (declares or grants anything of).
pub fn used(c: &Capabilities) -> Vec<&'static str> {
    CAPABILITIES
        .iter()
        .filter(|cap| !cap.describe(c).is_empty())
        .map(|cap| cap.key())
        .collect()
}

/// What `inner` asks for beyond `outer`, capability by capability, in
/// words; empty when `inner` ⊆ `outer`.
pub fn exceeding(inner: &Capabilities, outer: &Capabilities) -> Vec<String> {
    CAPABILITIES
        .iter()
        .filter_map(|cap| {
            let mut within = Capabilities::default();
            cap.intersect(inner, outer, &mut within);
            let asked = cap.describe(inner);
            (cap.describe(&within) != asked).then(|| asked.join("; "))
        })
        .collect()
}

/// The capability of key `key`, if there is one.
pub fn capability(key: &str) -> Option<&'static dyn Capability> {
    CAPABILITIES.iter().copied().find(|c| c.key() == key)
}

/// A `skills grant` option.
pub struct Flag {
    /// `--NAME`.
    pub name: &'static str,
    /// `Some` for a repeatable option with a value, `None` for a switch.
    pub value_name: Option<&'static str>,
    pub help: &'static str,
}

// Every capability, in the order grants are described: the registry
// `CAPABILITIES`, and one field each of `Services` and `CallStates`.
capabilities! {
    files: files::Files,
    http: http::Http,
    tools: tools::Tools,
    llm: llm::Llm,
    kv: kv::Kv,
}

/// Which sources get what they declare without an explicit grant.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrustConfig {
    /// Skills shipped inside the binary.
    pub bundled: bool,
    /// Skills in the workspace's `.skillhost/skills` and `.agents/skills`.
    pub workspace: bool,
    /// Skills the forge wrote under `.skillhost/skills/forged`: they
    /// declare at most what the skill they came from had in effect.
    pub forged: bool,
}

impl Default for TrustConfig {
    fn default() -> Self {
        TrustConfig {
            bundled: true,
            workspace: true,
            forged: true,
        }
    }
}

/// What the operator granted one skill, pinned to its fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// The skill's pin (`Skill::pin`: its SKILL.md and every file of its
    /// folder a run can read) when it was granted.
    pub pin: String,
    #[serde(flatten)]
    pub capabilities: Capabilities,
    /// How far the skill's own limits may go above the defaults.
    #[serde(default, skip_serializing_if = "LimitSpec::is_empty")]
    pub limits: LimitSpec,
}

/// Operator grants by skill name (`[grants.NAME]`).
pub type Grants = BTreeMap<String, Grant>;

/// Why a handler got the capabilities it got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Basis {
    /// Its source is trusted by configuration: it gets what it declares.
    Trusted(Source),
    /// An operator grant pinned to this exact fingerprint.
    Granted,
    /// A grant exists but was made for another version of the skill.
    StaleGrant { pinned: String, current: String },
    /// No grant: pure computation only.
    NotGranted,
}

impl fmt::Display for Basis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Basis::Trusted(s) => write!(f, "trusted ({s} skill)"),
            Basis::Granted => f.write_str("granted"),
            Basis::StaleGrant { pinned, current } => write!(
                f,
                "grant is stale (made for {}, skill is now {})",
                short(pinned),
                short(current)
            ),
            Basis::NotGranted => f.write_str("not granted"),
        }
    }
}

/// The first 19 characters (`sha256:` and 12 hex digits). The pin is
/// written by the operator, so cut on a character boundary, not a byte.
fn short(v: &str) -> &str {
    v.char_indices().nth(19).map_or(v, |(i, _)| &v[..i])
}

/// The capabilities one handler call runs with, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    pub capabilities: Capabilities,
    /// How far the skill's own limits may go above the defaults (see
    /// `Limits::resolve`); empty means not at all.
    pub limits: LimitSpec,
    pub basis: Basis,
}

impl Effective {
    /// Nothing beyond computation.
    pub fn none() -> Self {
        Effective {
            capabilities: Capabilities::default(),
            limits: LimitSpec::default(),
            basis: Basis::NotGranted,
        }
    }

    /// Trusted by source or explicitly granted (tool policy's trust layer).
    pub fn is_trusted(&self) -> bool {
        matches!(self.basis, Basis::Trusted(_) | Basis::Granted)
    }

    /// A line for the user when the skill asked for more than it got.
    /// `grant_command` is the command that grants (or, for a stale grant,
    /// renews) it, as the operator would type it.
    pub fn notice(
        &self,
        skill: &str,
        declared: &Capabilities,
        grant_command: impl FnOnce() -> String,
    ) -> Option<String> {
        if self.capabilities == *declared || *declared == Capabilities::default() {
            return None;
        }
        Some(match &self.basis {
            Basis::StaleGrant { .. } => format!(
                "skill `{skill}` changed since it was granted ({}); it runs without its grant until you renew it with `{}`",
                self.basis,
                grant_command()
            ),
            Basis::NotGranted => format!(
                "skill `{skill}` declares capabilities that are not granted; it runs with pure computation only (`{}` to grant them)",
                grant_command()
            ),
            _ => format!("skill `{skill}` runs with fewer capabilities than it declares"),
        })
    }
}

/// The fingerprint of a skill's SKILL.md and handler bytes: which files a
/// runner read and compiled. Grants and approvals hold more: the skill's
/// pin, every file of its folder a run can read (`Skill::pin`).
pub fn fingerprint(skill_md: &[u8], handler: Option<&[u8]>) -> String {
    let mut h = Sha256::new();
    h.update((skill_md.len() as u64).to_le_bytes());
    h.update(skill_md);
    if let Some(bytes) = handler {
        h.update(b"handler");
        h.update(bytes);
    }
    format!("sha256:{}", crate::types::hex(&h.finalize()))
}

/// declared ∩ granted, with trust by source. Limits above the defaults
/// are granted the same way as capabilities.
pub fn effective(
    name: &str,
    source: Source,
    declared: &Capabilities,
    declared_limits: &LimitSpec,
    fingerprint: &str,
    trust: &TrustConfig,
    grants: &Grants,
) -> Effective {
    let trusted = match source {
        Source::Bundled => trust.bundled,
        Source::Workspace => trust.workspace,
        Source::Forged => trust.forged,
        Source::User | Source::Path | Source::Installed => false,
    };
    if let Some(grant) = grants.get(name) {
        if grant.pin != fingerprint {
            return Effective {
                capabilities: Capabilities::default(),
                limits: LimitSpec::default(),
                basis: Basis::StaleGrant {
                    pinned: grant.pin.clone(),
                    current: fingerprint.to_owned(),
                },
            };
        }
        return Effective {
            capabilities: intersect(declared, &grant.capabilities),
            limits: grant.limits,
            basis: Basis::Granted,
        };
    }
    if trusted {
        return Effective {
            capabilities: declared.clone(),
            limits: *declared_limits,
            basis: Basis::Trusted(source),
        };
    }
    Effective::none()
}

/// What both sides allow: each capability intersects its own part.
pub fn intersect(declared: &Capabilities, granted: &Capabilities) -> Capabilities {
    let mut out = Capabilities::default();
    for c in CAPABILITIES {
        c.intersect(declared, granted, &mut out);
    }
    out
}

/// What `c` grants, in words, capability by capability.
pub fn describe(c: &Capabilities) -> String {
    let parts: Vec<String> = CAPABILITIES
        .iter()
        .flat_map(|cap| cap.describe(c))
        .collect();
    if parts.is_empty() {
        "nothing beyond computation".into()
    } else {
        parts.join("; ")
    }
}

/// The limits `l` raises, in words (`memory_mb 256, timeout_ms 9000`).
pub fn describe_limits(l: &LimitSpec) -> String {
    let mut parts = Vec::new();
    let mut add = |name: &str, v: Option<u64>| {
        if let Some(v) = v {
            parts.push(format!("{name} {v}"));
        }
    };
    add("memory_mb", l.memory_mb);
    add("timeout_ms", l.timeout_ms);
    add("output_kb", l.output_kb);
    add("tables", l.tables.map(u64::from));
    add("table_elements", l.table_elements.map(u64::from));
    add("instances", l.instances.map(u64::from));
    parts.join(", ")
}

/// What the operator asks `skills grant` for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantRequest {
    /// The capabilities named; none named means everything declared.
    pub capabilities: Capabilities,
    /// Let the skill's declared limits go above the defaults.
    pub limits: bool,
}

/// The grant to write for a skill that declares `declared` and
/// `declared_limits`. A request that names nothing grants everything the
/// skill declares, limits included; otherwise what was named, and the
/// declared limits only when asked. The second value is what a run will
/// get (declared ∩ named) when that is less than what was named.
pub fn grant_for(
    declared: &Capabilities,
    declared_limits: &LimitSpec,
    request: &GrantRequest,
    pin: String,
) -> (Grant, Option<Capabilities>) {
    let everything = request.capabilities == Capabilities::default() && !request.limits;
    let (capabilities, narrowed) = if everything {
        (declared.clone(), None)
    } else {
        let effective = intersect(declared, &request.capabilities);
        let narrowed = (effective != request.capabilities).then_some(effective);
        (request.capabilities.clone(), narrowed)
    };
    let limits = if everything || request.limits {
        *declared_limits
    } else {
        LimitSpec::default()
    };
    let grant = Grant {
        pin,
        capabilities,
        limits,
    };
    (grant, narrowed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::FileCapabilities;

    #[test]
    fn every_field_of_capabilities_has_its_capability_and_no_more() {
        let fields: Vec<String> = match serde_json::to_value(Capabilities::default()) {
            Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
            other => panic!("capabilities serialise as an object: {other:?}"),
        };
        let mut keys: Vec<String> = CAPABILITIES.iter().map(|c| c.key().to_owned()).collect();
        keys.sort();
        let mut fields = fields;
        fields.sort();
        assert_eq!(keys, fields);
    }

    #[test]
    fn intersect_and_describe_go_through_every_capability() {
        let mut declared = Capabilities {
            files: FileCapabilities {
                read: vec!["data/".into()],
                write: vec!["out".into()],
            },
            http: vec!["*.example.com".into()],
            tools: vec!["a".into(), "b".into()],
            kv: true,
            ..Capabilities::default()
        };
        declared.llm = true;
        let granted = Capabilities {
            files: FileCapabilities {
                read: vec!["data".into()],
                write: Vec::new(),
            },
            http: vec!["api.example.com".into()],
            tools: vec!["b".into()],
            kv: true,
            ..Capabilities::default()
        };
        let both = intersect(&declared, &granted);
        assert_eq!(
            describe(&both),
            "read data/; http api.example.com; tools b; kv"
        );
        assert_eq!(
            describe(&Capabilities::default()),
            "nothing beyond computation"
        );
    }

    #[test]
    fn imports_are_permitted_by_computation_or_by_one_capability() {
        assert_eq!(
            permitter("wasi:clocks/wall-clock", None),
            Permitter::Computation
        );
        assert_eq!(
            permitter("skillhost:skill/host", Some("log")),
            Permitter::Computation
        );
        assert_eq!(
            permitter("skillhost:skill/host", Some("complete")),
            Permitter::Capability("llm")
        );
        assert_eq!(
            permitter("skillhost:skill/host", Some("kv-set")),
            Permitter::Capability("kv")
        );
        assert_eq!(
            permitter("skillhost:skill/host", Some("call-tool")),
            Permitter::Capability("tools")
        );
        assert_eq!(
            permitter("skillhost:skill/host", Some("made-up")),
            Permitter::Nothing
        );
        assert_eq!(
            permitter("wasi:filesystem/preopens", None),
            Permitter::Capability("files")
        );
        assert_eq!(
            permitter("wasi:http/outgoing-handler", None),
            Permitter::Capability("http")
        );
        // No capability grants sockets.
        assert_eq!(permitter("wasi:sockets/tcp", None), Permitter::Nothing);
        assert_eq!(permitter("evil:thing/x", None), Permitter::Nothing);
        // What a capability permits is never pure computation already, or
        // the gate would name the wrong reason for a refusal.
        for c in CAPABILITIES {
            for p in c.imports() {
                let functions: Vec<Option<&str>> = match p.functions {
                    [] => vec![None],
                    f => f.iter().map(|f| Some(*f)).collect(),
                };
                for f in functions {
                    assert_eq!(
                        permitter(p.interface, f),
                        Permitter::Capability(c.key()),
                        "{p:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn exceeding_names_what_goes_beyond_the_outer_capabilities() {
        let outer = Capabilities {
            http: vec!["*.example.com".into()],
            kv: true,
            ..Capabilities::default()
        };
        let inner = Capabilities {
            http: vec!["api.example.com".into()],
            ..Capabilities::default()
        };
        assert!(exceeding(&inner, &outer).is_empty());
        assert_eq!(used(&inner), vec!["http"]);
        let more = Capabilities {
            http: vec!["evil.net".into()],
            llm: true,
            kv: true,
            ..Capabilities::default()
        };
        assert_eq!(exceeding(&more, &outer), vec!["http evil.net", "llm"]);
        // A broader pattern than the outer one is an escalation too.
        let broader = Capabilities {
            http: vec!["*.com".into()],
            ..Capabilities::default()
        };
        assert_eq!(exceeding(&broader, &outer), vec!["http *.com"]);
    }

    /// The two config sections grants read.
    #[derive(Default)]
    struct Config {
        trust: TrustConfig,
        grants: Grants,
    }

    #[test]
    fn short_cuts_an_operator_written_pin_on_a_character_boundary() {
        assert_eq!(short("sha256:0123456789abcdef"), "sha256:0123456789ab");
        assert_eq!(short("sha256:01"), "sha256:01");
        // Byte 19 falls inside `é`: slicing bytes would panic.
        let pin = "sha256:01234567890é1";
        assert!(!pin.is_char_boundary(19));
        assert_eq!(short(pin), "sha256:01234567890é");
        let stale = Basis::StaleGrant {
            pinned: "ééééééééééééééééééééé".into(),
            current: "sha256:0".into(),
        };
        assert!(stale.to_string().contains("made for ééééé"), "{stale}");
    }

    fn caps() -> Capabilities {
        let mut c = Capabilities {
            files: FileCapabilities {
                read: vec!["data/".into(), "docs".into()],
                write: vec!["out".into()],
            },
            http: vec!["*.example.com".into(), "api.other.org".into()],
            tools: vec!["web_search".into(), "http_fetch".into()],
            kv: true,
            ..Capabilities::default()
        };
        c.llm = true;
        c
    }

    #[test]
    fn intersection_keeps_only_what_both_allow() {
        let granted = Capabilities {
            files: FileCapabilities {
                read: vec!["data".into()],
                write: vec![],
            },
            http: vec!["api.example.com".into(), "evil.net".into()],
            tools: vec!["web_search".into(), "shell".into()],
            kv: true,
            ..Capabilities::default()
        };
        let e = intersect(&caps(), &granted);
        assert_eq!(e.files.read, vec!["data/"]);
        assert!(e.files.write.is_empty());
        assert_eq!(e.http, vec!["api.example.com"]);
        assert_eq!(e.tools, vec!["web_search"]);
        assert!(!e.llm);
        assert!(e.kv);
    }

    #[test]
    fn untrusted_sources_get_nothing_without_a_grant() {
        let cfg = Config::default();
        for src in [Source::User, Source::Path, Source::Installed] {
            let e = effective(
                "s",
                src,
                &caps(),
                &LimitSpec::default(),
                "sha256:1",
                &cfg.trust,
                &cfg.grants,
            );
            assert_eq!(e.capabilities, Capabilities::default());
            assert_eq!(e.basis, Basis::NotGranted);
        }
        let e = effective(
            "s",
            Source::Bundled,
            &caps(),
            &LimitSpec::default(),
            "sha256:1",
            &cfg.trust,
            &cfg.grants,
        );
        assert_eq!(e.capabilities, caps());
        let mut cfg = Config::default();
        cfg.trust.workspace = false;
        let e = effective(
            "s",
            Source::Workspace,
            &caps(),
            &LimitSpec::default(),
            "sha256:1",
            &cfg.trust,
            &cfg.grants,
        );
        assert_eq!(e.basis, Basis::NotGranted);
    }

    #[test]
    fn grant_is_pinned_to_the_fingerprint() {
        let mut cfg = Config::default();
        cfg.grants.insert(
            "s".into(),
            Grant {
                pin: fingerprint(b"v1", Some(b"wasm")),
                capabilities: caps(),
                limits: LimitSpec::default(),
            },
        );
        let ok = effective(
            "s",
            Source::User,
            &caps(),
            &LimitSpec::default(),
            &fingerprint(b"v1", Some(b"wasm")),
            &cfg.trust,
            &cfg.grants,
        );
        assert_eq!(ok.basis, Basis::Granted);
        assert_eq!(ok.capabilities, caps());
        // The handler changed: the grant no longer applies.
        let stale = effective(
            "s",
            Source::User,
            &caps(),
            &LimitSpec::default(),
            &fingerprint(b"v1", Some(b"wasm2")),
            &cfg.trust,
            &cfg.grants,
        );
        assert!(matches!(stale.basis, Basis::StaleGrant { .. }));
        assert_eq!(stale.capabilities, Capabilities::default());
        assert!(
            stale
                .notice("s", &caps(), || "skillhost skills grant s --user".into())
                .expect("notice")
                .contains("renew it with `skillhost skills grant s --user`")
        );
        // A stale grant also overrides trust: the operator pinned a version.
        let stale = effective(
            "s",
            Source::Bundled,
            &caps(),
            &LimitSpec::default(),
            &fingerprint(b"v2", None),
            &cfg.trust,
            &cfg.grants,
        );
        assert_eq!(stale.capabilities, Capabilities::default());
    }

    #[test]
    fn a_request_naming_nothing_grants_everything_declared() {
        let limits = LimitSpec {
            memory_mb: Some(256),
            ..LimitSpec::default()
        };
        let (g, narrowed) = grant_for(&caps(), &limits, &GrantRequest::default(), "p".into());
        assert_eq!(g.capabilities, caps());
        assert_eq!(g.limits, limits);
        assert_eq!(g.pin, "p");
        assert_eq!(narrowed, None);
    }

    #[test]
    fn a_named_request_is_written_as_named_and_says_what_a_run_gets() {
        let limits = LimitSpec {
            timeout_ms: Some(9000),
            ..LimitSpec::default()
        };
        let asked = Capabilities {
            llm: true,
            http: vec!["evil.net".into()],
            ..Capabilities::default()
        };
        let request = GrantRequest {
            capabilities: asked.clone(),
            limits: false,
        };
        let (g, narrowed) = grant_for(&caps(), &limits, &request, "p".into());
        assert_eq!(g.capabilities, asked);
        assert!(g.limits.is_empty(), "limits only when asked");
        let gets = narrowed.expect("evil.net is not declared");
        assert!(gets.llm && gets.http.is_empty(), "{gets:?}");
        // Limits alone: no capability beyond computation, the limits raised.
        let only_limits = GrantRequest {
            capabilities: Capabilities::default(),
            limits: true,
        };
        let (g, narrowed) = grant_for(&caps(), &limits, &only_limits, "p".into());
        assert_eq!(g.capabilities, Capabilities::default());
        assert_eq!(g.limits, limits);
        assert_eq!(narrowed, None);
        assert_eq!(describe_limits(&g.limits), "timeout_ms 9000");
        assert_eq!(describe_limits(&LimitSpec::default()), "");
    }
}
