//! The approval policy: settings, stored reports, approvals, admission.

use super::*;
use crate::skill::Source;
use crate::store::{GateRecords, SqliteStore};

fn report(skill: &str, artifact: &str, pin: &str, passed: bool) -> Report {
    Report {
        skill: skill.into(),
        folder: "/skills/s".into(),
        handler: "handler.wasm".into(),
        provenance: Provenance::Installed,
        artifact: artifact.into(),
        size: 10,
        capabilities_pin: pin.into(),
        at: 1,
        outcome: if passed {
            Outcome::Passed
        } else {
            Outcome::Rejected
        },
        checks: vec![Verdict {
            check: Check::Imports,
            status: if passed { Status::Pass } else { Status::Fail },
            class: (!passed).then_some(FindingClass::UndeclaredImport),
            explanation: "imports wasi:sockets/tcp".into(),
            details: Vec::new(),
        }],
        cases: Vec::new(),
        duration_ms: 1,
        hand_only: Vec::new(),
    }
}

#[test]
fn a_handler_runs_only_as_approved_and_each_refusal_says_why() {
    let d = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(&d.path().join("s.db")).expect("open");
    let none = pin("sha256:md", "sha256:tree");
    let refusal = |artifact: &str, pin: &str| {
        admission(&store, "s", artifact, pin)
            .expect_err("refused")
            .to_string()
    };
    assert!(refusal("sha256:a", &none).contains("has not been through the gate"));
    store_report(&store, &report("s", "sha256:a", &none, false)).expect("store");
    let r = refusal("sha256:a", &none);
    assert!(r.contains("the gate rejected it"), "{r}");
    assert!(r.contains("imports: UndeclaredImport"), "{r}");
    let e = approve(&store, "s", "sha256:a", &none, ApprovedBy::Operator).expect_err("rejected");
    assert!(matches!(e, ApprovalError::Rejected { .. }), "{e}");

    let id = store_report(&store, &report("s", "sha256:a", &none, true)).expect("store");
    assert!(refusal("sha256:a", &none).contains("waits for `skillhost handler approve s`"));
    assert_eq!(
        state(&store, "s", "sha256:a", &none),
        Ok(HandlerState::Passed)
    );
    // Approval is for the skill the report was made against: its SKILL.md
    // and every other file of its folder.
    let more = pin("sha256:md", "sha256:other-tree");
    let edited = pin("sha256:other-md", "sha256:tree");
    for other in [&more, &edited] {
        let e = approve(&store, "s", "sha256:a", other, ApprovedBy::Operator)
            .expect_err("another skill");
        assert!(matches!(e, ApprovalError::SkillChanged { .. }), "{e}");
    }
    let row = approve(&store, "s", "sha256:a", &none, ApprovedBy::Operator).expect("approve");
    assert_eq!(row.report_id, id);
    assert_eq!(admission(&store, "s", "sha256:a", &none), Ok(()));
    assert_eq!(
        state(&store, "s", "sha256:a", &none),
        Ok(HandlerState::Enabled)
    );
    // Other bytes, a skill that now declares more or a new SKILL.md:
    // refused.
    let r = refusal("sha256:b", &none);
    assert!(r.contains("artifact changed since approval"), "{r}");
    assert!(r.contains("run `skillhost handler gate s`"), "{r}");
    assert!(refusal("sha256:a", &more).contains("the skill changed since approval"));
    assert!(refusal("sha256:a", &edited).contains("the skill changed since approval"));
    // Other skills are not approved by it.
    assert!(admission(&store, "t", "sha256:a", &none).is_err());
}

#[test]
fn a_failing_report_for_the_approved_bytes_revokes_the_approval_at_once() {
    let d = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(&d.path().join("s.db")).expect("open");
    let p = pin("sha256:md", "sha256:tree");
    store_report(&store, &report("s", "sha256:a", &p, true)).expect("store");
    approve(&store, "s", "sha256:a", &p, ApprovedBy::Operator).expect("approve");
    // A rejection of other bytes leaves it alone.
    store_report(&store, &report("s", "sha256:b", &p, false)).expect("store");
    assert_eq!(admission(&store, "s", "sha256:a", &p), Ok(()));
    // The same bytes and pin, judged again, rejected: it stops running.
    let id = store_report(&store, &report("s", "sha256:a", &p, false)).expect("store");
    let refusal = admission(&store, "s", "sha256:a", &p).expect_err("revoked");
    assert!(
        matches!(&refusal, Refusal::Rejected { report, .. } if *report == id),
        "{refusal}"
    );
    assert_eq!(
        state(&store, "s", "sha256:a", &p),
        Ok(HandlerState::Quarantined)
    );
    assert_eq!(store.handler_approval("s").expect("read"), None);
    // Approving it needs a pass again.
    let e = approve(&store, "s", "sha256:a", &p, ApprovedBy::Operator).expect_err("rejected");
    assert!(matches!(e, ApprovalError::Rejected { .. }), "{e}");
}

