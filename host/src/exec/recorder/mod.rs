//! Recording off the request path. A run takes an id from a block reserved
//! ahead of need, is appended to this process's journal (one `write`), and
//! is queued for a writer thread, which stores what is queued in one
//! transaction, applies rule statistics once per batch, and runs the
//! automatic learning cycle when the run count crosses `auto_every`. A
//! request never waits for SQLite, `rules.json` or a learning cycle.
//!
//! The queue is bounded: past `[learning] record_queue_mb` of runs (and
//! rule statistics) waiting for the database (a slow database, or a writer
//! the requests leave no core to), a run's answer waits until the writer
//! has made room, which also gives the writer the core back.
//!
//! A store that cannot be written is tried again, less often the longer
//! it fails (up to every 5 s), for as long as the process lives; its runs
//! stay queued meanwhile, so a database that stays unwritable ends with
//! answers waiting for room, not with runs given up on or a journal that
//! grows without bound (it holds only the runs queued).
//!
//! Nothing is lost on a crash: a run in the queue is in the journal, and
//! the next host to open the store replays journals of ended processes.
//! Rule statistics ride with their runs; those of runs that are not
//! recorded (`record = false`, nested runs) are kept in memory until the
//! next batch, so a crash can lose those counts, never a run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

mod writer;

use super::CatalogCell;
use crate::learn::{self, Learning, LearningConfig, RuleOutcome};
use crate::llm::Provider;
use crate::paths::Paths;
use crate::store::journal::{self, JOURNAL_DIR, Journal, Line};
use crate::store::{RunRecord, RunStore, SharedStoreHandle, StoreConfig, StoreError};
use writer::Writer;
// Each holder leaves the data whole at every step.
use crate::types::lock;

/// Run ids taken at a time. Ids of concurrent processes interleave by
/// block, so "the last N runs" may be off by up to this many for runs made
/// by several processes at once; one host's runs are in order. The writer
/// fetches the next block when half of this one is left, at its next
/// batch: half a block should outlast a batch (`GATHER` and the store) at
/// the highest rate a host answers (in-process, about 28,000 runs a second
/// here, `benches/mcp.rs`: 512 ids last 18 ms), or runs wait for ids.
pub const ID_BLOCK: u64 = 1024;

/// Most runs stored in one transaction.
const MAX_BATCH: usize = 512;

/// How long the writer gathers runs into one transaction: a commit per run
/// cost a core's worth of SQLite work beside the requests, whose p99 it
/// raised (`benches/mcp.rs`); nothing waits on the write.
const GATHER: Duration = Duration::from_millis(5);

/// After a failed store the writer tries again after this, four times
/// longer after each failure up to [`RETRY_MAX`]; runs keep queueing
/// meanwhile, and are stored together once the store can be written.
const RETRY_FIRST: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_secs(5);

/// A flush stops waiting once the writer has failed this many tries since
/// it began (within about a quarter of a second of the store failing, at
/// most two [`RETRY_MAX`] once it has failed a while): its caller is about
/// to read a store that is down, and should report that store's error
/// rather than wait out its timeout.
const FLUSH_FAILURES: u64 = 2;

/// While the store keeps failing, the writer warns at the first failure
/// and then every this many (a minute apart at [`RETRY_MAX`]).
const WARN_EVERY: u32 = 12;

/// How long a run whose block of ids is used up waits for the writer's
/// next block before it reserves one itself: a batch's store, not a
/// learning cycle that asks a model.
const WAIT_FOR_IDS: Duration = Duration::from_millis(100);

/// How long dropping the last runner waits for the queue to reach the
/// database; what does not stays in the journal for the next host.
const DRAIN_ON_DROP: Duration = Duration::from_secs(10);

/// What a writer needs to run a learning cycle.
#[derive(Clone)]
pub(super) struct CycleInputs {
    pub paths: Paths,
    pub catalog: Arc<CatalogCell>,
    pub config: LearningConfig,
    /// Where runs are stored.
    pub store: StoreConfig,
    pub provider: Option<Arc<dyn Provider>>,
    /// Forging after runs (see `forge::after_runs`).
    #[cfg(feature = "forge")]
    pub forge: crate::forge::after_runs::Inputs,
}

enum Message {
    Run {
        seq: u64,
        run: Box<RunRecord>,
        /// Its journal line's length, what it counts against the queue.
        bytes: u64,
    },
    Rules {
        outcome: RuleOutcome,
        /// What it counts against the queue.
        bytes: u64,
    },
    ReserveIds,
    /// Unused ids, given back before the writer stops.
    ReturnIds(Vec<std::ops::Range<i64>>),
    Stop,
}

