//! Programs that fetch or send over the network (curl, wget, the other
//! downloaders, version control, remote copies): what they fetch, where
//! they write it, and what they send.

use super::super::super::super::vendors::vendor_of;
use super::super::super::paths::{self, is_local_url, is_metadata_url, is_release_url, is_url};
use super::super::{Run, Value};
use super::{Opts, Span, is_authentication, values_taint};
use crate::audit::flow::Taint;

/// curl's short options that take a value, and its long ones.
const CURL_SHORT: &str = "dFTHuXAebcxowKmrEPtUyYzQCDh";
const CURL_LONG: &[&str] = &[
    "data",
    "data-raw",
    "data-binary",
    "data-urlencode",
    "data-ascii",
    "json",
    "form",
    "form-string",
    "upload-file",
    "header",
    "user",
    "request",
    "user-agent",
    "referer",
    "cookie",
    "cookie-jar",
    "proxy",
    "output",
    "write-out",
    "config",
    "max-time",
    "range",
    "cert",
    "key",
    "cacert",
    "output-dir",
    "url",
    "retry",
    "connect-timeout",
    "resolve",
    "oauth2-bearer",
    "variable",
    "expand-data",
    "aws-sigv4",
    "ciphers",
    "interface",
    "proto",
    "proto-redir",
    "proto-default",
    "tls-max",
    "max-redirs",
    "retry-delay",
    "retry-max-time",
    "limit-rate",
    "speed-limit",
    "speed-time",
    "dump-header",
    "stderr",
    "trace",
    "trace-ascii",
    "connect-to",
    "doh-url",
    "dns-servers",
    "noproxy",
    "preproxy",
    "proxy-user",
    "proxy-header",
    "cert-type",
    "key-type",
    "pass",
    "capath",
    "pinnedpubkey",
    "continue-at",
    "time-cond",
    "etag-save",
    "etag-compare",
    "netrc-file",
    "unix-socket",
    "abstract-unix-socket",
    "url-query",
    "request-target",
    "local-port",
    "keepalive-time",
    "expect100-timeout",
    "create-file-mode",
    "hsts",
    "alt-svc",
    "libcurl",
    "max-filesize",
    "mail-from",
    "mail-rcpt",
    "mail-auth",
    "socks4",
    "socks4a",
    "socks5",
    "socks5-hostname",
    "quote",
    "parallel-max",
];
const CURL_BODY: &[&str] = &[
    "-d",
    "--data",
    "--data-raw",
    "--data-binary",
    "--data-urlencode",
    "--data-ascii",
    "--json",
    "-F",
    "--form",
    "--form-string",
    "--expand-data",
];
const CURL_SENT_AS_IS: &[&str] = &[
    "-H",
    "--header",
    "-b",
    "--cookie",
    "-A",
    "--user-agent",
    "-e",
    "--referer",
    "-u",
    "--user",
    "--url",
    "--oauth2-bearer",
];
const WGET_SHORT: &str = "OoPaiUetTwQlARDIXB";
const WGET_LONG: &[&str] = &[
    "output-document",
    "output-file",
    "directory-prefix",
    "post-data",
    "post-file",
    "body-data",
    "body-file",
    "header",
    "user-agent",
    "method",
    "user",
    "password",
    "input-file",
    "tries",
    "timeout",
];

impl Run<'_, '_> {
    /// A program that fetches or sends over the network: its stdout's
    /// taint, or None for any other program.
    pub(super) fn network_program(
        &mut self,
        prog: &str,
        args: &[Value],
        stdin: Taint,
        span: Span,
    ) -> Option<Taint> {
        let out = match prog {
            "curl" => self.curl(args, stdin, span),
            "wget" => self.wget(args, span),
            "fetch" | "aria2c" | "lwp-download" | "axel" | "http" | "https" | "xh" | "xhs" => {
                self.other_download(args, span)
            }
            "git" | "gh" | "svn" | "hg" => self.vcs(prog, args, span),
            "scp" | "rsync" | "sftp" => self.remote_copy(args, span),
            // `openssl enc -d` is a decoder: only `s_client` talks.
            "openssl" if args.first().is_none_or(|a| a.text != "s_client") => return None,
            "nc" | "ncat" | "netcat" | "socat" | "telnet" | "ssh" | "mail" | "mailx"
            | "sendmail" | "openssl" | "finger" => {
                self.send(stdin.union(values_taint(args)), span);
                self.remote_reply(prog, args, span.0)
            }
            "nslookup" | "dig" | "host" | "ping" | "drill" | "resolvectl" => {
                self.send(values_taint(args), span);
                self.remote_reply(prog, args, span.0)
            }
            _ => return None,
        };
        Some(out)
    }

