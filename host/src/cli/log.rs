//! Diagnostics: warnings, notices, progress and errors go through `tracing`
//! to stderr, never stdout (stdout is the output, or the MCP protocol).
//! `-v`/`-q` pick the level; `RUST_LOG`, when set, overrides them.

use std::io::IsTerminal;

use clap::{Args, ValueEnum};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::{FmtSpan, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

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
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = match args.log_format {
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .with_span_events(FmtSpan::CLOSE)
            .try_init(),
        // Asking for detail gets the full format, with the time each span
        // took when it closes.
        LogFormat::Text if from_env || args.verbose > 0 => builder
            .with_ansi(std::io::stderr().is_terminal())
            .with_span_events(FmtSpan::CLOSE)
            .try_init(),
        LogFormat::Text => builder.event_format(Human).try_init(),
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
