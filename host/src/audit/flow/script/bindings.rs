//! What a statement binds beyond assignments: module aliases,
//! containers that gather data, a process's stdio made a socket, and files
//! opened for writing.

use super::super::Taint;
use super::tables::ADDS;
use super::{Call, Stmt};
use crate::audit::flow::tokens::Kind;

impl Stmt<'_> {
    /// `X = require('M')`, `import X from 'M'`, `import * as X from 'M'`,
    /// `import M.N as X`, `from M import N as X`: X names the module.
    pub(super) fn note_modules(&mut self) {
        // `from M import …`: M, read once for the statement.
        let from = self.python_from_module();
        for i in 0..self.toks.len() {
            if let Some((name, module)) = self.module_binding(i, from.as_deref()) {
                let path = module
                    .trim_start_matches("node:")
                    .split(['.', '/'])
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect();
                self.state.modules.insert(name, path);
            }
        }
    }

    /// M of a Python `from M import …` statement.
    fn python_from_module(&self) -> Option<String> {
        if !self.is(0, "from") {
            return None;
        }
        let import = (1..self.toks.len()).find(|&j| self.is(j, "import"))?;
        self.dotted_before(import)
    }

    /// The name and module a binding at token `i` makes, if it is one.
    fn module_binding(&self, i: usize, from: Option<&str>) -> Option<(String, String)> {
        let ident = |j: usize| {
            self.toks
                .get(j)
                .filter(|t| t.kind == Kind::Ident)
                .map(|t| t.text.clone())
        };
        let string = |j: usize| {
            self.toks
                .get(j)
                .filter(|t| t.kind == Kind::Str)
                .map(|t| t.text.clone())
        };
        if self.is(i, "require") && self.is(i + 1, "(") && i >= 2 && self.is(i - 1, "=") {
            return Some((ident(i - 2)?, string(i + 2)?));
        }
        if self.is(i, "from") && i >= 1 {
            // `import X from 'M'`, `import * as X from 'M'` (JavaScript).
            if let Some(m) = string(i + 1) {
                return Some((ident(i - 1)?, m));
            }
        }
        // Python: `import M.N as X`; `from M import N as X` is M.N.
        if self.is(i, "as") && i >= 1 && (self.is(0, "import") || from.is_some()) {
            let name = ident(i + 1)?;
            let dotted = self.dotted_before(i)?;
            return Some(match from {
                Some(m) => (name, format!("{m}.{dotted}")),
                None => (name, dotted),
            });
        }
        None
    }

    /// The dotted name `a.b.c` that ends right before token `end`.
    fn dotted_before(&self, end: usize) -> Option<String> {
        let mut j = end.checked_sub(1)?;
        let mut parts = Vec::new();
        loop {
            let t = self.toks.get(j).filter(|t| t.kind == Kind::Ident)?;
            parts.push(t.text.as_str());
            if j >= 2 && self.is(j - 1, ".") {
                j -= 2;
            } else {
                break;
            }
        }
        parts.reverse();
        Some(parts.join("."))
    }

    /// `xs.push(d)`, `xs.append(d)`: a container a method adds data to
    /// holds it; `os.dup2(sock.fileno(), 0)`: the process's stdio holds
    /// what the descriptor reads.
    pub(super) fn absorb(&mut self) {
        for call in self.calls(0..self.toks.len()) {
            if let [recv, m] = call.chain.as_slice()
                && m == "connect"
                && call.args.start >= 2
            {
                // `s.connect((HOST, PORT))`: what `s` reads is fetched.
                let t = self.endpoint(call.args.start - 2);
                if !t.is_clean() {
                    let held = self.state.vars.get(recv).copied().unwrap_or_default();
                    self.set(recv.clone(), held.union(t));
                }
            }
            let t = self.taint_of(call.args.clone());
            if t.is_clean() {
                continue;
            }
            match call.chain.as_slice() {
                [recv, m] if adds(m) && recv != "?" => {
                    let held = self.state.vars.get(recv).copied().unwrap_or_default();
                    self.set(recv.clone(), held.union(t));
                }
                [f] if sets_handle(f) => self.fill_handle(&call),
                [.., m] if m == "dup2" && self.onto_stdio(&call) => {
                    let first = self.split_args(call.args.clone()).into_iter().next();
                    let t = first.map_or(t, |a| self.taint_of(a));
                    self.state.stdio = self.state.stdio.union(t);
                }
                _ => {}
            }
        }
    }

    /// `curl_setopt($ch, CURLOPT_POSTFIELDS, $post)`: the handle named
    /// first holds what the other arguments give it.
    fn fill_handle(&mut self, call: &Call) {
        let args = self.split_args(call.args.clone());
        let handle = args.first().and_then(|a| match &self.toks[a.clone()] {
            [h] | [_, h] if h.kind == Kind::Ident => Some(h.text.clone()),
            _ => None,
        });
        if let Some(h) = handle {
            let given = args[1..]
                .iter()
                .fold(Taint::default(), |t, a| t.union(self.taint_of(a.clone())));
            let held = self.state.vars.get(&h).copied().unwrap_or_default();
            self.set(h, held.union(given));
        }
    }

    /// Whether a `dup2` call's second argument is stdin, stdout or stderr.
    fn onto_stdio(&self, call: &Call) -> bool {
        let args = self.split_args(call.args.clone());
        args.get(1).is_some_and(|a| {
            let toks = &self.toks[a.clone()];
            matches!(toks, [t] if ["0", "1", "2"].contains(&t.text.as_str()))
                || toks
                    .iter()
                    .any(|t| ["stdin", "stdout"].contains(&t.text.as_str()))
        })
    }

    /// `f = open(PATH, 'wb')`, `… as f`, `createWriteStream(PATH)`: `name`
    /// is a handle on PATH.
    pub(super) fn note_handle(&mut self, name: &str, range: std::ops::Range<usize>) {
        for call in self.calls(range) {
            if let Some(path) = self.opened_for_writing(&call) {
                self.state.handles.insert(name.to_owned(), path);
            }
        }
    }

    /// The file `call` opens for writing (`open(PATH, 'w…'/'a…')`,
    /// `createWriteStream(PATH)`), if it is one.
    fn opened_for_writing(&self, call: &Call) -> Option<String> {
        let last = call.chain.last().map_or("", String::as_str);
        let args = self.split_args(call.args.clone());
        let writing = match last {
            "open" => args.get(1).is_some_and(|m| {
                self.toks[m.clone()]
                    .iter()
                    .any(|t| t.kind == Kind::Str && (t.text.contains('w') || t.text.contains('a')))
            }),
            "createWriteStream" => true,
            _ => false,
        };
        if !writing {
            return None;
        }
        args.first().and_then(|a| self.path_of(a.clone()))
    }

    /// `open(PATH, 'wb').write(DATA)`: the file and what is written to it,
    /// the handle never named.
    pub(super) fn chained_write(&self, call: &Call) -> Option<(String, Taint)> {
        let path = self.opened_for_writing(call)?;
        let close = call.args.end;
        let method = (self.is(close + 1, ".")
            && (self.is(close + 2, "write") || self.is(close + 2, "writelines"))
            && self.is(close + 3, "("))
        .then_some(close + 3)?;
        let end = self.close_of(method);
        Some((path, self.taint_of(method + 1..end)))
    }
}

/// Whether a function `f` sets options of the handle it is given first
/// (`curl_setopt`, `curl_setopt_array`, `stream_context_set_option`).
fn sets_handle(f: &str) -> bool {
    let lower = f.to_ascii_lowercase();
    lower.contains("setopt") || lower.contains("_set_option")
}

/// Whether method `m` puts its arguments into its receiver: one of
/// [`ADDS`], or named for it (`add_attachment`, `attachFile`,
/// `set_payload`, `update_headers`).
fn adds(m: &str) -> bool {
    if ADDS.contains(&m) {
        return true;
    }
    let lower = m.to_ascii_lowercase();
    [
        "add", "append", "attach", "push", "insert", "extend", "update", "set", "put",
    ]
    .iter()
    .any(|verb| {
        lower.strip_prefix(verb).is_some_and(|rest| {
            rest.starts_with('_') || m[verb.len()..].starts_with(|c: char| c.is_ascii_uppercase())
        })
    }) || m == "attach"
}
