//! A small abstract interpreter over tree-sitter's bash tree: each
//! variable, file and folder carries a taint (fetched, cloned, secret),
//! and each command is a function from the taint of its stdin and its
//! words to the taint of its stdout and of the files it writes. Sinks
//! (running a file or a string, sending to the network) report what
//! reaches them. Commands are told apart by what they do to data
//! (`commands.rs`), not by whole command lines.

use std::collections::HashMap;
use std::ops::ControlFlow;

use tree_sitter::{Node, ParseOptions, Parser, Tree};

use super::blocks::Unit;
use super::paths::{self, normalize};
use super::{Hits, Lang, Taint};

mod commands;
mod install;
mod push;
mod redirect;
mod upload;

/// Where an unquoted expansion's blanks split a word (see
/// `commands::split_fields`).
pub(crate) const FIELD_BREAK: char = '\u{1f}';

/// Bytes of shell parsed from one file; the rest is not flow-analysed.
pub(crate) const MAX_PARSE_BYTES: usize = 1 << 20;
/// Parser progress checks (each about 100 parser operations) allowed per
/// KiB of input, and at least: bounds error recovery on hostile input.
const PARSE_CHECKS_PER_KIB: usize = 400;
const MIN_PARSE_CHECKS: usize = 20_000;
/// Tree depth walked; deeper nodes are skipped (and reported once).
const MAX_DEPTH: usize = 96;
/// Nodes evaluated in one file, function calls and nested strings included.
const MAX_STEPS: usize = 400_000;
/// Shell functions calling functions, and `sh -c '…'` inside `sh -c`.
const MAX_NESTING: usize = 4;

/// Environment variables whose value a program runs when it starts: a
/// script every non-interactive bash or sh sources (`BASH_ENV`, `ENV`),
/// a library the loader injects, options that load a module, a command
/// git, ssh or a prompt runs.
const RUNS_AT_START: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "LD_PRELOAD",
    "DYLD_INSERT_LIBRARIES",
    "NODE_OPTIONS",
    "PERL5OPT",
    "RUBYOPT",
    "PYTHONSTARTUP",
    "PROMPT_COMMAND",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXTERNAL_DIFF",
];

/// A variable's known text (`$NAME` when unknown) and taint.
#[derive(Debug, Clone, Default)]
pub(crate) struct Value {
    pub text: String,
    pub taint: Taint,
}

/// Where a piece of code is: its source and its offset in the file; a
/// nested string (`sh -c '…'`) reports at the command that runs it.
#[derive(Clone, Copy)]
struct Cx<'a> {
    src: &'a [u8],
    base: usize,
    pin: Option<(usize, usize)>,
}

impl Cx<'_> {
    fn span(&self, node: Node) -> (usize, usize) {
        self.pin
            .unwrap_or((self.base + node.start_byte(), self.base + node.end_byte()))
    }

    fn text<'n>(&self, node: Node) -> &'n str
    where
        Self: 'n,
    {
        node.utf8_text(self.src).unwrap_or("")
    }
}

/// Code of another language the shell hands an interpreter (`python3 -c
/// '…'`, `node -e '…'`, `python3 - <<EOF`): read by that language's
/// engine, its findings reported at the command.
#[derive(Debug, Clone)]
pub(crate) struct Embedded {
    pub lang: Lang,
    pub code: String,
    pub span: (usize, usize),
}

/// The state of one file's shell: what each name holds.
pub(crate) struct Interpreter<'t> {
    text: &'t str,
    parser: Option<Parser>,
    vars: HashMap<String, Value>,
    files: HashMap<String, Taint>,
    bases: HashMap<String, Taint>,
    dirs: Vec<(String, Taint)>,
    cwd: Taint,
    /// Archives unpacked into the current folder: what `./NAME` runs.
    extracted_here: Taint,
    net_fds: Vec<String>,
    functions: HashMap<String, (String, usize)>,
    /// `alias NAME='WORDS'`: what a command named NAME runs.
    aliases: HashMap<String, String>,
    /// Code handed to other languages' interpreters, to be read.
    pub embedded: Vec<Embedded>,
    /// Running under `sudo` (or `doas`, `su -c`) now.
    root: bool,
    /// This block runs as root (`sudo -i` earlier, a root check).
    root_unit: bool,
    /// The command being run, where a write is reported.
    at: (usize, usize),
    /// Root writes of downloads into system locations, not verified yet.
    installs: Vec<install::Install>,
    /// `git remote add NAME URL`: each remote's URL.
    remotes: HashMap<String, String>,
    /// What commits of the skill put into the repository's history.
    committed: Taint,
    parsed: usize,
    steps: usize,
    nesting: usize,
    limited: bool,
}

