//! Fetching a skill from a ClawHub-compatible registry.
//!
//! The shapes are ClawHub's public v1 HTTP API (`docs/http-api.md` of
//! openclaw/clawhub), as its own CLI uses them to install:
//! - `GET /api/v1/skills/{slug}?ownerHandle=OWNER` answers
//!   `{skill: {slug, displayName, ...} | null, latestVersion: {version, ...}
//!   | null, owner: {handle, ...} | null, moderation?: {isSuspicious,
//!   isMalwareBlocked, summary?, ...} | null}`;
//! - `GET /api/v1/download?slug=SLUG&ownerHandle=OWNER&version=V` answers
//!   the version's files as a zip (files at its root, plus the registry's
//!   `_meta.json`).
//!
//! What is checked before anything is unpacked: the owner the registry
//! names is the one asked for; the skill is not blocked as malware, nor
//! (unless allowed) flagged as suspicious; the download is at most
//! `max_archive_bytes`, counted while it streams. Plain `http` is refused
//! except to this machine (a test server, a local mirror).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

use super::{InstallConfig, InstallError};

/// Largest metadata answer read.
const MAX_METADATA_BYTES: usize = 1 << 20;
/// How much of an error answer is quoted.
const MAX_QUOTED_ERROR: usize = 300;
const MAX_REDIRECTS: usize = 5;

/// `OWNER/SLUG[@VERSION]`: a skill of a registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegistryRef {
    /// The publisher's handle, lowercase, without a leading `@`.
    pub owner: String,
    pub slug: String,
    /// A version to install; the latest when absent.
    pub version: Option<String>,
}

impl RegistryRef {
    /// Parses `OWNER/SLUG[@VERSION]`; `None` when `text` is not one.
    pub fn parse(text: &str) -> Option<RegistryRef> {
        let (path, version) = match text.split_once('@') {
            // `@owner/slug`: ClawHub writes handles with an `@`.
            Some(("", rest)) => match rest.split_once('@') {
                Some((p, v)) => (p, Some(v)),
                None => (rest, None),
            },
            Some((p, v)) => (p, Some(v)),
            None => (text, None),
        };
        let (owner, slug) = path.split_once('/')?;
        let owner = owner.to_ascii_lowercase();
        let slug = slug.to_ascii_lowercase();
        let handle_ok = |s: &str, max: usize| {
            !s.is_empty()
                && s.len() <= max
                && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
                && !s.contains("..")
        };
        if !handle_ok(&owner, 64) || !handle_ok(&slug, 128) {
            return None;
        }
        let version = match version {
            None => None,
            Some(v)
                if !v.is_empty()
                    && v.len() <= 64
                    && v.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+')) =>
            {
                Some(v.to_owned())
            }
            Some(_) => return None,
        };
        Some(RegistryRef {
            owner,
            slug,
            version,
        })
    }
}

impl std::fmt::Display for RegistryRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.owner, self.slug)?;
        if let Some(v) = &self.version {
            write!(f, "@{v}")?;
        }
        Ok(())
    }
}

