//! `skillhost store`: the store itself, as opposed to what is in it.

use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, Subcommand};

use super::{Ctx, progress};
use crate::store::{DB_FILE, KvQuota, PgStore, RunStore, StoreConfig, copy};

#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Subcommand, Debug)]
enum StoreCommand {
    /// Copy this workspace's SQLite store into a PostgreSQL database: runs
    /// with their steps and applied rules, verdicts, key-value data, gate
    /// reports and approvals. Safe to run again: what the database holds
    /// already is kept, the rest is copied. Then set `[store] url` to use it.
    Migrate {
        /// The database: postgres://USER:PASSWORD@HOST:PORT/DATABASE (or
        /// set SKILLHOST_MIGRATE_TO, keeping the password off the command line).
        #[arg(
            long,
            value_name = "URL",
            env = "SKILLHOST_MIGRATE_TO",
            hide_env_values = true
        )]
        to: String,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: StoreArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.command {
        StoreCommand::Migrate { to, json } => migrate(ctx, &to, json),
    }
}

fn migrate(ctx: &Ctx, url: &str, json: bool) -> anyhow::Result<ExitCode> {
    let sqlite = StoreConfig::default();
    let state = ctx.paths.state_dir();
    if !sqlite.exists(&state) {
        bail!(
            "no SQLite store at {}: nothing to migrate",
            state.join(DB_FILE).display()
        );
    }
    // Opened as every command opens it: runs that ended processes left in
    // their journals are stored first, so they are copied too.
    let from = crate::exec::open_store(&ctx.paths, &sqlite)?;
    // The data was admitted under the source's quotas: the copy takes it
    // whole.
    let to = PgStore::open_from(url, "--to")?.with_kv_quota(KvQuota {
        max_bytes: u64::MAX,
        max_keys: u64::MAX,
    });
    let bar = progress::bar(progress::shown(json), from.run_count()?, "runs");
    let copied = copy::copy(from.as_ref(), &to, |n| bar.set_position(n))?;
    bar.finish_and_clear();
    if json {
        outln!("{}", serde_json::to_string_pretty(&copied)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "copied {} runs ({} already there), {} verdicts, {} key-value entries, {} gate reports, {} approvals into {}",
        copied.runs,
        copied.runs_present,
        copied.verdicts,
        copied.kv_entries,
        copied.gate_reports,
        copied.approvals,
        to.location()
    )?;
    outln!("to use it, set in skillhost.toml:\n  [store]\n  url = \"...\"  (the URL you gave)")?;
    Ok(ExitCode::SUCCESS)
}
