//! File modes that open a file to every user: `chmod` in shell (octal or
//! symbolic, `-R`, several operands, under `sudo`), `os.chmod(path, 0o777)`
//! in Python and `fs.chmod[Sync](path, 0o777)` in JavaScript. What makes
//! a mode risky is where it lands (`safeguards.toml`, `[permissions]`): a
//! system or shared folder every user may write, or a secret every user
//! may read.

use std::sync::LazyLock;

use regex::Regex;

use super::table::Permissions;

/// What a mode grants to every user.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub others_write: bool,
    pub others_read: bool,
    pub sticky: bool,
}

/// Why a `chmod` opens something.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// Every user may write here: a system, shared or home folder.
    Writable(String),
    /// Every user may read this secret.
    Readable(String),
}

/// One `chmod` that opens a path: where it is written and why.
#[derive(Debug)]
pub struct Opening {
    pub start: usize,
    pub end: usize,
    pub opened: Opened,
}

/// Parses a mode: octal (`777`, `0644`, `1777`) or symbolic (`a+rwx`,
/// `o+w,g+w`, `+r`). A symbolic clause without `u`, `g`, `o` or `a`
/// applies the umask (022 nearly everywhere), which keeps others' write
/// bit off and lets read through.
pub fn grant(mode: &str) -> Option<Grant> {
    if !mode.is_empty() && mode.len() <= 4 && mode.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        let digits: Vec<u8> = mode.bytes().map(|b| b - b'0').collect();
        let others = *digits.last()?;
        let sticky = digits.len() == 4 && digits[0] & 1 == 1;
        return Some(Grant {
            others_write: others & 2 != 0,
            others_read: others & 4 != 0,
            sticky,
        });
    }
    let mut g = Grant::default();
    for clause in mode.split(',') {
        symbolic(clause, &mut g)?;
    }
    Some(g)
}

fn symbolic(clause: &str, g: &mut Grant) -> Option<()> {
    let op_at = clause.find(['+', '-', '='])?;
    let who = &clause[..op_at];
    if !who.chars().all(|c| "ugoa".contains(c)) {
        return None;
    }
    let others = who.is_empty() || who.contains(['o', 'a']);
    let masked = who.is_empty();
    let mut op = '+';
    for c in clause[op_at..].chars() {
        match c {
            '+' | '-' | '=' => op = c,
            'r' | 'w' | 'x' | 'X' | 's' | 't' if op != '-' => {
                g.others_read |= others && c == 'r';
                g.others_write |= others && !masked && c == 'w';
                g.sticky |= c == 't';
            }
            'r' | 'w' | 'x' | 'X' | 's' | 't' => {}
            _ => return None,
        }
    }
    Some(())
}

/// A command that sets a mode: its name and how its words give the
/// grant, whether it recurses, and the paths.
type Reader = fn(&[String]) -> Option<Modal>;

/// What a mode-setting command does, read from its words.
struct Modal {
    grant: Grant,
    recursive: bool,
    operands: Vec<String>,
}

const COMMANDS: [(&str, Reader); 5] = [
    ("chmod", chmod),
    ("mkdir", with_mode_option),
    ("install", with_mode_option),
    ("setfacl", setfacl),
    ("icacls", icacls),
];

/// Bytes of one command read, and of its line before it searched for
/// `find`: bounds that keep a hostile file linear.
const MAX_COMMAND: usize = 4096;

/// Whether the command `name` stands at `at` as a command word: not
/// inside a longer word, and followed by a blank or `(` (`os.chmod(`,
/// `fs.chmodSync(`).
fn command_at(text: &str, at: usize, name: &str) -> bool {
    let before = text[..at].chars().next_back();
    let after = text[at + name.len()..].chars().next();
    let word_before = before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
    let sync = name == "chmod" && text[at + name.len()..].starts_with("Sync(");
    !word_before && (sync || after.is_none_or(|c| c.is_whitespace() || c == '('))
}

/// The text before a command: its line (for `find`) and the file's
/// literal assignments before it (for `$NAME`).
struct Before<'a> {
    text: &'a str,
    at: usize,
    assigns: &'a Assignments,
}

/// A value as written after `=`: quoted, or up to a blank or an operator.
fn first_value(rest: &str) -> &str {
    if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let inner = &rest[1..];
        return inner.find(q).map_or(inner, |e| &inner[..e]);
    }
    let end = rest
        .find(|c: char| c.is_whitespace() || ";&|'\"`".contains(c))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Every literal `NAME=value` of a text, by name, in order.
struct Assignments(std::collections::HashMap<String, Vec<(usize, String)>>);

