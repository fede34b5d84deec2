//! Programs that fetch and run what a URL given to them serves, in one
//! step: Windows' script and installer hosts (the LOLBAS project's
//! "Execute" entries that accept a remote path, https://lolbas-project.github.io).
//! `mshta http://…/x.hta`, `msiexec /i http://…/x.msi`, `regsvr32
//! /i:http://…/x.sct scrobj.dll` download nothing to a file a later line
//! could run: the program is the download and the run.

use super::super::super::paths::{is_local_url, is_url};
use super::super::{Run, Value};
use super::Span;
use super::replies::names_remote_host;

/// Programs that run a remote URL given as an operand or as an option's
/// value (`/i:URL`, `-url=URL`), and a downloaded file given to them.
pub(super) const RUNS_URLS: &[&str] = &[
    "mshta",
    "msiexec",
    "regsvr32",
    "rundll32",
    "wscript",
    "cscript",
    "msxsl",
    "msbuild",
    "installutil",
    "cmstp",
    "regasm",
    "regsvcs",
];

impl Run<'_, '_> {
    /// A loader of `RUNS_URLS` given a remote URL runs what it serves.
    pub(super) fn run_remote_operands(&mut self, prog: &str, args: &[Value], span: Span) {
        if !RUNS_URLS.contains(&prog) {
            return;
        }
        let urls: Vec<Value> = args.iter().filter_map(remote_url).collect();
        if !urls.is_empty() {
            let refs: Vec<&Value> = urls.iter().collect();
            let served = self.fetched(&refs, span.0);
            self.exec(served, span);
        }
    }
}

/// The remote URL a word is or ends with after an option's `:`/`=`, or
/// the UNC path of a share on another host (`\\\\host@SSL\\DavWWWRoot\\x.dll`,
/// which Windows fetches over SMB or WebDAV).
pub(super) fn remote_url(word: &Value) -> Option<Value> {
    let text = word.text.trim_matches(['"', '\'']);
    if let Some(host) = unc_host(text) {
        return names_remote_host(host).then(|| Value {
            text: format!("https://{host}/"),
            taint: word.taint,
        });
    }
    let url = if is_url(text) {
        text
    } else {
        let at = text.find([':', '='])?;
        let rest = text[at + 1..].trim_matches(['"', '\'']);
        is_url(rest).then_some(rest)?
    };
    let remote = !is_local_url(url) && !url.starts_with("//");
    remote.then(|| Value {
        text: url.to_owned(),
        taint: word.taint,
    })
}

/// The host of a UNC path (`\\\\host\\share`, `\\\\host@SSL@443\\…`), without
/// its WebDAV marks. A shell reads `\\\\h@SSL\\x` unquoted as `\\h@SSLx`, and
/// a batch file is read with `/` for `\\`, so one backslash, or two
/// slashes, before a dotted host and its `@`/`\\` count too.
fn unc_host(text: &str) -> Option<&str> {
    let rest = ["\\\\", "//", "\\"]
        .iter()
        .find_map(|p| text.strip_prefix(p))?;
    let end = rest.find(['\\', '/', '@'])?;
    let host = &rest[..end];
    (!host.is_empty() && host.contains('.')).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url_of(word: &str) -> Option<String> {
        let v = Value {
            text: word.into(),
            taint: Default::default(),
        };
        remote_url(&v).map(|v| v.text)
    }

    #[test]
    fn a_url_is_an_operand_or_an_options_value() {
        assert_eq!(
            url_of("http://h.example/x.hta").as_deref(),
            Some("http://h.example/x.hta")
        );
        assert_eq!(
            url_of("/i:http://h.example/c.sct").as_deref(),
            Some("http://h.example/c.sct")
        );
        assert_eq!(
            url_of("-url='https://h.example/a'").as_deref(),
            Some("https://h.example/a")
        );
        assert_eq!(url_of("/q"), None);
        assert_eq!(url_of("scrobj.dll"), None);
        assert_eq!(url_of("http://localhost:8080/x"), None);
        assert_eq!(
            url_of(r"\\cdn.h.example@SSL\DavWWWRoot\f.dll,Run").as_deref(),
            Some("https://cdn.h.example/")
        );
        assert_eq!(url_of(r"\\fileserver\share\x.dll"), None);
        assert_eq!(url_of(r"\\127.0.0.1\c$\x.dll"), None);
        assert_eq!(
            url_of(r"\cdn.h.example@SSLDavWWWRootf.dll").as_deref(),
            Some("https://cdn.h.example/")
        );
        assert_eq!(url_of(r"\n"), None);
    }
}
