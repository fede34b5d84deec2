//! What each kind of command does to data: fetches it, copies it, unpacks
//! it, runs it, sends it. Every other command passes its input and the
//! files it names on to its stdout.

use tree_sitter::Node;

use super::super::paths::{self, is_secret_path};
use super::{Cx, FIELD_BREAK, MAX_NESTING, Run, Value, is_word};
use crate::audit::flow::Taint;

mod credentials;
mod decoders;
mod files;
mod interpreters;
mod loaders;
mod network;
mod replies;

use credentials::{dumps_secrets, prints_credential, reads_clipboard};
use interpreters::interpreter;

type Span = (usize, usize);

/// A command's words after its options are told from its operands.
struct Opts {
    /// `(option, value)`; `None` for an operand.
    items: Vec<(Option<String>, Value)>,
}

impl Opts {
    /// Splits `args` given the short option letters and long options that
    /// take a value (`-o FILE`, `-sSLo FILE`, `-oFILE`, `--output=FILE`).
    fn parse(args: &[Value], short: &str, long: &[&str]) -> Opts {
        let mut items = Vec::new();
        let mut iter = args.iter();
        let mut operands_only = false;
        while let Some(arg) = iter.next() {
            let t = arg.text.as_str();
            if operands_only || !t.starts_with('-') || t == "-" {
                items.push((None, arg.clone()));
            } else if t == "--" {
                operands_only = true;
            } else if let Some(long_opt) = t.strip_prefix("--") {
                items.push(long_item(long_opt, arg, long, &mut iter));
            } else {
                items.extend(short_items(&t[1..], arg, short, &mut iter));
            }
        }
        Opts { items }
    }

    fn operands(&self) -> impl Iterator<Item = &Value> {
        self.items
            .iter()
            .filter(|(o, _)| o.is_none())
            .map(|(_, v)| v)
    }

    fn values<'a>(&'a self, names: &'a [&str]) -> impl Iterator<Item = &'a Value> + 'a {
        self.items
            .iter()
            .filter(move |(o, _)| o.as_deref().is_some_and(|o| names.contains(&o)))
            .map(|(_, v)| v)
    }

    /// [`Opts::values`] with the option each came with.
    fn flag_values<'a>(
        &'a self,
        names: &'a [&str],
    ) -> impl Iterator<Item = (&'a str, &'a Value)> + 'a {
        self.items.iter().filter_map(move |(o, v)| {
            let o = o.as_deref()?;
            names.contains(&o).then_some((o, v))
        })
    }

    fn has(&self, names: &[&str]) -> bool {
        self.items
            .iter()
            .any(|(o, _)| o.as_deref().is_some_and(|o| names.contains(&o)))
    }
}

fn long_item<'a>(
    opt: &str,
    arg: &Value,
    long: &[&str],
    iter: &mut impl Iterator<Item = &'a Value>,
) -> (Option<String>, Value) {
    if let Some((name, value)) = opt.split_once('=') {
        let v = Value {
            text: value.to_owned(),
            taint: arg.taint,
        };
        return (Some(format!("--{name}")), v);
    }
    let value = if long.contains(&opt) {
        iter.next().cloned().unwrap_or_default()
    } else {
        Value::default()
    };
    (Some(format!("--{opt}")), value)
}

fn short_items<'a>(
    cluster: &str,
    arg: &Value,
    short: &str,
    iter: &mut impl Iterator<Item = &'a Value>,
) -> Vec<(Option<String>, Value)> {
    let mut out = Vec::new();
    for (i, c) in cluster.char_indices() {
        if short.contains(c) {
            let rest = &cluster[i + c.len_utf8()..];
            let value = if rest.is_empty() {
                iter.next().cloned().unwrap_or_default()
            } else {
                Value {
                    text: rest.to_owned(),
                    taint: arg.taint,
                }
            };
            out.push((Some(format!("-{c}")), value));
            return out;
        }
        out.push((Some(format!("-{c}")), Value::default()));
    }
    out
}

/// The program a command word runs: its last path part, without `.exe`.
fn program(word: &str) -> String {
    let base = paths::basename(word);
    let base = base.strip_suffix(".exe").unwrap_or(base);
    match base {
        "$SHELL" | "${SHELL}" | "$BASH" | "${BASH}" => "sh".into(),
        _ => base.to_owned(),
    }
}

