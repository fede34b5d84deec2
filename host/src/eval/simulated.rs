//! A simulated email-writing model: a test device for the ablation, not a
//! model. It writes an email for the task and makes each of the reference
//! scenario's mistakes at a fixed rate, unless its prompt covers that
//! mistake, in which case it complies with probability [`COMPLIANCE`].
//!
//! What "covers" means is fixed and documented, so a rule helps only if it
//! really changes what the model is told:
//! - timezone: the context has a non-empty `timezone`, or a learned
//!   instruction mentions "timezone";
//! - spam words: the context has `rephrase_spam: true`, or a learned
//!   instruction mentions "spam";
//! - attachment: the context lists `attachments`, or a learned instruction
//!   mentions "attach".
//!
//! Learned instructions are read from the `<learned_rules>` block of the
//! system prompt; the skill's own instructions are not (every email-writer
//! prompt contains them, learned or not).
//!
//! Draws are keyed by (seed, task, attempt), so two arms of an ablation see
//! the same luck on the same task and differ only by what they were told.

use std::collections::HashMap;
use std::sync::Mutex;

use regex::Regex;
use serde_json::{Map, Value};

use crate::llm::{ChatRequest, ChatResponse, LlmError, Message, Provider, Usage};
use crate::types::BoxFuture;

/// Mistake rates of the reference scenario.
pub const TIMEZONE_RATE: f64 = 0.40;
pub const SPAM_RATE: f64 = 0.35;
pub const ATTACHMENT_RATE: f64 = 0.30;
pub const FORMAT_RATE: f64 = 0.05;
/// Probability of following an instruction that covers a mistake.
pub const COMPLIANCE: f64 = 0.9;

const SPAM: &[(&str, &str)] = &[
    ("free", "complimentary"),
    ("urgent", "time-sensitive"),
    ("urgently", "promptly"),
    ("exclusive", "dedicated"),
    ("guarantee", "commitment"),
    ("guaranteed", "assured"),
    ("winner", "selected participant"),
    ("cash", "payment"),
];

pub struct SimulatedEmailModel {
    seed: u64,
    attempts: Mutex<HashMap<String, u64>>,
    time: Regex,
    spam: Regex,
    attach: Regex,
}

impl SimulatedEmailModel {
    pub fn new(seed: u64) -> Self {
        SimulatedEmailModel {
            seed,
            attempts: Mutex::new(HashMap::new()),
            time: Regex::new(r"(?i)\b\d{1,2}(:\d{2})?\s*(am|pm|a\.m\.?|p\.m\.?|o'clock)|\b\d{1,2}:\d{2}\b|\b(noon|midnight)\b")
                .expect("constant regex"),
            spam: Regex::new(r"(?i)\b(free|urgent(ly)?|exclusive|guaranteed?|winner|cash)\b").expect("constant regex"),
            attach: Regex::new(r"(?i)\b(attach\w*|documents?|files?|reports?)\b").expect("constant regex"),
        }
    }

