//! The `[model]` table of `skillhost.toml` and the command-line overrides.
//!
//! ```toml
//! [model]
//! provider = "openai"            # openai | anthropic | ollama | scripted
//! model = "gpt-4o-mini"          # or "openai:gpt-4o-mini" without `provider`
//! base_url = "http://127.0.0.1:11434/v1"   # optional
//! api_key_env = "OPENAI_API_KEY" # the NAME of the variable, never the key
//! timeout_ms = 60000            # one attempt
//! total_timeout_ms = 120000      # one call: every attempt and wait
//! max_retries = 3                # after a 429 or 5xx only
//! max_tokens = 1024              # every request is capped
//! temperature = 0.2              # sent only when set
//! seed = 7                       # sent only when set (OpenAI-compatible)
//! max_skill_tools = 4            # a small context: only the skills search ranks best
//! script = "tests/data/answers.json"       # provider = "scripted" only
//! ```
//!
//! No provider (and no `PROVIDER:MODEL` model, and no script) means no
//! model: tier 2 is skipped, which is not an error.
//!
//! Keys: the official endpoints read `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`
//! unless `api_key_env` names another variable. Any other base URL (a local
//! Ollama, a proxy, OpenRouter) gets a key only when `api_key_env` is set
//! explicitly, so that a key meant for OpenAI is never sent to a third
//! party by accident.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::http::HttpOptions;
use super::{AnthropicProvider, LlmError, OpenAiProvider, Provider, ScriptedProvider};

/// Model settings as written in `skillhost.toml` (`[model]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// `openai` (any Chat Completions server), `anthropic`, `ollama`
    /// (OpenAI-compatible, local default URL, no key) or `scripted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model name; `PROVIDER:MODEL` also sets the provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The API root; defaults to the provider's official endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The name of the environment variable holding the API key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Budget for one HTTP attempt (default 60 000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Budget for one call, every attempt and every wait between them
    /// included (default 120 000: a slow attempt and one retry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_timeout_ms: Option<u64>,
    /// Retries after a 429 or 5xx (default 3); a timeout is not retried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// The answers file of the scripted provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<PathBuf>,
    /// `max_tokens` of a request that sets none (default
    /// [`super::DEFAULT_MAX_TOKENS`]); every provider sends one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature; sent only when set, else the server's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sampling seed, sent by OpenAI-compatible providers only when set
    /// (repeatable answers at a temperature above 0; `eval ablation` sends
    /// one per seed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// At most this many `skill_<name>` tools in one request: those the
    /// catalog's search ranks best for the task (a small model's context
    /// holds few tool definitions). None: every skill the policy offers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_skill_tools: Option<usize>,
}

/// Default of `total_timeout_ms`: twice the default attempt, so that a
/// slow answer can still be followed by one retry after a 5xx.
const DEFAULT_TOTAL_TIMEOUT_MS: u64 = 120_000;

/// The providers this module can build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    OpenAi,
    Anthropic,
    Ollama,
    Scripted,
}

const KNOWN: &str = "openai, anthropic, ollama, scripted";
const OPENAI_URL: &str = "https://api.openai.com/v1";
const ANTHROPIC_URL: &str = "https://api.anthropic.com";
/// 127.0.0.1 rather than `localhost`: Ollama listens on IPv4 by default,
/// and `localhost` may resolve to `::1` first.
const OLLAMA_URL: &str = "http://127.0.0.1:11434/v1";
/// Largest `max_retries` accepted; more only hides an outage.
const MAX_RETRIES_CAP: u32 = 10;

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" => Some(Kind::OpenAi),
            "anthropic" => Some(Kind::Anthropic),
            "ollama" => Some(Kind::Ollama),
            "scripted" => Some(Kind::Scripted),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Kind::OpenAi => "openai",
            Kind::Anthropic => "anthropic",
            Kind::Ollama => "ollama",
            Kind::Scripted => "scripted",
        }
    }

    /// Default URL, its official host (whose key is read by default) and
    /// the default key variable.
    fn defaults(self) -> (&'static str, Option<&'static str>, Option<&'static str>) {
        match self {
            Kind::OpenAi => (OPENAI_URL, Some("api.openai.com"), Some("OPENAI_API_KEY")),
            Kind::Anthropic => (
                ANTHROPIC_URL,
                Some("api.anthropic.com"),
                Some("ANTHROPIC_API_KEY"),
            ),
            Kind::Ollama | Kind::Scripted => (OLLAMA_URL, None, None),
        }
    }
}