/// Wrappers that run the rest of the line as root.
fn is_root_wrapper(prog: &str) -> bool {
    matches!(prog, "sudo" | "doas" | "pkexec")
}

/// Words that run the rest of the line as a command of its own.
fn wrapper_skip(prog: &str, args: &[Value]) -> Option<usize> {
    let takes_value: &[&str] = match prog {
        "sudo" | "doas" => &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
        "pkexec" => &["--user"],
        // `env -S 'prog args'` splits its string; read as its program.
        "env" => &["-u", "-C"],
        "busybox" | "toybox" => &[],
        "nice" => &["-n"],
        "timeout" | "stdbuf" | "caffeinate" | "arch" | "chronic" => &["-s", "-k", "-w"],
        "nohup" | "exec" | "time" | "command" | "builtin" | "setsid" | "unbuffer" => &[],
        _ => return None,
    };
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if takes_value.contains(&t) {
            i += 2;
        } else if t.starts_with('-')
            || (prog == "env" && t.contains('='))
            || (prog == "timeout" && i == 0 && t.starts_with(|c: char| c.is_ascii_digit()))
        {
            i += 1;
        } else {
            break;
        }
    }
    Some(i + 1)
}

impl Run<'_, '_> {
    /// A simple command: its words, then what its program does.
    pub(super) fn command(&mut self, cx: Cx, node: Node, stdin: Taint, depth: usize) -> Taint {
        let mut words: Vec<Value> = Vec::new();
        let mut input = stdin;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        let mut word_end = None;
        let mut herestring = false;
        for child in children {
            match child.kind() {
                "variable_assignment" => self.assign(cx, child, depth),
                "command_name" => {
                    if let Some(w) = child.named_child(0) {
                        let v = self.word(cx, w, depth + 1);
                        words.extend(split_fields(w.kind(), v, self.me.ifs()));
                        word_end = Some(child.end_byte());
                    }
                }
                "herestring_redirect" => {
                    let text = self.concatenation(cx, child, depth + 1);
                    input = input.union(text.taint);
                    // What the command reads, as a here-document's text.
                    if self.heredoc_text.is_none() {
                        self.heredoc_text = Some(text.text);
                        herestring = true;
                    }
                }
                k if is_word(k) => {
                    let w = self.word(cx, child, depth + 1);
                    match words.last_mut() {
                        // One shell word the grammar read as two.
                        Some(last) if word_end == Some(child.start_byte()) => {
                            let after_dollar = child
                                .start_byte()
                                .checked_sub(1)
                                .and_then(|i| cx.src.get(i))
                                == Some(&b'$');
                            self.join(last, w, after_dollar, cx.span(child).0);
                        }
                        _ => words.extend(split_fields(child.kind(), w, self.me.ifs())),
                    }
                    word_end = Some(child.end_byte());
                }
                _ => {}
            }
        }
        let out = self.run_words(cx, cx.span(node), &words, input, depth);
        if herestring {
            self.heredoc_text = None;
        }
        out
    }

