//! A capability at call time, typed end to end: the host service it
//! reaches (offered by whoever runs the call, so that no capability
//! depends on the stage that provides it), its per-call state, and the
//! host functions it links, through a projection from the call's store
//! data onto its own state. [`capabilities!`] writes, from one list, the
//! registry, the struct of every capability's service ([`Services`](super::Services))
//! and the struct of every capability's state ([`CallStates`](super::CallStates)),
//! so a state or service that a capability or its caller names and the
//! call does not have is a compile error, not a failure at run time.
//!
//! Adding one with an interface, per-call state and a host service of its
//! own, a made-up `counter` whose `increment` counts within one call and
//! reports each step to a tally the host keeps: the field
//! `pub counter: bool,` in `skill::Capabilities`, `mod counter;` and the
//! entry `counter: counter::Counter,` in the `capabilities!` list of
//! `grants/mod.rs`, and this folder, `grants/counter/mod.rs`
//! (`tests/capability_counter.rs` builds the crate with exactly this and
//! calls a handler that imports the interface):
//!
//! ```text
//! //! `counter`: the handler may count, through `skillhost:counter/counter`.
//!
//! use std::sync::Arc;
//!
//! use wasmtime::component::{HasSelf, Linker};
//!
//! use crate::grants::{CallSetup, Capability, Events, Flag, HostCapability, Offer, Permit, Services};
//! use crate::skill::Capabilities;
//!
//! wasmtime::component::bindgen!({
//!     inline: "
//!         package skillhost:counter;
//!
//!         interface counter {
//!             increment: func() -> result<u32, string>;
//!         }
//!
//!         world counter-host {
//!             import counter;
//!         }
//!     ",
//! });
//!
//! use skillhost::counter::counter as wit;
//!
//! pub struct Counter;
//!
//! /// The host service: a tally of every count, over all calls.
//! pub trait Tally: Send + Sync {
//!     fn add(&self, skill: &str);
//! }
//!
//! impl Offer for Arc<dyn Tally> {
//!     fn offer(self, to: &mut Services) {
//!         to.counter = Some(self);
//!     }
//! }
//!
//! /// One call's state: its count so far.
//! pub struct Count {
//!     skill: String,
//!     granted: bool,
//!     count: u32,
//!     tally: Option<Arc<dyn Tally>>,
//!     events: Events,
//! }
//!
//! impl wit::Host for Count {
//!     fn increment(&mut self) -> Result<u32, String> {
//!         if !self.granted {
//!             let why = format!("the counter is not granted to skill `{}`", self.skill);
//!             self.events.note(format!("denied: {why}"));
//!             return Err(why);
//!         }
//!         self.count += 1;
//!         if let Some(tally) = &self.tally {
//!             tally.add(&self.skill);
//!         }
//!         Ok(self.count)
//!     }
//! }
//!
//! impl HostCapability for Counter {
//!     type Service = Option<Arc<dyn Tally>>;
//!     type State = Count;
//!     const INTERFACES: &'static [&'static str] = &["skillhost:counter/counter"];
//!
//!     fn call_state(call: &CallSetup<'_>, tally: &Self::Service) -> Count {
//!         Count {
//!             skill: call.skill.to_owned(),
//!             granted: call.granted.counter,
//!             count: 0,
//!             tally: tally.clone(),
//!             events: call.events.clone(),
//!         }
//!     }
//!
//!     fn add_to_linker<T: Send + 'static>(
//!         linker: &mut Linker<T>,
//!         project: fn(&mut T) -> &mut Count,
//!     ) -> wasmtime::Result<()> {
//!         wit::add_to_linker::<T, HasSelf<Count>>(linker, project)
//!     }
//! }
//!
//! impl Capability for Counter {
//!     fn key(&self) -> &'static str {
//!         "counter"
//!     }
//!
//!     fn flags(&self) -> &'static [Flag] {
//!         &[Flag { name: "counter", value_name: None, help: "Let the handler count" }]
//!     }
//!
//!     fn grant_from_flag(&self, _flag: &str, _values: &[String], into: &mut Capabilities) {
//!         into.counter = true;
//!     }
//!
//!     fn intersect(&self, declared: &Capabilities, granted: &Capabilities, into: &mut Capabilities) {
//!         into.counter = declared.counter && granted.counter;
//!     }
//!
//!     fn describe(&self, c: &Capabilities) -> Vec<String> {
//!         if c.counter { vec!["counter".into()] } else { Vec::new() }
//!     }
//!
//!     fn imports(&self) -> &'static [Permit] {
//!         &[Permit { interface: "skillhost:counter/counter", functions: &[] }]
//!     }
//! }
//! ```
//!
//! Its key, grant, flag, intersection, description, import permit,
//! per-call state, host function and service then all exist: the entry
//! gives `CallStates` a `counter: Count` and `Services` a `counter:
//! Option<Arc<dyn Tally>>`; the sandbox makes a `Count` for every call
//! and links `increment` with the projection `|s| &mut s.calls.counter`;
//! whoever runs the call offers a tally with `Services::with`. Leave out
//! the entry, `call_state` or the service's `Offer`, or offer a tally as
//! its concrete type rather than `dyn Tally`, and the crate does not
//! compile (`tests/capability_counter.rs` shows each).

