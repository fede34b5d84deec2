//! A simulated email-writing model: a test device for the ablation, not a
//! model.
//!
//! It reads its whole prompt ([`super::reading`]): the email-writer's own
//! instructions (which already ask for the timezone, no spam words and the
//! attachments), the learned rules, the context and any feedback a retry
//! carries. For each thing it can get wrong it has a tendency (the rates
//! below), and an instruction lowers it by how well the model follows that
//! instruction: `compliance × relevance × salience`, where relevance is
//! how specifically the instruction speaks of this need in this task.
//! Compliance is a parameter (the ablation sweeps it).
//!
//! The world is open. Besides the mistakes the validators know, it makes
//! others in forms they do not recognise, which only the ground-truth
//! checker sees:
//! - it names a timezone nobody gave (a guess) instead of saying none is
//!   known ([`GUESS_RATE`], lowered by instructions not to guess);
//! - it slips the time by twelve hours ([`TIME_SLIP_RATE`], no instruction
//!   helps);
//! - on a promotional task it adds a call to action, in words some
//!   validators know ("Act now!") and some they do not ("Don't miss
//!   out!");
//! - it names the wrong attachment, or says the file "will be attached in
//!   a follow-up email";
//! - and it writes "Feel free to reach out", which the spam validator
//!   flags although nothing is wrong with it.
//!
//! Draws are keyed by (seed, task, attempt), so two arms of an ablation see
//! the same luck on the same task and differ only by what they were told.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::Regex;
use serde_json::Value;

use super::reading::{Need, Prompt};
use super::time_forms::{TIME_FORMS, TimeForm, find_time, render_time};
use crate::llm::{ChatRequest, ChatResponse, LlmError, Provider, Usage};
use crate::types::{BoxFuture, constant_regex as re};

/// The model's tendencies, before any instruction.
pub const ZONE_RATE: f64 = 0.40;
pub const GUESS_RATE: f64 = 0.50;
pub const TIME_SLIP_RATE: f64 = 0.04;
pub const SPAM_RATE: f64 = 0.35;
pub const PUSHY_RATE: f64 = 0.25;
pub const HABIT_RATE: f64 = 0.12;
pub const ATTACHMENT_RATE: f64 = 0.30;
pub const WRONG_ITEM_RATE: f64 = 0.06;
pub const FORMAT_RATE: f64 = 0.05;
/// Probability that a time is written in the task's own form.
pub const ECHO_TASK_FORM: f64 = 0.5;

/// The failure classes of the email scenario, as the skill names them.
pub const TIMEZONE: &str = "TimezoneError";
pub const SPAM: &str = "SpamTriggerError";
pub const ATTACHMENT: &str = "AttachmentError";
pub const FORMAT: &str = "FormatError";
pub const CLASSES: [&str; 4] = [FORMAT, TIMEZONE, SPAM, ATTACHMENT];
/// What the device writes after a time when no timezone is known and it
/// does not guess.
pub const UNKNOWN_TIMEZONE: &str = "timezone not given";

const ACT: &[&str] = &[
    "state",
    "give",
    "gives",
    "include",
    "mention",
    "name",
    "write",
    "add",
    "specify",
    "say",
    "next to",
    "beside",
    "with its",
    "along with",
    "list",
];

