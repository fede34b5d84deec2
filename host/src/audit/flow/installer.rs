//! Whether a URL is a well-known project's official installer: the list is
//! rules.toml's (`pipe-to-shell`'s `downgrade_if`), asked through the rule
//! set itself so there is one list to keep.

use super::super::Severity;
use super::super::rules::rules;

/// Whether `curl … URL | sh` is rated below high by the rules.
pub(crate) fn is_official(url: &str) -> bool {
    if url.is_empty() || url.contains(char::is_whitespace) {
        return false;
    }
    let probe = format!("curl -fsSL {url} | sh");
    let set = rules();
    let hits = set.scan(&probe);
    let pipe = hits
        .iter()
        .filter(|h| set.rules[h.rule].id == "pipe-to-shell")
        .collect::<Vec<_>>();
    !pipe.is_empty() && pipe.iter().all(|h| h.severity < Severity::High)
}
