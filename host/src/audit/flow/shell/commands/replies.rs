//! Clients whose output is what a remote host answers: a shell on another
//! machine (`ssh host cat x`), a raw socket (`nc`, `telnet`, `socat`,
//! `openssl s_client`), `finger user@host`, and DNS answers (`dig TXT`,
//! `nslookup -q=txt`). None is a downloader, yet each prints what the
//! host's owner chose: fetched data, whatever the transport
//! (`finger x@host | cmd`, `ssh host cat run.sh | sh`).

use super::super::super::paths::{host_of, is_local_url};
use super::super::{Run, Value};
use super::Opts;
use crate::audit::flow::Taint;

/// ssh's short options that take a value.
const SSH_SHORT: &str = "BbcDEeFIiJLlmOopQRSWw";
/// nc/ncat/netcat/telnet's short options that take a value.
const NC_SHORT: &str = "IiOPpqsTVwxXe";

impl Run<'_, '_> {
    /// The taint of what a network client `prog` prints: fetched and
    /// unvetted when it talks to a host that is not this machine.
    pub(super) fn remote_reply(&self, prog: &str, args: &[Value], at: usize) -> Taint {
        if answering_host(prog, args).is_some_and(|h| names_remote_host(&h)) {
            Taint::new(Taint::FETCHED | Taint::UNVETTED, at)
        } else {
            Taint::default()
        }
    }
}

impl Run<'_, '_> {
    /// A program no table names, given another host (`-h HOST`,
    /// `--host=HOST`, `--server HOST`, a URL operand) while a secret is
    /// on its stdin, sends it there (`… | mosquitto_pub -h H -s`, `… |
    /// redis-cli -h H -x set k`).
    pub(super) fn stdin_to_host(&mut self, args: &[Value], span: (usize, usize)) {
        let stdin = self.piped_in;
        if stdin.has(Taint::SECRET) && given_remote_host(args) {
            self.send(stdin, span);
        }
    }
}

/// Whether a command line names another host as its peer.
fn given_remote_host(args: &[Value]) -> bool {
    const HOST_OPTIONS: &[&str] = &[
        "-h",
        "--host",
        "--hostname",
        "--server",
        "--broker",
        "-server",
    ];
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        let t = a.text.as_str();
        let value = match t.split_once('=') {
            Some((opt, v)) if HOST_OPTIONS.contains(&opt) => Some(v.to_owned()),
            _ if HOST_OPTIONS.contains(&t) => iter.next().map(|v| v.text.clone()),
            _ => None,
        };
        let url = t.split_once("://").is_some_and(|(s, rest)| {
            !s.is_empty()
                && s.bytes().all(|b| b.is_ascii_alphanumeric())
                && names_remote_host(rest.split('/').next().unwrap_or(""))
        });
        if url || value.is_some_and(|v| names_remote_host(&v)) {
            return true;
        }
    }
    false
}

/// The host `prog` connects to, as written.
fn answering_host(prog: &str, args: &[Value]) -> Option<String> {
    let first = |short: &str| {
        let opts = Opts::parse(args, short, &[]);
        let host = opts.operands().next().map(|v| v.text.clone());
        host.filter(|_| !opts.has(&["-l"]))
    };
    match prog {
        "ssh" => first(SSH_SHORT),
        "nc" | "ncat" | "netcat" | "telnet" => first(NC_SHORT),
        "finger" => args
            .iter()
            .find_map(|a| a.text.split_once('@').map(|(_, h)| h.to_owned())),
        "openssl" if args.first().is_some_and(|a| a.text == "s_client") => {
            let at = args.iter().position(|a| a.text == "-connect")?;
            args.get(at + 1).map(|v| v.text.clone())
        }
        "socat" => args.iter().find_map(|a| socat_host(&a.text)),
        "nslookup" | "dig" | "host" | "drill" => {
            let mut ops = args.iter().map(|a| a.text.trim_start_matches('@'));
            ops.rfind(|t| !t.starts_with(['-', '+'])).map(str::to_owned)
        }
        _ => None,
    }
}

/// The host of a socat address that connects out (`TCP:h:p`,
/// `OPENSSL:h:p`, `TCP4:…`, `UDP:…`).
fn socat_host(address: &str) -> Option<String> {
    let (kind, rest) = address.split_once(':')?;
    let kind = kind.to_ascii_uppercase();
    let connects = [
        "TCP", "TCP4", "TCP6", "UDP", "UDP4", "UDP6", "OPENSSL", "SSL",
    ];
    connects
        .contains(&kind.as_str())
        .then(|| rest.split([':', ',']).next().unwrap_or("").to_owned())
}

/// Whether a host as written (`user@host`, `host:port`, a name or an
/// address) is another machine: a dotted name or an address, not this
/// one. A bare alias (`ssh prod`) is the user's own configuration.
pub(super) fn names_remote_host(word: &str) -> bool {
    let host = host_of(word.trim_matches(['"', '\''])).trim_end_matches('.');
    let dotted = host.contains('.') && !host.contains('/') && !host.starts_with('.');
    let labels_ok = host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    dotted && labels_ok && !is_local_url(host)
}

#[cfg(test)]
mod tests {
    use super::super::words;
    use super::*;

    fn host(prog: &str, line: &str) -> Option<String> {
        answering_host(prog, &words(line))
    }

    #[test]
    fn each_client_names_the_host_it_reads_from() {
        assert_eq!(
            host("ssh", "-p 22 deploy@198.51.100.7 cat x").as_deref(),
            Some("deploy@198.51.100.7")
        );
        assert_eq!(
            host("finger", "drivers@h.example").as_deref(),
            Some("h.example")
        );
        assert_eq!(
            host("nc", "-w 3 h.example 9000").as_deref(),
            Some("h.example")
        );
        assert_eq!(host("nc", "-l 9000"), None);
        assert_eq!(
            host("openssl", "s_client -connect h.example:443").as_deref(),
            Some("h.example:443")
        );
        assert_eq!(host("openssl", "enc -d -in payload.enc"), None);
        assert_eq!(
            host("socat", "- TCP:h.example:4444").as_deref(),
            Some("h.example")
        );
        assert_eq!(
            host("dig", "+short TXT @203.0.113.5 cfg.h.example").as_deref(),
            Some("cfg.h.example")
        );
    }

    #[test]
    fn a_peer_is_a_host_option_or_a_url() {
        assert!(given_remote_host(&words(
            "-h mqtt.h.example -p 1883 -t x -s"
        )));
        assert!(given_remote_host(&words("--host=203.0.113.5 -x set k")));
        assert!(given_remote_host(&words(
            "publish mqtt://broker.h.example/t"
        )));
        assert!(!given_remote_host(&words("-h localhost -x set k")));
        assert!(!given_remote_host(&words("-h")));
        assert!(!given_remote_host(&words(
            "-c config.yml --output=report.txt"
        )));
    }

    #[test]
    fn this_machine_and_ssh_aliases_are_not_remote() {
        assert!(names_remote_host("deploy@198.51.100.7"));
        assert!(names_remote_host("h.example:22"));
        assert!(!names_remote_host("localhost"));
        assert!(!names_remote_host("127.0.0.1:6379"));
        assert!(!names_remote_host("prod"));
        assert!(!names_remote_host("./file.sh"));
    }
}