impl Assignments {
    fn of(text: &str) -> Assignments {
        static NAME: LazyLock<Option<Regex>> = LazyLock::new(|| {
            super::table::compile(r"(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]{0,63})=").ok()
        });
        let mut map: std::collections::HashMap<String, Vec<(usize, String)>> = Default::default();
        let Some(re) = NAME.as_ref().filter(|_| text.contains('$')) else {
            return Assignments(map);
        };
        let mut from = 0;
        while let Some(c) = re.captures_at(text, from) {
            let (Some(all), Some(n)) = (c.get(0), c.get(1)) else {
                break;
            };
            let value = first_value(bounded(&text[all.end()..], 512));
            map.entry(n.as_str().to_owned())
                .or_default()
                .push((n.start(), value.to_owned()));
            // Past the value: each byte is read once.
            from = all.end() + value.len().max(1);
            while from < text.len() && !text.is_char_boundary(from) {
                from += 1;
            }
            if from >= text.len() {
                break;
            }
        }
        Assignments(map)
    }

    /// The last value given to `name` before byte `at`.
    fn before(&self, name: &str, at: usize) -> Option<&str> {
        let list = self.0.get(name)?;
        let n = list.partition_point(|(p, _)| *p < at);
        n.checked_sub(1).map(|i| list[i].1.as_str())
    }
}

/// The first `max` bytes of `text`, at a character boundary.
fn bounded(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The last `max` bytes of `text`, at a character boundary.
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Whether `text` names a command that sets a mode at all.
pub fn may_set_modes(text: &str) -> bool {
    COMMANDS.iter().any(|(name, _)| text.contains(name))
}

/// Every command of `text` that sets a mode opening a path the table
/// names: `chmod` (and `os.chmod`, `fs.chmod[Sync]`), `mkdir -m`,
/// `install -m`, `setfacl -m o::…`, `icacls … /grant Everyone:…`.
pub fn openings(text: &str, perms: &Permissions) -> Vec<Opening> {
    let mut out = Vec::new();
    let assigns = Assignments::of(text);
    for (name, read) in COMMANDS {
        for (at, _) in text.match_indices(name) {
            if !command_at(text, at, name) {
                continue;
            }
            let rest = bounded(&text[at + name.len()..], MAX_COMMAND);
            let call = if name == "chmod" {
                script_call(rest)
            } else {
                None
            };
            let (words, len) = call.unwrap_or_else(|| shell_words(rest));
            let before = Before {
                text: tail(&text[..at], MAX_COMMAND),
                at,
                assigns: &assigns,
            };
            let opened = read(&words).and_then(|m| judge(m, &before, perms));
            if let Some(opened) = opened {
                let end = at + name.len() + len;
                out.push(Opening {
                    start: at,
                    end,
                    opened,
                });
            }
        }
    }
    out
}

/// `os.chmod(PATH, MODE)`, `fs.chmodSync(PATH, MODE)`: the words `MODE
/// PATH` as a shell `chmod` would have them.
fn script_call(rest: &str) -> Option<(Vec<String>, usize)> {
    static CALL: LazyLock<Option<Regex>> = LazyLock::new(|| {
        super::table::compile(
            r#"^(?:sync)?\(\s*(?:["']([^"'\n]+)["']|(\w[\w./]*))\s*,\s*(?:0o([0-7]{3,4})|0([0-7]{3})|["']([0-7]{3,4})["']|(\d{1,4}))\b"#,
        )
        .ok()
    });
    let c = CALL.as_ref()?.captures(rest)?;
    let path = c.get(1).or(c.get(2))?.as_str().to_owned();
    let mode = match (c.get(3).or(c.get(4)).or(c.get(5)), c.get(6)) {
        (Some(octal), _) => octal.as_str().to_owned(),
        (None, Some(decimal)) => format!("{:o}", decimal.as_str().parse::<u32>().ok()?),
        _ => return None,
    };
    Some((vec![mode, path], c.get(0)?.end()))
}

/// The words of a shell command from `rest` to its end (`;`, `&`, `|`,
/// a redirection, a comment, an unbalanced `)`, or a line end that no `\`
/// continues), quotes removed, `$(…)` kept whole; and the bytes read.
fn shell_words(rest: &str) -> (Vec<String>, usize) {
    let (mut words, mut word) = (Vec::new(), String::new());
    let (mut quote, mut depth) = (None::<char>, 0usize);
    let mut chars = rest.char_indices().peekable();
    let mut end = rest.len();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, '\\') if chars.peek().is_some_and(|(_, n)| *n == '\n') => {
                chars.next();
                push_word(&mut words, &mut word);
            }
            (None, '(') => {
                depth += 1;
                word.push(c);
            }
            (None, ')') if depth > 0 => {
                depth -= 1;
                word.push(c);
            }
            (None, ' ' | '\t') if depth == 0 && is_command(&word) => {
                end = i - word.len();
                word.clear();
                break;
            }
            (None, ' ' | '\t') if depth == 0 => push_word(&mut words, &mut word),
            (None, c) if depth == 0 && (c == '\n' || ";&|<>)#`".contains(c)) => {
                let fd = (c == '>' || c == '<') && word.bytes().all(|b| b.is_ascii_digit());
                end = if fd { i - word.len() } else { i };
                if !fd {
                    push_word(&mut words, &mut word);
                }
                break;
            }
            (None, c) => word.push(c),
        }
    }
    word.clear();
    (words, end)
}

