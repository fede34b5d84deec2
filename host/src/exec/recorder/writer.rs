//! The writer thread: stores what is queued in one transaction, applies
//! rule statistics once per batch, runs the automatic learning cycle and
//! the forge, and tries a failing store again, less often the longer it
//! fails.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{
    CycleInputs, GATHER, ID_BLOCK, MAX_BATCH, Message, RETRY_FIRST, RETRY_MAX, Shared, WARN_EVERY,
    lock, replay_journals,
};
use crate::learn::{self, Learning, RuleOutcome};
use crate::store::journal::{self, JOURNAL_DIR};
use crate::store::{RunRecord, RunStore, SharedStore, StoreError};

/// Runs the writer has not stored, oldest first, each with its sequence
/// number and what it counts against the queue.
#[derive(Default)]
pub(super) struct Unstored {
    runs: Vec<RunRecord>,
    queued: Vec<(u64, u64)>,
}

/// What one pass of the writer stored.
#[derive(Default)]
pub(super) struct Stored {
    /// Every run stored, new to the store or not (a replay may have
    /// stored it first).
    runs: Vec<RunRecord>,
    /// How many were new to the store.
    new: u64,
    /// The sequence number of the last.
    last_seq: Option<u64>,
    /// What they counted against the queue.
    bytes: u64,
}

/// When the writer tries a failing store again.
pub(super) struct Retry {
    at: Instant,
    wait: Duration,
    failures: u32,
}

impl Retry {
    /// The next try after one that ended with `result`, `left` runs still
    /// unstored; none once the store could be written.
    fn after(
        previous: Option<Retry>,
        result: Result<(), StoreError>,
        left: usize,
    ) -> Option<Retry> {
        let e = match result {
            Ok(()) => {
                if let Some(p) = previous {
                    tracing::info!("runs are stored again, after {} failed tries", p.failures);
                }
                return None;
            }
            Err(e) => e,
        };
        let (wait, failures) = match previous {
            Some(p) => ((p.wait * 4).min(RETRY_MAX), p.failures + 1),
            None => (RETRY_FIRST, 1),
        };
        if failures == 1 || failures % WARN_EVERY == 0 {
            tracing::warn!(
                "storing runs failed ({failures} tries): {e}; {left} run(s) wait in the queue and the journal, tried again in {wait:?}; answers wait once they fill [learning] record_queue_mb"
            );
        }
        Some(Retry {
            at: Instant::now() + wait,
            wait,
            failures,
        })
    }
}

pub(super) struct Writer {
    pub(super) shared: Arc<Shared>,
    pub(super) state_dir: std::path::PathBuf,
    pub(super) learning: Option<Arc<Learning>>,
    pub(super) cycle: CycleInputs,
    /// The writer's own connection: handlers' key-value calls never wait
    /// behind a batch.
    pub(super) store: Option<Arc<dyn RunStore>>,
    /// The store's run count for `auto_every`: counted once (a full scan
    /// in SQLite), then advanced by the runs this writer stores. Other
    /// processes' runs show up at the next count, in the next process.
    pub(super) counted: Option<u64>,
    /// For the learning cycle, which is async (a model may be asked).
    pub(super) runtime: Option<tokio::runtime::Runtime>,
}

impl Writer {
    pub(super) fn run(mut self, rx: mpsc::Receiver<Message>) {
        // Storing runs must not take a core from the requests (the p99 of
        // echo calls over stdio was 1.2 ms with the writer at normal
        // priority, 0.4 ms with recording off). SCHED_IDLE rather than
        // nice 19 alone: release, stdio echo with recording on, alternating
        // runs, the p99 was lower in 9 of 9 pairs (benches/mcp.rs: 321-342
        // µs against 353-452 µs; a raw client's 20-block rounds: 261-312 µs
        // against 286-389 µs); the load bench was unchanged within noise
        // (64 sessions: 5,375-5,722 answered/s against 5,485-6,205), and
        // a writer the requests leave no core to still gets one once the
        // queue is full and answers wait (see the module docs).
        crate::sys::idle_thread_priority();
        // Runs not stored yet, oldest first: a later run is never stored
        // before an earlier one, so the journal is released up to the last
        // run stored.
        let mut unstored = Unstored::default();
        let mut retry: Option<Retry> = None;
        let mut stop = false;
        while !stop {
            let first = match &retry {
                None => match rx.recv() {
                    Ok(message) => Some(message),
                    Err(_) => break,
                },
                // While the store fails, runs gather until the next try,
                // without a wake-up for each.
                Some(retry) => {
                    std::thread::sleep(retry.at.saturating_duration_since(Instant::now()));
                    None
                }
            };
            let batch = gather(first, &rx, &mut unstored);
            stop = batch.stop;
            let Batch {
                mut rules,
                reserve,
                give_back,
                rule_bytes,
                ..
            } = batch;
            if reserve {
                self.reserve_ids();
            }
            let due = stop || retry.as_ref().is_none_or(|r| Instant::now() >= r.at);
            let mut stored = Stored::default();
            if due && !unstored.runs.is_empty() {
                let result = self.store_runs(&mut unstored, &mut rules, &mut stored);
                retry = Retry::after(retry.take(), result, unstored.runs.len());
                if retry.is_some() {
                    self.shared.failed_tries.fetch_add(1, Ordering::SeqCst);
                    self.wake_flushes();
                }
            }
            self.record_rules(&rules);
            self.after_store(&stored, rule_bytes, give_back);
        }
        if !unstored.runs.is_empty() {
            tracing::warn!(
                "{} run(s) could not be stored; they stay in the run journal and the next host stores them",
                unstored.runs.len()
            );
        }
    }

