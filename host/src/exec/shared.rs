//! State that hosts on one shared store hold in common (see
//! [`SharedState`](crate::store::SharedState)): the learned rules ([`crate::learn::book`]), the
//! workspace's grants and the forged and installed skills (both in
//! [`crate::shared`]). A runner follows it (`shared::follow`): before each
//! run it takes in what another host changed, once the store announced a
//! change.

use std::sync::Arc;

use super::Runner;
use crate::grants::Grants;
use crate::shared::follow::{RulesUnread, TakeIn};

/// The grants of a host's own files with the shared ones over them.
fn merged(files: &Grants, shared: Grants) -> Grants {
    let mut all = files.clone();
    all.extend(shared);
    all
}

/// What a runner does with what other hosts changed.
impl TakeIn for Runner {
    fn reload_rules(&self) -> Result<(), RulesUnread> {
        match &self.shared.learning {
            Some(l) => l.reload().map_err(Into::into),
            None => Ok(()),
        }
    }

    fn shared_grants(&self, shared: Grants) {
        let s = &self.shared;
        *s.grants.write().unwrap_or_else(|p| p.into_inner()) =
            Arc::new(merged(&s.config.grants, shared));
    }

    fn skills_changed(&self) {
        self.reload_catalog();
    }
}

impl Runner {
    /// Takes in what other hosts on a shared store changed since this
    /// runner last looked: rules, grants, skills (see
    /// [`Follower::catch_up`](crate::shared::follow::Follower::catch_up)).
    /// Nothing to do on a store of one host's own.
    pub fn catch_up(&self) {
        let s = &self.shared;
        let Some(Ok(store)) = s.store.existing_store() else {
            return;
        };
        if let Some(shared) = store.shared() {
            s.follower.catch_up(shared, &s.paths, self);
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
