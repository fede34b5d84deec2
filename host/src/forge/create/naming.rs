//! The name and description a draft gets: from the task's words, or from
//! a model given the trajectory.

use serde::Deserialize;

use super::similarity::words;
use super::{Draft, calls, one_line};
use crate::forge::check_slug;
use crate::llm::{ChatRequest, Message, Provider};
use crate::store::RunRecord;

/// The name a draft gets without a model: the task's first content words,
/// else its tools. Public for the fuzz targets (the `fuzzing` module).
#[doc(hidden)]
pub fn default_name(task: &str, uses: &[String]) -> String {
    let mut parts: Vec<String> = words(task).into_iter().take(4).collect();
    if parts.is_empty() {
        parts = uses
            .iter()
            .map(|t| t.trim_start_matches("skill_").replace('_', "-"))
            .collect();
    }
    let mut name = String::new();
    for p in parts {
        let p: String = p
            .chars()
            .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
            .collect();
        if p.is_empty() || name.len() + p.len() + 1 > 56 {
            continue;
        }
        if !name.is_empty() {
            name.push('-');
        }
        name.push_str(&p);
    }
    if name.is_empty() {
        "forged-skill".into()
    } else {
        name
    }
}

const NAMING_SYSTEM: &str = "You turn a successful agent trajectory into a reusable skill. \
Reply with one JSON object and nothing else: {\"name\": \"lowercase-words-with-dashes (at most 64 of a-z, 0-9, _ and -)\", \
\"description\": \"one sentence: what the skill does and when to use it\", \"instructions\": \"markdown instructions for doing such tasks\"}.";

#[derive(Deserialize)]
struct Naming {
    name: String,
    description: String,
    instructions: String,
}

/// Asks the model to name and describe the draft from its trajectory;
/// keeps the deterministic draft when the answer is missing or unusable.
/// True when the model's answer was taken.
pub async fn name_with_model(draft: &mut Draft, run: &RunRecord, provider: &dyn Provider) -> bool {
    let request = ChatRequest {
        system: Some(NAMING_SYSTEM.to_owned()),
        messages: vec![Message::User(naming_prompt(run))],
        tools: Vec::new(),
        max_tokens: Some(4096),
    };
    let text = match provider.chat(&request).await {
        Ok(r) => r.text.unwrap_or_default(),
        Err(e) => {
            tracing::info!(
                "forge: the model did not name the new skill ({e}); named from the task"
            );
            return false;
        }
    };
    let Some(n) = naming_in(&text) else {
        tracing::info!(
            "forge: the model's name for the new skill is not the JSON asked for; named from the task"
        );
        return false;
    };
    let description = one_line(&n.description);
    if !usable(&n, &description) {
        tracing::info!(
            name = %n.name,
            "forge: the model's name, description or instructions are unusable; named from the task"
        );
        return false;
    }
    take_naming(draft, n, description);
    true
}

/// The model's name, description and instructions, the draft's recorded
/// steps kept after them.
fn take_naming(draft: &mut Draft, n: Naming, description: String) {
    let steps = draft
        .instructions
        .split_once("## Steps")
        .map(|(_, s)| format!("\n\n## Recorded steps{s}"))
        .unwrap_or_default();
    draft.name = n.name;
    draft.description = description;
    draft.instructions = format!("{}{steps}", n.instructions.trim());
}

/// The JSON object the model answered with, between its first `{` and
/// its last `}`.
fn naming_in(text: &str) -> Option<Naming> {
    let (a, b) = text.find('{').zip(text.rfind('}')).filter(|(a, b)| a < b)?;
    serde_json::from_str(&text[a..=b]).ok()
}

/// The run for the model: its task, skill, tool calls and answer.
fn naming_prompt(run: &RunRecord) -> String {
    let mut prompt = format!(
        "Task: {}\nSkill used: `{}`\nSuccessful tool calls, in order:\n",
        crate::llm::excerpt(&run.task, 500),
        run.skill
    );
    for c in calls(run) {
        prompt.push_str(&format!(
            "- {} {}\n",
            c.tool,
            crate::llm::excerpt(&c.arguments.to_string(), 300)
        ));
    }
    prompt.push_str(&format!(
        "Final answer: {}\n",
        crate::llm::excerpt(run.output.as_deref().unwrap_or(""), 500)
    ));
    prompt
}

/// A slug for a name, a description of one line of at most 1 KiB, and
/// instructions of at most 16 KiB.
fn usable(n: &Naming, description: &str) -> bool {
    check_slug(&n.name).is_ok()
        && !description.is_empty()
        && description.len() <= 1024
        && !n.instructions.trim().is_empty()
        && n.instructions.len() <= 16 << 10
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_are_slugs() {
        for task in [
            "Turn the Q3 sales notes into a brief in out/",
            "",
            "ÉCRIRE ÇA",
            "../../x",
        ] {
            let n = default_name(task, &["skill_text-summarizer".into()]);
            assert!(check_slug(&n).is_ok(), "{task:?} -> {n}");
        }
    }
}
