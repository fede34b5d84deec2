//! How the simulated models read their prompt: the whole of it, the
//! skill's own instructions, the learned rules, the context and any
//! feedback a retry carries.
//!
//! A simulated model has *needs*, one per thing it can get wrong (give the
//! timezone, leave out spam words, list the attachment, apologise, ...).
//! Each instruction in the prompt is weighed against each need by what it
//! means, not by one word:
//!
//! - **topic**: it must speak of the need's subject in some word of the
//!   topic's synonyms ("timezone", "UTC offset", "local time", ...);
//!   without that, it is about something else;
//! - **aspects**: the need's other concepts (for a timezone: a time of
//!   day, and the act of stating it), each counted once if any of its
//!   synonyms appears;
//! - **specific**: it names something of this very task (the time as the
//!   task or an answer wrote it, the item to attach, the spam word, the
//!   customer's words), or it refers to a context field (`` `timezone` ``)
//!   that this task's context has set;
//! - **contrary**: it says the opposite ("keep the words as written",
//!   "never mention the timezone" for a need to include something): then
//!   it does not help at all.
//!
//! Its relevance is (1 + aspects hit + specific) / (2 + aspects). The
//! model follows it with probability `compliance × relevance × salience`,
//! where salience is 1/√n for an instruction in a block of n (a long list
//! of general instructions is followed less than one lesson on its own),
//! and acts on the need when it follows any of them. Compliance is the
//! swept parameter of the ablation.

use serde_json::{Map, Value};

use crate::llm::{ChatRequest, Message};

/// What a model can get wrong, and the words an instruction about it uses.
pub struct Need {
    pub name: &'static str,
    pub topic: &'static [&'static str],
    pub aspects: &'static [&'static [&'static str]],
    /// The need is to leave something out (spam words, a guess): a
    /// "never"/"do not" in the instruction is then on its side.
    pub avoidance: bool,
    /// Phrases by which an instruction says the opposite.
    pub contrary: &'static [&'static str],
}

/// One instruction as the model reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    pub text: String,
    pub salience: f64,
}

/// The prompt, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub task: String,
    pub context: Map<String, Value>,
    pub instructions: Vec<Instruction>,
}

/// Words that turn an instruction to its opposite for a need to include
/// something; they act on the next few words.
const NEGATORS: &[&str] = &[
    "never",
    "do not",
    "don't",
    "must not",
    "should not",
    "no need to",
    "not needed",
    "omit",
    "leave out",
];

impl Prompt {
    /// Reads a request as the model loop writes it: the skill's numbered
    /// instructions in `<skill_instructions>`, the lessons in
    /// `<learned_rules>`, the context in `<context>`; the task is the
    /// user turn.
    pub fn read(req: &ChatRequest) -> Option<Prompt> {
        let user = req.messages.iter().find_map(|m| match m {
            Message::User(t) => Some(t.as_str()),
            _ => None,
        })?;
        let task = user.to_owned();
        let context = crate::exec::context_from_prompt(req.system.as_deref().unwrap_or(""));
        let system = req.system.as_deref().unwrap_or("");
        let mut instructions = block(
            between(system, "<skill_instructions>", "</skill_instructions>"),
            |l| {
                l.split_once(". ")
                    .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
            },
        );
        instructions.extend(block(
            between(system, "<learned_rules>", "</learned_rules>"),
            |l| l.starts_with("- "),
        ));
        Some(Prompt {
            task,
            context,
            instructions,
        })
    }

    /// The probability that the model acts on `need` this time (see the
    /// module docs). `specifics` are this task's own words for the need.
    pub fn follows(&self, need: &Need, specifics: &[String], compliance: f64) -> f64 {
        let ignored: f64 = self
            .instructions
            .iter()
            .map(|i| {
                let r = relevance(&i.text, need, specifics, &self.context);
                1.0 - (compliance * r * i.salience).clamp(0.0, 1.0)
            })
            .product();
        1.0 - ignored
    }

    /// A context field as text ("" when missing).
    pub fn context_text(&self, field: &str) -> String {
        self.context
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_owned()
    }
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> &'a str {
    match (text.find(open), text.find(close)) {
        (Some(a), Some(b)) if b > a => &text[a + open.len()..b],
        _ => "",
    }
}

/// A block's items: a line that `starts` an item begins one, other
/// non-empty lines continue it; each gets salience 1/√n.
fn block(text: &str, starts: impl Fn(&str) -> bool) -> Vec<Instruction> {
    let mut items: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if starts(line) {
            items.push(line.to_owned());
        } else if let Some(last) = items.last_mut() {
            last.push(' ');
            last.push_str(line);
        }
    }
    let salience = 1.0 / (items.len().max(1) as f64).sqrt();
    items
        .into_iter()
        .map(|text| Instruction { text, salience })
        .collect()
}

