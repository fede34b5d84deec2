//! Token-level flow for Python, JavaScript and PowerShell: the taint model
//! of the shell interpreter over a token stream. A statement (a line, or
//! more while brackets are open) binds names (`x = …`, `with … as x`,
//! callback parameters) to the taint of what it reads, writes files
//! (`open(F, 'wb')`, `writeFileSync`, `-OutFile`), and calls sinks; a sink
//! reached by fetched data runs it, one reached by a secret sends it.

use std::collections::HashMap;

mod bindings;
mod endpoint;
mod functions;
mod rewrite;
mod tables;

use super::super::vendors::vendor_of;
use super::blocks::Unit;
use super::paths::{self, is_secret_path, is_secret_var};
use super::shell::Embedded;
use super::tokens::{Kind, Token, tokenize};
use super::{Hits, Lang, Taint};
use tables::{Table, table};

/// Bytes of one language's code read from one file.
const MAX_SCRIPT_BYTES: usize = 1 << 20;
/// Tokens of one statement: a longer one is read in pieces, so no
/// statement costs more than this squared.
const MAX_STATEMENT_TOKENS: usize = 2048;

/// What one language's names hold in one file.
#[derive(Default)]
struct State {
    vars: HashMap<String, Taint>,
    literals: HashMap<String, String>,
    /// Files by their last path part.
    files: HashMap<String, Taint>,
    /// Names bound to a file open for writing, and its path.
    handles: HashMap<String, String>,
    /// Functions defined: their parameters and what they return.
    funcs: HashMap<String, functions::Func>,
    /// The function whose body is being read.
    current: Option<String>,
    /// JavaScript: braces open before this statement, and the functions
    /// being read with the depth their bodies close back to.
    braces: i32,
    open_funcs: Vec<(String, i32)>,
    /// Names bound to a module (`cp = require('child_process')`, `import
    /// subprocess as sp`): a call through one is the module's.
    modules: HashMap<String, Vec<String>>,
    /// What the process's own stdin and stdout were made (`os.dup2` of a
    /// connected socket onto 0 or 1): every program it starts reads it.
    stdio: Taint,
    read: usize,
    limited: bool,
}

pub(crate) struct Engines<'t> {
    text: &'t str,
    states: HashMap<Lang, State>,
}

impl<'t> Engines<'t> {
    pub fn new(text: &'t str) -> Self {
        Engines {
            text,
            states: HashMap::new(),
        }
    }

    /// Reads one script or block, in the state its language's earlier
    /// ones left.
    pub fn run_unit(&mut self, lang: Lang, unit: &Unit, hits: &mut Hits) {
        let state = self.states.entry(lang).or_default();
        let room = MAX_SCRIPT_BYTES.saturating_sub(state.read);
        let mut end = unit.code.len().min(room);
        while !unit.code.is_char_boundary(end) {
            end -= 1;
        }
        state.read += end;
        if end < unit.code.len() && !state.limited {
            state.limited = true;
            hits.limit(unit.start + end, "script past 1 MiB not flow-analysed");
        }
        let code = &unit.code[..end];
        let tokens = rewrite::rewrite(lang, tokenize(lang, code));
        let stmts = statements(&tokens, lang);
        // Twice: a call read before its function's body is known, or a
        // parameter given data by a later call, is read again.
        for _ in 0..2 {
            for stmt in &stmts {
                let mut s = Stmt {
                    toks: stmt,
                    base: unit.start,
                    lang,
                    table: table(lang),
                    state: &mut *state,
                    text: self.text,
                    hits: &mut *hits,
                };
                s.enter(column(code, stmt));
                s.bind();
                s.sinks();
            }
            state.current = None;
            state.braces = 0;
            state.open_funcs.clear();
        }
    }
}

