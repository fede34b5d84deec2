//! Diagnostics: warnings, notices, progress and errors go through `tracing`
//! to stderr, never stdout (stdout is the output, or the MCP protocol).
//! `-v`/`-q` pick the level; `RUST_LOG`, when set, overrides them.
//!
//! Messages and fields carry untrusted text (skill names, registry
//! answers, error messages quoting a handler), so what reaches the terminal
//! is made [`terminal_safe`] as it is for stdout: the text formats escape
//! every field value ([`SafeFields`]), the JSON lines are escaped whole
//! ([`Escaping`]; the escapes are JSON's own, so each line stays the same
//! JSON).

use std::fmt::Write as _;
use std::io::IsTerminal;

use clap::{Args, ValueEnum};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::{FmtSpan, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use super::print::terminal_safe;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Lines for people: `warning: ...`; with -v, timestamps, spans and timings.
    #[default]
    Text,
    /// One JSON object per line, with `level`, `fields` and the spans.
    Json,
}

#[derive(Debug, Clone, Default, Args)]
pub struct LogArgs {
    /// More diagnostics on stderr: -v info (with run and tier timings),
    /// -vv debug (tool and model calls), -vvv trace.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// How diagnostics on stderr are written.
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        default_value_t,
        global = true
    )]
    log_format: LogFormat,
}

/// The filter for the flags. By default the crate's warnings show, and so
/// do the command's own notices (info in `skillhost::cli`: "exported 3
/// runs", "serving MCP at ..."), as they did before there were levels;
/// other crates speak only of errors.
fn directives(verbose: u8, quiet: bool) -> &'static str {
    match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "error,skillhost=warn,skillhost::cli=info",
        (false, 1) => "warn,skillhost=info",
        (false, 2) => "warn,skillhost=debug",
        (false, _) => "info,skillhost=trace",
    }
}

/// Installs the subscriber for the rest of the process.
pub fn init(args: &LogArgs) {
    let from_flags = || EnvFilter::new(directives(args.verbose, args.quiet));
    let env = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let (filter, from_env, bad_env) = match env.as_deref().map(EnvFilter::try_new) {
        Some(Ok(f)) => (f, true, None),
        Some(Err(e)) => (from_flags(), false, Some(e)),
        None => (from_flags(), false, None),
    };
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let installed = match args.log_format {
        LogFormat::Json => builder
            .with_writer(|| Escaping(std::io::stderr()))
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .with_span_events(FmtSpan::CLOSE)
            .try_init(),
        // Asking for detail gets the full format, with the time each span
        // took when it closes.
        LogFormat::Text if from_env || args.verbose > 0 => builder
            .with_writer(std::io::stderr)
            .fmt_fields(SafeFields)
            .with_ansi(std::io::stderr().is_terminal())
            .with_span_events(FmtSpan::CLOSE)
            .try_init(),
        LogFormat::Text => builder
            .with_writer(std::io::stderr)
            .fmt_fields(SafeFields)
            .event_format(Human)
            .try_init(),
    };
    // Only fails if a subscriber is already set, which then does the job.
    drop(installed);
    if let Some(e) = bad_env {
        tracing::warn!("RUST_LOG is not a valid filter ({e}); using the level of -v/-q");
    }
}

/// The default text format: what the messages said before `tracing`,
/// `warning: ...` and `error: ...`, and a command's notices as they are.
struct Human;

impl<S, N> FormatEvent<S, N> for Human
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let prefix = match *event.metadata().level() {
            Level::ERROR => "error: ",
            Level::WARN => "warning: ",
            Level::INFO => "",
            Level::DEBUG => "debug: ",
            Level::TRACE => "trace: ",
        };
        writer.write_str(prefix)?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// Fields as the default formatter writes them (`message` bare, the
/// others `name=value`, separated by spaces), made [`terminal_safe`]: the
/// values are untrusted, the formatter's own colours (level, target) are
/// written around them and kept.
struct SafeFields;

impl<'writer> FormatFields<'writer> for SafeFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> std::fmt::Result {
        let mut visitor = FieldText(String::new());
        fields.record(&mut visitor);
        writer.write_str(&terminal_safe(&visitor.0))
    }
}

struct FieldText(String);

impl FieldText {
    fn start(&mut self, field: &Field) -> bool {
        // `log.*` fields are the `log` crate's metadata, not content.
        if field.name().starts_with("log.") {
            return false;
        }
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        if field.name() != "message" {
            self.0.push_str(field.name());
            self.0.push('=');
        }
        true
    }
}

impl Visit for FieldText {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.record_debug(field, &format_args!("{value}"));
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if self.start(field) {
            let _ = write!(self.0, "{value:?}");
        }
    }
}

/// A writer that makes what passes through it [`terminal_safe`]. The
/// formatter writes each event in one piece, so no character is split.
struct Escaping<W>(W);

