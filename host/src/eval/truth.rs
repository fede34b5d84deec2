//! Ground truth: an answer checked against its task's hand-written labels
//! ([`super::tasks::Labels`]).
//!
//! The checker shares no code with the skills' validators, the shipped
//! patterns or the simulated models: no regular expressions, its own
//! reading of times, sentences and words, its own list of phrases spam
//! filters flag. It will disagree with the validators, and that is the
//! point: where they disagree, one of them is wrong, and the report shows
//! how often (a test asserts that they do disagree on the shipped tasks).
//!
//! Each miss is named by the failure class a validator would use for it,
//! so the report can put the two side by side; `TimeValueError` (the
//! email states another time than the one asked for) has no validator.

use serde::Serialize;

use super::tasks::Labels;

pub const FORMAT: &str = "FormatError";
pub const TIMEZONE: &str = "TimezoneError";
pub const TIME_VALUE: &str = "TimeValueError";
pub const SPAM: &str = "SpamTriggerError";
pub const ATTACHMENT: &str = "AttachmentError";
pub const GREETING: &str = "GreetingError";
pub const ESCALATION: &str = "EscalationError";
pub const TONE: &str = "ToneError";

/// One thing the answer got wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Miss {
    pub class: &'static str,
    pub why: String,
}

/// One thing the ground truth asks of an answer, and the miss classes
/// that fail it: success per criterion shows where a model moves when
/// all-or-nothing success does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Criterion {
    pub name: &'static str,
    classes: &'static [&'static str],
}

impl Criterion {
    /// Whether an answer with these misses meets the criterion.
    pub fn met(&self, misses: &[Miss]) -> bool {
        !misses.iter().any(|m| self.classes.contains(&m.class))
    }
}

const SUBJECT_LINE: Criterion = Criterion {
    name: "subject line",
    classes: &[FORMAT],
};
const TIME_AND_ZONE: Criterion = Criterion {
    name: "time with its zone",
    classes: &[TIMEZONE, TIME_VALUE],
};
const ATTACHMENTS: Criterion = Criterion {
    name: "attachments named",
    classes: &[ATTACHMENT],
};
const NO_SPAM: Criterion = Criterion {
    name: "no spam words",
    classes: &[SPAM],
};
const GREETS: Criterion = Criterion {
    name: "greeting",
    classes: &[GREETING],
};
const APOLOGISES: Criterion = Criterion {
    name: "apology",
    classes: &[TONE],
};
const ESCALATES: Criterion = Criterion {
    name: "escalation",
    classes: &[ESCALATION],
};

/// The criteria an email with these labels is judged by.
pub fn email_criteria(labels: &Labels) -> Vec<Criterion> {
    let mut c = vec![SUBJECT_LINE, NO_SPAM];
    if labels.time.is_some() {
        c.push(TIME_AND_ZONE);
    }
    if !labels.attachments.is_empty() {
        c.push(ATTACHMENTS);
    }
    c
}

/// The criteria a support reply with these labels is judged by.
pub fn reply_criteria(labels: &Labels) -> Vec<Criterion> {
    let mut c = vec![GREETS];
    if labels.apologise {
        c.push(APOLOGISES);
    }
    if labels.escalate {
        c.push(ESCALATES);
    }
    c
}

/// Phrases that spam filters flag, whatever the task: the checker's own
/// list, as a reviewer's style guide would have it.
const FLAGGED: &[&str] = &[
    "act now",
    "limited time",
    "don't miss out",
    "do not miss out",
    "hurry",
    "winner",
    "cash bonus",
    "guaranteed",
    "risk free",
    "100%",
    "click here",
    "buy now",
];

/// An email's misses against `labels` (empty: correct).
pub fn check_email(labels: &Labels, email: &str) -> Vec<Miss> {
    let mut misses = Vec::new();
    if !opens_with_a_subject(email) {
        misses.push(miss(FORMAT, "no subject line"));
    }
    if let Some(want) = labels.time.as_deref().and_then(parse_hhmm) {
        misses.extend(check_time(want, &labels.zone, email));
    }
    let words = normalised(email);
    for phrase in labels
        .forbidden
        .iter()
        .map(String::as_str)
        .chain(FLAGGED.iter().copied())
    {
        let p = normalised(phrase);
        if !p.trim().is_empty() && words.contains(&p) {
            misses.push(miss(SPAM, &format!("says '{}'", p.trim())));
            break;
        }
    }
    for item in &labels.attachments {
        if !sentences(email).any(|s| claims_attached(&s, item)) {
            misses.push(miss(ATTACHMENT, &format!("does not attach the {item}")));
        }
    }
    misses
}

