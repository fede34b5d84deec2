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
//! `max_archive_bytes`, counted while it streams.
//!
//! Where requests may go ([`HopPolicy`]): every request, the first and each
//! redirect (followed here, one hop at a time, never by the HTTP client),
//! keeps the registry URL's scheme and goes to public addresses only: the
//! host is looked up once, every address it has must be public, and the
//! connection is pinned to the address that was checked (as `netguard`
//! does for a handler's HTTP). The one exception is the origin (scheme,
//! host, port) of a registry the operator named (`--registry`): it may be
//! on this machine, and plain `http` only there (a local mirror, a test
//! server). A registry read from `skillhost.toml` gets no exception: a
//! workspace may have written that file.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

use super::{InstallConfig, InstallError};
use crate::grants::netguard::{self, NetPolicy};

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
        if !handle_ok(&owner, 64) || !handle_ok(&slug, 128) {
            return None;
        }
        let version = match version {
            None => None,
            Some(v) if version_ok(v) => Some(v.to_owned()),
            Some(_) => return None,
        };
        Some(RegistryRef {
            owner,
            slug,
            version,
        })
    }
}

/// An owner or slug: at most `max` of ASCII letters, digits, `-`, `_`
/// and `.`, starting with a letter or digit, no `..`.
fn handle_ok(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !s.contains("..")
}

/// A version: 1 to 64 of ASCII letters, digits, `.`, `-` and `+`.
fn version_ok(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 64
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+'))
}

/// Where a redirect from `from` leads: its `Location`, relative to `from`.
fn redirect_target(
    from: &Url,
    location: &reqwest::header::HeaderValue,
) -> Result<Url, InstallError> {
    location
        .to_str()
        .ok()
        .and_then(|l| from.join(l).ok())
        .ok_or_else(|| InstallError::RegistryAnswer {
            url: from.to_string(),
            reason: format!(
                "redirects to `{}`, which is not a URL",
                quote(location.as_bytes())
            ),
        })
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

/// Who named the registry URL: it decides whether that URL's own origin
/// may be on this machine or a private network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NamedBy {
    /// The operator, on the command line, or a program calling the library
    /// with a URL of its own: its origin is reached as named, wherever it
    /// is; every other hop must be public.
    Operator,
    /// `[install] registry` read from `skillhost.toml`. The files are merged
    /// and the workspace's (written by whoever wrote the repository) wins,
    /// so such a URL is trusted for nothing: public addresses only, also for
    /// its own origin. A mirror on this machine is named with `--registry`.
    ConfigFile,
}

/// Where the requests of one fetch may go (see the module's comment).
#[derive(Debug, Clone)]
struct HopPolicy {
    /// The registry URL's scheme, which no redirect may change.
    scheme: String,
    /// The origin the operator named, reached without the address check.
    operator_origin: Option<url::Origin>,
    /// How names are looked up, and the time a lookup may take.
    net: NetPolicy,
    resolve_timeout: Duration,
}

/// A request target that passed the policy.
#[derive(Debug, Clone)]
struct Hop {
    url: Url,
    /// The address the connection must go to, when the host is a name that
    /// was looked up: `(the URL's host, the checked address)`. `None` for
    /// an address literal (nothing to look up) and for the operator's
    /// origin (connected as named).
    pin: Option<(String, SocketAddr)>,
}

