//! Evaluation tasks with hand-written ground-truth labels.
//!
//! A task file is JSON Lines, one task per line:
//!
//! ```text
//! {"task": "Email Dana about the review at 3pm CET and attach the report",
//!  "context": {"sender": "Ana"},
//!  "truth": {"time": "15:00", "zone": ["CET", "Europe/Paris"], "attachments": ["report"]}}
//! ```
//!
//! A line that is not a JSON object is a task without labels (a real
//! model can still be run on it; no ground truth is judged). `#` starts a
//! comment line. The labels say what a correct answer must contain; the
//! checker in [`super::truth`] reads them, and nothing else reads them:
//! neither the simulated models nor the validators.
//!
//! The built-in tasks are generated from hand-written fragments, each with
//! its label ("at 4:15 pm" carries `16:15`, "share the contract with them"
//! carries the attachment `contract`); a task's label is the union of its
//! fragments' labels. Some fragments are phrased in ways the email-writer's
//! validators do not recognise (a `no-cost` offer, a contract to share),
//! and some mention a report without asking for it: the world is open.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ablation::Rng;

/// What a correct answer must (not) contain. Every field is optional: a
/// label only states what the task asks for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Labels {
    /// A time of day the email must state, `HH:MM` on a 24-hour clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Names of the timezone that must stand next to that time (any one
    /// of them). Empty with a time: no timezone is known, and the email
    /// must say so rather than name one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub zone: Vec<String>,
    /// Things the email must say it carries as attachments ("report").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<String>,
    /// Phrases that must not appear (besides the checker's own list of
    /// phrases spam filters flag).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<String>,
    /// Support: the ticket reports an incident that must be escalated.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub escalate: bool,
    /// Support: the customer is upset and the reply must apologise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub apologise: bool,
}

impl Labels {
    fn merge(&mut self, other: &Labels) {
        if other.time.is_some() {
            self.time = other.time.clone();
        }
        self.zone.extend(other.zone.iter().cloned());
        self.attachments.extend(other.attachments.iter().cloned());
        self.forbidden.extend(other.forbidden.iter().cloned());
        self.escalate |= other.escalate;
        self.apologise |= other.apologise;
    }
}

/// One task, the context it is run with, and its labels (None: not
/// labelled, no ground truth).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelledTask {
    pub task: String,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub context: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth: Option<Labels>,
}

