//! Checks 5 to 7: every case runs twice in the sandbox, under a run's
//! limits and with monotonic clocks and random numbers from two different
//! seeds, as many runs at once as there are cores.
//! The first run's answer must be the expected one (5), the second's the
//! same as the first (6), and neither may hit a limit (7).
//!
//! Each run is the call a run of the skill makes: the capabilities it has
//! at run time (declared ∩ granted), a run's limits, and clocks and random
//! numbers from the constructor every run's come from (the real wall
//! clock, a monotonic clock at an offset drawn per call, random numbers
//! seeded per call; see `sandbox::Entropy`). Only what would reach
//! outside, or state a run has and a case cannot, is held back: the
//! key-value store is a fresh, empty one for each run, no host tool or
//! model is there (their calls answer not-found), HTTP is not granted and
//! granted writes are reads. A skill granted any of those is approved by
//! hand only (see `not_live_in_the_gate`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::cases::{Case, Compare};
use super::statics::{fail, pass};
use crate::gate_policy::{CaseRun, Check, FindingClass, Verdict};
use crate::grants::{Effective, KvHost, Services};
use crate::learn::condition::Facts;
use crate::sandbox::{CallRequest, Entropy, FileRoots, Handler, Limits, Sandbox};
use crate::skill::{Capabilities, Skill};
use crate::types::{Failure, FailureClass, Output, ServiceError};

/// What every case of one gate runs with.
pub(super) struct Bench {
    pub sandbox: Arc<Sandbox>,
    pub handler: Handler,
    pub skill: Skill,
    pub capabilities: Capabilities,
    pub limits: Limits,
    pub roots: FileRoots,
    /// The skill's validators (and the problems of those that did not
    /// compile, which a run ignores too).
    pub validators: Arc<crate::exec::ValidatorSet>,
    /// A random base the seeds of each case's two runs derive from.
    pub seed: u64,
    pub kv_quota_bytes: u64,
}

/// The longest text of an answer kept in the report.
const SHOWN: usize = 300;

/// A case's two runs and what came of them.
pub(super) struct Ran {
    pub run: CaseRun,
    /// The limit it hit, classified.
    pub limit: Option<FindingClass>,
}

impl Ran {
    /// The same, its answer not counted as pinned down: a case whose
    /// author is the handler's (see `Subject::shipped`).
    pub(super) fn pinning_nothing(mut self) -> Ran {
        self.run.compares_answer = false;
        self
    }
}

impl Bench {
    /// Runs every case twice, as many runs at once as there are cores;
    /// the cases in their order, and the ones that could not run (each an
    /// explanation naming it).
    pub(super) async fn run_all(self: Arc<Self>, cases: &[Case]) -> (Vec<Ran>, Vec<String>) {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let slots = Arc::new(tokio::sync::Semaphore::new(cores));
        let mut invalid = Vec::new();
        let mut started = Vec::with_capacity(cases.len());
        for (i, case) in cases.iter().enumerate() {
            let context =
                match crate::exec::context::build(&self.skill.meta.context_fields, &case.context) {
                    Ok(c) => c,
                    Err(e) => {
                        invalid.push(format!(
                            "{}: its context does not fit the skill: {e}",
                            case.origin
                        ));
                        continue;
                    }
                };
            let seeds = self.seeds(i);
            let runs = seeds.map(|seed| {
                let (bench, slots) = (self.clone(), slots.clone());
                let (task, context) = (case.task.clone(), context.clone());
                tokio::spawn(async move {
                    let _slot = slots.acquire_owned().await;
                    bench.once(&task, &context, seed).await
                })
            });
            started.push((case, context, seeds, runs));
        }
        let mut ran = Vec::with_capacity(started.len());
        for (case, context, seeds, [a, b]) in started {
            let joined = |r: Result<Result<Output, Failure>, tokio::task::JoinError>| {
                r.unwrap_or_else(|e| {
                    Err(Failure::new(
                        FailureClass::Trap,
                        format!("the run's task ended abnormally: {e}"),
                    ))
                })
            };
            let first = self.validate(&case.task, &context, joined(a.await));
            let second = self.validate(&case.task, &context, joined(b.await));
            ran.push(judge(case, seeds, first, second));
        }
        (ran, invalid)
    }

    /// Two different seeds for case `index`.
    fn seeds(&self, index: usize) -> [u64; 2] {
        let mix = |k: u64| {
            let mut z = self.seed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
            z ^ (z >> 33)
        };
        let a = mix(2 * index as u64 + 1);
        let mut b = mix(2 * index as u64 + 2);
        if a == b {
            b = b.wrapping_add(1);
        }
        [a, b]
    }

