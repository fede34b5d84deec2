//! `skillhost.toml`: the operator's settings. Read from the user file
//! (`$SKILLHOST_HOME/skillhost.toml`) and then the workspace file
//! (`./skillhost.toml`), the workspace winning key by key. Grants live here
//! because they are the operator's decision, not the skill's; `grants`
//! writes them.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::grants::{Grant, Grants, TrustConfig};
pub use crate::paths::CONFIG_FILE;
use crate::paths::{Paths, user_file, workspace_file};
pub use crate::sandbox::{Compiler, LimitDefaults, SandboxConfig};
use crate::store::KvQuota;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub trust: TrustConfig,
    pub limits: LimitDefaults,
    pub sandbox: SandboxConfig,
    pub network: NetworkConfig,
    /// The model for tier 2; none configured means tier 2 is skipped.
    pub model: crate::llm::ModelConfig,
    /// The model loop.
    pub agent: AgentConfig,
    /// Tool policy.
    pub tools: crate::tools::ToolsConfig,
    /// Recording runs and learning rules.
    pub learning: crate::learn::LearningConfig,
    /// Skills from runs, improvement in place, mining.
    #[cfg(feature = "forge")]
    pub forge: crate::forge::ForgeConfig,
    /// Accepted and ignored in a build without the `forge` feature.
    #[cfg(not(feature = "forge"))]
    #[serde(skip_serializing)]
    pub forge: Option<toml::Value>,
    /// The validation gate for installed and generated handlers.
    pub gate: crate::gate_policy::GateConfig,
    /// Operator grants by skill name.
    pub grants: BTreeMap<String, Grant>,
    /// Retrieval: pinned skills.
    pub catalog: crate::skill::CatalogConfig,
    /// The skill text audit at catalog load: on or off, and the flagged
    /// skills the operator allows.
    pub audit: crate::audit::AuditConfig,
    /// `skills install`: the registry and the caps on what one install unpacks.
    pub install: crate::install::InstallConfig,
    /// Context values the operator vouches for (`timezone = "Europe/Paris"`):
    /// a learned rule fills a missing field from here, and says so, instead
    /// of guessing (see `learn::rules::Action::UseDefault`).
    pub defaults: serde_json::Map<String, serde_json::Value>,
    /// `skillhost mcp --http`: calls at once, queued calls, sessions.
    pub mcp: crate::mcp_admission::McpConfig,
    /// Where runs and the rest are stored.
    pub store: crate::store::StoreConfig,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkConfig {
    /// Non-public IP addresses that granted HTTP may still reach, e.g. a
    /// model server on this machine. Empty by default: loopback, private,
    /// link-local and metadata addresses are refused.
    pub allow_private: Vec<std::net::IpAddr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Model turns per run before the loop gives up; at least 1, since a
    /// loop allowed no turn could only fail.
    #[serde(deserialize_with = "at_least_one")]
    pub max_steps: u32,
    /// Tokens (prompt + completion, as the provider reports them) all
    /// model calls of one run may use; the call that crosses it ends the
    /// run with `ModelBudgetExceeded`.
    #[serde(deserialize_with = "positive")]
    pub max_run_tokens: u64,
    /// Wall time, in milliseconds, all model calls of one run may take; a
    /// call still running when it is spent is cut off.
    #[serde(deserialize_with = "positive")]
    pub max_run_model_ms: u64,
}

/// Default `max_run_tokens`: ten steps (the default `max_steps`) each
/// resending a conversation of ~16k tokens, plus their answers. A
/// conversation is sent again every turn, so the sum grows fast.
pub const DEFAULT_MAX_RUN_TOKENS: u64 = 200_000;

/// Default `max_run_model_ms`: ten minutes, enough for ten steps of a
/// small local model on a CPU, and a bound on a run nobody watches.
pub const DEFAULT_MAX_RUN_MODEL_MS: u64 = 600_000;

fn positive<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let n = u64::deserialize(d)?;
    if n == 0 {
        return Err(serde::de::Error::custom(
            "a run's model budget must be at least 1",
        ));
    }
    Ok(n)
}

fn at_least_one<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u32::deserialize(d)?;
    if n == 0 {
        return Err(serde::de::Error::custom("max_steps must be at least 1"));
    }
    Ok(n)
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_steps: 10,
            max_run_tokens: DEFAULT_MAX_RUN_TOKENS,
            max_run_model_ms: DEFAULT_MAX_RUN_MODEL_MS,
        }
    }
}

