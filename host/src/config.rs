//! `skillhost.toml`: the operator's settings. Read from the user file
//! (`$SKILLHOST_HOME/skillhost.toml`) and then the workspace file
//! (`./skillhost.toml`), the workspace winning key by key. Grants live here
//! because they are the operator's decision, not the skill's.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::paths::Paths;
use crate::skill::{Capabilities, LimitSpec};

pub const CONFIG_FILE: &str = "skillhost.toml";

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
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
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
    /// Operator grants by skill name.
    pub grants: BTreeMap<String, Grant>,
}

/// Which sources get what they declare without an explicit grant.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrustConfig {
    /// Skills shipped inside the binary.
    pub bundled: bool,
    /// Skills in the workspace's `.skillhost/skills` and `.agents/skills`.
    pub workspace: bool,
}

impl Default for TrustConfig {
    fn default() -> Self {
        TrustConfig {
            bundled: true,
            workspace: true,
        }
    }
}

/// Limits applied to every handler call, and the ceilings a skill's own
/// `limits` may not exceed. A skill may ask for less than a default on its
/// own; above a default it needs the operator's grant (`[grants.NAME.limits]`,
/// or trust by source), and never above the `max_*` ceiling. The per-call
/// host allowances (`host_mb`, `resources`, `open_files`) and the file quota
/// are the operator's alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitDefaults {
    /// Linear memory of one call, all memories of the component together.
    pub memory_mb: u64,
    /// Wall-clock time of one call.
    pub timeout_ms: u64,
    /// Everything a call returns: body, content type, flags, or a failure's
    /// class and message.
    pub output_kb: u64,
    /// Tables of one call.
    pub tables: u32,
    /// Table elements of one call, all tables together.
    pub table_elements: u32,
    /// Core and component instances of one call.
    pub instances: u32,
    pub max_memory_mb: u64,
    pub max_timeout_ms: u64,
    pub max_output_kb: u64,
    pub max_tables: u32,
    pub max_table_elements: u32,
    pub max_instances: u32,
    /// The host allowance: a call's linear memories and the host memory it
    /// makes the host hold (resource-table entries, HTTP header fields,
    /// request paths, events, what it returns) together stay within
    /// `memory_mb` plus this.
    pub host_mb: u64,
    /// Host objects (descriptors, streams, HTTP fields, ...) one call may
    /// hold at once.
    pub resources: u32,
    /// Open files and directories one call may hold at once.
    pub open_files: u32,
    /// Bytes a skill may keep in the folders it may write, all together.
    pub file_quota_mb: u64,
    /// Key and value bytes a skill may keep in the key-value store, all
    /// together. The store is for small state (counters, settings, cached
    /// answers), not bulk data, which belongs in a granted folder: 1 MiB is
    /// sixteen values of the largest size a single write takes (64 KiB).
    pub kv_quota_kb: u64,
    /// Keys a skill may keep in the key-value store. Bounds the rows, whose
    /// own overhead the byte quota does not count: without it, 1 MiB would
    /// hold a million one-byte keys. 1,000 is far above what a handler's
    /// state needs and keeps a skill's rows cheap to count on every write.
    pub kv_max_keys: u64,
}

impl Default for LimitDefaults {
    fn default() -> Self {
        LimitDefaults {
            memory_mb: 64,
            timeout_ms: 5_000,
            output_kb: 1_024,
            tables: 20,
            table_elements: 100_000,
            instances: 50,
            max_memory_mb: 1_024,
            max_timeout_ms: 60_000,
            max_output_kb: 16 * 1_024,
            max_tables: 100,
            max_table_elements: 1_000_000,
            max_instances: 200,
            host_mb: 32,
            resources: 4_096,
            open_files: 64,
            file_quota_mb: 64,
            kv_quota_kb: 1_024,
            kv_max_keys: 1_000,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// Use wasmtime's pooling allocator. On by default: release figures
    /// (`benches/sandbox.rs`, 2 cores) put a trivial call at 0.20-0.21x
    /// its time with on-demand allocation (10.4-10.7 µs against 51-54 µs),
    /// which maps and unmaps every memory and stack per call and so also
    /// keeps concurrent calls from scaling. The pool holds 64 calls at
    /// once; more wait for a slot within their time limit.
    pub pooling: bool,
    /// Keep compiled components on disk, keyed by content and engine.
    pub cache: bool,
    /// Largest component the host will compile.
    pub max_component_mb: u64,
    /// Largest single function body the host will compile. Compile time and
    /// memory grow faster than linearly with a function's size, so this is
    /// what bounds them; the largest function of a real handler (an
    /// interpreter loop of the Python or JavaScript runtime) is far below it.
    pub max_function_kb: u64,
    /// How long a call waits for its handler to compile.
    pub compile_timeout_ms: u64,
    /// Run handlers on threads of their own, apart from the threads that
    /// serve requests: a handler spinning to its deadline then never
    /// delays another client's answer. Costs two thread hand-offs per
    /// call; `skillhost mcp` always turns it on.
    pub dedicated_threads: bool,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            pooling: true,
            cache: true,
            max_component_mb: 100,
            max_function_kb: 2_048,
            compile_timeout_ms: 120_000,
            dedicated_threads: false,
        }
    }
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
    /// Model turns per run before the loop gives up.
    pub max_steps: u32,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig { max_steps: 10 }
    }
}