impl<'t> Interpreter<'t> {
    pub fn new(text: &'t str) -> Self {
        let mut parser = Parser::new();
        let parser = parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .ok()
            .map(|()| parser);
        Interpreter {
            text,
            parser,
            vars: HashMap::new(),
            files: HashMap::new(),
            bases: HashMap::new(),
            dirs: Vec::new(),
            cwd: Taint::default(),
            extracted_here: Taint::default(),
            net_fds: Vec::new(),
            functions: HashMap::new(),
            aliases: HashMap::new(),
            embedded: Vec::new(),
            root: false,
            root_unit: false,
            at: (0, 0),
            installs: Vec::new(),
            remotes: HashMap::new(),
            committed: Taint::default(),
            parsed: 0,
            steps: 0,
            nesting: 0,
            limited: false,
        }
    }

    /// Reads one block or script, in the state the earlier ones left.
    pub fn run_unit(&mut self, unit: &Unit, hits: &mut Hits) {
        let room = MAX_PARSE_BYTES.saturating_sub(self.parsed);
        let code = cut(&unit.code, room);
        self.parsed += code.len();
        if code.len() < unit.code.len() {
            self.limit(
                hits,
                unit.start + code.len(),
                "shell past 1 MiB not flow-analysed",
            );
        }
        let cx = Cx {
            src: code.as_bytes(),
            base: unit.start,
            pin: None,
        };
        self.root_unit = install::insists_on_root(code);
        self.run_code(cx, hits);
    }

    fn run_code(&mut self, cx: Cx, hits: &mut Hits) {
        let spread = spread_brace_lists(cx.src);
        let cx = Cx {
            src: spread.as_deref().unwrap_or(cx.src),
            ..cx
        };
        let Some(tree) = self.parse(cx.src) else {
            self.limit(
                hits,
                cx.base,
                "shell the parser gave up on: not flow-analysed",
            );
            return;
        };
        let mut run = Run {
            me: self,
            hits,
            piped_in: Taint::default(),
            heredoc_text: None,
            printed: None,
        };
        run.stmt(cx, tree.root_node(), Taint::default(), 0);
    }

