//! Uploads by programs no table names: a command that copies local files
//! to a remote store names the store by a URL after them (`aws s3 cp DIR
//! s3://…`, `gsutil cp F gs://…`, `rclone copy DIR sftp://…`). What the
//! local operands before it hold is sent, a folder with every file
//! written inside it. A store named first is a download. Web URLs are
//! left to the HTTP clients' own readers (`curl`, `wget`, the script
//! engines): a program given a settings file and an API address is no
//! upload; nor is `module:attr`, so scp-style specs are scp's and rsync's.

use super::super::paths;
use super::{Run, Value};
use crate::audit::flow::Taint;

impl Run<'_, '_> {
    /// Sends what the local operands before the first remote one hold.
    pub(super) fn generic_upload(&mut self, args: &[Value], span: (usize, usize)) {
        let operands: Vec<&Value> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
        let Some(remote) = operands.iter().position(|a| is_store(&a.text)) else {
            return;
        };
        let sent = operands[..remote].iter().fold(Taint::default(), |t, a| {
            let local = self.secret_file(&a.text, span.0);
            t.union(local)
                .union(self.me.files_under(&paths::normalize(&a.text)))
        });
        self.send(sent, span);
    }
}

/// A remote store: a URL of any scheme but the web's and `file:`.
fn is_store(word: &str) -> bool {
    let w = word.trim_matches(['"', '\'']);
    w.split_once("://").is_some_and(|(s, _)| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '+')
            && !["file", "http", "https"]
                .iter()
                .any(|k| s.eq_ignore_ascii_case(k))
    })
}

#[cfg(test)]
mod tests {
    use super::is_store;

    #[test]
    fn stores_are_remote_urls_and_remote_specs() {
        assert!(is_store("s3://bucket/key/"));
        assert!(is_store("gs://b"));
        assert!(is_store("sftp://backup.invalid/vault"));
        assert!(!is_store("local_places.main:app"));
        assert!(!is_store("https://api.example.com/v1"));
        assert!(!is_store("file:///tmp/x"));
        assert!(!is_store("/tmp/s3opt"));
        assert!(!is_store("--recursive"));
    }
}