    /// What follows a pass that stored `stored`: the run count, the
    /// learning cycle and the forge it may trigger, waking `flush` callers
    /// and answers waiting for room, and giving back unused run ids.
    fn after_store(
        &mut self,
        stored: &Stored,
        rule_bytes: u64,
        give_back: Vec<std::ops::Range<i64>>,
    ) {
        if stored.new > 0 {
            let count = self.advance_count(stored.new);
            if let Some((before, now)) = count {
                self.maybe_learn(before, now);
            }
            #[cfg(feature = "forge")]
            self.forge(&stored.runs, count);
        }
        // Done once stored and once the cycle they triggered has run,
        // so `flush` sees the rules a cycle wrote.
        if let Some(seq) = stored.last_seq {
            self.shared.done.fetch_max(seq, Ordering::SeqCst);
            self.wake_flushes();
        }
        let freed = stored.bytes + rule_bytes;
        if freed > 0 {
            self.shared.queued.fetch_sub(freed, Ordering::SeqCst);
            self.shared.room.notify_waiters();
        }
        for ids in give_back {
            if let Some(store) = &self.store
                && !matches!(store.return_run_ids(ids), Ok(true))
            {
                break;
            }
        }
    }

    /// Wakes `flush` callers to look at `done` and `failed_tries` again.
    fn wake_flushes(&self) {
        // Taken between `flush`'s check and its wait, never during either:
        // the wake-up cannot be missed.
        drop(lock(&self.shared.waiting));
        self.shared.changed.notify_all();
    }

    fn store(&mut self) -> Result<&dyn RunStore, StoreError> {
        let store = match self.store.take() {
            Some(store) => store,
            None => self.open_store()?,
        };
        Ok(&**self.store.insert(store))
    }

    /// The writer's own connection, after storing the runs that ended
    /// processes left in their journals.
    fn open_store(&self) -> Result<Arc<dyn RunStore>, StoreError> {
        let store = self
            .cycle
            .store
            .open(&self.state_dir, crate::store::KvQuota::default())?;
        self.record_rules(&replay_journals(&self.state_dir, store.as_ref()));
        Ok(store)
    }

    /// Fetches the next block of ids; either way, the runs waiting for it
    /// hear (after a failure they reserve one themselves).
    fn reserve_ids(&mut self) {
        let reserved = self.store().and_then(|s| s.reserve_run_ids(ID_BLOCK));
        let mut ids = lock(&self.shared.ids);
        ids.asked = false;
        match reserved {
            Ok(block) => ids.spare = Some(block),
            Err(e) => tracing::warn!("cannot reserve run ids ahead: {e}"),
        }
        drop(ids);
        self.shared.ids_ready.notify_waiters();
    }

    /// Stores `unstored`, oldest first and at most [`MAX_BATCH`] runs a
    /// transaction, taking out what it stored into `stored`; their rule
    /// statistics join `rules`, and the journal is released up to them.
    /// Stops at the first failure of the store, leaving the rest for the
    /// next try. A run the store refuses would be refused at every try and
    /// hold up every run after it: it is set aside, and the others are
    /// stored (see [`journal::insert_or_set_aside`]).
    fn store_runs(
        &mut self,
        unstored: &mut Unstored,
        rules: &mut Vec<RuleOutcome>,
        stored: &mut Stored,
    ) -> Result<(), StoreError> {
        let dir = self.state_dir.join(JOURNAL_DIR);
        while !unstored.runs.is_empty() {
            let n = unstored.runs.len().min(MAX_BATCH);
            let (done, result) =
                journal::insert_or_set_aside(self.store()?, &unstored.runs[..n], &dir);
            self.take_done(unstored, &done, rules, stored);
            if result.is_err() {
                // A new connection for the next try.
                self.store = None;
            }
            result?;
        }
        Ok(())
    }

