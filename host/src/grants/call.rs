//! A capability at call time: the host services it reaches (injected by
//! whoever runs the call, so that no capability depends on the stage that
//! provides its service), its per-call state, and the host functions it
//! links. The sandbox composes a call's state from these, one entry per
//! capability, and links every capability's functions once per engine.
//!
//! Adding one with an interface, per-call state and a host service of its
//! own, a made-up `counter` whose `increment` counts within one call and
//! reports each step to a tally the host keeps: the field
//! `pub counter: bool,` in `skill::Capabilities`, `mod counter;` and
//! `&counter::Counter,` in `CAPABILITIES`, and this folder,
//! `grants/counter/mod.rs` (`tests/capability_counter.rs` builds the crate
//! with exactly this and calls a handler that imports the interface):
//!
//! ```text
//! //! `counter`: the handler may count, through `skillhost:counter/counter`.
//!
//! use std::sync::Arc;
//!
//! use wasmtime::component::Val;
//!
//! use crate::grants::{CallSetup, Capability, CapabilityHost, Flag, HostInterface, Permit};
//! use crate::skill::Capabilities;
//!
//! const INTERFACE: &str = "skillhost:counter/counter";
//!
//! pub struct Counter;
//!
//! /// The host service: a tally of every count, over all calls.
//! pub trait Tally: Send + Sync {
//!     fn add(&self, skill: &str);
//! }
//!
//! /// One call's state: its count so far.
//! struct Count {
//!     skill: String,
//!     granted: bool,
//!     count: u32,
//!     tally: Option<Arc<dyn Tally>>,
//! }
//!
//! fn increment(host: &mut dyn CapabilityHost, _args: &[Val], results: &mut [Val]) -> wasmtime::Result<()> {
//!     let Some(state) = host.call_states().get_mut::<Count>() else {
//!         wasmtime::bail!("the counter is not set up for this call");
//!     };
//!     let answer = if state.granted {
//!         state.count += 1;
//!         if let Some(tally) = &state.tally {
//!             tally.add(&state.skill);
//!         }
//!         Ok(Some(Box::new(Val::U32(state.count))))
//!     } else {
//!         let why = format!("the counter is not granted to skill `{}`", state.skill);
//!         host.event(format!("denied: {why}"));
//!         Err(Some(Box::new(Val::String(why))))
//!     };
//!     results[0] = Val::Result(answer);
//!     Ok(())
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
//!         &[Permit { interface: INTERFACE, functions: &[] }]
//!     }
//!
//!     fn call_state(&self, call: &CallSetup<'_>) -> Option<Box<dyn std::any::Any + Send>> {
//!         Some(Box::new(Count {
//!             skill: call.skill.to_owned(),
//!             granted: call.granted.counter,
//!             count: 0,
//!             tally: call.services.get::<dyn Tally>(),
//!         }))
//!     }
//!
//!     fn host_interfaces(&self) -> &'static [HostInterface] {
//!         &[HostInterface { name: INTERFACE, functions: &[("increment", increment)] }]
//!     }
//! }
//! ```
//!
//! Its key, grant, flag, intersection, description, import permit,
//! per-call state, host function and service then all exist: the sandbox
//! links `increment` and makes a `Count` for every call; whoever runs the
//! call offers a `Tally` with `Services::with`.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use wasmtime::component::{Linker, Val};

use super::CAPABILITIES;
use crate::skill::Capabilities;

/// The host services a call may reach, by the trait they implement
/// (`dyn KvHost`, `dyn ModelHost`, ...); any may be absent, and a
/// capability whose service is absent answers "not found".
#[derive(Clone, Default)]
pub struct Services {
    by_type: ByType<Arc<dyn Any + Send + Sync>>,
}

impl Services {
    /// These services and `service` as the `S` of the call.
    pub fn with<S: ?Sized + Send + Sync + 'static>(mut self, service: Arc<S>) -> Self {
        self.by_type.insert(TypeId::of::<S>(), Arc::new(service));
        self
    }

    /// The service that implements `S`, if the host offers one.
    pub fn get<S: ?Sized + Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        self.by_type
            .get(TypeId::of::<S>())?
            .downcast_ref::<Arc<S>>()
            .cloned()
    }
}

impl fmt::Debug for Services {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Services")
            .field("offered", &self.by_type.len())
            .finish()
    }
}

/// What a capability makes its per-call state from.
pub struct CallSetup<'a> {
    /// The calling skill.
    pub skill: &'a str,
    /// The call's effective grants (declared ∩ granted).
    pub granted: &'a Capabilities,
    pub services: &'a Services,
}