    async fn once(
        &self,
        task: &str,
        context: &Map<String, Value>,
        seed: u64,
    ) -> Result<Output, Failure> {
        let grants = Effective {
            capabilities: self.capabilities.clone(),
            ..Effective::none()
        };
        let scratch: Arc<dyn KvHost> = Arc::new(ScratchKv::new(self.kv_quota_bytes));
        let services = Services::default().with(scratch);
        self.sandbox
            .call(
                &self.handler,
                &CallRequest {
                    skill: &self.skill.name,
                    description: task,
                    context,
                    grants: &grants,
                    limits: self.limits,
                    roots: &self.roots,
                    services,
                    entropy: Entropy::Seeded(seed),
                },
            )
            .await
            .result
    }

    /// The skill's validators read answers as they do on a run, so a
    /// recorded failure that a validator named is reproduced.
    fn validate(
        &self,
        task: &str,
        context: &Map<String, Value>,
        result: Result<Output, Failure>,
    ) -> Result<Output, Failure> {
        let output = result?;
        let facts = Facts {
            task,
            skill: &self.skill.name,
            context,
            output: Some(&output.body),
            failure: None,
        };
        match self.validators.0.iter().find(|v| v.fails(&facts)) {
            Some(v) => Err(Failure::new(v.class.clone(), v.message.clone())),
            None => Ok(output),
        }
    }
}

/// A case's verdicts from its two runs.
fn judge(
    case: &Case,
    seeds: [u64; 2],
    first: Result<Output, Failure>,
    second: Result<Output, Failure>,
) -> Ran {
    let limit = limit_hit(&first).or_else(|| limit_hit(&second));
    let passed = limit.is_none() && case.matches(&first);
    Ran {
        run: CaseRun {
            origin: case.origin.clone(),
            task: case.task.clone(),
            compare: case.compare.name().to_owned(),
            expected: shorten(&case.expected_text()),
            compares_answer: case.compares_answer(),
            got: describe(&first),
            passed,
            deterministic: first == second,
            limit: limit.map(|_| {
                [&first, &second]
                    .into_iter()
                    .find_map(|r| r.as_ref().err().filter(|f| is_limit(f)))
                    .map(|f| shorten(&f.message))
                    .unwrap_or_default()
            }),
            seeds,
        },
        limit,
    }
}

fn is_limit(f: &Failure) -> bool {
    matches!(
        f.class,
        FailureClass::LimitExceeded | FailureClass::OutputTooLarge
    )
}

/// Which limit a run hit, from the host's failure: its class, and the
/// resource its message starts with (see `sandbox::limits`).
fn limit_hit(r: &Result<Output, Failure>) -> Option<FindingClass> {
    let f = r.as_ref().err().filter(|f| is_limit(f))?;
    Some(match f.class {
        FailureClass::OutputTooLarge => FindingClass::OutputLimit,
        _ if f.message.starts_with("time") => FindingClass::TimeLimit,
        _ if f.message.starts_with("memory") || f.message.starts_with("host memory") => {
            FindingClass::MemoryLimit
        }
        _ => FindingClass::OtherLimit,
    })
}

fn describe(r: &Result<Output, Failure>) -> String {
    shorten(&match r {
        Ok(o) => o.body.clone(),
        Err(f) => format!("{}: {}", f.class, f.message),
    })
}

