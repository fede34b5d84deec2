//! Look-alike package names: `pip install reqeusts`, `npm i expres`. A
//! name an install command names is a look-alike when it is one typo from
//! a popular package's name (packages.toml) and is not itself an
//! established package: a typo is a swap of neighbouring letters, a
//! doubled or dropped letter, a plural `s`, a neighbouring key or a
//! look-alike character (`l`/`1`, `o`/`0`) in place of a letter, or the
//! separators moved. That is what typosquatting publishes; two real
//! packages a letter apart (`faiss-cpu`, `faiss-gpu`; `scapy`, `scanpy`)
//! are not a typo of each other, and the established ones are listed.

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
    /// Hand-picked names (what skills install).
    pub pypi: Vec<String>,
    pub npm: Vec<String>,
    /// The most downloaded names of a registry snapshot.
    #[serde(default)]
    pub pypi_top: Vec<String>,
    #[serde(default)]
    pub npm_top: Vec<String>,
    /// Established packages a typo away from a popular name: never
    /// look-alikes.
    #[serde(default)]
    pub pypi_known: Vec<String>,
    #[serde(default)]
    pub npm_known: Vec<String>,
    /// Well-known owners of git repositories (GitHub, GitLab, Bitbucket):
    /// an install from a git URL of an owner one typo from one of these is
    /// a look-alike too.
    #[serde(default)]
    pub git_owners: Vec<String>,
}

/// One registry's names, canonical.
pub struct Registry {
    popular: Vec<String>,
    known: std::collections::HashSet<String>,
}

impl Registry {
    fn new(lists: [&[String]; 3]) -> Registry {
        let [hand, top, known] = lists;
        let mut popular: Vec<String> = hand.iter().chain(top).map(|n| canonical(n)).collect();
        popular.sort();
        popular.dedup();
        let known = popular
            .iter()
            .cloned()
            .chain(known.iter().map(|n| canonical(n)))
            .collect();
        Registry { popular, known }
    }

    /// The popular name `name` is a typo of, unless `name` is listed.
    pub fn imitated(&self, name: &str) -> Option<&str> {
        let name = canonical(name);
        if name.chars().count() < MIN_LEN || self.known.contains(&name) {
            return None;
        }
        self.popular
            .iter()
            .find(|p| p.chars().count() >= MIN_LEN && typo_of(p, &name))
            .map(String::as_str)
    }
}

/// The embedded lists (a unit test parses them).
pub fn popular() -> &'static Popular {
    static POPULAR: LazyLock<Popular> = LazyLock::new(|| {
        let parsed = toml::from_str(PACKAGES_TOML).map_err(|e| e.to_string());
        super::embedded("packages.toml", parsed)
    });
    &POPULAR
}

/// PyPI's and npm's names, and the git owners.
pub fn registries() -> &'static (Registry, Registry, Registry) {
    static REGISTRIES: LazyLock<(Registry, Registry, Registry)> = LazyLock::new(|| {
        let p = popular();
        (
            Registry::new([&p.pypi, &p.pypi_top, &p.pypi_known]),
            Registry::new([&p.npm, &p.npm_top, &p.npm_known]),
            Registry::new([&p.git_owners, &[], &[]]),
        )
    });
    &REGISTRIES
}

/// The owner of the git repository an install argument names
/// (`git+https://github.com/OWNER/repo`, `github:OWNER/repo`), with its
/// offset in `word`.
fn git_owner(word: &str) -> Option<(usize, &str)> {
    static OWNER: LazyLock<Regex> = LazyLock::new(|| {
        let pattern = concat!(
            r"(?i)^['\x22]?(?:git\+)?(?:(?:https?|ssh|git)://(?:[^@/\s]+@)?(?:www\.)?",
            r"(?:github\.com|gitlab\.com|bitbucket\.org)[^/\s]*/|(?:github|gitlab|bitbucket):)",
            r"([A-Za-z0-9][A-Za-z0-9_.-]*)/",
        );
        match Regex::new(pattern) {
            Ok(r) => r,
            Err(e) => panic!("packages.rs: bad owner pattern: {e}"),
        }
    });
    let owner = OWNER.captures(word)?.get(1)?;
    Some((owner.start(), owner.as_str()))
}

/// Shortest name compared: shorter names are a letter from many honest
/// ones (`boto`, `boto3`).
const MIN_LEN: usize = 5;