    /// Appends `next` to the word `last` it touches. tree-sitter-bash
    /// splits `a/$B/$C/d` after `/$`, leaving `C/d` a word of its own: a
    /// name that starts `next` right after a `$` (`after_dollar`) is that
    /// variable's expansion.
    fn join(&self, last: &mut Value, next: Value, after_dollar: bool, at: usize) {
        let name_len = next
            .text
            .char_indices()
            .take_while(|&(i, c)| {
                c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())
            })
            .count();
        if after_dollar && name_len > 0 {
            if last.text.ends_with('$') {
                last.text.pop();
            }
            let value = self.var_value(&next.text[..name_len], at);
            last.text.push_str(&value.text);
            last.taint = last.taint.union(value.taint);
            last.text.push_str(&next.text[name_len..]);
        } else {
            last.text.push_str(&next.text);
        }
        last.taint = last.taint.union(next.taint);
    }

    fn run_words(
        &mut self,
        cx: Cx,
        span: Span,
        words: &[Value],
        stdin: Taint,
        depth: usize,
    ) -> Taint {
        let Some((name, args)) = words.split_first() else {
            return Taint::default();
        };
        let prog = program(&name.text);
        if prog == "alias" {
            self.define_aliases(args);
        }
        if let Some(expanded) = self.alias_of(&name.text, args, depth) {
            return self.run_words(cx, span, &expanded, stdin, depth + 1);
        }
        self.me.at = span;
        if let Some(skip) = wrapper_skip(&prog, args).filter(|&skip| skip < words.len()) {
            let rest = words.get(skip..).unwrap_or(&[]);
            if !is_root_wrapper(&prog) {
                return self.run_words(cx, span, rest, stdin, depth);
            }
            self.note_root_shell(rest);
            let was = std::mem::replace(&mut self.me.root, true);
            let out = self.run_words(cx, span, rest, stdin, depth);
            self.me.root = was;
            return out;
        }
        if prog == "xargs" {
            return self.xargs(cx, span, args, stdin, depth);
        }
        if is_root_wrapper(&prog) || prog == "su" {
            // `sudo -i`, `sudo -s`, `su -`: a root shell for what follows.
            self.note_root_shell(words);
        }
        let mut ran = name.taint.union(self.program_taint(&name.text));
        if prog == "configure" {
            // The build entry of a source release (GNU autotools).
            ran = ran.as_published();
        }
        self.exec(ran, span);
        if let Some(function) = self.me.functions.get(&prog).cloned() {
            return self.call(function, args, stdin, depth);
        }
        let data = self.data(args, stdin, span);
        self.piped_in = stdin;
        self.program(cx, (&prog, args), (stdin, data), span, depth)
    }

    /// `xargs [OPTIONS] PROG ARGS`: PROG runs with the words read from
    /// stdin as further arguments (a URL piped in is what `curl` fetches).
    fn xargs(&mut self, cx: Cx, span: Span, args: &[Value], stdin: Taint, depth: usize) -> Taint {
        let takes_value = ["-I", "-i", "-n", "-P", "-d", "-L", "-E", "-s", "-a", "-l"];
        let mut i = 0;
        while let Some(a) = args.get(i).filter(|a| a.text.starts_with('-')) {
            i += if takes_value.contains(&a.text.as_str()) {
                2
            } else {
                1
            };
        }
        let mut words: Vec<Value> = args.get(i..).unwrap_or(&[]).to_vec();
        if words.is_empty() {
            words.push(Value {
                text: "echo".into(),
                taint: Taint::default(),
            });
        }
        words.push(Value {
            text: "$XARGS".into(),
            taint: stdin,
        });
        self.run_words(cx, span, &words, Taint::default(), depth + 1)
    }

    /// `alias NAME='WORDS' …`: notes what each NAME runs.
    fn define_aliases(&mut self, args: &[Value]) {
        for a in args {
            if let Some((n, v)) = a.text.split_once('=') {
                let v = v.trim_matches(['\'', '"']);
                self.me.aliases.insert(n.to_owned(), v.to_owned());
            }
        }
    }

    /// The words a command named by an alias runs: the alias's words,
    /// then the command's arguments (once: an alias naming itself stops).
    fn alias_of(&self, name: &str, args: &[Value], depth: usize) -> Option<Vec<Value>> {
        let value = self.me.aliases.get(name)?;
        let first = value.split_whitespace().next()?;
        if first == name || depth > 64 {
            return None;
        }
        let mut words: Vec<Value> = value
            .split_whitespace()
            .map(|w| Value {
                text: w.to_owned(),
                taint: Taint::default(),
            })
            .collect();
        words.extend(args.iter().cloned());
        Some(words)
    }

    /// What running `prog` does; gives its stdout's taint.
    fn program(
        &mut self,
        cx: Cx,
        (prog, args): (&str, &[Value]),
        (stdin, data): (Taint, Taint),
        span: Span,
        depth: usize,
    ) -> Taint {
        if prints_credential(prog, args) || reads_clipboard(prog, args) {
            let secret = data.union(Taint::new(Taint::SECRET, span.0));
            let opts = Opts::parse(args, "o", &["output", "out"]);
            for out in opts.values(&["-o", "--output", "--out"]) {
                self.me.write_file(&out.text, secret);
            }
            return secret;
        }
        self.verify_step(prog, args);
        if let Some(out) = self.network_program(prog, args, stdin, span) {
            return out;
        }
        if let Some(out) = self.shell_builtin(cx, (prog, args), (stdin, data), span, depth) {
            return out;
        }
        match prog {
            "cp" | "mv" | "install" | "ln" | "ditto" => self.copy(args, span),
            "tar" | "bsdtar" | "unzip" | "7z" | "7za" | "gunzip" | "bunzip2" | "unxz" | "zcat"
            | "zip" => self.archive(prog, args, span),
            "security" | "gpg" if dumps_secrets(args) => {
                data.union(Taint::new(Taint::SECRET, span.0))
            }
            _ => self.other(prog, args, data, span),
        }
    }

    /// A builtin (or a tool used like one) that works on the shell's own
    /// state: code it runs, its folder, variables, printed text. Its
    /// stdout's taint, or None for any other program.
    fn shell_builtin(
        &mut self,
        cx: Cx,
        (prog, args): (&str, &[Value]),
        (stdin, data): (Taint, Taint),
        span: Span,
        depth: usize,
    ) -> Option<Taint> {
        let out = match prog {
            "eval" => self.eval(cx, args, span, depth),
            "source" | "." => self.source(args, stdin, span),
            "su" => self.run_as_root(cx, args, span, depth),
            "printf" | "echo" => {
                self.printed = printed_text(prog, args);
                data
            }
            "cat" if args.is_empty() => {
                self.printed = self.heredoc_text.clone();
                data
            }
            "tee" => self.tee(args, stdin),
            "cd" | "pushd" => self.change_dir(args),
            "read" | "mapfile" | "readarray" => {
                self.read_vars(args, stdin);
                Taint::default()
            }
            "env" | "printenv" | "set" | "export" | "declare" if args.is_empty() => {
                data.union(Taint::new(Taint::SECRET, span.0))
            }
            // The commands typed: tokens and passwords given on the line.
            "history" => data.union(Taint::new(Taint::SECRET, span.0)),
            _ => return None,
        };
        Some(out)
    }

    /// `source FILE`: FILE's contents run here.
    fn source(&mut self, args: &[Value], stdin: Taint, span: Span) -> Taint {
        if let Some(file) = args.first() {
            let t = self.file_arg(file, stdin);
            self.exec(t, span);
        }
        Taint::default()
    }

    /// `su -c CMD`: CMD runs as root.
    fn run_as_root(&mut self, cx: Cx, args: &[Value], span: Span, depth: usize) -> Taint {
        let code = args.iter().skip_while(|a| a.text != "-c").nth(1);
        if let Some(code) = code.filter(|c| c.taint.is_clean()).cloned() {
            let was = std::mem::replace(&mut self.me.root, true);
            self.nested(cx, &code.text, span, depth);
            self.me.root = was;
        }
        Taint::default()
    }

    /// `tee FILE…`: stdin written to each FILE and passed on.
    fn tee(&mut self, args: &[Value], stdin: Taint) -> Taint {
        for file in args.iter().filter(|a| !a.text.starts_with('-')) {
            self.me.write_file(&file.text, stdin);
        }
        stdin
    }

    /// `cd DIR`: the working folder takes DIR's taint.
    fn change_dir(&mut self, args: &[Value]) -> Taint {
        self.me.cwd = args
            .iter()
            .find(|a| !a.text.starts_with('-'))
            .map(|d| self.me.path_taint(&d.text))
            .unwrap_or_default();
        Taint::default()
    }

    /// A program run by a command word: a tainted file, or a bare name
    /// that was written into a `bin` folder. A word an expansion gave
    /// (`"$dest"` holding `$(mktemp)`'s unknown output) is the file it
    /// names, however it is spelt.
    fn program_taint(&self, word: &str) -> Taint {
        if word.contains('/') || word.starts_with('$') {
            let t = self.me.path_taint(word);
            if word.starts_with("./") && t.is_clean() {
                return self.me.extracted_here;
            }
            return t;
        }
        self.me
            .files
            .iter()
            .find(|(path, _)| {
                path.strip_suffix(word)
                    .is_some_and(|dir| dir.ends_with("bin/"))
            })
            .map(|(_, t)| *t)
            .unwrap_or_default()
    }

    /// What a command reads: its stdin, its words, and the files they
    /// name (a secret store named is a secret read).
    fn data(&self, args: &[Value], stdin: Taint, span: Span) -> Taint {
        let mut t = stdin;
        for a in args {
            t = t.union(a.taint).union(self.me.path_taint(&a.text));
            if is_secret_path(&a.text) {
                t = t.union(Taint::new(Taint::SECRET, span.0));
            }
        }
        t
    }

    /// The taint of a file operand: what it holds, `-` or `/dev/stdin`
    /// as stdin, a secret store as a secret.
    fn file_arg(&self, file: &Value, stdin: Taint) -> Taint {
        let mut t = file.taint.union(self.me.path_taint(&file.text));
        if matches!(file.text.as_str(), "-" | "/dev/stdin" | "/dev/fd/0") {
            t = t.union(stdin);
        }
        t
    }

    pub(super) fn secret_file(&self, file: &str, at: usize) -> Taint {
        let t = self.me.path_taint(file);
        if is_secret_path(file) {
            return t.union(Taint::new(Taint::SECRET, at));
        }
        t
    }

    pub(super) fn exec(&mut self, taint: Taint, span: Span) {
        self.hits.exec(self.me.text, taint, span);
    }

    pub(super) fn send(&mut self, taint: Taint, span: Span) {
        self.hits.send(self.me.text, taint, span);
    }

    /// `eval WORDS`: runs their text; a literal is read as shell too.
    fn eval(&mut self, cx: Cx, args: &[Value], span: Span, depth: usize) -> Taint {
        let t = values_taint(args);
        self.exec(t, span);
        if t.is_clean() {
            let code = args
                .iter()
                .map(|a| a.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            self.nested(cx, &code, span, depth);
        }
        Taint::default()
    }

    /// A string run as shell (`eval '…'`, `sh -c '…'`): read as code,
    /// reported at the command that runs it.
    pub(super) fn nested(&mut self, _cx: Cx, code: &str, span: Span, depth: usize) {
        if self.me.nesting >= MAX_NESTING || code.trim().is_empty() {
            return;
        }
        let Some(tree) = self.me.parse(code.as_bytes()) else {
            return;
        };
        self.me.nesting += 1;
        let inner = Cx {
            src: code.as_bytes(),
            base: span.0,
            pin: Some(span),
        };
        self.stmt(inner, tree.root_node(), Taint::default(), depth + 1);
        self.me.nesting -= 1;
    }

    /// A shell function: its body run with `$1`… holding the arguments.
    fn call(
        &mut self,
        (code, at): (String, usize),
        args: &[Value],
        stdin: Taint,
        depth: usize,
    ) -> Taint {
        if self.me.nesting >= MAX_NESTING {
            return Taint::default();
        }
        let Some(tree) = self.me.parse(code.as_bytes()) else {
            return Taint::default();
        };
        let names: Vec<String> = (1..=9)
            .map(|i| i.to_string())
            .chain(["@".into(), "*".into()])
            .collect();
        let saved: Vec<Option<Value>> =
            names.iter().map(|n| self.me.vars.get(n).cloned()).collect();
        let all = Value {
            text: "$@".into(),
            taint: values_taint(args),
        };
        for (i, name) in names.iter().enumerate() {
            let v = if i < 9 {
                args.get(i).cloned().unwrap_or_default()
            } else {
                all.clone()
            };
            self.me.vars.insert(name.clone(), v);
        }
        self.me.nesting += 1;
        let cx = Cx {
            src: code.as_bytes(),
            base: at,
            pin: None,
        };
        let out = self.stmt(cx, tree.root_node(), stdin, depth + 1);
        self.me.nesting -= 1;
        for (name, old) in names.into_iter().zip(saved) {
            match old {
                Some(v) => self.me.vars.insert(name, v),
                None => self.me.vars.remove(&name),
            };
        }
        out
    }

    fn read_vars(&mut self, args: &[Value], stdin: Taint) {
        let opts = Opts::parse(args, "pdnNtuaCcsO", &[]);
        let mut names: Vec<String> = opts.operands().map(|v| v.text.clone()).collect();
        names.extend(opts.values(&["-a"]).map(|v| v.text.clone()));
        if names.is_empty() {
            names.push("REPLY".into());
            names.push("MAPFILE".into());
        }
        for name in names {
            let text = format!("${name}");
            self.me.vars.insert(name, Value { text, taint: stdin });
        }
    }

    /// Any other program: a runner of files (an installer, `open`, a
    /// build tool in a cloned folder) runs its tainted operands; every
    /// program's output is its input and the files it read.
    fn other(&mut self, prog: &str, args: &[Value], data: Taint, span: Span) -> Taint {
        let interp = interpreter(prog);
        if let Some(interp) = interp {
            return self.interpret(&interp, args, data, span);
        }
        self.run_remote_operands(prog, args, span);
        if RUNS_OPERANDS.contains(&prog) || loaders::RUNS_URLS.contains(&prog) {
            // `pip install -r FILE` installs the names FILE lists.
            let opts = Opts::parse(args, "rc", &["requirement", "constraint"]);
            let ran = opts
                .operands()
                .filter(|a| runnable_by(prog, &a.text))
                .fold(Taint::default(), |t, a| {
                    t.union(self.file_arg(a, Taint::default()))
                });
            self.exec(ran, span);
            if BUILDS_HERE.contains(&prog) && builds_current_folder(args) {
                // A build of downloaded source: a source install's tier.
                self.exec(self.me.cwd.as_published(), span);
            }
        }
        let data = self.decoded(prog, args, data, span);
        self.output_files(prog, args, data);
        self.compiled(prog, args, data);
        self.generic_upload(args, span);
        self.stdin_to_host(args, span);
        data
    }

    /// A compiler's `-o OUT`: OUT is a build of the sources it read.
    fn compiled(&mut self, prog: &str, args: &[Value], data: Taint) {
        let stem = prog.rsplit_once('-').map_or(prog, |(_, s)| s);
        if !COMPILERS.contains(&stem) {
            return;
        }
        let mut iter = args.iter();
        while let Some(a) = iter.next() {
            if a.text == "-o"
                && let Some(out) = iter.next()
            {
                // A build, not the bytes a host served.
                let built = data.as_published().without(Taint::DOWNLOADED);
                self.me.write_file(&out.text, built);
            }
        }
    }

    /// `-o FILE`, `-out FILE`, `--output FILE` of a filter (base64,
    /// openssl, gpg…): the file holds what the filter read.
    fn output_files(&mut self, prog: &str, args: &[Value], data: Taint) {
        if !FILTERS.contains(&prog) {
            return;
        }
        let mut iter = args.iter();
        while let Some(a) = iter.next() {
            let t = a.text.as_str();
            if matches!(t, "-o" | "-out" | "--output" | "--out" | "-O")
                && let Some(file) = iter.next()
            {
                self.me.write_file(&file.text, data);
            } else if let Some(file) = t.strip_prefix("--output=") {
                self.me.write_file(file, data);
            }
        }
    }
}

