//! Ranking, matching and the defences against installed skills' triggers.

use std::collections::HashMap;

use super::text::{STOPWORDS, is_stopword};
use super::{Match, SearchOptions};
use crate::skill::catalog::Catalog;
use crate::skill::model::{Skill, SkillMeta, Source};
use crate::skill::usage::Usage;

fn skill(name: &str, description: &str, triggers: &[&str], tags: &[&str]) -> Skill {
    Skill {
        name: name.into(),
        description: description.into(),
        body: String::new(),
        dir: format!("/s/{name}").into(),
        path: format!("/s/{name}/SKILL.md").into(),
        version: "sha256:0".into(),
        source: Source::Path,
        warnings: Vec::new(),
        meta: SkillMeta {
            triggers: triggers.iter().map(|s| s.to_string()).collect(),
            tags: tags.iter().map(|s| s.to_string()).collect(),
            ..SkillMeta::default()
        },
    }
}

fn catalog() -> Catalog {
    Catalog::from_skills(vec![
        skill(
            "email-writer",
            "Writes professional emails.",
            &["email", "write email"],
            &[],
        ),
        skill("mailer", "Sends messages to a list.", &[], &["email"]),
        skill(
            "notes",
            "Takes notes about email threads and meetings.",
            &[],
            &[],
        ),
        skill(
            "pdf",
            "Extract text from PDF files.",
            &["/\\bpdfs?\\b/"],
            &["documents"],
        ),
        skill("weird", "d", &["/(unclosed/"], &[]),
    ])
}

#[test]
fn triggers_beat_tags_beat_text() {
    let cat = catalog();
    let m = cat.search("please write an email to Bob", 10);
    let names: Vec<_> = m.iter().map(|m| m.skill.name.as_str()).collect();
    assert_eq!(names, ["email-writer", "mailer", "notes"]);
    assert!(
        m[0].why.contains("trigger 'email'") && m[0].why.contains("trigger 'write email'"),
        "{}",
        m[0].why
    );
    assert!(m[1].why.starts_with("tag 'email'"), "{}", m[1].why);
    assert_eq!(m[2].why, "bm25");
    assert!(m[0].score >= 200.0 && m[1].score >= 10.0 && m[1].score < 100.0 && m[2].score < 10.0);
}

#[test]
fn keyword_triggers_match_on_word_boundaries_only() {
    let cat = catalog();
    // "emailing" is not the word "email"; BM25 does not fold -ing either.
    assert!(
        cat.search("emailing", 5)
            .iter()
            .all(|m| !m.why.contains("trigger"))
    );
    assert!(
        cat.search("EMAIL!", 5)
            .iter()
            .any(|m| m.why.contains("trigger 'email'"))
    );
}

#[test]
fn regex_triggers_are_case_insensitive_and_invalid_ones_warn() {
    let cat = catalog();
    let m = cat.search("merge these PDFs", 3);
    assert_eq!(m[0].skill.name, "pdf");
    assert!(m[0].why.contains("trigger '/\\bpdfs?\\b/'"), "{}", m[0].why);
    assert!(
        cat.warnings()
            .iter()
            .any(|w| w.message.contains("not a valid regex"))
    );
}

#[test]
fn regex_triggers_per_skill_are_capped() {
    let many: Vec<String> = (0..40).map(|i| format!("/^word{i}$/")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    let cat = Catalog::from_skills(vec![skill("greedy", "d", &refs, &[])]);
    assert_eq!(cat.search("word31", 1).len(), 1);
    assert!(cat.search("word32", 1).is_empty());
    assert_eq!(cat.warnings().len(), 1);
    assert!(
        cat.warnings()[0]
            .message
            .contains("more than 32 regex triggers")
    );
}

#[test]
fn zero_scores_are_left_out_and_k_is_honoured() {
    let cat = catalog();
    assert!(cat.search("zebra quantum", 5).is_empty());
    assert!(cat.search("the and of", 5).is_empty());
    assert_eq!(cat.search("email", 1).len(), 1);
    assert!(cat.search("email", 0).is_empty());
}

#[test]
fn stopwords_are_sorted_for_binary_search() {
    assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    assert!(is_stopword("the") && is_stopword("your") && !is_stopword("email"));
}

fn with_roles(mut s: Skill, roles: &[&str], stages: &[&str]) -> Skill {
    s.meta.roles = roles.iter().map(|r| r.to_string()).collect();
    s.meta.stages = stages.iter().map(|r| r.to_string()).collect();
    s
}

fn names<'a>(m: &[Match<'a>]) -> Vec<&'a str> {
    m.iter().map(|m| m.skill.name.as_str()).collect()
}

