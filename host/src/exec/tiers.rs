//! One go at the first tier that can answer: the runner resolves the call
//! that tier gets (grants, limits, services) and hands it over.

use std::time::Instant;

use super::call::{Call, Run};
use super::effective::limits_notice;
use super::handler::HandlerCode;
use super::model_loop::{Budget, Model};
use super::outcome::{RunError, RunOutcome, Tier, micros};
use super::{Runner, handler, model_loop, pipeline, template};
use crate::granting::{GrantFile, grant_command};
use crate::grants::Effective;
use crate::llm::Provider;
use crate::sandbox::{FileRoots, Limits};
use crate::skill::{LimitSpec, Skill};

impl Runner {
    /// One go at the first tier that can answer.
    pub(super) async fn attempt(
        &self,
        run: &Run<'_>,
        instructions: &[String],
        outcome: &mut RunOutcome,
    ) -> Result<(), RunError> {
        outcome.attempts += 1;
        let meta = &run.skill.meta.skillhost;
        let model = self.shared.provider.as_deref();
        let prefer_model = self.shared.prefer_model && model.is_some();
        if let (Some(handler), false) = (&meta.handler, prefer_model) {
            outcome.tier = Tier::Handler;
            self.run_handler(run, handler, instructions, outcome)
                .await?;
        } else if let (Some(pipeline), false) = (&meta.pipeline, prefer_model) {
            outcome.tier = Tier::Pipeline;
            let resolved = self.resolved(run.skill, outcome);
            let call = Call::new(run, instructions, resolved, self.toolbox(), outcome);
            pipeline::run(&call, pipeline, outcome).await;
            call.end(outcome);
        } else if let Some(provider) = model {
            outcome.tier = Tier::Model;
            let resolved = self.resolved(run.skill, outcome);
            let services = self.model(provider);
            let mut call = Call::new(run, instructions, resolved, services, outcome);
            model_loop::run(&mut call, outcome).await;
            call.end(outcome);
        } else {
            let resolved = self.template_grants(run.skill);
            let call = Call::new(run, instructions, resolved, (), outcome);
            template::answer(&call, outcome);
            call.end(outcome);
        }
        Ok(())
    }

    /// Tier 1: the handler admitted and compiled, then called.
    #[tracing::instrument(name = "tier", skip_all, fields(tier = "handler", skill = %run.skill.name, depth = run.depth))]
    async fn run_handler(
        &self,
        run: &Run<'_>,
        handler_rel: &str,
        instructions: &[String],
        outcome: &mut RunOutcome,
    ) -> Result<(), RunError> {
        let skill = run.skill;
        let load_started = Instant::now();
        let loaded = self.load_handler(skill, handler_rel, outcome).await?;
        outcome.timings.load_us = micros(load_started);
        let (handler, grants) = match loaded {
            Ok(found) => found,
            Err(stopped) => {
                outcome.failure = Some(stopped);
                return Ok(());
            }
        };
        let code = HandlerCode {
            sandbox: self.sandbox()?,
            handler,
            roots: self.file_roots(skill, handler_rel),
            host: self.services(skill, &grants, run.depth),
        };
        let limits = self.limits(skill, &grants.limits);
        if let Some(n) = limits_notice(skill, &limits, &self.shared.config.limits, || {
            grant_command(&self.shared.paths, skill, GrantFile::Renew, &["--limits"])
        }) {
            outcome.notices.push(n);
        }
        let mut call = Call::new(run, instructions, (grants, limits), code, outcome);
        handler::call(&mut call, outcome).await;
        call.end(outcome);
        Ok(())
    }

    /// The files a handler's call may reach: the skill's folder and the
    /// workspace, its SKILL.md and handler never writable, the host's own
    /// paths out of reach.
    fn file_roots(&self, skill: &Skill, handler_rel: &str) -> FileRoots {
        FileRoots {
            skill_dir: skill.dir.clone(),
            workspace: self.shared.paths.workspace.clone(),
            skill_files: vec![skill.path.clone(), skill.dir.join(handler_rel)],
            control: self.control_paths().clone(),
        }
    }

    /// The grants (noted in the outcome) and limits of a pipeline's or
    /// the model loop's call.
    fn resolved(&self, skill: &Skill, outcome: &mut RunOutcome) -> (Effective, Limits) {
        let grants = self.grants_for(skill, outcome);
        let limits = self.limits(skill, &grants.limits);
        (grants, limits)
    }

    /// A template's call reaches nothing; only a skill that declares
    /// limits can be raised above the defaults, so only then are its
    /// files read for the grant.
    fn template_grants(&self, skill: &Skill) -> (Effective, Limits) {
        let raise = if skill.meta.skillhost.limits.is_empty() {
            LimitSpec::default()
        } else {
            self.current_grants(skill).limits
        };
        (Effective::none(), self.limits(skill, &raise))
    }

    /// What the model loop reaches: the model, the tools, the skill
    /// tools' offer and the learned recovery rules.
    fn model<'a>(&'a self, provider: &'a dyn Provider) -> Model<'a> {
        let s = &self.shared;
        Model {
            provider,
            toolbox: self.toolbox(),
            skill_offer: s.config.model.max_skill_tools.map(|k| (k, self.catalog())),
            max_steps: s.config.agent.max_steps,
            budget: Budget::of(&s.config.agent),
            recovery: s.learning.as_deref().map(|l| (l, &s.config.defaults)),
        }
    }
}