/// Programs that run or install the files they are given.
const RUNS_OPERANDS: &[&str] = &[
    "open",
    "xdg-open",
    "start",
    "installer",
    "dpkg",
    "rpm",
    "msiexec",
    "crontab",
    "launchctl",
    "java",
    "pip",
    "pip3",
    "pipx",
    "uv",
    "npm",
    "pnpm",
    "yarn",
    "apt",
    "apt-get",
    "brew",
    "make",
    "cmake",
    "cargo",
    "go",
    "mvn",
    "gradle",
    "meson",
    "ninja",
    "docker",
    "podman",
];

/// Compilers: what they write is a build of what they read.
const COMPILERS: &[&str] = &[
    "cc", "gcc", "g++", "c++", "clang", "clang++", "rustc", "tcc", "icc", "nvcc", "gfortran",
];

/// Package managers and build tools: their operands are names of a
/// registry's packages or build targets unless written as a file.
const NAMES_PACKAGES: &[&str] = &[
    "pip", "pip3", "pipx", "uv", "npm", "pnpm", "yarn", "apt", "apt-get", "brew", "make", "cmake",
    "cargo", "go", "mvn", "gradle", "meson", "ninja", "docker", "podman",
];

/// Build tools that run the project in the current folder.
const BUILDS_HERE: &[&str] = &[
    "make", "cmake", "npm", "pnpm", "yarn", "cargo", "go", "mvn", "gradle", "meson", "ninja",
];