    /// A uniform draw in [0, 1) fixed by (seed, task, attempt, what).
    fn draw(&self, task: &str, attempt: u64, what: &str) -> f64 {
        let mut h = self.seed ^ 0x9e37_79b9_7f4a_7c15;
        for b in task
            .bytes()
            .chain(what.bytes())
            .chain(attempt.to_le_bytes())
        {
            h = splitmix(h ^ u64::from(b));
        }
        (splitmix(h) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Whether the model makes the mistake `what` this time.
    fn mistake(&self, task: &str, attempt: u64, what: &str, rate: f64, covered: bool) -> bool {
        let p = if covered {
            rate * (1.0 - COMPLIANCE)
        } else {
            rate
        };
        self.draw(task, attempt, what) < p
    }

    fn write(&self, req: &ChatRequest) -> Result<String, LlmError> {
        let user = req
            .messages
            .iter()
            .find_map(|m| match m {
                Message::User(t) => Some(t.as_str()),
                _ => None,
            })
            .ok_or_else(|| LlmError::Scripted("the simulated model got no user message".into()))?;
        let (task, context) = parse_user(user);
        let learned = learned_rules(req.system.as_deref().unwrap_or(""));
        let attempt = {
            let mut a = self.attempts.lock().unwrap_or_else(|p| p.into_inner());
            let n = a.entry(task.clone()).or_insert(0);
            *n += 1;
            *n - 1
        };
        let text_of = |k: &str| {
            context
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_owned()
        };
        let timezone = text_of("timezone");
        let tz_covered = !timezone.is_empty() || learned.contains("timezone");
        let spam_covered = context
            .get("rephrase_spam")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            || learned.contains("spam");
        let attachments: Vec<String> = context
            .get("attachments")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let attach_covered = !attachments.is_empty() || learned.contains("attach");

        let mut topic = task.trim().trim_end_matches(['.', '!']).to_owned();
        if self.spam.is_match(&topic)
            && !self.mistake(&task, attempt, "spam", SPAM_RATE, spam_covered)
        {
            topic = self
                .spam
                .replace_all(&topic, |c: &regex::Captures<'_>| rephrase(&c[0]))
                .into_owned();
        }
        if let Some(m) = self.time.find(&topic)
            && !self.mistake(&task, attempt, "timezone", TIMEZONE_RATE, tz_covered)
        {
            let tz = if timezone.is_empty() {
                "UTC".to_owned()
            } else {
                timezone.clone()
            };
            topic = format!("{} ({tz}){}", &topic[..m.end()], &topic[m.end()..]);
        }
        let mut email = String::new();
        if !self.mistake(&task, attempt, "format", FORMAT_RATE, false) {
            email.push_str(&format!("Subject: {}\n\n", subject(&topic)));
        }
        email.push_str(&format!(
            "Hello,\n\nI am writing about the following: {topic}.\n"
        ));
        if self.attach.is_match(&task)
            && !self.mistake(
                &task,
                attempt,
                "attachment",
                ATTACHMENT_RATE,
                attach_covered,
            )
        {
            let files = if attachments.is_empty() {
                "the requested document".to_owned()
            } else {
                attachments.join(", ")
            };
            email.push_str(&format!("\nPlease find attached: {files}.\n"));
        }
        email.push_str("\nBest regards,\n");
        Ok(email)
    }
}

pub(super) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn rephrase(word: &str) -> String {
    let lower = word.to_lowercase();
    SPAM.iter()
        .find(|(w, _)| *w == lower)
        .map(|(_, r)| (*r).to_owned())
        .unwrap_or_else(|| "notable".to_owned())
}

fn subject(topic: &str) -> String {
    let s: String = topic.chars().take(60).collect();
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => "Hello".into(),
    }
}

/// "Task: T\n\nContext (JSON): {...}" as the model loop writes it.
fn parse_user(user: &str) -> (String, Map<String, Value>) {
    let body = user.strip_prefix("Task: ").unwrap_or(user);
    match body.split_once("\n\nContext (JSON): ") {
        Some((task, ctx)) => (
            task.to_owned(),
            serde_json::from_str::<Value>(ctx)
                .ok()
                .and_then(|v| v.as_object().cloned())
                .unwrap_or_default(),
        ),
        None => (body.to_owned(), Map::new()),
    }
}

/// The lowercase text of the `<learned_rules>` block, if any.
fn learned_rules(system: &str) -> String {
    match (
        system.find("<learned_rules>"),
        system.find("</learned_rules>"),
    ) {
        (Some(a), Some(b)) if b > a => system[a..b].to_lowercase(),
        _ => String::new(),
    }
}

impl Provider for SimulatedEmailModel {
    fn name(&self) -> String {
        format!("simulated-email:{}", self.seed)
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let text = self.write(req)?;
            Ok(ChatResponse {
                response_bytes: text.len(),
                text: Some(text),
                tool_calls: Vec::new(),
                usage: Usage::default(),
                request_bytes: 0,
                retries: 0,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(task: &str, ctx: &str, learned: &str) -> ChatRequest {
        ChatRequest {
            system: Some(format!(
                "skill...\n<learned_rules>\n{learned}\n</learned_rules>"
            )),
            messages: vec![Message::User(format!(
                "Task: {task}\n\nContext (JSON): {ctx}"
            ))],
            tools: vec![],
            max_tokens: None,
        }
    }

    #[test]
    fn mistake_rates_match_the_scenario_and_coverage_cuts_them() {
        let m = SimulatedEmailModel::new(7);
        let n = 4000;
        let (mut bare, mut told) = (0, 0);
        for i in 0..n {
            let task = format!("Email Ana about the review at 3pm, take {i}");
            let out = m.write(&request(&task, "{}", "")).expect("email");
            if !out.contains("(UTC)") {
                bare += 1;
            }
            let out = m
                .write(&request(
                    &task,
                    "{}",
                    "- State every time with its timezone.",
                ))
                .expect("email");
            if !out.contains("(UTC)") {
                told += 1;
            }
        }
        let bare = bare as f64 / n as f64;
        let told = told as f64 / n as f64;
        assert!((bare - TIMEZONE_RATE).abs() < 0.03, "{bare}");
        assert!(
            (told - TIMEZONE_RATE * (1.0 - COMPLIANCE)).abs() < 0.02,
            "{told}"
        );
    }

    #[test]
    fn the_same_seed_task_and_attempt_give_the_same_email() {
        let a = SimulatedEmailModel::new(1);
        let b = SimulatedEmailModel::new(1);
        let r = request("Send the free report at noon", "{}", "");
        assert_eq!(a.write(&r).expect("a"), b.write(&r).expect("b"));
        // The skill's own instructions do not count as coverage.
        let skill_only = ChatRequest {
            system: Some("Never use spam words; give the timezone; attach files.".into()),
            ..request("x", "{}", "")
        };
        assert!(learned_rules(skill_only.system.as_deref().unwrap_or("")).is_empty());
    }
}