pub const NEED_SUBJECT: Need = Need {
    name: "subject line",
    topic: &["subject", "subject line", "title line", "heading"],
    aspects: &[&["start", "begin", "first line", "open", "top"], ACT],
    avoidance: false,
    contrary: &[],
};
pub const NEED_ZONE: Need = Need {
    name: "timezone",
    topic: &[
        "timezone",
        "timezones",
        "time zone",
        "time zones",
        "utc offset",
        "offset from utc",
        "utc",
        "gmt",
        "local time",
        "clock region",
    ],
    aspects: &[
        &[
            "time",
            "times",
            "hour",
            "hours",
            "time of day",
            "o'clock",
            "clock",
            "meeting time",
        ],
        ACT,
    ],
    avoidance: false,
    contrary: &["leave it out", "not needed", "no need"],
};
pub const NEED_NO_GUESS: Need = Need {
    name: "no guessed timezone",
    topic: &[
        "guess", "guessing", "invent", "make up", "assume", "made up",
    ],
    aspects: &[
        &[
            "unknown",
            "not known",
            "is known",
            "say so",
            "not given",
            "unconfirmed",
        ],
        &["timezone", "time zone", "utc offset", "zone"],
    ],
    avoidance: true,
    contrary: &["assume utc", "default to utc", "pick a likely", "pick one"],
};
pub const NEED_SPAM: Need = Need {
    name: "no spam words",
    topic: &[
        "spam",
        "junk",
        "filter",
        "filters",
        "promotional",
        "marketing",
        "salesy",
        "sales language",
        "hype",
        "pushy",
        "advertising",
    ],
    aspects: &[
        &[
            "word",
            "words",
            "wording",
            "phrase",
            "phrases",
            "language",
            "terms",
            "expressions",
        ],
        &[
            "avoid",
            "never",
            "rephrase",
            "replace",
            "reword",
            "remove",
            "drop",
            "do not use",
            "neutral",
            "instead",
            "tone down",
            "plain",
        ],
    ],
    avoidance: true,
    contrary: &[
        "keep them",
        "as written",
        "verbatim",
        "unchanged",
        "is fine",
        "are fine",
        "no need to",
        "leave them",
    ],
};
pub const NEED_ATTACHMENT: Need = Need {
    name: "attachment listed",
    topic: &[
        "attach",
        "attached",
        "attachment",
        "attachments",
        "enclose",
        "enclosed",
        "enclosure",
        "send along",
        "file",
        "files",
        "document",
        "documents",
    ],
    aspects: &[&[
        "list",
        "name",
        "names",
        "naming",
        "mention",
        "say",
        "state",
        "line",
        "end with",
        "please find",
        "confirm",
    ]],
    avoidance: false,
    contrary: &["handled by the mail client"],
};

/// The model's own lexicons: what it takes for a timezone, a spam phrase,
/// a request for an attachment and the thing to attach. Broader than the
/// validators in places, narrower in others.
static TZ_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(UTC|GMT|CET|CEST|EST|EDT|PST|PDT|BST|JST|(Europe|America|Asia|Australia|Africa)/[A-Za-z_]+)\b",
    )
});
static SPAM_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(free|urgent(ly)?|exclusive|act\s+now|limited\s+time|guaranteed?|winner|cash|no-cost|special\s+offer)\b",
    )
});
static ATTACH_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(attach\w*|enclos\w*|include the \w+|send (the|our) [\w ]{1,30} along|share (the|our) \w+|put (the|our) \w+ in)\b|\bwith (the|our) (deck|slides|spreadsheet|document|pdf)\b",
    )
});
static ITEM_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(report|document|file|deck|slides|spreadsheet|contract|invoice|minutes|agenda|pdf)\b",
    )
});

const REPHRASED: &[(&str, &str)] = &[
    ("free", "complimentary"),
    ("urgent", "time-sensitive"),
    ("urgently", "promptly"),
    ("exclusive", "dedicated"),
    ("guarantee", "commitment"),
    ("guaranteed", "assured"),
    ("winner", "selected participant"),
    ("cash", "payment"),
    ("act now", "reply when convenient"),
    ("limited time", "set period"),
    ("no-cost", "included"),
    ("special offer", "new option"),
];
const PUSHY: [&str; 3] = [
    "Act now!",
    "Don't miss out!",
    "Hurry, this offer will not last!",
];
const OTHER_ITEMS: [&str; 3] = ["the slides", "the agenda", "the invoice"];

/// Whether the task asks for an attachment, in the model's understanding.
pub fn asks_for_attachment(task: &str) -> bool {
    ATTACH_RE.is_match(task)
}

/// The timezone the task names, if any.
pub fn task_timezone(task: &str) -> Option<String> {
    TZ_RE.find(task).map(|m| m.as_str().to_owned())
}

/// The spam phrases in `text`, as written.
pub fn spam_phrases(text: &str) -> Vec<String> {
    SPAM_RE
        .find_iter(text)
        .map(|m| m.as_str().to_owned())
        .collect()
}

pub struct SimulatedEmailModel {
    seed: u64,
    compliance: f64,
    attempts: Mutex<HashMap<String, u64>>,
}

/// One answer in the making: the draws for (task, attempt).
struct Draft<'a> {
    model: &'a SimulatedEmailModel,
    prompt: &'a Prompt,
    attempt: u64,
}