/// The per-call state of every capability that keeps one, by its type.
#[derive(Default)]
pub struct CallStates {
    by_type: ByType<Box<dyn Any + Send>>,
}

impl CallStates {
    /// Each capability's state for the call `setup` describes.
    pub fn new(setup: &CallSetup<'_>) -> Self {
        let mut states = CallStates {
            by_type: ByType(Vec::with_capacity(CAPABILITIES.len())),
        };
        for cap in CAPABILITIES {
            if let Some(state) = cap.call_state(setup) {
                // `Box<dyn Any>` derefs to the state itself: its type is the key.
                states.by_type.insert((*state).type_id(), state);
            }
        }
        states
    }

    /// The state of type `T`, if its capability keeps one.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.by_type.get(TypeId::of::<T>())?.downcast_ref()
    }

    /// The state of type `T`, mutable.
    pub fn get_mut<T: Any>(&mut self) -> Option<&mut T> {
        self.by_type.get_mut(TypeId::of::<T>())?.downcast_mut()
    }
}

/// Values keyed by their type. A call has a few (at most one per
/// capability), built anew for every call: a list searched in order costs
/// less there than a hash map's hashing, random seed and growth.
#[derive(Clone)]
struct ByType<V>(Vec<(TypeId, V)>);

impl<V> Default for ByType<V> {
    fn default() -> Self {
        ByType(Vec::new())
    }
}

impl<V> ByType<V> {
    /// Sets the value of `key`, replacing one there was.
    fn insert(&mut self, key: TypeId, value: V) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    fn get(&self, key: TypeId) -> Option<&V> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    fn get_mut(&mut self, key: TypeId) -> Option<&mut V> {
        self.0.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// What a call's store data gives the capabilities' host functions: their
/// states, and the call's log of denials and other host events.
pub trait CapabilityHost: Send + 'static {
    fn call_states(&mut self) -> &mut CallStates;
    /// Notes a host event (e.g. a denial) in the run record.
    fn event(&mut self, event: String);
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

/// An interface of a capability's own (not `skillhost:skill/host`) whose
/// functions the host implements: linked once per engine by the sandbox,
/// typed by what the importing component declares, and checked against
/// the grant when called (see [`Capability::host_interfaces`](super::Capability::host_interfaces)).
pub struct HostInterface {
    /// `package:name/interface`, as a component imports it.
    pub name: &'static str,
    pub functions: &'static [(&'static str, HostFn)],
}

/// A host function: the call's store data, the guest's arguments, and the
/// results to fill in. An `Err` traps the guest (a broken call, not a
/// refusal: a refusal is a value of the interface's result type).
pub type HostFn = fn(&mut dyn CapabilityHost, &[Val], &mut [Val]) -> wasmtime::Result<()>;

/// Whether `import` (`package:name/interface`, a version after `@` or
/// not) is an interface of a capability's own, which the sandbox links.
pub fn is_host_interface(import: &str) -> bool {
    let name = import.split('@').next().unwrap_or(import);
    CAPABILITIES
        .iter()
        .any(|c| c.host_interfaces().iter().any(|i| i.name == name))
}

/// Links every capability's own interfaces into `linker`.
pub fn link_host_interfaces<T: CapabilityHost>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    for cap in CAPABILITIES {
        for interface in cap.host_interfaces() {
            let mut instance = linker.instance(interface.name)?;
            for &(name, function) in interface.functions {
                instance.func_new(name, move |mut store, _type, args, results| {
                    function(store.data_mut(), args, results)
                })?;
            }
        }
    }
    Ok(())
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

    trait Greeter: Send + Sync {
        fn hello(&self) -> &'static str;
    }
    struct En;
    impl Greeter for En {
        fn hello(&self) -> &'static str {
            "hello"
        }
    }

    #[test]
    fn a_service_is_found_by_the_trait_it_was_offered_as() {
        let services = Services::default().with::<dyn Greeter>(Arc::new(En));
        assert_eq!(
            services.get::<dyn Greeter>().map(|g| g.hello()),
            Some("hello")
        );
        assert!(services.get::<En>().is_none(), "offered as the trait only");
        assert!(Services::default().get::<dyn Greeter>().is_none());
    }

    struct Fr;
    impl Greeter for Fr {
        fn hello(&self) -> &'static str {
            "bonjour"
        }
    }

    #[test]
    fn a_service_offered_again_replaces_the_first() {
        let services = Services::default()
            .with::<dyn Greeter>(Arc::new(En))
            .with::<dyn Greeter>(Arc::new(Fr));
        assert_eq!(
            services.get::<dyn Greeter>().map(|g| g.hello()),
            Some("bonjour")
        );
        assert_eq!(format!("{services:?}"), "Services { offered: 1 }");
    }
}
