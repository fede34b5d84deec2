//! Progress bars for long work, on a terminal only: nothing on a pipe or
//! with `--json`, where a reader wants the output and nothing else. The
//! library reports progress through callbacks; only here is it drawn.

use std::io::IsTerminal as _;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

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
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    // The message is cut to the terminal's width: a wrapped line would be
    // redrawn as two.
    let style = ProgressStyle::with_template("{spinner} {elapsed:>3} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    pb.set_style(style);
    pb.set_message(message);
    pb.enable_steady_tick(Duration::from_millis(120));
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
}
