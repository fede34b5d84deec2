//! Whether a URL is a listed vendor's official installer: the list is the
//! audit's vendor tier (`vendors.toml`), so there is one list to keep.

/// Whether `url` is a listed vendor's installer, exactly as written.
pub(crate) fn is_official(url: &str) -> bool {
    super::super::vendors::vendor_of(url).is_some()
}