#[test]
fn pinned_matches_come_first_in_pinned_order_and_unmatched_pins_stay_out() {
    let cat = catalog();
    let pinned = ["notes".to_owned(), "pdf".to_owned(), "mailer".to_owned()];
    let opts = SearchOptions {
        pinned: &pinned,
        ..SearchOptions::default()
    };
    let m = cat.search_with("please write an email to Bob", 10, &opts);
    // `pdf` is pinned but does not match: pinning orders, it does not add.
    assert_eq!(names(&m), ["notes", "mailer", "email-writer"]);
    assert!(m[0].pinned && m[1].pinned && !m[2].pinned);
    assert!(m[0].why.starts_with("pinned"), "{}", m[0].why);
    // Selection (k = 1) takes the pinned match over a better score.
    assert_eq!(
        names(&cat.search_with("write an email", 1, &opts)),
        ["notes"]
    );
}

#[test]
fn the_tag_filter_matches_tags_roles_or_stages_and_alone_lists_them_all() {
    let cat = Catalog::from_skills(vec![
        skill("a-tagged", "Writes reports.", &[], &["Reporting"]),
        with_roles(
            skill("b-role", "Writes reports too.", &[], &[]),
            &["reporting"],
            &[],
        ),
        with_roles(skill("c-stage", "Reports.", &[], &[]), &[], &["reporting"]),
        skill("d-other", "Writes reports as well.", &[], &["other"]),
    ]);
    let tags = ["reporting".to_owned()];
    let opts = SearchOptions {
        tags: &tags,
        ..SearchOptions::default()
    };
    let m = cat.search_with("", 10, &opts);
    assert_eq!(names(&m), ["a-tagged", "b-role", "c-stage"]);
    assert!(
        m.iter()
            .all(|m| m.why == "tag filter" || m.why.contains("tag"))
    );
    let m = cat.search_with("writes", 10, &opts);
    assert_eq!(
        names(&m),
        ["a-tagged", "b-role"],
        "the query still has to match"
    );
    assert!(
        cat.search_with("", 10, &SearchOptions::default())
            .is_empty()
    );
    let none = ["nothing".to_owned()];
    let opts = SearchOptions {
        tags: &none,
        ..SearchOptions::default()
    };
    assert!(cat.search_with("", 10, &opts).is_empty());
}

#[test]
fn usage_breaks_ties_by_success_rate_then_uses_and_never_beats_a_score() {
    // One-word names: equal text lengths, so equal BM25 and equal scores.
    let same = |name: &str| skill(name, "Converts units.", &["convert"], &[]);
    let cat = Catalog::from_skills(vec![
        same("alpha"),
        same("bravo"),
        same("charlie"),
        same("delta"),
        skill("echo", "Converts units.", &["convert", "units"], &[]),
    ]);
    let used = |uses, success_rate| Usage {
        uses,
        successes: 0,
        success_rate,
        last_used: Some(1),
    };
    let usage: HashMap<String, Usage> = [
        ("bravo", used(50, 0.1)),
        ("charlie", used(40, 0.9)),
        ("delta", used(4, 0.9)),
        ("echo", used(1, 0.0)),
    ]
    .into_iter()
    .map(|(n, u)| (n.to_owned(), u))
    .collect();
    let opts = SearchOptions {
        usage: &usage,
        ..SearchOptions::default()
    };
    let m = cat.search_with("convert units", 10, &opts);
    // A better score wins whatever the usage; among equals, the rate,
    // then the uses; never used sits above mostly failing.
    assert_eq!(names(&m), ["echo", "charlie", "delta", "alpha", "bravo"]);
    assert_eq!(m[1].score, m[4].score);
    // Without usage, names break the tie.
    let m = cat.search("convert units", 10);
    assert_eq!(names(&m), ["echo", "alpha", "bravo", "charlie", "delta"]);
    assert_eq!(names(&cat.search_with("convert", 1, &opts)), ["charlie"]);
}

fn installed(mut s: Skill) -> Skill {
    s.source = Source::Installed;
    s
}

/// Regex triggers that match nearly any request.
const CATCH_ALL: &[&str] = &[
    "/.*/",
    "/./",
    "/\\w+/",
    "/[a-z]/",
    "/e/",
    "/\\s/",
    "/^/",
    "/(?s)./",
    "/\\b/",
    "/[^z]/",
    "/t/",
    "/o/",
    "/\\S+/",
    "/[aeiou]/",
    "/a|e|i|o|u/",
];

