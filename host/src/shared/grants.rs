//! The workspace's grants in the store the hosts share (see
//! [`SharedState`]): one document, JSON, skill name to grant, written by
//! `skillhost skills grant` on any host. A skill's grant there replaces
//! one in a host's own skillhost.toml.

use crate::grants::{Grant, Grants};
use crate::store::{SharedState, StoreError};

/// The shared document holding the workspace grants.
pub const GRANTS_DOC: &str = "grants";

#[derive(Debug, thiserror::Error)]
pub enum SharedGrantsError {
    #[error("the store shared by the hosts: {0}")]
    Store(#[from] StoreError),
    #[error("`{doc}` in the store shared by the hosts is not valid: {message}")]
    Invalid { doc: String, message: String },
}

fn invalid(e: serde_json::Error) -> SharedGrantsError {
    SharedGrantsError::Invalid {
        doc: GRANTS_DOC.into(),
        message: e.to_string(),
    }
}

/// The grants in the shared store (none written yet: none).
pub fn shared_grants(shared: &dyn SharedState) -> Result<Grants, SharedGrantsError> {
    match shared.read(GRANTS_DOC)? {
        Some(doc) => serde_json::from_slice(&doc.body).map_err(invalid),
        None => Ok(Grants::new()),
    }
}

/// Sets (`Some`) or removes (`None`) the shared grant of `skill`; answers
/// whether there was one before.
pub fn write_shared_grant(
    shared: &dyn SharedState,
    skill: &str,
    grant: Option<&Grant>,
) -> Result<bool, SharedGrantsError> {
    let mut outcome: Result<bool, SharedGrantsError> = Ok(false);
    shared.update(GRANTS_DOC, &mut |current| {
        let mut grants: Grants = match current.map(serde_json::from_slice).transpose() {
            Ok(g) => g.unwrap_or_default(),
            Err(e) => {
                outcome = Err(invalid(e));
                return None;
            }
        };
        let had = match grant {
            Some(g) => grants.insert(skill.to_owned(), g.clone()).is_some(),
            None => grants.remove(skill).is_some(),
        };
        outcome = Ok(had);
        if grant.is_none() && !had {
            return None;
        }
        match serde_json::to_vec_pretty(&grants) {
            Ok(body) => Some(body),
            Err(e) => {
                outcome = Err(invalid(e));
                None
            }
        }
    })?;
    outcome
}
