//! Skills' usage statistics as retrieval and listings read them: from the
//! workspace store, without creating one.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::recorder::open_store;
use super::services::LazyStore;
use crate::paths::Paths;
use crate::skill::{Usage, UsageSource};
use crate::store::{StoreConfig, StoreError};

/// Every skill's usage statistics in the workspace store, once the runs
/// that ended processes left in their journals are stored. A workspace
/// with no store has none.
pub fn skill_usage(
    paths: &Paths,
    config: &StoreConfig,
) -> Result<HashMap<String, Usage>, StoreError> {
    if !config.exists(&paths.state_dir()) {
        return Ok(HashMap::new());
    }
    open_store(paths, config)?.skill_usage()
}

/// A runner's store, read on the first question: a selection asks only
/// when two skills tie, so most runs never read it.
pub(super) struct LazyUsage<'a> {
    store: &'a LazyStore,
    loaded: OnceLock<HashMap<String, Usage>>,
}

impl<'a> LazyUsage<'a> {
    pub(super) fn new(store: &'a LazyStore) -> Self {
        LazyUsage {
            store,
            loaded: OnceLock::new(),
        }
    }
}

impl UsageSource for LazyUsage<'_> {
    fn usage(&self, skill: &str) -> Option<Usage> {
        self.loaded
            .get_or_init(|| match self.store.existing_store() {
                None => HashMap::new(),
                Some(read) => read.and_then(|s| s.skill_usage()).unwrap_or_else(|e| {
                    tracing::warn!("usage statistics unavailable, ties go by name: {e}");
                    HashMap::new()
                }),
            })
            .get(skill)
            .copied()
    }
}
