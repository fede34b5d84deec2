//! A build's output: read a line at a time, filtered into `build.log`,
//! repeats counted, and its tail for the model and the operator.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::toolchain::buildbox::{LimitHit, LogFilter};

/// The build's filtered output, kept in the quarantine slot.
pub(super) const BUILD_LOG: &str = "build.log";
/// The most of a build log fed back to the model or shown.
const LOG_TAIL_BYTES: usize = 6_000;

/// Which stream a line of the build's output came from.
pub(super) enum Line {
    Out(String),
    Err(String),
    /// A line longer than [`MAX_LINE_BYTES`], dropped.
    TooLong,
}

/// The longest line of a build's output that is read (a diagnostic's JSON
/// is one line).
const MAX_LINE_BYTES: usize = 4 << 20;
/// The most of the filtered log kept in `build.log`; past it the start goes.
const MAX_LOG_BYTES: usize = 1 << 20;

/// Reads `r` a line at a time into `tx`.
pub(super) fn read_lines(r: impl std::io::Read, tx: std::sync::mpsc::Sender<Line>, out: bool) {
    use std::io::BufRead as _;
    let mut r = std::io::BufReader::with_capacity(64 << 10, r);
    let mut line = Vec::new();
    let mut too_long = false;
    let send = |line: &mut Vec<u8>, too_long: &mut bool| {
        let msg = message(line, *too_long, out);
        line.clear();
        *too_long = false;
        tx.send(msg).is_ok()
    };
    loop {
        let buf = match r.fill_buf() {
            Ok([]) => break,
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let (chunk, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        append_capped(&mut line, &mut too_long, chunk);
        let used = end.unwrap_or(buf.len());
        r.consume(used);
        if end.is_some() && !send(&mut line, &mut too_long) {
            return;
        }
    }
    if !line.is_empty() || too_long {
        send(&mut line, &mut too_long);
    }
}

/// A line read, as sent: its text (without a `\r`), or that it was too long.
fn message(line: &[u8], too_long: bool, out: bool) -> Line {
    if too_long {
        return Line::TooLong;
    }
    let text = String::from_utf8_lossy(line)
        .trim_end_matches('\r')
        .to_owned();
    if out {
        Line::Out(text)
    } else {
        Line::Err(text)
    }
}

/// Adds `chunk` to `line`; a line past [`MAX_LINE_BYTES`] is dropped and
/// marked too long (and the rest of it skipped).
fn append_capped(line: &mut Vec<u8>, too_long: &mut bool, chunk: &[u8]) {
    if *too_long {
        return;
    }
    if line.len() + chunk.len() > MAX_LINE_BYTES {
        *too_long = true;
        line.clear();
    } else {
        line.extend_from_slice(chunk);
    }
}

/// The filtered output of a build, as `build.log` keeps it. A line that
/// repeats the one before (a withheld diagnostic, say, for each line of a
/// file the compiler read) is counted, not repeated.
#[derive(Default)]
pub(super) struct Log {
    text: String,
    cut: bool,
    last: Option<String>,
    repeats: usize,
}

impl Log {
    fn push(&mut self, line: &str) {
        if self.last.as_deref() == Some(line) && !line.trim().is_empty() {
            self.repeats += 1;
            return;
        }
        self.flush_repeats();
        self.last = Some(line.to_owned());
        self.append(line);
    }

    fn flush_repeats(&mut self) {
        if self.repeats > 0 {
            let note = format!("(the line above {} more time(s))", self.repeats);
            self.repeats = 0;
            self.append(&note);
        }
    }

    fn append(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
        if self.text.len() > MAX_LOG_BYTES {
            let mut from = self.text.len() - MAX_LOG_BYTES / 2;
            while !self.text.is_char_boundary(from) {
                from += 1;
            }
            let from = self.text[from..].find('\n').map_or(from, |i| from + i + 1);
            self.text.drain(..from);
            self.cut = true;
        }
    }

    fn text(&mut self) -> String {
        self.flush_repeats();
        self.last = None;
        if self.cut {
            format!("… (the start of the log was cut)\n{}", self.text)
        } else {
            self.text.clone()
        }
    }
}

/// A build's output as it arrives: filtered line by line into the log,
/// bwrap's own lines kept apart.
pub(super) struct BuildOutput {
    pub(super) rx: std::sync::mpsc::Receiver<Line>,
    pub(super) filter: LogFilter,
    pub(super) log: Log,
    pub(super) bwrap_said: Vec<String>,
    /// The first limit the build's stderr shows it ran into.
    pub(super) limit_hit: Option<LimitHit>,
    pub(super) boxed: bool,
    pub(super) log_path: PathBuf,
}

impl BuildOutput {
    fn take(&mut self, line: Line) {
        let kept = match line {
            Line::Out(l) => {
                if self.limit_hit.is_none() {
                    // rustc says so itself when an allocation of its
                    // constant evaluation is refused.
                    self.limit_hit = LogFilter::headline(&l).and_then(|h| LimitHit::in_line(&h));
                }
                self.filter.stdout(&l)
            }
            Line::Err(l) => {
                if self.boxed && l.starts_with("bwrap: ") {
                    self.bwrap_said.push(l.clone());
                }
                if self.limit_hit.is_none() {
                    self.limit_hit = LimitHit::in_line(&l);
                }
                self.filter.stderr(&l)
            }
            Line::TooLong => self.filter.too_long(),
        };
        if let Some(k) = kept {
            self.log.push(&k);
        }
    }

    /// Every line already there.
    pub(super) fn take_ready(&mut self) {
        while let Ok(line) = self.rx.try_recv() {
            self.take(line);
        }
    }

    /// One line, if it comes within `wait`.
    pub(super) fn take_one(&mut self, wait: Duration) {
        if let Ok(line) = self.rx.recv_timeout(wait) {
            self.take(line);
        }
    }

    /// Takes what comes within `wait`, closes the filter, writes
    /// `build.log` and returns its tail. Only the filtered text: nothing
    /// the compiler quoted from a file outside the slot's src/ is kept,
    /// here either.
    pub(super) fn finish(&mut self, wait: Duration) -> String {
        let until = Instant::now() + wait;
        while let Ok(line) = self
            .rx
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            self.take(line);
        }
        if let Some(l) = self.filter.finish() {
            self.log.push(&l);
        }
        let text = self.log.text();
        let _ = fs::write(&self.log_path, &text);
        tail(&text)
    }
}
/// The end of a build log, for the model and the operator.
fn tail(text: &str) -> String {
    let text = text.trim_end();
    match text.char_indices().rev().nth(LOG_TAIL_BYTES) {
        Some((at, _)) => format!("…{}", &text[at..]),
        None => text.to_owned(),
    }
}

/// The end of the build log at `path` (`build.log`, already filtered).
pub fn log_tail(path: &Path) -> String {
    let mut bytes = Vec::new();
    if let Ok(f) = fs::File::open(path) {
        let _ = f.take(16 << 20).read_to_end(&mut bytes);
    }
    tail(&String::from_utf8_lossy(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_log_line_is_counted() {
        let mut log = Log::default();
        for l in ["   Compiling x", "w", "w", "w", "", "", "end", "w"] {
            log.push(l);
        }
        assert_eq!(
            log.text(),
            "   Compiling x\nw\n(the line above 2 more time(s))\n\n\nend\nw\n"
        );
    }
}