    /// Takes the first `done.len()` runs of `unstored` (what became of
    /// each) into `stored`, but for those set aside.
    fn take_done(
        &self,
        unstored: &mut Unstored,
        done: &[journal::Inserted],
        rules: &mut Vec<RuleOutcome>,
        stored: &mut Stored,
    ) {
        let n = done.len();
        for (run, done) in unstored.runs.drain(..n).zip(done) {
            match done {
                journal::Inserted::New => {
                    rules.push(RuleOutcome::from(&run));
                    stored.new += 1;
                    stored.runs.push(run);
                }
                journal::Inserted::Known => stored.runs.push(run),
                journal::Inserted::SetAside => {}
            }
        }
        // Done with: they count no longer, and the journal is released up
        // to them.
        for (seq, bytes) in unstored.queued.drain(..n) {
            stored.last_seq = Some(seq);
            stored.bytes += bytes;
        }
        if let Some(seq) = stored.last_seq.filter(|_| n > 0) {
            self.release_journal(seq);
        }
    }

    /// Removes the journal's segments that hold only stored runs, and
    /// makes the segment it moves on to, both with the journal unlocked.
    fn release_journal(&self, stored: u64) {
        let (released, wants_spare) = {
            let mut journal = lock(&self.shared.journal);
            (journal.release(stored), journal.wants_spare())
        };
        released.remove();
        if wants_spare {
            match journal::new_segment(&self.state_dir.join(JOURNAL_DIR)) {
                Ok(spare) => lock(&self.shared.journal).add_spare(spare),
                Err(e) => tracing::warn!("{e}"),
            }
        }
    }

    fn record_rules(&self, rules: &[RuleOutcome]) {
        let Some(learning) = &self.learning else {
            return;
        };
        if let Err(e) = learning.record_batch(rules) {
            tracing::warn!("rule statistics not saved: {e}");
        }
    }

    /// The store's run count before and after the `stored` runs of the
    /// last batch, when an automatic pass wants it (counted once, then
    /// advanced); none when nothing runs every N runs.
    fn advance_count(&mut self, stored: u64) -> Option<(u64, u64)> {
        #[cfg(feature = "forge")]
        let mine_every = self.cycle.forge.mine_every();
        #[cfg(not(feature = "forge"))]
        let mine_every = 0;
        if self.cycle.config.auto_every == 0 && mine_every == 0 {
            return None;
        }
        let now = match self.counted {
            Some(n) => n + stored,
            None => self.store().and_then(|s| s.run_count()).ok()?,
        };
        let before = self
            .counted
            .replace(now)
            .unwrap_or(now.saturating_sub(stored));
        Some((before, now))
    }

    /// A learning cycle when the run count went from `before` to `now`
    /// across a multiple of `auto_every`.
    fn maybe_learn(&mut self, before: u64, now: u64) {
        if !crossed(before, now, self.cycle.config.auto_every) {
            return;
        }
        if !self.make_runtime() {
            return;
        }
        let (Some(rt), Some(store)) = (&self.runtime, &self.store) else {
            return;
        };
        let c = &self.cycle;
        let report = rt.block_on(learn::cycle::learn_from_store(
            store.as_ref(),
            SharedStore::of(store.as_ref()),
            &c.paths,
            &c.catalog.get(),
            &c.config,
            c.provider.as_deref(),
        ));
        match report {
            Ok(r) => {
                tracing::info!(runs = now, rules_added = r.rules_added, "learning cycle");
                if r.changed_rules()
                    && let Some(l) = &self.learning
                    && let Err(e) = l.reload()
                {
                    tracing::warn!("cannot reload the learned rules: {e}");
                }
            }
            Err(e) => tracing::warn!("learning cycle after {now} runs failed: {e}"),
        }
    }