impl Draft<'_> {
    fn draw(&self, what: &str) -> f64 {
        uniform_draw(
            self.model.seed ^ 0x9e37_79b9_7f4a_7c15,
            &self.prompt.task,
            self.attempt,
            what,
        )
    }

    fn pick(&self, what: &str, n: usize) -> usize {
        ((self.draw(what) * n as f64) as usize).min(n.saturating_sub(1))
    }

    /// Whether the model makes the mistake `what` (tendency `rate`) when
    /// its prompt speaks to `need` as it does.
    fn slips(&self, what: &str, rate: f64, need: &Need, specifics: &[String]) -> bool {
        let follows = self.prompt.follows(need, specifics, self.model.compliance);
        self.draw(what) < rate * (1.0 - follows)
    }

    fn time_line(&self) -> Option<String> {
        let task = &self.prompt.task;
        let time = find_time(task)?;
        let zone = task_timezone(task)
            .or_else(|| Some(self.prompt.context_text("timezone")).filter(|z| !z.is_empty()));
        let mut specifics: Vec<String> = TIME_FORMS
            .iter()
            .filter_map(|f| render_time(time.hour, time.minute, *f))
            .collect();
        specifics.push(task[time.start..time.end].to_owned());
        let form = if self.draw("time-echo") < ECHO_TASK_FORM {
            time.form
        } else {
            TIME_FORMS[self.pick("time-form", TIME_FORMS.len())]
        };
        let hour = if self.draw("time-slip") < TIME_SLIP_RATE {
            (time.hour + 12) % 24
        } else {
            time.hour
        };
        let written = render_time(hour, time.minute, form)
            .or_else(|| render_time(hour, time.minute, TimeForm::Colon24))
            .unwrap_or_default();
        if self.slips("timezone", ZONE_RATE, &NEED_ZONE, &specifics) {
            return Some(format!("We meet at {written}."));
        }
        let zone = match zone {
            Some(z) => z,
            None if self.slips("guess", GUESS_RATE, &NEED_NO_GUESS, &specifics) => {
                ["UTC", "CET", "EST"][self.pick("guessed", 3)].to_owned()
            }
            None => UNKNOWN_TIMEZONE.to_owned(),
        };
        Some(format!("We meet at {written} ({zone})."))
    }

    fn spam_lines(&self) -> Vec<String> {
        let phrases = spam_phrases(&self.prompt.task);
        if phrases.is_empty() {
            return Vec::new();
        }
        let mut lines = Vec::new();
        let words: Vec<String> = if self.slips("spam", SPAM_RATE, &NEED_SPAM, &phrases) {
            let case = self.pick("spam-case", 4);
            phrases
                .iter()
                .map(|w| match case {
                    0 | 1 => w.clone(),
                    2 => w.to_uppercase(),
                    _ => capitalised(w),
                })
                .collect()
        } else {
            phrases.iter().map(|w| rephrase(w)).collect()
        };
        lines.push(format!("This is about: {}.", words.join(", ")));
        if self.slips("pushy", PUSHY_RATE, &NEED_SPAM, &phrases) {
            lines.push(PUSHY[self.pick("pushy-which", PUSHY.len())].to_owned());
        }
        lines
    }

    fn attachment_line(&self) -> Option<String> {
        let task = &self.prompt.task;
        if !asks_for_attachment(task) {
            return None;
        }
        let files: Vec<String> = self
            .prompt
            .context
            .get("attachments")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let item = if files.is_empty() {
            ITEM_RE
                .find(task)
                .map(|m| format!("the {}", m.as_str().to_lowercase()))
                .unwrap_or_else(|| "the requested document".into())
        } else {
            files.join(", ")
        };
        let specifics = vec![item.clone(), item.trim_start_matches("the ").to_owned()];
        if self.slips("attachment", ATTACHMENT_RATE, &NEED_ATTACHMENT, &specifics) {
            return match self.pick("attach-miss", 3) {
                0 => None,
                1 => Some(format!("I will send {item} separately.")),
                _ => Some(format!(
                    "{} will be attached in a follow-up email.",
                    capitalised(&item)
                )),
            };
        }
        let item = if self.draw("wrong-item") < WRONG_ITEM_RATE {
            OTHER_ITEMS[self.pick("other-item", OTHER_ITEMS.len())].to_owned()
        } else {
            item
        };
        Some(match self.pick("attach-form", 4) {
            0 => format!("Please find attached: {item}."),
            1 => format!("I have enclosed {item}."),
            2 => format!("{} is attached below.", capitalised(&item)),
            _ => format!("I've put {item} in this email."),
        })
    }

    fn email(&self) -> String {
        let mut body = String::from("Hello,\n\nI am writing to follow up on your request.\n");
        let lines = self
            .time_line()
            .into_iter()
            .chain(self.spam_lines())
            .chain(self.attachment_line());
        for line in lines {
            body.push_str(&line);
            body.push('\n');
        }
        if self.slips("habit", HABIT_RATE, &NEED_SPAM, &[]) {
            body.push_str("Feel free to reach out with any questions.\n");
        }
        body.push_str("\nBest regards,\n");
        if self.slips("format", FORMAT_RATE, &NEED_SUBJECT, &[]) {
            body
        } else {
            format!("Subject: A note on your request\n\n{body}")
        }
    }
}

