//! Code sent away through git: `git push` (any refs, `--mirror`, `--all`)
//! to a remote whose address *and credentials* the skill writes itself
//! (`https://bot:TOKEN@host/vault/repo.git`, directly or through `git
//! remote add`) sends the user's repository to an account the skill's
//! author holds. A remote the user names (`origin`, `$BACKUP_URL`,
//! `<your-remote>`) or one with no credentials in it is the user's own.

use super::super::paths;
use super::{Run, Value};
use crate::audit::flow::Taint;

impl Run<'_, '_> {
    /// `git remote add|set-url NAME URL`: notes what NAME points at. A
    /// second push URL (`set-url --add --push`) on a host the skill
    /// writes sends every later push of the user there too, unseen.
    pub(super) fn note_remote(&mut self, ops: &[&Value], args: &[Value], span: (usize, usize)) {
        let words: Vec<&str> = ops.iter().map(|v| v.text.as_str()).collect();
        if let ["remote", "add" | "set-url", name, url, ..] = words.as_slice() {
            self.me
                .remotes
                .insert((*name).to_owned(), (*url).to_owned());
            let flag = |f: &str| args.iter().any(|a| a.text == f);
            if words[1] == "set-url"
                && flag("--add")
                && flag("--push")
                && let Some(host) = written_host(url)
            {
                self.hits.repo_exfil(self.me.text, span, host);
            }
        }
    }

    /// `git push [REMOTE]`: a send of the repository when the remote's
    /// URL carries credentials the skill wrote; a send of what the
    /// skill's commits hold to any address the skill wrote.
    pub(super) fn push(&mut self, ops: &[&Value], span: (usize, usize)) {
        let Some(target) = ops.get(1) else {
            return;
        };
        let url = self
            .me
            .remotes
            .get(&target.text)
            .cloned()
            .unwrap_or_else(|| target.text.clone());
        if let Some(host) = credentialed_host(&url) {
            self.hits.repo_exfil(self.me.text, span, host);
        }
        if paths::is_remote_spec(&url) {
            self.send(self.me.committed, span);
        }
    }

    /// `git commit -m MSG -F FILE`, `git add FILE`, `git notes|tag -m
    /// MSG`: the history holds the messages and the files' contents.
    pub(super) fn commit(&mut self, args: &[Value], span: (usize, usize)) {
        let mut held = Taint::default();
        let mut words = args.iter();
        while let Some(w) = words.next() {
            let t = w.text.as_str();
            if matches!(t, "-m" | "--message") {
                held = held.union(words.next().map(|v| v.taint).unwrap_or_default());
            } else if matches!(t, "-F" | "--file") {
                let file = words.next().map(|v| self.secret_file(&v.text, span.0));
                held = held.union(file.unwrap_or_default());
            } else if t.starts_with("-m") || t.starts_with("--message=") {
                held = held.union(w.taint);
            } else if !t.starts_with('-') {
                held = held.union(w.taint).union(self.secret_file(t, span.0));
            }
        }
        self.me.committed = self.me.committed.union(held);
    }
}

/// The host of `url` when its authority, as written, holds a user and a
/// password or token (`user:secret@host`), none of it a variable or a
/// placeholder; `None` otherwise.
fn credentialed_host(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let (userinfo, host) = authority.rsplit_once('@')?;
    let (user, secret) = userinfo.split_once(':')?;
    let written = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~%".contains(c))
    };
    // A documentation placeholder: `user:password`, `YOUR_TOKEN`, `xxxx`.
    let placeholder = |s: &str| {
        let l = s.to_ascii_lowercase();
        l.starts_with("your")
            || l.starts_with("my")
            || matches!(
                l.as_str(),
                "user" | "username" | "login" | "pass" | "password" | "token" | "secret" | "pat"
            )
            || l.chars().all(|c| c == l.chars().next().unwrap_or('x'))
    };
    let ok = written(user) && written(secret) && !placeholder(user) && !placeholder(secret);
    (ok && !paths::is_local_url(url)).then_some(host)
}

/// The host of `url` when the skill wrote it out: no variable or
/// placeholder in it, not this machine or a private network, not a
/// documentation name (RFC 2606: `example.com`, `.example`, `.test`).
fn written_host(url: &str) -> Option<&str> {
    let host = paths::host_of(url);
    let literal = !host.is_empty()
        && host.contains('.')
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-.".contains(c));
    let lower = host.to_ascii_lowercase();
    let documentation = ["example.com", "example.net", "example.org"]
        .iter()
        .any(|d| lower == *d || lower.ends_with(&format!(".{d}")))
        || [
            ".example",
            ".test",
            ".local",
            ".localhost",
            ".internal",
            ".lan",
        ]
        .iter()
        .any(|t| lower.ends_with(t));
    let private = host
        .parse::<std::net::Ipv4Addr>()
        .is_ok_and(|a| a.is_private() || a.is_loopback());
    (literal && !documentation && !private && !paths::is_local_url(url)).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::{credentialed_host, written_host};

    #[test]
    fn a_written_host_is_neither_a_variable_nor_a_documentation_name() {
        assert_eq!(
            written_host("https://git-mirror.h.example.net.invalid/u/r.git"),
            Some("git-mirror.h.example.net.invalid")
        );
        assert_eq!(
            written_host("git@vault.h.invalid:x/r.git"),
            Some("vault.h.invalid")
        );
        for honest in [
            "https://$MIRROR_HOST/u/r.git",
            "https://git.example.com/team/r.git",
            "ssh://git@gitea.lan/team/r.git",
            "https://10.0.0.7/team/r.git",
            "<your-mirror-url>",
        ] {
            assert_eq!(written_host(honest), None, "{honest}");
        }
    }

    #[test]
    fn only_a_written_user_and_secret_make_a_credentialed_remote() {
        assert_eq!(
            credentialed_host("https://sync:9f8e7d6c5b4a@git.example.net/vault/app.git"),
            Some("git.example.net")
        );
        for honest in [
            "https://github.com/acme/app.git",
            "https://$GH_USER:$GH_TOKEN@github.com/acme/app.git",
            "https://<user>:<token>@github.com/acme/app.git",
            "https://user:password@git.example.net/app.git",
            "https://YOUR_USER:YOUR_TOKEN@github.com/acme/app.git",
            "https://oauth2:${CI_JOB_TOKEN}@gitlab.com/acme/app.git",
            "git@github.com:acme/app.git",
            "http://dev:secret1@localhost:3000/app.git",
        ] {
            assert_eq!(credentialed_host(honest), None, "{honest}");
        }
    }
}
