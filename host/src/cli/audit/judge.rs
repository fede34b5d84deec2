//! `--model` of `skills audit` and `eval audit`: the optional model judge
//! (`crate::judge`) asked about each skill the static audit does not hold
//! back. Its verdicts are cached in the workspace's state folder.

use std::sync::Arc;

use crate::audit::{self, Finding};
use crate::judge::{self, Judge, Judged, Verdict};
use crate::llm::Provider;
use crate::paths::Paths;

#[derive(Debug, Default, clap::Args)]
pub struct JudgeArgs {
    /// Also ask this model (PROVIDER:MODEL) for a verdict on each skill
    /// the static rules do not hold back; a "hold" verdict is a high
    /// finding. Never required: without it the static audit stands alone.
    #[arg(long = "model", value_name = "PROVIDER:MODEL")]
    pub model: Option<String>,
    /// Base URL of the judge's OpenAI-compatible or Anthropic server.
    #[arg(long, value_name = "URL", requires = "model")]
    pub base_url: Option<String>,
    /// Name of the environment variable that holds the judge's API key.
    #[arg(long, value_name = "VAR", requires = "model")]
    pub api_key_env: Option<String>,
}

/// A judge's provider and cache, when `--model` was given.
pub(super) struct JudgeSetup {
    provider: Arc<dyn Provider>,
    paths: Paths,
    runtime: tokio::runtime::Runtime,
    /// Verdicts asked and read from the cache, and calls that failed.
    pub asked: usize,
    pub cached: usize,
    pub failed: usize,
}

impl JudgeArgs {
    pub(super) fn setup(&self, paths: &Paths) -> anyhow::Result<Option<JudgeSetup>> {
        if self.model.is_none() {
            return Ok(None);
        }
        let overrides = crate::app::ModelOverrides {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key_env: self.api_key_env.clone(),
            max_steps: None,
        };
        let config = crate::app::config_with_overrides(paths, &overrides)?;
        let Some(provider) = config.model.build()? else {
            anyhow::bail!("--model: no model provider could be built from it");
        };
        Ok(Some(JudgeSetup {
            provider,
            paths: paths.clone(),
            runtime: super::super::runtime()?,
            asked: 0,
            cached: 0,
            failed: 0,
        }))
    }
}

impl JudgeSetup {
    /// Adds the judge's finding to `findings` unless they already hold a
    /// high one (the judge decides what the rules cannot). A failed call
    /// (the server down, a text past the model's context) is a warning,
    /// not the audit's end: the static findings stand.
    pub(super) fn review(
        &mut self,
        findings: &mut Vec<Finding>,
        text: impl FnOnce() -> Result<Judged, judge::JudgeError>,
    ) -> anyhow::Result<()> {
        if audit::has_high(findings) {
            return Ok(());
        }
        let judged = text()?;
        let judge = Judge::new(
            self.provider.as_ref(),
            self.paths.state_dir().join("audit-judge"),
        );
        let verdict = match self.runtime.block_on(judge.judge(&judged)) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!(error = %e, "the model judge gave no verdict");
                self.failed += 1;
                return Ok(());
            }
        };
        if verdict.cached {
            self.cached += 1;
        } else {
            self.asked += 1;
        }
        if verdict.verdict == Verdict::Undecided {
            tracing::warn!(reason = %verdict.reason, "the model judge gave no verdict");
        }
        findings.extend(verdict.finding());
        Ok(())
    }

    pub(super) fn model(&self) -> String {
        self.provider.name()
    }
}
