//! The run journal. A host appends each run here (one JSON line, one
//! `write`, no `fsync`) before it queues the run for the database, so a
//! process that dies with runs still queued loses none: what it wrote is in
//! the kernel's page cache and reaches the file.
//!
//! Each process writes files of its own and holds an exclusive lock on each
//! while it lives. A journal file whose lock can be taken belongs to a
//! process that ended; [`replay`] writes its runs into the store (a run
//! already stored is skipped by id) and removes it.
//!
//! A run the store refuses for its data is set aside in [`REFUSED_FILE`]
//! rather than left to fail every replay (see [`set_aside`]).
//!
//! A file is a segment of at most [`SEGMENT_BYTES`]; once every run of a
//! segment is in the database the segment is removed, so the journal stays
//! small under any load. A request appends while holding the lock that
//! orders runs, and the writer that stores them runs at the lowest
//! priority: so the writer takes segments out under that lock and removes
//! them after it (see [`Journal::release`]), and prepares the segment the
//! journal moves on to (see [`Journal::wants_spare`]). Under the lock
//! there is no I/O but the append itself.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{RunRecord, RunStore, StoreError};

/// The folder under the state folder.
pub const JOURNAL_DIR: &str = "journal";

/// Past this size the journal starts a new segment.
pub const SEGMENT_BYTES: u64 = 4 << 20;

/// The current segment is replaced once released and at least this large,
/// so a host that stores every few runs does not make a file each time (a
/// replay skips the stored runs it still holds, by id).
pub const ROTATE_BYTES: u64 = 256 << 10;

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot write the run journal {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot encode a run for the journal: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("journal {path}: {source}")]
    Store { path: PathBuf, source: StoreError },
}

/// One journal file, locked by this process while it is open.
pub struct Segment {
    file: File,
    path: PathBuf,
    bytes: u64,
    /// The sequence number of the last run appended to it.
    last: u64,
}

/// This process's journal.
pub struct Journal {
    dir: PathBuf,
    /// Every run up to this one is in the database.
    released: u64,
    current: Option<Segment>,
    /// An empty segment made ahead, for when `current` is replaced.
    spare: Option<Segment>,
    sealed: Vec<Segment>,
}

/// A run as its journal line, encoded before the journal is locked.
pub struct Line(Vec<u8>);

impl Line {
    pub fn encode(run: &RunRecord) -> Result<Line, JournalError> {
        let mut line = serde_json::to_vec(run)?;
        line.push(b'\n');
        Ok(Line(line))
    }

    /// Its length in bytes.
    pub fn bytes(&self) -> u64 {
        self.0.len() as u64
    }
}

/// Segments that hold only stored runs, taken out of the journal; see
/// [`Journal::release`].
#[must_use = "the segments' files stay on disk until removed"]
pub struct Released(Vec<Segment>);

impl Released {
    /// Removes the files (each while still locked, so that no replay takes
    /// one up meanwhile).
    pub fn remove(self) {
        for segment in self.0 {
            let _ = std::fs::remove_file(&segment.path);
        }
    }
}

impl Journal {
    /// A journal writing into `dir` (created on the first append).
    pub fn new(dir: PathBuf) -> Journal {
        Journal {
            dir,
            released: 0,
            current: None,
            spare: None,
            sealed: Vec::new(),
        }
    }

    /// Appends `line`, the run numbered `seq` by the caller (increasing).
    pub fn append(&mut self, seq: u64, line: &Line) -> Result<(), JournalError> {
        let line = &line.0;
        if self
            .current
            .as_ref()
            .is_some_and(|s| s.bytes > 0 && s.bytes + line.len() as u64 > SEGMENT_BYTES)
        {
            self.sealed.extend(self.current.take());
        }
        let segment = match &mut self.current {
            Some(s) => s,
            None => {
                let next = match self.spare.take() {
                    Some(spare) => spare,
                    None => new_segment(&self.dir)?,
                };
                self.current.insert(next)
            }
        };
        segment
            .file
            .write_all(line)
            .map_err(|source| JournalError::Io {
                path: segment.path.clone(),
                source,
            })?;
        segment.bytes += line.len() as u64;
        segment.last = seq;
        Ok(())
    }