/// Filters whose `-o` names the file they write.
const FILTERS: &[&str] = &[
    "base64", "openssl", "gpg", "xxd", "gzip", "sort", "uudecode", "iconv", "age",
];

/// The text `printf FORMAT` or `echo -e WORDS` prints, its `\n` and
/// `\t` escapes made what they print (other escapes kept as written).
fn printed_text(prog: &str, args: &[Value]) -> Option<String> {
    let words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    let text = match prog {
        "printf" => words.iter().find(|w| !w.starts_with('-'))?.to_string(),
        _ => words
            .iter()
            .filter(|w| !matches!(**w, "-e" | "-n" | "-en" | "-ne"))
            .copied()
            .collect::<Vec<_>>()
            .join(" "),
    };
    Some(text.replace("\\n", "\n").replace("\\t", "\t"))
}

/// Word splitting: an unquoted expansion with blanks in its value
/// (`curl${IFS}-fsSL${IFS}URL`, `$CMD URL`) makes several words; blanks
/// written in quotes (`--header="A: b"`) do not split.
/// An unquoted expansion split into fields by `ifs` (the shell's `IFS`
/// as the skill set it, else white space); a concatenation at the
/// breaks an expansion left in it.
fn split_fields(kind: &str, value: Value, ifs: &str) -> Vec<Value> {
    if matches!(kind, "word" | "concatenation" | "brace_expression")
        && let Some(items) = brace_list(&value.text)
    {
        // `{curl,-fsSL,URL}` is the words `curl -fsSL URL`.
        let word = |t: &str| Value {
            text: t.to_owned(),
            taint: value.taint,
        };
        return items
            .split(',')
            .filter(|f| !f.is_empty())
            .map(word)
            .collect();
    }
    let expansion = match kind {
        "simple_expansion" | "expansion" => true,
        "concatenation" => false,
        _ => return vec![value],
    };
    let sep = |c: char| c == FIELD_BREAK || (expansion && ifs.contains(c));
    if !value.text.contains(sep) {
        return vec![value];
    }
    value
        .text
        .split(sep)
        .filter(|f| !f.is_empty())
        .map(|f| Value {
            text: f.to_owned(),
            taint: value.taint,
        })
        .collect()
}

