//! Settings as written, whatever the tool: CLI flags (`--ip=0.0.0.0`,
//! `--host 0.0.0.0`, `--no-auth`), and keys of JSON, YAML, TOML, INI,
//! JavaScript objects, Python assignments and the environment (`"bind":
//! "0.0.0.0"`, `token: ''`, `c.ServerApp.token = ''`, `JUPYTER_TOKEN=`).
//! A line of only a key and its value (`protected-mode no` in redis.conf,
//! sshd_config) is a setting too. A key's path joins the objects it is
//! nested in (braces, an HCL block's name), the YAML keys above it
//! (indentation) and the `[section]` it is under.

use std::sync::LazyLock;

use regex::Regex;

/// One setting: its key path (lowercase, `_` read as `-`), the values it
/// may have (a flag followed by a word is both the bare flag and that
/// word's flag) and where it is written.
#[derive(Debug, Clone)]
pub struct Setting {
    pub path: Vec<String>,
    pub values: Vec<String>,
    pub start: usize,
    pub end: usize,
}

/// A quoted or bare value.
const VALUE: &str = r#""(?:[^"\\\n]|\\.)*"|'[^'\n]*'|\{|[^\s,;}\])"'`]*"#;
/// A value after a space, which must not look like the next flag.
const NEXT: &str = r#""(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s\-\\'"`|;&<>{][^\s;&|<>]*"#;

fn scanner() -> Option<&'static Regex> {
    static RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
        let pattern = format!(
            r#"config(?:[ \t]+set)?(?:[ \t]+--[\w-]+)*[ \t]+(?P<ck>[A-Za-z][\w.-]*)[ \t]+(?P<cv>{NEXT})|--(?P<fk>[A-Za-z][\w.-]*)(?:=(?P<fv>{VALUE})|[ \t]+(?P<fs>{NEXT}))?|-(?P<sk>[A-Za-z])[ \t]+(?P<sv>{NEXT})|(?P<q>["']?)(?P<ak>[A-Za-z_][\w.-]*)["']?(?P<pre>[ \t]*)(?P<sep>:|=)(?P<post>[ \t]*)(?P<av>{VALUE})|(?P<open>\{{)|(?P<close>\}})|^[ \t]*(?P<wk>[A-Za-z][\w.-]*)[ \t]+(?P<wv>{NEXT})[ \t]*\r?\n?$"#
        );
        super::table::compile(&pattern).ok()
    });
    RE.as_ref()
}

/// Deepest nesting kept; deeper braces or YAML keys are counted, not
/// joined into paths, so a hostile file cannot make every path long.
const MAX_DEPTH: usize = 32;

/// Nesting as the scanner has read it so far.
#[derive(Default)]
struct Nesting {
    section: Vec<String>,
    yaml: Vec<(usize, String)>,
    braces: Vec<String>,
    /// Braces opened past `MAX_DEPTH`.
    deeper: usize,
}

impl Nesting {
    fn open(&mut self, key: String) {
        if self.braces.len() < MAX_DEPTH {
            self.braces.push(key);
        } else {
            self.deeper += 1;
        }
    }

    fn close(&mut self) {
        if self.deeper > 0 {
            self.deeper -= 1;
        } else {
            self.braces.pop();
        }
    }
}

impl Nesting {
    fn path(&self, key: &str) -> Vec<String> {
        let own = key.split('.').map(norm);
        let yaml = self.yaml.iter().map(|(_, k)| k.clone());
        let braces = self.braces.iter().filter(|k| !k.is_empty()).cloned();
        self.section
            .iter()
            .cloned()
            .chain(yaml)
            .chain(braces)
            .chain(own)
            .collect()
    }

    /// A new line at `indent`: YAML keys at or right of it are closed, and
    /// a `[section]` line opens a section.
    fn line(&mut self, line: &str) {
        let indent = line.len() - line.trim_start().len();
        self.yaml.retain(|(i, _)| *i < indent);
        let t = line.trim();
        let inner = t.trim_start_matches('[').trim_end_matches(']');
        let bracketed = t.starts_with('[') && t.ends_with(']') && t.len() > 2;
        if bracketed
            && inner
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        {
            self.section = inner.split('.').map(norm).collect();
            self.yaml.clear();
        }
    }
}