/// The first line that is not empty is "Subject:" with a subject on it (a
/// bare "Subject:" followed by the greeting, which a small model writes,
/// has none).
fn opens_with_a_subject(email: &str) -> bool {
    let first = email.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let first = first.trim_start();
    first
        .get(..8)
        .is_some_and(|head| head.eq_ignore_ascii_case("subject:"))
        && first[8..].chars().any(char::is_alphanumeric)
}

/// A support reply's misses against `labels`.
pub fn check_reply(labels: &Labels, reply: &str) -> Vec<Miss> {
    let mut misses = Vec::new();
    let first_word = reply
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    if !["hi", "hello", "dear"].contains(&first_word.as_str()) {
        misses.push(miss(GREETING, "no greeting"));
    }
    let lower: Vec<String> = sentences(reply).map(|s| s.to_lowercase()).collect();
    if labels.apologise
        && !lower
            .iter()
            .any(|s| s.contains("sorry") || s.contains("apolog") || s.contains("we regret"))
    {
        misses.push(miss(TONE, "the customer is upset and gets no apology"));
    }
    if labels.escalate
        && !lower.iter().any(|s| {
            s.contains("escalat")
                || ((s.contains("on-call") || s.contains("incident team"))
                    && (s.contains("forward") || s.contains("passed") || s.contains("handed")))
        })
    {
        misses.push(miss(ESCALATION, "the incident is not escalated"));
    }
    misses
}

fn miss(class: &'static str, why: &str) -> Miss {
    Miss {
        class,
        why: why.to_owned(),
    }
}

fn parse_hhmm(s: &str) -> Option<(u32, u32)> {
    let (h, m) = s.split_once(':')?;
    Some((h.trim().parse().ok()?, m.trim().parse().ok()?))
}

/// The time must appear, and in the same line the zone the label names,
/// or (no zone known) a statement that the zone is not known; a line that
/// names a zone when none is known has guessed it.
fn check_time(want: (u32, u32), zones: &[String], email: &str) -> Vec<Miss> {
    let lines: Vec<&str> = email.lines().collect();
    let Some(line) = lines.iter().find(|l| times_in(l).contains(&want)) else {
        let said = lines.iter().flat_map(|l| times_in(l)).next();
        return vec![miss(
            TIME_VALUE,
            &match said {
                Some((h, m)) => format!("says {h:02}:{m:02}, not {:02}:{:02}", want.0, want.1),
                None => format!("does not say {:02}:{:02}", want.0, want.1),
            },
        )];
    };
    let lower = line.to_lowercase();
    let says_unknown = ["timezone", "time zone"].iter().any(|z| lower.contains(z))
        && [
            "not given",
            "unknown",
            "not known",
            "to be confirmed",
            "unconfirmed",
        ]
        .iter()
        .any(|u| lower.contains(u));
    if zones.is_empty() {
        if says_unknown {
            return Vec::new();
        }
        let named = names_a_zone(line);
        return vec![miss(
            TIMEZONE,
            if named {
                "names a timezone nobody gave"
            } else {
                "gives the time without saying the timezone is unknown"
            },
        )];
    }
    let tokens: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || "(),;".contains(c))
        .map(|t| t.trim_end_matches('.'))
        .collect();
    if zones.iter().any(|z| tokens.contains(&z.as_str())) {
        Vec::new()
    } else if names_a_zone(line) {
        vec![miss(TIMEZONE, "names another timezone than the one given")]
    } else {
        vec![miss(TIMEZONE, "gives the time without its timezone")]
    }
}