    /// The taint of what `urls` fetch: unvetted unless every one is an
    /// official installer; a project's release or source archive is its
    /// published code; a cloud metadata endpoint answers with secrets.
    pub(super) fn fetched(&self, urls: &[&Value], at: usize) -> Taint {
        let all = |f: fn(&str) -> bool| !urls.is_empty() && urls.iter().all(|u| f(&u.text));
        let mut t = if all(|u| vendor_of(u).is_some()) {
            Taint::new(Taint::FETCHED, at)
        } else if all(is_release_url) {
            Taint::new(Taint::FETCHED | Taint::DOWNLOADED, at).as_published()
        } else {
            Taint::new(Taint::FETCHED | Taint::UNVETTED | Taint::DOWNLOADED, at)
        };
        if urls.iter().any(|u| is_metadata_url(&u.text)) {
            t = t.union(Taint::new(Taint::SECRET, at));
        }
        t
    }

    pub(super) fn curl(&mut self, args: &[Value], stdin: Taint, span: Span) -> Taint {
        let opts = Opts::parse(args, CURL_SHORT, CURL_LONG);
        let urls: Vec<&Value> = opts.operands().chain(opts.values(&["--url"])).collect();
        if !urls.is_empty() && urls.iter().all(|u| is_local_url(&u.text)) {
            return Taint::default();
        }
        let mut sent = urls.iter().fold(Taint::default(), |t, u| t.union(u.taint));
        for v in opts.values(CURL_BODY) {
            sent = sent
                .union(v.taint)
                .union(self.at_file(&v.text, stdin, span.0));
        }
        for v in opts.values(&["-T", "--upload-file"]) {
            sent = sent
                .union(self.file_arg(v, stdin))
                .union(self.secret_file(&v.text, span.0));
        }
        // Presenting a credential to the host that issued it is its use.
        let to_issuer = urls.iter().all(|u| paths::is_issuer_url(&u.text));
        for (flag, v) in opts.flag_values(CURL_SENT_AS_IS) {
            if !(to_issuer && is_authentication(flag, &v.text)) {
                sent = sent.union(v.taint);
            }
        }
        self.send(sent, span);
        let fetched = self.fetched(&urls, span.0);
        let mut to_stdout = true;
        for out in opts.values(&["-o", "--output"]) {
            self.me.write_file(&out.text, fetched);
            to_stdout = out.text == "-";
        }
        if opts.has(&["-O", "--remote-name", "--remote-name-all"]) {
            for u in &urls {
                self.me.write_file(paths::basename(&u.text), fetched);
            }
            to_stdout = false;
        }
        if to_stdout { fetched } else { Taint::default() }
    }

    /// `@file` in a request body: the file's taint (`@-` is stdin).
    pub(super) fn at_file(&self, value: &str, stdin: Taint, at: usize) -> Taint {
        let Some((_, file)) = value.split_once('@') else {
            return Taint::default();
        };
        let file = file.split(';').next().unwrap_or(file);
        if file == "-" {
            return stdin;
        }
        self.secret_file(file, at)
    }

    pub(super) fn wget(&mut self, args: &[Value], span: Span) -> Taint {
        let opts = Opts::parse(args, WGET_SHORT, WGET_LONG);
        let urls: Vec<&Value> = opts.operands().collect();
        if !urls.is_empty() && urls.iter().all(|u| is_local_url(&u.text)) {
            return Taint::default();
        }
        let mut sent = urls.iter().fold(Taint::default(), |t, u| t.union(u.taint));
        for v in opts.values(&["--post-data", "--body-data", "--header"]) {
            sent = sent.union(v.taint);
        }
        for v in opts.values(&["--post-file", "--body-file"]) {
            sent = sent.union(self.secret_file(&v.text, span.0));
        }
        self.send(sent, span);
        let fetched = self.fetched(&urls, span.0);
        let outputs: Vec<&Value> = opts.values(&["-O", "--output-document"]).collect();
        if outputs.iter().any(|o| o.text == "-") {
            return fetched;
        }
        for out in &outputs {
            self.me.write_file(&out.text, fetched);
        }
        if outputs.is_empty() {
            let prefix = opts.values(&["-P", "--directory-prefix"]).next();
            for u in &urls {
                let name = paths::basename(&u.text);
                let path = prefix.map_or(name.to_owned(), |p| format!("{}/{name}", p.text));
                self.me.write_file(&path, fetched);
            }
        }
        Taint::default()
    }

