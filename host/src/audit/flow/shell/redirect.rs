//! Redirections: where a statement's stdin comes from (a file, a process
//! substitution, a here-document, `/dev/tcp`) and where its stdout goes
//! (a file, which then holds its taint, or the network).

use crate::audit::flow::Lang;
use tree_sitter::Node;

use super::super::config;
use super::super::paths::is_secret_path;
use super::{Cx, Run, Value};
use crate::audit::flow::Taint;

/// Where a statement's stdout goes.
#[derive(Default)]
struct Outputs {
    files: Vec<Value>,
    to_network: bool,
    moved: bool,
}

impl Run<'_, '_> {
    /// `BODY < in > out`, `BODY <<EOF | next`: the body with its input,
    /// its output written or sent.
    pub(super) fn redirected(&mut self, cx: Cx, node: Node, stdin: Taint, depth: usize) -> Taint {
        let mut input = stdin;
        let mut outputs = Outputs::default();
        let mut after = Vec::new();
        let mut cursor = node.walk();
        let redirects: Vec<Node> = node
            .children_by_field_name("redirect", &mut cursor)
            .collect();
        for r in redirects {
            match r.kind() {
                "file_redirect" => input = self.file_redirect(cx, r, input, &mut outputs, depth),
                "heredoc_redirect" => input = input.union(self.heredoc(cx, r, &mut after, depth)),
                "herestring_redirect" => {
                    input = input.union(self.concatenation(cx, r, depth + 1).taint);
                }
                _ => {}
            }
        }
        self.printed = None;
        let out = match node.child_by_field_name("body") {
            Some(body) => self.stmt(cx, body, input, depth + 1),
            None => Taint::default(),
        };
        self.heredoc_text = None;
        if let Some(text) = self.printed.take() {
            self.read_written_script(&outputs.files, &text, cx.span(node), depth);
        }
        if outputs.to_network {
            self.hits.send(self.me.text, out, cx.span(node));
        }
        for file in &outputs.files {
            self.me.write_file(&file.text, out);
        }
        let mut flow = if outputs.moved { Taint::default() } else { out };
        for next in after {
            flow = self.stmt(cx, next, flow, depth + 1);
        }
        flow
    }

    /// One `<`, `>`, `>>`, `&>`, `>&N` redirect; gives the stdin after it.
    fn file_redirect(
        &mut self,
        cx: Cx,
        r: Node,
        input: Taint,
        outputs: &mut Outputs,
        depth: usize,
    ) -> Taint {
        let fd = r
            .child_by_field_name("descriptor")
            .map(|d| cx.text(d).to_owned());
        let Some(dest_node) = r.child_by_field_name("destination") else {
            return input;
        };
        let dest = self.word(cx, dest_node, depth + 1);
        let op = operator(r);
        let network = dest.text.starts_with("/dev/tcp/") || dest.text.starts_with("/dev/udp/");
        if let Some(fd) = fd
            .as_deref()
            .filter(|fd| network && !matches!(*fd, "0" | "1" | "2"))
        {
            self.me.net_fds.push(fd.to_owned());
        }
        let on_stdout = fd.as_deref().is_none_or(|fd| fd == "1") || op.starts_with('&');
        match op {
            "<" | "<>" if fd.as_deref().is_none_or(|fd| fd == "0") => {
                let mut t = input
                    .union(dest.taint)
                    .union(self.me.path_taint(&dest.text));
                if is_secret_path(&dest.text) {
                    t = t.union(Taint::new(Taint::SECRET, cx.span(r).0));
                }
                if network {
                    t = t.union(Taint::new(Taint::FETCHED | Taint::UNVETTED, cx.span(r).0));
                }
                t
            }
            ">" | ">>" | ">|" | "&>" | "&>>" if on_stdout => {
                outputs.moved = true;
                if network {
                    outputs.to_network = true;
                } else {
                    outputs.files.push(dest);
                }
                input
            }
            ">&" | "&>" if on_stdout && self.me.net_fds.contains(&dest.text) => {
                outputs.moved = true;
                outputs.to_network = true;
                input
            }
            _ => input,
        }
    }

    /// A here-document: its text (with what its expansions hold) is the
    /// stdin; a pipeline written after `<<EOF` runs on the output.
    fn heredoc<'n>(
        &mut self,
        cx: Cx,
        r: Node<'n>,
        after: &mut Vec<Node<'n>>,
        depth: usize,
    ) -> Taint {
        let mut taint = Taint::default();
        let mut cursor = r.walk();
        let children: Vec<Node> = r.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "heredoc_body" => {
                    let body = self.concatenation(cx, child, depth + 1);
                    taint = taint.union(body.taint);
                    self.heredoc_text = Some(body.text);
                }
                "heredoc_start" | "heredoc_end" => {}
                _ => after.push(child),
            }
        }
        taint
    }
}

impl Run<'_, '_> {
    /// A shell script the skill writes (`printf '#!/bin/sh\n…' > F`,
    /// `cat > F.sh <<EOF`) is code of the skill: read as shell, its
    /// findings reported at the command that writes it.
    fn read_written_script(
        &mut self,
        files: &[Value],
        text: &str,
        span: (usize, usize),
        depth: usize,
    ) {
        let cx = Cx {
            src: &[],
            base: span.0,
            pin: Some(span),
        };
        // A config whose values are commands (`~/.ssh/config`, `.gitconfig`).
        for format in files.iter().filter_map(|f| config::format_of(&f.text)) {
            self.nested(cx, &config::to_shell(format, text), span, depth);
        }
        let first = text.lines().next().unwrap_or("");
        let shebang = first.starts_with("#!")
            && ["sh", "bash", "zsh", "dash", "ksh"].iter().any(|s| {
                first.trim_end().ends_with(&format!("/{s}")) || first.ends_with(&format!(" {s}"))
            });
        // A Python or JavaScript file written whole: read by its engine.
        let script = files.iter().find_map(|f| match f.text.rsplit('.').next() {
            Some("py") => Some(Lang::Python),
            Some("js" | "mjs" | "cjs") => Some(Lang::JavaScript),
            _ => None,
        });
        if let Some(lang) = script {
            self.me.embed(lang, text.to_owned(), span);
            return;
        }
        let named = files
            .iter()
            .any(|f| f.text.ends_with(".sh") || f.text.ends_with(".bash"));
        if files.is_empty() || !(shebang || named) {
            return;
        }
        self.nested(cx, text, span, depth);
    }
}

/// A redirect's operator (`>`, `>>`, `<`, `&>`, `>&`…).
fn operator(r: Node) -> &'static str {
    let mut cursor = r.walk();
    let ops = [">>", "&>>", ">|", "&>", ">&", "<&", "<>", ">", "<"];
    for child in r.children(&mut cursor) {
        if !child.is_named()
            && let Some(op) = ops.iter().find(|o| **o == child.kind())
        {
            return op;
        }
    }
    ""
}