impl HopPolicy {
    /// The policy for the registry at `base`; the error says why `base`
    /// itself cannot be used.
    fn new(
        base: &Url,
        named_by: NamedBy,
        net: NetPolicy,
        config: &InstallConfig,
    ) -> Result<Self, String> {
        let on_this_machine = match base.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        };
        match (base.scheme(), named_by) {
            ("https", _) => {}
            ("http", NamedBy::Operator) if on_this_machine => {}
            ("http", NamedBy::Operator) => {
                return Err("only https is allowed (plain http only to this machine)".into());
            }
            ("http", NamedBy::ConfigFile) => {
                return Err(
                    "only https is allowed for a registry named in skillhost.toml (plain http only to this machine, named with --registry)"
                        .into(),
                );
            }
            _ => return Err("only https is allowed".into()),
        }
        Ok(HopPolicy {
            scheme: base.scheme().to_owned(),
            operator_origin: (named_by == NamedBy::Operator).then(|| base.origin()),
            net,
            resolve_timeout: Duration::from_secs(config.timeout_secs.clamp(1, 30)),
        })
    }

    /// Whether a request may go to `url`, and where it connects; the error
    /// says why not.
    async fn check(&self, url: &Url) -> Result<Hop, String> {
        if url.scheme() != self.scheme {
            return Err(format!(
                "it changes the scheme from {} to {}",
                self.scheme,
                url.scheme()
            ));
        }
        if self.operator_origin.as_ref() == Some(&url.origin()) {
            return Ok(Hop {
                url: url.clone(),
                pin: None,
            });
        }
        let host = url.host_str().ok_or("it has no host")?;
        let port = url.port_or_known_default().ok_or("it has no port")?;
        // Granted by construction: the name is the one to check, and
        // `check` looks it up once and judges every address it has.
        let checked = netguard::check(
            host,
            port,
            &[host.to_owned()],
            &self.net,
            self.resolve_timeout,
        )
        .await
        .map_err(|e| e.to_string())?;
        let literal = checked.host.parse::<IpAddr>().is_ok();
        Ok(Hop {
            url: url.clone(),
            pin: (!literal).then(|| (host.to_owned(), checked.addr)),
        })
    }
}

/// Resolves `reference` on the registry at `base` and downloads it.
pub(super) async fn fetch(
    reference: &RegistryRef,
    base: &str,
    named_by: NamedBy,
    config: &InstallConfig,
    allow_suspicious: bool,
) -> Result<Fetched, InstallError> {
    let (base_url, client) = open_registry(base, named_by, config).await?;
    let (slug, version) = resolve(&client, &base_url, reference, allow_suspicious).await?;
    let download_url = endpoint(
        &base_url,
        &["api", "v1", "download"],
        &[
            ("slug", &slug),
            ("ownerHandle", &reference.owner),
            ("version", &version),
        ],
    )?;
    let archive = client
        .get(&download_url, config.max_archive_bytes, reference)
        .await?;
    Ok(Fetched {
        archive,
        slug,
        version,
        registry: base.to_owned(),
    })
}

/// The registry at `base` and the client its requests go through; refused
/// before any request is made, naming the registry, when a request may not
/// go there.
async fn open_registry<'a>(
    base: &str,
    named_by: NamedBy,
    config: &'a InstallConfig,
) -> Result<(Url, Fetcher<'a>), InstallError> {
    let bad = |reason: String| InstallError::BadRegistry {
        url: base.to_owned(),
        reason,
    };
    let base_url = Url::parse(base).map_err(|e| bad(e.to_string()))?;
    let policy = HopPolicy::new(&base_url, named_by, NetPolicy::default(), config).map_err(bad)?;
    policy.check(&base_url).await.map_err(|why| match named_by {
        NamedBy::ConfigFile => bad(format!(
            "{why} (a registry named in skillhost.toml must be public; name one on this machine with --registry)"
        )),
        NamedBy::Operator => bad(why),
    })?;
    Ok((base_url, Fetcher { policy, config }))
}