    /// Every run up to `seq` is in the database: takes out the segments
    /// that hold only those, older ones and the current one once it is
    /// [`ROTATE_BYTES`] long (the spare, if any, takes its place). No I/O:
    /// the caller removes them, after unlocking the journal.
    pub fn release(&mut self, seq: u64) -> Released {
        self.released = self.released.max(seq);
        let mut done: Vec<Segment> = self.sealed.extract_if(.., |s| s.last <= seq).collect();
        if self
            .current
            .as_ref()
            .is_some_and(|s| s.bytes >= ROTATE_BYTES && s.last <= seq)
        {
            done.extend(self.current.take());
            self.current = self.spare.take();
        }
        Released(done)
    }

    /// Whether the journal would like a spare segment: none is ready and
    /// the current one is halfway to being replaced. Without one, the
    /// append after a replacement makes its own.
    pub fn wants_spare(&self) -> bool {
        self.spare.is_none()
            && self
                .current
                .as_ref()
                .is_some_and(|s| s.bytes >= ROTATE_BYTES / 2)
    }

    /// Keeps `segment` (from [`new_segment`], empty) for the next time the
    /// current segment is replaced.
    pub fn add_spare(&mut self, segment: Segment) {
        if self.spare.is_none() && segment.bytes == 0 {
            self.spare = Some(segment);
        } else {
            Released(vec![segment]).remove();
        }
    }
}

/// Segments made by this process, for unique file names.
static SEGMENTS_MADE: AtomicU64 = AtomicU64::new(0);

/// A new, empty segment file in `dir`, locked by this process.
pub fn new_segment(dir: &Path) -> Result<Segment, JournalError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| JournalError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let made = SEGMENTS_MADE.fetch_add(1, Ordering::Relaxed) + 1;
    let path = dir.join(format!("{}-{nanos}-{made}.jsonl", std::process::id()));
    let file = OpenOptions::new()
        .create_new(true)
        .append(true)
        .open(&path)
        .map_err(io(&path))?;
    // Held until the file is closed: tells `replay` in other processes
    // that this one is alive.
    file.lock().map_err(io(&path))?;
    Ok(Segment {
        file,
        path,
        bytes: 0,
        last: 0,
    })
}

impl Drop for Journal {
    /// A segment whose runs are all stored holds nothing to replay.
    fn drop(&mut self) {
        let segments = self.sealed.iter().chain(&self.current).chain(&self.spare);
        for s in segments {
            if s.bytes == 0 || s.last <= self.released {
                let _ = std::fs::remove_file(&s.path);
            }
        }
    }
}

/// The file runs a store refused are set aside in (see [`set_aside`]),
/// in the state folder beside the journal folder; not a `.jsonl` of the
/// journal folder, so that [`replay`] never takes it up.
pub const REFUSED_FILE: &str = "refused-runs.jsonl";

/// [`REFUSED_FILE`] takes no more runs once this large.
pub const REFUSED_MAX_BYTES: u64 = 16 << 20;

/// Sets aside `run`, which the store refused for its data (`e`; see
/// [`StoreError::refuses_data`]) and would refuse at every try, holding up
/// every run after it: its line goes to [`REFUSED_FILE`] beside the
/// journal folder `dir` while that holds less than [`REFUSED_MAX_BYTES`],
/// so an operator can see and mend it; past that (a handler that makes
/// every run refused must not fill the disk) only the log names it.
pub fn set_aside(dir: &Path, run: &RunRecord, e: &StoreError) {
    let path = dir.parent().unwrap_or(dir).join(REFUSED_FILE);
    let (id, skill) = (run.id, &run.skill);
    match keep_refused(&path, run) {
        Ok(true) => tracing::error!(
            "the store refused run {id} of `{skill}`: {e}; it is kept in {}",
            path.display()
        ),
        Ok(false) => tracing::error!(
            "the store refused run {id} of `{skill}`: {e}; not kept, {} is full",
            path.display()
        ),
        Err(keep) => {
            tracing::error!("the store refused run {id} of `{skill}`: {e}; not kept: {keep}")
        }
    }
}

/// Appends `run` to the file at `path` unless it is [`REFUSED_MAX_BYTES`]
/// long already; false if so.
fn keep_refused(path: &Path, run: &RunRecord) -> Result<bool, std::io::Error> {
    let mut file = crate::fsutil::open_append(path)?;
    if file.metadata()?.len() >= REFUSED_MAX_BYTES {
        return Ok(false);
    }
    let mut line = serde_json::to_vec(run)?;
    line.push(b'\n');
    file.write_all(&line)?;
    Ok(true)
}

