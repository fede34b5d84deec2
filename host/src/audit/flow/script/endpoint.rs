//! Network endpoints no table names: a call given a network address (a
//! URL, or an IP address as `HTTPConnection("203.0.113.5", 80)` takes it)
//! returns a connection, a client or a reply, so what it returns, and what
//! is read from that, is fetched data. The tables name the common
//! clients; this covers the rest (`http.client`, sockets, a vendor SDK, a
//! module looked up by name). A bare host name is not an address here:
//! `Path("report.html")` would read as one.

use std::net::Ipv4Addr;

use super::super::super::vendors::vendor_of;
use super::super::Taint;
use super::Stmt;
use crate::audit::flow::tokens::Kind;

impl Stmt<'_> {
    /// What the call whose callee is token `i` returns when one of its
    /// direct arguments is a network address: fetched, unvetted unless it
    /// is a listed vendor's URL.
    pub(super) fn endpoint(&self, i: usize) -> Taint {
        let close = self.close_of(i + 1).min(self.toks.len());
        let args = self.split_args(i + 2..close);
        let address = args.iter().find_map(|a| {
            self.direct_address(a.clone())
                .or_else(|| self.socket_address(a.clone()))
        });
        let address = address.or_else(|| self.download_command(&args));
        match address {
            Some(a) if vendor_of(&a).is_some() => Taint::new(Taint::FETCHED, self.at(i)),
            Some(_) => Taint::new(Taint::FETCHED | Taint::UNVETTED, self.at(i)),
            None => Taint::default(),
        }
    }

    /// Whether a bracketed call is given a network address that is no
    /// listed vendor's (`client:request_uri("http://203.0.113.9/v", {body
    /// = netrc})`, any client library): what else it is given goes there.
    pub(super) fn unvetted_endpoint(&self, call: &super::Call) -> bool {
        let callee = call.args.start.checked_sub(2);
        let bracketed = callee.is_some_and(|i| self.is(i + 1, "("));
        bracketed && callee.is_some_and(|i| self.endpoint(i).has(Taint::UNVETTED))
    }

    /// The URL of a command line given as one string argument whose
    /// program is a downloader (`io.popen('curl -s URL')`,
    /// `subprocess.check_output('wget -qO- URL', shell=True)`): what the
    /// call returns is what that command prints.
    fn download_command(&self, args: &[std::ops::Range<usize>]) -> Option<String> {
        let first = args.first()?;
        let tok = self.toks.get(first.start).filter(|t| t.kind == Kind::Str)?;
        let mut words = tok.text.split_whitespace();
        let prog = words
            .next()?
            .rsplit(['/', '\\'])
            .next()?
            .to_ascii_lowercase();
        let downloader = matches!(
            prog.trim_end_matches(".exe"),
            "curl" | "wget" | "fetch" | "aria2c" | "http" | "https" | "xh"
        );
        let url = words.find(|w| is_address(w.trim_matches(['"', '\''])))?;
        downloader.then(|| url.trim_matches(['"', '\'']).to_owned())
    }
}

impl Stmt<'_> {
    /// An argument that is one address: a string, or a name bound to one.
    fn direct_address(&self, a: std::ops::Range<usize>) -> Option<String> {
        let tok = self.toks.get(a.start).filter(|_| a.len() == 1)?;
        let text = match tok.kind {
            Kind::Str => tok.text.clone(),
            Kind::Ident => self.state.literals.get(&tok.text)?.clone(),
            _ => return None,
        };
        is_address(&text).then_some(text)
    }

    /// A socket address, `(HOST, PORT)` or `[HOST, PORT]`: a host that is
    /// an address or a dotted name, and a port number. The pair is how
    /// sockets are given a peer, so a name counts here.
    fn socket_address(&self, a: std::ops::Range<usize>) -> Option<String> {
        let toks = self.toks.get(a.clone())?;
        let [open, host, comma, rest @ ..] = toks else {
            return None;
        };
        let [digits @ .., close] = rest else {
            return None;
        };
        let closes = match open.text.as_str() {
            "(" => ")",
            "[" => "]",
            _ => return None,
        };
        // The tokenizer gives a number digit by digit.
        let port: String = digits.iter().map(|t| t.text.as_str()).collect();
        let shaped = open.kind == Kind::Punct
            && host.kind == Kind::Str
            && comma.text == ","
            && close.kind == Kind::Punct
            && close.text == closes
            && port.parse::<u16>().is_ok();
        let named = host.text.contains('.') && !host.text.contains(['/', ' ']);
        (shaped && (is_address(&host.text) || named)).then(|| format!("{}:{port}", host.text))
    }
}

/// A URL of a network scheme, or an IPv4 address (with a port or a path).
fn is_address(text: &str) -> bool {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    if ["http://", "https://", "ws://", "wss://", "ftp://", "tcp://"]
        .iter()
        .any(|s| lower.starts_with(s))
    {
        return true;
    }
    let host = t.split(['/', ':']).next().unwrap_or("");
    host.parse::<Ipv4Addr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_urls_and_ip_addresses() {
        assert!(is_address("http://203.0.113.9/x"));
        assert!(is_address("203.0.113.205"));
        assert!(is_address("198.51.100.7:8080"));
        assert!(!is_address("api.example.com"));
        assert!(!is_address("report.html"));
        assert!(!is_address("1.5"));
        assert!(!is_address("data.csv"));
    }
}
