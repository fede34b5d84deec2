//! What a word names: a secret store, a remote host, a file path as the
//! analyses key it.

/// Whether `path` names a store of secrets: a private key, cloud or
/// registry credentials, a `.env`, a keychain, a browser's or a wallet's
/// store. A public key (`.pub`), `known_hosts` and an example `.env` are
/// not secrets.
pub(crate) fn is_secret_path(path: &str) -> bool {
    let p = path.to_ascii_lowercase().replace('\\', "/");
    let base = p.rsplit('/').next().unwrap_or(&p);
    if base.ends_with(".pub")
        || matches!(base, "known_hosts" | "authorized_keys" | "config.pub")
        || p.ends_with(".ssh/config")
    {
        return false;
    }
    if is_dotenv(base) || matches!(base, ".ssh" | ".aws" | ".gnupg" | "keychains") {
        return true;
    }
    SECRET_PARTS.iter().any(|part| p.contains(part))
}

/// `.env`, `.env.local`, `.env.production`; not `.env.example`.
fn is_dotenv(base: &str) -> bool {
    let Some(rest) = base.strip_prefix(".env") else {
        return false;
    };
    rest.is_empty()
        || (rest.starts_with('.')
            && ![
                "example", "sample", "template", "dist", "defaults", "schema",
            ]
            .iter()
            .any(|w| rest.contains(w)))
}

/// Pieces of a path that mark a secret store (lowercase).
const SECRET_PARTS: &[&str] = &[
    ".ssh/",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
    ".aws/credentials",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".docker/config.json",
    ".kube/config",
    ".config/gh/hosts.yml",
    ".gnupg",
    "/etc/shadow",
    "login data",
    "/cookies",
    "cookies.sqlite",
    "key4.db",
    "logins.json",
    "local state",
    "keychain",
    "wallet.dat",
    ".bitcoin/",
    ".ethereum/keystore",
    "/keystore/",
    "exodus",
    ".electrum",
    "metamask",
    "phantom",
    ".config/solana/id.json",
    "/proc/self/environ",
    "credentials.json",
    ".credentials",
    "service-account",
    ".vault-token",
    ".terraform.d/credentials",
    // Agent configs that hold the model providers' API keys and tokens.
    ".openclaw/openclaw.json",
    ".openclaw/credentials",
    ".clawdbot/clawdbot.json",
    ".codex/auth.json",
    ".azure/accesstokens.json",
    ".azure/msal_token_cache",
    // Shells' and database clients' histories: what was typed, passwords
    // and tokens given on a command line included (an app's own
    // `chat_history.json` is not one).
    ".bash_history",
    ".zsh_history",
    ".sh_history",
    ".histfile",
    "fish_history",
    ".psql_history",
    ".mysql_history",
    ".rediscli_history",
    "consolehost_history.txt",
];

/// Whether an environment variable by this name holds a credential strong
/// enough that sending it anywhere is exfiltration (cloud keys, private
/// keys, seed phrases). API tokens and keys sent to their own API are
/// what honest skills do, so `*_TOKEN`, `*_API_KEY` and `*_SECRET_KEY`
/// are not here.
pub(crate) fn is_secret_var(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "PRIVATE_KEY",
        "MNEMONIC",
        "SEED_PHRASE",
        "WALLET_KEY",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// Whether `word` is a URL or `host:path` whose host is this machine.
pub(crate) fn is_local_url(word: &str) -> bool {
    let host = host_of(word);
    matches!(
        host,
        "localhost" | "127.0.0.1" | "::1" | "0.0.0.0" | "host.docker.internal"
    ) || host.ends_with(".localhost")
}

/// The host of a URL (or of a `user@host:path` remote): no user, port or
/// IPv6 brackets.
pub(crate) fn host_of(word: &str) -> &str {
    let rest = word.split_once("://").map_or(word, |(_, r)| r);
    let host = rest
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("")
        .rsplit('@')
        .next()
        .unwrap_or("");
    host.strip_prefix('[')
        .and_then(|h| h.split(']').next())
        .unwrap_or_else(|| host.split(':').next().unwrap_or(host))
}

/// Whether a URL's host is a public IP address: a server with no name to
/// answer for (a project's repository has one; a throwaway host has not).
/// A private or loopback address is a host of the user's own network.
pub(crate) fn is_public_address_url(url: &str) -> bool {
    match host_of(url).parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(a)) => {
            !(a.is_private() || a.is_loopback() || a.is_link_local() || a.is_unspecified())
        }
        Ok(std::net::IpAddr::V6(a)) => !(a.is_loopback() || a.is_unspecified()),
        Err(_) => false,
    }
}

