//! Wiring: a host's runner (catalog, configuration, model, learned rules)
//! built from its paths, the same way for the CLI, the MCP server and a
//! library user.

use std::sync::Arc;

use crate::config::{Config, ConfigError};
use crate::exec::{Extras, Runner};
use crate::learn::rules::RulesError;
use crate::learn::{Learning, RuleFilter};
use crate::llm::{LlmError, Provider};
use crate::paths::Paths;
use crate::skill::{Catalog, LoadOptions};

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Model(#[from] LlmError),
    #[error(transparent)]
    Rules(#[from] RulesError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// Model settings given for one command, over `[model]` and `[agent]` in
/// skillhost.toml.
#[derive(Debug, Clone, Default)]
pub struct ModelOverrides {
    /// `PROVIDER:MODEL`.
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// The environment variable holding the API key (never the key).
    pub api_key_env: Option<String>,
    pub max_steps: Option<u32>,
}

/// Whom the runner serves: one command, or a protocol's many clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Command,
    /// A handler still running at its first tick moves to threads of its
    /// own, so that none holds up the protocol (`[sandbox]
    /// dedicated_threads`).
    Server,
}

/// The merged configuration with `overrides` applied, and the model it
/// configures (None: no model).
pub fn config_with_model(
    paths: &Paths,
    overrides: &ModelOverrides,
) -> Result<(Config, Option<Arc<dyn Provider>>), AppError> {
    let config = config_with_overrides(paths, overrides)?;
    let provider = config.model.build()?;
    Ok((config, provider))
}

/// The merged configuration with `overrides` applied; no model is built
/// (an evaluation builds one only when asked for a real model).
pub fn config_with_overrides(
    paths: &Paths,
    overrides: &ModelOverrides,
) -> Result<Config, AppError> {
    let mut config = Config::load(paths)?;
    if let Some(n) = overrides.max_steps {
        config.agent.max_steps = n;
    }
    config.model = config.model.clone().with_overrides(
        overrides.model.as_deref(),
        overrides.base_url.as_deref(),
        overrides.api_key_env.as_deref(),
    )?;
    Ok(config)
}

/// The catalog over every root of `paths`, audited as `[audit]` of the
/// configuration says; its warnings are logged.
pub fn catalog(paths: &Paths) -> Catalog {
    let audit = match Config::load(paths) {
        Ok(c) => c.audit,
        // The command that needs the configuration reports it; the audit
        // stays on, allowing nothing.
        Err(e) => {
            tracing::debug!("{e}");
            crate::audit::AuditConfig::default()
        }
    };
    catalog_with(paths, &audit)
}

/// [`catalog`] with the `[audit]` section given.
pub fn catalog_with(paths: &Paths, audit: &crate::audit::AuditConfig) -> Catalog {
    let cache = crate::audit::FindingsCache::open(&paths.audit_cache());
    let catalog =
        Catalog::load_audited(&paths.roots(), &LoadOptions::default(), audit, Some(&cache));
    if let Err(e) = cache.save() {
        tracing::debug!("cannot keep the audit's findings: {e}");
    }
    for w in catalog.warnings() {
        tracing::warn!("{w}");
    }
    catalog
}

/// A runner over the full catalog with the merged configuration, the
/// model and, when `[learning] apply` is on, the learned rules.
pub fn runner(paths: &Paths, overrides: &ModelOverrides, role: Role) -> Result<Runner, AppError> {
    let (mut config, provider) = config_with_model(paths, overrides)?;
    if role == Role::Server {
        config.sandbox.dedicated_threads = true;
    }
    // A store the hosts share holds the rules too, so it is opened now
    // (a server's is always there); SQLite's file waits for the first run.
    let store = match &config.store.url {
        Some(_) => Some(config.store.open(&paths.state_dir(), config.kv_quota())?),
        None => None,
    };
    let learning = if config.learning.apply {
        let book = crate::learn::RuleBook::of(
            &paths.state_dir(),
            store.clone().and_then(crate::store::SharedStoreHandle::of),
        );
        let (l, warnings) = Learning::open_book(book, RuleFilter::All)?;
        for w in warnings {
            tracing::warn!("{w}");
        }
        Some(Arc::new(l))
    } else {
        None
    };
    let catalog = Arc::new(catalog_with(paths, &config.audit));
    let runner = Runner::with_catalog(
        paths.clone(),
        config,
        catalog,
        Extras {
            provider,
            learning,
            store,
            ..Extras::default()
        },
    );
    runner.catch_up();
    Ok(runner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace_config(paths: &Paths, text: &str) {
        std::fs::create_dir_all(&paths.workspace).expect("mkdir");
        std::fs::write(paths.workspace.join("skillhost.toml"), text).expect("write");
    }

    #[test]
    fn a_server_runner_keeps_handlers_off_the_protocol_threads() {
        let d = tempfile::tempdir().expect("tempdir");
        let paths = Paths::under(d.path());
        let overrides = ModelOverrides::default();
        let command = runner(&paths, &overrides, Role::Command).expect("runner");
        let server = runner(&paths, &overrides, Role::Server).expect("runner");
        assert!(!command.config().sandbox.dedicated_threads);
        assert!(server.config().sandbox.dedicated_threads);
    }

    #[test]
    fn overrides_win_over_the_config_file() {
        let d = tempfile::tempdir().expect("tempdir");
        let paths = Paths::under(d.path());
        workspace_config(&paths, "[agent]\nmax_steps = 4\n");
        let (config, model) = config_with_model(&paths, &ModelOverrides::default()).expect("load");
        assert_eq!(config.agent.max_steps, 4);
        assert!(model.is_none());
        let overrides = ModelOverrides {
            max_steps: Some(7),
            ..ModelOverrides::default()
        };
        let (config, _) = config_with_model(&paths, &overrides).expect("load");
        assert_eq!(config.agent.max_steps, 7);
    }

    #[test]
    fn a_malformed_config_file_is_an_error_naming_it() {
        let d = tempfile::tempdir().expect("tempdir");
        let paths = Paths::under(d.path());
        workspace_config(&paths, "[agent\n");
        let e = runner(&paths, &ModelOverrides::default(), Role::Command)
            .err()
            .expect("malformed");
        assert!(e.to_string().contains("skillhost.toml"), "{e}");
    }
}
