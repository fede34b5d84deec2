//! Progress bars for long work, on a terminal only: nothing on a pipe or
//! with `--json`, where a reader wants the output and nothing else. The
//! library reports progress through callbacks; only here is it drawn.
//!
//! Part of the printing layer (`cli/print.rs`): a spinner's message names
//! skills, whose names come from their authors, so every text drawn here
//! goes through [`terminal_safe`] first.

use std::io::IsTerminal as _;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::print::terminal_safe;

/// Whether progress is drawn: stderr is a terminal and the output is not
/// JSON.
pub fn shown(json: bool) -> bool {
    !json && std::io::stderr().is_terminal()
}

/// A bar over `total` steps of `what` (e.g. "seeds"), hidden unless `show`.
pub fn bar(show: bool, total: u64, what: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    // `what` goes into the template: braces in it would be read as keys.
    let what = terminal_safe(what).replace(['{', '}'], "");
    let style = ProgressStyle::with_template(&format!(
        "{{bar:30}} {{pos}}/{{len}} {what} ({{elapsed}}, about {{eta}} left)"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    pb.set_style(style);
    pb.tick();
    pb
}

/// A spinner with `message` and the time so far, hidden unless `show`;
/// for work whose length is not known (a compile).
pub fn spinner(show: bool, message: String) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = spinner_on(ProgressDrawTarget::stderr(), &message);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// A spinner drawn on `target`, its message made [`terminal_safe`].
fn spinner_on(target: ProgressDrawTarget, message: &str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(None, target);
    // The message is cut to the terminal's width: a wrapped line would be
    // redrawn as two.
    let style = ProgressStyle::with_template("{spinner} {elapsed:>3} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    pb.set_style(style);
    pb.set_message(terminal_safe(message).into_owned());
    pb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_json_nothing_is_drawn() {
        assert!(!shown(true));
        assert!(bar(false, 10, "seeds").is_hidden());
        assert!(spinner(false, "compiling".into()).is_hidden());
    }

    /// A terminal that keeps what is drawn on it.
    #[derive(Debug, Clone, Default)]
    struct Screen(std::sync::Arc<std::sync::Mutex<String>>);

    impl Screen {
        fn drawn(&self) -> String {
            self.0.lock().map(|s| s.clone()).unwrap_or_default()
        }
        fn put(&self, s: &str) -> std::io::Result<()> {
            self.0
                .lock()
                .map(|mut t| t.push_str(s))
                .map_err(|_| std::io::Error::other("poisoned"))
        }
    }

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            200
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.put(s)?;
            self.put("\n")
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.put(s)
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_skill_name_that_drives_the_terminal_is_drawn_escaped() {
        // The message `cli/run.rs` draws while a handler compiles, for a
        // skill named with OSC 52 (write the clipboard), OSC 8, CSI and \r.
        let name = "x\x1b]52;c;Y3VybCBldmlsfGJhc2g=\x07\x1b]8;;http://e.vil\x1b\\\x1b[2J\ry";
        let screen = Screen::default();
        let target = ProgressDrawTarget::term_like(Box::new(screen.clone()));
        let pb = spinner_on(target, &format!("compiling the handler of `{name}`"));
        pb.tick();
        let drawn = screen.drawn();
        assert!(drawn.contains("compiling the handler of `x"), "{drawn:?}");
        assert!(drawn.contains("\\u001b]52;c;"), "{drawn:?}");
        for raw in ["\x1b]52", "\x1b]8", "\x1b[2J", "\x07", "\r"] {
            assert!(
                !drawn.contains(raw),
                "{raw:?} reached the terminal: {drawn:?}"
            );
        }
    }
}