/// A word that is one of the commands this reads (a new command starts,
/// as in `sudo chmod … && chmod …` without the `&&`).
fn is_command(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    COMMANDS.iter().any(|(c, _)| *c == name)
}

fn push_word(words: &mut Vec<String>, word: &mut String) {
    if !word.is_empty() {
        words.push(std::mem::take(word));
    }
}

/// `chmod [OPTIONS] MODE PATH…`.
fn chmod(words: &[String]) -> Option<Modal> {
    let is_option = |w: &&String| w.starts_with('-') && grant(w).is_none();
    let recursive = words
        .iter()
        .take_while(is_option)
        .any(|w| w.as_str() == "--recursive" || (!w.starts_with("--") && w.contains('R')));
    let mut rest = words.iter().skip_while(is_option);
    let grant = grant(rest.next()?)?;
    let operands = rest.filter(|w| !w.starts_with('-')).cloned().collect();
    Some(Modal {
        grant,
        recursive,
        operands,
    })
}

/// `mkdir -m MODE PATH…`, `install -m MODE … PATH` (also `--mode=MODE`,
/// `-mMODE`).
fn with_mode_option(words: &[String]) -> Option<Modal> {
    let mut mode = None;
    let mut operands = Vec::new();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        if w == "-m" || w == "--mode" {
            mode = it.next().cloned();
        } else if let Some(m) = w.strip_prefix("--mode=").or_else(|| w.strip_prefix("-m")) {
            mode = Some(m.to_owned());
        } else if !w.starts_with('-') {
            operands.push(w.clone());
        }
    }
    Some(Modal {
        grant: grant(&mode?)?,
        recursive: false,
        operands,
    })
}

/// `setfacl [-R] -m o::rwx,… PATH…` (also `other:`, `-M`-less forms).
fn setfacl(words: &[String]) -> Option<Modal> {
    let mut g = Grant::default();
    let (mut recursive, mut operands) = (false, Vec::new());
    let mut it = words.iter();
    while let Some(w) = it.next() {
        if w == "-m" || w == "--modify" {
            for entry in it.next()?.split(',') {
                let (who, perm) = entry.rsplit_once(':')?;
                if matches!(who.trim_end_matches(':'), "o" | "other") {
                    g.others_read |= perm.contains('r');
                    g.others_write |= perm.contains('w');
                }
            }
        } else if w.starts_with('-') {
            recursive |= w == "-R" || w == "--recursive";
        } else {
            operands.push(w.clone());
        }
    }
    Some(Modal {
        grant: g,
        recursive,
        operands,
    })
}

/// `icacls PATH /grant[:r] PRINCIPAL:(OI)(CI)F …`: a grant to everyone or
/// every user (`Everyone`, `Users`, `Authenticated Users`, their SIDs).
fn icacls(words: &[String]) -> Option<Modal> {
    const ALL: [&str; 7] = [
        "everyone",
        "*s-1-1-0",
        "users",
        "builtin\\users",
        "authenticated users",
        "*s-1-5-11",
        "*s-1-5-32-545",
    ];
    let path = words.first()?.clone();
    let mut g = Grant::default();
    let mut granting = false;
    for w in &words[1..] {
        let lower = w.to_lowercase();
        if lower.starts_with("/grant") {
            granting = true;
        } else if lower.starts_with('/') {
            granting = false;
        } else if let Some((_, perms)) = lower
            .rsplit_once(':')
            .filter(|(who, _)| granting && ALL.contains(who))
        {
            let rights = perms.rsplit(')').next().unwrap_or(perms);
            g.others_write |= rights.contains(['f', 'm', 'w']);
            g.others_read |= rights.contains(['f', 'm', 'r']);
        }
    }
    let recursive = words.iter().any(|w| w.eq_ignore_ascii_case("/t"));
    Some(Modal {
        grant: g,
        recursive,
        operands: vec![path],
    })
}

