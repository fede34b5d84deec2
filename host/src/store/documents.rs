//! Documents that the hosts on one store share ([`SharedState`]). Only a
//! store that several hosts use has them (see
//! [`RunStore::shared`](super::RunStore::shared)).

use super::StoreError;

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
