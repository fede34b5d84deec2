//! Improvement in place: after a successful use of a forged, user or
//! workspace skill, the configured model may propose a better SKILL.md.
//!
//! The proposal is checked like every forge write (see `writer`): same
//! name, a description, nothing widened. The host, not the model, writes
//! the audit trail into the front matter (`metadata.skillhost.history`:
//! `updated_at`, `reason`, `previous` content hash) and keeps the previous
//! version (see `history`). A refused proposal leaves the file as it was,
//! byte for byte, and is logged with its reason. One attempt per skill per
//! `[forge.improve] cooldown_secs`; another inside the window does nothing.

use serde::Deserialize;
use serde_json::{Value, json};

use super::history::{self, Event, EventKind};
use super::writer::{self, Expect, MAX_SKILL_BYTES, SkillWriter};
use super::{ForgeError, ImproveConfig, Invalid, check_slug, now_secs, rfc3339};
use crate::llm::{ChatRequest, Message, Provider};
use crate::skill::{Skill, content_version, parse_skill};
use crate::store::RunRecord;

/// What an attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImproveOutcome {
    /// Inside the cooldown: nothing asked, nothing written.
    Cooldown,
    /// Written; the previous content is saved as `saved_version`.
    Improved { reason: String, saved_version: u32 },
    /// The proposal was refused; the file is unchanged.
    Rejected { reason: String },
    /// The model proposed nothing.
    Declined { reason: String },
}

const SYSTEM: &str = "You maintain agent skills: SKILL.md files (YAML front matter between --- lines, then markdown instructions). \
You are shown one skill and recent successful runs of it. If the instructions or description can be made clearer, more accurate \
or more useful from what the runs show, propose the whole improved SKILL.md. Keep the `name`. Keep every capability, allowed-tools \
entry, handler and limit as it is or narrower: never ask for more. Reply with one JSON object and nothing else: \
{\"improved\": true, \"reason\": \"one sentence\", \"skill_md\": \"the whole file\"} or {\"improved\": false, \"reason\": \"why not\"}.";

/// Most runs shown to the model.
const MAX_RUNS: usize = 3;
const ANSWER_TOKENS: u32 = 8192;

#[derive(Deserialize)]
struct Reply {
    improved: bool,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    skill_md: Option<String>,
}

/// One attempt at improving `skill` from `runs` (its recent successful
/// runs, newest first).
pub async fn improve(
    writer: &SkillWriter,
    skill: &Skill,
    runs: &[RunRecord],
    provider: &dyn Provider,
    config: &ImproveConfig,
) -> Result<ImproveOutcome, ForgeError> {
    history::editable(skill)?;
    check_slug(&skill.name)?;
    let forge_dir = writer.forge_dir();
    if in_cooldown(&forge_dir, &skill.name, config) {
        return Ok(ImproveOutcome::Cooldown);
    }
    let current = std::fs::read(&skill.path).map_err(ForgeError::io("read", &skill.path))?;
    let request = request(skill, &current, runs);
    let reply = provider.chat(&request).await;
    let lock = writer.lock()?;
    // Another process may have tried while the model was thinking.
    if in_cooldown(&forge_dir, &skill.name, config) {
        return Ok(ImproveOutcome::Cooldown);
    }
    let outcome = match reply {
        Err(e) => ImproveOutcome::Declined {
            reason: format!("the model did not answer: {e}"),
        },
        Ok(r) => match parse_reply(r.text.as_deref().unwrap_or("")) {
            Err(reason) => ImproveOutcome::Rejected { reason },
            Ok(reply) => take_reply(writer, &lock, skill, &current, reply)?,
        },
    };
    if let Some(event) = history_event(skill, &current, &outcome) {
        history::append(&lock, &forge_dir, &skill.name, &event)?;
    }
    Ok(outcome)
}

/// What the model's reply comes to: declined, rejected without a
/// SKILL.md, or the proposal applied.
fn take_reply(
    writer: &SkillWriter,
    lock: &writer::ForgeLock,
    skill: &Skill,
    current: &[u8],
    reply: Reply,
) -> Result<ImproveOutcome, ForgeError> {
    Ok(match reply {
        Reply {
            improved: false,
            reason,
            ..
        } => ImproveOutcome::Declined { reason },
        Reply {
            skill_md: None,
            reason,
            ..
        } => ImproveOutcome::Rejected {
            reason: format!("no skill_md in the reply ({reason})"),
        },
        Reply {
            skill_md: Some(text),
            reason,
            ..
        } => apply(writer, lock, skill, current, &text, &reason)?,
    })
}

/// The history entry for an attempt (none for a cooldown).
fn history_event(skill: &Skill, current: &[u8], outcome: &ImproveOutcome) -> Option<Event> {
    Some(match outcome {
        ImproveOutcome::Improved {
            reason,
            saved_version,
        } => Event {
            previous: Some(content_version(current)),
            version: Some(*saved_version),
            ..Event::new(EventKind::Improved, reason.clone())
        },
        ImproveOutcome::Rejected { reason } => {
            tracing::info!(skill = %skill.name, "forge: improvement refused: {reason}");
            Event::new(EventKind::Rejected, reason.clone())
        }
        ImproveOutcome::Declined { reason } => Event::new(EventKind::Declined, reason.clone()),
        ImproveOutcome::Cooldown => return None,
    })
}