impl Engines<'_> {
    /// Reads code a shell command hands its interpreter; what it finds
    /// is reported at that command.
    pub fn run_embedded(&mut self, e: &Embedded, hits: &mut Hits) {
        let before = hits.list.len();
        let unit = Unit {
            lang: e.lang,
            start: e.span.0,
            code: e.code.clone(),
        };
        self.run_unit(e.lang, &unit, hits);
        for h in hits.list.iter_mut().skip(before) {
            (h.start, h.end) = e.span;
            h.origin = h.origin.min(e.span.1);
        }
    }
}

/// The column of a statement's first token in `code`.
fn column(code: &str, stmt: &[Token]) -> usize {
    let at = stmt.first().map_or(0, |t| t.at).min(code.len());
    let line_start = code
        .get(..at)
        .and_then(|c| c.rfind('\n'))
        .map_or(0, |n| n + 1);
    at - line_start
}

/// The statements of a token stream: split at line ends and `;` outside
/// brackets (a JavaScript line starting with `.` goes on the one before).
fn statements(tokens: &[Token], lang: Lang) -> Vec<&[Token]> {
    let mut out = Vec::new();
    let (mut start, mut depth) = (0usize, 0i32);
    // Each open `{`: whether it opens a literal (a dict or object spread
    // over lines is one statement; a block's body is not).
    let mut braces: Vec<bool> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let punct = t.kind == Kind::Punct;
        match t.text.as_str() {
            "(" | "[" => depth += 1,
            ")" | "]" => depth = (depth - 1).max(0),
            "{" if punct => {
                let literal = opens_literal(tokens, i, lang);
                braces.push(literal);
                depth += i32::from(literal);
            }
            "}" if punct && braces.pop() == Some(true) => depth = (depth - 1).max(0),
            _ => {}
        }
        let ends = (t.kind == Kind::Newline || t.text == ";") && t.kind != Kind::Str;
        let chained = lang == Lang::JavaScript
            && tokens[i + 1..]
                .iter()
                .find(|n| n.kind != Kind::Newline)
                .is_some_and(|n| n.text == ".");
        if (ends && depth == 0 && !chained) || i - start >= MAX_STATEMENT_TOKENS {
            if i > start {
                out.push(&tokens[start..i]);
            }
            start = i + 1;
        }
    }
    if start < tokens.len() {
        out.push(&tokens[start..]);
    }
    out
}

/// Whether the `{` at `i` opens a dict or object literal: Python's
/// always do; elsewhere one after `=`, `(`, `,`, `:`, `[` or `return`.
fn opens_literal(tokens: &[Token], i: usize, lang: Lang) -> bool {
    if lang == Lang::Python {
        return true;
    }
    let prev = tokens[..i].iter().rev().find(|t| t.kind != Kind::Newline);
    prev.is_some_and(|p| {
        let text = p.text.as_str();
        (p.kind == Kind::Punct && ["=", "(", ",", ":", "["].contains(&text))
            || (p.kind == Kind::Ident && text == "return")
    })
}

/// One statement being read.
struct Stmt<'a> {
    toks: &'a [Token],
    base: usize,
    lang: Lang,
    table: &'static Table,
    state: &'a mut State,
    text: &'a str,
    hits: &'a mut Hits,
}

/// A call: where its callee starts, its callee's parts, its arguments.
struct Call {
    start: usize,
    chain: Vec<String>,
    args: std::ops::Range<usize>,
}

