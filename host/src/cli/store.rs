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
    let shared = share_workspace_state(ctx, &to)?;
    if json {
        let mut out = serde_json::to_value(&copied)?;
        out["shared"] = serde_json::to_value(&shared)?;
        outln!("{}", serde_json::to_string_pretty(&out)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_migrated(&copied, &shared, &to.location())?;
    outln!("to use it, set in skillhost.toml:\n  [store]\n  url = \"...\"  (the URL you gave)")?;
    Ok(ExitCode::SUCCESS)
}

/// What was copied and shared, and how to use the new store.
fn print_migrated(copied: &copy::Copied, shared: &SharedCopied, to: &str) -> anyhow::Result<()> {
    outln!(
        "copied {} runs ({} already there), {} verdicts, {} key-value entries, {} gate reports, {} approvals into {}",
        copied.runs,
        copied.runs_present,
        copied.verdicts,
        copied.kv_entries,
        copied.gate_reports,
        copied.approvals,
        to
    )?;
    outln!(
        "shared {} rules, {} grants and {} skill folders of this workspace through it",
        shared.rules,
        shared.grants,
        shared.skills
    )?;
    Ok(())
}

/// What a migration put in the state the hosts share.
#[derive(Debug, Default, serde::Serialize)]
struct SharedCopied {
    /// Rules new to the store (one it holds already is left as it is).
    rules: usize,
    /// Workspace grants new to the store.
    grants: usize,
    /// Forged and installed skill folders sent.
    skills: usize,
}

/// The workspace's rules, grants and forged and installed skills, into the
/// store the hosts will share; what the store holds already wins, so a
/// second host migrating adds only what is new.
fn share_workspace_state(ctx: &Ctx, to: &PgStore) -> anyhow::Result<SharedCopied> {
    use crate::learn::book::RulesAt;
    use crate::learn::rules::{RuleSet, RulesError};
    let Some(shared) = to.shared() else {
        return Ok(SharedCopied::default());
    };
    let mut out = SharedCopied::default();
    let path = crate::learn::rules_path(&ctx.paths.state_dir());
    let local = RuleSet::load(&path)?;
    if !local.rules.is_empty() {
        let (added, _) = RulesAt::of(crate::store::SharedStore::of(to), &path).update(|set| {
            let added = local
                .rules
                .iter()
                .filter(|r| set.insert((*r).clone()))
                .count();
            Ok::<_, RulesError>((added, added > 0))
        })?;
        out.rules = added;
    }
    let file = crate::paths::workspace_file(&ctx.paths);
    let there = crate::shared::grants::shared_grants(shared)?;
    for (skill, grant) in crate::config::Config::load(&ctx.paths)?.grants {
        if crate::grants::file_grants(&file, &skill)? && !there.contains_key(&skill) {
            crate::shared::grants::write_shared_grant(shared, &skill, Some(&grant))?;
            out.grants += 1;
        }
    }
    out.skills = crate::shared::skills::publish(&ctx.paths, shared)?;
    Ok(out)
}
