//! Errors every stage shares: a service's refusal, and an error's causes
//! on one line.

use std::fmt;

/// An error and every cause under it on one line, `error: cause: cause`,
/// as anyhow's `{:#}` prints them: for messages that leave as text (tool
/// results, run records) from errors that keep their causes as sources.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

/// A service's answer when it could not serve a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    #[error("denied: {0}")]
    Denied(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("{0}")]
    Failed(String),
    /// A size limit or quota; the text names it and the figures.
    #[error("limit: {0}")]
    Limit(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_shows_every_cause() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot set up")]
        struct Outer(#[source] std::io::Error);
        let e = Outer(std::io::Error::other("disk full"));
        assert_eq!(Chain(&e).to_string(), "cannot set up: disk full");
    }
}