impl SimulatedEmailModel {
    pub fn new(seed: u64, compliance: f64) -> Self {
        SimulatedEmailModel {
            seed,
            compliance,
            attempts: Mutex::new(HashMap::new()),
        }
    }

    /// The email for a prompt as read.
    pub fn compose(&self, prompt: &Prompt) -> String {
        let attempt = next_attempt(&self.attempts, &prompt.task);
        Draft {
            model: self,
            prompt,
            attempt,
        }
        .email()
    }

    fn write(&self, req: &ChatRequest) -> Result<String, LlmError> {
        let prompt = Prompt::read(req)
            .ok_or_else(|| LlmError::Scripted("the simulated model got no user message".into()))?;
        Ok(self.compose(&prompt))
    }
}

/// A uniform draw in [0, 1) fixed by (seed, task, attempt, what): the
/// same question gets the same answer in every arm of an ablation.
pub(super) fn uniform_draw(seed: u64, task: &str, attempt: u64, what: &str) -> f64 {
    let mut h = seed;
    for b in task
        .bytes()
        .chain(what.bytes())
        .chain(attempt.to_le_bytes())
    {
        h = splitmix(h ^ u64::from(b));
    }
    (splitmix(h) >> 11) as f64 / (1u64 << 53) as f64
}

/// This task's attempt number (0 for its first answer) in `attempts`.
pub(super) fn next_attempt(attempts: &Mutex<HashMap<String, u64>>, task: &str) -> u64 {
    let mut a = attempts.lock().unwrap_or_else(|p| p.into_inner());
    let n = a.entry(task.to_owned()).or_insert(0);
    *n += 1;
    *n - 1
}

/// A simulated model's answer: text only, no tool call, nothing counted.
pub(super) fn text_answer(text: String) -> ChatResponse {
    ChatResponse {
        response_bytes: text.len(),
        text: Some(text),
        tool_calls: Vec::new(),
        usage: Usage::default(),
        request_bytes: 0,
        retries: 0,
    }
}

pub(super) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

pub(super) fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn rephrase(phrase: &str) -> String {
    let lower = phrase
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    REPHRASED
        .iter()
        .find(|(w, _)| *w == lower)
        .map(|(_, r)| (*r).to_owned())
        .unwrap_or_else(|| "notable".to_owned())
}