#[test]
fn catch_all_regexes_earn_nothing_and_real_ones_count() {
    // Each alone, so that no set of them is judged together.
    for t in CATCH_ALL {
        let cat = Catalog::from_skills(vec![installed(skill("x", "d", &[t], &[]))]);
        assert!(
            cat.search("hello there", 5).is_empty(),
            "{t} is a catch-all"
        );
        assert_eq!(cat.warnings().len(), 1, "{t}: {:?}", cat.warnings());
    }
    // The bundled skills' regex triggers, and other real ones.
    for (t, task) in [
        ("/\\b(mail|message) (to|for)\\b/", "send a message to Bob"),
        (
            "/\\b(columns?|schema|dataset)\\b/",
            "what columns does it have",
        ),
        ("/\\bpdfs?\\b/", "merge these PDFs"),
        ("/\\b(weather|forecast)\\b/", "the forecast for Oslo"),
        ("/^translate\\b/", "translate this"),
        ("/\\d{1,2}(am|pm)/", "at 7pm"),
    ] {
        let cat = Catalog::from_skills(vec![installed(skill("x", "d", &[t], &[]))]);
        assert!(cat.warnings().is_empty(), "{t}: {:?}", cat.warnings());
        assert_eq!(cat.search(task, 5).len(), 1, "{t} is a real trigger");
    }
}

fn hijacker(triggers: &[&str], tags: &[&str]) -> Skill {
    installed(skill("hijack", "Does everything.", triggers, tags))
}

#[test]
fn catch_all_triggers_and_tags_earn_an_installed_skill_nothing() {
    let stopwords = ["to", "for", "at the", "please"];
    let all: Vec<&str> = CATCH_ALL.iter().chain(&stopwords).copied().collect();
    let cat = Catalog::from_skills(vec![hijacker(&all, &stopwords)]);
    for q in ["Write an email to Dana about the budget review at 3pm", "x"] {
        assert!(cat.search(q, 5).is_empty(), "{q}: nothing of it counts");
    }
    let w: Vec<&str> = cat.warnings().iter().map(|w| w.message.as_str()).collect();
    assert_eq!(w.len(), 2, "one warning per kind: {w:?}");
    assert!(
        w[0].contains("regex triggers refused") && w[0].contains("'/.*/'") && w[0].contains("more"),
        "{}",
        w[0]
    );
    assert!(
        w[1].contains("earn an installed skill nothing") && w[1].contains("'at the'"),
        "{}",
        w[1]
    );
    // The same triggers still count for a skill of this machine.
    let mine = skill("hijack", "Does everything.", &all, &[]);
    let cat = Catalog::from_skills(vec![mine]);
    assert!(cat.search("x", 5)[0].score >= 300.0);
    assert!(cat.warnings().is_empty());
}

#[test]
fn an_installed_skills_triggers_and_tags_count_once() {
    // Five real triggers and tags, each matching the task.
    let words = ["email", "dana", "budget", "review", "3pm"];
    let cat = Catalog::from_skills(vec![
        hijacker(&words, &words),
        skill("writer", "Writes emails.", &["email", "write email"], &[]),
    ]);
    let m = cat.search("Write an email to Dana about the budget review at 3pm", 5);
    assert_eq!(names(&m), ["writer", "hijack"]);
    assert!(m[1].score < 120.0, "{}", m[1].score);
    assert!(
        m[1].why
            .contains("installed: one trigger and one tag count"),
        "{}",
        m[1].why
    );
}

#[test]
fn at_equal_points_trust_ranks_above_text() {
    // The installed skill's description fits the task better.
    let cat = Catalog::from_skills(vec![
        installed(skill(
            "a-stuffed",
            "Email email budget review Dana.",
            &["email"],
            &[],
        )),
        skill("b-plain", "Sends things.", &["email"], &[]),
    ]);
    let m = cat.search("email Dana about the budget review", 5);
    assert_eq!(names(&m), ["b-plain", "a-stuffed"]);
    assert!(m[1].score > m[0].score, "trust, not the score, decided");
    // Trust is a tier: a trusted skill that matched at all, even by its
    // text alone, ranks above an installed skill's trigger.
    let cat = Catalog::from_skills(vec![
        installed(skill("a-better", "d", &["email"], &[])),
        skill("b-text-only", "Email things.", &[], &[]),
    ]);
    assert_eq!(names(&cat.search("email", 5)), ["b-text-only", "a-better"]);
}

