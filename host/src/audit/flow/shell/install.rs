//! Installing as root: a file downloaded from a host that is not a listed
//! vendor, written or installed with root privileges (`sudo`, `doas`,
//! `pkexec`, `su -c`, a root shell, a script that insists on root) into a
//! system location, and never checked against a checksum or a signature
//! in the flow, is `flow-unverified-root-install`. What counts as a check
//! is the command that does one (`sha256sum -c`, `gpg --verify`, `cosign
//! verify-blob`, `minisign -V`…) naming the file, or a checksum list of
//! its folder.

use std::sync::LazyLock;

use regex::Regex;

use super::super::paths::{self, normalize};
use super::{Interpreter, Run, Value};
use crate::audit::flow::{Hits, Taint};

/// A download written as root into a system location, not yet verified.
#[derive(Debug, Clone)]
pub(super) struct Install {
    path: String,
    taint: Taint,
    span: (usize, usize),
}

/// Folders only root writes on Linux and macOS.
const SYSTEM_DIRS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/etc",
    "/boot",
    "/root",
    "/srv",
    "/Library",
    "/System",
    "/Applications",
];

/// Whether the normalised path `p` is in a system location.
pub(super) fn is_system_path(p: &str) -> bool {
    SYSTEM_DIRS.iter().any(|d| {
        p.strip_prefix(d)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// Whether `p` is in a package manager's folder of trust keys
/// (`/etc/apt/keyrings`, `/usr/share/keyrings`, `trusted.gpg.d`,
/// `/etc/pki/rpm-gpg`): a vendor's signing key put there is how its
/// packages get verified, not a program installed. Run from there, a
/// download is still `flow-download-exec`.
fn is_keyring_path(p: &str) -> bool {
    ["/keyrings/", "/trusted.gpg.d/", "/rpm-gpg/"]
        .iter()
        .any(|d| p.contains(d))
}

/// Whether a script checks it runs as root (`[ "$EUID" -ne 0 ]`,
/// `[ "$(id -u)" != 0 ]`): what it writes, it writes as root.
pub(super) fn insists_on_root(code: &str) -> bool {
    static CHECK: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(
            r#"(?:\$\{?EUID\}?|\$\{?UID\}?|\$\(\s*id -u\s*\)|`id -u`)["']?\s*(?:-ne|!=|-eq|==|=|-gt)\s*["']?0\b"#,
        )
        .ok()
    });
    CHECK.as_ref().is_some_and(|re| re.is_match(code))
}

impl Interpreter<'_> {
    /// `p` was written with `taint`: a root write of a download into a
    /// system location waits for a check.
    pub(super) fn note_write(&mut self, p: &str, taint: Taint) {
        let root = self.root || self.root_unit;
        if !root
            || !is_system_path(p)
            || is_keyring_path(p)
            || !taint.has(Taint::DOWNLOADED)
            || taint.has(Taint::VERIFIED)
        {
            return;
        }
        self.installs.push(Install {
            path: p.to_owned(),
            taint,
            span: self.at,
        });
    }

    /// The files `names` name (a path, or `DIR/*` for a folder's checksum
    /// list) are verified: what they hold, and installs of them.
    fn verify(&mut self, names: &[String]) {
        for name in names {
            let n = normalize(name);
            let covers = |p: &str| covers(&n, p);
            for (p, t) in self.files.iter_mut() {
                if covers(p) {
                    *t = t.with(Taint::VERIFIED);
                }
            }
            for (base, t) in self.bases.iter_mut() {
                if paths::basename(&n) == base {
                    *t = t.with(Taint::VERIFIED);
                }
            }
            self.installs.retain(|i| !covers(&i.path));
        }
    }

    /// Reports the installs never verified (called once per file).
    pub fn finish(&mut self, hits: &mut Hits) {
        for i in std::mem::take(&mut self.installs) {
            hits.root_install(self.text, i.taint, i.span, &i.path);
        }
    }
}

/// Whether the verified name `n` covers the file `p`: the same path, the
/// same file name, or a file of the folder `DIR/*` names.
fn covers(n: &str, p: &str) -> bool {
    if n == "*" {
        // The current folder's files (`./*` normalised).
        return !p.starts_with(['/', '~', '$']);
    }
    if let Some(dir) = n.strip_suffix("/*") {
        return p.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
    }
    n == p || paths::basename(n) == paths::basename(p)
}

impl Run<'_, '_> {
    /// `sudo -i`, `sudo su -`, `sudo bash`, `su`: what follows in this
    /// block runs as root. `words` start at the program.
    pub(super) fn note_root_shell(&mut self, words: &[Value]) {
        let Some((name, args)) = words.split_first() else {
            return;
        };
        let prog = paths::basename(&name.text);
        let opens = match prog {
            "sudo" | "doas" => args
                .iter()
                .any(|a| matches!(a.text.as_str(), "-i" | "-s" | "--login" | "--shell")),
            "su" | "bash" | "sh" | "zsh" => args.iter().all(|a| a.text.starts_with('-')),
            _ => false,
        };
        let command = matches!(prog, "su") && args.iter().any(|a| a.text == "-c");
        if opens && !command {
            self.me.root_unit = true;
        }
    }