/// Whether the writer is fetching the next block of ids.
enum Asked {
    Yes,
    No,
}

#[derive(Default)]
struct Ids {
    current: std::ops::Range<i64>,
    spare: Option<std::ops::Range<i64>>,
    asked: bool,
}

impl Ids {
    /// Whether an id can be taken without a reservation.
    fn in_hand(&self) -> bool {
        !self.current.is_empty() || self.spare.is_some()
    }
}

/// Waits for a wake-up from `notify`, at most `timeout`, unless `ready`
/// holds once the wait is registered: a wake-up between the caller's last
/// look and this one is not missed.
async fn wait_until(notify: &tokio::sync::Notify, timeout: Duration, ready: impl Fn() -> bool) {
    let notified = notify.notified();
    let mut notified = std::pin::pin!(notified);
    notified.as_mut().enable();
    if !ready() {
        let _ = tokio::time::timeout(timeout, notified).await;
    }
}

/// What requests and the writer share. The writer runs at the lowest
/// priority, so whatever it locks that a request also needs, it holds
/// without I/O: the scheduler may not run it again for a while.
struct Shared {
    ids: Mutex<Ids>,
    /// Also orders runs: numbered, journaled and queued under it.
    journal: Mutex<Journal>,
    /// Highest sequence number handed to the writer.
    sent: AtomicU64,
    /// Highest sequence number the writer has stored (with every one
    /// before it).
    done: AtomicU64,
    /// Tries to store runs that failed, for `flush`.
    failed_tries: AtomicU64,
    /// For `flush` to wait on `done` and `failed_tries`; requests never
    /// take it.
    waiting: Mutex<()>,
    changed: Condvar,
    seq: AtomicU64,
    /// Bytes queued (runs, and rule statistics of runs not recorded) that
    /// the writer has not finished with.
    queued: AtomicU64,
    /// Wakes the runs waiting for room in the queue.
    room: tokio::sync::Notify,
    /// Wakes the runs waiting for the writer's block of ids.
    ids_ready: tokio::sync::Notify,
    /// Held by a run that reserves ids itself.
    reserving: tokio::sync::Mutex<()>,
}

/// The recording side of a runner.
pub(super) struct Recorder {
    shared: Arc<Shared>,
    /// Most bytes queued before a run waits for room.
    max_queued: u64,
    sender: Mutex<Option<mpsc::Sender<Message>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    state_dir: std::path::PathBuf,
    learning: Option<Arc<Learning>>,
    cycle: CycleInputs,
}

impl Recorder {
    pub fn new(cycle: CycleInputs, learning: Option<Arc<Learning>>) -> Recorder {
        let state_dir = cycle.paths.state_dir();
        Recorder {
            shared: Arc::new(Shared {
                ids: Mutex::new(Ids::default()),
                journal: Mutex::new(Journal::new(state_dir.join(JOURNAL_DIR))),
                sent: AtomicU64::new(0),
                done: AtomicU64::new(0),
                failed_tries: AtomicU64::new(0),
                waiting: Mutex::new(()),
                changed: Condvar::new(),
                seq: AtomicU64::new(0),
                queued: AtomicU64::new(0),
                room: tokio::sync::Notify::new(),
                ids_ready: tokio::sync::Notify::new(),
                reserving: tokio::sync::Mutex::new(()),
            }),
            max_queued: cycle.config.record_queue_mb.clamp(1, u64::MAX >> 20) << 20,
            sender: Mutex::new(None),
            writer: Mutex::new(None),
            state_dir,
            learning,
            cycle,
        }
    }

    /// Gives `run` an id, journals it and queues it; returns the id. `store`
    /// (the runner's own connection) is used only when no id is reserved
    /// and the writer brings none soon (see `next_id`).
    /// A journal that cannot be written does not stop the run being
    /// queued; the second value then says so.
    pub async fn record(
        &self,
        store: &Arc<dyn RunStore>,
        mut run: RunRecord,
    ) -> Result<(i64, Option<String>), StoreError> {
        run.id = self.next_id(store).await?;
        let id = run.id;
        let line = Line::encode(&run);
        let bytes = line.as_ref().map_or(0, Line::bytes);
        // Numbered, journaled and queued under one lock, so the writer sees
        // runs in journal order and may release the journal up to the last
        // run it stored.
        let mut journal = lock(&self.shared.journal);
        let seq = self.shared.seq.fetch_add(1, Ordering::SeqCst) + 1;
        let journaled = line.and_then(|line| journal.append(seq, &line));
        self.shared.sent.fetch_max(seq, Ordering::SeqCst);
        let run = Message::Run {
            seq,
            run: Box::new(run),
            bytes,
        };
        self.queue(run, bytes);
        drop(journal);
        // Queued either way: only a crash before the write would lose it.
        let notice = journaled
            .err()
            .map(|e| format!("{e}; the run is queued but would be lost in a crash"));
        Ok((id, notice))
    }

