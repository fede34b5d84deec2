//! `store migrate`: one store copied into another.

use super::gate::{approval, report};
use super::runs::step;
use super::*;
use crate::store::copy::{Copied, copy};

/// `store migrate`: a SQLite store copied into this one.
pub(super) fn a_copy_of_a_sqlite_store_is_whole_and_a_second_copy_adds_nothing(b: &dyn Backend) {
    let sqlite = Sqlite::new();
    let from = Source::fill(default_store(&sqlite));
    let to = default_store(b);
    let mut pages = Vec::new();
    let copied = copy(from.store.as_ref(), to.as_ref(), |n| pages.push(n)).expect("copy");
    assert_eq!(
        copied,
        Copied {
            runs: 2_500,
            runs_present: 0,
            verdicts: 1,
            kv_entries: 1,
            gate_reports: 2,
            approvals: 1,
        }
    );
    assert_eq!(pages, [1_000, 2_000, 2_500]);
    from.assert_copied_into(to.as_ref());
    from.assert_new_ids_follow_in(to.as_ref());

    let again = copy(from.store.as_ref(), to.as_ref(), |_| {}).expect("copy again");
    assert_eq!(
        again,
        Copied {
            runs_present: 2_500,
            ..Copied::default()
        }
    );
    assert_eq!(to.run_count().expect("count"), 2_501);
}

/// The store copied from, and what it was given.
struct Source {
    store: Arc<dyn RunStore>,
    /// Its runs, with their ids.
    runs: Vec<RunRecord>,
    ids: Vec<i64>,
    /// The verdict on the sixth run.
    verdict: Verdict,
    /// The id of the gate report the approval rests on.
    passed: i64,
}

impl Source {
    /// `store` given runs, a verdict, a kv entry, two gate reports and an
    /// approval.
    fn fill(store: Arc<dyn RunStore>) -> Source {
        let mut runs = runs_to_copy();
        let ids = store.record_runs(&runs).expect("record");
        for (r, id) in runs.iter_mut().zip(&ids) {
            r.id = *id;
        }
        let verdict = Verdict {
            ok: false,
            class: Some("ToneError".into()),
            note: None,
            at: 9,
        };
        assert!(store.mark_run(ids[5], &verdict).expect("mark"));
        store
            .kv_set("mail", "greeting", b"hello\0bytes")
            .expect("kv");
        let passed = store
            .insert_gate_report(&report("mail", "h1", true))
            .expect("report");
        store
            .insert_gate_report(&report("notes", "h2", false))
            .expect("report");
        assert!(
            store
                .approve_handler(&approval("mail", "h1", passed))
                .expect("approve")
        );
        Source {
            store,
            runs,
            ids,
            verdict,
            passed,
        }
    }

    /// `to` holds what this store holds, as it reads it.
    fn assert_copied_into(&self, to: &dyn RunStore) {
        let from = self.store.as_ref();
        assert_eq!(to.run_count().expect("count"), 2_500);
        for i in [0, 7, 1_234, 2_499] {
            assert_eq!(
                to.get_run(self.ids[i]).expect("get"),
                Some(self.runs[i].clone())
            );
        }
        assert_eq!(
            to.skill_usage().expect("usage"),
            from.skill_usage().expect("usage")
        );
        assert_eq!(
            to.verdict(self.ids[5]).expect("verdict"),
            Some(self.verdict.clone())
        );
        assert_eq!(
            to.failure_groups(10_000).expect("groups"),
            from.failure_groups(10_000).expect("groups")
        );
        assert_eq!(
            to.kv_get("mail", "greeting").expect("kv"),
            Some(b"hello\0bytes".to_vec())
        );
        assert_eq!(
            to.all_gate_reports().expect("reports"),
            from.all_gate_reports().expect("reports")
        );
        assert_eq!(
            to.handler_approval("mail").expect("approval"),
            Some(approval("mail", "h1", self.passed))
        );
    }

    /// New ids on `to` come after the copied ones, for runs and reports.
    fn assert_new_ids_follow_in(&self, to: &dyn RunStore) {
        let next = to.record_run(&run("mail", true, 1)).expect("record");
        assert!(next > self.ids[2_499], "{next}");
        let report_id = to
            .insert_gate_report(&report("mail", "h3", true))
            .expect("report");
        assert!(report_id > self.passed, "{report_id}");
    }
}

/// 2,500 runs of three skills, every seventh with steps and a rule.
fn runs_to_copy() -> Vec<RunRecord> {
    (0..2_500)
        .map(|i| {
            let mut r = run(["mail", "notes", "B"][i % 3], i % 4 != 0, i as i64);
            r.task = format!("task {i}");
            if i % 7 == 0 {
                r.steps = vec![
                    step("tool", Some("read"), None),
                    step("tool", Some("send"), Some("Denied")),
                ];
                r.rules_applied = vec![AppliedRecord {
                    rule_id: format!("r{i}"),
                    kind: "prevention".into(),
                    effect: "set".into(),
                }];
            }
            r
        })
        .collect()
}