#[test]
fn plurals_fold_for_text() {
    let cat = catalog();
    let m = cat.search("meeting", 5);
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].skill.name, "notes");
}

/// `text-summarizer` as it is bundled: its triggers and tags.
fn summarizer() -> Skill {
    let mut s = skill(
        "text-summarizer",
        "Summarizes text into its key points.",
        &[
            "summarize",
            "summarise",
            "summary",
            "tl;dr",
            "tldr",
            "key points",
        ],
        &["summary", "text", "writing"],
    );
    s.source = Source::Bundled;
    s
}

const MEETING: &str = "Summarize the meeting notes for my team";

/// Single keywords, each in few everyday requests, most of them together.
const FOURTEEN: &[&str] = &[
    "create",
    "find",
    "check",
    "plan",
    "explain",
    "calculate",
    "convert",
    "fix",
    "make",
    "list",
    "set",
    "send",
    "draft",
    "compare",
];

#[test]
fn an_installed_catch_all_never_outranks_a_trusted_skill_that_matched() {
    let common = "/\\b(the|for|my|your|this|that|with|please|team|notes)\\b/";
    let mut fourteen: Vec<&str> = FOURTEEN.to_vec();
    fourteen.extend(["summarize", "meeting notes"]);
    let words = "/\\b(the|for|your|this|that|with|please)\\b/";
    let attempts: [&[&str]; 5] = [
        &[common],
        &[words],
        &fourteen,
        &["/.{61,}/", "/[\\s\\S]+/"],
        // Real triggers of the request, and a description that is the request.
        &["summarize", "meeting notes", "notes for my team", "my team"],
    ];
    for triggers in attempts {
        let helper = installed(skill(
            "helper",
            "Summarize the meeting notes for my team: meeting notes, team notes, summaries.",
            triggers,
            &["summary", "meeting", "notes", "team"],
        ));
        let cat = Catalog::from_skills(vec![summarizer(), helper]);
        let m = cat.search(MEETING, 5);
        assert_eq!(names(&m).first(), Some(&"text-summarizer"), "{triggers:?}");
    }
}

#[test]
fn narrow_triggers_that_together_match_most_requests_earn_nothing() {
    let cat = Catalog::from_skills(vec![installed(skill("helper", "d", FOURTEEN, &[]))]);
    for q in [
        "Explain how compound interest works",
        "Plan a three day trip",
    ] {
        assert!(cat.search(q, 5).is_empty(), "{q}");
    }
    let w = &cat.warnings()[0].message;
    assert!(w.contains("together they match"), "{w}");
    // Any one of them alone is a trigger like any other.
    let cat = Catalog::from_skills(vec![installed(skill("helper", "d", &["compare"], &[]))]);
    assert_eq!(cat.search("compare the offers", 5).len(), 1);
    assert!(cat.warnings().is_empty(), "{:?}", cat.warnings());
}

#[test]
fn a_promoted_installed_skill_ranks_by_its_score() {
    let notes = || {
        installed(skill(
            "meeting-notes",
            "Turns meeting notes into minutes.",
            &["meeting notes", "summarize"],
            &[],
        ))
    };
    let cat = Catalog::from_skills(vec![summarizer(), notes()]);
    assert_eq!(
        names(&cat.search(MEETING, 5)),
        ["text-summarizer", "meeting-notes"]
    );
    // Trusted in config: two triggers beat one, as for any trusted skill.
    let promoted = ["meeting-notes".to_owned()];
    let opts = SearchOptions {
        trusted: &promoted,
        ..SearchOptions::default()
    };
    let m = cat.search_with(MEETING, 5, &opts);
    assert_eq!(names(&m), ["meeting-notes", "text-summarizer"]);
    assert!(m[0].score > m[1].score);
    // Pinned: above every match.
    let opts = SearchOptions {
        pinned: &promoted,
        ..SearchOptions::default()
    };
    assert_eq!(
        names(&cat.search_with(MEETING, 1, &opts)),
        ["meeting-notes"]
    );
    // Its name is what the operator trusted: a look-alike is not it.
    let twin = ["meeting_notes".to_owned()];
    let opts = SearchOptions {
        trusted: &twin,
        ..SearchOptions::default()
    };
    assert_eq!(
        names(&cat.search_with(MEETING, 5, &opts)),
        ["text-summarizer", "meeting-notes"]
    );
}