impl Config {
    /// The user file, then the workspace file over it. A missing file is
    /// not an error; a malformed one is, naming the file.
    pub fn load(paths: &Paths) -> Result<Config, ConfigError> {
        let mut merged = toml::Table::new();
        let (user, workspace) = (user_file(paths), workspace_file(paths));
        for path in [&user, &workspace] {
            if let Some(table) = read_table(path)? {
                if path != &user {
                    operator_only(&table, path, &user)?;
                }
                merge(&mut merged, table);
            }
        }
        Config::deserialize(toml::Value::Table(merged)).map_err(|e| ConfigError::Invalid {
            path: workspace_file(paths),
            message: format!("(merged with {}) {e}", user_file(paths).display()),
        })
    }

    /// The key-value quota `[limits]` sets for every skill.
    pub fn kv_quota(&self) -> KvQuota {
        KvQuota {
            max_bytes: self.limits.kv_quota_kb.saturating_mul(1024),
            max_keys: self.limits.kv_max_keys,
        }
    }

    /// What forging after runs needs of these settings.
    #[cfg(feature = "forge")]
    pub fn forge_inputs(&self, paths: &Paths) -> crate::forge::after_runs::Inputs {
        crate::forge::after_runs::Inputs::new(
            paths,
            self.forge.clone(),
            self.trust.clone(),
            self.grants.clone(),
        )
    }
}

/// `layers` (the user file's text, then the workspace file's) merged and
/// read as [`Config::load`] reads the two files, without touching the
/// disk; errors name the layer by its index.
#[doc(hidden)]
pub fn from_layers(layers: &[&str]) -> Result<Config, ConfigError> {
    let name = |i: usize| PathBuf::from(format!("<layer {i}>"));
    let mut merged = toml::Table::new();
    for (i, text) in layers.iter().enumerate() {
        let table = text
            .parse::<toml::Table>()
            .map_err(|e| ConfigError::Parse {
                path: name(i),
                message: e.to_string(),
            })?;
        if i > 0 {
            operator_only(&table, &name(i), &name(0))?;
        }
        merge(&mut merged, table);
    }
    Config::deserialize(toml::Value::Table(merged)).map_err(|e| ConfigError::Invalid {
        path: name(layers.len().saturating_sub(1)),
        message: e.to_string(),
    })
}

/// Refuses in a workspace file (`path`, which a cloned repository
/// controls) what only the operator may decide, in the user file `user`:
/// `[forge.handler] build_box = "none"`, which builds a model's handler
/// unboxed.
fn operator_only(table: &toml::Table, path: &Path, user: &Path) -> Result<(), ConfigError> {
    let build_box = table
        .get("forge")
        .and_then(|f| f.get("handler"))
        .and_then(|h| h.get("build_box"))
        .and_then(toml::Value::as_str);
    if build_box == Some("none") {
        return Err(ConfigError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "[forge.handler] build_box = \"none\" is refused in a workspace's skillhost.toml: it would build a model's handler unboxed, with the operator's files in reach, and a workspace file comes with whatever repository was cloned; only the operator may choose it, in the user file {}",
                user.display()
            ),
        });
    }
    Ok(())
}

fn read_table(path: &Path) -> Result<Option<toml::Table>, ConfigError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    text.parse::<toml::Table>()
        .map(Some)
        .map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
}

