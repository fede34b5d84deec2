//! A simulated email-writing model: a test device for the ablation, not a
//! model. It writes an email for the task and makes each of the reference
//! scenario's mistakes at a fixed rate, unless its prompt covers that
//! mistake, in which case it complies with probability [`COMPLIANCE`].
//!
//! The world is open: the model reads the task with its own, broad
//! understanding (not the validators' regexes) and writes each mistake in
//! one of many surface forms, some of which no validator may know:
//! - a time of day ([`TimeForm`]): as the task wrote it with probability
//!   [`ECHO_TASK_FORM`], otherwise in a form drawn uniformly from
//!   [`TIME_FORMS`]: "3pm", "3 PM", "3 p.m.", "3 p.m" (no final dot),
//!   "15:00", "15h00", "15.00 Uhr", words ("half past two", "three
//!   o'clock", "quarter to four") and "noon"/"midnight" (24-hour when the
//!   drawn form cannot say the time: only 12:00 and 0:00 have names, and
//!   words need a full, half or quarter hour);
//! - spam words (free, urgent, exclusive, act now, limited time,
//!   guarantee, winner, cash): kept as the task wrote them (1/2), in upper
//!   case (1/4) or capitalised (1/4), and with probability
//!   [`SPAM_EXTRA`] the model adds "Act now" or "for a limited time";
//! - an attachment the task asks for (attach, enclose, include, "put X
//!   in", deck, slides, report, ...): a correct answer says it in one of
//!   four forms ("Please find attached: X.", "I have enclosed X.", "X is
//!   attached below.", "I've put X in this email."); the mistake leaves it
//!   out (1/2) or promises to send it separately (1/2).
//!
//! What "covers" a mistake is fixed and documented, and checked for every
//! form the task can take:
//! - timezone: the task names one (UTC, CET, Europe/Paris, ...), the
//!   context has a non-empty `timezone`, or a learned instruction mentions
//!   "timezone";
//! - spam words: the context has `rephrase_spam: true`, or a learned
//!   instruction mentions "spam";
//! - attachment: the context lists `attachments`, or a learned instruction
//!   mentions "attach".
//!
//! Learned instructions are read from the `<learned_rules>` block of the
//! system prompt; the skill's own instructions are not (every email-writer
//! prompt contains them, learned or not).
//!
//! Ground truth: every answer's real mistakes go to a [`TruthLog`] the
//! evaluation harness owns (a side channel; the host never sees it), so
//! success can be judged without the validators.
//!
//! Draws are keyed by (seed, task, attempt), so two arms of an ablation see
//! the same luck on the same task and differ only by what they were told.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

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
/// Probability that a time is written in the task's own form.
pub const ECHO_TASK_FORM: f64 = 0.5;
/// Probability that a spam mistake adds a call to action of its own.
pub const SPAM_EXTRA: f64 = 0.3;

/// The failure classes of the email scenario, as the skill names them.
pub const TIMEZONE: &str = "TimezoneError";
pub const SPAM: &str = "SpamTriggerError";
pub const ATTACHMENT: &str = "AttachmentError";
pub const FORMAT: &str = "FormatError";
pub const CLASSES: [&str; 4] = [FORMAT, TIMEZONE, SPAM, ATTACHMENT];
/// What the device writes after a time when no timezone is known: it says
/// so rather than guess one.
pub const UNKNOWN_TIMEZONE: &str = "timezone not given";

/// One answer the model gave and the mistakes it really made in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truth {
    pub task: String,
    pub attempt: u64,
    /// Failure classes of the mistakes in the answer.
    pub mistakes: Vec<&'static str>,
    /// The surface forms used (`time:15h00`, `attach:enclosed`, ...).
    pub forms: Vec<String>,
}

/// The side channel: what the model really did, answer by answer.
pub type TruthLog = Arc<Mutex<Vec<Truth>>>;

const SPAM_WORDS: &[(&str, &str)] = &[
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
];

const NUMBERS: [&str; 13] = [
    "twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
];

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("constant regex")
}