fn in_cooldown(forge_dir: &std::path::Path, name: &str, config: &ImproveConfig) -> bool {
    let window = i64::try_from(config.cooldown_secs).unwrap_or(i64::MAX);
    history::last_attempt(forge_dir, name).is_some_and(|at| now_secs().saturating_sub(at) < window)
}

/// Validates the proposal, adds the audit entry, saves the previous
/// version and writes. Only a write that fails for other reasons than
/// the proposal is an error.
fn apply(
    writer: &SkillWriter,
    lock: &writer::ForgeLock,
    skill: &Skill,
    current: &[u8],
    proposal: &str,
    reason: &str,
) -> Result<ImproveOutcome, ForgeError> {
    let rejected = |i: Invalid| ImproveOutcome::Rejected {
        reason: i.to_string(),
    };
    let old = match parse_skill(current, &skill.name) {
        Ok(o) => o,
        Err(e) => return Ok(rejected(Invalid::Parse(format!("the current file: {e}")))),
    };
    let expect = Expect::replacing(&old);
    let proposed = match writer::validate(proposal.as_bytes(), &expect) {
        Ok(p) => p,
        Err(i) => return Ok(rejected(i)),
    };
    let reason = one_line(reason);
    let text = with_audit_entry(&proposed, &old, &reason, &content_version(current));
    if let Err(i) = writer::validate(text.as_bytes(), &expect) {
        return Ok(rejected(i));
    }
    let saved_version = history::save(lock, &writer.forge_dir(), &skill.name, current)?;
    match writer.replace(lock, &skill.path, current, &text, &expect) {
        Ok(()) => {}
        Err(ForgeError::Invalid(i)) => return Ok(rejected(i)),
        Err(e) => return Err(e),
    }
    tracing::info!(skill = %skill.name, saved_version, "forge: improved: {reason}");
    Ok(ImproveOutcome::Improved {
        reason,
        saved_version,
    })
}

/// The proposal's front matter with the host's own keys taken from the old
/// file (the model cannot rewrite the trail) and one history entry added.
fn with_audit_entry(
    proposed: &crate::skill::ParsedSkill,
    old: &crate::skill::ParsedSkill,
    reason: &str,
    previous: &str,
) -> String {
    let mut front = proposed.meta.raw.as_object().cloned().unwrap_or_default();
    let old_sh = old.meta.raw.pointer("/metadata/skillhost").cloned();
    if let Some(sh) = object_at(&mut front, "metadata").and_then(|m| object_at(m, "skillhost")) {
        // The forge's own keys stay as they were.
        for key in ["source", "created_at", "runs", "uses"] {
            match old_sh.as_ref().and_then(|o| o.get(key)) {
                Some(v) => {
                    sh.insert(key.to_owned(), v.clone());
                }
                None => {
                    sh.remove(key);
                }
            }
        }
        let mut trail = old.meta.skillhost.history.clone();
        trail.push(json!({
            "updated_at": rfc3339(now_secs()),
            "reason": reason,
            "previous": previous,
        }));
        sh.insert("history".into(), Value::Array(trail));
    }
    super::create::compose(&front, &proposed.body)
}

/// `map[key]` as an object, made one (empty) when absent or not one.
fn object_at<'m>(
    map: &'m mut serde_json::Map<String, Value>,
    key: &str,
) -> Option<&'m mut serde_json::Map<String, Value>> {
    let v = map.entry(key).or_insert_with(|| json!({}));
    if !v.is_object() {
        *v = json!({});
    }
    v.as_object_mut()
}

fn request(skill: &Skill, current: &[u8], runs: &[RunRecord]) -> ChatRequest {
    let mut prompt = format!(
        "The skill `{}` (its SKILL.md):\n<skill_md>\n{}\n</skill_md>\n\nRecent successful runs:\n",
        skill.name,
        String::from_utf8_lossy(&current[..current.len().min(MAX_SKILL_BYTES)])
    );
    for r in runs.iter().take(MAX_RUNS) {
        let tools: Vec<&str> = r
            .steps
            .iter()
            .filter(|s| s.kind == "tool" && s.error.is_none())
            .filter_map(|s| s.tool.as_deref())
            .collect();
        prompt.push_str(&format!(
            "- task: {}\n  tools: {}\n  answer: {}\n",
            crate::llm::excerpt(&r.task, 300),
            if tools.is_empty() {
                "none".to_owned()
            } else {
                tools.join(" -> ")
            },
            crate::llm::excerpt(r.output.as_deref().unwrap_or(""), 500)
        ));
    }
    ChatRequest {
        system: Some(SYSTEM.to_owned()),
        messages: vec![Message::User(prompt)],
        tools: Vec::new(),
        max_tokens: Some(ANSWER_TOKENS),
    }
}

/// The reply's JSON object (models wrap it in prose or a code fence).
fn parse_reply(text: &str) -> Result<Reply, String> {
    let (Some(start), Some(end)) = (text.find('{'), text.rfind('}')) else {
        return Err("the reply has no JSON object".into());
    };
    if end < start {
        return Err("the reply has no JSON object".into());
    }
    serde_json::from_str(&text[start..=end])
        .map_err(|e| format!("the reply is not the JSON asked for: {e}"))
}

/// A reason as one short line.
fn one_line(s: &str) -> String {
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = crate::llm::excerpt(&joined, 300);
    if line.is_empty() {
        "improved by the model".into()
    } else {
        line
    }
}