/// A downloaded version, not yet unpacked.
#[derive(Debug)]
pub(super) struct Fetched {
    pub archive: Vec<u8>,
    /// The registry's canonical slug (renamed skills resolve to it).
    pub slug: String,
    pub version: String,
    pub registry: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SkillResponse {
    skill: Option<SkillInfo>,
    latest_version: Option<VersionInfo>,
    owner: Option<OwnerInfo>,
    #[serde(default)]
    moderation: Option<Moderation>,
}

#[derive(Debug, Deserialize)]
struct SkillInfo {
    slug: String,
}

#[derive(Debug, Deserialize)]
struct VersionInfo {
    version: String,
}

#[derive(Debug, Deserialize)]
struct OwnerInfo {
    handle: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Moderation {
    #[serde(default)]
    is_suspicious: bool,
    #[serde(default)]
    is_malware_blocked: bool,
    #[serde(default)]
    summary: Option<String>,
}

/// Whether the registry at `url` may be used: `https`, or `http` to this
/// machine only.
fn allowed(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

/// Resolves `reference` on the registry at `base` and downloads it.
pub(super) async fn fetch(
    reference: &RegistryRef,
    base: &str,
    config: &InstallConfig,
    allow_suspicious: bool,
) -> Result<Fetched, InstallError> {
    let base_url = Url::parse(base).map_err(|e| InstallError::BadRegistry {
        url: base.to_owned(),
        reason: e.to_string(),
    })?;
    if !allowed(&base_url) {
        return Err(InstallError::BadRegistry {
            url: base.to_owned(),
            reason: "only https is allowed (plain http only to this machine)".into(),
        });
    }
    let client = client(config)?;

    let meta_url = endpoint(
        &base_url,
        &["api", "v1", "skills", &reference.slug],
        &[("ownerHandle", &reference.owner)],
    )?;
    let body = get(&client, &meta_url, MAX_METADATA_BYTES as u64, reference).await?;
    let meta: SkillResponse =
        serde_json::from_slice(&body).map_err(|e| InstallError::RegistryAnswer {
            url: meta_url.to_string(),
            reason: format!("not the expected skill metadata: {e}"),
        })?;
    let Some(skill) = meta.skill else {
        return Err(InstallError::NotInRegistry(reference.to_string()));
    };
    let owner = meta
        .owner
        .and_then(|o| o.handle)
        .map(|h| h.trim_start_matches('@').to_ascii_lowercase());
    if owner.as_deref() != Some(reference.owner.as_str()) {
        return Err(InstallError::OwnerMismatch {
            asked: reference.to_string(),
            owner: owner.map_or_else(|| "nobody".into(), |o| quote(o.as_bytes())),
        });
    }
    if let Some(m) = &meta.moderation {
        let why = m.summary.clone().unwrap_or_default();
        if m.is_malware_blocked {
            return Err(InstallError::Blocked {
                skill: reference.to_string(),
                why: quote(why.as_bytes()),
            });
        }
        if m.is_suspicious && !allow_suspicious {
            return Err(InstallError::Suspicious {
                skill: reference.to_string(),
                why: quote(why.as_bytes()),
            });
        }
    }
    let slug = if RegistryRef::parse(&format!("{}/{}", reference.owner, skill.slug)).is_some() {
        skill.slug.to_ascii_lowercase()
    } else {
        reference.slug.clone()
    };
    let version = match (&reference.version, meta.latest_version) {
        (Some(v), _) => v.clone(),
        (None, Some(v)) => v.version,
        (None, None) => {
            return Err(InstallError::RegistryAnswer {
                url: meta_url.to_string(),
                reason: "the skill has no published version".into(),
            });
        }
    };
    if RegistryRef::parse(&format!("{}/{}@{version}", reference.owner, slug)).is_none() {
        return Err(InstallError::RegistryAnswer {
            url: meta_url.to_string(),
            reason: format!(
                "its version `{}` is not a version",
                quote(version.as_bytes())
            ),
        });
    }

    let download_url = endpoint(
        &base_url,
        &["api", "v1", "download"],
        &[
            ("slug", &slug),
            ("ownerHandle", &reference.owner),
            ("version", &version),
        ],
    )?;
    let archive = get(&client, &download_url, config.max_archive_bytes, reference).await?;
    Ok(Fetched {
        archive,
        slug,
        version,
        registry: base.to_owned(),
    })
}

fn client(config: &InstallConfig) -> Result<reqwest::Client, InstallError> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if !allowed(attempt.url()) {
            attempt.error("redirected to a URL that is neither https nor this machine")
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .redirect(policy)
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(config.timeout_secs.max(1)))
        .user_agent(concat!("skillhost/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| InstallError::Http(e.to_string()))
}

/// `base` with `segments` appended to its path and `query` set.
fn endpoint(base: &Url, segments: &[&str], query: &[(&str, &str)]) -> Result<Url, InstallError> {
    let mut url = base.clone();
    url.path_segments_mut()
        .map_err(|()| InstallError::BadRegistry {
            url: base.to_string(),
            reason: "it cannot have a path".into(),
        })?
        .pop_if_empty()
        .extend(segments);
    url.set_query(None);
    {
        let mut pairs = url.query_pairs_mut();
        for (k, v) in query {
            pairs.append_pair(k, v);
        }
    }
    Ok(url)
}

/// GETs `url`, reading at most `max` bytes of the body (counted as it
/// streams, whatever Content-Length says).
async fn get(
    client: &reqwest::Client,
    url: &Url,
    max: u64,
    reference: &RegistryRef,
) -> Result<Vec<u8>, InstallError> {
    let mut response = client
        .get(url.clone())
        .send()
        .await
        .map_err(|e| InstallError::Http(format!("{url}: {e}")))?;
    let status = response.status();
    if !status.is_success() {
        let retry = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(|v| format!(" (retry after {}s)", quote(v.as_bytes())))
            .unwrap_or_default();
        let mut text = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            text.extend_from_slice(&chunk);
            if text.len() >= MAX_QUOTED_ERROR {
                break;
            }
        }
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(InstallError::NotInRegistry(reference.to_string()));
        }
        return Err(InstallError::RegistryStatus {
            url: url.to_string(),
            status: status.as_u16(),
            message: format!("{}{retry}", quote(&text)),
        });
    }
    if let Some(len) = response.content_length()
        && len > max
    {
        return Err(InstallError::DownloadTooLarge { max });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| InstallError::Http(format!("{url}: {e}")))?
    {
        if (body.len() + chunk.len()) as u64 > max {
            return Err(InstallError::DownloadTooLarge { max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Text from the registry, made safe to print: one line, no control
/// characters, cut short.
fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_QUOTED_ERROR)
        .collect();
    if text.chars().count() > MAX_QUOTED_ERROR {
        out.push('…');
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_strictly() {
        let r = RegistryRef::parse("Steipete/GifGrep@1.2.3").expect("parses");
        assert_eq!(
            (r.owner.as_str(), r.slug.as_str(), r.version.as_deref()),
            ("steipete", "gifgrep", Some("1.2.3"))
        );
        assert_eq!(
            RegistryRef::parse("@openclaw/demo").map(|r| r.owner),
            Some("openclaw".to_owned())
        );
        for bad in [
            "gifgrep",
            "a/b/c",
            "../x",
            "a/..",
            "a/b@",
            "a/b@1.0/../x",
            "/b",
            "a/",
            "a/b?x=1",
            "a/b@1 0",
        ] {
            assert_eq!(RegistryRef::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn plain_http_only_to_this_machine() {
        let ok = |u: &str| allowed(&Url::parse(u).expect("url"));
        assert!(ok("https://clawhub.ai"));
        assert!(ok("http://127.0.0.1:8080"));
        assert!(ok("http://[::1]:8080/registry/"));
        assert!(ok("http://localhost:1"));
        assert!(!ok("http://clawhub.ai"));
        assert!(!ok("http://10.0.0.1"));
        assert!(!ok("file:///etc/passwd"));
        assert!(!ok("ftp://example.com"));
    }

    #[test]
    fn endpoints_keep_a_base_path_and_encode_parts() {
        let base = Url::parse("https://example.com/registry/").expect("url");
        let u = endpoint(
            &base,
            &["api", "v1", "skills", "a b"],
            &[("ownerHandle", "x&y")],
        )
        .expect("endpoint");
        assert_eq!(
            u.as_str(),
            "https://example.com/registry/api/v1/skills/a%20b?ownerHandle=x%26y"
        );
    }

    #[test]
    fn quoted_text_is_one_short_line() {
        assert_eq!(quote(b"Skill\nnot found\x1b[31m"), "Skill not found [31m");
        assert_eq!(quote(&[b'x'; 400]).chars().count(), MAX_QUOTED_ERROR + 1);
    }
}
