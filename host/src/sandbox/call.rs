//! One call of a handler: a fresh store with the call's state, its
//! limits and epoch deadline, instantiation and `handle`, and the outcome
//! classified (the handler's answer or failure, a limit, a trap).

use std::time::{Duration, Instant};

use wasmtime::{PoolConcurrencyLimitError, Store, Trap, UpdateDeadline, WasmBacktrace};

use super::bindings::{self, HandlerPre};
use super::host_budget::{Charged, HostBudget};
use super::limits::{self, LimitHit, Limits};
use super::state::{self, FileRoots, HostState};
use super::{CallOutcome, Entropy, Inner, MAX_CLASS_LEN, Services};
use crate::skill::Capabilities;
use crate::types::{Chain, Failure, FailureClass, Output};

/// One call's input, owned so that it can move to the guest threads.
pub(super) struct CallJob {
    pub(super) pre: HandlerPre<HostState>,
    pub(super) skill: String,
    pub(super) description: String,
    pub(super) context: String,
    pub(super) capabilities: Capabilities,
    pub(super) limits: Limits,
    pub(super) roots: FileRoots,
    pub(super) services: Services,
    pub(super) entropy: Entropy,
}

/// How far a call got, and what it answered.
type Ran = Result<
    (
        wasmtime::Result<
            Result<
                bindings::skillhost::skill::types::Output,
                bindings::skillhost::skill::types::Failure,
            >,
        >,
        Duration,
    ),
    wasmtime::Error,
>;

impl Inner {
    pub(super) async fn call(&self, mut job: CallJob) -> CallOutcome {
        let started = Instant::now();
        // The epoch ticks (deadlines, yields, budget checks) while it runs.
        let _ticking = self.ticker.call_started();
        // Declared before the store so that it is released after the
        // store's slots are back in the pool.
        let _slot = match &self.pool_slots {
            Some(slots) => match tokio::time::timeout(job.limits.timeout, slots.acquire()).await {
                Ok(Ok(permit)) => Some(permit),
                _ => return CallOutcome::failed(no_slot(job.limits)),
            },
            None => None,
        };
        // One budget for all the memory a call holds: its linear memories
        // and what it makes the host hold (what its host calls create, what
        // it returns, lifted out of its memory), together at most its
        // memory limit plus a fixed host allowance.
        let budget = HostBudget::new(
            job.limits
                .memory_bytes
                .saturating_add(job.limits.host_bytes),
        );
        let limits = job.limits;
        let task = bindings::skillhost::skill::types::Task {
            description: std::mem::take(&mut job.description),
            context_json: std::mem::take(&mut job.context),
        };
        let pre = job.pre.clone();
        let mut store = match self.new_store(job, &budget, started) {
            Ok(store) => store,
            Err(failure) => return CallOutcome::failed(failure),
        };
        // The epoch deadline stops wasm; this outer bound stops a host call
        // (a tool, the model) that the guest is waiting on.
        let grace = Duration::from_secs(1);
        let run = Charged::new(
            async {
                let instance = pre.instantiate_async(&mut store).await?;
                let instantiated = started.elapsed();
                let r = instance.call_handle(&mut store, &task).await;
                Ok::<_, wasmtime::Error>((r, instantiated))
            },
            budget.clone(),
        );
        let timed = tokio::time::timeout(
            (limits.timeout + grace).saturating_sub(started.elapsed()),
            run,
        )
        .await;
        let elapsed = started.elapsed();
        let (result, instantiate) = judge(timed, &store, limits, elapsed);
        let state = store.data_mut();
        let events = state.take_events();
        CallOutcome {
            result,
            log: std::mem::take(&mut state.log),
            events,
            stdout: String::from_utf8_lossy(&state.stdout.contents()).into_owned(),
            stderr: String::from_utf8_lossy(&state.stderr.contents()).into_owned(),
            instantiate_us: micros(instantiate),
            call_us: micros(elapsed.saturating_sub(instantiate)),
            host_peak_bytes: budget.peak() as u64,
        }
    }