/// Lower case, runs of anything but letters, digits and `-` one space,
/// padded, so that `" time zone "` is a phrase test (phrases are read the
/// same way: "don't" and "15:00" match themselves).
pub fn words(text: &str) -> String {
    let mut out = String::from(" ");
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '-' {
            out.push(c);
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

fn has(text: &str, phrase: &str) -> bool {
    let p = words(phrase);
    p.trim() != "" && text.contains(&p)
}

/// How relevant `instruction` is to `need` for this task, in [0, 1].
pub fn relevance(
    instruction: &str,
    need: &Need,
    specifics: &[String],
    context: &Map<String, Value>,
) -> f64 {
    let text = words(instruction);
    if !need.topic.iter().any(|t| has(&text, t)) {
        return 0.0;
    }
    if need.contrary.iter().any(|c| has(&text, c)) || (!need.avoidance && negates(&text, need)) {
        return 0.0;
    }
    let aspects = need
        .aspects
        .iter()
        .filter(|a| a.iter().any(|s| has(&text, s)))
        .count();
    let specific =
        specifics.iter().any(|s| has(&text, s)) || names_a_set_field(instruction, context);
    (1 + aspects + usize::from(specific)) as f64 / (2 + need.aspects.len()) as f64
}

/// Whether a negator is followed, within four words, by the need's topic
/// or one of its aspects ("never mention the timezone").
fn negates(text: &str, need: &Need) -> bool {
    NEGATORS.iter().any(|n| {
        let n = words(n);
        text.match_indices(&n).any(|(at, _)| {
            let after = &text[at + n.len() - 1..];
            let window: String = after.split(' ').take(6).collect::<Vec<_>>().join(" ");
            let window = format!("{window} ");
            need.topic.iter().any(|t| has(&window, t))
                || need
                    .aspects
                    .iter()
                    .flat_map(|a| a.iter())
                    .any(|s| has(&window, s))
        })
    })
}

/// Whether the instruction refers to a context field (in backticks) that
/// this task's context has set: then it speaks of this task.
fn names_a_set_field(instruction: &str, context: &Map<String, Value>) -> bool {
    instruction
        .split('`')
        .skip(1)
        .step_by(2)
        .any(|name| match context.get(name) {
            Some(Value::String(s)) => !s.trim().is_empty(),
            Some(Value::Bool(b)) => *b,
            Some(Value::Array(a)) => !a.is_empty(),
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZONE: Need = Need {
        name: "zone",
        topic: &["timezone", "time zone", "utc offset", "local time"],
        aspects: &[&["time", "hour"], &["state", "give", "name"]],
        avoidance: false,
        contrary: &[],
    };

    fn rel(text: &str, specifics: &[&str]) -> f64 {
        let s: Vec<String> = specifics.iter().map(|s| (*s).to_owned()).collect();
        relevance(text, &ZONE, &s, &Map::new())
    }

    #[test]
    fn relevance_grows_with_meaning_not_with_one_word() {
        let bare = rel("timezone", &[]);
        let general = rel("State every time of day with its timezone.", &[]);
        let specific = rel(
            "The draft gives '3pm' with no timezone: state every time with one.",
            &["3pm"],
        );
        let synonyms = rel("Give every hour with its UTC offset.", &[]);
        assert!(
            bare < general && general < specific,
            "{bare} {general} {specific}"
        );
        assert_eq!(general, synonyms);
        assert_eq!(rel("Spell every time in words.", &[]), 0.0, "no topic");
        assert_eq!(
            rel("Never mention the timezone of a time.", &[]),
            0.0,
            "the opposite"
        );
    }

    #[test]
    fn the_prompt_is_read_whole() {
        let req = ChatRequest {
            system: Some(
                "x\n<skill_instructions>\n# T\n\n1. Greet.\n2. Give the time\n   with its timezone.\n</skill_instructions>\n<learned_rules>\n- State the timezone.\n</learned_rules>\n\
                 The task's context:\n<context>\ntimezone: CET\n</context>\n"
                    .into(),
            ),
            messages: vec![Message::User("Email Dana at 3pm".into())],
            tools: vec![],
            max_tokens: None,
        };
        let p = Prompt::read(&req).expect("read");
        assert_eq!(p.task, "Email Dana at 3pm");
        assert_eq!(p.context_text("timezone"), "CET");
        let texts: Vec<&str> = p.instructions.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "1. Greet.",
                "2. Give the time with its timezone.",
                "- State the timezone."
            ]
        );
        assert!(p.instructions[0].salience < p.instructions[2].salience);
        assert!(p.follows(&ZONE, &[], 0.9) > p.follows(&ZONE, &[], 0.5));
    }
}
