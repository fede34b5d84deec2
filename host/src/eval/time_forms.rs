//! Times of day as the simulated email model reads them in a task and
//! writes them in an answer: nine surface forms ("3pm", "3 PM", "3 p.m.",
//! "3 p.m", "15:00", "15h00", "15.00 Uhr", words, "noon"/"midnight").
//! This is the model's own reading; the ground-truth checker
//! ([`super::truth`]) has another, and the validators a third.

use std::sync::LazyLock;

use regex::Regex;

use crate::types::constant_regex as re;

const NUMBERS: [&str; 13] = [
    "twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
];

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
            re(concat!(
                r"(?i)\b(half past|quarter past|quarter to) ",
                r"(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b",
                r"|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve) o'clock\b"
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
        let Some(m) = c.get(0) else { continue };
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