/// Tables merge key by key; any other value from `over` replaces.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o))
                if k != "grants" || b.is_empty() =>
            {
                merge(b, o)
            }
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => {
                // A grant is replaced whole: merging two grants' lists would
                // grant what neither file granted alone.
                for (name, g) in o {
                    b.insert(name, g);
                }
            }
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::{Capabilities, LimitSpec};

    #[test]
    fn the_store_default_kv_quota_is_the_limits_default() {
        let limits = LimitDefaults::default();
        let quota = crate::store::KvQuota::default();
        assert_eq!(quota.max_bytes, limits.kv_quota_kb * 1024);
        assert_eq!(quota.max_keys, limits.kv_max_keys);
    }

    #[test]
    fn workspace_overrides_user_and_grants_replace_whole() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = Paths::under(d.path());
        fs::create_dir_all(&p.home).expect("mkdir");
        fs::create_dir_all(&p.workspace).expect("mkdir");
        fs::write(
            user_file(&p),
            "[limits]\nmemory_mb = 10\ntimeout_ms = 7\n[grants.a]\npin = \"x\"\nllm = true\ntools = [\"t\"]\n",
        )
        .expect("write");
        fs::write(
            workspace_file(&p),
            "[limits]\nmemory_mb = 20\n[grants.a]\npin = \"y\"\nkv = true\n",
        )
        .expect("write");
        let c = Config::load(&p).expect("load");
        assert_eq!(c.limits.memory_mb, 20);
        assert_eq!(c.limits.timeout_ms, 7);
        let g = &c.grants["a"];
        assert_eq!(g.pin, "y");
        assert!(g.capabilities.kv);
        assert!(
            !g.capabilities.llm,
            "user file's llm grant must not leak into the workspace grant"
        );
        assert!(g.capabilities.tools.is_empty());
    }

    #[test]
    fn max_steps_below_one_is_refused_naming_the_file_and_key() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = Paths::under(d.path());
        fs::create_dir_all(&p.workspace).expect("mkdir");
        fs::write(workspace_file(&p), "[agent]\nmax_steps = 0\n").expect("write");
        let e = Config::load(&p).expect_err("zero steps").to_string();
        assert!(e.contains("skillhost.toml"), "{e}");
        assert!(e.contains("max_steps must be at least 1"), "{e}");
        fs::write(workspace_file(&p), "[agent]\nmax_steps = 3\n").expect("write");
        assert_eq!(Config::load(&p).expect("three steps").agent.max_steps, 3);
    }

    #[test]
    fn run_budgets_have_defaults_and_refuse_zero() {
        let agent = from_layers(&[""]).expect("defaults").agent;
        assert_eq!(
            (agent.max_run_tokens, agent.max_run_model_ms),
            (DEFAULT_MAX_RUN_TOKENS, DEFAULT_MAX_RUN_MODEL_MS)
        );
        let set = from_layers(&["[agent]\nmax_run_tokens = 5\nmax_run_model_ms = 7\n"]);
        let agent = set.expect("set").agent;
        assert_eq!((agent.max_run_tokens, agent.max_run_model_ms), (5, 7));
        for key in ["max_run_tokens", "max_run_model_ms"] {
            let e = from_layers(&[&format!("[agent]\n{key} = 0\n")])
                .expect_err("zero")
                .to_string();
            assert!(e.contains(key) && e.contains("at least 1"), "{e}");
        }
    }

    #[test]
    fn store_url_selects_postgres_and_a_bad_one_is_refused_naming_the_setting() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = Paths::under(d.path());
        fs::create_dir_all(&p.workspace).expect("mkdir");
        assert_eq!(
            Config::load(&p).expect("no file").store,
            crate::store::StoreConfig::default(),
            "SQLite by default"
        );
        let url = "postgres://host@db.internal:5432/skillhost";
        fs::write(workspace_file(&p), format!("[store]\nurl = \"{url}\"\n")).expect("write");
        assert_eq!(
            Config::load(&p).expect("a postgres url").store,
            crate::store::StoreConfig::postgres(url)
        );
        for bad in ["mysql://db/skillhost", "postgres://db:port/x"] {
            fs::write(workspace_file(&p), format!("[store]\nurl = \"{bad}\"\n")).expect("write");
            let e = Config::load(&p).expect_err(bad).to_string();
            assert!(e.contains("skillhost.toml"), "{e}");
            assert!(e.contains("`url` in [store]"), "{e}");
        }
    }

    // Issue 39, finding 11: a workspace file unboxed the forge's builds.
    #[test]
    fn only_the_user_file_may_unbox_the_forges_builds() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = Paths::under(d.path());
        fs::create_dir_all(&p.workspace).expect("mkdir");
        fs::create_dir_all(&p.home).expect("mkdir");
        let unbox = "[forge.handler]\nbuild_box = \"none\"\n";
        // Spelled three ways; TOML makes them one key.
        for text in [
            unbox,
            "forge.handler.build_box = \"none\"\n",
            "[forge]\nhandler = { \"build_box\" = \"none\" }\n",
        ] {
            fs::write(workspace_file(&p), text).expect("write");
            let e = Config::load(&p).expect_err("refused");
            let msg = e.to_string();
            assert!(
                msg.contains(&workspace_file(&p).display().to_string()),
                "{msg}"
            );
            assert!(msg.contains("build_box = \"none\" is refused"), "{msg}");
            assert!(msg.contains(&user_file(&p).display().to_string()), "{msg}");
            assert!(from_layers(&["", text]).is_err());
        }
        // The workspace may ask for the box; the user file may unbox.
        fs::write(
            workspace_file(&p),
            "[forge.handler]\nbuild_box = \"bwrap\"\n",
        )
        .expect("write");
        assert!(Config::load(&p).is_ok());
        fs::remove_file(workspace_file(&p)).expect("rm");
        fs::write(user_file(&p), unbox).expect("write");
        let c = Config::load(&p).expect("the operator's choice");
        assert_eq!(
            c.forge.handler.build_box,
            crate::toolchain::buildbox::BuildBox::None
        );
        assert!(from_layers(&[unbox, ""]).is_ok());
    }

    #[test]
    fn malformed_file_names_the_file() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = Paths::under(d.path());
        fs::create_dir_all(&p.workspace).expect("mkdir");
        fs::write(workspace_file(&p), "[limits\n").expect("write");
        let e = Config::load(&p).expect_err("malformed").to_string();
        assert!(e.contains("skillhost.toml"), "{e}");
    }

    #[test]
    fn learning_thresholds_load_and_bad_shares_are_refused() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = Paths::under(d.path());
        fs::create_dir_all(&p.workspace).expect("mkdir");
        fs::write(
            workspace_file(&p),
            "[learning.proposals]\nmin_failures = 5\nmin_failure_match = 0.8\n",
        )
        .expect("write");
        let c = Config::load(&p).expect("load");
        assert_eq!(c.learning.proposals.min_failures, 5);
        assert_eq!(c.learning.proposals.min_failure_match, 0.8);
        assert_eq!(c.learning.proposals.max_success_match, 0.1, "default kept");
        for bad in [
            "[learning.proposals]\nmax_success_match = 10\n",
            "[learning.thresholds]\nmin_frequency = -0.5\n",
        ] {
            fs::write(workspace_file(&p), bad).expect("write");
            let e = Config::load(&p).expect_err(bad).to_string();
            assert!(e.contains("is not a share"), "{bad}: {e}");
        }
        fs::write(
            workspace_file(&p),
            "[learning.proposals]\nmin_falures = 2\n",
        )
        .expect("write");
        let e = Config::load(&p).expect_err("typo").to_string();
        assert!(e.contains("min_falures"), "{e}");
    }

    #[test]
    fn the_compiler_setting_is_tiered_unless_cranelift_is_named() {
        assert_eq!(Config::default().sandbox.compiler, Compiler::Tiered);
        let c: Config = toml::from_str("[sandbox]\ncompiler = \"cranelift\"\n").expect("parse");
        assert_eq!(c.sandbox.compiler, Compiler::Cranelift);
        let e = toml::from_str::<Config>("[sandbox]\ncompiler = \"winch\"\n")
            .expect_err("no winch-only setting")
            .to_string();
        assert!(e.contains("tiered"), "{e}");
    }

    #[test]
    fn write_grant_keeps_comments_and_round_trips() {
        let d = tempfile::tempdir().expect("tempdir");
        let path = d.path().join(CONFIG_FILE);
        fs::write(&path, "# my settings\n[limits]\nmemory_mb = 32\n").expect("write");
        let caps = Capabilities {
            http: vec!["api.example.com".into()],
            llm: true,
            ..Capabilities::default()
        };
        let g = Grant {
            pin: "sha256:abc".into(),
            capabilities: caps,
            limits: LimitSpec {
                memory_mb: Some(256),
                ..LimitSpec::default()
            },
        };
        crate::grants::write_grant(&path, "mailer", Some(&g)).expect("grant");
        let text = fs::read_to_string(&path).expect("read");
        assert!(text.contains("# my settings"), "{text}");
        let c: Config = toml::from_str(&text).expect("parse back");
        assert_eq!(c.grants["mailer"], g);
        assert_eq!(c.limits.memory_mb, 32);
        crate::grants::write_grant(&path, "mailer", None).expect("revoke");
        let c: Config = toml::from_str(&fs::read_to_string(&path).expect("read")).expect("parse");
        assert!(c.grants.is_empty());
    }
}