/// Whether `word` looks like a URL (scheme) of the network.
pub(crate) fn is_url(word: &str) -> bool {
    let w = word.trim_start_matches(['"', '\'']);
    [
        "http://", "https://", "ftp://", "ftps://", "git@", "ssh://", "git://", "//",
    ]
    .iter()
    .any(|s| w.get(..s.len()).is_some_and(|p| p.eq_ignore_ascii_case(s)))
}

/// Whether `word` is an scp/rsync remote (`host:path`, `user@host:path`).
pub(crate) fn is_remote_spec(word: &str) -> bool {
    if is_url(word) {
        return !is_local_url(word);
    }
    match word.split_once(':') {
        Some((host, _)) => {
            !host.is_empty()
                && !host.contains('/')
                && host.len() > 1
                && !is_local_url(host.rsplit('@').next().unwrap_or(host))
        }
        None => false,
    }
}

/// A path as the analyses key it: quotes gone, `$HOME`/`${HOME}` as `~`,
/// no leading `./`, no trailing `/`.
pub(crate) fn normalize(path: &str) -> String {
    let p = path.trim_matches(['"', '\'']);
    let p = p
        .strip_prefix("${HOME}")
        .or_else(|| p.strip_prefix("$HOME"))
        .map_or_else(|| p.to_owned(), |rest| format!("~{rest}"));
    let mut p = p.as_str();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    let p = p.trim_end_matches('/');
    if p.is_empty() {
        ".".into()
    } else {
        p.to_owned()
    }
}

/// The last part of a path or URL (without a query).
pub(crate) fn basename(path: &str) -> &str {
    let p = path.split(['?', '#']).next().unwrap_or(path);
    let p = p.trim_end_matches('/');
    p.rsplit(['/', '\\']).next().unwrap_or(p)
}

/// An archive's name without its archive extensions: what it extracts to
/// by convention (`tool-1.2.tar.gz` → `tool-1.2`).
pub(crate) fn archive_stem(name: &str) -> Option<&str> {
    let base = basename(name);
    [
        ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2", ".tar.zst", ".tar", ".zip", ".7z", ".txz",
    ]
    .iter()
    .find_map(|ext| {
        let cut = base.len().checked_sub(ext.len())?;
        (cut > 0 && base[cut..].eq_ignore_ascii_case(ext)).then(|| &base[..cut])
    })
}

/// Hosts that issue the credentials skills keep (tokens of a code host, a
/// cloud, a package registry, a model hub), and take them back as
/// authentication. A credential presented to one of these in an
/// authentication header (`Authorization:`, `-u`, a bearer token) is its
/// ordinary use: that host is where it came from and can already use it.
/// Anything else (a body, a URL, an upload, another host) stays exfiltration.
const ISSUERS: &[&str] = &[
    "github.com",
    "api.github.com",
    "uploads.github.com",
    "gitlab.com",
    "bitbucket.org",
    "api.bitbucket.org",
    "registry.npmjs.org",
    "pypi.org",
    "upload.pypi.org",
    "huggingface.co",
    "api.openai.com",
    "api.anthropic.com",
];

/// Clouds whose CLIs issue tokens for every endpoint under their domain.
const ISSUER_DOMAINS: &[&str] = &[
    ".amazonaws.com",
    ".googleapis.com",
    ".azure.com",
    ".digitalocean.com",
    ".heroku.com",
];

/// Whether `url` is https to an [`ISSUERS`] host or under an
/// [`ISSUER_DOMAINS`] domain, exactly as written: no user part, no
/// look-alike.
pub(crate) fn is_issuer_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("https://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') || !authority.is_ascii() {
        return false;
    }
    let host = authority
        .split(':')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    ISSUERS.contains(&host.as_str()) || ISSUER_DOMAINS.iter().any(|d| host.ends_with(d))
}

