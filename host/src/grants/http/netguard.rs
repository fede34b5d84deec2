//! The outbound network guard shared by every path that leaves the machine
//! (a handler's wasi:http requests, the `http_fetch` tool): the host name
//! must be granted, and every address it resolves to must be public.
//!
//! Names are checked first so that an ungranted host is never even looked
//! up; addresses are checked after resolution, since a granted name can
//! resolve to 127.0.0.1 (or be changed to), and the connection is then made
//! to the address that was checked.
//!
//! A name is looked up exactly once per request, through the policy's
//! [`Resolve`]r: every path that connects takes [`Checked::addr`] and never
//! asks a resolver again, so a second, different DNS answer (rebinding)
//! cannot steer the connection to an address that was not checked.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetDenied {
    #[error("host `{0}` is not granted to this skill")]
    HostNotGranted(String),
    #[error(
        "host `{0}` is an IP address in an unusual encoding (decimal, octal, hex or shortened); use the dotted form"
    )]
    OddEncoding(String),
    #[error("host `{host}` resolves to {addr}, {reason}: refused")]
    ForbiddenAddress {
        host: String,
        addr: IpAddr,
        reason: &'static str,
    },
    #[error("host `{host}` could not be resolved: {message}")]
    Resolve { host: String, message: String },
    #[error("request has no host")]
    NoHost,
}

/// Whether `host` is covered by one of the granted patterns: an exact name
/// (case-insensitive) or `*.example.com` for any subdomain of example.com.
pub fn host_granted(host: &str, granted: &[String]) -> bool {
    granted.iter().any(|pattern| pattern_covers(pattern, host))
}

/// Whether `pattern` covers `host` (both names or patterns).
pub fn pattern_covers(pattern: &str, host: &str) -> bool {
    let pattern = normalise_host(pattern);
    let host = normalise_host(host);
    if pattern == host {
        return true;
    }
    if let Some(suffix) = pattern.strip_prefix("*.") {
        let host = host.strip_prefix("*.").unwrap_or(&host);
        return host.len() > suffix.len()
            && host.ends_with(suffix)
            && host.as_bytes()[host.len() - suffix.len() - 1] == b'.';
    }
    pattern == host
}

fn normalise_host(h: &str) -> String {
    h.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// Refuses host names that are IP addresses written in a form other than
/// dotted decimal or standard IPv6 (`2130706433`, `0177.0.0.1`, `0x7f.1`,
/// `127.1`): resolvers accept them, and they exist to slip past filters.
pub fn check_encoding(host: &str) -> Result<(), NetDenied> {
    let h = normalise_host(host);
    if h.parse::<IpAddr>().is_ok() {
        // Canonical forms parse; Rust's parser rejects octal and short forms.
        return Ok(());
    }
    let looks_numeric = !h.is_empty()
        && h.split('.').all(|part| {
            !part.is_empty()
                && (part.chars().all(|c| c.is_ascii_digit())
                    || (part.starts_with("0x") && part[2..].chars().all(|c| c.is_ascii_hexdigit())))
        });
    if looks_numeric {
        return Err(NetDenied::OddEncoding(host.to_owned()));
    }
    Ok(())
}

/// Why `ip` must not be reached from a sandbox, or `None` for a public
/// address. Embedded IPv4 addresses (mapped, compatible, 6to4, NAT64) are
/// judged as the IPv4 address they carry.
pub fn forbidden_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() || o[0] == 0 {
        Some("an unspecified (\"this network\") address")
    } else if o == [169, 254, 169, 254] || o == [100, 100, 100, 200] {
        Some("a cloud metadata address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if ip.is_private() {
        Some("a private-range address")
    } else if o[0] == 100 && (64..128).contains(&o[1]) {
        Some("a shared (carrier-grade NAT) address")
    } else if o[0] == 192 && o[1] == 0 && o[2] == 0 {
        Some("an IETF protocol assignment address")
    } else if ip.is_documentation() {
        Some("a documentation address")
    } else if o[0] == 198 && (o[1] == 18 || o[1] == 19) {
        Some("a benchmarking address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if ip.is_broadcast() || o[0] >= 240 {
        Some("a reserved address")
    } else {
        None
    }
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if let Some(v4) = embedded_v4(ip) {
        return v4_reason(v4);
    }
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if (s[0] & 0xfe00) == 0xfc00 {
        Some("a unique-local (private) address")
    } else if (s[0] & 0xffc0) == 0xfe80 {
        Some("a link-local address")
    } else if (s[0] & 0xffc0) == 0xfec0 {
        Some("a site-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        Some("a documentation address")
    } else if s[0] == 0x2001 && s[1] == 0 {
        Some("a Teredo tunnel address")
    } else if s[0] == 0x0100 && s[1] == 0 && s[2] == 0 && s[3] == 0 {
        Some("a discard-only address")
    } else {
        None
    }
}

/// The IPv4 address carried by an IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) or 6to4
/// (`2002::/16`) address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let o = ip.octets();
    let tail = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    if s[..6].iter().all(|&x| x == 0) && !ip.is_loopback() && !ip.is_unspecified() {
        return Some(tail);
    }
    if s[0] == 0x0064 && s[1] == 0xff9b && s[2..6].iter().all(|&x| x == 0) {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    None
}

/// Looks a host name up. The guard asks it once per request and the
/// connection goes to an address from that answer.
pub trait Resolve: Send + Sync {
    fn lookup<'a>(&'a self, host: &'a str, port: u16)
    -> BoxFuture<'a, io::Result<Vec<SocketAddr>>>;
}

/// The system resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
        Box::pin(async move { Ok(tokio::net::lookup_host((host, port)).await?.collect()) })
    }
}

/// How outbound requests are judged: the non-public addresses the operator
/// still allows, and the resolver names are looked up with.
#[derive(Clone)]
pub struct NetPolicy {
    /// Non-public IP addresses that granted HTTP may still reach.
    pub allow_private: Vec<IpAddr>,
    pub resolver: Arc<dyn Resolve>,
}

impl NetPolicy {
    /// The system resolver and these allowed private addresses.
    pub fn new(allow_private: Vec<IpAddr>) -> Self {
        NetPolicy {
            allow_private,
            resolver: Arc::new(SystemResolver),
        }
    }

    /// The same policy, looking names up with `resolver`.
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolve>) -> Self {
        self.resolver = resolver;
        self
    }
}

