//! Reading a skill the way it will run: the shell in its code blocks and
//! scripts is parsed, and data is followed from command to command, so a
//! download run three lines later, or a private key put in a variable and
//! sent on the next line, is a finding even though no one line shows it.
//!
//! The parser is tree-sitter with its bash grammar (`tree-sitter`,
//! `tree-sitter-bash`), chosen over `brush-parser` after trying both on the
//! same snippets: skills are full of partial shell (`TOKEN=<your-token>`,
//! an `if` without its `fi`, `...`), and brush-parser rejects the whole
//! block at the first such error, where tree-sitter recovers (an `ERROR`
//! node) and keeps every command around it; brush-parser's PEG recursion
//! overflowed the stack on 10,000 nested `$(`, tree-sitter's parser is
//! iterative; and tree-sitter parses command substitutions into the tree
//! where brush keeps them as words to parse again. Both built on Rust 1.95
//! from crates.io (tree-sitter with `cc`, already in the tree); speed was
//! alike (~20 ms for 120 KB of shell).
//!
//! Python, JavaScript and PowerShell are read as tokens (`tokens.rs`) with
//! the same taint model (`script.rs`), functions' returns and parameters
//! included. Code a shell command hands an interpreter (`python3 -c`,
//! `node -e`, `python3 - <<EOF`, `pwsh -EncodedCommand`, `perl -e`,
//! `ruby -e`) is read by that language's engine and reported at the
//! command. What this cannot see is written in docs/audit.md, "How
//! scripts and code blocks are read".

mod batch;
mod blocks;
mod config;
mod make;
mod paths;
mod script;
mod shell;
mod tokens;
mod yaml;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_install;
#[cfg(test)]
mod tests_loaders;
#[cfg(test)]
mod tests_more;
#[cfg(test)]
mod tests_reach;
#[cfg(test)]
mod tests_remote;

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder};

use super::Severity;

/// A rule of the flow analysis: not in rules.toml, since it is code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowRule {
    pub id: &'static str,
    pub severity: Severity,
    pub description: &'static str,
}

pub const DOWNLOAD_EXEC: FlowRule = FlowRule {
    id: "flow-download-exec",
    severity: Severity::High,
    description: "content fetched from the network (a download to a file, a variable, a pipe, an extracted archive) is later executed: run, sourced, eval'd, piped into a shell, installed",
};
pub const CLONE_EXEC: FlowRule = FlowRule {
    id: "flow-clone-exec",
    severity: Severity::Medium,
    description: "a script or build of a repository cloned from a URL, of a project's release asset, or of a downloaded source archive is run (how source installs work; shown, not held back)",
};
pub const SECRET_EXFIL: FlowRule = FlowRule {
    id: "flow-secret-exfil",
    severity: Severity::High,
    description: "a secret (a private key, cloud credentials, .env, the whole environment, a keychain, a browser or wallet store) is read and later sent to the network: a request body or URL, nc, /dev/tcp, scp, DNS",
};
pub const DECODE_EXEC: FlowRule = FlowRule {
    id: "flow-decode-exec",
    severity: Severity::High,
    description: "code decoded at run time in a script (base64, hex, zlib, char codes) is executed: what runs cannot be read in the skill",
};
pub const UNVERIFIED_ROOT_INSTALL: FlowRule = FlowRule {
    id: "flow-unverified-root-install",
    severity: Severity::High,
    description: "a file downloaded from a host that is not a listed vendor is written or installed with root privileges (sudo, doas, a root shell) into a system location (/usr, /bin, /opt, /etc, /Library…) and never checked against a checksum or a signature",
};
pub const REPO_EXFIL: FlowRule = FlowRule {
    id: "flow-repo-exfil",
    severity: Severity::High,
    description: "a repository is pushed (git push, --mirror, --all) to a remote whose URL holds a user and a password or token written in the skill: the user's code goes to an account the skill's author holds",
};
pub const FLOW_LIMIT: FlowRule = FlowRule {
    id: "flow-limit",
    severity: Severity::Medium,
    description: "a script or code block too large or too deeply nested for the flow analysis to read whole (the line rules still read it)",
};

/// Every flow rule, for listings beside the rules of rules.toml.
pub const FLOW_RULES: &[FlowRule] = &[
    DOWNLOAD_EXEC,
    CLONE_EXEC,
    SECRET_EXFIL,
    DECODE_EXEC,
    UNVERIFIED_ROOT_INSTALL,
    REPO_EXFIL,
    FLOW_LIMIT,
];

/// Where data came from, as a set of kinds and the first place one was
/// seen (a byte offset into the audited text).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Taint {
    bits: u16,
    origin: Option<usize>,
}

