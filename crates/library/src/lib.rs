//! The session library: every agent's own sessions (Claude Code's `~/.claude/projects`,
//! Codex's `~/.codex/sessions`, Gemini's `~/.gemini/tmp`) indexed beside Weft's managed
//! ones in the session store's SQLite database, so one query lists, searches and
//! totals all of them. Each agent's files are read through its `NativeSessions`
//! implementation (`weft-agent-spec`), handed to [`Library::open`]: the readers live
//! in the drivers, which the library never imports.
//!
//! # Design
//!
//! - **The agent's file is the source of truth.** The index keeps, per session, its
//!   summary (title, folder, branch, model, times, counts, token totals), each turn's
//!   byte offset, capped excerpts of prompts, replies and tool calls for search, and
//!   deduplicated usage events; never whole transcripts. A transcript is opened by
//!   reading the byte range of the turns asked for ([`transcript`]).
//! - **Incremental.** [`index::Indexer`] stats every file at start (size + mtime +
//!   inode; no hashing of unchanged files), reads an appended file on from its last
//!   indexed line end, re-reads a rewritten one, and keeps the rows of a file that is
//!   gone, marked `source_gone`. A `notify` watcher feeds it changed paths between
//!   sweeps; a periodic sweep catches what a watcher misses.
//! - **Bounded memory.** Files are read line by line (`weft_agent_spec::sessions::lines`); a line past 64 MB is
//!   skipped, a huge file's excerpts are written part way. Parsers deserialize into
//!   borrowed structs naming only the fields used, so tool outputs and file snapshots
//!   are skipped without being allocated.
//! - **One search over both kinds.** Native excerpts are in `lib_words`, a word-level
//!   FTS5 index, with a trigram index over their distinct words for substrings,
//!   identifiers such as `parse_config` and CJK ([`words`]); managed turns are in
//!   `lib_fts` (trigram) under rowid `-turns.id`, kept current by triggers on the
//!   store's `turns` table.
//! - **Off the request path.** Indexing runs on its own thread and connection, in
//!   transactions of at most [`index::SWEEP_TX_BUDGET`], each after flushing the
//!   store (its queued writes go first), so the store's writer never waits long;
//!   reads use another connection.
//!
//! # Hazards
//!
//! - Agents change their formats: every reader tolerates unknown records and fields; a
//!   line that is not a record is counted, the file indexed as far as it is valid, and
//!   the problem logged once per file.
//! - Claude deletes transcripts after 30 days by default: their rows stay, searchable,
//!   with `sourceGone`.
#![deny(missing_docs)]

mod export;
pub mod fork;
pub mod homes;
pub mod index;
mod managed;
pub mod model;
mod open;
mod progress;
pub mod query;
mod read;
mod search;
mod sweep;
pub mod usage;
mod watcher;
pub mod words;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rusqlite::{params, Connection, OptionalExtension};
use weft_protocol::{
    LibraryHit, LibraryProgress, LibraryQuery, LibrarySearch, LibrarySession, SessionAction,
    SessionRecord, UsageBy, UsageRow,
};
use weft_store::SqliteStore;

pub use homes::{account_homes, ambient_homes, Agent, Home};
pub use index::{Indexer, SweepStats};
pub use progress::Progress;
pub use read::{read_file, FileRead};

use watcher::Msg;
pub use watcher::SWEEP_EVERY;

