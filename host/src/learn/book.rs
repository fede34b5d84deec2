//! Where the learned rules are kept. A host on its own keeps them in
//! `.skillhost/learning/rules.json`, a file a person can read, diff and
//! edit, changed under `rules.json.lock`. Hosts that share a PostgreSQL
//! store keep them in it, as its shared document [`RULES_DOC`], changed
//! under the store's lock: a rule learned, edited or disabled on one host
//! is the rule every other host applies once it hears of the change.
//!
//! Every read-modify-write of the rules (a run's statistics, a learning
//! cycle, a proposal, an operator's edit) goes through [`RulesAt::update`],
//! so none loses another's change, on one machine or many.

use std::path::{Path, PathBuf};

use super::rules::{RuleSet, RulesError};
use crate::store::{SharedState, SharedStore, SharedStoreHandle};

/// The shared document holding the rules (JSON, as `rules.json`).
pub const RULES_DOC: &str = "rules";

/// Where the rules are, owned (a [`Learning`](super::Learning) keeps one).
#[derive(Clone)]
pub struct RuleBook {
    /// `rules.json`, used unless the store is shared.
    path: PathBuf,
    shared: Option<SharedStoreHandle>,
}

impl RuleBook {
    /// The rules file at `path`.
    pub fn file(path: PathBuf) -> RuleBook {
        RuleBook { path, shared: None }
    }

    /// The workspace's rules: in the `shared` store when hosts share one,
    /// else in `rules.json` under `state_dir`.
    pub fn of(state_dir: &Path, shared: Option<SharedStoreHandle>) -> RuleBook {
        RuleBook {
            path: super::rules_path(state_dir),
            shared,
        }
    }

    pub fn at(&self) -> RulesAt<'_> {
        RulesAt::of(
            self.shared.as_ref().and_then(SharedStoreHandle::get),
            &self.path,
        )
    }
}

/// Where the rules are, borrowed: a file, or a shared store's document.
#[derive(Clone, Copy)]
pub enum RulesAt<'a> {
    File(&'a Path),
    Shared(SharedStore<'a>),
}

impl<'a> RulesAt<'a> {
    /// The rules of a workspace: the `shared` store's when hosts share
    /// one, else the file at `path`.
    pub fn of(shared: Option<SharedStore<'a>>, path: &'a Path) -> RulesAt<'a> {
        match shared {
            Some(store) => RulesAt::Shared(store),
            None => RulesAt::File(path),
        }
    }

    /// For messages: the file, or the store.
    pub fn describe(&self) -> String {
        match self {
            RulesAt::File(path) => path.display().to_string(),
            RulesAt::Shared(store) => format!("the rules shared in {}", store.location()),
        }
    }

    fn shared_error(&self, source: crate::store::StoreError) -> RulesError {
        RulesError::Shared {
            location: self.describe(),
            source,
        }
    }

    /// Whether any rule was ever written.
    pub fn exists(&self) -> Result<bool, RulesError> {
        match self {
            RulesAt::File(path) => Ok(path.exists()),
            RulesAt::Shared(store) => store
                .documents()
                .read(RULES_DOC)
                .map(|d| d.is_some())
                .map_err(|e| self.shared_error(e)),
        }
    }

    /// The rules (none written yet: an empty set).
    pub fn load(&self) -> Result<RuleSet, RulesError> {
        match self {
            RulesAt::File(path) => RuleSet::load(path),
            RulesAt::Shared(store) => match store.documents().read(RULES_DOC) {
                Ok(Some(doc)) => self.parse(&doc.body),
                Ok(None) => Ok(RuleSet::default()),
                Err(e) => Err(self.shared_error(e)),
            },
        }
    }

    fn parse(&self, body: &[u8]) -> Result<RuleSet, RulesError> {
        serde_json::from_slice(body).map_err(|e| RulesError::SharedParse {
            location: self.describe(),
            message: e.to_string(),
        })
    }

    /// Read-modify-write, with every other writer (process or host) held
    /// off: `edit` changes the rules and answers whether to save them,
    /// with a value. Answers that value and the rules as they now are.
    pub fn update<T, E: From<RulesError>>(
        &self,
        edit: impl FnOnce(&mut RuleSet) -> Result<(T, bool), E>,
    ) -> Result<(T, RuleSet), E> {
        match self {
            RulesAt::File(path) => {
                let _lock = super::lock(path);
                let mut set = RuleSet::load(path)?;
                let (value, save) = edit(&mut set)?;
                if save {
                    set.save(path)?;
                }
                Ok((value, set))
            }
            RulesAt::Shared(store) => self.update_shared(store.documents(), edit),
        }
    }

    /// [`RulesAt::update`] of the shared store's document, through the
    /// store's own read-modify-write.
    fn update_shared<T, E: From<RulesError>>(
        &self,
        shared: &dyn SharedState,
        edit: impl FnOnce(&mut RuleSet) -> Result<(T, bool), E>,
    ) -> Result<(T, RuleSet), E> {
        let mut edit = Some(edit);
        let mut result: Option<Result<(T, RuleSet), E>> = None;
        let written = shared.update(RULES_DOC, &mut |current| {
            let edit = edit.take()?;
            match self.edit_body(current, edit) {
                Ok((value, set, body)) => {
                    result = Some(Ok((value, set)));
                    body
                }
                Err(e) => {
                    result = Some(Err(e));
                    None
                }
            }
        });
        if let Err(e) = written {
            return Err(self.shared_error(e).into());
        }
        // `edit` ran: the store called it once before writing.
        result.unwrap_or_else(|| Err(self.shared_error(crate::store::StoreError::Closed).into()))
    }

    /// The shared document's rules (`current`, none: empty) with `edit`
    /// applied, and the body to write when `edit` says to save.
    fn edit_body<T, E: From<RulesError>>(
        &self,
        current: Option<&[u8]>,
        edit: impl FnOnce(&mut RuleSet) -> Result<(T, bool), E>,
    ) -> Result<(T, RuleSet, Option<Vec<u8>>), E> {
        let mut set = current
            .map(|body| self.parse(body))
            .transpose()?
            .unwrap_or_default();
        let (value, save) = edit(&mut set)?;
        if !save {
            return Ok((value, set, None));
        }
        let text = set.to_json().map_err(|e| RulesError::SharedParse {
            location: self.describe(),
            message: e.to_string(),
        })?;
        Ok((value, set, Some(text.into_bytes())))
    }
}
