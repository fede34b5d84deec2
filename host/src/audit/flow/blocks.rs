//! What of a file is code: a script is all code (its language from the
//! extension or the shebang); a Markdown file's code is its fenced and
//! indented blocks, in order. A block's text keeps its byte offsets in the
//! file (a console prompt or an output line is blanked with spaces, not
//! cut), so every position the analyses find is a position of the file.

use super::Lang;
use super::config::Format;

/// One piece of code of a file.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    pub lang: Lang,
    /// Byte offset of `code` in the file's text.
    pub start: usize,
    /// The code, as long as the file's bytes it stands for.
    pub code: String,
}

/// The code of `file` (a path relative to the skill folder) holding `text`.
pub(crate) fn units(file: &str, text: &str) -> Vec<Unit> {
    let name = file.rsplit('/').next().unwrap_or(file).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    if let Some(lang) = script_lang(ext).or_else(|| shebang_lang(text)) {
        return vec![Unit {
            lang,
            start: 0,
            code: text.to_owned(),
        }];
    }
    if let Some(format) = super::config::format_of(file) {
        return vec![Unit {
            lang: Lang::Shell,
            start: 0,
            code: super::config::to_shell(format, text),
        }];
    }
    if matches!(ext, "yml" | "yaml") {
        return vec![Unit {
            lang: Lang::Shell,
            start: 0,
            code: super::yaml::to_shell(text),
        }];
    }
    if is_batch(file) {
        return vec![Unit {
            lang: Lang::Shell,
            start: 0,
            code: super::batch::to_shell(text),
        }];
    }
    if matches!(name.as_str(), "makefile" | "gnumakefile") || ext == "mk" {
        return vec![Unit {
            lang: Lang::Shell,
            start: 0,
            code: super::make::to_shell(text),
        }];
    }
    if matches!(ext, "md" | "markdown" | "mdx" | "mdc") {
        return markdown_units(text);
    }
    Vec::new()
}

/// Whether `file` is a Windows batch file by its extension.
pub(crate) fn is_batch(file: &str) -> bool {
    let lower = file.to_ascii_lowercase();
    lower.ends_with(".bat") || lower.ends_with(".cmd")
}

fn script_lang(ext: &str) -> Option<Lang> {
    Some(match ext {
        "sh" | "bash" | "zsh" | "ksh" | "command" => Lang::Shell,
        "py" | "pyw" => Lang::Python,
        "js" | "mjs" | "cjs" | "ts" | "mts" | "cts" => Lang::JavaScript,
        "ps1" | "psm1" => Lang::PowerShell,
        "rb" => Lang::Ruby,
        "pl" | "pm" => Lang::Perl,
        "php" => Lang::Php,
        "go" => Lang::Go,
        "lua" => Lang::Lua,
        _ => return None,
    })
}

/// The language a `#!` line names (`#!/usr/bin/env -S bash -e` too).
fn shebang_lang(text: &str) -> Option<Lang> {
    let first = text.lines().next()?.strip_prefix("#!")?;
    first.split_whitespace().find_map(|word| {
        let prog = word.rsplit('/').next().unwrap_or(word);
        let prog = prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        match prog {
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" => Some(Lang::Shell),
            "python" | "pypy" => Some(Lang::Python),
            "node" | "deno" | "bun" => Some(Lang::JavaScript),
            "pwsh" | "powershell" => Some(Lang::PowerShell),
            "ruby" => Some(Lang::Ruby),
            "perl" => Some(Lang::Perl),
            "php" => Some(Lang::Php),
            "lua" | "luajit" => Some(Lang::Lua),
            _ => None,
        }
    })
}

/// The language of a fenced block by its info string: `None` for a block
/// of another language or of data. An unlabelled or `text` block is read
/// as shell: that is how an agent told to run it would read it.
fn fence_lang(info: &str) -> Option<BlockKind> {
    let word = info
        .trim_start_matches(['{', '.'])
        .split(|c: char| c.is_whitespace() || c == ',' || c == '}' || c == '{')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if let Some(format) = config_block(&word) {
        return Some(BlockKind::Config(format));
    }
    if matches!(
        word.as_str(),
        "bat" | "batch" | "cmd" | "dosbatch" | "batchfile"
    ) {
        return Some(BlockKind::Batch);
    }
    Some(BlockKind::Code(match word.as_str() {
        "python" | "py" | "python3" | "ipython" | "pycon" => Lang::Python,
        "javascript" | "js" | "node" | "nodejs" | "mjs" | "cjs" | "typescript" | "ts" | "jsx"
        | "tsx" => Lang::JavaScript,
        "powershell" | "ps1" | "ps" | "pwsh" | "posh" => Lang::PowerShell,
        "ruby" | "rb" => Lang::Ruby,
        "perl" | "pl" => Lang::Perl,
        "php" => Lang::Php,
        "go" | "golang" => Lang::Go,
        "lua" => Lang::Lua,
        w if NOT_SHELL.contains(&w) => return None,
        _ => Lang::Shell,
    }))
}

/// What a fenced block holds: code of a language, or a configuration
/// whose values are commands (read as the file of that format is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Code(Lang),
    Config(Format),
    Batch,
}

