//! The `email-writer` handler: turns a short request into a professional
//! email, and refuses with a classified failure where guessing would send a
//! wrong email (a time without a timezone, spam trigger words, a promised
//! attachment that is not there). Each failure names the context field
//! that fixes it, which is what the learning loop turns into rules.

use skillhost_guest::{Failure, HandlerResult, Output, Task};

/// Words that spam filters flag, with the phrasing used instead.
const SPAM_WORDS: &[(&str, &str)] = &[
    ("act now", "please reply at your convenience"),
    ("limited time", "time-bound"),
    ("free", "complimentary"),
    ("urgent", "time-sensitive"),
    ("urgently", "promptly"),
    ("exclusive", "dedicated"),
    ("guarantee", "commitment"),
    ("guaranteed", "assured"),
    ("winner", "selected participant"),
    ("cash", "payment"),
];

const ATTACHMENT_WORDS: &[&str] = &[
    "attach",
    "attached",
    "attachment",
    "attachments",
    "attaching",
    "document",
    "documents",
    "file",
    "files",
    "report",
    "reports",
];

fn write_email(task: Task) -> HandlerResult {
    let request = task.description.trim();
    if request.is_empty() {
        return Err(Failure::new(
            "InvalidInput",
            "the task is empty: say what the email is about",
        ));
    }
    let recipient = match task.str("recipient").trim() {
        "" => recipient_of(&topic_of(request)).unwrap_or_default(),
        given => given.to_owned(),
    };
    let sender = task.str("sender").trim().to_owned();
    let timezone = task.str("timezone").trim().to_owned();
    let tone = task.str("tone").trim().to_lowercase();
    let attachments: Vec<String> = task.field_opt("attachments")?.unwrap_or_default();

    if let Some(time) = find_time(request).filter(|_| timezone.is_empty()) {
        return Err(Failure::new(
            "TimezoneError",
            format!(
                "the request mentions a time (\"{time}\") but no timezone is known; \
                 set the context field `timezone` (e.g. Europe/Paris)"
            ),
        ));
    }

    let spam = spam_words_in(request);
    let rephrase = task.flag("rephrase_spam");
    if !spam.is_empty() && !rephrase {
        return Err(Failure::new(
            "SpamTriggerError",
            format!(
                "the email would contain words that spam filters flag: {}; \
                 set the context field `rephrase_spam` to true to rephrase them",
                spam.join(", ")
            ),
        ));
    }

    if mentions_attachment(request) && attachments.is_empty() {
        return Err(Failure::new(
            "AttachmentError",
            "the request mentions an attachment but none is listed; \
             set the context field `attachments` to the file names",
        ));
    }

    let mut topic = topic_of(request);
    if rephrase {
        topic = rephrase_spam(&topic);
    }
    if let Some(time) = find_time(&topic) {
        topic = topic.replacen(&time, &format!("{time} ({timezone})"), 1);
    }

    let greeting = match (recipient.is_empty(), tone.as_str()) {
        (true, "friendly") => "Hi,".to_owned(),
        (true, _) => "Hello,".to_owned(),
        (false, "friendly") => format!("Hi {recipient},"),
        (false, "formal") => format!("Dear {recipient},"),
        (false, _) => format!("Hello {recipient},"),
    };
    let mut body = format!(
        "Subject: {}\n\n{greeting}\n\nI am writing {}.\n",
        subject_of(&topic),
        about_phrase(&topic)
    );
    if !attachments.is_empty() {
        body.push_str(&format!(
            "\nPlease find attached: {}.\n",
            attachments.join(", ")
        ));
    }
    body.push_str("\nPlease let me know if you have any questions.\n\nBest regards,\n");
    if !sender.is_empty() {
        body.push_str(&sender);
        body.push('\n');
    }
    let mut out = Output::text(body);
    if rephrase && !spam.is_empty() {
        out = out.flag("rephrased");
    }
    Ok(out)
}

skillhost_guest::export_handler!(write_email);

/// Lowercase words of `text` (letters, digits, apostrophes).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The first time of day mentioned: `3pm`, `3:30 pm`, `15:00`, `noon`,
/// `midnight`, `5 o'clock`.
fn find_time(text: &str) -> Option<String> {
    for word in ["noon", "midnight"] {
        if words(text).iter().any(|w| w == word) {
            return Some(word.to_owned());
        }
    }
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let hour_len = i - start;
        let mut has_minutes = false;
        let digit_at = |k: usize| bytes.get(k).is_some_and(u8::is_ascii_digit);
        if bytes.get(i) == Some(&b':') && digit_at(i + 1) && digit_at(i + 2) && !digit_at(i + 3) {
            has_minutes = true;
            i += 3;
        }
        let mut j = i;
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        let rest = &lower[j..];
        let meridiem = ["a.m.", "p.m.", "am", "pm", "o'clock"]
            .iter()
            .find(|m| rest.starts_with(**m) && !followed_by_letter(rest, m.len()));
        if hour_len <= 2 && (meridiem.is_some() || has_minutes) {
            let end = meridiem.map(|m| j + m.len()).unwrap_or(i);
            return Some(text[start..end].to_owned());
        }
    }
    None
}

fn followed_by_letter(s: &str, at: usize) -> bool {
    s[at..].chars().next().is_some_and(char::is_alphabetic)
}

