//! `skillhost skills grant|revoke`: the operator's side of capabilities.

use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches};

use super::Ctx;
use crate::granting;
use crate::grants::{CAPABILITIES, GrantRequest, describe, describe_limits};
use crate::paths::ConfigFile;
use crate::skill::Capabilities;

#[derive(Debug, Args)]
pub struct GrantArgs {
    /// The skill to grant capabilities to.
    pub name: String,
    /// One option or more per capability (see `grants::CAPABILITIES`).
    #[command(flatten)]
    pub capabilities: CapabilityFlags,
    /// Let the skill's declared `limits` go above the defaults (up to the
    /// operator's `[limits] max_*` ceilings).
    #[arg(long)]
    pub limits: bool,
    /// Write to the user config ($SKILLHOST_HOME/skillhost.toml) instead of
    /// the workspace's ./skillhost.toml.
    #[arg(long)]
    pub user: bool,
}

#[derive(Debug, Args)]
pub struct RevokeArgs {
    /// The skill whose grant to remove.
    pub name: String,
    /// Remove it from the user config instead of the workspace's.
    #[arg(long)]
    pub user: bool,
}

fn config_file(user: bool) -> ConfigFile {
    if user {
        ConfigFile::User
    } else {
        ConfigFile::Workspace
    }
}

/// With no capability flags, grants everything the skill declares.
pub fn grant(args: GrantArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let request = GrantRequest {
        capabilities: args.capabilities.0,
        limits: args.limits,
    };
    let shared = ctx.shared_store()?;
    let g = granting::grant(
        &ctx.paths,
        &ctx.catalog(),
        &args.name,
        &request,
        config_file(args.user),
        shared.as_deref(),
    )?;
    print_granted(&g, ctx, args.user)?;
    Ok(ExitCode::SUCCESS)
}

/// What was granted, where, and who reads it.
fn print_granted(g: &granting::Granted, ctx: &Ctx, user: bool) -> anyhow::Result<()> {
    if let Some(gets) = &g.narrowed {
        tracing::info!(
            "note: the skill does not declare everything granted; it will get only: {}",
            describe(gets)
        );
    }
    let raised = if g.grant.limits.is_empty() {
        String::new()
    } else {
        format!(
            " and its declared limits {}",
            describe_limits(&g.grant.limits)
        )
    };
    outln!(
        "granted `{}` {}{raised} (pinned to {}) in {}",
        g.skill,
        describe(&g.grant.capabilities),
        g.grant.pin,
        g.written_to
    )?;
    match g.written_to {
        granting::GrantedIn::File(_) => outln!("{}", readers(&ctx.paths, user))?,
        granting::GrantedIn::Shared(_) => outln!(
            "read by every host on that store at its next run, this one's workspace file notwithstanding"
        )?,
    }
    Ok(())
}

/// Which skillhost processes read the grant just written: a grant only
/// holds where its file is read.
fn readers(paths: &crate::paths::Paths, user: bool) -> String {
    if user {
        format!(
            "read by every skillhost command and MCP server with SKILLHOST_HOME={}",
            paths.home.display()
        )
    } else {
        let ws = paths.workspace.display();
        format!(
            "read by skillhost commands and MCP servers whose workspace is {ws} (started there, or given --workspace {ws}); use --user for a server a desktop client starts"
        )
    }
}

pub fn revoke(args: RevokeArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let shared = ctx.shared_store()?;
    let from = granting::revoke(
        &ctx.paths,
        &args.name,
        config_file(args.user),
        shared.as_deref(),
    )?;
    outln!("revoked the grant of `{}` in {from}", args.name)?;
    Ok(ExitCode::SUCCESS)
}

/// The `skills grant` options of every capability, made from each one's
/// [`Flag`](crate::grants::Flag)s, so a new capability brings its option.
#[derive(Debug, Clone, Default)]
pub struct CapabilityFlags(pub Capabilities);

impl FromArgMatches for CapabilityFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut c = Capabilities::default();
        for cap in CAPABILITIES {
            for flag in cap.flags() {
                if flag.value_name.is_some() {
                    let values: Vec<String> = m
                        .get_many::<String>(flag.name)
                        .map(|v| v.cloned().collect())
                        .unwrap_or_default();
                    if !values.is_empty() {
                        cap.grant_from_flag(flag.name, &values, &mut c);
                    }
                } else if m.get_flag(flag.name) {
                    cap.grant_from_flag(flag.name, &[], &mut c);
                }
            }
        }
        Ok(CapabilityFlags(c))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for CapabilityFlags {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        CAPABILITIES
            .iter()
            .flat_map(|c| c.flags())
            .fold(cmd, |cmd, flag| {
                let arg = Arg::new(flag.name).long(flag.name).help(flag.help);
                cmd.arg(match flag.value_name {
                    Some(v) => arg.value_name(v).action(ArgAction::Append),
                    None => arg.action(ArgAction::SetTrue),
                })
            })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        grant: GrantArgs,
    }

    #[test]
    fn every_capability_brings_its_grant_option() {
        let cli = Cli::try_parse_from([
            "grant",
            "s",
            "--read",
            "a",
            "--read",
            "b",
            "--write",
            "w",
            "--http",
            "api.example.com",
            "--tool",
            "t",
            "--llm",
            "--kv",
        ])
        .expect("parses");
        let c = cli.grant.capabilities.0;
        assert_eq!(c.files.read, ["a", "b"]);
        assert_eq!(c.files.write, ["w"]);
        assert_eq!(c.http, ["api.example.com"]);
        assert_eq!(c.tools, ["t"]);
        assert!(c.llm && c.kv);
        let none = Cli::try_parse_from(["grant", "s"]).expect("parses");
        assert_eq!(none.grant.capabilities.0, Capabilities::default());
        assert!(Cli::try_parse_from(["grant", "s", "--no-such-capability"]).is_err());
    }
}