/// The http(s) URLs written in `raw`, each ending at a space, quote,
/// bracket or shell operator.
pub(crate) fn urls_in(raw: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = raw;
    while let Some(at) = find_scheme(rest) {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| c.is_whitespace() || "'\"`<>()|;&\\,{}[]".contains(c))
            .unwrap_or(tail.len());
        out.push(&tail[..end]);
        rest = &tail[end..];
    }
    out
}

fn find_scheme(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    match (lower.find("http://"), lower.find("https://")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether `url` is a published release or source archive of one
/// repository on its code host, over https as written: a GitHub release
/// asset (`github.com/O/R/releases/download/…`, `…/releases/latest/
/// download/…`) or source archive (`github.com/O/R/archive/…`), or a
/// GitLab release or archive (`gitlab.com/O/R/-/archive/…`). What it holds
/// is the repository's own code, as a clone of it is.
pub(crate) fn is_release_url(url: &str) -> bool {
    if is_registry_module(url) {
        return true;
    }
    let Some(rest) = url.strip_prefix("https://") else {
        return false;
    };
    if !rest.is_ascii() || rest.contains(['@', '%']) {
        return false;
    }
    let parts: Vec<&str> = rest
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .split('/')
        .collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == ".." || *p == ".")
    {
        return false;
    }
    matches!(
        parts.as_slice(),
        ["github.com", _, _, "releases", "download", _, _, ..]
            | ["github.com", _, _, "releases", "latest", "download", _, ..]
            | ["github.com", _, _, "archive", _, ..]
            | ["gitlab.com", _, _, "-", "archive" | "releases", _, ..]
    )
}

/// A module of Deno's registries (`https://deno.land/x/…`,
/// `https://deno.land/std@…/…`, `https://jsr.io/@scope/…`): published
/// code, as a package is.
fn is_registry_module(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("https://") else {
        return false;
    };
    let mut parts = rest.split('/');
    match (parts.next(), parts.next()) {
        (Some("deno.land"), Some(first)) => {
            first == "x" || first.starts_with("std@") || first == "std"
        }
        (Some("jsr.io"), Some(scope)) => scope.starts_with('@'),
        _ => false,
    }
}

/// Cloud instance metadata endpoints: what they answer under their
/// credential paths is the machine's cloud credentials (AWS, Azure,
/// GCP, Alibaba, ECS task roles, OCI).
const METADATA_HOSTS: &[&str] = &[
    "169.254.169.254",
    "[fd00:ec2::254]",
    "169.254.170.2",
    "metadata.google.internal",
    "metadata",
    "100.100.100.200",
];

/// Whether `url` asks a cloud metadata endpoint for anything: tokens,
/// role credentials, instance identity.
pub(crate) fn is_metadata_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = match host.strip_prefix('[') {
        Some(_) => host.split(']').next().map(|h| format!("{h}]")),
        None => host.split(':').next().map(str::to_owned),
    }
    .unwrap_or_default()
    .to_ascii_lowercase();
    METADATA_HOSTS.contains(&host.as_str()) && (url.contains("://") || host != "metadata")
}

/// Whether `operand` of a package manager or build tool names a file
/// (a path, or a package file by its extension) rather than a package
/// of a registry or a build target.
pub(crate) fn names_package_file(operand: &str) -> bool {
    const EXTS: &[&str] = &[
        ".deb", ".rpm", ".whl", ".tar.gz", ".tgz", ".zip", ".pkg", ".msi", ".jar", ".gem",
        ".crate", ".apk", ".nupkg", ".vsix", ".tar.xz", ".tar.bz2", ".egg",
    ];
    let lower = operand.to_ascii_lowercase();
    lower.contains('/') || lower.starts_with(['.', '~']) || EXTS.iter().any(|e| lower.ends_with(e))
}

/// PowerShell's `-EncodedCommand` text: base64 of UTF-16LE.
pub(crate) fn decode_utf16_base64(blob: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(blob.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in blob.trim().trim_end_matches('=').bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = ((acc << 6) | u32::from(v)) & 0xFFFF;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((acc >> bits) as u8);
        }
    }
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16(&units).ok()
}