/// What became of a run given to [`insert_or_set_aside`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// Stored now.
    New,
    /// In the store already (by id).
    Known,
    /// Refused for its data, and set aside (see [`set_aside`]).
    SetAside,
}

/// Stores `runs`; if the store refuses them for their data, one at a time,
/// setting aside those it refuses (see [`set_aside`]; `dir` is the journal
/// folder). Returns what became of each run it got through, in order, and
/// the error (an unavailable store) that stopped it before the end, if
/// any: the runs after those are untouched. A caller that gives the same
/// runs again after such an error sets their refused ones aside again, so
/// it gives only the runs after those.
pub fn insert_or_set_aside(
    store: &dyn RunStore,
    runs: &[RunRecord],
    dir: &Path,
) -> (Vec<Inserted>, Result<(), StoreError>) {
    let known = |new: bool| if new { Inserted::New } else { Inserted::Known };
    match store.insert_runs(runs) {
        Ok(new) => (new.into_iter().map(known).collect(), Ok(())),
        Err(e) if e.refuses_data() => {
            let mut done = Vec::with_capacity(runs.len());
            for run in runs {
                match store.insert_runs(std::slice::from_ref(run)) {
                    Ok(one) => done.push(known(one.first().copied().unwrap_or(false))),
                    Err(e) if e.refuses_data() => {
                        set_aside(dir, run, &e);
                        done.push(Inserted::SetAside);
                    }
                    Err(e) => return (done, Err(e)),
                }
            }
            (done, Ok(()))
        }
        Err(e) => (Vec::new(), Err(e)),
    }
}

/// What [`replay`] did.
#[derive(Debug, Default)]
pub struct Replayed {
    /// Runs written to the store that were not in it.
    pub new_runs: Vec<RunRecord>,
    /// Lines that did not parse (a run cut short by a crash mid-write).
    pub damaged_lines: usize,
}

/// Writes the runs of every journal left by an ended process into `store`
/// and removes those journals. Journals of live processes are left alone.
pub fn replay(dir: &Path, store: &dyn RunStore) -> Result<Replayed, JournalError> {
    let mut replayed = Replayed::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(replayed);
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        // Held, locked, until the journal is done with.
        let Some(_locked) = lock_ended(&path)? else {
            continue;
        };
        let text = read_journal(&path)?;
        let (runs, lines, damaged) = parse_journal(&text);
        replayed.damaged_lines += damaged;
        let (done, result) = insert_or_set_aside(store, &runs, dir);
        if let Err(source) = result {
            // A replay cut short keeps the runs it did not get through for
            // the next one, and only those: a run set aside now is not set
            // aside again.
            if !done.is_empty() {
                keep_lines(&path, &lines[done.len()..]);
            }
            return Err(JournalError::Store { path, source });
        }
        replayed.new_runs.extend(
            runs.into_iter()
                .zip(done)
                .filter(|(_, done)| *done == Inserted::New)
                .map(|(r, _)| r),
        );
        let _ = std::fs::remove_file(&path);
    }
    Ok(replayed)
}

