//! The vendor-installer tier: `curl … | sh` of an official installer,
//! fetched over https from the vendor's own host, as the vendor's docs say
//! to run it. The list is data (`vendors.toml`); a match names the host
//! exactly, so a look-alike, a longer host, a user name before `@` or the
//! vendor's name in another host's path does not pass.

use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

/// The vendor list, embedded in the binary.
pub const VENDORS_TOML: &str = include_str!("vendors.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VendorsFile {
    vendor: Vec<Vendor>,
}

/// One vendor's installer: its host and the path its install URLs start
/// with, and where the vendor documents the command.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vendor {
    pub vendor: String,
    pub host: String,
    #[serde(default)]
    pub path: String,
    pub source: String,
}

/// Parses the vendor list: every host lowercase ASCII, every path empty
/// or starting with `/`, every source an https URL.
pub fn parse(text: &str) -> Result<Vec<Vendor>, String> {
    let file: VendorsFile = toml::from_str(text).map_err(|e| e.to_string())?;
    for v in &file.vendor {
        let host_ok = !v.host.is_empty()
            && v.host
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
        if !host_ok || !(v.path.is_empty() || v.path.starts_with('/')) {
            return Err(format!("vendor {}: bad host or path", v.vendor));
        }
        if !v.source.starts_with("https://") {
            return Err(format!(
                "vendor {}: the source must be an https URL",
                v.vendor
            ));
        }
    }
    Ok(file.vendor)
}

/// The embedded vendor list (a unit test parses it).
pub fn vendors() -> &'static [Vendor] {
    static VENDORS: LazyLock<Vec<Vendor>> =
        LazyLock::new(|| super::embedded("vendors.toml", parse(VENDORS_TOML)));
    &VENDORS
}

/// Whether `command`, a matched fetch-and-run as written (not normalised),
/// fetches one URL only, that URL is a listed vendor's installer, and no
/// curl option sends the request elsewhere or skips the certificate check.
pub fn is_vendor_installer(command: &str) -> bool {
    static URL: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r#"(?i)https?://[^\s'"`<>()|;&\\]+"#).ok());
    static REROUTE: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r"--(?:resolve|connect-to|proxy|preproxy|insecure|doh-url)\b|\s-[a-zA-Z]*[kx]\b")
            .ok()
    });
    let (Some(url), Some(reroute)) = (URL.as_ref(), REROUTE.as_ref()) else {
        return false;
    };
    if command.matches("://").count() != 1 || reroute.is_match(command) {
        return false;
    }
    url.find(command)
        .is_some_and(|m| vendor_of(m.as_str()).is_some())
}

/// The listed vendor whose installer `url` is: https, no user, no port,
/// the host exactly (ASCII as written: a look-alike or punycode host is
/// another host), and the path under the vendor's path.
pub fn vendor_of(url: &str) -> Option<&'static Vendor> {
    if !url.is_ascii() || url.contains(['%', '@']) {
        return None;
    }
    let parsed = url::Url::parse(url).ok()?;
    if parsed.scheme() != "https" || parsed.port().is_some() {
        return None;
    }
    let host = parsed.host_str()?;
    // The URL as written, not as the parser resolved it: `..` or `.`
    // segments are another path.
    let written = url.get(url.find("://")? + 3..)?;
    let path = written.get(written.find('/').unwrap_or(written.len())..)?;
    if path.split('/').any(|seg| seg == ".." || seg == ".") {
        return None;
    }
    vendors()
        .iter()
        .find(|v| host == v.host && path_under(path, &v.path))
}

/// Whether `path` (with any query) lies under the vendor's `prefix`.
fn path_under(path: &str, prefix: &str) -> bool {
    let path = path.split(['?', '#']).next().unwrap_or("");
    prefix.is_empty() || path == prefix.trim_end_matches('/') || path.starts_with(prefix)
}

#[cfg(test)]
mod tests {
    use super::vendor_of;

    #[test]
    fn a_file_of_the_vendors_own_repository_is_the_vendor_and_a_neighbour_is_not() {
        let own = "https://raw.githubusercontent.com/pimalaya/himalaya/master/install.sh";
        assert!(vendor_of(own).is_some());
        for other in [
            "https://raw.githubusercontent.com/pimalaya-x/himalaya/master/install.sh",
            "https://raw.githubusercontent.com/pimalaya/himalaya-tools/master/install.sh",
            "https://raw.githubusercontent.com/pimalaya/himalaya/../evil/install.sh",
            "https://github.com/botpress/adk/releases/download/v9/evil.sh",
        ] {
            assert!(vendor_of(other).is_none(), "{other}");
        }
    }

    #[test]
    fn a_documented_release_asset_url_is_the_vendor_and_another_asset_path_is_not() {
        let documented = "https://github.com/botpress/adk/releases/latest/download/install.sh";
        assert!(vendor_of(documented).is_some());
        assert!(vendor_of("https://github.com/botpress/adk/raw/main/x.sh").is_none());
        assert!(
            vendor_of("https://github.com/botpress-x/adk/releases/latest/download/install.sh")
                .is_none()
        );
    }

    #[test]
    fn a_vendor_archive_host_is_matched_only_under_its_path() {
        let sdk = "https://dl.google.com/dl/cloudsdk/channels/rapid/downloads/google-cloud-cli-linux-x86_64.tar.gz";
        assert!(vendor_of(sdk).is_some());
        assert!(vendor_of("https://dl.google.com/other/tool.tar.gz").is_none());
    }
}
