//! Commands that print or export a credential: a cloud CLI's token, a
//! password manager's vault or item, a keychain dump.

use super::super::Value;

/// Commands whose output is a credential of a known issuer: a git
/// credential helper's answer, a code host's or cloud's CLI token (by
/// program and the words that ask for it). Presented in an authentication
/// header to its issuer (`paths::is_issuer_url`) it is used, not sent
/// away. A password manager's item (`op read`, `pass show`) is left out:
/// its issuer is unknown, and an API key sent in a header to its API is
/// its ordinary use.
pub(super) const PRINTS_CREDENTIAL: &[(&str, &[&str])] = &[
    ("git", &["credential", "fill"]),
    ("git", &["credential-store", "get"]),
    ("git", &["credential-osxkeychain", "get"]),
    ("gh", &["auth", "token"]),
    ("glab", &["auth", "token"]),
    ("gcloud", &["auth", "print-access-token"]),
    ("gcloud", &["auth", "print-identity-token"]),
    (
        "gcloud",
        &["auth", "application-default", "print-access-token"],
    ),
    ("az", &["account", "get-access-token"]),
    ("aws", &["configure", "export-credentials"]),
    ("aws", &["sts", "get-session-token"]),
    ("aws", &["ecr", "get-login-password"]),
    ("doctl", &["auth", "token"]),
    ("heroku", &["auth:token"]),
    ("kubectl", &["config", "view", "--raw"]),
    // A password manager's whole vault, exported (an item is left out:
    // see above).
    ("bw", &["export"]),
    ("lpass", &["export"]),
    ("keepassxc-cli", &["export"]),
    ("op", &["export"]),
];

/// Whether `prog ARGS` prints a credential ([`PRINTS_CREDENTIAL`]): its
/// words, options aside, start with the listed ones.
pub(super) fn prints_credential(prog: &str, args: &[Value]) -> bool {
    PRINTS_CREDENTIAL.iter().any(|(p, words)| {
        *p == prog && {
            let mut it = args
                .iter()
                .map(|a| a.text.as_str())
                .filter(|t| !t.starts_with('-') || words.contains(t));
            words.iter().all(|w| it.next() == Some(*w))
        }
    })
}

/// Whether `prog ARGS` prints the clipboard, which holds what was just
/// copied: passwords, keys, recovery phrases.
pub(super) fn reads_clipboard(prog: &str, args: &[Value]) -> bool {
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.text.as_str()));
    match prog {
        "pbpaste" | "wl-paste" => true,
        "xclip" => has(&["-o", "-out"]),
        "xsel" => has(&["-o", "--output"]),
        _ => false,
    }
}

/// `security dump-keychain`, `security find-… -w`… `gpg --export-secret-keys`.
pub(super) fn dumps_secrets(args: &[Value]) -> bool {
    args.iter().any(|a| {
        matches!(
            a.text.as_str(),
            "dump-keychain" | "--export-secret-keys" | "--export-secret-subkeys" | "export"
        )
    })
}