impl LabelledTask {
    pub fn plain(task: &str) -> Self {
        LabelledTask {
            task: task.to_owned(),
            context: Map::new(),
            truth: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct TaskFileError {
    pub line: usize,
    pub why: String,
}

/// Reads a task file (see the module docs).
pub fn parse(text: &str) -> Result<Vec<LabelledTask>, TaskFileError> {
    let mut tasks = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('{') {
            let task: LabelledTask = serde_json::from_str(line).map_err(|e| TaskFileError {
                line: i + 1,
                why: e.to_string(),
            })?;
            if task.task.trim().is_empty() {
                return Err(TaskFileError {
                    line: i + 1,
                    why: "the task is empty".into(),
                });
            }
            tasks.push(task);
        } else {
            tasks.push(LabelledTask::plain(line));
        }
    }
    Ok(tasks)
}

/// A piece of a generated task and what it asks of the answer.
struct Fragment {
    text: &'static str,
    label: fn() -> Labels,
}

macro_rules! frag {
    ($text:expr) => {
        Fragment {
            text: $text,
            label: Labels::default,
        }
    };
    ($text:expr, $($field:ident: $value:expr),+) => {
        Fragment {
            text: $text,
            label: || Labels { $($field: $value,)+ ..Labels::default() },
        }
    };
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn time(t: &str) -> Option<String> {
    Some(t.to_owned())
}

const PEOPLE: &[&str] = &[
    "Dana",
    "the team",
    "Marco",
    "our customers",
    "Priya",
    "the board",
    "Sam",
    "the vendor",
];
const INTENTS: &[&str] = &[
    "Write an email to {p} about {t}",
    "Draft a short email to {p} regarding {t}",
    "Email {p} about {t}",
    "Compose a message to {p} on {t}",
];

/// What an email is about; the last mentions a report without asking
/// to attach one.
const TOPICS: &[Fragment] = &[
    frag!("the quarterly budget review"),
    frag!("the product launch"),
    frag!("next week's workshop"),
    frag!("the hiring plan"),
    frag!("the office move"),
    frag!("the pricing update"),
    frag!("the partner summit"),
    frag!("the figures in last month's sales report"),
];
const TIMES: &[Fragment] = &[
    frag!("at 3pm", time: time("15:00")),
    frag!("at 10:30", time: time("10:30")),
    frag!("at noon", time: time("12:00")),
    frag!("at 9 a.m.", time: time("09:00")),
    frag!("at 4:15 pm", time: time("16:15")),
    frag!("at half past two", time: time("14:30")),
];
const ZONES: &[Fragment] = &[
    frag!("CET", zone: strings(&["CET", "Europe/Paris", "Europe/Berlin"])),
    frag!("UTC", zone: strings(&["UTC", "GMT"])),
];
/// Words spam filters flag, phrased so that some escape the validators.
const SPAM: &[Fragment] = &[
    frag!("our free upgrade", forbidden: strings(&["free"])),
    frag!("an urgent change", forbidden: strings(&["urgent"])),
    frag!("an exclusive preview", forbidden: strings(&["exclusive"])),
    frag!("a free trial", forbidden: strings(&["free"])),
    frag!("our no-cost onboarding", forbidden: strings(&["no-cost", "no cost"])),
    frag!("a special offer for them", forbidden: strings(&["special offer"])),
];
const ATTACHMENTS: &[Fragment] = &[
    frag!("and attach the report", attachments: strings(&["report"])),
    frag!("with the document attached", attachments: strings(&["document"])),
    frag!("and include the file", attachments: strings(&["file"])),
    frag!("attaching the slides", attachments: strings(&["slides"])),
    frag!("and send the budget spreadsheet along", attachments: strings(&["spreadsheet"])),
    frag!("and share the contract with them", attachments: strings(&["contract"])),
];

/// Email requests: a time in about a third (with its zone in the task or
/// the context in some), a spam word in about a third, an attachment in
/// about a third, and a report mentioned but not asked for in some.
pub fn email_tasks(seed: u64, n: usize) -> Vec<LabelledTask> {
    let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5eed);
    (0..n).map(|_| email_task(&mut rng)).collect()
}

/// One email request: a topic for someone, then each optional part.
fn email_task(rng: &mut Rng) -> LabelledTask {
    let mut draft = Draft::default();
    let topic = draft.take(rng, TOPICS);
    draft.text = rng
        .pick(INTENTS)
        .replace("{p}", rng.pick(PEOPLE))
        .replace("{t}", topic);
    if rng.chance(1.0 / 3.0) {
        let at = draft.take(rng, TIMES);
        draft.append(" ", at);
        draft.place_zone(rng);
    }
    if rng.chance(1.0 / 3.0) {
        let spam = draft.take(rng, SPAM);
        draft.append(", mentioning ", spam);
    }
    if rng.chance(1.0 / 3.0) {
        let attachment = draft.take(rng, ATTACHMENTS);
        draft.append(" ", attachment);
    }
    draft.into_task()
}

/// A task being written: its text so far, its labels and its context.
#[derive(Default)]
struct Draft {
    text: String,
    labels: Labels,
    context: Map<String, Value>,
}

impl Draft {
    /// A fragment drawn from `choices`: its label joins the task's, its
    /// text is returned.
    fn take(&mut self, rng: &mut Rng, choices: &[Fragment]) -> &'static str {
        let fragment = &choices[rng.below(choices.len())];
        self.labels.merge(&(fragment.label)());
        fragment.text
    }

    fn append(&mut self, separator: &str, words: &str) {
        self.text = format!("{}{separator}{words}", self.text);
    }

    /// The timezone of a stated time: named in the task (one in four),
    /// passed by the caller as context (one in four), or not known.
    fn place_zone(&mut self, rng: &mut Rng) {
        match rng.below(4) {
            0 => {
                let zone = self.take(rng, ZONES);
                self.append(" ", zone);
            }
            1 => {
                self.context
                    .insert("timezone".into(), "Europe/Paris".into());
                self.labels.zone = strings(&["Europe/Paris", "CET", "CEST"]);
            }
            _ => {}
        }
    }

    fn into_task(self) -> LabelledTask {
        LabelledTask {
            task: self.text,
            context: self.context,
            truth: Some(self.labels),
        }
    }
}

/// Support tickets: an incident in about 40%, an upset customer in about
/// 40%, independently, each phrased in the words of `vocabulary`.
pub fn support_tasks(seed: u64, n: usize, vocabulary: Vocabulary) -> Vec<LabelledTask> {
    const TOPICS: &[&str] = &[
        "the March invoice",
        "a password reset",
        "the CSV export",
        "the mobile app",
        "my subscription",
        "the API keys",
        "the team workspace",
        "a missing receipt",
    ];
    let (incidents, upset): (&[&str], &[&str]) = match vocabulary {
        Vocabulary::Usual => (
            &[
                "the dashboard is down since this morning",
                "we had an outage of the sync service",
                "I think our account was hacked",
                "we see data loss in the reports",
                // Phrased in words no validator of the skill knows.
                "nobody on our team can sign in at all",
            ],
            &[
                "this is unacceptable",
                "this is the third time I ask",
                "I am fed up with this",
                "this is ridiculous",
                "I have been waiting two weeks for an answer",
            ],
        ),
        Vocabulary::Shifted => (
            &[
                "the site has been unreachable for an hour",
                "a stranger changed our billing details",
                "every project we had is gone",
                "nobody on our team can sign in at all",
            ],
            &[
                "I am really disappointed in your service",
                "I have been waiting two weeks for an answer",
                "we are close to cancelling",
                "I am very frustrated",
            ],
        ),
    };
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5_5e1d);
    (0..n)
        .map(|i| {
            let mut labels = Labels::default();
            let mut t = format!(
                "Reply to ticket #{}: question about {}",
                1000 + i,
                rng.pick(TOPICS)
            );
            if rng.chance(0.4) {
                t = format!("{t}; {}", rng.pick(incidents));
                labels.escalate = true;
            }
            if rng.chance(0.4) {
                t = format!("{t}; {}", rng.pick(upset));
                labels.apologise = true;
            }
            LabelledTask {
                task: t,
                context: Map::new(),
                truth: Some(labels),
            }
        })
        .collect()
}

