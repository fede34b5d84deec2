//! Step 1 of a run: which skill answers a request.

use super::outcome::RunError;
use super::{RunRequest, Runner, usage};
use crate::skill::{Catalog, SearchOptions, Skill};

impl Runner {
    /// Picks the skill for a request from `catalog` (see
    /// [`Runner::catalog`]): the named one, or the best match (pinned
    /// skills first, usage breaking ties; see `skill::search`).
    pub fn select<'c>(
        &self,
        catalog: &'c Catalog,
        req: &RunRequest,
    ) -> Result<(&'c Skill, String), RunError> {
        if let Some(name) = &req.skill {
            if let Some(why) = catalog.held_back_reason(name) {
                return Err(RunError::HeldBack(why));
            }
            return catalog
                .get(name)
                .map(|s| (s, "--skill".to_owned()))
                .ok_or_else(|| RunError::UnknownSkill(name.clone()));
        }
        let usage = usage::LazyUsage::new(&self.shared.store);
        let opts = SearchOptions {
            pinned: &self.shared.config.catalog.pinned,
            trusted: &self.shared.config.catalog.trusted,
            tags: &[],
            usage: &usage,
        };
        catalog
            .search_with(&req.task, 1, &opts)
            .into_iter()
            .next()
            .map(|m| (m.skill, format!("{} (score {:.2})", m.why, m.score)))
            .ok_or(RunError::NoMatch)
    }
}