/// Whether a mode-setting command opens a path the table names, and
/// which; `before` is the text before it, where `find` names the paths of
/// `{}` and a literal assignment gives a `$NAME` its value.
fn judge(m: Modal, before: &Before<'_>, perms: &Permissions) -> Option<Opened> {
    let Modal {
        grant: g,
        recursive,
        mut operands,
    } = m;
    // A sticky folder (1777, not recursive) is how /tmp is meant to be.
    let writable = g.others_write && (recursive || !g.sticky);
    if operands.is_empty() || operands.iter().any(|o| o == "{}") {
        operands = found_paths(before.text);
    }
    for operand in operands.iter().map(|o| expand(o, before)) {
        let operand = &operand;
        let path = normal_path(operand);
        if writable && (trusted(&path, perms) || shared(operand, perms)) {
            return Some(Opened::Writable(operand.clone()));
        }
        if g.others_read && secret(&path, recursive, perms) {
            return Some(Opened::Readable(operand.clone()));
        }
    }
    None
}

/// The paths a `find` on the line before names (`find /usr/local -type
/// d -exec chmod 777 {} +`, `find /opt | xargs chmod o+w`).
fn found_paths(before: &str) -> Vec<String> {
    let line = before.rsplit('\n').next().unwrap_or(before);
    let Some(at) = line.rfind("find ") else {
        return Vec::new();
    };
    shell_words(&line[at + "find ".len()..])
        .0
        .into_iter()
        .skip_while(|w| matches!(w.as_str(), "-H" | "-L" | "-P"))
        .take_while(|w| !w.starts_with(['-', '(', '!']))
        .collect()
}

/// `$NAME/rest` or `${NAME}/rest` with the last literal `NAME=value`
/// before it put in; anything else as it is.
fn expand(operand: &str, before: &Before<'_>) -> String {
    let Some(var) = operand.strip_prefix('$') else {
        return operand.to_owned();
    };
    let (name, rest) = match var.strip_prefix('{') {
        Some(v) => v.split_once('}').unwrap_or((v, "")),
        None => var.split_at(
            var.find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(var.len()),
        ),
    };
    if name.is_empty() || name.eq_ignore_ascii_case("home") {
        return operand.to_owned();
    }
    match before.assigns.before(name, before.at) {
        Some(v) => format!("{v}{rest}"),
        None => operand.to_owned(),
    }
}

/// A path as the table writes it: lowercase, `/`-separated, the home as
/// `~` (`$HOME`, `${HOME}`, `/home/NAME`, `/Users/NAME`), no trailing `/`.
pub fn normal_path(path: &str) -> String {
    let mut p = path.trim().to_lowercase().replace('\\', "/");
    for (var, is) in [
        ("$env:programfiles", "c:/program files"),
        ("%programfiles%", "c:/program files"),
        ("$env:windir", "c:/windows"),
        ("%windir%", "c:/windows"),
        ("%systemroot%", "c:/windows"),
        ("$env:programdata", "c:/programdata"),
        ("%programdata%", "c:/programdata"),
        ("$env:userprofile", "~"),
        ("%userprofile%", "~"),
    ] {
        if let Some(rest) = p.strip_prefix(var) {
            p = format!("{is}{rest}");
        }
    }
    for home in ["${home}", "$home"] {
        if let Some(rest) = p.strip_prefix(home) {
            p = format!("~{rest}");
        }
    }
    for root in ["/home/", "/users/"] {
        if let Some(rest) = p.strip_prefix(root) {
            let after = rest.find('/').map_or("", |i| &rest[i..]);
            if !rest.is_empty() {
                p = format!("~{after}");
            }
        }
    }
    while p.contains("//") {
        p = p.replace("//", "/");
    }
    if p.len() > 1 {
        p = p.trim_end_matches('/').to_owned();
    }
    p
}

fn under(path: &str, root: &str) -> bool {
    path == root
        || path
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with('/') || root.ends_with('/'))
}

/// A system folder (not a scratch one), the home or a folder of it the
/// table lists.
fn trusted(path: &str, perms: &Permissions) -> bool {
    let system = perms.system.iter().any(|r| {
        if r == "/" {
            path == "/"
        } else {
            under(path, r)
        }
    });
    let scratch = perms.scratch.iter().any(|r| under(path, r));
    let home = path == "~" || perms.home.iter().any(|r| under(path, r));
    (system && !scratch) || home
}

/// A shared package folder: named by the table's words, in the path or
/// in the command substitution that computes it.
fn shared(operand: &str, perms: &Permissions) -> bool {
    let lower = operand.to_lowercase();
    perms.shared.iter().any(|w| lower.contains(w.as_str()))
}

/// A secret file, or with `-R` a folder of secrets.
fn secret(path: &str, recursive: bool, perms: &Permissions) -> bool {
    let is = |p: &str| {
        perms.secret.iter().any(|r| r.is_match(p)) && !perms.public.iter().any(|r| r.is_match(p))
    };
    is(path) || (recursive && is(&format!("{path}/")))
}