/// Every setting of `unit`; offsets are relative to `unit`.
pub fn settings(unit: &str) -> Vec<Setting> {
    let Some(re) = scanner() else {
        return Vec::new();
    };
    let mut nest = Nesting::default();
    let mut out = Vec::new();
    let mut offset = 0;
    for line in unit.split_inclusive('\n') {
        nest.line(line);
        out.extend(list_item(&nest, line, offset));
        for c in re.captures_iter(line) {
            read_capture(&c, line, offset, &mut nest, &mut out);
        }
        offset += line.len();
    }
    out
}

fn read_capture(
    c: &regex::Captures<'_>,
    line: &str,
    offset: usize,
    nest: &mut Nesting,
    out: &mut Vec<Setting>,
) {
    let Some(all) = c.get(0) else { return };
    if c.name("open").is_some() {
        nest.open(block_name(&line[..all.start()]));
    } else if c.name("close").is_some() {
        nest.close();
    } else if !bounded(line, all.start()) {
    } else if let Some((key, v)) = c
        .name("ck")
        .zip(c.name("cv"))
        .or_else(|| c.name("sk").zip(c.name("sv")))
        .or_else(|| c.name("wk").zip(c.name("wv")))
    {
        let (start, end) = (offset + all.start(), offset + all.end());
        let values = vec![unquote(v.as_str())];
        out.extend(nested(nest, &values, (start, end)));
        out.push(negated(nest.path(key.as_str()), values, start, end));
    } else if let Some(key) = c.name("fk") {
        let s = flag(
            nest,
            key.as_str(),
            c,
            offset + all.start(),
            offset + all.end(),
        );
        out.extend(nested(nest, &s.values, (s.start, s.end)));
        out.push(s);
    } else if let (Some(key), Some(value)) = (c.name("ak"), c.name("av")) {
        let colon = c.name("sep").is_some_and(|s| s.as_str() == ":");
        let rest = line[all.end()..].trim();
        if value.as_str() == "{" {
            nest.open(norm(key.as_str()));
        } else if colon && value.as_str().is_empty() && rest.is_empty() {
            if nest.yaml.len() >= MAX_DEPTH {
                return;
            }
            let indent = line.len() - line.trim_start().len();
            nest.yaml.push((indent, norm(key.as_str())));
        } else {
            let span = (offset + all.start(), offset + all.end());
            // An inline list (`cidr_blocks = ["0.0.0.0/0"]`) is read whole.
            let list = line[value.start()..].split_inclusive(']').next();
            let value = if shell_empty(c) {
                ""
            } else if value.as_str().starts_with('[') {
                list.unwrap_or(value.as_str())
            } else {
                value.as_str()
            };
            out.push(assignment(nest, key.as_str(), value, span));
        }
    }
}

/// The name of an HCL block (`ingress {`): the word before its brace,
/// else none.
fn block_name(before: &str) -> String {
    let word = before.trim_end().rsplit([' ', '\t']).next().unwrap_or("");
    let named = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if named { norm(word) } else { String::new() }
}

/// A flag's value that is itself `KEY=VALUE` (`-e JUPYTER_TOKEN=`,
/// `--set auth.enabled=false`, `-c key=value`): that setting too.
fn nested(nest: &Nesting, values: &[String], (start, end): (usize, usize)) -> Option<Setting> {
    let (key, value) = values.iter().find_map(|v| v.split_once('='))?;
    let keyish = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    keyish.then(|| negated(nest.path(key), vec![unquote(value)], start, end))
}

/// `NAME= command`: the shell's empty assignment, not `NAME = value`.
fn shell_empty(c: &regex::Captures<'_>) -> bool {
    let len = |n: &str| c.name(n).map_or(0, |m| m.len());
    c.name("sep").is_some_and(|s| s.as_str() == "=") && len("pre") == 0 && len("post") > 0
}

