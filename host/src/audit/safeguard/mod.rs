//! Settings that turn a safeguard off (`safeguards.toml`): a listener on
//! every interface with its login off, a browser's debugging port open to
//! others, the same-origin policy off in the user's own profile, a system
//! folder every user may write, a secret every user may read. No rule of
//! rules.toml reads these: the harm is in which settings come together,
//! written as flags or config keys of any tool, not in one command.
//!
//! A unit is a fenced code block or a paragraph of a prose file, or a
//! whole script or config file; the marks of its settings are looked up
//! in the table's combinations. A unit whose lead-in describes it as what
//! not to do ("insecure", "don't do this") is capped at medium: the page
//! warns against it.

mod modes;
mod settings;
mod table;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::audit::Severity;
use table::Table;

/// The table, embedded in the binary.
pub const SAFEGUARDS_TOML: &str = include_str!("../safeguards.toml");
/// The rule id of weakening settings found together.
pub const SETTINGS_RULE: &str = "safeguard-off";
/// The rule id of a file mode that opens a system folder or a secret.
pub const PERMISSIONS_RULE: &str = "open-permissions";

/// The table, parsed once (a unit test parses it).
fn table() -> &'static Table {
    static TABLE: LazyLock<Table> =
        LazyLock::new(|| crate::audit::embedded("safeguards.toml", table::parse(SAFEGUARDS_TOML)));
    &TABLE
}

/// One finding: a rule id, its severity, where and why.
#[derive(Debug)]
pub struct Hit {
    pub rule: &'static str,
    pub severity: Severity,
    pub start: usize,
    pub end: usize,
    pub note: String,
}

/// A part of a text whose settings are read together.
#[derive(Debug, Clone, Copy)]
struct Unit {
    start: usize,
    end: usize,
    /// Its lead-in says it is what not to do.
    warned: bool,
}

/// Every finding of the tier in `text`, read as `file`.
pub fn scan(file: &str, text: &str) -> Vec<Hit> {
    let units = units(file, text);
    let listeners: Vec<Listener<'_>> = units.iter().map(|u| listener(text, u)).collect();
    let by_port = by_port(&units, &listeners);
    let tunnels = tunnels(text);
    let mut out = Vec::new();
    for (i, (u, own)) in units.iter().zip(&listeners).enumerate() {
        let mut found = own.found.clone();
        // The same port elsewhere in the file is the same listener.
        let mut others: Vec<usize> = own
            .ports
            .iter()
            .flat_map(|p| by_port.get(p).into_iter().flatten().copied())
            .filter(|&j| j != i)
            .collect();
        others.sort_unstable();
        others.dedup();
        for j in others {
            found.extend(listeners[j].found.iter().copied());
        }
        let forwarded = tunnels
            .iter()
            .filter(|(_, p)| p.iter().any(|p| own.ports.contains(p)));
        found.extend(forwarded.map(|(f, _)| *f));
        out.extend(unit_hits(text, u, &found));
    }
    if modes::may_set_modes(text) {
        out.extend(permission_hits(text, &units));
    }
    out
}

/// Most units of one port joined to another: honest files name a port
/// a few times, and the bound keeps a hostile file linear.
const MAX_SAME_PORT: usize = 16;

/// The units with weakening settings by the ports they name (a block
/// shown as what not to do lends nothing).
fn by_port(units: &[Unit], listeners: &[Listener<'_>]) -> HashMap<u16, Vec<usize>> {
    let mut out: HashMap<u16, Vec<usize>> = HashMap::new();
    for (i, (u, l)) in units.iter().zip(listeners).enumerate() {
        if u.warned || l.found.is_empty() {
            continue;
        }
        for p in &l.ports {
            let list = out.entry(*p).or_default();
            if list.len() < MAX_SAME_PORT {
                list.push(i);
            }
        }
    }
    out
}

/// A unit's weakening settings and the ports it names.
struct Listener<'t> {
    found: Vec<Found<'t>>,
    ports: Vec<u16>,
}

fn listener(text: &str, u: &Unit) -> Listener<'static> {
    let t = table();
    let listed = settings::settings(&text[u.start..u.end]);
    let mut found: Vec<Found<'static>> = Vec::new();
    for s in &listed {
        found.extend(weakens(s, t).into_iter().map(|spec| Found {
            start: u.start + s.start,
            end: u.start + s.end,
            marks: &spec.marks,
        }));
    }
    Listener {
        found,
        ports: ports(&listed),
    }
}

