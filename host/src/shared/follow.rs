//! Following a shared store: a host takes in what other hosts changed
//! (rules, grants, skills) once the store announced a change, so what one
//! host changes is what every other host uses, milliseconds later,
//! without a restart.

use std::sync::Mutex;

use crate::grants::Grants;
use crate::paths::Paths;
use crate::store::SharedState;
use crate::types::lock;

/// Why the shared rules could not be read again.
pub type RulesUnread = Box<dyn std::error::Error + Send + Sync>;

/// What a host does with what it took in.
pub trait TakeIn {
    /// Reads the shared learned rules again (they are kept by `learn`).
    fn reload_rules(&self) -> Result<(), RulesUnread>;
    /// The shared grants, to hold over the host's own.
    fn shared_grants(&self, shared: Grants);
    /// Forged or installed skills were written into the roots.
    fn skills_changed(&self);
}

/// How far a host has followed its shared store: the generation it last
/// took in, and the receiver of the store's announcements.
#[derive(Default)]
pub struct Follower {
    seen: Mutex<Option<i64>>,
    heard: Mutex<Option<tokio::sync::watch::Receiver<u64>>>,
}

impl Follower {
    /// Takes in what changed since the last look. The first call reads
    /// the store; later calls read it again only once the store announced
    /// a change (see [`SharedState::changes`]): a check of a counter, no
    /// query, so the run path costs what it costs on one host. (Asking
    /// the store on every call tripled a call's median time under load.)
    /// When the store cannot be asked, runs go on with what was last seen.
    pub fn catch_up(&self, shared: &dyn SharedState, paths: &Paths, host: &dyn TakeIn) {
        if self.quiet(shared) {
            return;
        }
        let generation = match shared.generation() {
            Ok(g) => g,
            Err(e) => {
                tracing::warn!("cannot ask the shared store for changes: {e}");
                return;
            }
        };
        let caught_up = |seen: &Option<i64>| seen.is_some_and(|s| s >= generation);
        if caught_up(&lock(&self.seen)) {
            return;
        }
        // Held while catching up: a run that starts meanwhile waits for
        // the new state rather than running on the old.
        let mut seen = lock(&self.seen);
        if caught_up(&seen) {
            return;
        }
        // What failed is read again on the next run.
        if take_in(shared, paths, host) {
            *seen = Some(generation);
        }
    }

    /// No announcement since the last complete look.
    fn quiet(&self, shared: &dyn SharedState) -> bool {
        let mut heard = lock(&self.heard);
        if heard.is_none() {
            *heard = shared.changes();
        }
        let Some(heard) = heard.as_mut() else {
            return false;
        };
        // A store that stopped announcing (`Err`) is asked.
        let quiet = !heard.has_changed().unwrap_or(true);
        if quiet && lock(&self.seen).is_some() {
            return true;
        }
        // Before reading: a change made meanwhile is heard next time.
        heard.mark_unchanged();
        false
    }
}

/// Reads the rules, grants and skills; whether all of it was read.
fn take_in(shared: &dyn SharedState, paths: &Paths, host: &dyn TakeIn) -> bool {
    let mut complete = true;
    if let Err(e) = host.reload_rules() {
        tracing::warn!("cannot read the shared rules: {e}");
        complete = false;
    }
    match super::grants::shared_grants(shared) {
        Ok(g) => host.shared_grants(g),
        Err(e) => {
            tracing::warn!("cannot read the shared grants: {e}");
            complete = false;
        }
    }
    match super::skills::materialize(paths, shared) {
        Ok(true) => host.skills_changed(),
        Ok(false) => {}
        Err(e) => {
            tracing::warn!("cannot take in the shared skills: {e}");
            complete = false;
        }
    }
    complete
}