    /// A store for the call: its state from the grants, its limiter, and
    /// an epoch callback that stops a guest past its deadline or its host
    /// budget, else yields so that other calls on these threads make
    /// progress. Time spent waiting for a pool slot counts.
    fn new_store(
        &self,
        job: CallJob,
        budget: &std::sync::Arc<HostBudget>,
        started: Instant,
    ) -> Result<Store<HostState>, Failure> {
        let state = HostState::new(
            &job.skill,
            job.capabilities,
            job.limits,
            job.services,
            &job.roots,
            state::Ambient {
                net: self.options.net.clone(),
                budget: budget.clone(),
                entropy: job.entropy,
            },
        )
        .map_err(|e| Failure::new(FailureClass::Denied, Chain(&e).to_string()))?;
        // The engine that compiled the handler's code (Winch or Cranelift).
        let mut store = Store::new(job.pre.engine(), state);
        store.limiter(|s| &mut s.limiter);
        let deadline = started + job.limits.timeout;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |mut cx| {
            let s = cx.data_mut();
            if s.budget.exceeded_with(s.limiter.memory_bytes()) {
                // The call's error, found again by `classify`.
                return Err(LimitHit::HostMemory {
                    limit: s.budget.limit(),
                }
                .into());
            }
            if Instant::now() >= deadline {
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::Yield(1))
        });
        Ok(store)
    }
}

/// No instance slot of the pool came free within the call's time.
fn no_slot(limits: Limits) -> Failure {
    Failure::new(
        FailureClass::LimitExceeded,
        format!(
            "time: the call waited {} ms for one of the {} instance slots of the host's pool ([sandbox] pooling)",
            limits.timeout.as_millis(),
            limits::POOL_CALLS
        ),
    )
}

