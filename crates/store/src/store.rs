//! [`SqliteStore`]: the public face — writes go to the writer thread, reads to the read
//! connection after a flush.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;

use parking_lot::Mutex;
use rusqlite::Connection;
use weft_protocol::{DriverEvent, SessionInfo, UniversalSnapshot};

use crate::writer::{self, Op, Take};
use crate::{
    fts, now_ms, reads, recovery, schema, AskedInteraction, InteractionOutcome, SearchHit,
    SessionRecord, StoreError,
};

/// Sessions, turns and every driver event in one SQLite file.
///
/// Writes return at once and are applied in order by one writer thread; reads flush
/// first, so they see every write made before them. Dropping the store writes
/// everything it was given and joins the writer. Cheap to share: it is `Send + Sync`.
pub struct SqliteStore {
    path: PathBuf,
    ops: Sender<Op>,
    writer: Option<JoinHandle<()>>,
    reader: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating it and its folders if need be) the store at `path`, migrates it to
    /// this build's schema, and rebuilds any turn left running by a previous process.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(open_err)?;
        schema::configure(&conn).map_err(open_err)?;
        schema::migrate(&mut conn, path)?;
        let recovered = recovery::recover(&mut conn).map_err(open_err)?;
        if recovered > 0 {
            tracing::info!(recovered, path = %path.display(), "session store: rebuilt interrupted turns");
        }
        let indexed = fts::catch_up(&mut conn).map_err(open_err)?;
        if indexed > 0 {
            tracing::info!(indexed, path = %path.display(), "session store: indexed finished turns a stopped process had not");
        }

        let reader = Connection::open(path).map_err(open_err)?;
        reader
            .busy_timeout(schema::BUSY_TIMEOUT)
            .map_err(open_err)?;
        reader
            .pragma_update(None, "query_only", true)
            .map_err(open_err)?;

        let (ops, queue) = mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("weft-store-writer".into())
            .spawn(move || writer::run(conn, queue))?;
        Ok(SqliteStore {
            path: path.to_path_buf(),
            ops,
            writer: Some(writer),
            reader: Mutex::new(reader),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn send(&self, op: Op) -> Result<(), StoreError> {
        self.ops.send(op).map_err(|_| StoreError::WriterGone)
    }

    /// Waits until everything queued before this call is committed. Errs if a write
    /// queued since the previous `flush` failed (each failure is also logged when it
    /// happens), or if the writer is gone.
    pub fn flush(&self) -> Result<(), StoreError> {
        match self.sync(Take::All)? {
            None => Ok(()),
            Some(error) => Err(StoreError::Write(error)),
        }
    }

    /// Waits until everything queued before this call is committed. Errs if a write of
    /// turn `task_id` failed: its start, an event, a question, its session's record
    /// while it ran, or its end (the first such failure, which is then forgotten).
    /// What a turn's end asks: a failure of another turn's writes, or of a write made
    /// after this turn ended, is not this turn's to report.
    pub fn turn_kept(&self, task_id: &str) -> Result<(), StoreError> {
        match self.sync(Take::Turn(task_id.to_string()))? {
            None => Ok(()),
            Some(error) => Err(StoreError::Write(error)),
        }
    }

    /// Waits until everything queued before this call is committed, leaving write
    /// failures for [`SqliteStore::flush`]: the barrier a transport waits on before it
    /// shows a client what was queued, so a crash cannot take back what a client saw.
    pub fn committed(&self) -> Result<(), StoreError> {
        self.sync(Take::Nothing).map(|_| ())
    }

    /// Calls `then` (on the writer's thread: it must be quick) once everything queued
    /// before this call is committed, leaving write failures for
    /// [`SqliteStore::flush`]; at once when the writer is gone. [`SqliteStore::committed`]
    /// for a caller that must not block a thread on it: a transport waits on this
    /// before each batch of patches it sends.
    pub fn when_committed(&self, then: impl FnOnce() + Send + 'static) {
        if let Err(mpsc::SendError(Op::Committed(then))) =
            self.ops.send(Op::Committed(Box::new(then)))
        {
            then();
        }
    }

    /// Waits for the writer; returns (and clears) the failure `take` asks for.
    fn sync(&self, take: Take) -> Result<Option<String>, StoreError> {
        let (done, answer) = mpsc::channel();
        self.send(Op::Flush { done, take })?;
        answer.recv().map_err(|_| StoreError::WriterGone)
    }

    /// Runs a read on the read connection once every earlier write is committed.
    /// Write failures are left for [`SqliteStore::flush`] to report.
    fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.sync(Take::Nothing)?;
        f(&self.reader.lock())
    }

    /// Creates or updates a session's record.
    pub fn upsert_session(&self, record: &SessionRecord) -> Result<(), StoreError> {
        self.send(Op::Session(Box::new(record.clone())))
    }

    /// A session's record.
    pub fn get_session(&self, session_key: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.read(|c| reads::get_session(c, session_key))
    }

    /// Sessions, newest first (by `updated_at`), optionally only those in `workdir`, each
    /// with its latest turn's phase and its turn count.
    pub fn list_sessions(&self, workdir: Option<&str>) -> Result<Vec<SessionInfo>, StoreError> {
        self.read(|c| reads::list_sessions(c, workdir))
    }

    /// A turn of `session_key` starts with `snapshot`. Beginning the same `task_id`
    /// again restarts that turn (its earlier events are dropped).
    pub fn begin_turn(
        &self,
        session_key: &str,
        task_id: &str,
        snapshot: &UniversalSnapshot,
    ) -> Result<(), StoreError> {
        let at = now_ms();
        self.send(Op::Begin {
            session_key: session_key.to_string(),
            task_id: task_id.to_string(),
            prompt: snapshot.prompt.clone(),
            text: snapshot.text.clone(),
            snapshot: serde_json::to_string(snapshot)?,
            started_at: snapshot.started_at.unwrap_or(at),
            at,
        })
    }

    /// One driver event of a running turn.
    pub fn append_event(&self, task_id: &str, event: &DriverEvent) -> Result<(), StoreError> {
        self.send(Op::Event {
            task_id: task_id.to_string(),
            at: now_ms(),
            event: serde_json::to_string(event)?,
        })
    }

    /// A turn ended with `snapshot` (stored as `incomplete` when `snapshot.incomplete`).
    pub fn finish_turn(
        &self,
        task_id: &str,
        snapshot: &UniversalSnapshot,
    ) -> Result<(), StoreError> {
        self.send(Op::Finish {
            task_id: task_id.to_string(),
            prompt: snapshot.prompt.clone(),
            text: snapshot.text.clone(),
            snapshot: serde_json::to_string(snapshot)?,
            incomplete: snapshot.incomplete,
            at: now_ms(),
        })
    }

    /// Final snapshots of a session's finished turns, oldest first. A turn interrupted
    /// by a crash is included, rebuilt and marked incomplete; the turn running now is
    /// not (its live snapshot is the runner's). Rows that do not parse are skipped.
    pub fn history(&self, session_key: &str) -> Result<Vec<UniversalSnapshot>, StoreError> {
        self.read(|c| reads::history(c, session_key))
    }

    /// The newest `limit` finished turns of a session (all when `None`) that come
    /// before the turn `before` (when given), oldest first: a page of [`Self::history`].
    pub fn history_page(
        &self,
        session_key: &str,
        limit: Option<u32>,
        before: Option<&str>,
    ) -> Result<Vec<UniversalSnapshot>, StoreError> {
        self.read(|c| reads::history_page(c, session_key, limit, before))
    }

    /// A question or permission was asked (`interaction`: its JSON).
    pub fn ask_interaction(&self, asked: &AskedInteraction) -> Result<(), StoreError> {
        self.send(Op::AskInteraction {
            prompt_id: asked.prompt_id.clone(),
            session_key: asked.session_key.clone(),
            task_id: asked.task_id.clone(),
            interaction: serde_json::to_string(&asked.interaction)?,
            created_at: asked.created_at,
            expires_at: asked.expires_at,
        })
    }

    /// The outcome of an interaction (`answered`, `cancelled`, `expired`), what it was
    /// and who gave it. A second outcome for the same one is ignored.
    pub fn resolve_interaction(
        &self,
        prompt_id: &str,
        outcome: &str,
        detail: Option<&str>,
        by: Option<&str>,
    ) -> Result<(), StoreError> {
        self.send(Op::ResolveInteraction {
            prompt_id: prompt_id.to_string(),
            outcome: outcome.to_string(),
            detail: detail.map(str::to_string),
            by: by.map(str::to_string),
            at: now_ms(),
        })
    }

    /// How interaction `prompt_id` ended, when it has: (outcome, detail, by).
    pub fn interaction_outcome(
        &self,
        prompt_id: &str,
    ) -> Result<Option<InteractionOutcome>, StoreError> {
        self.read(|c| reads::interaction_outcome(c, prompt_id))
    }

    /// A process group leader the kernel service started (`start_ticks`: its start
    /// time in clock ticks since boot, which tells it from a later process of that pid).
    pub fn record_process(&self, pid: u32, start_ticks: u64) -> Result<(), StoreError> {
        self.send(Op::Process {
            pid,
            start_ticks,
            start: true,
        })
    }

    /// That process group has ended.
    pub fn forget_process(&self, pid: u32) -> Result<(), StoreError> {
        self.send(Op::Process {
            pid,
            start_ticks: 0,
            start: false,
        })
    }

    /// Every recorded process group (pid, start ticks), forgetting them: what a
    /// service that died left behind, read once at the next start.
    pub fn take_processes(&self) -> Result<Vec<(u32, u64)>, StoreError> {
        let found = self.read(reads::processes)?;
        for (pid, _) in &found {
            self.forget_process(*pid)?;
        }
        Ok(found)
    }

    /// Turns whose prompt or reply contain every word of `query` (the last word as a
    /// prefix), best match first, at most `limit`.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        self.read(|c| reads::search(c, query, limit))
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // If the writer is already gone there is nothing left to drain.
        let _ = self.ops.send(Op::Shutdown);
        if let Some(writer) = self.writer.take() {
            if writer.join().is_err() {
                tracing::error!(path = %self.path.display(), "session store: the writer thread panicked");
            }
        }
    }
}