use std::sync::{Arc, Mutex};

use wasmtime::component::{ComponentType, Lift, Linker, Lower};

use super::{CallStates, Services};
use crate::skill::Capabilities;
use crate::types::ServiceError;

/// The interface kv, llm and tools share with the sandbox's `log`, as a
/// component imports it (`wit/skill.wit`); each links its own functions
/// into it.
pub const HOST_INTERFACE: &str = "skillhost:skill/host@0.1.0";

/// A capability's part in a call: the service it is offered, the state it
/// keeps for the call, and the host functions it links. What the guest
/// may do is still checked by the state against the call's grant when a
/// function is called.
pub trait HostCapability {
    /// The host service whoever runs a call offers it (`Option<Arc<dyn
    /// Trait>>`, `None` when the host has none), or `()`.
    type Service: Clone + Default + Send + Sync + 'static;
    /// Its state for one call, `()` when it keeps none.
    type State: Send + 'static;
    /// Interfaces of its own (`package:name/interface`, not
    /// `skillhost:skill/host`) that `add_to_linker` links.
    const INTERFACES: &'static [&'static str] = &[];
    /// Its state for the call `call` describes, with the service offered.
    fn call_state(call: &CallSetup<'_>, service: &Self::Service) -> Self::State;
    /// Links its host functions, once per engine; each reaches the
    /// call's state through `project`.
    fn add_to_linker<T: Send + 'static>(
        _linker: &mut Linker<T>,
        _project: fn(&mut T) -> &mut Self::State,
    ) -> wasmtime::Result<()> {
        Ok(())
    }
}

/// What a capability makes its per-call state from.
pub struct CallSetup<'a> {
    /// The calling skill.
    pub skill: &'a str,
    /// The call's effective grants (declared ∩ granted).
    pub granted: &'a Capabilities,
    /// The call's log of host events, for denials and other notes.
    pub events: &'a Events,
}

/// A host service a call may be offered ([`Services::with`]): each
/// capability implements it for the service type it takes, writing its
/// own field, so a service offered as any other type does not compile.
pub trait Offer {
    fn offer(self, to: &mut Services);
}

impl Services {
    /// These services and `service`, in the field of its capability.
    pub fn with(mut self, service: impl Offer) -> Self {
        service.offer(&mut self);
        self
    }
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services").finish_non_exhaustive()
    }
}

/// What the call's store data gives the capabilities' host functions:
/// the struct of their states, each of which they reach by its field.
pub trait CapabilityHost: Send + 'static {
    fn call_states(&mut self) -> &mut CallStates;
}

/// Events (denials, requests, tool calls) kept per call; later ones are
/// counted, not kept.
pub const MAX_EVENTS: usize = 256;

/// A call's log of host events (denials, requests, tool runs) for the run
/// record, held by each capability's state and the sandbox's guards. The
/// first [`MAX_EVENTS`] are kept, the rest only counted, so a guest that
/// makes millions of denied calls holds no more host memory than one that
/// makes a few hundred.
#[derive(Clone, Default)]
pub struct Events(Arc<Mutex<EventLog>>);