static SPAM_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(free|urgent(ly)?|exclusive|act\s+now|limited\s+time|guaranteed?|winner|cash)\b")
});
static TZ_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(UTC|GMT|CET|CEST|EST|EDT|PST|PDT|BST|JST|(Europe|America|Asia|Australia|Africa)/[A-Za-z_]+)\b",
    )
});
static ATTACH_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(attach\w*|enclos\w*|documents?|files?|reports?|deck|slides|spreadsheet|pdf)\b|\bput (the|our) \w+ in\b",
    )
});
static ITEM_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(the|our) (report|document|file|deck|slides|spreadsheet|contract|invoice|minutes|agenda|pdf)\b",
    )
});

/// How a time is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeForm {
    /// 3pm
    Compact,
    /// 3 PM
    Upper,
    /// 3 p.m.
    Dotted,
    /// 3 p.m (no final dot)
    HalfDotted,
    /// 15:00
    Colon24,
    /// 15h00
    French,
    /// 15.00 Uhr
    German,
    /// half past two, three o'clock, quarter to four
    Words,
    /// noon, midnight
    Named,
}

pub const TIME_FORMS: [TimeForm; 9] = [
    TimeForm::Compact,
    TimeForm::Upper,
    TimeForm::Dotted,
    TimeForm::HalfDotted,
    TimeForm::Colon24,
    TimeForm::French,
    TimeForm::German,
    TimeForm::Words,
    TimeForm::Named,
];

/// A time of day found in a task: where, in which form, and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundTime {
    pub start: usize,
    pub end: usize,
    pub form: TimeForm,
    pub hour: u32,
    pub minute: u32,
}

static TIME_PATTERNS: LazyLock<Vec<(TimeForm, Regex)>> = LazyLock::new(|| {
    let words = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve";
    vec![
        (
            TimeForm::Dotted,
            re(r"(?i)\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.m\.?"),
        ),
        (
            TimeForm::Compact,
            re(r"(?i)\b(\d{1,2})(?::(\d{2}))?\s*([ap])m\b"),
        ),
        (TimeForm::French, re(r"\b(\d{1,2})h(\d{2})\b")),
        (TimeForm::German, re(r"\b(\d{1,2})(?:\.(\d{2}))?\s*Uhr\b")),
        (TimeForm::Colon24, re(r"\b(\d{1,2}):(\d{2})\b")),
        (TimeForm::Named, re(r"(?i)\b(noon|midday|midnight)\b")),
        (
            TimeForm::Words,
            re(&format!(
                r"(?i)\b(half past|quarter past|quarter to) ({words})\b|\b({words}) o'clock\b"
            )),
        ),
    ]
});

fn word_hour(w: &str) -> Option<u32> {
    NUMBERS[1..]
        .iter()
        .position(|n| n.eq_ignore_ascii_case(w))
        .map(|i| i as u32 + 1)
}

/// Office hours: a bare "two" or "half past three" is in the afternoon
/// from 1 to 7, in the morning from 8 to 11.
fn office_hour(h: u32) -> u32 {
    if (1..=7).contains(&h) { h + 12 } else { h }
}

/// The first time of day in `text`, in any form the model knows.
pub fn find_time(text: &str) -> Option<FoundTime> {
    let mut best: Option<FoundTime> = None;
    for (form, re) in TIME_PATTERNS.iter() {
        let Some(c) = re.captures(text) else { continue };
        let m = c.get(0).expect("whole match");
        let num = |i: usize| c.get(i).and_then(|g| g.as_str().parse::<u32>().ok());
        let (hour, minute, form) = match form {
            TimeForm::Dotted | TimeForm::Compact => {
                let h = num(1).unwrap_or(0) % 12;
                let pm = c
                    .get(3)
                    .is_some_and(|g| g.as_str().eq_ignore_ascii_case("p"));
                let whole = m.as_str();
                let form = if *form == TimeForm::Dotted && !whole.ends_with('.') {
                    TimeForm::HalfDotted
                } else if *form == TimeForm::Compact && whole.contains(['A', 'P']) {
                    TimeForm::Upper
                } else {
                    *form
                };
                (if pm { h + 12 } else { h }, num(2).unwrap_or(0), form)
            }
            TimeForm::French | TimeForm::German | TimeForm::Colon24 => {
                (num(1).unwrap_or(0), num(2).unwrap_or(0), *form)
            }
            TimeForm::Named => {
                let noon = !m.as_str().eq_ignore_ascii_case("midnight");
                (if noon { 12 } else { 0 }, 0, *form)
            }
            TimeForm::Words | TimeForm::Upper | TimeForm::HalfDotted => {
                if let Some(h) = c.get(3).and_then(|g| word_hour(g.as_str())) {
                    (office_hour(h), 0, *form)
                } else {
                    let h = c.get(2).and_then(|g| word_hour(g.as_str())).unwrap_or(12);
                    let kind = c
                        .get(1)
                        .map(|g| g.as_str().to_lowercase())
                        .unwrap_or_default();
                    match kind.as_str() {
                        "half past" => (office_hour(h), 30, *form),
                        "quarter past" => (office_hour(h), 15, *form),
                        _ => ((office_hour(h) + 23) % 24, 45, *form),
                    }
                }
            }
        };
        if hour > 23 || minute > 59 {
            continue;
        }
        let found = FoundTime {
            start: m.start(),
            end: m.end(),
            form,
            hour,
            minute,
        };
        if best.as_ref().is_none_or(|b| found.start < b.start) {
            best = Some(found);
        }
    }
    best
}