/// The call's result and how long instantiating took: an answer within
/// the limits, the handler's own failure, or which limit or trap stopped it.
fn judge(
    timed: Result<Ran, tokio::time::error::Elapsed>,
    store: &Store<HostState>,
    limits: Limits,
    elapsed: Duration,
) -> (Result<Output, Failure>, Duration) {
    let failed = |e: &wasmtime::Error, stage| {
        let data = store.data();
        classify(e, stage, data.limiter.hit, &data.stderr.contents(), limits)
    };
    match timed {
        Err(_) => (
            Err(Failure::new(
                FailureClass::LimitExceeded,
                format!(
                    "time: the call ran longer than {} ms (waiting on the host)",
                    limits.timeout.as_millis()
                ),
            )),
            elapsed,
        ),
        Ok(Err(e)) => (Err(failed(&e, Stage::Instantiate)), elapsed),
        Ok(Ok((Err(e), inst))) => (Err(failed(&e, Stage::Call)), inst),
        Ok(Ok((Ok(Err(f)), inst))) => (Err(check_failure(f.class, f.message, limits)), inst),
        Ok(Ok((Ok(Ok(o)), inst))) => (check_output(o.body, o.content_type, o.flags, limits), inst),
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Everything a handler returns counts against one output limit.
pub(super) fn check_output(
    body: String,
    content_type: String,
    flags: Vec<String>,
    limits: Limits,
) -> Result<Output, Failure> {
    let size = body.len() + content_type.len() + flags.iter().map(String::len).sum::<usize>();
    if size > limits.output_bytes {
        return Err(Failure::new(
            FailureClass::OutputTooLarge,
            format!(
                "the handler returned {size} bytes (body, content type and flags), the limit is {} bytes",
                limits.output_bytes
            ),
        ));
    }
    Ok(Output {
        body,
        content_type,
        flags,
    })
}

/// A handler's own failure: its class must be a short identifier, and its
/// class and message count against the output limit like an answer.
pub(super) fn check_failure(class: String, message: String, limits: Limits) -> Failure {
    let identifier = !class.is_empty()
        && class.len() <= MAX_CLASS_LEN
        && class.starts_with(|c: char| c.is_ascii_alphabetic())
        && class
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !identifier {
        let shown: String = class.chars().take(32).collect();
        return Failure::new(
            FailureClass::InvalidFailure,
            format!(
                "the handler failed with class `{shown}`{}, which is not an identifier (a letter, then letters, digits, `_`, `-` or `.`; at most {MAX_CLASS_LEN} bytes)",
                if class.len() > shown.len() { "…" } else { "" }
            ),
        );
    }
    let size = class.len() + message.len();
    if size > limits.output_bytes {
        return Failure::new(
            FailureClass::OutputTooLarge,
            format!(
                "the handler failed with class `{class}` and a message of {} bytes, the limit is {} bytes",
                message.len(),
                limits.output_bytes
            ),
        );
    }
    Failure::new(class, message)
}

/// Where a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    Instantiate,
    Call,
}

/// Turns a wasmtime error from instantiation or the call into a failure
/// that says which limit or trap stopped the handler: by the limit the
/// limiter refused (`hit`), else by the error's type. `stderr` is the
/// guest's, for a panic message.
pub(super) fn classify(
    e: &wasmtime::Error,
    stage: Stage,
    hit: Option<LimitHit>,
    stderr: &[u8],
    limits: Limits,
) -> Failure {
    // A refused allocation first: the trap that follows is its effect.
    if let Some(hit) = hit.or_else(|| e.downcast_ref::<LimitHit>().copied()) {
        return Failure::new(FailureClass::LimitExceeded, hit.to_string());
    }
    // Rust prints "thread ... panicked at FILE:" and the message on the
    // next line; keep both.
    let panic_line = || {
        let stderr = String::from_utf8_lossy(stderr);
        let mut lines = stderr.lines().skip_while(|l| !l.contains("panicked"));
        match lines.next() {
            Some(at) => {
                let msg = lines.next().unwrap_or("").trim();
                format!(" ({} {msg})", at.trim())
            }
            None => String::new(),
        }
    };
    if e.downcast_ref::<PoolConcurrencyLimitError>().is_some() {
        return Failure::new(
            FailureClass::LimitExceeded,
            format!("the host's instance pool is full ([sandbox] pooling): {e}"),
        );
    }
    if let Some(wasmtime::component::ResourceTableError::Full) =
        e.downcast_ref::<wasmtime::component::ResourceTableError>()
    {
        return Failure::new(
            FailureClass::LimitExceeded,
            format!(
                "host objects: the handler held more than {} at once ([limits] resources)",
                limits.resources
            ),
        );
    }
    match e.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => Failure::new(
            FailureClass::LimitExceeded,
            format!(
                "time: the handler ran longer than {} ms",
                limits.timeout.as_millis()
            ),
        ),
        Some(Trap::StackOverflow) => Failure::new(
            FailureClass::LimitExceeded,
            "stack: the handler recursed too deeply",
        ),
        Some(Trap::MemoryOutOfBounds) => Failure::new(
            FailureClass::Trap,
            "the handler accessed memory out of bounds; in handlers built from Rust or C this usually means their stack overflowed (deep recursion)",
        ),
        Some(Trap::UnreachableCodeReached) => Failure::new(
            FailureClass::Trap,
            format!("the handler aborted{}", panic_line()),
        ),
        Some(t) => Failure::new(
            FailureClass::Trap,
            format!("the handler trapped: {t}{}", panic_line()),
        ),
        // wasmtime 48 refuses an instance past the limiter's counts
        // (`instances`, `memories`, `tables`) with an untyped message
        // ("resource limit exceeded: ... count too high"); a linked handler
        // fails to instantiate before running guest code (no wasm
        // backtrace) only when its resources are refused.
        None if stage == Stage::Instantiate && e.downcast_ref::<WasmBacktrace>().is_none() => {
            Failure::new(FailureClass::LimitExceeded, format!("{e:#}"))
        }
        None => Failure::new(FailureClass::Trap, format!("{e:#}")),
    }
}
