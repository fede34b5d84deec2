//! Interpreters: which programs run code, how it is given to them (a
//! file, `-c` text, stdin), and the code of another language handed over.

use super::super::super::paths;
use super::super::{Cx, Run, Value};
use super::Span;
use super::loaders::remote_url;
use crate::audit::flow::{Lang, Taint};

/// An interpreter: its options that take code, a module, or a value.
#[derive(Clone, Copy)]
pub(super) struct Interp {
    code: &'static [&'static str],
    module: &'static [&'static str],
    value: &'static [&'static str],
    shell: bool,
    /// Its code is every word after the code option (`cmd /c a b`).
    rest: bool,
    /// Subcommands that come before the script (`deno run URL`).
    skip: &'static [&'static str],
    /// The language its code is read as, when a script engine reads it.
    lang: Option<Lang>,
}

/// Each interpreter by the names (without a version suffix) it is run as.
const INTERPRETERS: &[(&[&str], Interp)] = &[
    (
        &["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"],
        Interp {
            code: &["-c"],
            module: &[],
            value: &["-o", "-O", "+O"],
            shell: true,
            rest: false,
            skip: &[],
            lang: None,
        },
    ),
    (
        &["python", "pypy"],
        Interp {
            code: &["-c"],
            module: &["-m"],
            value: &["-W", "-X", "-Q"],
            shell: false,
            rest: false,
            skip: &[],
            lang: Some(Lang::Python),
        },
    ),
    (
        &["node", "nodejs"],
        Interp {
            code: &["-e", "--eval", "-p", "--print"],
            module: &[],
            value: &["-r", "--require", "--import", "--loader"],
            shell: false,
            rest: false,
            skip: &[],
            lang: Some(Lang::JavaScript),
        },
    ),
    (
        // `deno run URL`, `bun run FILE`: the subcommand comes first.
        &["bun", "deno"],
        Interp {
            code: &["-e", "--eval", "-p", "--print", "eval"],
            module: &[],
            value: &["-r", "--require", "--import", "--loader"],
            shell: false,
            rest: false,
            skip: &["run"],
            lang: Some(Lang::JavaScript),
        },
    ),
    (&["perl"], one_liner(Lang::Perl)),
    (&["ruby"], one_liner(Lang::Ruby)),
    (
        &["osascript", "Rscript"],
        Interp {
            code: &["-e", "-E"],
            module: &[],
            // osascript's `-l JavaScript`, `-s flags`.
            value: &["-I", "-l", "-s"],
            shell: false,
            rest: false,
            skip: &[],
            lang: None,
        },
    ),
    (
        &["lua", "luajit"],
        Interp {
            code: &["-e"],
            module: &["-l"],
            value: &[],
            shell: false,
            rest: false,
            skip: &[],
            lang: Some(Lang::Lua),
        },
    ),
    (
        &["php"],
        Interp {
            code: &["-r"],
            module: &[],
            value: &["-d", "-c"],
            shell: false,
            rest: false,
            skip: &[],
            lang: Some(Lang::Php),
        },
    ),
    (
        &["pwsh", "powershell"],
        Interp {
            code: &[
                "-c",
                "-Command",
                "-command",
                "-EncodedCommand",
                "-enc",
                "-e",
            ],
            module: &[],
            // `-File X` is the script operand, read as the next word.
            value: &[
                "-ExecutionPolicy",
                "-executionpolicy",
                "-ep",
                "-ex",
                "-exec",
                "-WindowStyle",
                "-windowstyle",
                "-w",
                "-win",
                "-OutputFormat",
                "-InputFormat",
                "-ConfigurationName",
            ],
            shell: false,
            rest: false,
            skip: &[],
            lang: Some(Lang::PowerShell),
        },
    ),
    (
        &["cmd"],
        Interp {
            code: &["/c", "/C", "/k", "/K", "/r", "/R"],
            module: &[],
            value: &[],
            shell: true,
            rest: true,
            skip: &[],
            lang: None,
        },
    ),
];

