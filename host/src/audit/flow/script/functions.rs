//! Functions of a script: what a function returns is what its callers
//! get, and what a caller passes is what the parameters hold. A Python
//! function's body runs from its `def` line to the next statement written
//! at the first column; a JavaScript one's to the brace that closes it,
//! however it is indented.

use super::super::{Lang, Taint};
use super::Stmt;
use crate::audit::flow::tokens::Kind;

/// A function defined in the script.
#[derive(Debug, Default, Clone)]
pub(super) struct Func {
    params: Vec<String>,
    /// What its `return` statements give.
    ret: Taint,
}

impl Stmt<'_> {
    /// Notes a definition this statement starts, or the end of the
    /// function being read (a statement at column 0), then a `return`.
    pub(super) fn enter(&mut self, column: usize) {
        let before = self.state.braces;
        self.state.braces += self.brace_change();
        let braced = matches!(self.lang, Lang::JavaScript | Lang::Php | Lang::Go);
        if let Some((name, params)) = self.definition() {
            let func = self.state.funcs.entry(name.clone()).or_default();
            func.params = params;
            self.state.current = Some(name.clone());
            self.state.open_funcs.push((name, before));
        } else if column == 0 && !braced {
            self.state.current = None;
        }
        self.give_return();
        self.pass_args();
        if braced {
            self.close_functions();
        }
    }

    /// Braces this statement opens, less those it closes.
    fn brace_change(&self) -> i32 {
        self.toks
            .iter()
            .filter(|t| t.kind == Kind::Punct)
            .map(|t| match t.text.as_str() {
                "{" => 1,
                "}" => -1,
                _ => 0,
            })
            .sum()
    }

    /// Ends the functions whose closing brace this statement wrote.
    fn close_functions(&mut self) {
        let depth = self.state.braces;
        while self
            .state
            .open_funcs
            .last()
            .is_some_and(|(_, d)| depth <= *d)
        {
            self.state.open_funcs.pop();
        }
        self.state.current = self.state.open_funcs.last().map(|(n, _)| n.clone());
    }

    /// `def NAME(…)`, `function NAME(…)`, `NAME = function(…)`: the name
    /// and the parameters.
    fn definition(&self) -> Option<(String, Vec<String>)> {
        let keyword = match self.lang {
            Lang::Python => "def",
            Lang::JavaScript | Lang::Php | Lang::Lua => "function",
            Lang::Go => "func",
            _ => return None,
        };
        let k = (0..self.toks.len().min(4)).find(|&i| self.is(i, keyword))?;
        let named = self.toks.get(k + 1).filter(|t| t.kind == Kind::Ident);
        let (name, open) = match named {
            Some(t) if self.is(k + 2, "(") => (t.text.clone(), k + 2),
            // `const f = function (…)`
            _ if k >= 2 && self.is(k - 1, "=") && self.is(k + 1, "(") => {
                (self.toks[k - 2].text.clone(), k + 1)
            }
            _ => return None,
        };
        Some((name, self.params(open)))
    }

    /// The parameter names in the brackets opening at `open`.
    fn params(&self, open: usize) -> Vec<String> {
        let close = self.close_of(open).min(self.toks.len());
        (open + 1..close)
            .filter(|&i| {
                let t = &self.toks[i];
                let after = ["(", ",", "*", "**", "..."]
                    .iter()
                    .any(|p| self.is(i - 1, p));
                t.kind == Kind::Ident && after
            })
            .map(|i| self.toks[i].text.clone())
            .collect()
    }

    /// `return EXPR` or `yield EXPR` in a function: the function (or the
    /// generator's items) gives what EXPR reads.
    fn give_return(&mut self) {
        let gives = |i: usize| self.is(i, "return") || self.is(i, "yield");
        let Some(r) = (0..self.toks.len()).find(|&i| gives(i)) else {
            return;
        };
        let t = self.taint_of(r + 1..self.toks.len());
        if let Some(f) = self
            .state
            .current
            .as_ref()
            .and_then(|c| self.state.funcs.get_mut(c))
        {
            f.ret = f.ret.union(t);
        }
    }

    /// A call of a function of the script: each parameter holds what its
    /// argument reads (by position, or by name `f(code=x)`).
    fn pass_args(&mut self) {
        for call in self.calls(0..self.toks.len()) {
            let Some(name) = call.chain.last() else {
                continue;
            };
            let Some(func) = self.state.funcs.get(name).cloned() else {
                continue;
            };
            // `obj.m(x)`: `self` or `cls` is bound by the call's receiver.
            let skip = usize::from(
                call.chain.len() > 1
                    && func
                        .params
                        .first()
                        .is_some_and(|p| p == "self" || p == "cls"),
            );
            for (i, arg) in self.split_args(call.args.clone()).into_iter().enumerate() {
                let keyword = self.is(arg.start + 1, "=") && !self.is(arg.start + 2, "=");
                let param = if keyword {
                    self.toks.get(arg.start).map(|t| t.text.clone())
                } else {
                    func.params.get(i + skip).cloned()
                };
                let Some(param) = param.filter(|p| func.params.contains(p)) else {
                    continue;
                };
                let t = self.taint_of(arg);
                let old = self.state.vars.get(&param).copied().unwrap_or_default();
                self.set(param, old.union(t));
            }
        }
    }

    /// What a call of the script's function `name` gives.
    pub(super) fn returned(&self, name: &str) -> Taint {
        self.state
            .funcs
            .get(name)
            .map_or(Taint::default(), |f| f.ret)
    }
}