/// `hour:minute` written in `form`, or `None` when the form cannot say it
/// (only 12:00 and 0:00 have names; words need a full, half or quarter
/// hour).
pub fn render_time(hour: u32, minute: u32, form: TimeForm) -> Option<String> {
    let h12 = match hour % 12 {
        0 => 12,
        h => h,
    };
    let am = hour < 12;
    let mm = if minute == 0 {
        String::new()
    } else {
        format!(":{minute:02}")
    };
    Some(match form {
        TimeForm::Compact => format!("{h12}{mm}{}", if am { "am" } else { "pm" }),
        TimeForm::Upper => format!("{h12}{mm} {}", if am { "AM" } else { "PM" }),
        TimeForm::Dotted => format!("{h12}{mm} {}", if am { "a.m." } else { "p.m." }),
        TimeForm::HalfDotted => format!("{h12}{mm} {}", if am { "a.m" } else { "p.m" }),
        TimeForm::Colon24 => format!("{hour}:{minute:02}"),
        TimeForm::French => format!("{hour}h{minute:02}"),
        TimeForm::German => format!("{hour}.{minute:02} Uhr"),
        TimeForm::Named => match (hour, minute) {
            (12, 0) => "noon".into(),
            (0, 0) => "midnight".into(),
            _ => return None,
        },
        TimeForm::Words => {
            let word = |h: u32| NUMBERS[(h % 12) as usize];
            match minute {
                0 => format!("{} o'clock", word(hour)),
                30 => format!("half past {}", word(hour)),
                15 => format!("quarter past {}", word(hour)),
                45 => format!("quarter to {}", word(hour + 1)),
                _ => return None,
            }
        }
    })
}

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
    attempts: Mutex<HashMap<String, u64>>,
    truth: Option<TruthLog>,
}

impl SimulatedEmailModel {
    pub fn new(seed: u64) -> Self {
        SimulatedEmailModel {
            seed,
            attempts: Mutex::new(HashMap::new()),
            truth: None,
        }
    }

    /// Also reports every answer's real mistakes to `log`.
    pub fn with_truth(mut self, log: TruthLog) -> Self {
        self.truth = Some(log);
        self
    }

    /// A uniform draw in [0, 1) fixed by (seed, task, attempt, what).
    fn draw(&self, task: &str, attempt: u64, what: &str) -> f64 {
        uniform_draw(self.seed ^ 0x9e37_79b9_7f4a_7c15, task, attempt, what)
    }

    /// Index in 0..n fixed by (seed, task, attempt, what).
    fn pick(&self, task: &str, attempt: u64, what: &str, n: usize) -> usize {
        ((self.draw(task, attempt, what) * n as f64) as usize).min(n.saturating_sub(1))
    }

    /// Whether the model makes the mistake `what` this time.
    fn mistake(&self, task: &str, attempt: u64, what: &str, rate: f64, covered: bool) -> bool {
        self.draw(task, attempt, what) < mistake_rate(rate, covered)
    }