/// Perl's and Ruby's `-e CODE`.
const fn one_liner(lang: Lang) -> Interp {
    Interp {
        code: &["-e", "-E"],
        module: &[],
        value: &["-I", "-r", "-M"],
        shell: false,
        rest: false,
        skip: &[],
        lang: Some(lang),
    }
}

pub(super) fn interpreter(prog: &str) -> Option<Interp> {
    let stem = prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS
        .iter()
        .find(|(names, _)| names.contains(&stem))
        .map(|(_, interp)| *interp)
}

/// Whether an interpreter's code option `opt` takes code as text, not
/// PowerShell's base64 of UTF-16 (`-EncodedCommand`, `-enc`, `-e`).
pub(super) fn code_is_text(lang: Lang, opt: &str) -> bool {
    lang != Lang::PowerShell || !matches!(opt, "-EncodedCommand" | "-enc" | "-e")
}

impl Run<'_, '_> {
    /// An interpreter runs its code option, its script operand, or stdin.
    pub(super) fn interpret(
        &mut self,
        interp: &Interp,
        args: &[Value],
        stdin_and_args: Taint,
        span: Span,
    ) -> Taint {
        let stdin = self.piped_in;
        let mut iter = args.iter();
        while let Some(a) = iter.next() {
            let t = a.text.as_str();
            if interp.code.contains(&t) {
                let code = if interp.rest {
                    joined(iter.as_slice())
                } else {
                    iter.next().cloned().unwrap_or_default()
                };
                self.run_code_option(interp, t, &code, span);
                return stdin_and_args;
            }
            if interp.module.contains(&t) {
                return stdin_and_args;
            }
            // `sh -s ARGS…`: the script is stdin, the words after are its
            // arguments; `--` ends the options.
            if interp.shell
                && (t == "-s" || t.starts_with('-') && !t.starts_with("--") && t.contains('s'))
            {
                break;
            }
            if t == "--" || interp.skip.contains(&t) {
                continue;
            }
            if interp.value.contains(&t) {
                iter.next();
            } else if let Some(url) = remote_url(a) {
                // `deno run https://…/mod.ts`, `pwsh -File \\host\x.ps1`.
                let served = self.fetched(&[&url], span.0);
                self.exec(served, span);
                return stdin_and_args;
            } else if !t.starts_with('-') || t == "-" {
                let ran = self.file_arg(a, stdin);
                self.exec(ran, span);
                if t == "-" {
                    self.embed_stdin(interp, span);
                }
                return stdin_and_args;
            }
        }
        self.exec(stdin, span);
        self.embed_stdin(interp, span);
        stdin_and_args
    }

    /// `-c CODE`, `-e CODE`: tainted code runs what it holds; its text is
    /// read as shell, or by its language's engine.
    pub(super) fn run_code_option(&mut self, interp: &Interp, opt: &str, code: &Value, span: Span) {
        self.exec(code.taint, span);
        if let Some(lang) = interp.lang {
            let text = if code_is_text(lang, opt) {
                Some(code.text.clone())
            } else {
                paths::decode_utf16_base64(&code.text)
            };
            if let Some(text) = text {
                self.me.embed(lang, text, span);
            }
        }
        if interp.shell && code.taint.is_clean() {
            let cx = Cx {
                src: &[],
                base: span.0,
                pin: Some(span),
            };
            self.nested(cx, &code.text, span, 0);
        }
    }

    /// An interpreter reading a here-document as its script: that text
    /// is read as code of its language (a shell's as shell, here).
    pub(super) fn embed_stdin(&mut self, interp: &Interp, span: Span) {
        let Some(code) = self.heredoc_text.take() else {
            return;
        };
        if let Some(lang) = interp.lang {
            self.me.embed(lang, code, span);
        } else if interp.shell {
            let cx = Cx {
                src: &[],
                base: span.0,
                pin: Some(span),
            };
            self.nested(cx, &code, span, 0);
        }
    }
}

/// Words as one command line: their texts with spaces, their taints.
fn joined(words: &[Value]) -> Value {
    Value {
        text: words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        taint: words.iter().fold(Taint::default(), |t, w| t.union(w.taint)),
    }
}