/// The journal at `path`, locked; `None` when it cannot be opened or its
/// process still holds it.
fn lock_ended(path: &Path) -> Result<Option<std::fs::File>, JournalError> {
    let Ok(file) = OpenOptions::new().read(true).write(true).open(path) else {
        return Ok(None);
    };
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(source)) => Err(JournalError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn read_journal(path: &Path) -> Result<String, JournalError> {
    std::fs::read_to_string(path).map_err(|source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// A journal's runs, each with its line, and how many lines did not parse.
fn parse_journal(text: &str) -> (Vec<RunRecord>, Vec<&str>, usize) {
    let (mut runs, mut lines, mut damaged) = (Vec::new(), Vec::new(), 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<RunRecord>(line) {
            Ok(run) => {
                runs.push(run);
                lines.push(line);
            }
            Err(_) => damaged += 1,
        }
    }
    (runs, lines, damaged)
}

/// Rewrites the journal at `path` with only `lines`.
fn keep_lines(path: &Path, lines: &[&str]) {
    let mut rest = lines.join("\n");
    rest.push('\n');
    if let Err(e) = crate::fsutil::write_atomic(path, rest.as_bytes()) {
        tracing::warn!("cannot drop the replayed runs from {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{RunLog, SqliteStore};

    fn run(id: i64, task: &str) -> RunRecord {
        RunRecord {
            id,
            at: 1,
            skill: "s".into(),
            skill_version: "1".into(),
            task: task.into(),
            tier: "handler".into(),
            success: true,
            failure_class: None,
            failure_message: None,
            context: serde_json::json!({}),
            output: Some("ok".into()),
            duration_us: 1,
            model_calls: 0,
            origin: "test".into(),
            steps: Vec::new(),
            rules_applied: Vec::new(),
        }
    }

    fn line(id: i64, task: &str) -> Line {
        Line::encode(&run(id, task)).unwrap()
    }

    fn journal_files(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn runs_of_an_ended_process_are_replayed_once_and_a_cut_line_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&tmp.path().join("db")).unwrap();
        let dir = tmp.path().join(JOURNAL_DIR);
        let ids = store.reserve_run_ids(3).unwrap();
        let mut journal = Journal::new(dir.clone());
        for (seq, id) in ids.clone().enumerate() {
            journal.append(seq as u64 + 1, &line(id, "t")).unwrap();
        }
        // The first run reached the database before the "crash".
        store.insert_runs(&[run(ids.start, "t")]).unwrap();
        // A crash mid-write leaves half a line.
        let path = journal_files(&dir).pop().unwrap();
        OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"id\": 99, \"at\"")
            .unwrap();

        // While the writer lives its journal is left alone.
        let r = replay(&dir, &store).unwrap();
        assert!(r.new_runs.is_empty());
        assert_eq!(journal_files(&dir).len(), 1);

        // The process ends without releasing: its file stays, unlocked.
        drop(journal);
        let r = replay(&dir, &store).unwrap();
        assert_eq!(
            r.new_runs.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![ids.start + 1, ids.start + 2]
        );
        assert_eq!(r.damaged_lines, 1);
        assert!(journal_files(&dir).is_empty());
        assert_eq!(store.run_count().unwrap(), 3);
        assert!(replay(&dir, &store).unwrap().new_runs.is_empty());
        // The run stored before the crash is counted once in the usage.
        assert_eq!(store.skill_usage().unwrap()["s"].uses, 3);
    }

    /// A journal left by an ended process with a run the store refuses:
    /// the others are stored, the refused one is set aside, and the file
    /// is gone (it would otherwise fail every replay and hold up those
    /// after it).
    #[test]
    fn a_refused_run_in_a_journal_is_set_aside_and_the_others_are_replayed() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("db");
        let store = SqliteStore::open(&db).unwrap();
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(
                "CREATE TRIGGER refuse BEFORE INSERT ON runs WHEN NEW.task = 'poison'
                 BEGIN SELECT RAISE(ABORT, 'refused'); END",
            )
            .unwrap();
        let dir = tmp.path().join(JOURNAL_DIR);
        let ids = store.reserve_run_ids(3).unwrap();
        let mut journal = Journal::new(dir.clone());
        for (seq, (id, task)) in ids.clone().zip(["a", "poison", "b"]).enumerate() {
            journal.append(seq as u64 + 1, &line(id, task)).unwrap();
        }
        drop(journal);

        let r = replay(&dir, &store).unwrap();
        let tasks: Vec<&str> = r.new_runs.iter().map(|r| r.task.as_str()).collect();
        assert_eq!(tasks, ["a", "b"]);
        assert!(journal_files(&dir).is_empty());
        let refused = std::fs::read_to_string(tmp.path().join(REFUSED_FILE)).unwrap();
        let kept: RunRecord = serde_json::from_str(refused.trim()).unwrap();
        assert_eq!((kept.id, kept.task.as_str()), (ids.start + 1, "poison"));
    }

    #[test]
    fn a_replay_cut_short_after_setting_a_run_aside_does_not_set_it_aside_again() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("db");
        let store = SqliteStore::open(&db).unwrap();
        // `poison` is refused for its data; `down` meets a store that
        // fails (an error that is not a refusal: integer overflow) until
        // that is mended.
        let admin = rusqlite::Connection::open(&db).unwrap();
        admin
            .execute_batch(
                "CREATE TRIGGER refuse BEFORE INSERT ON runs WHEN NEW.task = 'poison'
                 BEGIN SELECT RAISE(ABORT, 'refused'); END;
                 CREATE TRIGGER down BEFORE INSERT ON runs WHEN NEW.task = 'down'
                 BEGIN SELECT abs(-9223372036854775808); END;",
            )
            .unwrap();
        let dir = tmp.path().join(JOURNAL_DIR);
        let ids = store.reserve_run_ids(4).unwrap();
        let mut journal = Journal::new(dir.clone());
        for (seq, (id, task)) in ids.clone().zip(["a", "poison", "down", "b"]).enumerate() {
            journal.append(seq as u64 + 1, &line(id, task)).unwrap();
        }
        drop(journal);

        let e = replay(&dir, &store).expect_err("the outage cuts the replay short");
        assert!(matches!(e, JournalError::Store { .. }), "{e}");
        admin.execute_batch("DROP TRIGGER down").unwrap();
        let r = replay(&dir, &store).unwrap();
        let tasks: Vec<&str> = r.new_runs.iter().map(|r| r.task.as_str()).collect();
        assert_eq!(tasks, ["down", "b"]);
        assert!(journal_files(&dir).is_empty());
        let refused = std::fs::read_to_string(tmp.path().join(REFUSED_FILE)).unwrap();
        assert_eq!(refused.lines().count(), 1, "set aside once: {refused}");
        let stored: i64 = admin
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, 3);
    }

    #[test]
    fn refused_runs_are_kept_until_the_file_is_full() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(REFUSED_FILE);
        assert!(keep_refused(&path, &run(1, "t")).unwrap());
        assert!(std::fs::metadata(&path).unwrap().len() > 0);
        // Full: a handler whose every run is refused fills no disk.
        OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_len(REFUSED_MAX_BYTES))
            .unwrap();
        assert!(!keep_refused(&path, &run(2, "t")).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), REFUSED_MAX_BYTES);
    }

    #[cfg(unix)]
    #[test]
    fn a_refused_run_is_not_written_through_a_link_planted_in_its_place() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("elsewhere");
        std::fs::write(&target, "keep\n").unwrap();
        let path = tmp.path().join(REFUSED_FILE);
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let e = keep_refused(&path, &run(1, "t")).expect_err("a link is refused");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    }

    #[test]
    fn released_segments_are_removed_by_the_caller() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(JOURNAL_DIR);
        let mut journal = Journal::new(dir.clone());
        let big = "x".repeat((SEGMENT_BYTES / 3) as usize);
        for seq in 1..=3 {
            journal.append(seq, &line(seq as i64, &big)).unwrap();
        }
        assert_eq!(journal_files(&dir).len(), 2, "a second segment started");
        journal.release(1).remove();
        assert_eq!(journal_files(&dir).len(), 2, "segment 1 still holds run 2");
        journal.release(2).remove();
        assert_eq!(journal_files(&dir).len(), 1, "segment 1 is done");

        // The current segment is replaced once released, by a spare made
        // ahead; its file goes only when the caller removes it.
        assert!(journal.wants_spare());
        journal.add_spare(new_segment(&dir).unwrap());
        assert!(!journal.wants_spare());
        let released = journal.release(3);
        assert_eq!(journal_files(&dir).len(), 2);
        released.remove();
        let files = journal_files(&dir);
        assert_eq!(files.len(), 1, "the spare is left");
        assert_eq!(std::fs::metadata(&files[0]).unwrap().len(), 0);
        journal.append(4, &line(4, "next")).unwrap();
        assert_eq!(journal_files(&dir), files, "the next run went to the spare");
        assert!(std::fs::metadata(&files[0]).unwrap().len() > 0);

        // Without a spare the next append makes a segment.
        journal.append(5, &line(5, &big)).unwrap();
        journal.release(5).remove();
        assert!(journal_files(&dir).is_empty());
        journal.append(6, &line(6, "after")).unwrap();
        assert_eq!(journal_files(&dir).len(), 1);
        journal.release(6).remove();
        drop(journal);
        assert!(
            journal_files(&dir).is_empty(),
            "a journal whose runs are stored is removed"
        );

        // Small runs: released, kept until the segment is worth replacing
        // or the journal closes.
        let mut journal = Journal::new(dir.clone());
        journal.append(1, &line(1, "small")).unwrap();
        journal.release(1).remove();
        let files = journal_files(&dir);
        assert!(std::fs::metadata(&files[0]).unwrap().len() > 0);
        journal.append(2, &line(2, "small")).unwrap();
        drop(journal);
        assert_eq!(journal_files(&dir), files, "run 2 is not stored yet");
    }
}
