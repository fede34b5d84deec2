//! The command line: argument parsing and printing. What a command does,
//! running, learning and the operator's edits (grants in `ops`, rules in
//! `learn::edit`, new skills in `scaffold`) alike, lives in the library
//! modules it calls.

// Output goes through `out!`/`outln!` (print.rs); diagnostics through
// `tracing` (log.rs).
#[macro_use]
mod print;

mod audit;
mod completions;
#[cfg(feature = "forge")]
mod eval_forge;
#[cfg(feature = "forge")]
mod forge;
mod grants;
mod handler;
mod install;
mod learn;
mod log;
mod mcp;
mod progress;
mod run;
mod skills;
mod store;
mod toolchain;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::app;
use crate::config::Config;
use crate::exec::Runner;
use crate::paths::Paths;
use crate::skill::Catalog;

#[derive(Debug, Parser)]
#[command(
    name = "skillhost",
    version,
    about = "Run agent skills, with their handlers sandboxed",
    propagate_version = true
)]
struct Cli {
    /// Extra skill root (repeatable; later roots override earlier ones).
    #[arg(long = "skills", value_name = "DIR", global = true)]
    skills: Vec<PathBuf>,
    /// The workspace (state, rules, ./skillhost.toml) instead of the
    /// current folder.
    #[arg(long = "workspace", value_name = "DIR", global = true)]
    workspace: Option<PathBuf>,
    #[command(flatten)]
    log: log::LogArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a task: pick a skill and run its handler in the sandbox (or its template).
    Run(run::RunArgs),
    /// List, search, show and validate skills; grant them capabilities.
    Skills(skills::SkillsArgs),
    /// Inspect handler components; scaffold a new handler in any of four languages.
    Handler(handler::HandlerArgs),
    /// Recorded runs: list, show, export.
    Runs(learn::RunsArgs),
    /// Learned rules: list, show, enable, disable, remove, explain a run.
    Rules(learn::RulesArgs),
    /// Run a learning cycle over the recorded failures.
    Learn(learn::LearnArgs),
    /// Evaluations (ablation of learned rules).
    Eval(learn::EvalArgs),
    /// Serve the skills over MCP (stdio by default).
    Mcp(mcp::McpArgs),
    /// Skills grown from recorded runs: mine recurring tool sequences.
    #[cfg(feature = "forge")]
    Forge(forge::ForgeArgs),
    /// For each handler language: what is installed and what installs the rest.
    Doctor(toolchain::DoctorArgs),
    /// Install a handler language's build tools.
    Toolchain(toolchain::ToolchainArgs),
    /// The store: copy this workspace's SQLite store into PostgreSQL.
    Store(store::StoreArgs),
    /// Print a shell completion script (bash, zsh or fish).
    Completions(completions::CompletionsArgs),
}

/// The async runtime a command runs its work on.
pub(crate) fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

/// What every subcommand works with.
pub(crate) struct Ctx {
    pub paths: Paths,
}

impl Ctx {
    /// A runner over the full catalog with the merged configuration.
    pub fn runner(&self) -> anyhow::Result<Runner> {
        self.runner_with_model(&run::ModelArgs::default())
    }

    /// A runner for a server: a handler still running at its first tick
    /// moves to threads of its own, so that none holds up the protocol
    /// (see `[sandbox] dedicated_threads`).
    pub fn server_runner(&self) -> anyhow::Result<Runner> {
        let overrides = app::ModelOverrides::default();
        Ok(app::runner(&self.paths, &overrides, app::Role::Server)?)
    }

    /// A runner whose model settings are overridden by flags.
    pub fn runner_with_model(&self, flags: &run::ModelArgs) -> anyhow::Result<Runner> {
        Ok(app::runner(
            &self.paths,
            &flags.overrides(),
            app::Role::Command,
        )?)
    }

    /// The merged configuration with the flags' model settings, and the
    /// model it configures (None: no model).
    pub fn config_with_model(
        &self,
        flags: &run::ModelArgs,
    ) -> anyhow::Result<(Config, Option<std::sync::Arc<dyn crate::llm::Provider>>)> {
        Ok(app::config_with_model(&self.paths, &flags.overrides())?)
    }

    /// The workspace store where `[store]` puts it, with the runs that
    /// ended processes left in their journals stored.
    pub fn store(&self) -> anyhow::Result<std::sync::Arc<dyn crate::store::RunStore>> {
        let config = Config::load(&self.paths)?;
        Ok(crate::exec::open_store(&self.paths, &config.store)?)
    }