/// What gives a unit marks: a weakening setting, or a tunnel to its port.
#[derive(Debug, Clone, Copy)]
struct Found<'t> {
    start: usize,
    end: usize,
    marks: &'t [String],
}

/// Every tunnel of `text` with the ports its line names.
fn tunnels(text: &str) -> Vec<(Found<'static>, Vec<u16>)> {
    let t = table();
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        for tunnel in &t.tunnels {
            let Some(i) = word_at(line, &tunnel.program) else {
                continue;
            };
            let rest = &line[i..];
            if !rest.contains(tunnel.needs.as_str()) {
                continue;
            }
            let found = Found {
                start: at + i,
                end: at + line.trim_end().len(),
                marks: &tunnel.marks,
            };
            out.push((found, numbers(rest)));
        }
        at += line.len();
    }
    out
}

/// Where `word` first stands as a word of `line` (a command's name).
fn word_at(line: &str, word: &str) -> Option<usize> {
    let edge = |c: Option<char>| c.is_none_or(|c| c.is_whitespace() || "`'\"(;|&".contains(c));
    line.match_indices(word).map(|(i, _)| i).find(|&i| {
        edge(line[..i].chars().next_back()) && edge(line[i + word.len()..].chars().next())
    })
}

/// The numbers of `text` that could be ports: a word of their own or
/// after `:`, `=` or `/`.
fn numbers(text: &str) -> Vec<u16> {
    text.split(|c: char| c.is_whitespace() || ":=/'\"".contains(c))
        .filter_map(|w| w.parse::<u16>().ok())
        .filter(|p| *p > 0)
        .collect()
}

/// The ports a unit's settings name: a `port` setting, or an address's
/// `:PORT`.
fn ports(settings: &[settings::Setting]) -> Vec<u16> {
    let mut out = Vec::new();
    for s in settings {
        let is_port = s.path.last().is_some_and(|k| k == "port");
        for v in &s.values {
            if is_port {
                out.extend(v.parse::<u16>().ok());
            } else if v.contains(':') {
                let host = v.split_once("://").map_or(v.as_str(), |(_, r)| r);
                let host = host.split('/').next().unwrap_or(host);
                out.extend(
                    host.rsplit_once(':')
                        .and_then(|(_, p)| p.parse::<u16>().ok()),
                );
            }
        }
    }
    out
}

/// Whether `file` is read as prose with code blocks.
fn is_prose(file: &str) -> bool {
    let lower = file.to_ascii_lowercase();
    [".md", ".markdown", ".mdx", ".txt", ".rst"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// The units of `text`: fenced blocks and paragraphs of a prose file,
/// else the whole text.
fn units(file: &str, text: &str) -> Vec<Unit> {
    let whole = Unit {
        start: 0,
        end: text.len(),
        warned: false,
    };
    if !is_prose(file) {
        return vec![whole];
    }
    let mut out = Vec::new();
    let (mut fence, mut para): (Option<Unit>, Option<usize>) = (None, None);
    let mut lead = String::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        let is_fence = t.starts_with("```") || t.starts_with("~~~");
        if let Some(mut f) = fence {
            if is_fence {
                f.end = at + line.len();
                out.push(f);
                fence = None;
                lead.clear();
            }
        } else if is_fence {
            close_para(&mut para, at, text, &mut out);
            fence = Some(Unit {
                start: at,
                end: text.len(),
                warned: warns(&lead) || warns(t),
            });
        } else if t.is_empty() {
            close_para(&mut para, at, text, &mut out);
        } else {
            para.get_or_insert(at);
            lead = t.to_owned();
        }
        at += line.len();
    }
    close_para(&mut para, at, text, &mut out);
    out.extend(fence);
    out
}

fn close_para(para: &mut Option<usize>, end: usize, text: &str, out: &mut Vec<Unit>) {
    if let Some(start) = para.take() {
        out.push(Unit {
            start,
            end,
            warned: warns(&text[start..end]),
        });
    }
}

/// Whether a lead-in describes what follows as what not to do.
fn warns(lead: &str) -> bool {
    static CUE: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
        table::compile(
            r"\b(?:insecure|unsafe|dangerous|danger|vulnerable|anti-?pattern|never do|don'?t do|do not do|what not to do|bad example|wrong way)\b",
        )
        .ok()
    });
    CUE.as_ref().is_some_and(|re| re.is_match(lead))
}