    /// The email for a task and context; the truth goes to the log.
    pub fn compose(&self, task: &str, context: &Map<String, Value>, learned: &str) -> String {
        let attempt = next_attempt(&self.attempts, task);
        let text_of = |k: &str| {
            context
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_owned()
        };
        let mut truth = Truth {
            task: task.to_owned(),
            attempt,
            mistakes: Vec::new(),
            forms: Vec::new(),
        };
        let mut body = String::from("Hello,\n\nI am writing to follow up on your request.\n");

        // A time of day, with or without its timezone.
        if let Some(time) = find_time(task) {
            let given = task_timezone(task);
            let context_tz = text_of("timezone");
            let covered = given.is_some() || !context_tz.is_empty() || learned.contains("timezone");
            let form = if self.draw(task, attempt, "time-echo") < ECHO_TASK_FORM {
                time.form
            } else {
                TIME_FORMS[self.pick(task, attempt, "time-form", TIME_FORMS.len())]
            };
            let written = render_time(time.hour, time.minute, form)
                .or_else(|| render_time(time.hour, time.minute, TimeForm::Colon24))
                .unwrap_or_default();
            truth.forms.push(format!("time:{written}"));
            if self.mistake(task, attempt, "timezone", TIMEZONE_RATE, covered) {
                truth.mistakes.push(TIMEZONE);
                body.push_str(&format!("We meet at {written}.\n"));
            } else {
                // Complying with no timezone known, it says so rather than
                // guess one (the skill's instructions; its validators
                // accept the statement); it never leaves a time bare.
                let tz = given
                    .or(Some(context_tz).filter(|t| !t.is_empty()))
                    .unwrap_or_else(|| UNKNOWN_TIMEZONE.into());
                body.push_str(&format!("We meet at {written} ({tz}).\n"));
            }
        }

        // Spam words: kept (in some case) or rephrased.
        let spam = spam_phrases(task);
        if !spam.is_empty() {
            let covered = context
                .get("rephrase_spam")
                .and_then(Value::as_bool)
                .unwrap_or(false)
                || learned.contains("spam");
            if self.mistake(task, attempt, "spam", SPAM_RATE, covered) {
                truth.mistakes.push(SPAM);
                let case = self.pick(task, attempt, "spam-case", 4);
                let words: Vec<String> = spam
                    .iter()
                    .map(|w| match case {
                        0 | 1 => w.clone(),
                        2 => w.to_uppercase(),
                        _ => capitalised(w),
                    })
                    .collect();
                truth.forms.push(format!("spam:{}", words.join("|")));
                body.push_str(&format!("This is about: {}.\n", words.join(", ")));
                if self.draw(task, attempt, "spam-extra") < SPAM_EXTRA {
                    let extra = if self.pick(task, attempt, "spam-which", 2) == 0 {
                        "Act now"
                    } else {
                        "This is for a limited time"
                    };
                    truth.forms.push(format!("spam:{extra}"));
                    body.push_str(&format!("{extra}!\n"));
                }
            } else {
                let words: Vec<String> = spam.iter().map(|w| rephrase(w)).collect();
                body.push_str(&format!("This is about: {}.\n", words.join(", ")));
            }
        }

        // An attachment the task asks for.
        if asks_for_attachment(task) {
            let files: Vec<String> = context
                .get("attachments")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let covered = !files.is_empty() || learned.contains("attach");
            let item = if files.is_empty() {
                ITEM_RE
                    .find(task)
                    .map(|m| m.as_str().to_lowercase())
                    .unwrap_or_else(|| "the requested document".into())
            } else {
                files.join(", ")
            };
            if self.mistake(task, attempt, "attachment", ATTACHMENT_RATE, covered) {
                truth.mistakes.push(ATTACHMENT);
                if self.pick(task, attempt, "attach-miss", 2) == 0 {
                    truth.forms.push("attach:omitted".into());
                } else {
                    truth.forms.push("attach:later".into());
                    body.push_str(&format!("\nI will send {item} separately.\n"));
                }
            } else {
                let (form, line) = match self.pick(task, attempt, "attach-form", 4) {
                    0 => ("please-find", format!("Please find attached: {item}.")),
                    1 => ("enclosed", format!("I have enclosed {item}.")),
                    2 => (
                        "attached-below",
                        format!("{} is attached below.", capitalised(&item)),
                    ),
                    _ => ("put-in", format!("I've put {item} in this email.")),
                };
                truth.forms.push(format!("attach:{form}"));
                body.push_str(&format!("\n{line}\n"));
            }
        }
        body.push_str("\nBest regards,\n");

        let mut email = String::new();
        if self.mistake(task, attempt, "format", FORMAT_RATE, false) {
            truth.mistakes.push(FORMAT);
        } else {
            email.push_str("Subject: A note on your request\n\n");
        }
        email.push_str(&body);
        if let Some(log) = &self.truth {
            log.lock().unwrap_or_else(|p| p.into_inner()).push(truth);
        }
        email
    }