impl Provider for SimulatedEmailModel {
    fn name(&self) -> String {
        format!("simulated-email:{}", self.seed)
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move { Ok(text_answer(self.write(req)?)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::tasks::{Labels, email_tasks};
    use crate::eval::truth::{self, check_email};
    use crate::llm::Message;

    const SKILL_MD: &str = include_str!("../../../skills/email-writer/SKILL.md");

    /// The skill's body, as the model loop puts it in the prompt.
    fn skill_body() -> &'static str {
        SKILL_MD.splitn(3, "---").nth(2).unwrap_or("").trim()
    }

    fn request(task: &str, ctx: &str, skill: &str, learned: &[&str]) -> ChatRequest {
        let mut system = format!("Skill.\n<skill_instructions>\n{skill}\n</skill_instructions>\n");
        if !learned.is_empty() {
            system.push_str("<learned_rules>\n");
            for l in learned {
                system.push_str(&format!("- {l}\n"));
            }
            system.push_str("</learned_rules>\n");
        }
        let ctx: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(ctx).expect("a JSON object");
        system.push_str(&crate::exec::context_block(&ctx));
        ChatRequest {
            system: Some(system),
            messages: vec![Message::User(task.to_owned())],
            tools: vec![],
            max_tokens: None,
        }
    }

    /// Share of `n` answers (distinct tasks) with a truth miss of `class`.
    fn share(
        compliance: f64,
        n: usize,
        class: &str,
        task: impl Fn(usize) -> String,
        labels: &Labels,
        skill: &str,
        learned: &[&str],
    ) -> f64 {
        let m = SimulatedEmailModel::new(7, compliance);
        let hits = (0..n)
            .filter(|i| {
                let email = m
                    .write(&request(&task(*i), "{}", skill, learned))
                    .expect("email");
                check_email(labels, &email).iter().any(|x| x.class == class)
            })
            .count();
        hits as f64 / n as f64
    }

    fn at_3pm(i: usize) -> String {
        format!("Email Ana about review {i} at 3pm")
    }

    fn zone_labels() -> Labels {
        Labels {
            time: Some("15:00".into()),
            ..Labels::default()
        }
    }

    #[test]
    fn the_skills_own_instructions_help_and_more_with_compliance() {
        let n = 3000;
        let l = zone_labels();
        let bare = share(0.7, n, truth::TIMEZONE, at_3pm, &l, "", &[]);
        let skill = share(0.7, n, truth::TIMEZONE, at_3pm, &l, skill_body(), &[]);
        let skill_high = share(0.9, n, truth::TIMEZONE, at_3pm, &l, skill_body(), &[]);
        assert!(skill < bare - 0.05, "{skill} vs {bare}");
        assert!(skill_high < skill, "{skill_high} vs {skill}");
        // Unhelped, compliance changes nothing.
        let bare_high = share(0.9, n, truth::TIMEZONE, at_3pm, &l, "", &[]);
        assert!((bare_high - bare).abs() < 1e-9);
    }

    #[test]
    fn an_instruction_helps_by_what_it_means() {
        let n = 3000;
        let l = zone_labels();
        let with = |learned: &[&str]| share(0.7, n, truth::TIMEZONE, at_3pm, &l, "", learned);
        let none = with(&[]);
        let keyword = with(&["timezone"]);
        let meant = with(&["State every time of day with its timezone."]);
        let synonyms = with(&["Next to each hour you write, name its UTC offset."]);
        let contrary = with(&["Never mention the timezone of a time."]);
        assert!(
            meant < keyword && keyword < none,
            "{meant} {keyword} {none}"
        );
        assert!((synonyms - meant).abs() < 0.03, "{synonyms} vs {meant}");
        assert!((contrary - none).abs() < 1e-9, "{contrary} vs {none}");
    }

    #[test]
    fn the_model_makes_mistakes_the_validators_do_not_see() {
        let raw = crate::skill::parse_skill(SKILL_MD.as_bytes(), "email-writer").expect("parses");
        let (validators, _) = crate::learn::validators(&raw.meta.skillhost.validators);
        let m = SimulatedEmailModel::new(11, 0.7);
        let (mut unseen, mut false_alarms) = (0, 0);
        for t in email_tasks(5, 400) {
            let ctx = serde_json::Value::Object(t.context.clone()).to_string();
            let email = m
                .write(&request(&t.task, &ctx, skill_body(), &[]))
                .expect("email");
            let misses = check_email(t.truth.as_ref().expect("labels"), &email);
            let facts = crate::learn::condition::Facts {
                task: &t.task,
                skill: "email-writer",
                context: &t.context,
                output: Some(&email),
                failure: None,
            };
            let flagged = validators.iter().any(|v| v.fails(&facts));
            unseen += usize::from(!misses.is_empty() && !flagged);
            false_alarms += usize::from(misses.is_empty() && flagged);
        }
        assert!(unseen > 10, "{unseen}");
        assert!(false_alarms > 5, "{false_alarms}");
    }

    #[test]
    fn the_same_seed_task_and_attempt_give_the_same_email() {
        let a = SimulatedEmailModel::new(1, 0.7);
        let b = SimulatedEmailModel::new(1, 0.7);
        let r = request("Send the free report at noon", "{}", skill_body(), &[]);
        assert_eq!(a.write(&r).expect("a"), b.write(&r).expect("b"));
    }
}
