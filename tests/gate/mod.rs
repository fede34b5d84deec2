//! The validation gate (`skillhost handler gate|report|approve`): each way
//! a handler is rejected, each with its own classified verdict and built
//! from source (WAT text, or the echo guest's misbehaving modes), a
//! correct handler accepted and then run on tier 1, and the approval
//! pinned to the artifact's bytes that `run` enforces for gated sources.

use crate::harness;

use std::path::{Path, PathBuf};

use harness::{Workspace, guest};
use skillhost::config::Config;
use skillhost::exec::Runner;
use skillhost::gate::{self, Subject};
use skillhost::gate_policy::{Check, FindingClass, HandlerState, Provenance, Report, Status};
use skillhost::store::RunRecord;

mod approval;
mod hostile;
mod pins;
mod rejections;
mod sameness;

const HANDLER: &str = "metadata:\n  skillhost:\n    handler: handler.wasm";

/// A component that exports a `handle` (of a type no host would link)
/// and imports `imports`: enough for every static check.
fn component_importing(imports: &[&str]) -> Vec<u8> {
    let mut text = String::from("(component\n");
    for i in imports {
        text.push_str(&format!("(import \"{i}\" (instance))\n"));
    }
    text.push_str(
        r#"(core module $m (func (export "f")))
        (core instance $i (instantiate $m))
        (func (export "handle") (canon lift (core func $i "f"))))"#,
    );
    wat::parse_str(text).expect("wat")
}

/// Writes `root/NAME/SKILL.md` (front matter lines `front`), the handler
/// bytes and, if given, `tests/cases.jsonl`.
fn write_skill(root: &Path, name: &str, front: &str, wasm: &[u8], cases: Option<&str>) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("tests")).expect("mkdir");
    let md = format!("---\nname: {name}\ndescription: Test skill {name}.\n{front}\n---\n\nTest.\n");
    std::fs::write(dir.join("SKILL.md"), md).expect("write SKILL.md");
    std::fs::write(dir.join("handler.wasm"), wasm).expect("write handler");
    if let Some(c) = cases {
        std::fs::write(dir.join("tests/cases.jsonl"), c).expect("write cases");
    }
    dir
}

fn echo() -> Vec<u8> {
    std::fs::read(guest("echo-guest")).expect("echo guest")
}

/// The gate on catalog skill `name` of a runner with `config`.
fn gate_skill(ws: &Workspace, config: Config, name: &str) -> (Runner, gate::Gated) {
    let runner = ws.runner(config);
    let subject = Subject::catalog(&runner, name).expect("subject");
    let gated = harness::runtime()
        .block_on(gate::gate(&runner, &subject))
        .expect("gate");
    (runner, gated)
}

fn gate_report(ws: &Workspace, config: Config, name: &str) -> Report {
    gate_skill(ws, config, name).1.report
}

fn verdict(r: &Report, check: Check) -> &skillhost::gate_policy::Verdict {
    r.verdict(check).expect("every check has a verdict")
}

/// The report is a rejection whose failed check is `check` with `class`.
fn assert_rejected(r: &Report, check: Check, class: FindingClass) {
    assert!(!r.passed(), "{r:#?}");
    let v = verdict(r, check);
    assert_eq!(v.status, Status::Fail, "{r:#?}");
    assert_eq!(v.class, Some(class), "{r:#?}");
    assert!(!v.explanation.is_empty());
}

/// Nothing after the static checks ran: no case, no instantiation.
fn assert_nothing_ran(r: &Report) {
    for c in [Check::Cases, Check::Determinism, Check::Limits] {
        assert_eq!(verdict(r, c).status, Status::Skipped, "{r:#?}");
    }
    assert!(r.cases.is_empty());
}