impl ModelConfig {
    /// Applies `--model PROVIDER:MODEL` (for scripted: `scripted:PATH`),
    /// `--base-url` and `--api-key-env` over the file settings.
    ///
    /// `--model` with another provider than the file's drops the file's
    /// `base_url`, `api_key_env` and `script`, which belonged to that other
    /// provider; a bare `--model NAME` keeps the file's provider and only
    /// changes the model. `--model none` turns the model off (tier 2 is
    /// skipped).
    pub fn with_overrides(
        self,
        model_flag: Option<&str>,
        base_url: Option<&str>,
        api_key_env: Option<&str>,
    ) -> Result<Self, LlmError> {
        let mut c = self;
        if let Some(flag) = model_flag.map(str::trim) {
            c.apply_model_flag(flag)?;
        }
        if let Some(url) = base_url.map(str::trim).filter(|u| !u.is_empty()) {
            c.base_url = Some(url.to_string());
        }
        if let Some(var) = api_key_env.map(str::trim).filter(|v| !v.is_empty()) {
            c.api_key_env = Some(var.to_string());
        }
        Ok(c)
    }

    /// `--model`: `none`/`off`, `PROVIDER:MODEL`, or a bare model name
    /// for the file's provider.
    fn apply_model_flag(&mut self, flag: &str) -> Result<(), LlmError> {
        if flag.is_empty() {
            return Err(LlmError::Config(format!(
                "--model is empty; expected PROVIDER:MODEL with PROVIDER one of {KNOWN}"
            )));
        }
        if flag.eq_ignore_ascii_case("none") || flag.eq_ignore_ascii_case("off") {
            self.provider = None;
            self.model = None;
            self.script = None;
            return Ok(());
        }
        let file_kind = self.provider.as_deref().and_then(Kind::parse);
        match flag
            .split_once(':')
            .and_then(|(p, rest)| Kind::parse(p).map(|k| (k, rest)))
        {
            Some((kind, rest)) => self.apply_provider_model(flag, kind, rest.trim(), file_kind),
            None => match file_kind {
                // `--model llama3.2:3b` with `provider = "ollama"`.
                Some(kind) if kind != Kind::Scripted => {
                    self.model = Some(flag.to_string());
                    Ok(())
                }
                _ => Err(LlmError::Config(format!(
                    "--model {flag}: no known provider; write it as PROVIDER:MODEL with PROVIDER one of {KNOWN} (e.g. openai:gpt-4o-mini, scripted:answers.json)"
                ))),
            },
        }
    }

    /// `--model PROVIDER:REST`; another provider than the file's drops the
    /// file's settings that belonged to it.
    fn apply_provider_model(
        &mut self,
        flag: &str,
        kind: Kind,
        rest: &str,
        file_kind: Option<Kind>,
    ) -> Result<(), LlmError> {
        if rest.is_empty() {
            let what = if kind == Kind::Scripted {
                "a script path"
            } else {
                "a model name"
            };
            return Err(LlmError::Config(format!(
                "--model {flag}: {what} is missing after `{}:`",
                kind.as_str()
            )));
        }
        if file_kind != Some(kind) {
            self.base_url = None;
            self.api_key_env = None;
            self.script = None;
        }
        self.provider = Some(kind.as_str().to_string());
        if kind == Kind::Scripted {
            self.script = Some(PathBuf::from(rest));
            self.model = None;
        } else {
            self.model = Some(rest.to_string());
        }
        Ok(())
    }

    /// The configured provider, or `None` when no model is configured
    /// (tier 2 is then skipped). Reads the API key from the environment
    /// now, so that a missing key is reported before any work starts.
    pub fn build(&self) -> Result<Option<Arc<dyn Provider>>, LlmError> {
        self.build_with(&|name| std::env::var(name).ok())
    }