/// A name as its registry compares it: lowercase, `_` and `.` as `-`.
fn canonical(name: &str) -> String {
    name.to_lowercase().replace(['_', '.'], "-")
}

/// Whether `name` is one typo from `popular` (both canonical, different).
pub fn typo_of(popular: &str, name: &str) -> bool {
    let bare = |s: &str| s.replace('-', "").chars().collect::<Vec<char>>();
    let (p, n) = (bare(popular), bare(name));
    if popular == name {
        return false;
    }
    if p == n {
        return true;
    }
    match n.len() as isize - p.len() as isize {
        0 => swapped(&p, &n) || substituted(&p, &n),
        -1 => dropped(&p, &n),
        1 => added(&p, &n),
        _ => false,
    }
}

/// The first index where `a` and `b` differ.
fn first_difference(a: &[char], b: &[char]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Two neighbouring letters swapped.
fn swapped(p: &[char], n: &[char]) -> bool {
    let i = first_difference(p, n);
    i + 1 < p.len() && p[i] == n[i + 1] && p[i + 1] == n[i] && p[i + 2..] == n[i + 2..]
}

/// One letter replaced by a neighbouring key or a look-alike character.
fn substituted(p: &[char], n: &[char]) -> bool {
    let i = first_difference(p, n);
    i < p.len() && p[i + 1..] == n[i + 1..] && (adjacent_keys(p[i], n[i]) || confusable(p[i], n[i]))
}

/// `n` is `p` with one letter left out.
fn dropped(p: &[char], n: &[char]) -> bool {
    let i = first_difference(p, n);
    p[i + 1..] == n[i..]
}

/// `n` is `p` with one letter doubled, or a plural `s` added.
fn added(p: &[char], n: &[char]) -> bool {
    let i = first_difference(p, n);
    if n[i + 1..] != p[i..] {
        return false;
    }
    let doubled = (i > 0 && n[i - 1] == n[i]) || n.get(i + 1) == Some(&n[i]);
    let plural = i + 1 == n.len() && n[i] == 's';
    doubled || plural
}

/// Keys next to each other on a QWERTY keyboard.
fn adjacent_keys(a: char, b: char) -> bool {
    const ROWS: [&str; 4] = ["1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm"];
    let at = |c: char| {
        ROWS.iter()
            .enumerate()
            .find_map(|(r, row)| row.find(c).map(|col| (r as isize, col as isize)))
    };
    let (Some((ra, ca)), Some((rb, cb))) = (at(a), at(b)) else {
        return false;
    };
    // Each row sits half a key to the right of the one above it.
    match rb - ra {
        0 => (ca - cb).abs() == 1,
        1 => cb == ca || cb == ca - 1,
        -1 => cb == ca || cb == ca + 1,
        _ => false,
    }
}

/// Characters that read alike in a package name.
fn confusable(a: char, b: char) -> bool {
    const PAIRS: [(char, char); 4] = [('l', '1'), ('l', 'i'), ('i', '1'), ('o', '0')];
    PAIRS
        .iter()
        .any(|&(x, y)| (a, b) == (x, y) || (a, b) == (y, x))
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
    let (pypi, npm, owners) = registries();
    let text = hay.text();
    for &(base, end) in stretches {
        for c in re.captures_iter(&text[base..end]) {
            let (args, registry) = match (c.name("pypi"), c.name("npm")) {
                (Some(a), _) => (a, pypi),
                (None, Some(a)) => (a, npm),
                (None, None) => continue,
            };
            let names = package_names(args.as_str())
                .into_iter()
                .map(|n| (n, registry));
            let owners = git_owners(args.as_str()).into_iter().map(|n| (n, owners));
            for ((at, name), registry) in names.chain(owners) {
                if registry.imitated(name).is_some() {
                    let start = base + args.start() + at;
                    hits.push(hay.hit(rule, severity, start, start + name.len(), None));
                }
            }
        }
    }
}

/// The owners of the git repositories an install command's arguments
/// name, with their offsets.
fn git_owners(args: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut at = 0;
    for word in args.split(' ') {
        if let Some((i, owner)) = git_owner(word) {
            out.push((at + i, owner));
        }
        at += word.len() + 1;
    }
    out
}

/// The package names in an install command's arguments, with their
/// offsets: of every word that is not an option or a path, the name it
/// starts with (the characters a registry allows in a name), without
/// quotes, version, extras or what follows (`name==1.0`, `name[extra]`,
/// `name@2`, `"name",`; an npm `@scope/name` keeps its scope).
fn package_names(args: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut at = 0;
    for word in args.split(' ') {
        let start = at;
        at += word.len() + 1;
        let lead = word.len() - word.trim_start_matches(['"', '\'', '`', '(']).len();
        let word = &word[lead..];
        let scoped = word.starts_with('@');
        let path_like = word.contains(['/', ':', '$']) && !scoped;
        if word.is_empty() || word.starts_with('-') || path_like {
            continue;
        }
        let name = name_at_start(word, scoped);
        if !name.is_empty() {
            out.push((start + lead, name));
        }
    }
    out
}

/// The package name `word` starts with: letters, digits, `.`, `_`, `-`
/// (and an npm scope's `@` and `/`), without trailing punctuation.
fn name_at_start(word: &str, scoped: bool) -> &str {
    let mut slash = false;
    let end = word
        .char_indices()
        .find(|&(i, c)| {
            let scope_mark = scoped && ((i == 0 && c == '@') || (c == '/' && !slash));
            slash |= scope_mark && c == '/';
            !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') || scope_mark)
        })
        .map_or(word.len(), |(i, _)| i);
    word[..end].trim_end_matches(['.', '_', '-'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pypi(name: &str) -> Option<&'static str> {
        registries().0.imitated(name)
    }

    fn npm(name: &str) -> Option<&'static str> {
        registries().1.imitated(name)
    }

    #[test]
    fn look_alikes_of_popular_names_are_told_from_the_names() {
        assert_eq!(pypi("reqeusts"), Some("requests"));
        assert_eq!(pypi("python-dateutils"), Some("python-dateutil"));
        assert_eq!(pypi("python_dateutil"), None);
        assert_eq!(pypi("requests"), None);
        assert_eq!(pypi("beautifulsoup4"), None);
        assert_eq!(pypi("some-internal-tool"), None);
        assert_eq!(npm("expresss"), Some("express"));
        assert_eq!(npm("preact"), None);
    }

    #[test]
    fn only_a_typo_shape_makes_a_look_alike() {
        // Swapped, doubled, dropped, neighbouring key, look-alike digit.
        for (popular, name) in [
            ("requests", "reqeusts"),
            ("requests", "requestss"),
            ("requests", "requsts"),
            ("requests", "requesta"),
            ("pillow", "pi1low"),
            ("lodash", "lodash-"),
        ] {
            assert!(typo_of(popular, name), "{name} is a typo of {popular}");
        }
        // A letter in a new place, a far key: another word, not a slip.
        for (popular, name) in [
            ("faiss-cpu", "faiss-gpu"),
            ("scapy", "scanpy"),
            ("torch", "torchx"),
            ("flask", "flash"),
        ] {
            assert!(!typo_of(popular, name), "{name} is not a typo of {popular}");
        }
    }

    #[test]
    fn a_git_url_of_a_look_alike_owner_is_a_look_alike() {
        let owners = |args| -> Vec<&str> {
            git_owners(args)
                .into_iter()
                .filter(|(_, o)| registries().2.imitated(o).is_some())
                .map(|(_, o)| o)
                .collect()
        };
        assert_eq!(
            owners("git+https://github.com/hugginface/transformers.git"),
            vec!["hugginface"]
        );
        assert_eq!(owners("-g github:anthropcis/tool"), vec!["anthropcis"]);
        assert!(owners("git+https://github.com/huggingface/transformers.git").is_empty());
        assert!(owners("git+https://github.com/someone/tool.git requests").is_empty());
    }

    #[test]
    fn an_established_neighbour_is_no_look_alike() {
        assert_eq!(pypi("faiss-gpu"), None);
        assert_eq!(pypi("scanpy"), None);
    }

    #[test]
    fn names_are_read_without_versions_options_or_quotes() {
        let names =
            |args| -> Vec<&str> { package_names(args).into_iter().map(|(_, n)| n).collect() };
        assert_eq!(
            names("-U reqeusts==2.0 'numpy>=1' pkg[extra] ./local"),
            vec!["reqeusts", "numpy", "pkg"]
        );
        assert_eq!(
            names("-g @scope/name@1 left-pad@1.3"),
            vec!["@scope/name", "left-pad"]
        );
        assert_eq!(
            names("\"youtube-transcript-api\", then"),
            vec!["youtube-transcript-api", "then"]
        );
        assert_eq!(names("mypkg. Then"), vec!["mypkg", "Then"]);
    }
}