/// A YAML list item under a key (`ports:` then `- "8888:8888"`): a value
/// of that key.
fn list_item(nest: &Nesting, line: &str, offset: usize) -> Option<Setting> {
    static ITEM: LazyLock<Option<Regex>> = LazyLock::new(|| {
        super::table::compile(
            r#"^[ \t]*-[ \t]+("[^"\n]*"|'[^'\n]*'|[^\s"'#:]+(?::[^\s"'#:]+)*)[ \t]*$"#,
        )
        .ok()
    });
    if nest.yaml.is_empty() {
        return None;
    }
    let item = ITEM
        .as_ref()?
        .captures(line.trim_end_matches(['\n', '\r']))?
        .get(1)?;
    let mut path = nest.path("");
    path.pop();
    Some(Setting {
        path,
        values: vec![unquote(item.as_str())],
        start: offset + item.start(),
        end: offset + item.end(),
    })
}

/// Whether a match at `at` starts a word: not inside a longer name.
fn bounded(line: &str, at: usize) -> bool {
    line[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_alphanumeric() || "_-.$/".contains(c)))
}

fn flag(nest: &Nesting, key: &str, c: &regex::Captures<'_>, start: usize, end: usize) -> Setting {
    let mut values = Vec::new();
    if let Some(v) = c.name("fv") {
        values.push(unquote(v.as_str()));
    } else {
        values.push("true".to_owned());
        if let Some(v) = c.name("fs") {
            values.push(unquote(v.as_str()));
        }
    }
    negated(nest.path(key), values, start, end)
}

fn assignment(nest: &Nesting, key: &str, value: &str, (start, end): (usize, usize)) -> Setting {
    negated(nest.path(key), vec![unquote(value)], start, end)
}

/// `no-X` and `disable-X` are X with the opposite value.
fn negated(mut path: Vec<String>, mut values: Vec<String>, start: usize, end: usize) -> Setting {
    if let Some(last) = path.last_mut() {
        let bare = ["no-", "disable-", "without-"]
            .iter()
            .find_map(|p| last.strip_prefix(p))
            .filter(|rest| !rest.is_empty())
            .map(str::to_owned);
        if let Some(bare) = bare {
            *last = bare;
            for v in &mut values {
                let off = matches!(v.as_str(), "false" | "0" | "no" | "off");
                *v = if off { "true" } else { "false" }.to_owned();
            }
        }
    }
    Setting {
        path,
        values,
        start,
        end,
    }
}

/// A key's part, lowercase, `_` read as `-`.
fn norm(key: &str) -> String {
    key.trim_matches(|c| c == '"' || c == '\'')
        .to_lowercase()
        .replace('_', "-")
}

/// A value without its quotes, lowercase.
fn unquote(v: &str) -> String {
    let v = v.trim();
    let inner = ['"', '\'']
        .iter()
        .find_map(|q| v.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)))
        .unwrap_or(v);
    inner.trim().to_lowercase()
}

/// Whether `value` names every interface: 0.0.0.0, ::, [::] or *, or
/// only a port (`:8080`), with or without a scheme, a port or a path.
pub fn any_host(value: &str) -> bool {
    let v = value.split_once("://").map_or(value, |(_, rest)| rest);
    let v = v.split('/').next().unwrap_or(v);
    let (host, port) = if let Some(rest) = v.strip_prefix('[') {
        let (h, p) = rest.split_once(']').unwrap_or((rest, ""));
        (h, p.strip_prefix(':'))
    } else if v.matches(':').count() == 1 {
        let (h, p) = v.split_once(':').unwrap_or((v, ""));
        (h, Some(p))
    } else {
        (v, None)
    };
    match host {
        "0.0.0.0" | "::" | "*" => true,
        "" => port.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())),
        _ => false,
    }
}

/// Whether `value` publishes a port on every interface: `HOST:CONTAINER`
/// (ranges and `/tcp` too) with no address, or with one of every
/// interface.
pub fn published(value: &str) -> bool {
    let v = value.split('/').next().unwrap_or(value);
    let ports = |s: &str| {
        s.split('-')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    let parts: Vec<&str> = v.rsplitn(3, ':').collect();
    match parts.as_slice() {
        [c, h] => ports(c) && ports(h),
        [c, h, addr] => ports(c) && ports(h) && matches!(*addr, "0.0.0.0" | "[::]" | "::" | "*"),
        _ => false,
    }
}