    /// The tree of `src`, or `None` past the parser's budget.
    fn parse(&mut self, src: &[u8]) -> Option<Tree> {
        let parser = self.parser.as_mut()?;
        parser.reset();
        let budget = MIN_PARSE_CHECKS.max(src.len() / 1024 * PARSE_CHECKS_PER_KIB);
        let mut checks = 0usize;
        let mut progress = |_: &tree_sitter::ParseState| {
            checks += 1;
            if checks > budget {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = ParseOptions::new().progress_callback(&mut progress);
        let mut read = |at: usize, _| src.get(at..).unwrap_or(&[]);
        parser.parse_with_options(&mut read, None, Some(options))
    }

    fn limit(&mut self, hits: &mut Hits, at: usize, why: &str) {
        if !self.limited {
            self.limited = true;
            hits.limit(at, why);
        }
    }

    /// The taint of the file `raw` names: written earlier, under a tainted
    /// folder, or relative inside one.
    fn path_taint(&self, raw: &str) -> Taint {
        let p = normalize(raw);
        if let Some(t) = self.files.get(&p) {
            return *t;
        }
        let glob = paths::basename(&p).contains(['*', '?']);
        let held = if glob {
            self.files_under(&p)
        } else {
            Taint::default()
        };
        if !held.is_clean() {
            return held;
        }
        for (dir, t) in &self.dirs {
            let inside = p
                .strip_prefix(dir.as_str())
                .is_some_and(|r| r.starts_with('/'));
            if p == *dir || inside || stem_of(&p, dir) {
                return *t;
            }
        }
        // Relative, and a file name (not `pty:true`, `KEY=value`).
        let relative = !p.starts_with(['/', '~', '$']) && !p.contains([':', '=']);
        if relative && !self.cwd.is_clean() {
            return self.cwd;
        }
        self.bases
            .get(paths::basename(&p))
            .copied()
            .unwrap_or_default()
    }

    /// What the files written inside folder `p` hold, or, for a glob
    /// (`DIR/*`, `DIR/*.db`), inside its folder.
    pub(super) fn files_under(&self, p: &str) -> Taint {
        let dir = match p.rsplit_once('/') {
            Some((d, last)) if last.contains(['*', '?']) => d,
            _ => p,
        };
        let prefix = format!("{dir}/");
        self.files
            .iter()
            .filter(|(f, _)| f.as_str() == dir || f.starts_with(&prefix))
            .fold(Taint::default(), |t, (_, v)| t.union(*v))
    }

    /// `raw` now holds data with `taint` (clean data overwrites).
    fn write_file(&mut self, raw: &str, taint: Taint) {
        let p = normalize(raw);
        if p == "/dev/null" || p.starts_with("/dev/") {
            return;
        }
        let base = paths::basename(&p).to_owned();
        self.note_write(&p, taint);
        if taint.is_clean() {
            self.files.remove(&p);
            self.bases.remove(&base);
        } else {
            self.files.insert(p, taint);
            self.bases.insert(base, taint);
        }
    }

    /// Queues `code` for `lang`'s engine (bounded like nested shell).
    fn embed(&mut self, lang: Lang, code: String, span: (usize, usize)) {
        let room = MAX_PARSE_BYTES.saturating_sub(self.parsed);
        if !code.trim().is_empty() && code.len() <= room {
            self.parsed += code.len();
            self.embedded.push(Embedded { lang, code, span });
        }
    }

    /// The characters fields split at: `IFS` as the skill set it (its
    /// literal text), else space, tab and newline.
    fn ifs(&self) -> &str {
        match self.vars.get("IFS") {
            Some(v) if !v.text.is_empty() && !v.text.starts_with('$') => &v.text,
            _ => " \t\n",
        }
    }

    fn taint_dir(&mut self, raw: &str, taint: Taint) {
        if !taint.is_clean() {
            let p = normalize(raw);
            self.note_write(&p, taint);
            self.dirs.push((p, taint));
        }
    }
}

/// Whether the relative path `p` starts with a name that `dir` (an
/// archive's stem, `tool-1.2-linux`) begins with at a separator: what
/// `./tool` after extracting `tool-1.2-linux.tar.gz` runs.
fn stem_of(p: &str, dir: &str) -> bool {
    let first = p.split('/').next().unwrap_or(p);
    !first.is_empty()
        && !p.starts_with(['/', '~', '$'])
        && dir
            .strip_prefix(first)
            .is_some_and(|rest| rest.starts_with(['-', '_', '.']))
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// One walk of a tree, with the hits it reports into.
struct Run<'a, 't> {
    me: &'a mut Interpreter<'t>,
    hits: &'a mut Hits,
    /// The stdin of the command being run.
    piped_in: Taint,
    /// The text of the here-document the statement being run reads.
    heredoc_text: Option<String>,
    /// The text the command just run printed, when known (`printf`,
    /// `echo`, `cat <<EOF`).
    printed: Option<String>,
}

impl Run<'_, '_> {
    /// Whether the walk may go on at `depth`; reports the first refusal.
    fn may_enter(&mut self, cx: Cx, node: Node, depth: usize) -> bool {
        self.me.steps += 1;
        if depth <= MAX_DEPTH && self.me.steps <= MAX_STEPS {
            return true;
        }
        let at = cx.base + node.start_byte();
        self.me.limit(
            self.hits,
            at,
            "shell nested or long past the flow analysis' bounds",
        );
        false
    }

    /// Runs a statement with `stdin`; gives the taint of its stdout.
    fn stmt(&mut self, cx: Cx, node: Node, stdin: Taint, depth: usize) -> Taint {
        if !self.may_enter(cx, node, depth) {
            return Taint::default();
        }
        match node.kind() {
            "command" => self.command(cx, node, stdin, depth),
            "pipeline" => self.pipeline(cx, node, stdin, depth),
            "redirected_statement" => self.redirected(cx, node, stdin, depth),
            "variable_assignment" => {
                self.assign(cx, node, depth);
                Taint::default()
            }
            "function_definition" => {
                self.define(cx, node);
                Taint::default()
            }
            "for_statement" => self.for_loop(cx, node, stdin, depth),
            "comment" | "heredoc_body" => Taint::default(),
            _ => self.sequence(cx, node, stdin, depth),
        }
    }

    /// Each named child in turn, all with `stdin`; their stdouts together.
    fn sequence(&mut self, cx: Cx, node: Node, stdin: Taint, depth: usize) -> Taint {
        let mut out = Taint::default();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            out = out.union(self.stmt_or_word(cx, child, stdin, depth + 1));
        }
        out
    }

    /// A child of a compound: a statement, or a word (a `case` subject,
    /// a test's operands) whose substitutions run.
    fn stmt_or_word(&mut self, cx: Cx, node: Node, stdin: Taint, depth: usize) -> Taint {
        if is_word(node.kind()) {
            self.word(cx, node, depth);
            return Taint::default();
        }
        self.stmt(cx, node, stdin, depth)
    }

    fn pipeline(&mut self, cx: Cx, node: Node, stdin: Taint, depth: usize) -> Taint {
        let mut flow = stdin;
        let mut cursor = node.walk();
        let stages: Vec<Node> = node.named_children(&mut cursor).collect();
        for stage in stages {
            flow = self.stmt(cx, stage, flow, depth + 1);
        }
        flow
    }

    /// `X=…`: the variable holds the value's text and taint.
    fn assign(&mut self, cx: Cx, node: Node, depth: usize) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = cx.text(name).to_owned();
        let value = match node.child_by_field_name("value") {
            Some(v) => self.word(cx, v, depth + 1),
            None => Value::default(),
        };
        if RUNS_AT_START.contains(&name.as_str()) {
            // What the variable names (a file, a library, a command) runs
            // when the next shell, loader or program starts.
            let held = value.taint.union(self.me.path_taint(&value.text));
            self.exec(held, cx.span(node));
        }
        self.me.vars.insert(name, value);
    }

    /// `f() { …; }`: kept as text, run again at each call.
    fn define(&mut self, cx: Cx, node: Node) {
        let (Some(name), Some(body)) = (
            node.child_by_field_name("name"),
            node.child_by_field_name("body"),
        ) else {
            return;
        };
        let code = cx.text(body).to_owned();
        let at = cx.base + body.start_byte();
        self.me
            .functions
            .insert(cx.text(name).to_owned(), (code, at));
    }

    /// `for x in WORDS; do …; done`: `x` holds every word's taint.
    fn for_loop(&mut self, cx: Cx, node: Node, stdin: Taint, depth: usize) -> Taint {
        let mut cursor = node.walk();
        let values: Vec<Node> = node.children_by_field_name("value", &mut cursor).collect();
        let values: Vec<Value> = values
            .into_iter()
            .map(|v| self.word(cx, v, depth + 1))
            .collect();
        if let Some(var) = node.child_by_field_name("variable") {
            let value = self.loop_value(cx.text(var), values);
            self.me.vars.insert(cx.text(var).to_owned(), value);
        }
        match node.child_by_field_name("body") {
            Some(body) => self.stmt(cx, body, stdin, depth + 1),
            None => Taint::default(),
        }
    }

    /// What a loop variable stands for: every value's taint, and the text
    /// of the value that matters most (a secret store or a tainted file,
    /// else the only value), so that a read or run of `"$f"` in the body
    /// is judged as that iteration's.
    fn loop_value(&self, name: &str, values: Vec<Value>) -> Value {
        let taint = values
            .iter()
            .fold(Taint::default(), |t, v| t.union(v.taint));
        let weighty =
            |v: &&Value| paths::is_secret_path(&v.text) || !self.me.path_taint(&v.text).is_clean();
        let text = match values.iter().find(weighty) {
            Some(v) => v.text.clone(),
            None if values.len() == 1 => values[0].text.clone(),
            None => format!("${name}"),
        };
        Value { text, taint }
    }

    /// The value of a word: its text with known variables put in, and the
    /// taint of every variable and substitution in it.
    fn word(&mut self, cx: Cx, node: Node, depth: usize) -> Value {
        if !self.may_enter(cx, node, depth) {
            return Value::default();
        }
        match node.kind() {
            // An unquoted word's backslashes quote the next character
            // (`c\url` is `curl`); `$'…'` holds C escapes.
            "word" => literal(&unescape_word(cx.text(node))),
            "ansi_c_string" => literal(&ansi_c(cx.text(node))),
            "number" | "string_content" | "heredoc_content" => literal(cx.text(node)),
            "raw_string" => literal(cx.text(node).trim_matches('\'')),
            "simple_expansion" | "expansion" => self.expansion(cx, node),
            "command_substitution" => {
                let taint = self.sequence(cx, node, Taint::default(), depth + 1);
                // Unknown output is a name of its own (this substitution,
                // where it is): every use of a variable holding it names
                // the same file, and no other substitution's.
                let text =
                    printed(cx.text(node)).unwrap_or_else(|| format!("$(…@{})", cx.span(node).0));
                Value { text, taint }
            }
            "process_substitution" => {
                let taint = self.sequence(cx, node, Taint::default(), depth + 1);
                Value {
                    text: "/dev/fd/63".into(),
                    taint,
                }
            }
            "arithmetic_expansion" => literal("0"),
            _ => self.concatenation(cx, node, depth),
        }
    }

    /// A string or a concatenation: its parts' values joined.
    fn concatenation(&mut self, cx: Cx, node: Node, depth: usize) -> Value {
        let mut out = Value::default();
        let mut cursor = node.walk();
        let parts: Vec<Node> = node.named_children(&mut cursor).collect();
        if parts.is_empty() {
            return literal(cx.text(node).trim_matches('"'));
        }
        let unquoted = node.kind() == "concatenation";
        for part in parts {
            let mut v = self.word(cx, part, depth + 1);
            if unquoted && matches!(part.kind(), "simple_expansion" | "expansion") {
                v.text = v.text.replace([' ', '\t', '\n'], &FIELD_BREAK.to_string());
            }
            out.text.push_str(&v.text);
            out.taint = out.taint.union(v.taint);
        }
        out
    }

    /// `$X`, `${X}`, `${X:-…}`: the variable's value; an unknown one named
    /// like a cloud key or a private key is a secret.
    fn expansion(&mut self, cx: Cx, node: Node) -> Value {
        let mut cursor = node.walk();
        let name = node
            .named_children(&mut cursor)
            .find(|c| matches!(c.kind(), "variable_name" | "special_variable_name"))
            .map(|c| cx.text(c).to_owned())
            .unwrap_or_default();
        let value = self.var_value(&name, cx.span(node).0);
        if self.me.vars.contains_key(&name) {
            return value;
        }
        // Unset, `${X:-WORD}` and `${X-WORD}` are WORD: read it too.
        let raw = cx.text(node);
        let default = raw.contains(":-") || raw.starts_with(&format!("${{{name}-"));
        let mut cursor = node.walk();
        let words: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| !matches!(c.kind(), "variable_name" | "special_variable_name"))
            .collect();
        if !default || words.is_empty() {
            return value;
        }
        let mut out = Value::default();
        for w in words {
            let v = self.word(cx, w, 1);
            out.text.push_str(&v.text);
            out.taint = out.taint.union(v.taint);
        }
        out.taint = out.taint.union(value.taint);
        out
    }