impl<W: std::io::Write> std::io::Write for Escaping<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(terminal_safe(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Emits one event per (target, level) under the flags' filter and the
    /// default format, and returns what reached "stderr".
    fn stderr_for(verbose: u8, quiet: bool) -> String {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(EnvFilter::new(directives(verbose, quiet)))
            .with_writer(move || Sink(sink.clone()))
            .fmt_fields(SafeFields)
            .event_format(Human)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(target: "skillhost::cli", "e-cli");
            tracing::warn!(target: "skillhost::skill", "w-catalog");
            tracing::info!(target: "skillhost::cli::learn", "i-notice");
            tracing::info!(target: "skillhost::exec", "i-exec");
            tracing::debug!(target: "skillhost::tools", "d-tools");
            tracing::trace!(target: "skillhost::tools", "t-tools");
            tracing::warn!(target: "rmcp::service", "w-dep");
            tracing::error!(target: "rmcp::service", "e-dep");
        });
        let bytes = buf.lock().expect("buffer").clone();
        String::from_utf8(bytes).expect("utf-8")
    }

    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("buffer").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn by_default_warnings_and_notices_read_as_before() {
        assert_eq!(
            stderr_for(0, false),
            "error: e-cli\nwarning: w-catalog\ni-notice\nerror: e-dep\n"
        );
    }

    const HOSTILE: &str = "evil\x1b]52;c;aGk=\x07\r\x1b[1Apassed\u{9b}2J\u{202e}";

    fn assert_no_terminal_controls(text: &str) {
        for c in ['\x1b', '\x07', '\r', '\u{9b}', '\u{202e}'] {
            assert!(!text.contains(c), "{c:?} in {text:?}");
        }
        assert!(text.contains("\\u001b]52;c;aGk=\\u0007"), "{text}");
    }

    fn captured(subscriber: impl Subscriber + Send + Sync, buf: &Arc<Mutex<Vec<u8>>>) -> String {
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(target: "skillhost::skill", "skill {HOSTILE}: bad front matter");
            tracing::error!(target: "skillhost::cli", skill = HOSTILE, why = %HOSTILE, "refused");
            let span = tracing::info_span!("run", skill = HOSTILE);
            let _entered = span.enter();
            tracing::warn!(target: "skillhost::exec", "inside");
        });
        let bytes = buf.lock().expect("buffer").clone();
        String::from_utf8(bytes).expect("utf-8")
    }

    #[test]
    fn untrusted_text_in_log_lines_cannot_drive_the_terminal() {
        // The default lines.
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let human = tracing_subscriber::fmt()
            .with_writer(move || Sink(sink.clone()))
            .fmt_fields(SafeFields)
            .event_format(Human)
            .finish();
        let text = captured(human, &buf);
        assert_no_terminal_controls(&text);
        assert!(text.contains("\\u000d\\u001b[1Apassed"), "{text}");
        assert!(text.starts_with("warning: skill evil"), "{text}");
        assert!(text.contains("error: refused skill=\"evil"), "{text}");

        // -v on a terminal: the full format, in colour; its own escapes
        // stay, the fields' are escaped.
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let full = tracing_subscriber::fmt()
            .with_writer(move || Sink(sink.clone()))
            .fmt_fields(SafeFields)
            .with_ansi(true)
            .finish();
        let text = captured(full, &buf);
        let fields: String = text
            .lines()
            .map(|l| l.split_once("skill").map_or("", |(_, rest)| rest))
            .collect();
        assert!(!fields.contains("\x07") && !fields.contains('\r'), "{text}");
        assert!(text.contains("\\u001b]52"), "{text}");

        // --log-format json: still JSON, with the same values.
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let json = tracing_subscriber::fmt()
            .with_writer(move || Escaping(Sink(sink.clone())))
            .json()
            .with_current_span(true)
            .finish();
        let text = captured(json, &buf);
        assert_no_terminal_controls(&text);
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            if let Some(skill) = v["fields"]["skill"].as_str() {
                assert_eq!(skill, HOSTILE);
            }
        }
    }

    #[test]
    fn quiet_keeps_only_errors() {
        assert_eq!(stderr_for(0, true), "error: e-cli\nerror: e-dep\n");
    }

    #[test]
    fn each_v_adds_a_level_for_the_crate() {
        let v = stderr_for(1, false);
        assert!(v.contains("i-exec") && v.contains("w-dep"), "{v}");
        assert!(!v.contains("d-tools"), "{v}");
        let vv = stderr_for(2, false);
        assert!(
            vv.contains("debug: d-tools") && !vv.contains("t-tools"),
            "{vv}"
        );
        let vvv = stderr_for(3, false);
        assert!(vvv.contains("trace: t-tools"), "{vvv}");
    }
}