    /// [`ModelConfig::build`] with the environment lookup injected (tests
    /// must not mutate the process environment).
    pub(crate) fn build_with(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Arc<dyn Provider>>, LlmError> {
        let Some((kind, model)) = self.resolve()? else {
            return Ok(None);
        };
        if kind == Kind::Scripted {
            return Ok(Some(Arc::new(ScriptedProvider::from_file(
                &self.script_path(model)?,
            )?)));
        }
        let model = model.filter(|m| !m.trim().is_empty()).ok_or_else(|| {
            LlmError::Config(format!(
                "provider \"{0}\" needs a model name: set [model] model or pass --model {0}:MODEL",
                kind.as_str()
            ))
        })?;
        let (base_url, official) = self.base_url_of(kind)?;
        let key = self.api_key(kind, base_url, official, env)?;
        let http = self.http_options()?;
        self.check_sampling()?;
        let provider: Arc<dyn Provider> = match kind {
            Kind::Anthropic => Arc::new(
                AnthropicProvider::new(model, base_url, key.as_deref(), http)?
                    .with_max_tokens(self.max_tokens)
                    .with_temperature(self.temperature),
            ),
            _ => Arc::new(
                OpenAiProvider::new(model, base_url, key.as_deref(), http)?
                    .with_label(kind.as_str())
                    .with_max_tokens(self.max_tokens)
                    .with_temperature(self.temperature)
                    .with_seed(self.seed),
            ),
        };
        Ok(Some(provider))
    }

    /// The scripted provider's file: `script`, else the model's name.
    fn script_path(&self, model: Option<String>) -> Result<PathBuf, LlmError> {
        self.script
            .clone()
            .or_else(|| model.map(PathBuf::from))
            .ok_or_else(|| {
                LlmError::Config(
                    "provider \"scripted\" needs a script: set [model] script = \"PATH\" or pass --model scripted:PATH"
                        .into(),
                )
            })
    }

    /// `base_url` (else the provider's default), checked to be an http(s)
    /// URL with a host, and whether it is the provider's official host.
    fn base_url_of(&self, kind: Kind) -> Result<(&str, bool), LlmError> {
        let (default_url, official_host, _) = kind.defaults();
        let base_url = self
            .base_url
            .as_deref()
            .map(str::trim)
            .unwrap_or(default_url);
        let parsed = reqwest::Url::parse(base_url)
            .map_err(|e| LlmError::Config(format!("base_url {base_url:?} is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(LlmError::Config(format!(
                "base_url {base_url:?} must be an http:// or https:// URL with a host"
            )));
        }
        let official = official_host.is_some_and(|h| parsed.host_str() == Some(h));
        Ok((base_url, official))
    }

    /// The API key from the variable `api_key_env` names, else (for the
    /// official host only) the provider's usual variable; `None` when no
    /// variable applies. A variable named but not set is an error.
    fn api_key(
        &self,
        kind: Kind,
        base_url: &str,
        official: bool,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, LlmError> {
        let (_, _, default_key_env) = kind.defaults();
        let explicit = self.api_key_env.as_deref().map(str::trim);
        if let Some(name) = explicit
            && !is_env_name(name)
        {
            // Do not echo the value: it may be the key pasted by mistake.
            return Err(LlmError::Config(
                "api_key_env must be the NAME of an environment variable (letters, digits, `_`), not the key itself"
                    .into(),
            ));
        }
        let Some(name) = explicit.or(if official { default_key_env } else { None }) else {
            return Ok(None);
        };
        match env(name).filter(|v| !v.trim().is_empty()) {
            Some(v) => Ok(Some(v)),
            None => Err(LlmError::Config(format!(
                "the API key variable {name} is not set (needed for {base_url}); export it, or name another variable with [model] api_key_env / --api-key-env"
            ))),
        }
    }

    /// The timeouts and retries, checked.
    fn http_options(&self) -> Result<HttpOptions, LlmError> {
        let timeout_ms = self.timeout_ms.unwrap_or(60_000);
        let total_ms = self.total_timeout_ms.unwrap_or(DEFAULT_TOTAL_TIMEOUT_MS);
        if timeout_ms == 0 {
            return Err(LlmError::Config("timeout_ms must be more than 0".into()));
        }
        if total_ms == 0 {
            return Err(LlmError::Config(
                "total_timeout_ms must be more than 0".into(),
            ));
        }
        Ok(HttpOptions {
            timeout: Duration::from_millis(timeout_ms),
            total_timeout: Duration::from_millis(total_ms),
            max_retries: self.max_retries.unwrap_or(3).min(MAX_RETRIES_CAP),
            ..HttpOptions::default()
        })
    }

    /// `max_tokens` of at least 1 and a temperature from 0 to 2 (the
    /// widest range a provider takes; a narrower one is the server's to
    /// refuse, in its own words).
    fn check_sampling(&self) -> Result<(), LlmError> {
        if self.max_tokens == Some(0) {
            return Err(LlmError::Config("max_tokens must be at least 1".into()));
        }
        if let Some(t) = self.temperature
            && !(0.0..=2.0).contains(&t)
        {
            return Err(LlmError::Config(format!(
                "temperature {t} is out of range: 0 to 2"
            )));
        }
        Ok(())
    }

    /// The provider kind and model name, from `provider` + `model`, a
    /// `PROVIDER:MODEL` model, or a lone `script`; `None` when there is
    /// no model.
    fn resolve(&self) -> Result<Option<(Kind, Option<String>)>, LlmError> {
        let model = self
            .model
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty());
        if let Some(p) = self
            .provider
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let kind = Kind::parse(p).ok_or_else(|| {
                LlmError::Config(format!("unknown provider {p:?}; expected one of {KNOWN}"))
            })?;
            return Ok(Some((kind, model.map(str::to_string))));
        }
        if let Some(m) = model {
            return match m
                .split_once(':')
                .and_then(|(p, rest)| Kind::parse(p).map(|k| (k, rest)))
            {
                Some((kind, rest)) => Ok(Some((kind, Some(rest.trim().to_string())))),
                None => Err(LlmError::Config(format!(
                    "model {m:?} has no provider: set [model] provider (one of {KNOWN}) or write the model as PROVIDER:MODEL"
                ))),
            };
        }
        if self.script.is_some() {
            return Ok(Some((Kind::Scripted, None)));
        }
        Ok(None)
    }
}