    fn write(&self, req: &ChatRequest) -> Result<String, LlmError> {
        let user = first_user_message(req)
            .ok_or_else(|| LlmError::Scripted("the simulated model got no user message".into()))?;
        let (task, context) = parse_user(user);
        let learned = learned_rules(req.system.as_deref().unwrap_or(""));
        Ok(self.compose(&task, &context, &learned))
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

/// How often a simulated model makes a mistake at `rate`, when a learned
/// rule in its prompt covers it (it complies most of the time) or not.
pub(super) fn mistake_rate(rate: f64, covered: bool) -> f64 {
    if covered {
        rate * (1.0 - COMPLIANCE)
    } else {
        rate
    }
}

/// This task's attempt number (0 for its first answer) in `attempts`.
pub(super) fn next_attempt(attempts: &Mutex<HashMap<String, u64>>, task: &str) -> u64 {
    let mut a = attempts.lock().unwrap_or_else(|p| p.into_inner());
    let n = a.entry(task.to_owned()).or_insert(0);
    *n += 1;
    *n - 1
}

/// The first user message of a request.
pub(super) fn first_user_message(req: &ChatRequest) -> Option<&str> {
    req.messages.iter().find_map(|m| match m {
        Message::User(t) => Some(t.as_str()),
        _ => None,
    })
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

fn capitalised(s: &str) -> String {
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
    SPAM_WORDS
        .iter()
        .find(|(w, _)| *w == lower)
        .map(|(_, r)| (*r).to_owned())
        .unwrap_or_else(|| "notable".to_owned())
}

/// "Task: T\n\nContext (JSON): {...}" as the model loop writes it.
pub(super) fn parse_user(user: &str) -> (String, Map<String, Value>) {
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
pub(super) fn learned_rules(system: &str) -> String {
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
        Box::pin(async move { Ok(text_answer(self.write(req)?)) })
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

    fn logged(n: usize, task: impl Fn(usize) -> String, ctx: &str, learned: &str) -> Vec<Truth> {
        let log = TruthLog::default();
        let m = SimulatedEmailModel::new(7).with_truth(log.clone());
        for i in 0..n {
            m.write(&request(&task(i), ctx, learned)).expect("email");
        }
        log.lock().expect("log").clone()
    }

    fn share(truths: &[Truth], class: &str) -> f64 {
        truths
            .iter()
            .filter(|t| t.mistakes.contains(&class))
            .count() as f64
            / truths.len() as f64
    }

    #[test]
    fn mistake_rates_match_the_scenario_and_coverage_cuts_them() {
        let n = 4000;
        let task = |i| format!("Email Ana about the review at 3pm, take {i}");
        let bare = share(&logged(n, task, "{}", ""), TIMEZONE);
        let told = share(
            &logged(n, task, "{}", "- State every time with its timezone."),
            TIMEZONE,
        );
        assert!((bare - TIMEZONE_RATE).abs() < 0.03, "{bare}");
        assert!(
            (told - TIMEZONE_RATE * (1.0 - COMPLIANCE)).abs() < 0.02,
            "{told}"
        );
        let spam = |i| format!("Email Ana about our FREE trial, take {i}");
        let attach = |i| format!("Email Ana and enclose the deck, take {i}");
        assert!((share(&logged(n, spam, "{}", ""), SPAM) - SPAM_RATE).abs() < 0.03);
        assert!((share(&logged(n, attach, "{}", ""), ATTACHMENT) - ATTACHMENT_RATE).abs() < 0.03);
        assert!(
            share(
                &logged(n, attach, r#"{"attachments":["deck.pdf"]}"#, ""),
                ATTACHMENT
            ) < ATTACHMENT_RATE * (1.0 - COMPLIANCE) + 0.02
        );
    }

    #[test]
    fn every_time_form_is_read_and_written_back() {
        for (text, h, m) in [
            ("at 3pm", 15, 0),
            ("at 3 PM", 15, 0),
            ("at 9 a.m.", 9, 0),
            ("at 9 a.m", 9, 0),
            ("at 4:15 pm", 16, 15),
            ("at 14:00", 14, 0),
            ("at 14h00", 14, 0),
            ("um 14.00 Uhr", 14, 0),
            ("um 10 Uhr", 10, 0),
            ("at noon", 12, 0),
            ("at half past two", 14, 30),
            ("at quarter to four", 15, 45),
            ("at three o'clock", 15, 0),
        ] {
            let t =
                find_time(&format!("Email Dana {text} please")).unwrap_or_else(|| panic!("{text}"));
            assert_eq!((t.hour, t.minute), (h, m), "{text}");
        }
        for not_a_time in [
            "a 5 amps fuse",
            "room 12",
            "version 2.0",
            "pm2 logs",
            "Uhrzeit",
        ] {
            assert_eq!(find_time(not_a_time), None, "{not_a_time}");
        }
        for form in TIME_FORMS {
            if let Some(s) = render_time(14, 30, form) {
                let back = find_time(&format!("at {s}")).unwrap_or_else(|| panic!("{s}"));
                assert_eq!((back.hour, back.minute), (14, 30), "{s}");
            }
        }
    }

    #[test]
    fn a_timezone_in_the_task_covers_every_time_form() {
        for time in [
            "3pm",
            "3 p.m",
            "15h00",
            "15.00 Uhr",
            "half past two",
            "noon",
            "14:00",
        ] {
            let truths = logged(
                400,
                |i| format!("Email Ana about the review at {time} CET, take {i}"),
                "{}",
                "",
            );
            let s = share(&truths, TIMEZONE);
            assert!(s < TIMEZONE_RATE * (1.0 - COMPLIANCE) + 0.03, "{time}: {s}");
        }
    }

    #[test]
    fn spam_words_in_any_case_and_multi_word_ones_are_known() {
        for task in [
            "FREE upgrade",
            "Act Now",
            "a limited  time offer",
            "Guaranteed results",
        ] {
            assert_eq!(spam_phrases(task).len(), 1, "{task}");
            assert_ne!(rephrase(&spam_phrases(task)[0]), "notable", "{task}");
        }
        assert!(spam_phrases("freedom of choice, a cashier").is_empty());
    }

    #[test]
    fn the_truth_log_names_exactly_the_mistakes_in_the_text() {
        let log = TruthLog::default();
        let m = SimulatedEmailModel::new(3).with_truth(log.clone());
        for i in 0..300 {
            let task = format!("Email Sam at 14h00 about our free trial and put the deck in, {i}");
            let email = m.write(&request(&task, "{}", "")).expect("email");
            let t = log.lock().expect("log").last().cloned().expect("logged");
            assert_eq!(
                t.mistakes.contains(&FORMAT),
                !email.starts_with("Subject: ")
            );
            assert_eq!(
                t.mistakes.contains(&SPAM),
                !spam_phrases(&email).is_empty(),
                "{email}"
            );
            let with_tz = email.contains(&format!("({UNKNOWN_TIMEZONE})"));
            assert_eq!(t.mistakes.contains(&TIMEZONE), !with_tz, "{email}");
        }
    }

    /// The email-writer skill's shipped validators, from its SKILL.md.
    fn shipped_validators() -> Vec<crate::learn::Validator> {
        const MD: &str = include_str!("../../../skills/email-writer/SKILL.md");
        let parsed = crate::skill::parse_skill(MD.as_bytes(), "email-writer").expect("parses");
        let (ok, bad) = crate::learn::validators(&parsed.meta.skillhost.validators);
        assert!(bad.is_empty(), "{bad:?}");
        ok
    }

    fn flags(validators: &[crate::learn::Validator], class: &str, task: &str, email: &str) -> bool {
        let context = Map::new();
        let facts = crate::learn::condition::Facts {
            task,
            skill: "email-writer",
            context: &context,
            output: Some(email),
            failure: None,
        };
        validators
            .iter()
            .any(|v| v.class == class && v.fails(&facts))
    }

    #[test]
    fn the_shipped_validators_know_every_form_both_ways() {
        let v = shipped_validators();
        let task = "Email Dana";
        // Every time form the model writes: bare, flagged; with a
        // timezone, passed.
        for time in [
            "3pm",
            "3 PM",
            "3 p.m.",
            "9 a.m",
            "9 a.m.",
            "14:00",
            "14h00",
            "14.00 Uhr",
            "10 Uhr",
            "noon",
            "midday",
            "midnight",
            "half past two",
            "quarter to four",
            "three o'clock",
            "11 o'clock",
        ] {
            let bare = format!("Subject: x\n\nWe meet at {time}.\n");
            assert!(flags(&v, TIMEZONE, task, &bare), "bare {time}");
            for tz in [
                "UTC",
                "CET",
                "CEST",
                "Europe/Paris",
                "America/New_York",
                "UTC+2",
                "+02:00",
                UNKNOWN_TIMEZONE,
            ] {
                let told = format!("Subject: x\n\nWe meet at {time} ({tz}).\n");
                assert!(!flags(&v, TIMEZONE, task, &told), "{time} ({tz})");
            }
        }
        // Not times, and not timezones.
        for text in [
            "a 5 amps fuse",
            "room 12",
            "version 2.0 ships",
            "we were 3 amigos",
            "pm2 restarts it",
            "Uhrzeit",
        ] {
            assert!(
                !flags(&v, TIMEZONE, task, &format!("Subject: x\n\n{text}\n")),
                "{text}"
            );
        }
        assert!(
            flags(&v, TIMEZONE, task, "Subject: x\n\nAt 3pm. ACT NOW!\n"),
            "a shouted word is not a timezone"
        );
        // Spam words in any case, multi-word ones with any spacing.
        for word in [
            "free",
            "FREE",
            "Free",
            "Act now",
            "ACT NOW",
            "limited  time",
            "Guaranteed",
            "URGENTLY",
            "cash",
        ] {
            assert!(
                flags(&v, SPAM, task, &format!("Subject: x\n\nIt is {word}.\n")),
                "{word}"
            );
        }
        for clean in [
            "freedom",
            "a cashier",
            "complimentary",
            "time-sensitive",
            "now we act",
        ] {
            assert!(
                !flags(&v, SPAM, task, &format!("Subject: x\n\nIt is {clean}.\n")),
                "{clean}"
            );
        }
        // An attachment asked for in any form; said in any of the model's
        // forms, passed; left out or promised for later, flagged.
        for ask in [
            "Email Dana and attach the report",
            "Email Dana and enclose the contract",
            "Email Dana and put the deck in",
            "Email Dana with the slides",
            "Email Dana with the spreadsheet",
        ] {
            for said in [
                "Please find attached: the deck.",
                "I have enclosed the deck.",
                "The deck is attached below.",
                "I've put the deck in this email.",
            ] {
                assert!(
                    !flags(&v, ATTACHMENT, ask, &format!("Subject: x\n\n{said}\n")),
                    "{ask}: {said}"
                );
            }
            for missing in ["", "I will send the deck separately."] {
                assert!(
                    flags(&v, ATTACHMENT, ask, &format!("Subject: x\n\n{missing}\n")),
                    "{ask}: {missing:?}"
                );
            }
        }
        assert!(!flags(
            &v,
            ATTACHMENT,
            "Email Dana about the budget",
            "Subject: x\n\nHello.\n"
        ));
    }

    #[test]
    fn the_validators_see_every_mistake_the_model_makes_and_nothing_else() {
        let v = shipped_validators();
        let log = TruthLog::default();
        let m = SimulatedEmailModel::new(11).with_truth(log.clone());
        let tasks: Vec<String> = include_str!("../../../tests/data/email-open-world.txt")
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect();
        assert!(tasks.len() >= 20);
        for round in 0..20 {
            for task in &tasks {
                let email = m.compose(
                    task,
                    &Map::new(),
                    if round % 2 == 0 {
                        ""
                    } else {
                        "timezone spam attach"
                    },
                );
                let t = log.lock().expect("log").pop().expect("logged");
                for class in CLASSES {
                    assert_eq!(
                        flags(&v, class, task, &email),
                        t.mistakes.contains(&class),
                        "{class} on {task}:\n{email}"
                    );
                }
            }
        }
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