#[derive(Default)]
struct EventLog {
    kept: Vec<String>,
    dropped: u64,
}

impl Events {
    /// Notes `event`.
    pub fn note(&self, event: String) {
        if let Ok(mut log) = self.0.lock() {
            if log.kept.len() < MAX_EVENTS {
                log.kept.push(event);
            } else {
                log.dropped += 1;
            }
        }
    }

    /// The events so far, with a line for those not kept; the log is
    /// then empty.
    pub fn take(&self) -> Vec<String> {
        let Ok(mut log) = self.0.lock() else {
            return Vec::new();
        };
        let mut out = std::mem::take(&mut log.kept);
        if log.dropped > 0 {
            out.push(format!("{} more events not kept", log.dropped));
            log.dropped = 0;
        }
        out
    }
}

/// Why a host call of [`HOST_INTERFACE`] did not succeed: its
/// `host-error` variant, as the guest receives it.
#[derive(ComponentType, Lift, Lower, Debug, Clone, PartialEq, Eq)]
#[component(variant)]
pub enum HostError {
    #[component(name = "denied")]
    Denied(String),
    #[component(name = "not-found")]
    NotFound(String),
    #[component(name = "failed")]
    Failed(String),
    #[component(name = "limit")]
    Limit(String),
}

impl From<ServiceError> for HostError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Denied(m) => HostError::Denied(m),
            ServiceError::NotFound(m) => HostError::NotFound(m),
            ServiceError::Failed(m) => HostError::Failed(m),
            ServiceError::Limit(m) => HostError::Limit(m),
        }
    }
}

/// Why a capability refused a host call before reaching its service.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not granted: the message names what was missing. The host notes
    /// it among the call's events.
    #[error("{0}")]
    Denied(String),
    /// Over a size limit of the interface.
    #[error("{0}")]
    Limit(String),
    /// Granted, but this host offers no such service.
    #[error("{0}")]
    NotFound(String),
}

impl Refusal {
    /// The refusal as the guest sees it; a denial is noted in `events`.
    pub fn to_guest(self, events: &Events) -> HostError {
        match self {
            Refusal::Denied(what) => {
                events.note(format!("denied: {what}"));
                HostError::Denied(what)
            }
            Refusal::Limit(m) => HostError::Limit(m),
            Refusal::NotFound(m) => HostError::NotFound(m),
        }
    }
}

/// Writes, from the list of every capability (`field: path::Type`, in
/// the order grants are described): the registry `CAPABILITIES`;
/// `Services` and `CallStates`, with one field per capability of its
/// [`HostCapability`] service and state types; `CallStates::new`;
/// `link_capabilities`, which links each capability's host functions with
/// the projection onto its field; and `is_host_interface`.
macro_rules! capabilities {
    ($($field:ident: $cap:path),+ $(,)?) => {
        /// Every capability, in the order grants are described.
        pub const CAPABILITIES: &[&dyn Capability] = &[$(&$cap),+];

        /// The host services a call may reach, one field per capability
        /// (`None` when the host offers none: the capability answers "not
        /// found"). Offered with [`Services::with`].
        #[derive(Clone, Default)]
        pub struct Services {
            $(pub $field: <$cap as HostCapability>::Service,)+
        }

        /// Every capability's state for one call.
        pub struct CallStates {
            $(pub $field: <$cap as HostCapability>::State,)+
        }

        impl CallStates {
            /// Each capability's state for the call `setup` describes.
            pub fn new(setup: &CallSetup<'_>, services: &Services) -> Self {
                CallStates {
                    $($field: <$cap as HostCapability>::call_state(setup, &services.$field),)+
                }
            }
        }

        /// Links every capability's host functions into `linker`, each
        /// through the projection of the call's data onto its state.
        pub fn link_capabilities<T: CapabilityHost>(
            linker: &mut wasmtime::component::Linker<T>,
        ) -> wasmtime::Result<()> {
            $(<$cap as HostCapability>::add_to_linker(
                linker,
                |data: &mut T| &mut data.call_states().$field,
            )?;)+
            Ok(())
        }

        /// Whether `import` (`package:name/interface`, a version after `@`
        /// or not) is an interface of a capability's own, which the
        /// sandbox links.
        pub fn is_host_interface(import: &str) -> bool {
            let name = import.split('@').next().unwrap_or(import);
            false $(|| <$cap as HostCapability>::INTERFACES.contains(&name))+
        }
    };
}