/// The words support tickets are written in: the usual ones, or others
/// that mean the same (for tests that a learned rule follows the evidence,
/// not words someone picked in advance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Vocabulary {
    Usual,
    Shifted,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_email_tasks_are_deterministic_and_labelled_from_their_fragments() {
        let a = email_tasks(3, 600);
        assert_eq!(a, email_tasks(3, 600));
        assert_ne!(a, email_tasks(4, 600));
        let share = |f: &dyn Fn(&Labels) -> bool| {
            a.iter()
                .filter(|t| f(t.truth.as_ref().expect("labelled")))
                .count() as f64
                / 600.0
        };
        for s in [
            share(&|l| l.time.is_some()),
            share(&|l| !l.forbidden.is_empty()),
            share(&|l| !l.attachments.is_empty()),
        ] {
            assert!((s - 1.0 / 3.0).abs() < 0.07, "{s}");
        }
        for t in &a {
            let l = t.truth.as_ref().expect("labelled");
            if t.task.contains("4:15 pm") {
                assert_eq!(l.time.as_deref(), Some("16:15"));
            }
            if t.task.contains("share the contract") {
                assert_eq!(l.attachments, vec!["contract".to_owned()]);
            }
            if t.context.contains_key("timezone") {
                assert!(l.zone.contains(&"Europe/Paris".to_owned()));
            }
        }
    }

    #[test]
    fn task_files_take_labelled_and_plain_lines() {
        let text = "# comment\n\
            {\"task\": \"Email Dana at 3pm\", \"truth\": {\"time\": \"15:00\"}}\n\
            \n\
            Email Sam about lunch\n";
        let tasks = parse(text).expect("parses");
        assert_eq!(tasks.len(), 2);
        assert_eq!(
            tasks[0].truth.as_ref().and_then(|l| l.time.as_deref()),
            Some("15:00")
        );
        assert_eq!(tasks[1], LabelledTask::plain("Email Sam about lunch"));
        let bad = parse("{\"task\": \"x\", \"truth\": {\"tme\": \"1\"}}").expect_err("typo");
        assert_eq!(bad.line, 1);
    }
}
