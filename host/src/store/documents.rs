//! Documents that the hosts on one store share ([`SharedState`]). Only a
//! store that several hosts use has them (see
//! [`RunStore::shared`](super::RunStore::shared)).

use std::sync::Arc;

use super::{RunStore, StoreError};

/// An edit of a shared document: its current body (None: none yet) to the
/// new one (None: leave it as it is).
pub type DocEdit<'a> = dyn FnMut(Option<&[u8]>) -> Option<Vec<u8>> + 'a;

/// One document of [`SharedState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedDoc {
    /// Grows with every write of any document (see
    /// [`SharedState::generation`]).
    pub version: i64,
    pub body: Vec<u8>,
}

/// State that the hosts on one store share and change whole, by name: the
/// learned rules, the operators' grants, the forged and installed skills.
/// A host on its own keeps these as files a person can read and edit
/// (`rules.json`, `skillhost.toml`, skill folders); where many hosts share
/// one database, the database holds them, so that a change on one host
/// takes effect on every other: each hears of it ([`changes`](Self::changes))
/// and reads again what is newer than the [`generation`](Self::generation)
/// it last saw.
pub trait SharedState: Send + Sync {
    /// The latest version of any document (0: none yet). A host that finds
    /// it unchanged has nothing to read again.
    fn generation(&self) -> Result<i64, StoreError>;

    /// The document `name`, if there is one.
    fn read(&self, name: &str) -> Result<Option<SharedDoc>, StoreError>;

    /// Names and versions of the documents whose name starts with `prefix`,
    /// by name.
    fn list(&self, prefix: &str) -> Result<Vec<(String, i64)>, StoreError>;

    /// Replaces `name` with what `edit` makes of its current body (None:
    /// no document yet) while no other host can change it: two hosts
    /// editing at once each see the other's edit. `edit` answering None
    /// leaves the document as it is. Answers the new version, if written.
    fn update(&self, name: &str, edit: &mut DocEdit<'_>) -> Result<Option<i64>, StoreError>;

    /// A receiver that hears (its value changes) when any host may have
    /// changed a document: for a host that acts on changes between runs
    /// (a server telling its clients that the skills changed). None where
    /// the store cannot announce changes; the generation still tells.
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

/// The documents of a store that hosts share, with where the store is
/// (for messages), borrowed: what a reader or writer of shared documents
/// needs of the store, and nothing else of it.
#[derive(Clone, Copy)]
pub struct SharedStore<'a> {
    store: &'a dyn RunStore,
    documents: &'a dyn SharedState,
}

impl<'a> SharedStore<'a> {
    /// `store`'s shared documents; None when hosts do not share it.
    pub fn of(store: &'a dyn RunStore) -> Option<SharedStore<'a>> {
        store
            .shared()
            .map(|documents| SharedStore { store, documents })
    }

    pub fn documents(&self) -> &'a dyn SharedState {
        self.documents
    }

    /// Where the store is, for messages: a server address.
    pub fn location(&self) -> String {
        self.store.location()
    }
}

/// A [`SharedStore`] kept open by whoever holds this.
#[derive(Clone)]
pub struct SharedStoreHandle(Arc<dyn RunStore>);

impl SharedStoreHandle {
    /// `store`, if hosts share it.
    pub fn of(store: Arc<dyn RunStore>) -> Option<SharedStoreHandle> {
        store.shared().is_some().then_some(SharedStoreHandle(store))
    }

    /// Its shared documents, borrowed (as [`SharedStore::of`] finds them).
    pub fn get(&self) -> Option<SharedStore<'_>> {
        SharedStore::of(self.0.as_ref())
    }
}