impl Default for NetPolicy {
    fn default() -> Self {
        NetPolicy::new(Vec::new())
    }
}

impl std::fmt::Debug for NetPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetPolicy")
            .field("allow_private", &self.allow_private)
            .finish_non_exhaustive()
    }
}

/// A request target that passed the guard: connect to `addr` (and only to
/// it: never look `host` up again), present `host` (Host header, TLS name).
/// `host` is the name as requested, lower-cased, without brackets or a
/// trailing dot.
#[derive(Debug, Clone)]
pub struct Checked {
    pub host: String,
    pub addr: SocketAddr,
}

/// The whole check for one outbound request: encoding, grant, resolution,
/// every resolved address public (or explicitly allowed by the operator).
pub async fn check(
    host: &str,
    port: u16,
    granted_hosts: &[String],
    net: &NetPolicy,
    resolve_timeout: Duration,
) -> Result<Checked, NetDenied> {
    if host.is_empty() {
        return Err(NetDenied::NoHost);
    }
    check_encoding(host)?;
    if !host_granted(host, granted_hosts) {
        return Err(NetDenied::HostNotGranted(host.to_owned()));
    }
    let bare = normalise_host(host);
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => {
            let lookup = net.resolver.lookup(&bare, port);
            match tokio::time::timeout(resolve_timeout, lookup).await {
                // The connection goes to the requested port, whatever the
                // resolver put in its answer.
                Ok(Ok(addrs)) => addrs
                    .into_iter()
                    .map(|a| SocketAddr::new(a.ip(), port))
                    .collect(),
                Ok(Err(e)) => {
                    return Err(NetDenied::Resolve {
                        host: host.to_owned(),
                        message: e.to_string(),
                    });
                }
                Err(_) => {
                    return Err(NetDenied::Resolve {
                        host: host.to_owned(),
                        message: "timed out".into(),
                    });
                }
            }
        }
    };
    if addrs.is_empty() {
        return Err(NetDenied::Resolve {
            host: host.to_owned(),
            message: "no addresses".into(),
        });
    }
    // Every address must pass: a name that resolves to one public and one
    // private address could be steered to the private one.
    for a in &addrs {
        if net.allow_private.contains(&a.ip()) {
            continue;
        }
        if let Some(reason) = forbidden_reason(a.ip()) {
            return Err(NetDenied::ForbiddenAddress {
                host: host.to_owned(),
                addr: a.ip(),
                reason,
            });
        }
    }
    Ok(Checked {
        host: bare,
        addr: addrs[0],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("test address")
    }

    #[test]
    fn forbidden_addresses() {
        for a in [
            "127.0.0.1",
            "127.255.0.9",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00:ec2::254",
            "fc00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "2001:db8::1",
            "ff02::1",
        ] {
            assert!(forbidden_reason(ip(a)).is_some(), "{a} must be refused");
        }
        for a in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "1.1.1.1",
        ] {
            assert_eq!(forbidden_reason(ip(a)), None, "{a} is public");
        }
    }

    #[test]
    fn odd_encodings_refused() {
        for h in [
            "2130706433",
            "0177.0.0.1",
            "0x7f.0.0.1",
            "127.1",
            "0x7f000001",
            "017700000001",
        ] {
            assert_eq!(
                check_encoding(h),
                Err(NetDenied::OddEncoding(h.into())),
                "{h}"
            );
        }
        for h in [
            "127.0.0.1",
            "example.com",
            "[::1]",
            "api.example.com",
            "1password.com",
        ] {
            assert!(check_encoding(h).is_ok(), "{h}");
        }
    }

    #[test]
    fn host_patterns() {
        let g = vec!["api.example.com".to_string(), "*.cdn.net".to_string()];
        assert!(host_granted("API.example.com", &g));
        assert!(host_granted("a.cdn.net", &g));
        assert!(host_granted("a.b.cdn.net", &g));
        assert!(!host_granted("cdn.net", &g));
        assert!(!host_granted("evilcdn.net", &g));
        assert!(!host_granted("example.com", &g));
        assert!(!host_granted("api.example.com.evil.org", &g));
    }

    #[tokio::test]
    async fn granted_name_resolving_to_loopback_is_refused() {
        let granted = vec!["localhost".to_string()];
        let e = check(
            "localhost",
            80,
            &granted,
            &NetPolicy::default(),
            Duration::from_secs(5),
        )
        .await
        .expect_err("localhost is loopback");
        assert!(matches!(e, NetDenied::ForbiddenAddress { .. }), "{e}");
        assert!(e.to_string().contains("loopback"), "{e}");
    }

    #[tokio::test]
    async fn ungranted_and_allowed_private() {
        let e = check(
            "example.com",
            80,
            &[],
            &NetPolicy::default(),
            Duration::from_secs(1),
        )
        .await
        .expect_err("not granted");
        assert_eq!(e, NetDenied::HostNotGranted("example.com".into()));
        let granted = vec!["127.0.0.1".to_string()];
        let ok = check(
            "127.0.0.1",
            8080,
            &granted,
            &NetPolicy::new(vec![ip("127.0.0.1")]),
            Duration::from_secs(1),
        )
        .await
        .expect("operator allowed this private address");
        assert_eq!(ok.addr, "127.0.0.1:8080".parse().expect("addr"));
    }

    /// Answers every lookup with `answer` and counts the lookups.
    struct Fixed {
        answer: Vec<SocketAddr>,
        lookups: std::sync::atomic::AtomicUsize,
    }

    impl Resolve for Fixed {
        fn lookup<'a>(
            &'a self,
            _host: &'a str,
            _port: u16,
        ) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
            self.lookups
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let answer = self.answer.clone();
            Box::pin(async move { Ok(answer) })
        }
    }

    fn fixed(answer: &[&str]) -> Arc<Fixed> {
        Arc::new(Fixed {
            answer: answer.iter().map(|a| a.parse().expect("addr")).collect(),
            lookups: Default::default(),
        })
    }

    #[tokio::test]
    async fn the_policy_resolver_is_asked_once_and_only_for_granted_names() {
        let r = fixed(&["93.184.216.34:1"]);
        let net = NetPolicy::default().with_resolver(r.clone());
        let lookups = || r.lookups.load(std::sync::atomic::Ordering::SeqCst);
        let granted = vec!["api.example.com".to_string(), "8.8.8.8".to_string()];
        let t = Duration::from_secs(1);
        let ok = check("API.example.com.", 443, &granted, &net, t)
            .await
            .expect("public answer");
        assert_eq!(lookups(), 1);
        // The requested port, the name without its trailing dot.
        assert_eq!(ok.addr, "93.184.216.34:443".parse().expect("addr"));
        assert_eq!(ok.host, "api.example.com");
        check("evil.example.org", 443, &granted, &net, t)
            .await
            .expect_err("not granted");
        check("8.8.8.8", 443, &granted, &net, t)
            .await
            .expect("an address literal");
        assert_eq!(
            lookups(),
            1,
            "ungranted names and literals are not looked up"
        );
    }

    #[tokio::test]
    async fn one_private_address_in_the_answer_refuses_the_name() {
        let net = NetPolicy::default().with_resolver(fixed(&["93.184.216.34:0", "10.1.2.3:0"]));
        let granted = vec!["api.example.com".to_string()];
        let e = check(
            "api.example.com",
            80,
            &granted,
            &net,
            Duration::from_secs(1),
        )
        .await
        .expect_err("a private address in the answer");
        assert!(e.to_string().contains("10.1.2.3"), "{e}");
    }
}