    /// What `$name` holds, read at byte `at`: its value if assigned, else
    /// its name, a secret if it names one.
    pub(super) fn var_value(&self, name: &str, at: usize) -> Value {
        if let Some(v) = self.me.vars.get(name) {
            return v.clone();
        }
        if name == "IFS" {
            // Unset, IFS splits at blanks.
            return literal(" ");
        }
        let taint = if paths::is_secret_var(name) {
            Taint::new(Taint::SECRET, at)
        } else {
            Taint::default()
        };
        Value {
            text: format!("${name}"),
            taint,
        }
    }
}

/// What `$(printf 'FORMAT')` prints when FORMAT is one quoted literal
/// with no conversion: its escapes (`\143`, `\x63`) decoded.
fn printed(subst: &str) -> Option<String> {
    let inner = subst.strip_prefix("$(")?.strip_suffix(')')?.trim();
    let arg = inner.strip_prefix("printf")?.trim_start();
    let q = arg.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let body = arg.strip_prefix(q)?.strip_suffix(q)?;
    if body.contains(['%', '$', '`', q]) {
        return None;
    }
    Some(unescape(body))
}

/// `printf`'s backslash escapes: octal `\NNN`, hex `\xHH`, `\n`, `\t`.
fn unescape(body: &str) -> String {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let (radix, max) = match chars.peek() {
            Some('x') => {
                chars.next();
                (16, 2)
            }
            Some(d) if d.is_digit(8) => (8, 3),
            Some('n') => {
                chars.next();
                out.push('\n');
                continue;
            }
            Some('t') => {
                chars.next();
                out.push('\t');
                continue;
            }
            _ => {
                out.push(c);
                continue;
            }
        };
        let mut code = 0u32;
        for _ in 0..max {
            match chars.peek().and_then(|d| d.to_digit(radix)) {
                Some(v) => {
                    code = code * radix + v;
                    chars.next();
                }
                None => break,
            }
        }
        out.extend(char::from_u32(code));
    }
    out
}