/// A zone abbreviation (2 to 5 capitals ending in T: CET, PST, UTC's
/// cousins) or an area/city name.
fn names_a_zone(line: &str) -> bool {
    line.split(|c: char| c.is_whitespace() || "(),;.".contains(c))
        .any(|t| {
            let caps = (2..=5).contains(&t.len())
                && t.chars().all(|c| c.is_ascii_uppercase())
                && (t.ends_with('T') || t == "UTC" || t == "GMT");
            let area = t.split_once('/').is_some_and(|(a, b)| {
                !b.is_empty() && a.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            });
            caps || area
        })
}

/// Lower case, every run of characters other than letters, digits, `%`
/// and `'` one space, padded: `" act now "` is then a phrase test.
fn normalised(text: &str) -> String {
    let mut out = String::from(" ");
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '%' || c == '\'' {
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

/// Sentences and lines: split at line ends and at `.`, `!`, `?` followed
/// by a space (so "9 a.m. CET" stays whole only within a line; the
/// attachment check needs no more).
fn sentences(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines().flat_map(|line| {
        let mut out = Vec::new();
        let mut cur = String::new();
        let chars: Vec<char> = line.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            cur.push(*c);
            let end = matches!(c, '!' | '?')
                || (*c == '.' && chars.get(i + 1).is_none_or(|n| n.is_whitespace()));
            if end && cur.trim().len() > 4 {
                out.push(std::mem::take(&mut cur));
            }
        }
        if !cur.trim().is_empty() {
            out.push(cur);
        }
        out
    })
}

/// Whether `sentence` says `item` is attached now (not later).
fn claims_attached(sentence: &str, item: &str) -> bool {
    let s = sentence.to_lowercase();
    let item = item.to_lowercase();
    let names_item = s.contains(&item)
        || item
            .split_whitespace()
            .last()
            .is_some_and(|head| s.contains(head));
    let claims = [
        "attached",
        "enclosed",
        "attaching",
        "included",
        "in this email",
    ]
    .iter()
    .any(|w| s.contains(w));
    let later = [
        "will send",
        "separately",
        "follow-up",
        "follow up",
        "later",
        "will be attached",
    ]
    .iter()
    .any(|w| s.contains(w));
    names_item && claims && !later
}

const HOUR_WORDS: [&str; 12] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

fn hour_word(w: &str) -> Option<u32> {
    HOUR_WORDS
        .iter()
        .position(|h| *h == w)
        .map(|i| i as u32 + 1)
}

/// An hour said without am/pm, read as office hours: 1 to 7 are in the
/// afternoon.
fn office(h: u32) -> u32 {
    if (1..=7).contains(&h) { h + 12 } else { h }
}

/// `H`, `H:MM`, `H.MM` or `HhMM` at the start of `t`: the hour, the
/// minutes, the separator (if any) and what follows.
fn leading_clock(t: &str) -> Option<(u32, u32, Option<char>, &str)> {
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 2 {
        return None;
    }
    let h: u32 = t[..digits].parse().ok()?;
    let rest = &t[digits..];
    for sep in [':', '.', 'h'] {
        if let Some(after) = rest.strip_prefix(sep) {
            let m = after.chars().take_while(char::is_ascii_digit).count();
            if m == 2 {
                let minute: u32 = after[..2].parse().ok()?;
                return Some((h, minute, Some(sep), &after[2..]));
            }
        }
    }
    Some((h, 0, None, rest))
}

/// Every time of day in `text`, as (hour, minute) on a 24-hour clock.
pub fn times_in(text: &str) -> Vec<(u32, u32)> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| "(),;!?\"".contains(c))
                .to_lowercase()
        })
        .collect();
    let mut found = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).map(String::as_str).unwrap_or("");
        let w_clean = w.trim_end_matches('.');
        match w_clean {
            "noon" | "midday" => found.push((12, 0)),
            "midnight" => found.push((0, 0)),
            "past" | "to" if i > 0 => {
                let before = words[i - 1].as_str();
                let Some(h) = hour_word(next.trim_end_matches('.')) else {
                    continue;
                };
                let h = office(h);
                match (before, w_clean) {
                    ("half", "past") => found.push((h, 30)),
                    ("quarter", "past") => found.push((h, 15)),
                    ("quarter", "to") => found.push(((h + 23) % 24, 45)),
                    _ => {}
                }
            }
            _ => {}
        }
        if next.trim_end_matches('.') == "o'clock" {
            if let Some(h) = hour_word(w_clean).or_else(|| w_clean.parse().ok()) {
                found.push((office(h), 0));
            }
            continue;
        }
        let Some((h, m, sep, suffix)) = leading_clock(w) else {
            continue;
        };
        let suffix = if suffix.is_empty() { next } else { suffix };
        let meridiem = suffix.trim_end_matches('.').replace('.', "");
        let hour = match meridiem.as_str() {
            "am" if (1..=12).contains(&h) => h % 12,
            "pm" if (1..=12).contains(&h) => h % 12 + 12,
            "uhr" => h,
            // 24-hour forms; "15.00" alone may be a price.
            _ if matches!(sep, Some(':' | 'h')) => h,
            _ => continue,
        };
        if hour < 24 && m < 60 {
            found.push((hour, m));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_subject_prefix_is_no_subject_line() {
        assert!(opens_with_a_subject("\nSubject: Launch call\n\nDear Dana,"));
        assert!(opens_with_a_subject("SUBJECT: Q3"));
        assert!(!opens_with_a_subject("Subject:\nDear Dana,"));
        assert!(!opens_with_a_subject("Subject: \u{2014}\nDear Dana,"));
        assert!(!opens_with_a_subject("Dear Dana,\nSubject: Launch"));
        assert!(!opens_with_a_subject("Sub"));
    }

    fn labels(json: &str) -> Labels {
        serde_json::from_str(json).expect("labels")
    }

    #[test]
    fn each_criterion_fails_only_on_its_own_misses_and_applies_only_where_labelled() {
        let plain = labels(r#"{}"#);
        let names = |c: Vec<Criterion>| c.iter().map(|c| c.name).collect::<Vec<_>>();
        assert_eq!(
            names(email_criteria(&plain)),
            ["subject line", "no spam words"]
        );
        let full = labels(r#"{"time": "15:00", "zone": ["CET"], "attachments": ["report"]}"#);
        assert_eq!(email_criteria(&full).len(), 4);
        // Right subject and attachment, wrong zone.
        let email = "Subject: Plan\n\nWe meet at 3pm (PST). The report is attached.\n";
        let misses = check_email(&full, email);
        let met: Vec<(&str, bool)> = email_criteria(&full)
            .iter()
            .map(|c| (c.name, c.met(&misses)))
            .collect();
        assert_eq!(
            met,
            [
                ("subject line", true),
                ("no spam words", true),
                ("time with its zone", false),
                ("attachments named", true)
            ]
        );
    }

    #[test]
    fn times_are_read_in_every_common_form() {
        for (text, want) in [
            ("We meet at 3pm (CET).", (15, 0)),
            ("We meet at 3 PM.", (15, 0)),
            ("at 9 a.m. sharp", (9, 0)),
            ("at 9 a.m", (9, 0)),
            ("at 4:15 pm", (16, 15)),
            ("at 14:00", (14, 0)),
            ("at 14h00", (14, 0)),
            ("um 14.00 Uhr", (14, 0)),
            ("um 10 Uhr", (10, 0)),
            ("at noon", (12, 0)),
            ("at half past two", (14, 30)),
            ("at quarter to four", (15, 45)),
            ("at three o'clock", (15, 0)),
        ] {
            assert_eq!(times_in(text), vec![want], "{text}");
        }
        for none in ["a 5 amps fuse", "room 12", "version 2.0", "pm2 logs"] {
            assert!(times_in(none).is_empty(), "{none}");
        }
    }

    #[test]
    fn the_time_needs_its_own_zone_or_an_honest_unknown() {
        let given = labels(r#"{"time": "15:00", "zone": ["CET", "Europe/Paris"]}"#);
        let ok = "Subject: x\n\nWe meet at 3pm (CET).\n";
        assert!(check_email(&given, ok).is_empty());
        let wrong_zone = check_email(&given, "Subject: x\n\nWe meet at 3pm (UTC).\n");
        assert_eq!(wrong_zone[0].class, TIMEZONE);
        let wrong_time = check_email(&given, "Subject: x\n\nWe meet at 3am (CET).\n");
        assert_eq!(wrong_time[0].class, TIME_VALUE);
        let unknown = labels(r#"{"time": "15:00"}"#);
        assert!(check_email(&unknown, "Subject: x\n\nAt 15:00 (timezone not given).\n").is_empty());
        let guessed = check_email(&unknown, "Subject: x\n\nAt 15:00 (UTC).\n");
        assert_eq!(guessed[0].why, "names a timezone nobody gave");
    }

    #[test]
    fn attachments_must_be_named_and_attached_now() {
        let l = labels(r#"{"attachments": ["report"]}"#);
        assert!(check_email(&l, "Subject: x\n\nPlease find attached: the report.\n").is_empty());
        assert!(check_email(&l, "Subject: x\n\nI have enclosed the report.\n").is_empty());
        for bad in [
            "Subject: x\n\nPlease find attached: the slides.\n",
            "Subject: x\n\nThe report will be attached in a follow-up email.\n",
            "Subject: x\n\nI will send the report separately.\n",
        ] {
            assert_eq!(check_email(&l, bad)[0].class, ATTACHMENT, "{bad}");
        }
    }

    #[test]
    fn spam_is_the_labels_and_the_checkers_own_list() {
        let l = labels(r#"{"forbidden": ["no-cost"]}"#);
        assert_eq!(
            check_email(&l, "Subject: x\n\nOur No-Cost plan.\n")[0].class,
            SPAM
        );
        assert_eq!(
            check_email(&Labels::default(), "Subject: x\n\nDon't miss out!\n")[0].class,
            SPAM
        );
        assert!(check_email(&Labels::default(), "Subject: x\n\nFeel free to ask.\n").is_empty());
    }

    #[test]
    fn replies_greet_apologise_and_escalate() {
        let l = labels(r#"{"escalate": true, "apologise": true}"#);
        let good =
            "Hi,\n\nI am sorry for the trouble.\nI have forwarded this to our on-call engineers.\n";
        assert!(check_reply(&l, good).is_empty());
        let bad = check_reply(&l, "Thanks.\nWe are looking into it.\n");
        let classes: Vec<&str> = bad.iter().map(|m| m.class).collect();
        assert_eq!(classes, vec![GREETING, TONE, ESCALATION]);
    }
}

/// The checker against a careful reader: 100 answers of a real small model
/// (SmolLM2-135M-Instruct), labelled by reading them without the checker's
/// verdicts (tests/data/learning/smollm2-hand-labels.jsonl).
#[cfg(test)]
mod hand_labels {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::{Labels, check_email, email_criteria};

    const FILE: &str = include_str!("../../../tests/data/learning/smollm2-hand-labels.jsonl");

    #[derive(Deserialize)]
    struct Labelled {
        truth: Labels,
        answer: Option<String>,
        labels: BTreeMap<String, Option<bool>>,
    }

    /// Per criterion: (answers it applies to, the checker agrees).
    fn agreement() -> BTreeMap<&'static str, (usize, usize)> {
        let mut per = BTreeMap::new();
        for line in FILE.lines().filter(|l| l.starts_with('{')) {
            let l: Labelled = serde_json::from_str(line).expect("a labelled answer");
            let misses = check_email(&l.truth, l.answer.as_deref().unwrap_or(""));
            for c in email_criteria(&l.truth) {
                let Some(Some(reader)) = l.labels.get(c.name) else {
                    panic!("no hand label for `{}` where it applies", c.name);
                };
                let e = per.entry(c.name).or_insert((0, 0));
                e.0 += 1;
                e.1 += usize::from(c.met(&misses) == *reader);
            }
        }
        per
    }

    #[test]
    fn the_checker_agrees_with_a_reader_on_real_answers() {
        let per = agreement();
        let (n, agreed) = per.values().fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1));
        assert!(
            n >= 250,
            "100 answers carry at least 250 judged criteria: {per:?}"
        );
        // Known disagreement: an answer that echoes the task ("… with the
        // document attached") is read as attaching it.
        assert!(n - agreed <= 2, "{agreed}/{n} criteria agree: {per:?}");
        for (name, (n, a)) in &per {
            assert!(a * 10 >= n * 9, "`{name}`: the checker agrees on {a}/{n}");
        }
    }
}