impl Taint {
    pub const FETCHED: u16 = 1;
    pub const CLONED: u16 = 2;
    pub const SECRET: u16 = 4;
    /// Fetched from a URL that is not a well-known official installer
    /// (the vendor tier's list, `vendors.toml`).
    pub const UNVETTED: u16 = 8;
    /// Code a project publishes (a release asset, a source archive built
    /// the way source is built): rated as a clone of the project is.
    pub const PUBLISHED: u16 = 16;
    /// Decoded at run time from an encoding (base64, hex, zlib, char codes).
    pub const DECODED: u16 = 32;
    /// Bytes as a host that is not a listed vendor served them (a file
    /// downloaded as it is, a release asset; not a build of them).
    pub const DOWNLOADED: u16 = 64;
    /// Checked against a checksum or a signature in the flow.
    pub const VERIFIED: u16 = 128;

    pub fn new(bits: u16, origin: usize) -> Self {
        Taint {
            bits,
            origin: Some(origin),
        }
    }

    pub fn is_clean(self) -> bool {
        self.bits == 0
    }

    pub fn has(self, bit: u16) -> bool {
        self.bits & bit != 0
    }

    /// This taint with `bit` added (when it holds anything at all).
    pub fn with(self, bit: u16) -> Taint {
        if self.is_clean() {
            return self;
        }
        Taint {
            bits: self.bits | bit,
            ..self
        }
    }

    /// This taint without `bit`.
    pub fn without(self, bit: u16) -> Taint {
        Taint {
            bits: self.bits & !bit,
            ..self
        }
    }

    /// Fetched code taken as a project's published code: a clone's tier.
    pub fn as_published(self) -> Taint {
        if !self.has(Self::FETCHED) {
            return self;
        }
        let bits = (self.bits & !(Self::FETCHED | Self::UNVETTED)) | Self::CLONED | Self::PUBLISHED;
        Taint { bits, ..self }
    }

    pub fn union(self, other: Taint) -> Taint {
        Taint {
            bits: self.bits | other.bits,
            origin: match (self.origin, other.origin) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

/// A flow finding, at a byte range of the audited text.
#[derive(Debug, Clone)]
pub(crate) struct FlowHit {
    pub rule: FlowRule,
    pub severity: Severity,
    pub start: usize,
    pub end: usize,
    /// Where the data came from (a byte offset), or `start`.
    pub origin: usize,
    pub note: String,
}

/// Collects hits, one per rule and sink.
#[derive(Debug, Default)]
pub(crate) struct Hits {
    pub list: Vec<FlowHit>,
}

impl Hits {
    /// An execution of data with `taint`, at `start..end` of the text.
    pub fn exec(&mut self, text: &str, taint: Taint, (start, end): (usize, usize)) {
        let rule = if taint.has(Taint::FETCHED) {
            DOWNLOAD_EXEC
        } else if taint.has(Taint::CLONED) {
            CLONE_EXEC
        } else if taint.has(Taint::DECODED) {
            DECODE_EXEC
        } else {
            return;
        };
        let what = if rule == CLONE_EXEC && taint.has(Taint::PUBLISHED) {
            "runs a project's published release or a build of its downloaded source"
        } else if rule == CLONE_EXEC {
            "runs code of the repository cloned"
        } else if rule == DECODE_EXEC {
            "runs what was decoded"
        } else if taint.has(Taint::UNVETTED) {
            "runs what was fetched"
        } else {
            "runs what was fetched from an official installer's site"
        };
        // An official installer is what pipe-to-shell also rates medium.
        let severity = if rule == DOWNLOAD_EXEC && !taint.has(Taint::UNVETTED) {
            Severity::Medium
        } else {
            rule.severity
        };
        self.push(text, (rule, severity), taint, (start, end), what);
    }

    /// A send to the network of data with `taint`.
    pub fn send(&mut self, text: &str, taint: Taint, (start, end): (usize, usize)) {
        if taint.has(Taint::SECRET) {
            let what = "sends the secret read";
            let rule = (SECRET_EXFIL, SECRET_EXFIL.severity);
            self.push(text, rule, taint, (start, end), what);
        }
    }

    /// A download installed as root into a system location `path`,
    /// never verified.
    pub fn root_install(&mut self, text: &str, taint: Taint, span: (usize, usize), path: &str) {
        let what = format!("installs as root into {path}, unverified, what was downloaded");
        let rule = (UNVERIFIED_ROOT_INSTALL, UNVERIFIED_ROOT_INSTALL.severity);
        self.push(text, rule, taint, span, &what);
    }

    /// A repository pushed to a remote with the skill's credentials.
    pub fn repo_exfil(&mut self, text: &str, span: (usize, usize), host: &str) {
        let what = format!("pushes the repository to {host} with credentials the skill wrote");
        let rule = (REPO_EXFIL, REPO_EXFIL.severity);
        self.push(text, rule, Taint::new(0, span.0), span, &what);
    }

    pub fn limit(&mut self, at: usize, why: &str) {
        self.list.push(FlowHit {
            rule: FLOW_LIMIT,
            severity: FLOW_LIMIT.severity,
            start: at,
            end: at,
            origin: at,
            note: why.to_owned(),
        });
    }

    fn push(
        &mut self,
        text: &str,
        (rule, severity): (FlowRule, Severity),
        taint: Taint,
        span: (usize, usize),
        what: &str,
    ) {
        if self
            .list
            .iter()
            .any(|h| h.rule == rule && h.start == span.0)
        {
            return;
        }
        let origin = taint.origin.unwrap_or(span.0).min(text.len());
        let line = text.as_bytes()[..origin]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        self.list.push(FlowHit {
            rule,
            severity,
            start: span.0,
            end: span.1,
            origin,
            note: format!("{what} at line {line}"),
        });
    }
}

/// The language of a script or code block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Lang {
    Shell,
    Python,
    JavaScript,
    PowerShell,
    /// Perl scripts and `perl -e`.
    Perl,
    /// Ruby scripts and `ruby -e`.
    Ruby,
    Php,
    Go,
    Lua,
}

/// The flow findings of one file's text.
pub(crate) fn scan(file: &str, text: &str) -> Vec<FlowHit> {
    // A batch file can spell every word from substrings: read it whole.
    if !worth_reading(text) && !blocks::is_batch(file) {
        return Vec::new();
    }
    let units = blocks::units(file, text);
    if units.is_empty() {
        return Vec::new();
    }
    let mut hits = Hits::default();
    let mut shell = shell::Interpreter::new(text);
    let mut scripts = script::Engines::new(text);
    for unit in &units {
        match unit.lang {
            Lang::Shell => {
                shell.run_unit(unit, &mut hits);
                for e in std::mem::take(&mut shell.embedded) {
                    scripts.run_embedded(&e, &mut hits);
                }
            }
            lang => scripts.run_unit(lang, unit, &mut hits),
        }
    }
    shell.finish(&mut hits);
    hits.list
}

/// The cheap test before any parse: a flow needs a source and a sink, so a
/// text naming no fetch, clone or secret has none.
fn worth_reading(text: &str) -> bool {
    static SOURCES: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .build(SOURCE_WORDS)
            .ok()
    });
    // Without the automaton (it cannot fail to build on these words),
    // read everything.
    SOURCES.as_ref().is_none_or(|ac| ac.is_match(text))
}