/// The slug and version to download for `reference`, from the registry's
/// metadata of the skill: listed under the owner asked for, not blocked,
/// and not flagged unless that is allowed.
async fn resolve(
    client: &Fetcher<'_>,
    base_url: &Url,
    reference: &RegistryRef,
    allow_suspicious: bool,
) -> Result<(String, String), InstallError> {
    let meta_url = endpoint(
        base_url,
        &["api", "v1", "skills", &reference.slug],
        &[("ownerHandle", &reference.owner)],
    )?;
    let body = client
        .get(&meta_url, MAX_METADATA_BYTES as u64, reference)
        .await?;
    let meta: SkillResponse =
        serde_json::from_slice(&body).map_err(|e| InstallError::RegistryAnswer {
            url: meta_url.to_string(),
            reason: format!("not the expected skill metadata: {e}"),
        })?;
    let Some(skill) = meta.skill else {
        return Err(InstallError::NotInRegistry(reference.to_string()));
    };
    check_owner(meta.owner, reference)?;
    if let Some(m) = &meta.moderation {
        check_moderation(m, reference, allow_suspicious)?;
    }
    let slug = if RegistryRef::parse(&format!("{}/{}", reference.owner, skill.slug)).is_some() {
        skill.slug.to_ascii_lowercase()
    } else {
        reference.slug.clone()
    };
    let version = version_to_install(reference, meta.latest_version, &slug).map_err(|reason| {
        InstallError::RegistryAnswer {
            url: meta_url.to_string(),
            reason,
        }
    })?;
    Ok((slug, version))
}

/// The version the reference names, else the latest published; it must
/// read as a version in a reference.
fn version_to_install(
    reference: &RegistryRef,
    latest: Option<VersionInfo>,
    slug: &str,
) -> Result<String, String> {
    let version = match (&reference.version, latest) {
        (Some(v), _) => v.clone(),
        (None, Some(v)) => v.version,
        (None, None) => return Err("the skill has no published version".into()),
    };
    if RegistryRef::parse(&format!("{}/{}@{version}", reference.owner, slug)).is_none() {
        return Err(format!(
            "its version `{}` is not a version",
            quote(version.as_bytes())
        ));
    }
    Ok(version)
}

/// The skill's owner on the registry must be the one the reference names.
fn check_owner(owner: Option<OwnerInfo>, reference: &RegistryRef) -> Result<(), InstallError> {
    let owner = owner
        .and_then(|o| o.handle)
        .map(|h| h.trim_start_matches('@').to_ascii_lowercase());
    if owner.as_deref() != Some(reference.owner.as_str()) {
        return Err(InstallError::OwnerMismatch {
            asked: reference.to_string(),
            owner: owner.map_or_else(|| "nobody".into(), |o| quote(o.as_bytes())),
        });
    }
    Ok(())
}

/// A skill the registry blocks is refused; one it flags as suspicious
/// unless `allow_suspicious`.
fn check_moderation(
    m: &Moderation,
    reference: &RegistryRef,
    allow_suspicious: bool,
) -> Result<(), InstallError> {
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
    Ok(())
}

/// Makes the requests of one fetch, each to where [`HopPolicy`] allows.
struct Fetcher<'a> {
    policy: HopPolicy,
    config: &'a InstallConfig,
}

