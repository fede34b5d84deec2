//! `skillhost skills grant|revoke`: the operator's side of capabilities.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

use super::Ctx;
use crate::config::{self, Grant};
use crate::exec::skill_fingerprint;
use crate::skill::{Capabilities, FileCapabilities, LimitSpec};

#[derive(Debug, Args)]
pub struct GrantArgs {
    /// The skill to grant capabilities to.
    pub name: String,
    /// Directory the handler may read (as the skill declares it; repeatable).
    #[arg(long, value_name = "PATH")]
    pub read: Vec<String>,
    /// Directory the handler may write (repeatable).
    #[arg(long, value_name = "PATH")]
    pub write: Vec<String>,
    /// Host the handler may reach over HTTP (repeatable).
    #[arg(long, value_name = "HOST")]
    pub http: Vec<String>,
    /// Host tool the handler may call (repeatable).
    #[arg(long, value_name = "NAME")]
    pub tool: Vec<String>,
    /// Let the handler ask the configured model.
    #[arg(long)]
    pub llm: bool,
    /// Let the handler use its key-value store.
    #[arg(long)]
    pub kv: bool,
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

/// With no capability flags, grants everything the skill declares.
pub fn grant(args: GrantArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let catalog = ctx.catalog();
    let skill = catalog.get(&args.name).with_context(|| {
        format!(
            "no skill named `{}`; see `skillhost skills list`",
            args.name
        )
    })?;
    let declared = &skill.meta.skillhost.capabilities;
    let asked = Capabilities {
        files: FileCapabilities {
            read: args.read,
            write: args.write,
        },
        http: args.http,
        tools: args.tool,
        llm: args.llm,
        kv: args.kv,
    };
    let everything = asked == Capabilities::default() && !args.limits;
    let capabilities = if everything {
        declared.clone()
    } else {
        let effective = crate::grants::intersect(declared, &asked);
        if effective != asked {
            tracing::info!(
                "note: the skill does not declare everything granted; it will get only: {}",
                describe(&effective)
            );
        }
        asked
    };
    let limits = if everything || args.limits {
        skill.meta.skillhost.limits
    } else {
        LimitSpec::default()
    };
    let pin =
        skill_fingerprint(skill).with_context(|| format!("cannot read skill `{}`", skill.name))?;
    let path = if args.user {
        config::user_file(&ctx.paths)
    } else {
        config::workspace_file(&ctx.paths)
    };
    config::write_grant(
        &path,
        &skill.name,
        Some(&Grant {
            pin: pin.clone(),
            capabilities: capabilities.clone(),
            limits,
        }),
    )?;
    let raised = if limits.is_empty() {
        String::new()
    } else {
        format!(" and its declared limits {}", describe_limits(&limits))
    };
    outln!(
        "granted `{}` {}{raised} (pinned to {pin}) in {}",
        skill.name,
        describe(&capabilities),
        path.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

pub fn revoke(args: RevokeArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let path = if args.user {
        config::user_file(&ctx.paths)
    } else {
        config::workspace_file(&ctx.paths)
    };
    let cfg = crate::config::Config::load(&ctx.paths)?;
    if !cfg.grants.contains_key(&args.name) {
        anyhow::bail!("skill `{}` has no grant to revoke", args.name);
    }
    config::write_grant(&path, &args.name, None)?;
    outln!("revoked the grant of `{}` in {}", args.name, path.display())?;
    Ok(ExitCode::SUCCESS)
}

fn describe(c: &Capabilities) -> String {
    let mut parts = Vec::new();
    if !c.files.read.is_empty() {
        parts.push(format!("read {}", c.files.read.join(", ")));
    }
    if !c.files.write.is_empty() {
        parts.push(format!("write {}", c.files.write.join(", ")));
    }
    if !c.http.is_empty() {
        parts.push(format!("http {}", c.http.join(", ")));
    }
    if !c.tools.is_empty() {
        parts.push(format!("tools {}", c.tools.join(", ")));
    }
    if c.llm {
        parts.push("llm".into());
    }
    if c.kv {
        parts.push("kv".into());
    }
    if parts.is_empty() {
        "nothing beyond computation".into()
    } else {
        parts.join("; ")
    }
}

fn describe_limits(l: &LimitSpec) -> String {
    let mut parts = Vec::new();
    let mut add = |name: &str, v: Option<u64>| {
        if let Some(v) = v {
            parts.push(format!("{name} {v}"));
        }
    };
    add("memory_mb", l.memory_mb);
    add("timeout_ms", l.timeout_ms);
    add("output_kb", l.output_kb);
    add("tables", l.tables.map(u64::from));
    add("table_elements", l.table_elements.map(u64::from));
    add("instances", l.instances.map(u64::from));
    parts.join(", ")
}