    /// A checksum or signature check: the files it checks are verified.
    pub(super) fn verify_step(&mut self, prog: &str, args: &[Value]) {
        let names = self.checked_files(prog, args);
        if !names.is_empty() {
            self.me.verify(&names);
        }
    }

    /// The files `prog ARGS` checks, when it checks any.
    fn checked_files(&self, prog: &str, args: &[Value]) -> Vec<String> {
        let words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
        let operands = || {
            words
                .iter()
                .filter(|w| !w.starts_with('-'))
                .map(|w| (*w).to_owned())
        };
        let has = |opts: &[&str]| words.iter().any(|w| opts.contains(w));
        if is_checksum_tool(prog) {
            if !words.iter().any(|w| is_check_flag(w)) {
                return Vec::new();
            }
            return self.listed_files(prog, &words);
        }
        let signed = match prog {
            "gpg" | "gpg2" => has(&["--verify"]),
            "gpgv" | "gpgv2" | "slsa-verifier" => true,
            "cosign" => words.iter().any(|w| w.starts_with("verify")),
            "minisign" | "signify" => words.iter().any(|w| is_verify_cluster(w)),
            "openssl" => has(&["-verify", "-prverify"]),
            "gh" => words.starts_with(&["attestation", "verify"]),
            _ => false,
        };
        if !signed {
            return Vec::new();
        }
        // Every operand, and the file a detached signature is named for.
        let mut names: Vec<String> = operands().collect();
        names.extend(operands().filter_map(|w| signed_file(&w).map(str::to_owned)));
        names
    }

    /// The files a `sha256sum -c` checks: those its list names (the list
    /// read from stdin when its text is known), the file a `NAME.sha256`
    /// list is named for, or else every file of the list's folder.
    fn listed_files(&self, prog: &str, words: &[&str]) -> Vec<String> {
        let mut lists: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| !w.starts_with('-') || *w == "-")
            .collect();
        if prog == "shasum" {
            // `-a 256`: the algorithm's number is no list.
            lists.retain(|w| w.parse::<u32>().is_err());
        }
        let from_stdin = lists.is_empty() || lists.contains(&"-");
        let mut names = Vec::new();
        if from_stdin {
            match self.printed.as_deref().or(self.heredoc_text.as_deref()) {
                Some(text) => names.extend(checksum_lines(text)),
                None => names.push("./*".to_owned()),
            }
        }
        for list in lists.into_iter().filter(|l| *l != "-") {
            match signed_file(list) {
                Some(file) => names.push(file.to_owned()),
                None => {
                    let dir = list.rsplit_once('/').map_or(".", |(d, _)| d);
                    names.push(format!("{dir}/*"));
                }
            }
        }
        names
    }
}

fn is_checksum_tool(prog: &str) -> bool {
    matches!(
        prog,
        "sha256sum"
            | "sha512sum"
            | "sha384sum"
            | "sha224sum"
            | "sha1sum"
            | "md5sum"
            | "b2sum"
            | "b3sum"
            | "shasum"
            | "gsha256sum"
    )
}

/// `-c`, `--check`, or a cluster of flags that take no value holding
/// `c` (`-cw`): a checksum tool's check.
fn is_check_flag(w: &str) -> bool {
    w == "--check"
        || w.strip_prefix('-').is_some_and(|c| {
            !c.starts_with('-') && c.contains('c') && c.chars().all(|l| "cswq".contains(l))
        })
}

/// `-V`, `-Vm`, `-Vp`: minisign's and signify's verify.
fn is_verify_cluster(w: &str) -> bool {
    w.strip_prefix('-')
        .is_some_and(|c| !c.starts_with('-') && c.contains('V'))
}

/// The file a detached signature or checksum file is named for:
/// `tool.tar.gz.sha256` → `tool.tar.gz`.
fn signed_file(name: &str) -> Option<&str> {
    const EXTS: &[&str] = &[
        ".sha256sum",
        ".sha512sum",
        ".sha256",
        ".sha512",
        ".sha1",
        ".md5",
        ".asc",
        ".sig",
        ".minisig",
        ".sigstore",
        ".bundle",
        ".pem",
        ".gpg",
    ];
    EXTS.iter().find_map(|e| {
        let cut = name.len().checked_sub(e.len())?;
        (cut > 0 && name.get(cut..)?.eq_ignore_ascii_case(e)).then(|| &name[..cut])
    })
}

/// The file names of checksum lines (`HASH  name`, `HASH *name`).
fn checksum_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let _hash = it.next()?;
            let name = it.next()?.trim_start_matches('*');
            (!name.is_empty()).then(|| name.to_owned())
        })
        .collect()
}
