//! The printing layer: a command's output (tables, JSON, answers) goes to
//! stdout through `out!`/`outln!`, progress is drawn by `cli/progress.rs`
//! and logs by `cli/log.rs`, and nothing else in the crate writes to stdout
//! or stderr, or lets a child process write there (a test scans for it). Diagnostics go through `tracing` (see
//! `cli/log.rs`), which writes to stderr, so stdout stays the command's
//! result (and, for `skillhost mcp`, the protocol, which rmcp writes itself
//! and which never passes through here).
//!
//! Much of what is printed comes from skill authors, handlers, models and
//! registries (descriptions, answers, gate reports, error messages), and a
//! terminal obeys control sequences wherever they come from: OSC 52 writes
//! the clipboard, `\r` and cursor moves rewrite lines already printed. So
//! both macros format into a string and print [`terminal_safe`] of it: one
//! place, whatever the caller forgot.

use std::borrow::Cow;

/// `text` with every character that drives a terminal instead of showing
/// replaced by its code as `\uXXXX` (four lowercase hex digits): C0 controls
/// except `\n` and `\t`, DEL, C1 controls (U+0080..U+009F) and the bidi
/// overrides and isolates (U+202A..U+202E, U+2066..U+2069), which reorder
/// what is shown. Everything else, other text and tables, is kept.
///
/// The form is JSON's own escape: inside a JSON string it means the same
/// character, so JSON printed through here stays the same JSON (serde_json
/// escapes C0 controls itself; DEL, C1 and bidi characters it leaves raw).
/// A `\u` already in the text is not escaped, so the two read alike; only
/// what drives the terminal matters here.
pub(crate) fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(drives_terminal) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if drives_terminal(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn drives_terminal(c: char) -> bool {
    matches!(c,
        '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `print!` that returns the write's error instead of panicking: when the
/// reader goes away (`skillhost runs list | head -1`), the error travels
/// up to `cli::main`, which ends quietly. The text is [`terminal_safe`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        std::io::stdout()
            .lock()
            .write_all($crate::cli::print::terminal_safe(&text).as_bytes())
    }};
}

/// Writes bytes the host made itself, which hold no text of a skill, a
/// model or a registry (a shell completion script from the CLI's own
/// definitions), to stdout as they are.
pub(crate) fn out_own_bytes(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    std::io::stdout().lock().write_all(bytes)
}