/// Why the library failed.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    /// SQLite said no.
    #[error("session library database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A value did not (de)serialize.
    #[error("session library data: {0}")]
    Json(#[from] serde_json::Error),
    /// A file could not be read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The session store failed.
    #[error("{0}")]
    Store(#[from] weft_store::StoreError),
    /// No such session.
    #[error("unknown session `{0}`")]
    Unknown(String),
    /// The request cannot be done.
    #[error("{0}")]
    Invalid(String),
}

impl From<weft_agent_spec::sessions::SessionsError> for LibraryError {
    fn from(e: weft_agent_spec::sessions::SessionsError) -> Self {
        match e {
            weft_agent_spec::sessions::SessionsError::Io(e) => LibraryError::Io(e),
            weft_agent_spec::sessions::SessionsError::Invalid(why) => LibraryError::Invalid(why),
        }
    }
}

/// A connection to the store's database, as the library uses it.
pub(crate) fn connect(db: &Path) -> Result<Connection, LibraryError> {
    let conn = Connection::open(db)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

struct Worker {
    tx: mpsc::SyncSender<Msg>,
    thread: std::thread::JoinHandle<()>,
}

/// The library over one database.
pub struct Library {
    db: PathBuf,
    read: Mutex<Connection>,
    progress: Arc<Progress>,
    agents: Vec<Agent>,
    homes: Vec<Home>,
    accounts: Mutex<Option<PathBuf>>,
    store: Option<Arc<SqliteStore>>,
    worker: Mutex<Option<Worker>>,
}

impl Library {
    /// The library of the database at `db` (the store has migrated it) over `homes`,
    /// reading the session files of `agents` (the readers the daemon hands it; an
    /// account's home is looked for for each); `store`, when given, is flushed before
    /// reads so they see its latest writes and receives the records of adopted
    /// sessions. Indexing starts with [`Library::start`].
    pub fn open(
        db: &Path,
        agents: Vec<Agent>,
        homes: Vec<Home>,
        store: Option<Arc<SqliteStore>>,
    ) -> Result<Arc<Self>, LibraryError> {
        Ok(Arc::new(Self {
            db: db.to_path_buf(),
            read: Mutex::new(connect(db)?),
            progress: Arc::new(Progress::default()),
            agents,
            homes,
            accounts: Mutex::new(None),
            store,
            worker: Mutex::new(None),
        }))
    }

    /// The reader of `agent`'s sessions.
    pub(crate) fn agent(&self, agent: &str) -> Result<&Agent, LibraryError> {
        self.agents
            .iter()
            .find(|a| a.id() == agent)
            .ok_or_else(|| LibraryError::Invalid(format!("{agent} sessions are not read by Weft")))
    }

    /// The ambient homes indexed (account homes come on top, see
    /// [`Library::index_accounts`]).
    pub fn homes(&self) -> &[Home] {
        &self.homes
    }

    /// Starts the indexer thread: a sweep, then the watcher's changes and a sweep every
    /// [`SWEEP_EVERY`].
    pub fn start(&self) -> Result<(), LibraryError> {
        self.start_sweeping_every(SWEEP_EVERY)
    }

    /// [`Library::start`] with another time between sweeps (tests).
    pub fn start_sweeping_every(&self, every: Duration) -> Result<(), LibraryError> {
        let mut worker = self.worker.lock();
        if worker.is_some() {
            return Ok(());
        }
        let indexer = self.indexer()?;
        let (tx, rx) = mpsc::sync_channel(watcher::QUEUED);
        let events = tx.clone();
        let thread = std::thread::Builder::new()
            .name("weft-library".into())
            .spawn(move || watcher::run(indexer, events, rx, every))?;
        *worker = Some(Worker { tx, thread });
        Ok(())
    }

    /// Stops the indexer thread (what it was writing is committed first).
    pub fn stop(&self) {
        if let Some(w) = self.worker.lock().take() {
            let _ = w.tx.send(Msg::Stop);
            let _ = w.thread.join();
        }
    }

    /// Also indexes every login account's home under `root` (`<WEFT_HOME>/homes`),
    /// looked for again at each sweep. Set before [`Library::start`].
    pub fn index_accounts(&self, root: &Path) {
        *self.accounts.lock() = Some(root.to_path_buf());
    }

    fn indexer(&self) -> Result<Indexer, LibraryError> {
        let mut indexer = Indexer::open(&self.db, self.homes.clone(), self.progress.clone())?;
        indexer.yield_to(self.store.clone());
        indexer.accounts_under(self.accounts.lock().clone(), self.agents.clone());
        indexer.refresh_homes();
        Ok(indexer)
    }

    /// One sweep now, on this thread (tests and benchmarks; not while started).
    pub fn index_now(&self) -> Result<SweepStats, LibraryError> {
        self.indexer()?.sweep()
    }

    /// Reads these paths now, on this thread, as the watcher does (tests; not while
    /// started).
    pub fn index_paths(&self, paths: &[PathBuf]) -> Result<(), LibraryError> {
        self.indexer()?.index_paths(paths)
    }

    /// How far indexing is.
    pub fn progress(&self) -> LibraryProgress {
        self.progress.snapshot()
    }

    fn flush_store(&self) {
        if let Some(store) = &self.store {
            if let Err(e) = store.flush() {
                tracing::warn!("session library: the store did not flush: {e}");
            }
        }
    }

    /// Managed and native sessions, pinned first, newest first.
    pub fn list(&self, q: &LibraryQuery) -> Result<Vec<LibrarySession>, LibraryError> {
        self.flush_store();
        let mut rows = query::list(&self.read.lock(), q)?;
        // A fork's first turns may be in its parent's file (Codex's, see `open`):
        // counted as its transcript shows them. Forks are few; each costs its first line.
        for s in rows.iter_mut().filter(|s| {
            s.relation.as_deref() == Some("fork")
                && s.session_id.is_some()
                && self.agents.iter().any(|a| a.id() == s.agent)
        }) {
            let own = match s.origin {
                weft_protocol::Origin::Native => Some(s.clone()),
                weft_protocol::Origin::Managed => self.native(&s.session_key)?,
            };
            if let Some(own) = own {
                if let Some((_, inherited)) = self.codex_base(&own)? {
                    s.turns = s.turns.max(own.turns + inherited);
                }
            }
        }
        Ok(rows)
    }

    /// Sessions matching a search, best first.
    pub fn search(&self, s: &LibrarySearch) -> Result<Vec<LibraryHit>, LibraryError> {
        self.flush_store();
        search::search(&self.read.lock(), s)
    }

    /// Usage grouped by `by`, since `since` (ms).
    pub fn usage(&self, by: UsageBy, since: Option<i64>) -> Result<Vec<UsageRow>, LibraryError> {
        usage::usage(&self.read.lock(), by, since)
    }

    /// A native session by key (a managed key finds its native twin).
    pub fn native(&self, key: &str) -> Result<Option<LibrarySession>, LibraryError> {
        let conn = self.read.lock();
        if let Some(s) = query::native_session(&conn, key)? {
            return Ok(Some(s));
        }
        let twin: Option<String> = conn
            .prepare_cached(
                "SELECT n.session_key FROM sessions m JOIN lib_sessions n
                     ON n.agent = m.agent AND n.native_id = m.session_id WHERE m.session_key = ?1",
            )?
            .query_row([key], |r| r.get(0))
            .optional()?;
        match twin {
            Some(k) => query::native_session(&conn, &k),
            None => Ok(None),
        }
    }

    pub(crate) fn file_of(&self, key: &str) -> Result<Option<(i64, PathBuf, bool)>, LibraryError> {
        Ok(self
            .read
            .lock()
            .prepare_cached(
                "SELECT s.id, f.path, f.status = 'gone' FROM lib_sessions s JOIN lib_files f ON f.id = s.file_id
                 WHERE s.session_key = ?1",
            )?
            .query_row([key], |r| Ok((r.get(0)?, PathBuf::from(r.get::<_, String>(1)?), r.get(2)?)))
            .optional()?)
    }

    /// Renames, archives, pins or deletes a session's record.
    pub fn manage(&self, key: &str, action: &SessionAction) -> Result<(), LibraryError> {
        self.flush_store();
        let managed = match &self.store {
            Some(s) => s.get_session(key)?.is_some(),
            None => false,
        };
        let native = self.native(key)?;
        if !managed && native.is_none() {
            return Err(LibraryError::Unknown(key.to_string()));
        }
        let conn = self.read.lock();
        let mark = |column: &str, value: &dyn rusqlite::ToSql| -> rusqlite::Result<usize> {
            conn.execute(
                &format!(
                    "INSERT INTO lib_marks (session_key, {column}) VALUES (?1, ?2)
                     ON CONFLICT (session_key) DO UPDATE SET {column} = excluded.{column}"
                ),
                params![key, value],
            )
        };
        match action {
            SessionAction::Rename { title } => {
                let t = title.trim();
                if t.is_empty() {
                    return Err(LibraryError::Invalid("the title is empty".into()));
                }
                mark("title", &t)?;
            }
            SessionAction::Archive => {
                mark("archived", &true)?;
                mark("archived_at", &now_ms())?;
            }
            SessionAction::Unarchive => {
                mark("archived", &false)?;
                mark("archived_at", &rusqlite::types::Null)?;
            }
            SessionAction::Pin => {
                mark("pinned", &true)?;
            }
            SessionAction::Unpin => {
                mark("pinned", &false)?;
            }
            SessionAction::Delete { file } => {
                if *file {
                    let Some(n) = &native else {
                        return Err(LibraryError::Invalid(
                            "no agent file is known for this session".into(),
                        ));
                    };
                    drop(conn);
                    if let Some((_, path, _)) = self.file_of(&n.session_key)? {
                        match std::fs::remove_file(&path) {
                            Ok(()) => {}
                            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                            Err(e) => return Err(e.into()),
                        }
                    }
                    let conn = self.read.lock();
                    conn.execute(
                        "INSERT INTO lib_marks (session_key, hidden) VALUES (?1, 1)
                         ON CONFLICT (session_key) DO UPDATE SET hidden = 1",
                        [key],
                    )?;
                    return Ok(());
                }
                mark("hidden", &true)?;
            }
        }
        Ok(())
    }

    /// Sessions archived before `cutoff_ms` (and not unarchived since): what they left
    /// under WEFT_HOME may go.
    pub fn archived_before(&self, cutoff_ms: i64) -> Result<Vec<String>, LibraryError> {
        let conn = self.read.lock();
        let mut st = conn.prepare(
            "SELECT session_key FROM lib_marks
             WHERE archived = 1 AND archived_at IS NOT NULL AND archived_at < ?1",
        )?;
        let keys = st
            .query_map([cutoff_ms], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(keys)
    }

    /// The record that makes native session `key` a managed one under the same key and
    /// agent session id (what Continue does), written to the store. `Ok(false)` when
    /// `key` is not a native session, or is already managed.
    pub fn adopt(&self, key: &str) -> Result<bool, LibraryError> {
        let Some(store) = &self.store else {
            return Ok(false);
        };
        if store.get_session(key)?.is_some() {
            return Ok(false);
        }
        let conn = self.read.lock();
        let Some(n) = query::native_session(&conn, key)? else {
            return Ok(false);
        };
        drop(conn);
        let workdir = n.workdir.clone().ok_or_else(|| {
            LibraryError::Invalid(format!("the folder `{key}` ran in is not known"))
        })?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        store.upsert_session(&SessionRecord {
            session_key: key.to_string(),
            agent: n.agent.clone(),
            session_id: n.session_id.clone(),
            workdir,
            title: n.title.clone(),
            model: None,
            effort: None,
            created_at: n.created_at,
            updated_at: now,
            account: n.account.clone(),
            fork: None,
            switch: None,
        })?;
        store.flush()?;
        Ok(true)
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Milliseconds since the epoch (0 before it).
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