/// What the operator granted one skill, pinned to its fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// The skill's fingerprint (SKILL.md + handler) when it was granted.
    pub pin: String,
    #[serde(flatten)]
    pub capabilities: Capabilities,
    /// How far the skill's own limits may go above the defaults.
    #[serde(default, skip_serializing_if = "LimitSpec::is_empty")]
    pub limits: LimitSpec,
}

impl Config {
    /// The user file, then the workspace file over it. A missing file is
    /// not an error; a malformed one is, naming the file.
    pub fn load(paths: &Paths) -> Result<Config, ConfigError> {
        let mut merged = toml::Table::new();
        for path in [user_file(paths), workspace_file(paths)] {
            if let Some(table) = read_table(&path)? {
                merge(&mut merged, table);
            }
        }
        Config::deserialize(toml::Value::Table(merged)).map_err(|e| ConfigError::Invalid {
            path: workspace_file(paths),
            message: format!("(merged with {}) {e}", user_file(paths).display()),
        })
    }
}

pub fn user_file(paths: &Paths) -> PathBuf {
    paths.home.join(CONFIG_FILE)
}

pub fn workspace_file(paths: &Paths) -> PathBuf {
    paths.workspace.join(CONFIG_FILE)
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

/// Sets or removes one skill's grant in a config file, keeping the rest of
/// the file (comments included) as it was.
pub fn write_grant(path: &Path, skill: &str, grant: Option<&Grant>) -> Result<(), ConfigError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| ConfigError::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
    let grants = doc
        .entry("grants")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or_else(|| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: "`grants` must be a table".into(),
        })?;
    match grant {
        Some(g) => {
            let value = toml::to_string(g).map_err(|e| ConfigError::Invalid {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
            let table: toml_edit::DocumentMut =
                value
                    .parse()
                    .map_err(|e: toml_edit::TomlError| ConfigError::Parse {
                        path: path.to_path_buf(),
                        message: e.to_string(),
                    })?;
            grants.insert(skill, toml_edit::Item::Table(table.as_table().clone()));
        }
        None => {
            grants.remove(skill);
        }
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|source| ConfigError::Write {
            path: path.to_path_buf(),
            source,
        })?;
    }
    crate::fsutil::write_atomic(path, doc.to_string().as_bytes()).map_err(|source| {
        ConfigError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(dir: &Path) -> Paths {
        Paths {
            home: dir.join("home"),
            workspace: dir.join("ws"),
            bundled: None,
            extra_skills: vec![],
            cache_override: None,
        }
    }

    #[test]
    fn workspace_overrides_user_and_grants_replace_whole() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = paths(d.path());
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
    fn malformed_file_names_the_file() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = paths(d.path());
        fs::create_dir_all(&p.workspace).expect("mkdir");
        fs::write(workspace_file(&p), "[limits\n").expect("write");
        let e = Config::load(&p).expect_err("malformed").to_string();
        assert!(e.contains("skillhost.toml"), "{e}");
    }

    #[test]
    fn learning_thresholds_load_and_bad_shares_are_refused() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = paths(d.path());
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
        write_grant(&path, "mailer", Some(&g)).expect("grant");
        let text = fs::read_to_string(&path).expect("read");
        assert!(text.contains("# my settings"), "{text}");
        let c: Config = toml::from_str(&text).expect("parse back");
        assert_eq!(c.grants["mailer"], g);
        assert_eq!(c.limits.memory_mb, 32);
        write_grant(&path, "mailer", None).expect("revoke");
        let c: Config = toml::from_str(&fs::read_to_string(&path).expect("read")).expect("parse");
        assert!(c.grants.is_empty());
    }
}