/// An unquoted word as the shell reads it: each `\` dropped and the
/// character after it kept.
fn unescape_word(text: &str) -> String {
    if !text.contains('\\') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// The text of a `$'…'` string: `\xHH`, `\NNN`, `\uHHHH`, `\n`, `\t`
/// and the escaped quote and backslash undone (others kept as written).
fn ansi_c(text: &str) -> String {
    let body = text
        .strip_prefix("$'")
        .unwrap_or(text)
        .trim_end_matches('\'');
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let esc = &rest[i + 1..];
        let (c, used) = ansi_escape(esc);
        out.extend(c);
        rest = &esc[used.min(esc.len())..];
    }
    out.push_str(rest);
    out
}

/// One escape after a `\`: the character and how many bytes it used.
fn ansi_escape(esc: &str) -> (Option<char>, usize) {
    let hex = |n: usize, skip: usize| {
        let digits: String = esc[skip..]
            .chars()
            .take(n)
            .take_while(char::is_ascii_hexdigit)
            .collect();
        let c = u32::from_str_radix(&digits, 16)
            .ok()
            .and_then(char::from_u32);
        (c, skip + digits.len())
    };
    match esc.chars().next() {
        Some('x') => hex(2, 1),
        Some('u') => hex(4, 1),
        Some('U') => hex(8, 1),
        Some('0'..='7') => {
            let digits: String = esc
                .chars()
                .take(3)
                .take_while(|c| ('0'..='7').contains(c))
                .collect();
            let c = u32::from_str_radix(&digits, 8)
                .ok()
                .and_then(char::from_u32);
            (c, digits.len())
        }
        Some('n') => (Some('\n'), 1),
        Some('t') => (Some('\t'), 1),
        Some(c) => (Some(c), c.len_utf8()),
        None => (Some('\\'), 0),
    }
}