/// `println!` that returns the write's error (see `out!`).
macro_rules! outln {
    () => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock())
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut text = format!($($arg)*);
        text.push('\n');
        std::io::stdout()
            .lock()
            .write_all($crate::cli::print::terminal_safe(&text).as_bytes())
    }};
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::terminal_safe;

    #[test]
    fn controls_that_drive_a_terminal_are_escaped_and_the_rest_kept() {
        let osc52 = "a\x1b]52;c;aGk=\x07b";
        assert_eq!(terminal_safe(osc52), "a\\u001b]52;c;aGk=\\u0007b");
        assert_eq!(
            terminal_safe("passed\r\x1b[1Aenabled\x08\x7f"),
            "passed\\u000d\\u001b[1Aenabled\\u0008\\u007f"
        );
        // C1 controls (U+009B is CSI on its own) and bidi overrides/isolates.
        assert_eq!(
            terminal_safe("\u{9b}2J \u{85} \u{202e}txt.exe \u{2066}x\u{2069}"),
            "\\u009b2J \\u0085 \\u202etxt.exe \\u2066x\\u2069"
        );
        assert_eq!(
            terminal_safe("\0\x0b\x0c\x1f"),
            "\\u0000\\u000b\\u000c\\u001f"
        );
        // Lines, tabs, text in any script, tables and emoji are untouched
        // (and not copied).
        let fine = "name\tdescription\n├─ café — 日本語 ✓ \u{a0}\u{200d}🙂\n";
        assert!(matches!(
            terminal_safe(fine),
            std::borrow::Cow::Borrowed(s) if s == fine
        ));
        // The edges of each range.
        for c in [
            '\u{a0}', '\u{2029}', '\u{202f}', '\u{2065}', '\u{206a}', '~',
        ] {
            assert_eq!(terminal_safe(&c.to_string()), c.to_string(), "{c:?}");
        }
        for c in ['\u{80}', '\u{9f}', '\u{202a}', '\u{2069}', '\x01', '\x1b'] {
            assert_eq!(
                terminal_safe(&c.to_string()),
                format!("\\u{:04x}", u32::from(c))
            );
        }
    }

    #[test]
    fn json_printed_through_the_escaper_is_the_same_json() {
        let value = serde_json::json!({
            "description": "x\x1b]52;c;aGk=\x07\r\u{7f}\u{9b}\u{202e}y\ttab\nline",
            "list": ["\u{2066}", "plain", "\\u001b is text"],
        });
        for text in [
            serde_json::to_string(&value).expect("json"),
            serde_json::to_string_pretty(&value).expect("json"),
        ] {
            let safe = terminal_safe(&text);
            assert!(
                !safe.chars().any(|c| c == '\x1b'
                    || c == '\x07'
                    || c == '\r'
                    || c == '\u{7f}'
                    || c == '\u{9b}'
                    || c == '\u{202e}'),
                "{safe}"
            );
            let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
            assert_eq!(back, value);
        }
    }

    /// What writes to the terminal without the printing layer: the std
    /// macros (which also panic on a closed pipe and bypass `-q` and
    /// `--log-format`), the standard streams themselves, a progress bar's
    /// draw target, and a child process given the host's streams.
    const FORBIDDEN: [&str; 8] = [
        "println!",
        "eprintln!",
        "print!",
        "eprint!",
        "stdout()",
        "stderr()",
        "ProgressDrawTarget",
        "Stdio::inherit",
    ];

    /// The printing layer: output, progress and logs, each escaped.
    const PRINTING_LAYER: [&str; 3] = ["print.rs", "progress.rs", "log.rs"];

    /// Test-only modules of the library (`#[cfg(test)] mod ...`), whose
    /// messages are for the test harness.
    const TEST_ONLY: [&str; 1] = ["store/conformance/mod.rs"];

    fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).expect("read host/src");
        for entry in entries {
            let path = entry.expect("read host/src entry").path();
            if path.is_dir() {
                rust_files(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }

    /// Whether `line` names one of [`FORBIDDEN`] (as a whole word: `outln!`
    /// and `sprint!` are not `println!` and `print!`).
    fn writes_to_terminal(line: &str) -> bool {
        let code = line.trim_start();
        if code.starts_with("//") {
            return false;
        }
        FORBIDDEN.iter().any(|m| {
            code.match_indices(m).any(|(i, _)| {
                !code[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
    }

    #[test]
    fn the_scan_catches_each_way_to_the_terminal_and_nothing_else() {
        for bad in [
            "println!(\"x\");",
            "    eprintln!(\"warning: {w}\");",
            "std::print!(\"x\")",
            "{ eprint!(\"x\") }",
            "std::io::stderr().write_all(b)",
            "let out = io::stdout();",
            "ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())",
            ".stderr(std::process::Stdio::inherit())",
        ] {
            assert!(writes_to_terminal(bad), "{bad}");
        }
        for fine in [
            "outln!(\"x\")?;",
            "out!(\"{text}\")?;",
            "/// `println!` that returns the write's error",
            "tracing::warn!(\"{w}\");",
            "let stderr = child.stderr.take();",
            "fn only_cargos_own_lines_pass_from_stderr() {",
        ] {
            assert!(!writes_to_terminal(fine), "{fine}");
        }
    }

    #[test]
    fn nothing_writes_to_the_terminal_outside_the_printing_layer() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut allowed: Vec<PathBuf> = PRINTING_LAYER
            .iter()
            .map(|f| src.join("cli").join(f))
            .collect();
        allowed.extend(TEST_ONLY.iter().map(|f| src.join(f)));
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in &allowed {
            assert!(files.contains(f), "the scan must see {}", f.display());
        }
        let mut offenders = Vec::new();
        for file in files.iter().filter(|f| !allowed.contains(f)) {
            let text = std::fs::read_to_string(file).expect("read source file");
            for (n, line) in text.lines().enumerate() {
                if writes_to_terminal(line) {
                    offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(
            offenders.is_empty(),
            "print through cli/print.rs (output), cli/progress.rs or tracing (diagnostics), not the std macros or streams:\n{}",
            offenders.join("\n")
        );
    }
}