    /// fetch, aria2c, httpie and the like: `-o FILE`, else stdout or the
    /// URL's name; httpie's `field=value` items are sent.
    pub(super) fn other_download(&mut self, args: &[Value], span: Span) -> Taint {
        let opts = Opts::parse(args, "odH", &["output", "dir", "out", "header"]);
        let (urls, items): (Vec<&Value>, Vec<&Value>) = opts
            .operands()
            .partition(|v| is_url(&v.text) || v.text.contains('.'));
        if !urls.is_empty() && urls.iter().all(|u| is_local_url(&u.text)) {
            return Taint::default();
        }
        let mut sent = Taint::default();
        for item in items
            .iter()
            .chain(opts.values(&["-H", "--header"]).collect::<Vec<_>>().iter())
        {
            sent = sent
                .union(item.taint)
                .union(self.at_file(&item.text, Taint::default(), span.0));
        }
        self.send(sent, span);
        let fetched = self.fetched(&urls, span.0);
        for out in opts.values(&["-o", "--output", "--out"]) {
            self.me.write_file(&out.text, fetched);
        }
        for u in &urls {
            self.me.write_file(paths::basename(&u.text), fetched);
        }
        fetched
    }

    /// `git clone URL [DIR]`, `gh repo clone`, `gh release download`,
    /// `gh gist create FILE`, `svn checkout`, `hg clone`.
    pub(super) fn vcs(&mut self, prog: &str, args: &[Value], span: Span) -> Taint {
        let opts = Opts::parse(
            args,
            "bcCDOopR",
            &["branch", "depth", "dir", "output", "pattern", "repo"],
        );
        let ops: Vec<&Value> = opts.operands().collect();
        let sub: Vec<&str> = ops.iter().take(2).map(|v| v.text.as_str()).collect();
        match (prog, sub.as_slice()) {
            ("git" | "hg", ["clone", ..]) | ("svn", ["checkout" | "co" | "export", ..]) => {
                self.clone_into(ops.get(1).copied(), ops.get(2).copied(), span);
            }
            ("gh", ["repo", "clone", ..]) => {
                self.clone_into(ops.get(2).copied(), ops.get(3).copied(), span);
            }
            ("gh", ["release", "download", ..]) => {
                let fetched = Taint::new(Taint::FETCHED | Taint::DOWNLOADED, span.0).as_published();
                for v in opts.values(&["-D", "--dir"]) {
                    self.me.taint_dir(&v.text, fetched);
                }
                for v in opts.values(&["-O", "--output"]) {
                    self.me.write_file(&v.text, fetched);
                }
            }
            ("git", ["remote", ..]) => self.note_remote(&ops, args, span),
            ("git", ["push", ..]) => self.push(&ops, span),
            ("git", ["commit" | "add" | "notes" | "tag", ..]) => self.commit(args, span),
            ("gh", ["gist", "create", ..]) => {
                let sent = ops.iter().skip(2).fold(Taint::default(), |t, f| {
                    t.union(self.secret_file(&f.text, span.0))
                });
                self.send(sent, span);
            }
            _ => return self.other(prog, args, Taint::default(), span),
        }
        Taint::default()
    }

    pub(super) fn clone_into(&mut self, url: Option<&Value>, dir: Option<&Value>, span: Span) {
        let Some(url) = url else { return };
        let name = dir.map_or_else(
            || {
                let base = paths::basename(&url.text);
                base.strip_suffix(".git").unwrap_or(base).to_owned()
            },
            |d| d.text.clone(),
        );
        // A repository at a bare public address is no project's: what
        // it holds is rated as any download from there.
        let taint = if paths::is_public_address_url(&url.text) {
            Taint::new(Taint::FETCHED | Taint::UNVETTED | Taint::DOWNLOADED, span.0)
        } else {
            Taint::new(Taint::CLONED, span.0)
        };
        self.me.taint_dir(&name, taint);
    }

    /// scp, rsync: local files to a remote are sent; a remote to a local
    /// path is a download.
    pub(super) fn remote_copy(&mut self, args: &[Value], span: Span) -> Taint {
        let opts = Opts::parse(args, "iPoFcSlJe", &["rsh", "exclude", "include", "port"]);
        let ops: Vec<&Value> = opts.operands().collect();
        let Some((dest, sources)) = ops.split_last() else {
            return Taint::default();
        };
        if paths::is_remote_spec(&dest.text) {
            let sent = sources.iter().fold(Taint::default(), |t, s| {
                t.union(s.taint).union(self.secret_file(&s.text, span.0))
            });
            self.send(sent, span);
        } else if sources.iter().any(|s| paths::is_remote_spec(&s.text)) {
            // A copy of a remote folder (`rsync -a rsync://h/m/tool/ DIR/`)
            // fills DEST with what the remote holds.
            let fetched = Taint::new(Taint::FETCHED | Taint::UNVETTED, span.0);
            self.me.write_file(&dest.text, fetched);
            self.me.taint_dir(&dest.text, fetched);
            for s in sources {
                let path = format!("{}/{}", dest.text, paths::basename(&s.text));
                self.me.write_file(&path, fetched);
            }
        }
        Taint::default()
    }
}