/// A skill of `source` whose front matter says a model wrote its
/// handler (`handler_generated: true`).
fn says_a_model_wrote_its_handler(source: Source) -> crate::skill::Skill {
    let md = b"---\nname: s\ndescription: d\nmetadata:\n  skillhost:\n    handler: h.wasm\n    handler_generated: true\n---\n";
    let parsed = crate::skill::parse_skill(md, "s").expect("parses");
    crate::skill::Skill {
        name: parsed.name,
        description: parsed.description,
        body: parsed.body,
        dir: "/s".into(),
        path: "/s/SKILL.md".into(),
        version: String::new(),
        source,
        warnings: Vec::new(),
        meta: parsed.meta,
    }
}

#[test]
fn the_default_approval_policy_depends_on_provenance_and_cases() {
    let c = GateConfig::default();
    let passed = |provenance, compared: usize, class_only: usize| {
        let case = |compares_answer| CaseRun {
            origin: "tests/cases.jsonl:1".into(),
            task: "t".into(),
            compare: if compares_answer { "exact" } else { "class" }.into(),
            expected: "x".into(),
            compares_answer,
            got: "x".into(),
            passed: true,
            deterministic: true,
            limit: None,
            seeds: [1, 2],
        };
        let mut r = report("s", "sha256:a", "pin", true);
        r.provenance = provenance;
        r.cases = std::iter::repeat_n(case(true), compared)
            .chain(std::iter::repeat_n(case(false), class_only))
            .collect();
        r
    };
    let min = c.auto_min_cases;
    assert!(!c.auto_approves(&passed(Provenance::Installed, 100, 0)));
    assert!(c.auto_approves(&passed(Provenance::Generated, min, 0)));
    assert!(!c.auto_approves(&passed(Provenance::Generated, min - 1, 0)));
    // Cases that accept any answer of a class pin nothing down.
    let loose = passed(Provenance::Generated, 0, 100);
    assert!(!c.auto_approves(&loose));
    assert!(
        c.why_manual(&loose)
            .contains("only `skillhost handler approve`")
    );
    let auto = GateConfig {
        approve: Some(Approve::Auto),
        auto_min_cases: 0,
        ..GateConfig::default()
    };
    assert!(!auto.auto_approves(&passed(Provenance::Installed, 0, 0)));
    assert!(auto.auto_approves(&passed(Provenance::Installed, 1, 0)));
    // A gate that could not run the call that will run.
    let mut partial = passed(Provenance::Generated, 100, 0);
    partial.hand_only = vec!["it is granted http".into()];
    assert!(!c.auto_approves(&partial));
    assert!(c.why_manual(&partial).starts_with("it is granted http"));
    let manual = GateConfig {
        approve: Some(Approve::Manual),
        ..GateConfig::default()
    };
    assert!(!manual.auto_approves(&passed(Provenance::Generated, 100, 0)));
    assert!(c.gates(Source::Installed) && c.gates(Source::Forged));
    assert!(!c.gates(Source::Bundled) && !c.gates(Source::Workspace));
    assert!(c.ceiling(Provenance::Generated).is_empty());
    assert_eq!(
        c.ceiling(Provenance::Installed),
        vec!["files", "http", "tools", "llm", "kv"]
    );
    // A handler a model wrote is gated whatever its skill's source.
    let mut skill = says_a_model_wrote_its_handler(Source::Workspace);
    assert!(c.gates_skill(&skill));
    skill.meta.skillhost.handler_generated = false;
    assert!(!c.gates_skill(&skill));
}

#[test]
fn provenance_is_what_the_host_recorded_never_what_the_skill_says() {
    let d = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(&d.path().join("s.db")).expect("open");
    let mut skill = says_a_model_wrote_its_handler(Source::Installed);
    let of = |skill: &crate::skill::Skill, artifact: &str| {
        Provenance::recorded(&store, skill, artifact).expect("store")
    };
    // It says a model wrote it; nothing the host recorded says so.
    assert_eq!(of(&skill, "sha256:a"), Provenance::Installed);
    let mut generated = report("s", "sha256:a", "pin", true);
    generated.provenance = Provenance::Generated;
    store_report(&store, &generated).expect("store");
    assert_eq!(of(&skill, "sha256:a"), Provenance::Generated);
    // Only for the bytes the gate judged.
    assert_eq!(of(&skill, "sha256:b"), Provenance::Installed);
    skill.source = Source::Forged;
    assert_eq!(of(&skill, "sha256:b"), Provenance::Generated);
}

#[test]
fn a_ceiling_names_only_capabilities_that_exist() {
    let ok: GateConfig = toml::from_str("generated = [\"kv\", \"llm\"]").expect("parse");
    assert_eq!(ok.ceiling(Provenance::Generated), vec!["kv", "llm"]);
    let e = toml::from_str::<GateConfig>("generated = [\"sockets\"]").expect_err("unknown");
    assert!(
        e.to_string().contains("unknown capability `sockets`"),
        "{e}"
    );
}