    /// The runtime for async work on this thread (a model may be asked);
    /// false if it cannot be made.
    fn make_runtime(&mut self) -> bool {
        if self.runtime.is_none() {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => self.runtime = Some(rt),
                Err(e) => {
                    tracing::warn!("cannot run background work on the run writer: {e}");
                    return false;
                }
            }
        }
        true
    }

    /// New and improved skills from the stored runs, and from mining the
    /// latest runs when the count went across a multiple of `[forge.mine]
    /// auto_every`; the catalog is reloaded and swapped in when one was
    /// written.
    #[cfg(feature = "forge")]
    fn forge(&mut self, runs: &[RunRecord], count: Option<(u64, u64)>) {
        let mine =
            count.is_some_and(|(before, now)| crossed(before, now, self.cycle.forge.mine_every()));
        let after_runs = self.cycle.forge.wants(runs, self.cycle.provider.is_some());
        if !(mine || after_runs) || !self.make_runtime() {
            return;
        }
        let (Some(rt), Ok(store)) = (&self.runtime, self.store.as_ref().ok_or(())) else {
            return;
        };
        let c = &self.cycle;
        let catalog = c.catalog.get();
        let mut changed = after_runs
            && rt.block_on(crate::forge::after_runs::after_runs(
                &c.forge,
                runs,
                &catalog,
                store.as_ref(),
                c.provider.as_deref(),
            ));
        if mine {
            // The runs just forged from may have added a skill: mining
            // must see it to skip its near-duplicates.
            let reloaded;
            let catalog = if changed {
                reloaded = reload(&c.paths);
                &reloaded
            } else {
                &*catalog
            };
            changed |= crate::forge::after_runs::mine_latest(&c.forge, catalog, store.as_ref());
        }
        if changed {
            c.catalog.swap(reload(&c.paths));
            if let Some(shared) = store.shared()
                && let Err(e) = crate::shared::skills::publish(&c.paths, shared)
            {
                tracing::warn!("forged skills not shared with the other hosts: {e}");
            }
        }
    }
}

/// Whether a count going from `before` to `now` passed a multiple of
/// `every` (never when `every` is 0).
/// What one pass of the writer took off the queue besides runs.
#[derive(Default)]
pub(super) struct Batch {
    rules: Vec<RuleOutcome>,
    reserve: bool,
    give_back: Vec<std::ops::Range<i64>>,
    rule_bytes: u64,
    /// A stop was asked for, or every sender is gone.
    stop: bool,
}

/// Group commit: what arrives within `GATHER` of the first message goes
/// into the same transaction, runs into `unstored`. The writer sleeps
/// through `GATHER` rather than waiting on the queue, so that the runs
/// sent meanwhile do not each wake it: a wake-up costs the request's
/// thread a futex call and this one a context switch.
fn gather(first: Option<Message>, rx: &mpsc::Receiver<Message>, unstored: &mut Unstored) -> Batch {
    let mut batch = Batch::default();
    let mut new_runs = 0;
    if first.as_ref().is_some_and(|m| !matches!(m, Message::Stop)) {
        std::thread::sleep(GATHER);
    }
    let mut disconnected = false;
    let more = std::iter::from_fn(|| match rx.try_recv() {
        Ok(message) => Some(message),
        Err(mpsc::TryRecvError::Empty) => None,
        Err(mpsc::TryRecvError::Disconnected) => {
            disconnected = true;
            None
        }
    });
    for message in first.into_iter().chain(more) {
        match message {
            Message::Run { seq, run, bytes } => {
                unstored.runs.push(*run);
                unstored.queued.push((seq, bytes));
                new_runs += 1;
            }
            Message::Rules { outcome, bytes } => {
                batch.rule_bytes += bytes;
                batch.rules.push(outcome);
            }
            Message::ReserveIds => batch.reserve = true,
            Message::ReturnIds(ids) => batch.give_back = ids,
            Message::Stop => batch.stop = true,
        }
        if new_runs >= MAX_BATCH || batch.stop {
            break;
        }
    }
    batch.stop |= disconnected;
    batch
}

fn crossed(before: u64, now: u64, every: u64) -> bool {
    every != 0 && now / every != before / every
}

#[cfg(feature = "forge")]
fn reload(paths: &crate::paths::Paths) -> crate::skill::Catalog {
    crate::skill::Catalog::load(&paths.roots(), &crate::skill::LoadOptions::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_to_their_cap_and_end_when_the_store_is_written() {
        let failed = || Err(StoreError::Closed);
        let mut retry = Retry::after(None, failed(), 1).expect("a retry");
        assert_eq!((retry.wait, retry.failures), (RETRY_FIRST, 1));
        for _ in 0..10 {
            retry = Retry::after(Some(retry), failed(), 1).expect("a retry");
        }
        assert_eq!((retry.wait, retry.failures), (RETRY_MAX, 11));
        assert!(Retry::after(Some(retry), Ok(()), 0).is_none());
    }
}