/// The finding of each combination whose marks `found` (the unit's
/// settings, and those of the same port) hold.
fn unit_hits(text: &str, u: &Unit, found: &[Found<'_>]) -> Vec<Hit> {
    let t = table();
    let mut fired: Vec<&table::Combination> = Vec::new();
    let mut out = Vec::new();
    for combo in &t.combinations {
        let covered = fired
            .iter()
            .any(|f| combo.marks.iter().all(|m| f.marks.contains(m)));
        if covered {
            continue;
        }
        if let Some(hit) = combination_hit(text, u, combo, found) {
            fired.push(combo);
            out.push(hit);
        }
    }
    out
}

/// The table's settings that `s` is, when its value weakens them.
fn weakens<'t>(s: &settings::Setting, t: &'t Table) -> Vec<&'t table::Setting> {
    t.settings
        .iter()
        .filter(|spec| {
            let key = spec.keys.iter().any(|k| ends_with(&s.path, k));
            key && s.values.iter().any(|v| weak_value(spec, v))
        })
        .collect()
}

/// Whether `path` ends with the dotted `key`.
fn ends_with(path: &[String], key: &str) -> bool {
    let parts: Vec<&str> = key.split('.').collect();
    path.len() >= parts.len()
        && path[path.len() - parts.len()..]
            .iter()
            .zip(&parts)
            .all(|(a, b)| a == b)
}

fn weak_value(spec: &table::Setting, v: &str) -> bool {
    let mut path = v.replace('\\', "/");
    while path.contains("//") {
        path = path.replace("//", "/");
    }
    (spec.empty && v.is_empty())
        || (spec.any_host && settings::any_host(v))
        || (spec.published && settings::published(v))
        || spec.values.iter().any(|x| x == v)
        || spec
            .contains
            .iter()
            .any(|c| path.contains(c.as_str()) || v.contains(c.as_str()))
}

/// The hit of `combo` when every mark is among `found`, at the first
/// setting that gives one.
fn combination_hit(
    text: &str,
    u: &Unit,
    combo: &table::Combination,
    found: &[Found<'_>],
) -> Option<Hit> {
    let mut used: Vec<&Found<'_>> = Vec::new();
    for mark in &combo.marks {
        let f = found.iter().find(|f| f.marks.contains(mark))?;
        if !used.iter().any(|x| x.start == f.start) {
            used.push(f);
        }
    }
    used.sort_by_key(|f| f.start);
    let first = used.first()?;
    let written: Vec<String> = used
        .iter()
        .map(|f| format!("`{}`", text[f.start..f.end].trim()))
        .collect();
    let mut severity = combo.severity;
    let mut note = format!("{}: {}", written.join(" + "), combo.why);
    if u.warned && severity > Severity::Medium {
        severity = Severity::Medium;
        note.push_str(" (shown as what not to do)");
    }
    Some(Hit {
        rule: SETTINGS_RULE,
        severity,
        start: first.start,
        end: first.end,
        note,
    })
}

/// The `chmod`s of `text` that open a system folder or a secret to every
/// user: high, medium in a unit shown as what not to do.
fn permission_hits(text: &str, units: &[Unit]) -> Vec<Hit> {
    let t = table();
    modes::openings(text, &t.permissions)
        .into_iter()
        .map(|o| {
            let warned = units
                .iter()
                .any(|u| u.warned && u.start <= o.start && o.start < u.end);
            let why = match &o.opened {
                modes::Opened::Writable(p) => format!("every user may write {p}: any local user or process can replace what runs from there"),
                modes::Opened::Readable(p) => format!("every user may read {p}, a secret: any local user can take it"),
            };
            Hit {
                rule: PERMISSIONS_RULE,
                severity: if warned { Severity::Medium } else { Severity::High },
                start: o.start,
                end: o.end,
                note: why,
            }
        })
        .collect()
}