impl Stmt<'_> {
    fn is(&self, i: usize, text: &str) -> bool {
        self.toks
            .get(i)
            .is_some_and(|t| t.kind != Kind::Str && t.text == text)
    }

    fn at(&self, i: usize) -> usize {
        self.base + self.toks.get(i).map_or(0, |t| t.at)
    }

    /// Names bound by the statement, left to right, and files it writes.
    fn bind(&mut self) {
        for i in 0..self.toks.len() {
            if self.is_assignment(i) {
                self.assign(i);
            }
            if self.is(i, "as") && self.toks.get(i + 1).is_some_and(|t| t.kind == Kind::Ident) {
                let name = self.toks[i + 1].text.clone();
                let t = self.taint_of(0..i);
                self.note_handle(&name, 0..i);
                self.set(name, t);
            }
            if self.is(i, "=") && self.is(i + 1, ">") {
                self.bind_params(i);
            }
        }
        self.bind_loop();
        self.note_modules();
        self.absorb();
        if self.lang == Lang::PowerShell
            && let Some(pipe) = (0..self.toks.len()).find(|&i| self.is(i, "|"))
        {
            let t = self.taint_of(0..pipe);
            self.set("$_".into(), t);
        }
        self.writes();
    }

    /// `for x in XS:`, `for (const x of XS)`, `foreach ($x in $XS)`,
    /// PHP's `foreach ($XS as $k => $v)`: the loop's names hold what XS
    /// reads.
    fn bind_loop(&mut self) {
        let keyword = |i: usize| self.is(i, "for") || self.is(i, "foreach");
        let Some(k) = (0..self.toks.len().min(3)).find(|&i| keyword(i)) else {
            return;
        };
        let sep = (k + 1..self.toks.len())
            .find(|&i| self.is(i, "in") || self.is(i, "of") || self.is(i, "as"));
        let Some(sep) = sep else {
            return;
        };
        if self.is(sep, "as") {
            let end = (sep + 1..self.toks.len())
                .find(|&i| self.is(i, ")"))
                .unwrap_or(self.toks.len());
            let t = self.taint_of(k + 1..sep);
            for i in sep + 1..end {
                if self.toks[i].kind == Kind::Ident {
                    self.set(self.toks[i].text.clone(), t);
                }
            }
            return;
        }
        let end = (sep + 1..self.toks.len())
            .find(|&i| self.is(i, ":") || self.is(i, "{"))
            .unwrap_or(self.toks.len());
        let t = self.taint_of(sep + 1..end);
        for i in k + 1..sep {
            let tok = &self.toks[i];
            if tok.kind == Kind::Ident && !["const", "let", "var"].contains(&tok.text.as_str()) {
                let name = tok.text.clone();
                self.set(name, t);
            }
        }
    }

    /// Whether token `i` is an assignment's `=` (`=`, `+=`, `:=`; not
    /// `==`, `=>`, `<=`, a keyword argument `f(x=1)`).
    fn is_assignment(&self, i: usize) -> bool {
        if !self.is(i, "=") {
            return false;
        }
        let prev = i.checked_sub(1).map_or("", |p| self.toks[p].text.as_str());
        let next = self.toks.get(i + 1).map_or("", |n| n.text.as_str());
        let lhs = self.lhs_start(i);
        // `(body += c)` in an arrow's body is an assignment all the same.
        let compound = matches!(prev, "+" | "-" | "|" | "*");
        let keyword_arg = !compound
            && ((lhs > 0 && (self.is(lhs - 1, "(") || self.is(lhs - 1, ",")))
                || self.keyword_in_call(i));
        !matches!(prev, "=" | "<" | ">" | "!") && !matches!(next, "=" | ">") && !keyword_arg
    }

    /// `f(a, key=v)`: a name right after `(` or `,` inside an open `(`,
    /// whatever the arguments before it (`lhs_start` walks back over commas).
    fn keyword_in_call(&self, eq: usize) -> bool {
        let named = eq >= 2
            && self.toks[eq - 1].kind == Kind::Ident
            && (self.is(eq - 2, "(") || self.is(eq - 2, ","));
        named && self.innermost_open(eq) == Some("(")
    }

    /// The innermost bracket still open at token `at`.
    fn innermost_open(&self, at: usize) -> Option<&str> {
        let mut depth = 0i32;
        for t in self.toks[..at].iter().rev() {
            if t.kind != Kind::Punct {
                continue;
            }
            match t.text.as_str() {
                ")" | "]" | "}" => depth += 1,
                "(" | "[" | "{" if depth == 0 => return Some(t.text.as_str()),
                "(" | "[" | "{" => depth -= 1,
                _ => {}
            }
        }
        None
    }

    /// Where the target of the assignment at `eq` starts.
    fn lhs_start(&self, eq: usize) -> usize {
        let mut j = eq;
        // Brackets closed between here and `eq`: a subscript's every
        // token (`x[m[1]]`, `x["key"]`) is part of the target.
        let mut depth = 0usize;
        while j > 0 {
            let t = &self.toks[j - 1];
            if t.kind == Kind::Newline {
                break;
            }
            let punct = |p: &str| t.kind == Kind::Punct && t.text == p;
            if punct("]") {
                depth += 1;
            } else if punct("[") {
                depth = depth.saturating_sub(1);
            } else if depth == 0 {
                let part = t.kind == Kind::Ident
                    || [".", ",", "+", "|", ":", "$"].contains(&t.text.as_str());
                if !part {
                    break;
                }
            }
            j -= 1;
        }
        j
    }

    /// Where the value assigned at `eq` ends: a line end, `;` or closing
    /// bracket outside the brackets it opens.
    fn rhs_end(&self, eq: usize) -> usize {
        let mut depth = 0i32;
        for j in eq + 1..self.toks.len() {
            let t = &self.toks[j];
            match t.text.as_str() {
                "(" | "[" | "{" if t.kind == Kind::Punct => depth += 1,
                ")" | "]" | "}" if t.kind == Kind::Punct => {
                    depth -= 1;
                    if depth < 0 {
                        return j;
                    }
                }
                ";" if t.kind == Kind::Punct && depth == 0 => return j,
                _ if t.kind == Kind::Newline && depth == 0 => return j,
                _ => {}
            }
        }
        self.toks.len()
    }

    fn assign(&mut self, eq: usize) {
        let compound = eq > 0 && matches!(self.toks[eq - 1].text.as_str(), "+" | "|");
        let rhs = eq + 1..self.rhs_end(eq);
        let t = self.taint_of(rhs.clone());
        let literal = match &self.toks[rhs.clone()] {
            [one] if one.kind == Kind::Str => Some(one.text.clone()),
            _ => None,
        };
        for i in self.lhs_start(eq)..eq {
            let tok = &self.toks[i];
            let attribute = i > 0 && self.is(i - 1, ".");
            let followed = self.is(i + 1, "(") || self.is(i + 1, "]");
            if tok.kind != Kind::Ident
                || followed
                || attribute
                || KEYWORDS.contains(&tok.text.as_str())
            {
                continue;
            }
            let name = tok.text.clone();
            let old = self.state.vars.get(&name).copied().unwrap_or_default();
            // `x[k] = v`, `x.k = v` set one part: `x` keeps what it held.
            let element = self.is(i + 1, "[") || self.is(i + 1, ".");
            self.set(
                name.clone(),
                if compound || element { old.union(t) } else { t },
            );
            if let Some(l) = &literal {
                self.state.literals.insert(name.clone(), l.clone());
            }
            self.note_handle(&name, rhs.clone());
        }
    }

    fn set(&mut self, name: String, t: Taint) {
        if t.is_clean() {
            self.state.vars.remove(&name);
        } else {
            self.state.vars.insert(name, t);
        }
    }

    /// `(a, b) => …`, `x => …`: the parameters hold what the statement
    /// read before them (a response, its chunks).
    fn bind_params(&mut self, arrow: usize) {
        let mut params = Vec::new();
        let mut i = arrow;
        if i > 0 && self.is(i - 1, ")") {
            i -= 1;
            while i > 0 && !self.is(i - 1, "(") {
                i -= 1;
                if self.toks[i].kind == Kind::Ident {
                    params.push(self.toks[i].text.clone());
                }
            }
            i = i.saturating_sub(1);
        } else if i > 0 && self.toks[i - 1].kind == Kind::Ident {
            i -= 1;
            params.push(self.toks[i].text.clone());
        }
        let t = self.taint_of(0..i);
        for p in params {
            self.set(p, t);
        }
    }

    /// Files written by a call of `writes`, a handle's `.write(…)`, or a
    /// PowerShell `-OutFile PATH`.
    fn writes(&mut self) {
        for call in self.calls(0..self.toks.len()) {
            let args = self.split_args(call.args.clone());
            let data = self.taint_of(call.args.clone());
            let receiver = call
                .chain
                .len()
                .checked_sub(2)
                .map(|i| call.chain[i].clone());
            let last = call.chain.last().cloned().unwrap_or_default();
            // `path.write_bytes(data)`: the receiver names the file.
            if matches!(last.as_str(), "write_bytes" | "write_text")
                && let Some(r) = receiver.clone()
            {
                let path = self.state.literals.get(&r).cloned();
                self.write_file(&path.unwrap_or_else(|| format!("var:{r}")), data);
            }
            if matches!(last.as_str(), "write" | "pipe")
                && let Some(path) = receiver.and_then(|r| self.state.handles.get(&r).cloned())
            {
                self.write_file(&path, data);
            }
            if let Some((path, t)) = self.chained_write(&call) {
                self.write_file(&path, t);
            }
            for &(callee, path_arg, data_arg) in self.table.writes {
                if !matches(&call.chain, callee) {
                    continue;
                }
                let Some(path) = args.get(path_arg).and_then(|a| self.path_of(a.clone())) else {
                    continue;
                };
                let t = match data_arg {
                    Some(d) => args
                        .get(d)
                        .map_or(Taint::default(), |a| self.taint_of(a.clone())),
                    None => self.fetched(call.start),
                };
                self.write_file(&path, t);
            }
        }
        for i in 0..self.toks.len() {
            if self.lang == Lang::PowerShell
                && self.is(i, "-")
                && self.is(i + 1, "outfile")
                && let Some(path) = self.path_of(i + 2..i + 3)
            {
                let t = self.taint_of(0..i);
                self.write_file(&path, t);
            }
        }
    }

    fn write_file(&mut self, path: &str, t: Taint) {
        let key = paths::basename(path).to_ascii_lowercase();
        if !t.is_clean() {
            self.state.files.insert(key, t);
        }
    }

    /// A path argument: a string's text or a variable's literal value.
    fn path_of(&self, range: std::ops::Range<usize>) -> Option<String> {
        let toks = self.toks.get(range)?;
        let t = toks.iter().rev().find(|t| t.kind != Kind::Punct)?;
        match t.kind {
            Kind::Str => Some(t.text.clone()),
            // A path held in a variable of unknown text: keyed by its name.
            _ => Some(
                self.state
                    .literals
                    .get(&t.text)
                    .cloned()
                    .unwrap_or_else(|| format!("var:{}", t.text)),
            ),
        }
    }

    /// Sinks: code run, commands run, data sent.
    fn sinks(&mut self) {
        for call in self.calls(0..self.toks.len()) {
            let mut t = self.taint_of(call.args.clone());
            if self.lang == Lang::PowerShell && call.start > 0 && self.is(call.start - 1, "|") {
                t = t.union(self.taint_of(0..call.start - 1));
            }
            let span = (
                self.at(call.start),
                self.at(call.args.end.min(self.toks.len().saturating_sub(1))) + 1,
            );
            if self.table.exec.iter().any(|p| matches(&call.chain, p)) {
                let code = self.code_args_taint(&call).union(self.state.stdio);
                let t = if self.lang == Lang::PowerShell {
                    t
                } else {
                    code
                };
                self.hits.exec(self.text, t, span);
            }
            if self.table.send.iter().any(|p| matches(&call.chain, p))
                || self.unvetted_endpoint(&call)
            {
                self.hits.send(self.text, t, span);
            }
        }
        if self.lang == Lang::PowerShell {
            self.call_operator();
        }
    }

    /// What a run call's arguments hold, leaving out the keyword
    /// arguments that set where and with which variables it runs
    /// (`env=`, `cwd=`): a token in the child's environment is not code.
    fn code_args_taint(&self, call: &Call) -> Taint {
        let mut t = Taint::default();
        for arg in self.split_args(call.args.clone()) {
            let setting =
                ["env", "cwd"].iter().any(|k| self.is(arg.start, k)) && self.is(arg.start + 1, "=");
            if !setting {
                t = t.union(self.taint_of(arg));
            }
        }
        t
    }

    /// PowerShell's `& $file` and `. $file` at a statement's start.
    fn call_operator(&mut self) {
        for i in 0..self.toks.len() {
            let op = self.is(i, "&") || (i == 0 && self.is(i, "."));
            if op && i + 1 < self.toks.len() {
                let t = self.taint_of(i + 1..i + 2);
                let span = (self.at(i), self.at(self.toks.len() - 1) + 1);
                self.hits.exec(self.text, t, span);
            }
        }
    }

    /// The calls in `range`: `callee(…)`, and PowerShell commands
    /// (`Invoke-Expression $x`, `… | iex`) whose arguments run to a `|`.
    fn calls(&self, range: std::ops::Range<usize>) -> Vec<Call> {
        let mut out = Vec::new();
        for i in range.clone() {
            if self.toks[i].kind != Kind::Ident {
                continue;
            }
            if self.is(i + 1, "(") {
                let close = self.close_of(i + 1).min(range.end);
                out.push(Call {
                    start: self.chain_start(i),
                    chain: self.resolved(self.chain(i)),
                    args: i + 2..close,
                });
            } else if self.command_call(i) {
                let end = (i + 1..range.end)
                    .find(|&j| self.is(j, "|") || self.is(j, ")"))
                    .unwrap_or(range.end);
                out.push(Call {
                    start: i,
                    chain: vec![self.toks[i].text.clone()],
                    args: i + 1..end,
                });
            }
        }
        out
    }

    /// `chain` with a leading module alias put back as the module's path.
    fn resolved(&self, mut chain: Vec<String>) -> Vec<String> {
        if let Some(first) = chain.first()
            && let Some(module) = self.state.modules.get(first)
        {
            chain.splice(0..1, module.iter().cloned());
        }
        chain
    }

    /// A call without brackets: a PowerShell command, or a Perl, Ruby, PHP
    /// or Lua runner (`eval get(…)`, `system $cmd`, `include $f`) at a
    /// command's start.
    fn command_call(&self, i: usize) -> bool {
        match self.lang {
            Lang::PowerShell => self.command_position(i),
            Lang::Perl | Lang::Ruby | Lang::Php | Lang::Lua => {
                let bare = format!("={}", self.toks[i].text);
                self.table.exec.contains(&bare.as_str()) && self.command_position(i)
            }
            _ => false,
        }
    }

    fn command_position(&self, i: usize) -> bool {
        i == 0 || ["|", "=", "(", "{", ";"].iter().any(|p| self.is(i - 1, p))
    }

    /// The index of the `)` closing the `(` at `open`.
    fn close_of(&self, open: usize) -> usize {
        let mut depth = 0;
        for (j, t) in self.toks.iter().enumerate().skip(open) {
            match t.text.as_str() {
                "(" if t.kind == Kind::Punct => depth += 1,
                ")" if t.kind == Kind::Punct => {
                    depth -= 1;
                    if depth == 0 {
                        return j;
                    }
                }
                _ => {}
            }
        }
        self.toks.len()
    }

    /// The parts of the callee ending at `i`: `a.b.c`, `[T]::M`, `x).M`.
    fn chain(&self, i: usize) -> Vec<String> {
        let mut parts = vec![self.toks[i].text.clone()];
        let mut j = i;
        while j >= 2 && (self.is(j - 1, ".") || self.is(j - 1, ":")) {
            let mut k = j - 2;
            while k > 0 && (self.is(k, ":") || self.is(k, "]")) {
                k -= 1;
            }
            if self.toks[k].kind != Kind::Ident {
                break;
            }
            parts.insert(0, self.toks[k].text.clone());
            j = k;
        }
        // `require('https').get(`: a method of the module imported.
        if let Some(module) = self.imported_before(j) {
            parts.insert(0, module);
        } else if j >= 1 && self.is(j - 1, ".") {
            // `x).exec(`, `/re/.exec(`: a method, never the bare function.
            parts.insert(0, "?".into());
        }
        parts
    }

    /// The module of `require('M').` or `__import__('M').` right before
    /// the callee part at `j`.
    fn imported_before(&self, j: usize) -> Option<String> {
        let k = j.checked_sub(5)?;
        let importer = ["require", "__import__", "import"]
            .iter()
            .any(|f| self.is(k, f));
        let quoted = self.toks.get(k + 2).filter(|t| t.kind == Kind::Str)?;
        let shape = self.is(k + 1, "(") && self.is(k + 3, ")") && self.is(k + 4, ".");
        (importer && shape).then(|| {
            let m = quoted.text.strip_prefix("node:").unwrap_or(&quoted.text);
            m.to_owned()
        })
    }

    fn chain_start(&self, i: usize) -> usize {
        let n = self.chain(i).iter().filter(|p| *p != "?").count();
        let mut j = i;
        let mut seen = 1;
        while seen < n && j > 0 {
            j -= 1;
            if self.toks[j].kind == Kind::Ident {
                seen += 1;
            }
        }
        j
    }

    /// The arguments of a call, split at commas outside brackets.
    fn split_args(&self, range: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
        let mut out = Vec::new();
        let (mut start, mut depth) = (range.start, 0i32);
        for j in range.clone() {
            match self.toks[j].text.as_str() {
                "(" | "[" | "{" if self.toks[j].kind == Kind::Punct => depth += 1,
                ")" | "]" | "}" if self.toks[j].kind == Kind::Punct => depth -= 1,
                "," if depth == 0 && self.toks[j].kind == Kind::Punct => {
                    out.push(start..j);
                    start = j + 1;
                }
                _ => {}
            }
        }
        if start < range.end {
            out.push(start..range.end);
        }
        out
    }

    /// What the fetch whose callee is token `i` fetches: unvetted unless
    /// it names one URL only, a listed vendor's (as pipe-to-shell rates).
    fn fetched(&self, i: usize) -> Taint {
        let end = if self.is(i + 1, "(") {
            self.close_of(i + 1)
        } else {
            (i + 1..self.toks.len())
                .find(|&j| self.is(j, "|") || self.is(j, ")"))
                .unwrap_or(self.toks.len())
        };
        let from = self.at(i).min(self.text.len());
        let to = self.at(end.min(self.toks.len().saturating_sub(1))) + 1;
        let raw = self.text.get(from..to.min(self.text.len())).unwrap_or("");
        let urls = paths::urls_in(raw);
        let vetted = urls.len() == 1 && urls.iter().all(|u| vendor_of(u).is_some());
        let bits = if vetted {
            Taint::FETCHED
        } else {
            Taint::FETCHED | Taint::UNVETTED
        };
        Taint::new(bits, self.at(i))
    }

    /// What the tokens in `range` read: tainted names and files, fetches,
    /// secret stores, secret variables, the whole environment.
    fn taint_of(&self, range: std::ops::Range<usize>) -> Taint {
        let mut t = Taint::default();
        let end = range.end.min(self.toks.len());
        for i in range.start.min(end)..end {
            let tok = &self.toks[i];
            let secret = Taint::new(Taint::SECRET, self.at(i));
            match tok.kind {
                Kind::Ident => {
                    if let Some(v) = self.state.vars.get(&tok.text) {
                        t = t.union(*v);
                    }
                    if let Some(f) = self.file_named(&tok.text) {
                        t = t.union(f);
                    }
                    let name = tok.text.trim_start_matches("$env:");
                    if is_secret_var(name) || self.env_dump(i) {
                        t = t.union(secret);
                    }
                    // Called or passed on (`.apply`, `.map(String.fromCharCode)`).
                    if self.decodes(i) {
                        t = t.union(Taint::new(Taint::DECODED, self.at(i)));
                    }
                    if self.is(i + 1, "(") {
                        t = t.union(self.returned(&tok.text));
                        t = t.union(self.endpoint(i));
                        let chain = self.chain(i);
                        if self.table.fetch.iter().any(|p| matches(&chain, p)) {
                            t = t.union(self.fetched(i));
                        }
                        if self.table.secret.iter().any(|p| matches(&chain, p)) {
                            t = t.union(secret);
                        }
                    } else if self.lang == Lang::PowerShell && self.command_position(i) {
                        let command = tok.text.as_str();
                        if self.table.fetch.contains(&command) {
                            t = t.union(self.fetched(i));
                        }
                        if self.table.secret.contains(&command) {
                            t = t.union(secret);
                        }
                    }
                }
                Kind::Str => {
                    if is_secret_path(&tok.text) || is_secret_var(&tok.text) {
                        t = t.union(secret);
                    }
                    if let Some(f) = self
                        .state
                        .files
                        .get(&paths::basename(&tok.text).to_ascii_lowercase())
                    {
                        t = t.union(*f);
                    }
                }
                _ => {}
            }
        }
        t
    }

    /// Whether the call at token `i` decodes: a `decode` call, or
    /// `Buffer.from(x, 'base64')` (or `'hex'`).
    fn decodes(&self, i: usize) -> bool {
        let chain = self.chain(i);
        if self.table.decode.iter().any(|p| matches(&chain, p)) {
            return true;
        }
        matches(&chain, "Buffer.from") && self.is(i + 1, "(") && {
            let close = self.close_of(i + 1).min(self.toks.len());
            self.toks[i + 1..close].iter().any(|t| {
                t.kind == Kind::Str && matches!(t.text.as_str(), "base64" | "hex" | "base64url")
            })
        }
    }

    fn file_named(&self, ident: &str) -> Option<Taint> {
        let key = match self.state.literals.get(ident) {
            Some(path) => paths::basename(path).to_ascii_lowercase(),
            None => format!("var:{ident}").to_ascii_lowercase(),
        };
        self.state.files.get(&key).copied()
    }

    /// The whole environment read at token `i`: Python `os.environ` (not
    /// `os.environ[…]` or `.get`), JavaScript `process.env` (not
    /// `process.env.X`), PowerShell `env:` listed.
    fn env_dump(&self, i: usize) -> bool {
        let next_is = |s: &str| self.is(i + 1, s);
        let member = |s: &[&str]| self.is(i + 1, ".") && s.iter().any(|m| self.is(i + 2, m));
        match (self.lang, self.toks[i].text.as_str()) {
            (Lang::Python, "environ") => !next_is("[") && !member(&["get", "setdefault", "pop"]),
            (Lang::JavaScript, "env") => {
                i >= 2 && self.is(i - 2, "process") && !next_is(".") && !next_is("[")
            }
            (Lang::PowerShell, "env") => {
                next_is(":")
                    && i >= 1
                    && ["get-childitem", "gci", "dir", "ls"]
                        .iter()
                        .any(|c| self.is(i - 1, c))
            }
            _ => false,
        }
    }
}

/// Whether a callee's parts match a table pattern.
fn matches(chain: &[String], pattern: &str) -> bool {
    if let Some(bare) = pattern.strip_prefix('=') {
        return chain.len() == 1 && chain[0] == bare;
    }
    match pattern.split_once('.') {
        Some((a, b)) => {
            chain.len() >= 2 && chain[chain.len() - 2] == a && chain[chain.len() - 1] == b
        }
        None => chain.last().is_some_and(|l| l == pattern),
    }
}

const KEYWORDS: &[&str] = &[
    "const", "let", "var", "self", "this", "global", "nonlocal", "my", "await", "export",
];
