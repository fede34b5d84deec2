//! State that hosts on one shared store hold in common (see
//! [`SharedState`](crate::store::SharedState)): the learned rules ([`crate::learn::book`]), the
//! workspace's grants and the forged and installed skills (both in
//! [`crate::shared`]). A runner catches up with it before each run
//! once the store announced a change, so what one host changes is what
//! every other host uses, milliseconds later, without a restart.

use std::sync::Arc;

use super::{Runner, lock};
use crate::grants::Grants;
use crate::shared::grants::shared_grants;
use crate::shared::skills;

/// The grants of a host's own files with the shared ones over them.
fn merged(files: &Grants, shared: Grants) -> Grants {
    let mut all = files.clone();
    all.extend(shared);
    all
}

impl Runner {
    /// Takes in what other hosts on a shared store changed since this
    /// runner last looked: rules, grants, skills. Nothing to do on a store
    /// of one host's own. On a shared one the first call reads the store,
    /// and later calls read it again only once the store announced a
    /// change (see [`SharedState::changes`](crate::store::SharedState::changes)): a check of a counter, no
    /// query, so the run path costs what it costs on one host. (Asking the
    /// store on every call tripled a call's median time under load.) A
    /// change on another host thus holds here once its announcement
    /// arrived, milliseconds after it was made. When the store cannot be
    /// asked, runs go on with what was last seen.
    pub fn catch_up(&self) {
        let s = &self.shared;
        let Some(Ok(store)) = s.store.existing_store() else {
            return;
        };
        let Some(shared) = store.shared() else {
            return;
        };
        {
            let mut heard = lock(&s.shared_heard);
            if heard.is_none() {
                *heard = shared.changes();
            }
            if let Some(heard) = heard.as_mut() {
                // A store that stopped announcing (`Err`) is asked.
                let quiet = !heard.has_changed().unwrap_or(true);
                if quiet && lock(&s.shared_seen).is_some() {
                    return;
                }
                // Before reading: a change made meanwhile is heard next time.
                heard.mark_unchanged();
            }
        }
        let generation = match shared.generation() {
            Ok(g) => g,
            Err(e) => {
                tracing::warn!("cannot ask the shared store for changes: {e}");
                return;
            }
        };
        let caught_up = |seen: &Option<i64>| seen.is_some_and(|s| s >= generation);
        if caught_up(&lock(&s.shared_seen)) {
            return;
        }
        // Held while catching up: a run that starts meanwhile waits for
        // the new state rather than running on the old.
        let mut seen = lock(&s.shared_seen);
        if caught_up(&seen) {
            return;
        }
        let mut complete = true;
        if let Some(l) = &s.learning
            && let Err(e) = l.reload()
        {
            tracing::warn!("cannot read the shared rules: {e}");
            complete = false;
        }
        match shared_grants(shared) {
            Ok(g) => {
                *s.grants.write().unwrap_or_else(|p| p.into_inner()) =
                    Arc::new(merged(&s.config.grants, g));
            }
            Err(e) => {
                tracing::warn!("cannot read the shared grants: {e}");
                complete = false;
            }
        }
        match skills::materialize(&s.paths, shared) {
            Ok(true) => {
                self.reload_catalog();
            }
            Ok(false) => {}
            Err(e) => {
                tracing::warn!("cannot take in the shared skills: {e}");
                complete = false;
            }
        }
        // What failed is read again on the next run.
        if complete {
            *seen = Some(generation);
        }
    }

    /// A receiver that hears when another host on a shared store may have
    /// changed something (see [`SharedState::changes`](crate::store::SharedState::changes)); None on a store
    /// of this host's own.
    pub fn shared_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        let Some(Ok(store)) = self.shared.store.existing_store() else {
            return None;
        };
        store.shared()?.changes()
    }

    /// The operator grants in force: the host's files', with the shared
    /// ones over them (see [`Runner::catch_up`]).
    pub fn grants(&self) -> Arc<Grants> {
        self.shared
            .grants
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