    /// The store, when the hosts share one (`[store] url`); None for the
    /// workspace's own SQLite file, which this does not create.
    pub fn shared_store(
        &self,
    ) -> anyhow::Result<Option<std::sync::Arc<dyn crate::store::RunStore>>> {
        let config = Config::load(&self.paths)?;
        if config.store.url.is_none() {
            return Ok(None);
        }
        Ok(Some(crate::exec::open_store(&self.paths, &config.store)?))
    }

    /// Sends the skills this command forged, improved, installed or
    /// removed to the store the hosts share, if they share one.
    fn share_skills(&self) -> anyhow::Result<()> {
        if let Some(store) = self.shared_store()?
            && let Some(shared) = store.shared()
        {
            let sent = crate::shared::skills::publish(&self.paths, shared)?;
            if sent > 0 {
                tracing::info!("shared {sent} changed skill folder(s) with the other hosts");
            }
        }
        Ok(())
    }

    /// Loads the catalog over every root; warnings go to stderr.
    pub fn catalog(&self) -> Catalog {
        app::catalog(&self.paths)
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    log::init(&cli.log);
    let result = Paths::from_env(cli.skills.clone(), cli.workspace.clone())
        .map_err(anyhow::Error::from)
        .and_then(|mut paths| {
            // Bundled skills are embedded; they become a folder on first use.
            match crate::bundled::materialize(&paths.home) {
                Ok(dir) => paths.bundled = Some(dir),
                Err(e) => tracing::warn!(
                    "bundled skills unavailable: cannot write {}: {e}",
                    paths.home.join("bundled").display()
                ),
            }
            let ctx = Ctx { paths };
            let writes_skills = matches!(cli.command, Command::Skills(_) | Command::Handler(_));
            #[cfg(feature = "forge")]
            let writes_skills = writes_skills || matches!(cli.command, Command::Forge(_));
            let result = dispatch(cli.command, &ctx);
            if writes_skills
                && result.is_ok()
                && let Err(e) = ctx.share_skills()
            {
                tracing::warn!("{}", error_chain(&e));
            }
            result
        });
    match result {
        Ok(code) => code,
        // Whoever read stdout has stopped reading: there is no one left to
        // tell, and nothing went wrong.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{}", error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

/// Runs the subcommand.
fn dispatch(command: Command, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) => run::run(args, ctx),
        Command::Skills(args) => skills::run(args, ctx),
        Command::Handler(args) => handler::run(args, ctx),
        Command::Runs(args) => learn::runs(args, ctx),
        Command::Rules(args) => learn::rules(args, ctx),
        Command::Learn(args) => learn::learn_cmd(args, ctx),
        Command::Eval(args) => learn::eval(args, ctx),
        Command::Mcp(args) => mcp::run(args, ctx),
        #[cfg(feature = "forge")]
        Command::Forge(args) => forge::run(args, ctx),
        Command::Doctor(args) => toolchain::doctor(args, ctx),
        Command::Toolchain(args) => toolchain::run(args, ctx),
        Command::Store(args) => store::run(args, ctx),
        Command::Completions(args) => completions::run(args),
    }
}

/// The error and its causes as one line, `outer: inner: ...`, leaving out
/// a cause whose text the line already holds: many library errors quote
/// their source in their own message (`cannot write PATH: {source}`), and
/// the operating system's reason printed twice reads like two failures.
fn error_chain(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.is_empty() {
            line = text;
        } else if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

/// Whether the error, or anything it wraps, is a write to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == Some(std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot write /w/skillhost.toml: {source}")]
    struct Quoting {
        source: std::io::Error,
    }

    #[test]
    fn a_cause_the_message_already_quotes_is_printed_once() {
        let denied = || std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = anyhow::Error::new(Quoting { source: denied() });
        assert_eq!(error_chain(&e), "cannot write /w/skillhost.toml: denied");
        // A cause the message does not quote is still printed.
        let e = anyhow::Error::new(denied()).context("granting `x`");
        assert_eq!(error_chain(&e), "granting `x`: denied");
        let e = anyhow::Error::new(Quoting { source: denied() }).context("granting `x`");
        assert_eq!(
            error_chain(&e),
            "granting `x`: cannot write /w/skillhost.toml: denied"
        );
    }
}