/// Truncates `s` to at most `max` bytes on a character boundary, saying
/// how much was cut: for names a guest sent, quoted back in a denial.
pub(crate) fn truncated(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [truncated {} bytes]", &s[..end], s.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grants::{KvHost, ModelHost};
    use crate::types::BoxFuture;

    struct NoKv;
    impl KvHost for NoKv {
        fn get(&self, _: &str, _: &str) -> Result<Option<Vec<u8>>, ServiceError> {
            Ok(None)
        }
        fn set(&self, _: &str, _: &str, _: &[u8]) -> Result<(), ServiceError> {
            Ok(())
        }
        fn delete(&self, _: &str, _: &str) -> Result<(), ServiceError> {
            Ok(())
        }
    }

    struct Echo;
    impl ModelHost for Echo {
        fn complete<'a>(
            &'a self,
            _system: Option<&'a str>,
            prompt: &'a str,
        ) -> BoxFuture<'a, Result<String, ServiceError>> {
            Box::pin(async move { Ok(prompt.to_owned()) })
        }
    }

    #[test]
    fn a_service_lands_in_its_capabilitys_field_and_no_other() {
        let kv: Arc<dyn KvHost> = Arc::new(NoKv);
        let services = Services::default().with(kv.clone());
        assert!(services.kv.as_ref().is_some_and(|s| Arc::ptr_eq(s, &kv)));
        assert!(services.llm.is_none() && services.tools.is_none());
        let model: Arc<dyn ModelHost> = Arc::new(Echo);
        let again: Arc<dyn KvHost> = Arc::new(NoKv);
        let services = services.with(model).with(again.clone());
        assert!(services.llm.is_some());
        assert!(
            services.kv.is_some_and(|s| Arc::ptr_eq(&s, &again)),
            "offered again, replaced"
        );
    }

    #[test]
    fn each_capability_makes_its_state_from_its_own_service() {
        let events = Events::default();
        let granted = Capabilities {
            kv: true,
            ..Capabilities::default()
        };
        let setup = CallSetup {
            skill: "s",
            granted: &granted,
            events: &events,
        };
        let kv: Arc<dyn KvHost> = Arc::new(NoKv);
        let states = CallStates::new(&setup, &Services::default().with(kv));
        assert!(states.kv.access("k").is_ok());
        assert!(matches!(states.llm.access(1), Err(Refusal::Denied(_))));
        let bare = CallStates::new(&setup, &Services::default());
        assert!(matches!(bare.kv.access("k"), Err(Refusal::NotFound(_))));
    }

    #[test]
    fn a_denial_is_noted_and_events_past_the_cap_are_counted() {
        let events = Events::default();
        let e = Refusal::Denied("no".into()).to_guest(&events);
        assert_eq!(e, HostError::Denied("no".into()));
        assert_eq!(
            Refusal::Limit("big".into()).to_guest(&events),
            HostError::Limit("big".into())
        );
        assert_eq!(events.take(), vec!["denied: no".to_owned()]);
        for i in 0..MAX_EVENTS + 3 {
            events.clone().note(format!("e{i}"));
        }
        let kept = events.take();
        assert_eq!(kept.len(), MAX_EVENTS + 1);
        assert_eq!(
            kept.last().map(String::as_str),
            Some("3 more events not kept")
        );
        assert!(events.take().is_empty());
    }

    #[test]
    fn the_shared_interface_is_no_capabilitys_own() {
        // kv, llm and tools link into `skillhost:skill/host`, beside the
        // sandbox's `log`; it is not an interface of one capability.
        assert!(!crate::grants::is_host_interface(HOST_INTERFACE));
        assert!(!crate::grants::is_host_interface(
            "skillhost:nobody/none@1.0.0"
        ));
    }
}
