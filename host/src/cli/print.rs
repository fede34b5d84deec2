//! The printing layer: a command's output (tables, JSON, answers) goes to
//! stdout through `out!`/`outln!`, and nothing else in the crate writes to
//! stdout or stderr directly. Diagnostics go through `tracing` (see
//! `cli/log.rs`), which writes to stderr, so stdout stays the command's
//! result (and, for `skillhost mcp`, the protocol).

/// `print!` that returns the write's error instead of panicking: when the
/// reader goes away (`skillhost runs list | head -1`), the error travels
/// up to `cli::main`, which ends quietly.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `println!` that returns the write's error (see `out!`).
macro_rules! outln {
    () => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock())
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// The std macros panic on a closed pipe and bypass `-q` and
    /// `--log-format`; only this file may name them.
    const FORBIDDEN: [&str; 4] = ["println!", "eprintln!", "print!", "eprint!"];

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

    /// Whether `line` calls one of the std printing macros (as a whole
    /// word: `outln!` and `sprint!` are not `println!` and `print!`).
    fn calls_std_print(line: &str) -> bool {
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
    fn the_scan_catches_each_std_print_macro_and_nothing_else() {
        for bad in [
            "println!(\"x\");",
            "    eprintln!(\"warning: {w}\");",
            "std::print!(\"x\")",
            "{ eprint!(\"x\") }",
        ] {
            assert!(calls_std_print(bad), "{bad}");
        }
        for fine in [
            "outln!(\"x\")?;",
            "out!(\"{text}\")?;",
            "/// `println!` that returns the write's error",
            "tracing::warn!(\"{w}\");",
        ] {
            assert!(!calls_std_print(fine), "{fine}");
        }
    }

    #[test]
    fn no_std_print_macro_outside_the_printing_layer() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let this = src.join("cli").join("print.rs");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        assert!(
            files.contains(&this),
            "the scan must see {}",
            this.display()
        );
        let mut offenders = Vec::new();
        for file in files.iter().filter(|f| **f != this) {
            let text = std::fs::read_to_string(file).expect("read source file");
            for (n, line) in text.lines().enumerate() {
                if calls_std_print(line) {
                    offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(
            offenders.is_empty(),
            "print through cli/print.rs (output) or tracing (diagnostics), not the std macros:\n{}",
            offenders.join("\n")
        );
    }
}