fn spam_words_in(text: &str) -> Vec<String> {
    let lower = format!(" {} ", words(text).join(" "));
    SPAM_WORDS
        .iter()
        .filter(|(w, _)| lower.contains(&format!(" {w} ")))
        .map(|(w, _)| (*w).to_owned())
        .collect()
}

/// Replaces spam trigger words, whole words only, keeping the rest as is.
fn rephrase_spam(text: &str) -> String {
    let mut out = text.to_owned();
    for (word, instead) in SPAM_WORDS {
        out = replace_word(&out, word, instead);
    }
    out
}

fn replace_word(text: &str, word: &str, instead: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut from = 0;
    while let Some(pos) = lower[from..].find(word) {
        let at = from + pos;
        let end = at + word.len();
        let before_ok = at == 0
            || !lower[..at]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric);
        let after_ok = !lower[end..]
            .chars()
            .next()
            .is_some_and(char::is_alphanumeric);
        if before_ok && after_ok {
            out.push_str(&text[last..at]);
            out.push_str(instead);
            last = end;
        }
        from = end;
    }
    out.push_str(&text[last..]);
    out
}

fn mentions_attachment(text: &str) -> bool {
    words(text)
        .iter()
        .any(|w| ATTACHMENT_WORDS.contains(&w.as_str()))
}

/// The request without its "write an email to X" preamble.
fn topic_of(request: &str) -> String {
    let mut topic = request.trim().trim_end_matches(['.', '!']);
    for lead in [
        "please ",
        "can you ",
        "could you ",
        "write ",
        "draft ",
        "compose ",
        "send ",
        "a short ",
        "a quick ",
        "a ",
        "an ",
        "email ",
        "e-mail ",
        "message ",
    ] {
        if topic
            .get(..lead.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(lead))
        {
            topic = &topic[lead.len()..];
        }
    }
    topic.trim().to_owned()
}

/// "to Dana Ross about the launch" -> "Dana Ross": the capitalised name
/// right after a leading "to", when the task names one ("to the team" does
/// not).
fn recipient_of(topic: &str) -> Option<String> {
    let rest = topic.strip_prefix("to ")?;
    let name: Vec<&str> = rest
        .split_whitespace()
        .map(|w| w.trim_end_matches([',', '.', ':', ';']))
        .take_while(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                && w.chars()
                    .all(|c| c.is_alphabetic() || c == '-' || c == '\'')
        })
        .take(3)
        .collect();
    (!name.is_empty()).then(|| name.join(" "))
}

/// "to Bob about the launch" -> "about the launch"; a topic with no
/// preposition gets "regarding".
fn about_phrase(topic: &str) -> String {
    // ASCII lowercasing keeps byte offsets valid for slicing `topic`.
    let lower = topic.to_ascii_lowercase();
    for prep in [
        "about ",
        "regarding ",
        "to ask ",
        "to let ",
        "to confirm ",
        "to remind ",
        "to invite ",
        "to thank ",
        "to follow up",
        "to request ",
    ] {
        if let Some(pos) = lower.find(prep) {
            return topic[pos..].to_owned();
        }
    }
    format!("regarding {topic}")
}

fn subject_of(topic: &str) -> String {
    let about = about_phrase(topic);
    let core = about
        .split_once(' ')
        .map(|(_, rest)| rest)
        .unwrap_or(&about)
        .trim();
    let mut chars = core.chars();
    let mut subject: String = match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => "Hello".to_owned(),
    };
    if subject.chars().count() > 70 {
        subject = subject.chars().take(67).collect::<String>() + "...";
    }
    subject
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_times() {
        assert_eq!(find_time("meet at 3pm tomorrow").as_deref(), Some("3pm"));
        assert_eq!(find_time("call at 10:30 to sync").as_deref(), Some("10:30"));
        assert_eq!(find_time("lunch at noon").as_deref(), Some("noon"));
        assert_eq!(find_time("at 9 a.m. sharp").as_deref(), Some("9 a.m."));
        assert_eq!(find_time("we sold 300 units in 2024"), None);
        assert_eq!(find_time("the ampere rating 5 amps"), None);
    }

    #[test]
    fn spam_words_are_whole_words() {
        assert_eq!(
            spam_words_in("Free entry for an urgent matter"),
            vec!["free", "urgent"]
        );
        assert!(spam_words_in("a carefree freedom").is_empty());
        assert_eq!(
            rephrase_spam("Get FREE tickets, urgent!"),
            "Get complimentary tickets, time-sensitive!"
        );
    }

    #[test]
    fn attachments_detected() {
        assert!(mentions_attachment("send the quarterly report"));
        assert!(!mentions_attachment("thank Ana for lunch"));
    }

    #[test]
    fn the_recipient_is_read_from_the_task_when_not_given() {
        let r = |task: &str| recipient_of(&topic_of(task));
        assert_eq!(
            r("Write an email to Dana about the budget review").as_deref(),
            Some("Dana")
        );
        assert_eq!(
            r("email to Dana Ross: the launch").as_deref(),
            Some("Dana Ross")
        );
        assert_eq!(r("Write an email to the team about lunch"), None);
        assert_eq!(r("Email about the review"), None);
    }

    #[test]
    fn topic_and_subject() {
        let t = topic_of("Write an email to Bob about the product launch.");
        assert_eq!(t, "to Bob about the product launch");
        assert_eq!(subject_of(&t), "The product launch");
        assert_eq!(about_phrase("the budget"), "regarding the budget");
    }
}