    /// Waits while the queue holds more than its bound (see the module
    /// docs), or until the writer is gone.
    pub async fn room(&self) {
        let over = || self.shared.queued.load(Ordering::SeqCst) > self.max_queued;
        if over() {
            tracing::debug!("the run queue is full; this answer waits for the writer");
        }
        // A writer that dies notifies no one: look again now and then.
        while over() && self.writer_alive() {
            wait_until(&self.shared.room, Duration::from_secs(1), || !over()).await;
        }
    }

    fn writer_alive(&self) -> bool {
        lock(&self.writer)
            .as_ref()
            .is_some_and(|writer| !writer.is_finished())
    }

    /// Rule statistics of a run that is not recorded.
    pub fn rules_only(&self, outcome: RuleOutcome) {
        if outcome.rules.is_empty() {
            return;
        }
        // The ids and a `String`'s own size for each.
        let ids: usize = outcome.rules.iter().map(|id| id.len() + 24).sum();
        let bytes = (ids + std::mem::size_of::<Message>()) as u64;
        self.queue(Message::Rules { outcome, bytes }, bytes);
    }

    /// Sends `message`, which counts `bytes` against the queue's bound:
    /// counted before the writer can see it, uncounted if it never will.
    fn queue(&self, message: Message, bytes: u64) {
        self.shared.queued.fetch_add(bytes, Ordering::SeqCst);
        if !self.send(message) {
            self.shared.queued.fetch_sub(bytes, Ordering::SeqCst);
        }
    }

    /// Waits until every run recorded so far is in the database and the
    /// learning cycle it triggered has run, at most `timeout`, and not once
    /// the store has failed [`FLUSH_FAILURES`] tries; true if they are.
    pub fn flush(&self, timeout: Duration) -> bool {
        let shared = &self.shared;
        let sent = shared.sent.load(Ordering::SeqCst);
        let stored = || shared.done.load(Ordering::SeqCst) >= sent;
        let waiting = lock(&shared.waiting);
        let failing = shared.failed_tries.load(Ordering::SeqCst) + FLUSH_FAILURES;
        let failed = || shared.failed_tries.load(Ordering::SeqCst) >= failing;
        let _ = shared
            .changed
            .wait_timeout_while(waiting, timeout, |_| !stored() && !failed())
            .unwrap_or_else(|p| p.into_inner());
        stored()
    }

    /// The next run id. When the block runs out before the writer has
    /// brought the next one, the run waits for it a little (the writer is
    /// storing a batch), then reserves a block itself; never on this async
    /// thread, where waiting for the database lock the writer holds would
    /// hold up every other task on it.
    async fn next_id(&self, store: &Arc<dyn RunStore>) -> Result<i64, StoreError> {
        let mut waited = false;
        loop {
            match self.take_id() {
                Ok(id) => return Ok(id),
                Err(Asked::Yes) if !waited && self.writer_alive() => {
                    waited = true;
                    let in_hand = || lock(&self.shared.ids).in_hand();
                    wait_until(&self.shared.ids_ready, WAIT_FOR_IDS, in_hand).await;
                }
                // The first run, a writer that failed to reserve or is
                // gone, or one busy with a learning cycle.
                Err(_) => self.reserve_elsewhere(store).await?,
            }
        }
    }

    /// Reserves a block on tokio's blocking pool, one caller at a time:
    /// the others find its block when they look again.
    async fn reserve_elsewhere(&self, store: &Arc<dyn RunStore>) -> Result<(), StoreError> {
        let _one_at_a_time = self.shared.reserving.lock().await;
        if lock(&self.shared.ids).in_hand() {
            return Ok(());
        }
        let store = store.clone();
        let block = tokio::task::spawn_blocking(move || store.reserve_run_ids(ID_BLOCK))
            .await
            .map_err(|e| StoreError::Background(e.to_string()))??;
        let mut ids = lock(&self.shared.ids);
        // The writer's block may have come meanwhile; then this one is
        // kept for later, or is a gap in the ids, which nothing relies on.
        if ids.current.is_empty() {
            ids.current = block;
        } else if ids.spare.is_none() {
            ids.spare = Some(block);
        }
        Ok(())
    }