/// The configuration format a block's label names: a git config is
/// written as `ini` as often as `gitconfig` (only its command values
/// are kept, so another INI file's settings stay data).
fn config_block(label: &str) -> Option<Format> {
    match label {
        "tmux" | "tmux.conf" => Some(Format::Tmux),
        "gitconfig" | "git-config" | "git" | "ini" => Some(Format::Git),
        "ssh-config" | "sshconfig" | "ssh_config" => Some(Format::Ssh),
        _ => None,
    }
}

/// Labels of blocks that are neither shell nor a script language read here.
const NOT_SHELL: &[&str] = &[
    "json",
    "jsonc",
    "json5",
    "jsonl",
    "yaml",
    "yml",
    "toml",
    "xml",
    "html",
    "css",
    "scss",
    "sql",
    "markdown",
    "md",
    "rust",
    "rs",
    "java",
    "c",
    "cpp",
    "c++",
    "h",
    "csharp",
    "cs",
    "swift",
    "kotlin",
    "kt",
    "diff",
    "patch",
    "csv",
    "tsv",
    "graphql",
    "proto",
    "protobuf",
    "dockerfile",
    "mermaid",
    "hcl",
    "terraform",
    "tf",
    "r",
    "scala",
    "dart",
    "makefile",
    "make",
    "nginx",
    "apache",
    "vue",
    "svelte",
    "latex",
    "tex",
    "bibtex",
    "svg",
    "dot",
    "plantuml",
    "elixir",
    "haskell",
    "clojure",
    "erlang",
    "objc",
    "zig",
    "nim",
    "solidity",
    "sol",
    "jinja",
    "handlebars",
    "liquid",
    "regex",
    "math",
    "mdx",
    "http",
    "prisma",
    "env",
    "properties",
    "conf",
    "cfg",
    "log",
];

/// A fence line's character, length and info string.
fn fence(line: &str) -> Option<(char, usize, &str)> {
    let t = line.trim_start();
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|&x| x == c).count();
    (n >= 3).then(|| (c, n, t[n..].trim()))
}

/// The fenced and indented code blocks of a Markdown text.
fn markdown_units(text: &str) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut open: Option<(char, usize, Option<BlockKind>, usize)> = None;
    let mut indented: Option<(usize, usize)> = None;
    let mut prev_blank = true;
    for (at, line) in lines_with_offsets(text) {
        if let Some((c, n, lang, start)) = open {
            if fence(line).is_some_and(|(c2, n2, info)| c2 == c && n2 >= n && info.is_empty()) {
                push_block(&mut out, text, lang, start, at);
                open = None;
            }
            continue;
        }
        if let Some((c, n, info)) = fence(line) {
            flush_indented(&mut out, text, &mut indented);
            open = Some((c, n, fence_lang(info), at + line.len() + 1));
            continue;
        }
        let blank = line.trim().is_empty();
        let is_code = line.starts_with("    ") || line.starts_with('\t');
        match (&mut indented, is_code && !blank) {
            (Some((_, end)), true) => *end = at + line.len(),
            (None, true) if prev_blank => indented = Some((at, at + line.len())),
            (Some(_), false) if !blank => flush_indented(&mut out, text, &mut indented),
            _ => {}
        }
        prev_blank = blank;
    }
    if let Some((_, _, lang, start)) = open {
        push_block(&mut out, text, lang, start, text.len());
    }
    flush_indented(&mut out, text, &mut indented);
    out
}

fn flush_indented(out: &mut Vec<Unit>, text: &str, indented: &mut Option<(usize, usize)>) {
    if let Some((start, end)) = indented.take() {
        push_block(out, text, Some(BlockKind::Code(Lang::Shell)), start, end);
    }
}

fn push_block(out: &mut Vec<Unit>, text: &str, kind: Option<BlockKind>, start: usize, end: usize) {
    let (Some(kind), Some(code)) = (kind, text.get(start.min(end)..end)) else {
        return;
    };
    let (lang, code) = match kind {
        BlockKind::Code(Lang::Shell) => (Lang::Shell, strip_prompts(code)),
        BlockKind::Code(lang) => (lang, code.to_owned()),
        BlockKind::Config(format) => (Lang::Shell, super::config::to_shell(format, code)),
        BlockKind::Batch => (Lang::Shell, super::batch::to_shell(code)),
    };
    out.push(Unit {
        lang,
        start: start.min(end),
        code,
    });
}

/// A console transcript as the commands typed: `$ ` prompts blanked and,
/// when the block has prompts, the output lines blanked too (a line after
/// one ending in `\` is still the command).
fn strip_prompts(code: &str) -> String {
    let prompt = |l: &str| l.trim_start().starts_with("$ ");
    if !code.lines().any(prompt) {
        return code.to_owned();
    }
    let mut out = String::with_capacity(code.len());
    let mut continued = false;
    for piece in code.split_inclusive('\n') {
        let line = piece.trim_end_matches(['\n', '\r']);
        if prompt(line) {
            let cut = line.len() - line.trim_start().len();
            out.push_str(&line[..cut]);
            out.push_str("  ");
            out.push_str(&piece[cut + 2..]);
        } else if continued {
            out.push_str(piece);
        } else {
            // Byte for byte, so the offsets after it still hold.
            out.extend(piece.bytes().map(|b| if b == b'\n' { '\n' } else { ' ' }));
        }
        continued = line.ends_with('\\');
    }
    out
}

/// Each line of `text` (without its `\n`) with its byte offset.
fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    text.split('\n').map(move |line| {
        let start = at;
        at += line.len() + 1;
        (start, line.strip_suffix('\r').unwrap_or(line))
    })
}