impl Fetcher<'_> {
    /// A client for one request to `hop`: it never follows a redirect
    /// itself, and connects to the checked address, never looking the
    /// name up again (a second answer could be another address).
    fn client(&self, hop: &Hop) -> Result<reqwest::Client, InstallError> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(self.config.timeout_secs.max(1)))
            .user_agent(concat!("skillhost/", env!("CARGO_PKG_VERSION")));
        if let Some((host, addr)) = &hop.pin {
            // Port 0: the URL's port is used.
            builder = builder.resolve(host, SocketAddr::new(addr.ip(), 0));
        }
        builder
            .build()
            .map_err(|e| InstallError::Http(e.to_string()))
    }

    /// Sends a GET to `url` and follows at most `MAX_REDIRECTS` redirects,
    /// each checked before anything is sent to it. Returns the last URL
    /// and its answer.
    async fn send(&self, url: &Url) -> Result<(Url, reqwest::Response), InstallError> {
        let mut hop =
            self.policy
                .check(url)
                .await
                .map_err(|reason| InstallError::RegistryAnswer {
                    url: url.to_string(),
                    reason: format!("refused: {reason}"),
                })?;
        for _ in 0..=MAX_REDIRECTS {
            let response = self
                .client(&hop)?
                .get(hop.url.clone())
                .send()
                .await
                .map_err(|e| InstallError::Http(format!("{}: {e}", hop.url)))?;
            let location = match response.headers().get(reqwest::header::LOCATION) {
                Some(l) if response.status().is_redirection() => l,
                _ => return Ok((hop.url, response)),
            };
            let next = redirect_target(&hop.url, location)?;
            hop =
                self.policy
                    .check(&next)
                    .await
                    .map_err(|reason| InstallError::RegistryAnswer {
                        url: next.to_string(),
                        reason: format!("redirect from {} refused: {reason}", hop.url),
                    })?;
        }
        Err(InstallError::RegistryAnswer {
            url: url.to_string(),
            reason: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// GETs `url` (see [`Fetcher::send`]), reading at most `max` bytes of
    /// the body (counted as it streams, whatever Content-Length says).
    async fn get(
        &self,
        url: &Url,
        max: u64,
        reference: &RegistryRef,
    ) -> Result<Vec<u8>, InstallError> {
        let (url, mut response) = self.send(url).await?;
        let url = &url;
        if !response.status().is_success() {
            return Err(refusal(url, response, reference).await);
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
}

/// What an answer that is not a success says: not found, or its status
/// with the start of its text and when to retry.
async fn refusal(
    url: &Url,
    mut response: reqwest::Response,
    reference: &RegistryRef,
) -> InstallError {
    let status = response.status();
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
        return InstallError::NotInRegistry(reference.to_string());
    }
    InstallError::RegistryStatus {
        url: url.to_string(),
        status: status.as_u16(),
        message: format!("{}{retry}", quote(&text)),
    }
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

    /// Answers `localhost` with 127.0.0.1, `inside.example.com` with a
    /// private address and every other name with a public one.
    struct FakeDns;

    impl netguard::Resolve for FakeDns {
        fn lookup<'a>(
            &'a self,
            host: &'a str,
            port: u16,
        ) -> futures::future::BoxFuture<'a, std::io::Result<Vec<SocketAddr>>> {
            let ip: IpAddr = match host {
                "localhost" => "127.0.0.1",
                "inside.example.com" => "10.0.0.7",
                _ => "93.184.216.34",
            }
            .parse()
            .expect("ip");
            Box::pin(async move { Ok(vec![SocketAddr::new(ip, port)]) })
        }
    }

    fn policy(base: &str, named_by: NamedBy) -> Result<HopPolicy, String> {
        let net = NetPolicy::default().with_resolver(std::sync::Arc::new(FakeDns));
        let url = Url::parse(base).expect("url");
        HopPolicy::new(&url, named_by, net, &InstallConfig::default())
    }

    async fn hop(policy: &HopPolicy, url: &str) -> Result<Hop, String> {
        policy.check(&Url::parse(url).expect("url")).await
    }

    #[test]
    fn plain_http_only_to_this_machine_and_only_when_the_operator_names_it() {
        let ok = |u: &str| policy(u, NamedBy::Operator).is_ok();
        assert!(ok("https://clawhub.ai"));
        assert!(ok("http://127.0.0.1:8080"));
        assert!(ok("http://[::1]:8080/registry/"));
        assert!(ok("http://localhost:1"));
        assert!(!ok("http://clawhub.ai"));
        assert!(!ok("http://10.0.0.1"));
        assert!(!ok("file:///etc/passwd"));
        assert!(!ok("ftp://example.com"));
        let e = policy("http://127.0.0.1:8080", NamedBy::ConfigFile).expect_err("from a file");
        assert!(e.contains("--registry"), "{e}");
    }

    #[tokio::test]
    async fn no_hop_changes_the_scheme() {
        let https = policy("https://registry.example.com", NamedBy::Operator).expect("https");
        let e = hop(&https, "http://registry.example.com/api")
            .await
            .expect_err("a downgrade");
        assert!(e.contains("from https to http"), "{e}");
        let http = policy("http://127.0.0.1:4444", NamedBy::Operator).expect("local http");
        let e = hop(&http, "https://registry.example.com/api")
            .await
            .expect_err("http to https is a change too");
        assert!(e.contains("from http to https"), "{e}");
    }

    #[tokio::test]
    async fn no_hop_goes_to_a_non_public_address() {
        for named_by in [NamedBy::Operator, NamedBy::ConfigFile] {
            let p = policy("https://registry.example.com", named_by).expect("https");
            for (url, why) in [
                ("https://127.0.0.1/x", "loopback"),
                ("https://127.0.0.1:6379/x", "loopback"),
                ("https://10.1.2.3/x", "private"),
                ("https://169.254.169.254/latest/meta-data", "metadata"),
                ("https://169.254.1.1/x", "link-local"),
                ("https://[::1]/x", "loopback"),
                ("https://[fc00::1]/x", "unique-local"),
                ("https://[::ffff:127.0.0.1]/x", "loopback"),
                ("https://0.0.0.0/x", "unspecified"),
                // A name is looked up and judged by what it resolves to.
                ("https://localhost/x", "loopback"),
                ("https://inside.example.com/x", "10.0.0.7"),
            ] {
                let e = hop(&p, url).await.expect_err(url);
                assert!(e.contains(why), "{url}: {e}");
            }
            let public = hop(&p, "https://cdn.example.net/a.zip")
                .await
                .expect("a public host");
            assert_eq!(
                public.pin,
                Some((
                    "cdn.example.net".to_owned(),
                    "93.184.216.34:443".parse().expect("addr")
                ))
            );
        }
    }

    #[tokio::test]
    async fn only_the_origin_the_operator_named_may_be_local() {
        let p = policy("http://127.0.0.1:4444/registry/", NamedBy::Operator).expect("local");
        let same = hop(&p, "http://127.0.0.1:4444/api/v1/download?slug=x")
            .await
            .expect("the operator's origin");
        assert_eq!(same.pin, None, "connected as named");
        for other in [
            "http://127.0.0.1:5555/api",
            "http://localhost:4444/api",
            "http://[::1]:4444/api",
            "http://10.0.0.1:4444/api",
        ] {
            let e = hop(&p, other).await.expect_err(other);
            assert!(e.contains("refused"), "{other}: {e}");
        }
        // The same registry read from a file is not exempt.
        let p = policy("https://127.0.0.1:4444/", NamedBy::ConfigFile).expect("https");
        let e = hop(&p, "https://127.0.0.1:4444/api")
            .await
            .expect_err("config-named loopback");
        assert!(e.contains("loopback"), "{e}");
    }

    #[tokio::test]
    async fn a_checked_name_is_connected_to_the_checked_address_only() {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("accept");
            let mut head = [0u8; 1024];
            let _ = stream.read(&mut head);
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\npinned",
            );
        });
        // `.invalid` never resolves: the request reaches the listener only
        // through the pin.
        let url = Url::parse(&format!("http://registry.invalid:{port}/")).expect("url");
        let hop = Hop {
            url: url.clone(),
            pin: Some((
                "registry.invalid".into(),
                SocketAddr::from(([127, 0, 0, 1], 9)),
            )),
        };
        let config = InstallConfig::default();
        let fetcher = Fetcher {
            policy: policy("https://registry.example.com", NamedBy::Operator).expect("policy"),
            config: &config,
        };
        let body = fetcher
            .client(&hop)
            .expect("client")
            .get(url)
            .send()
            .await
            .expect("sent to the pinned address")
            .text()
            .await
            .expect("body");
        assert_eq!(body, "pinned");
        server.join().expect("server");
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