/// `n` and `thing`, in the plural unless one.
fn count(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

fn cases(n: usize) -> String {
    count(n, "case")
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(SHOWN) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// Verdicts 5, 6 and 7 from the cases' runs and the cases that could not
/// run (each an explanation naming it).
pub(super) fn verdicts(ran: &[Ran], invalid: &[String], left_out: usize) -> [Verdict; 3] {
    let judged: Vec<&Ran> = ran.iter().filter(|r| r.limit.is_none()).collect();
    let hit = ran.len() - judged.len();
    let note = unjudged_note(hit, left_out);
    [
        answers_verdict(ran, &judged, invalid, &note),
        determinism_verdict(&judged),
        limits_verdict(ran, hit),
    ]
}

/// What the answers verdict adds about the cases it did not judge: those
/// that hit a limit, and the recorded runs left out.
fn unjudged_note(hit: usize, left_out: usize) -> String {
    match (hit, left_out) {
        (0, 0) => String::new(),
        (h, 0) => format!("; {} hit a limit (see limits)", cases(h)),
        (0, l) => {
            format!(
                "; {} left out (redacted context, or a failure the host raised)",
                count(l, "recorded run")
            )
        }
        (h, l) => format!(
            "; {} hit a limit (see limits); {} left out",
            cases(h),
            count(l, "recorded run")
        ),
    }
}

/// Verdict 5: the judged cases (those within the limits) gave the
/// expected answers, and every case could run.
fn answers_verdict(ran: &[Ran], judged: &[&Ran], invalid: &[String], note: &str) -> Verdict {
    let wrong: Vec<String> = judged
        .iter()
        .filter(|r| !r.run.passed)
        .map(|r| {
            format!(
                "{}: expected ({}) `{}`, got `{}`",
                r.run.origin, r.run.compare, r.run.expected, r.run.got
            )
        })
        .collect();
    let passed = judged.len() - wrong.len();
    if !wrong.is_empty() || !invalid.is_empty() {
        let class = if wrong.is_empty() {
            FindingClass::InvalidCase
        } else {
            FindingClass::WrongAnswer
        };
        let mut v = fail(
            Check::Cases,
            class,
            format!(
                "{} of {} gave another answer than expected, {} could not run{note}",
                wrong.len(),
                cases(judged.len()),
                invalid.len()
            ),
        );
        v.details = wrong.into_iter().chain(invalid.iter().cloned()).collect();
        v
    } else if ran.is_empty() {
        pass(
            Check::Cases,
            format!(
                "no cases: no recorded runs of the skill, no {}{note}; nothing pinned its answers down, so only `skillhost handler approve` can enable it",
                super::cases::CASES_FILE
            ),
        )
    } else if !judged.iter().any(|r| r.run.compares_answer) {
        pass(
            Check::Cases,
            format!(
                "{} passed, but none pinned an answer down (a failure class, `compare: class`, or a quarantine slot's own case){note}; only `skillhost handler approve` can enable it",
                cases(passed)
            ),
        )
    } else {
        pass(
            Check::Cases,
            format!("{} gave the expected answer{note}", cases(passed)),
        )
    }
}

/// Verdict 6: each judged case answered the same under both seeds.
fn determinism_verdict(judged: &[&Ran]) -> Verdict {
    let differing: Vec<String> = judged
        .iter()
        .filter(|r| !r.run.deterministic)
        .map(|r| {
            format!(
                "{}: differs between seeds {} and {} (first answer `{}`)",
                r.run.origin, r.run.seeds[0], r.run.seeds[1], r.run.got
            )
        })
        .collect();
    if differing.is_empty() {
        return pass(
            Check::Determinism,
            format!(
                "{} gave the same answer under two different monotonic clocks and random seeds",
                cases(judged.len())
            ),
        );
    }
    let mut v = fail(
        Check::Determinism,
        FindingClass::Nondeterministic,
        format!(
            "{} answered differently under other monotonic clocks or random seeds: the answer depends on the time or on random numbers",
            cases(differing.len())
        ),
    );
    v.details = differing;
    v
}

/// Verdict 7: no case hit a limit; `hit` of them did.
fn limits_verdict(ran: &[Ran], hit: usize) -> Verdict {
    let Some(class) = ran.iter().find_map(|r| r.limit) else {
        return pass(
            Check::Limits,
            format!("{} ran within the gate's limits", cases(ran.len())),
        );
    };
    let mut v = fail(
        Check::Limits,
        class,
        format!("{} hit a limit of the gate", cases(hit)),
    );
    v.details = ran
        .iter()
        .filter(|r| r.limit.is_some())
        .map(|r| {
            format!(
                "{}: {}",
                r.run.origin,
                r.run.limit.as_deref().unwrap_or_default()
            )
        })
        .collect();
    v
}

/// A key-value store of one run: empty at its start, gone at its end,
/// within the `[limits]` byte quota.
struct ScratchKv {
    entries: Mutex<HashMap<String, Vec<u8>>>,
    quota: u64,
}

impl ScratchKv {
    fn new(quota: u64) -> Self {
        ScratchKv {
            entries: Mutex::new(HashMap::new()),
            quota,
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<u8>>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl KvHost for ScratchKv {
    fn get(&self, _skill: &str, key: &str) -> Result<Option<Vec<u8>>, ServiceError> {
        Ok(self.entries().get(key).cloned())
    }

    fn set(&self, _skill: &str, key: &str, value: &[u8]) -> Result<(), ServiceError> {
        let mut entries = self.entries();
        let others: usize = entries
            .iter()
            .filter(|(k, _)| k.as_str() != key)
            .map(|(k, v)| k.len() + v.len())
            .sum();
        let would = (others + key.len() + value.len()) as u64;
        if would > self.quota {
            return Err(ServiceError::Limit(format!(
                "key-value quota: {would} bytes, the quota is {}",
                self.quota
            )));
        }
        entries.insert(key.to_owned(), value.to_vec());
        Ok(())
    }

    fn delete(&self, _skill: &str, key: &str) -> Result<(), ServiceError> {
        self.entries().remove(key);
        Ok(())
    }
}

/// How recorded answers of a skill are compared: as JSON when the skill
/// says it answers JSON, else as text.
pub(super) fn recorded_compare(skill: &Skill) -> Compare {
    match skill.meta.output_type.as_deref() {
        Some(t) if t.trim().eq_ignore_ascii_case("application/json") => Compare::Json,
        _ => Compare::Exact,
    }
}