fn literal(text: &str) -> Value {
    Value {
        text: text.to_owned(),
        taint: Taint::default(),
    }
}

fn is_word(kind: &str) -> bool {
    matches!(
        kind,
        "word"
            | "string"
            | "raw_string"
            | "concatenation"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "number"
            | "ansi_c_string"
    )
}

/// `src` with each brace list that stands as a whole word (`{curl,-fsSL,URL}`)
/// written as the words bash expands it to, the braces and commas made
/// blanks so that every byte keeps its place; `None` when there is none.
/// tree-sitter-bash reads `{a,b}|{c,d}` as an error; bash runs `a b | c d`.
fn spread_brace_lists(src: &[u8]) -> Option<Vec<u8>> {
    const MAX_LIST: usize = 512;
    let starts_word = |i: usize| i == 0 || b" \t\n|;&(".contains(&src[i - 1]);
    let ends_word = |i: usize| src.get(i).is_none_or(|b| b" \t\r\n|;&)<>".contains(b));
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while let Some(open) = src[i..].iter().position(|&b| b == b'{').map(|p| i + p) {
        i = open + 1;
        if !starts_word(open) {
            continue;
        }
        let rest = &src[open + 1..src.len().min(open + 1 + MAX_LIST)];
        let Some(len) = rest.iter().position(|&b| b == b'}') else {
            continue;
        };
        let inner = &rest[..len];
        let plain = !inner.iter().any(|b| b" \t\r\n{\"'$`\\".contains(b));
        if plain && inner.contains(&b',') && ends_word(open + 1 + len + 1) {
            let buf = out.get_or_insert_with(|| src.to_vec());
            buf[open] = b' ';
            buf[open + 1 + len] = b' ';
            for b in &mut buf[open + 1..open + 1 + len] {
                if *b == b',' {
                    *b = b' ';
                }
            }
            i = open + 1 + len + 1;
        }
    }
    out
}