/// Words of every taint source the analyses know (`paths.rs`, `shell.rs`,
/// `script.rs`): keep in step with them.
const SOURCE_WORDS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "iwr",
    "irm",
    "invoke-",
    "download",
    "urlopen",
    "urlretrieve",
    "requests.",
    "httpx",
    "axios",
    "got(",
    "git clone",
    "gh repo clone",
    "svn ",
    "rsync",
    "base32",
    "basenc",
    "xxd",
    "uudecode",
    "rev",
    "| tr",
    "xargs",
    // cmd's substrings (`%k:~2,1%`) can spell any word.
    ":~",
    "mshta",
    "msiexec",
    "regsvr32",
    "rundll32",
    "scp ",
    "ssh ",
    "finger",
    "nslookup",
    "dig ",
    "nc ",
    "ncat",
    "netcat",
    "telnet",
    "socat",
    "s_client",
    "resolve-dnsname",
    "clipboard",
    "pbpaste",
    "wl-paste",
    "xclip",
    "xsel",
    "resolvetxt",
    "resolver.",
    // A UNC path: a share on another host.
    "\\\\",
    "sftp",
    ".recv",
    "socket",
    "file_get_contents",
    "http.get",
    "http.request",
    "fsockopen",
    "history",
    ".ssh",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    ".aws",
    ".env",
    "env",
    "environ",
    "security ",
    "keychain",
    "login data",
    "cookies",
    "local state",
    "key4.db",
    "logins.json",
    "wallet",
    "keystore",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".kube",
    ".docker",
    ".gnupg",
    "shadow",
    "secret",
    "private",
    "mnemonic",
    "seed",
    "exodus",
    "electrum",
    "solana",
    "metamask",
    "credential",
    "169.254.",
    "metadata",
    "auth token",
    "access-token",
    "b64decode",
    "b32decode",
    "b85decode",
    "a85decode",
    "decodebytes",
    "decompress",
    "fromhex",
    "unhexlify",
    "codecs",
    "fromcharcode",
    "atob",
    "inflatesync",
    "gunzipsync",
    "base64",
    "frombase64string",
    "-enc",
    "-e ",
];