/// Whether `s` can be an environment variable name we would look up.
fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> ModelConfig {
        toml::from_str(toml_text).expect("valid [model] table")
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn build(c: &ModelConfig) -> Result<Option<Arc<dyn Provider>>, LlmError> {
        c.build_with(&no_env)
    }

    fn name(c: &ModelConfig, env: &dyn Fn(&str) -> Option<String>) -> String {
        c.build_with(env)
            .expect("builds")
            .expect("a provider")
            .name()
    }

    #[test]
    fn nothing_configured_means_no_provider() {
        assert!(build(&ModelConfig::default()).expect("ok").is_none());
        assert!(build(&parse("timeout_ms = 5000")).expect("ok").is_none());
    }

    #[test]
    fn toml_round_trip_and_unknown_keys_rejected() {
        let c = parse("provider = \"openai\"\nmodel = \"gpt-4o-mini\"\nmax_retries = 1\n");
        assert_eq!(c.provider.as_deref(), Some("openai"));
        let back: ModelConfig =
            toml::from_str(&toml::to_string(&c).expect("serialize")).expect("reparse");
        assert_eq!(back, c);
        assert!(toml::from_str::<ModelConfig>("api_key = \"sk-x\"").is_err());
    }

    #[test]
    fn official_endpoints_need_their_key() {
        let c = parse("provider = \"openai\"\nmodel = \"gpt-4o-mini\"");
        let e = build(&c).err().expect("missing key").to_string();
        assert!(
            e.contains("OPENAI_API_KEY") && e.contains("https://api.openai.com/v1"),
            "{e}"
        );
        let env = |n: &str| (n == "OPENAI_API_KEY").then(|| "sk-secret".to_string());
        assert_eq!(name(&c, &env), "openai:gpt-4o-mini");

        let c = parse("model = \"anthropic:claude-sonnet-4-5\"");
        let e = build(&c).err().expect("missing key").to_string();
        assert!(e.contains("ANTHROPIC_API_KEY"), "{e}");
        let env = |n: &str| (n == "ANTHROPIC_API_KEY").then(|| "k".to_string());
        assert_eq!(name(&c, &env), "anthropic:claude-sonnet-4-5");
    }

    #[test]
    fn local_servers_need_no_key_and_do_not_get_the_default_one() {
        // Even with OPENAI_API_KEY set, a custom base URL without an
        // explicit api_key_env builds without reading it.
        let read = std::cell::Cell::new(false);
        let env = |n: &str| {
            read.set(true);
            (n == "OPENAI_API_KEY").then(|| "sk".to_string())
        };
        let c = parse(
            "provider = \"openai\"\nmodel = \"qwen\"\nbase_url = \"http://127.0.0.1:8000/v1\"",
        );
        assert_eq!(name(&c, &env), "openai:qwen");
        assert!(
            !read.get(),
            "the default key must not be read for a third-party URL"
        );

        let c = parse("provider = \"ollama\"\nmodel = \"llama3.2\"");
        assert_eq!(name(&c, &no_env), "ollama:llama3.2");
    }

    #[test]
    fn explicit_key_env_is_required_and_named_never_echoed() {
        let c = parse(
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"https://openrouter.ai/api/v1\"\napi_key_env = \"OPENROUTER_API_KEY\"",
        );
        let e = build(&c).err().expect("missing").to_string();
        assert!(e.contains("OPENROUTER_API_KEY"), "{e}");
        let env = |n: &str| (n == "OPENROUTER_API_KEY").then(|| "or-key".to_string());
        assert_eq!(name(&c, &env), "openai:m");

        let mut c = c;
        c.api_key_env = Some("sk-proj-abc123".into());
        let e = build(&c).err().expect("a key, not a name").to_string();
        assert!(!e.contains("sk-proj-abc123"), "{e}");
        assert!(e.contains("NAME"), "{e}");
    }

    #[test]
    fn configuration_errors_are_specific() {
        let err = |t: &str| build(&parse(t)).err().expect("error").to_string();
        assert!(
            err("provider = \"gemini\"\nmodel = \"x\"").contains("unknown provider \"gemini\"")
        );
        assert!(err("provider = \"openai\"").contains("needs a model name"));
        assert!(err("model = \"gpt-4o\"").contains("has no provider"));
        assert!(
            err("provider = \"ollama\"\nmodel = \"m\"\nbase_url = \"ftp://x\"").contains("http://")
        );
        assert!(
            err("provider = \"ollama\"\nmodel = \"m\"\nbase_url = \"not a url\"")
                .contains("not a URL")
        );
        assert!(err("provider = \"ollama\"\nmodel = \"m\"\ntimeout_ms = 0").contains("timeout_ms"));
        let ollama = |extra: &str| err(&format!("provider = \"ollama\"\nmodel = \"m\"\n{extra}"));
        assert!(ollama("total_timeout_ms = 0").contains("total_timeout_ms must be more than 0"));
        assert!(ollama("max_tokens = 0").contains("max_tokens must be at least 1"));
        assert!(ollama("temperature = 2.5").contains("temperature 2.5 is out of range"));
        assert!(err("provider = \"scripted\"").contains("needs a script"));
        assert!(
            err("script = \"/nonexistent/answers.json\"").contains("/nonexistent/answers.json")
        );
    }

    #[test]
    fn scripted_from_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("answers.json");
        std::fs::write(&path, r#"[{"text": "hi"}]"#).expect("write");
        let c = ModelConfig::default()
            .with_overrides(Some(&format!("scripted:{}", path.display())), None, None)
            .expect("override");
        assert_eq!(c.script.as_deref(), Some(path.as_path()));
        assert_eq!(name(&c, &no_env), format!("scripted:{}", path.display()));
    }

    #[test]
    fn overrides() {
        let file = parse(
            "provider = \"anthropic\"\nmodel = \"claude-x\"\nbase_url = \"http://proxy\"\napi_key_env = \"MY_KEY\"\ntimeout_ms = 1000",
        );
        // Same provider: only the model changes.
        let c = file
            .clone()
            .with_overrides(Some("anthropic:claude-y"), None, None)
            .expect("ok");
        assert_eq!(
            (c.model.as_deref(), c.base_url.as_deref()),
            (Some("claude-y"), Some("http://proxy"))
        );
        // Bare model name keeps the provider.
        let c = file
            .clone()
            .with_overrides(Some("claude-z"), None, None)
            .expect("ok");
        assert_eq!(
            (c.provider.as_deref(), c.model.as_deref()),
            (Some("anthropic"), Some("claude-z"))
        );
        // Another provider drops the old provider's URL and key variable.
        let c = file
            .clone()
            .with_overrides(Some("ollama:llama3.2:3b"), None, None)
            .expect("ok");
        assert_eq!(c.provider.as_deref(), Some("ollama"));
        assert_eq!(c.model.as_deref(), Some("llama3.2:3b"));
        assert_eq!(
            (c.base_url, c.api_key_env, c.timeout_ms),
            (None, None, Some(1000))
        );
        // Explicit flags win.
        let c = file
            .clone()
            .with_overrides(
                Some("openai:gpt-4o-mini"),
                Some("http://127.0.0.1:1/v1"),
                Some("K"),
            )
            .expect("ok");
        assert_eq!(c.base_url.as_deref(), Some("http://127.0.0.1:1/v1"));
        assert_eq!(c.api_key_env.as_deref(), Some("K"));
        // Off.
        let c = file
            .clone()
            .with_overrides(Some("none"), None, None)
            .expect("ok");
        assert!(build(&c).expect("ok").is_none());
        // Errors.
        let e = ModelConfig::default()
            .with_overrides(Some("gpt-4o"), None, None)
            .expect_err("no provider");
        assert!(e.to_string().contains("PROVIDER:MODEL"), "{e}");
        let e = file
            .clone()
            .with_overrides(Some("openai:"), None, None)
            .expect_err("no model");
        assert!(e.to_string().contains("model name is missing"), "{e}");
        let e = file
            .with_overrides(Some("scripted:"), None, None)
            .expect_err("no path");
        assert!(e.to_string().contains("script path is missing"), "{e}");
    }

    #[test]
    fn env_names() {
        assert!(is_env_name("OPENAI_API_KEY") && is_env_name("_x1"));
        assert!(
            !is_env_name("") && !is_env_name("1A") && !is_env_name("sk-abc") && !is_env_name("A B")
        );
    }
}