    /// The next id of the block in hand; asks the writer for the next
    /// block when half of this one is left.
    fn take_id(&self) -> Result<i64, Asked> {
        let mut ids = lock(&self.shared.ids);
        if ids.current.is_empty() {
            match ids.spare.take() {
                Some(spare) => {
                    ids.current = spare;
                    ids.asked = false;
                }
                None if ids.asked => return Err(Asked::Yes),
                None => return Err(Asked::No),
            }
        }
        let id = ids.current.start;
        ids.current.start += 1;
        // Half a block left: the writer fetches the next one meanwhile.
        let low = (ids.current.end - ids.current.start) as u64 <= ID_BLOCK / 2;
        if low && ids.spare.is_none() && !ids.asked {
            ids.asked = true;
            drop(ids);
            self.send(Message::ReserveIds);
        }
        Ok(id)
    }

    /// Whether `message` reached the writer's queue.
    fn send(&self, message: Message) -> bool {
        let mut sender = lock(&self.sender);
        if sender.is_none() {
            let (tx, rx) = mpsc::channel();
            let writer = Writer {
                shared: self.shared.clone(),
                state_dir: self.state_dir.clone(),
                learning: self.learning.clone(),
                cycle: self.cycle.clone(),
                store: None,
                counted: None,
                runtime: None,
            };
            match std::thread::Builder::new()
                .name("skillhost-recorder".into())
                .spawn(move || writer.run(rx))
            {
                Ok(handle) => *lock(&self.writer) = Some(handle),
                Err(e) => {
                    tracing::error!("cannot start the run writer: {e}; runs stay in the journal");
                    return false;
                }
            }
            *sender = Some(tx);
        }
        sender.as_ref().is_some_and(|tx| tx.send(message).is_ok())
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if !self.flush(DRAIN_ON_DROP) {
            tracing::warn!(
                "runs still queued after {DRAIN_ON_DROP:?}; they are in the journal and the next host stores them"
            );
        }
        if let Some(tx) = lock(&self.sender).take() {
            let ids = std::mem::take(&mut *lock(&self.shared.ids));
            // The later block first: each goes back only if it is the last
            // one taken.
            let unused = ids.spare.into_iter().chain([ids.current]).collect();
            let _ = tx.send(Message::ReturnIds(unused));
            let _ = tx.send(Message::Stop);
        }
        if let Some(handle) = lock(&self.writer).take() {
            let _ = handle.join();
        }
    }
}

/// Opens the workspace store after storing the runs that ended processes
/// left in their journals, so commands that read runs see every one.
pub fn open_store(paths: &Paths, config: &StoreConfig) -> Result<Arc<dyn RunStore>, StoreError> {
    let state = paths.state_dir();
    let store = config.open(&state, crate::store::KvQuota::default())?;
    let rules = replay_journals(&state, store.as_ref());
    let book = learn::RuleBook::of(&state, SharedStoreHandle::of(store.clone()));
    if rules.iter().any(|r| !r.rules.is_empty()) && book.at().exists().unwrap_or(true) {
        let saved = Learning::open_book(book, learn::RuleFilter::All)
            .and_then(|(l, _)| l.record_batch(&rules));
        if let Err(e) = saved {
            tracing::warn!("rule statistics of replayed runs not saved: {e}");
        }
    }
    Ok(store)
}

/// Stores the runs of journals that ended processes left under
/// `state_dir`; answers their rule outcomes, for the statistics.
fn replay_journals(state_dir: &std::path::Path, store: &dyn RunStore) -> Vec<RuleOutcome> {
    match journal::replay(&state_dir.join(JOURNAL_DIR), store) {
        Ok(r) => {
            if !r.new_runs.is_empty() || r.damaged_lines > 0 {
                tracing::info!(
                    runs = r.new_runs.len(),
                    damaged_lines = r.damaged_lines,
                    "stored runs from the journal of an ended process"
                );
            }
            r.new_runs.iter().map(Into::into).collect()
        }
        Err(e) => {
            tracing::warn!("cannot replay a run journal: {e}");
            Vec::new()
        }
    }
}
