//! Look-alike package names: `pip install reqeusts`, `npm i expres`. A
//! name an install command names that is one edit (two for a long name)
//! from a popular package's name, or the same name with its separators
//! moved, without being a listed name itself, is what typosquatting
//! publishes. The popular names are data (`packages.toml`).

use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use super::Severity;
use super::rules::{Haystack, Hit};

/// The popular package names, embedded in the binary.
pub const PACKAGES_TOML: &str = include_str!("packages.toml");

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Popular {
    pub pypi: Vec<String>,
    pub npm: Vec<String>,
}

/// The embedded list (a unit test parses it).
pub fn popular() -> &'static Popular {
    static POPULAR: LazyLock<Popular> = LazyLock::new(|| {
        let parsed = toml::from_str(PACKAGES_TOML).map_err(|e| e.to_string());
        super::embedded("packages.toml", parsed)
    });
    &POPULAR
}

/// Shortest name compared: shorter names are a letter from many honest
/// ones (`boto`, `boto3`).
const MIN_LEN: usize = 5;

/// The popular name `name` imitates in `list`, if any.
pub fn imitated<'a>(name: &str, list: &'a [String]) -> Option<&'a str> {
    let name = canonical(name);
    if name.chars().count() < MIN_LEN || list.iter().any(|p| canonical(p) == name) {
        return None;
    }
    let bare = |s: &str| s.replace('-', "");
    list.iter().map(String::as_str).find(|p| {
        let p = canonical(p);
        let most = if p.len() >= 10 { 2 } else { 1 };
        p.chars().count() >= MIN_LEN && (bare(&p) == bare(&name) || within(&p, &name, most))
    })
}

/// A name as its registry compares it: lowercase, `_` and `.` as `-`.
fn canonical(name: &str) -> String {
    name.to_lowercase().replace(['_', '.'], "-")
}

/// Whether the optimal-string-alignment distance (edits and swaps of
/// neighbours) between `a` and `b` is at most `most`.
fn within(a: &str, b: &str, most: usize) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > most {
        return false;
    }
    // d[i][j]: the distance between a[..i] and b[..j].
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()] <= most
}

/// The install commands `re`, rule number `rule`'s pattern, finds in the
/// `stretches` of the haystack whose package names imitate popular ones:
/// named group `pypi` or `npm` holds the command's arguments.
pub(super) fn find_lookalikes(
    (rule, severity, re): (usize, Severity, &Regex),
    hay: &Haystack<'_, '_>,
    stretches: &[(usize, usize)],
    hits: &mut Vec<Hit>,
) {
    let list = popular();
    let text = hay.text();
    for &(base, end) in stretches {
        for c in re.captures_iter(&text[base..end]) {
            let (args, names) = match (c.name("pypi"), c.name("npm")) {
                (Some(a), _) => (a, &list.pypi),
                (None, Some(a)) => (a, &list.npm),
                (None, None) => continue,
            };
            for (at, name) in package_names(args.as_str()) {
                if imitated(name, names).is_some() {
                    let start = base + args.start() + at;
                    hits.push(hay.hit(rule, severity, start, start + name.len(), None));
                }
            }
        }
    }
}

/// The package names in an install command's arguments, with their
/// offsets: every word that is not an option, without its version or
/// extras (`name==1.0`, `name[extra]`, `name@2`; an npm `@scope/name`
/// keeps its scope).
fn package_names(args: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut at = 0;
    for word in args.split(' ') {
        let start = at;
        at += word.len() + 1;
        let word = word.trim_matches(|c| matches!(c, '"' | '\'' | '`'));
        let path_like = word.contains(['/', ':', '$']) && !word.starts_with('@');
        if word.is_empty() || word.starts_with('-') || path_like {
            continue;
        }
        let cut = word
            .char_indices()
            .skip(1)
            .find(|&(_, c)| matches!(c, '=' | '<' | '>' | '~' | '!' | '[' | '@' | ';' | ','))
            .map_or(word.len(), |(i, _)| i);
        let offset = args[start..].find(word).map_or(start, |i| start + i);
        out.push((offset, &word[..cut]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pypi(name: &str) -> Option<&'static str> {
        imitated(name, &popular().pypi)
    }

    #[test]
    fn look_alikes_of_popular_names_are_told_from_the_names() {
        assert_eq!(pypi("reqeusts"), Some("requests"));
        assert_eq!(pypi("python-dateutils"), Some("python-dateutil"));
        assert_eq!(pypi("python_dateutil"), None);
        assert_eq!(pypi("requests"), None);
        assert_eq!(pypi("beautifulsoup4"), None);
        assert_eq!(pypi("some-internal-tool"), None);
        assert_eq!(imitated("expresss", &popular().npm), Some("express"));
        assert_eq!(imitated("preact", &popular().npm), None);
    }

    #[test]
    fn names_are_read_without_versions_or_options() {
        let names: Vec<&str> = package_names("-U reqeusts==2.0 'numpy>=1' pkg[extra] ./local")
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        assert_eq!(names, vec!["reqeusts", "numpy", "pkg"]);
        let npm: Vec<&str> = package_names("-g @scope/name@1 left-pad@1.3")
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        assert_eq!(npm, vec!["@scope/name", "left-pad"]);
    }
}