/// The items of an unquoted brace expansion that is the whole word
/// (`{a,b,c}`): bash expands it into one word each.
fn brace_list(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    let plain = !inner.contains(['{', '}', '"', '\'', ' ', '$', '`']);
    (plain && inner.contains(',')).then_some(inner)
}

fn values_taint(args: &[Value]) -> Taint {
    args.iter().fold(Taint::default(), |t, a| t.union(a.taint))
}

/// Whether curl's `flag` with `value` authenticates the request: `-u`, a
/// bearer token, or an authentication header.
fn is_authentication(flag: &str, value: &str) -> bool {
    let header = value
        .split(':')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    matches!(flag, "-u" | "--user" | "--oauth2-bearer")
        || (matches!(flag, "-H" | "--header")
            && matches!(
                header.as_str(),
                "authorization" | "private-token" | "x-api-key" | "api-key"
            ))
}

/// Whether `prog` runs the file `operand` names: `open` runs an app, an
/// installer or a script, not a PDF.
fn runnable_by(prog: &str, operand: &str) -> bool {
    if NAMES_PACKAGES.contains(&prog) {
        return paths::names_package_file(operand);
    }
    if !matches!(prog, "open" | "xdg-open" | "start") {
        return true;
    }
    let name = paths::basename(operand).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "app"
            | "pkg"
            | "mpkg"
            | "dmg"
            | "command"
            | "sh"
            | "jar"
            | "exe"
            | "msi"
            | "scpt"
            | "terminal"
            | "workflow"
            | "bat"
            | "cmd"
            | "ps1"
            | "deb"
            | "appimage"
            | ""
    )
}

/// Whether a build tool's words name only the project here (`make`,
/// `npm install`, `cargo run`), not a package of a registry.
fn builds_current_folder(args: &[Value]) -> bool {
    args.iter().all(|a| {
        a.text.starts_with('-')
            || matches!(
                a.text.as_str(),
                "install" | "i" | "ci" | "run" | "build" | "start" | "test" | "all" | "."
            )
    })
}

/// A command line's words, untainted, split at blanks (for the tests).
#[cfg(test)]
fn words(line: &str) -> Vec<Value> {
    line.split_whitespace()
        .map(|w| Value {
            text: w.into(),
            taint: Taint::default(),
        })
        .collect()
}
