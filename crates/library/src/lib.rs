//! The session library: every agent's own sessions (Claude Code's `~/.claude/projects`,
//! Codex's `~/.codex/sessions`, Gemini's `~/.gemini/tmp`) indexed beside Weft's managed
//! ones in the session store's SQLite database, so one query lists, searches and
//! totals all of them.
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
//! - **Bounded memory.** Files are read line by line ([`lines`]); a line past 64 MB is
//!   skipped, a huge file's excerpts are written part way. Parsers deserialize into
//!   borrowed structs naming only the fields used, so tool outputs and file snapshots
//!   are skipped without being allocated.
//! - **One search over both kinds.** `lib_fts` is an FTS5 table with the `trigram`
//!   tokenizer (substrings, identifiers such as `parse_config`, CJK); native excerpts
//!   have positive rowids (`lib_docs.id`), managed turns negative ones (`-turns.id`),
//!   kept current by triggers on the store's `turns` table.
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

mod claude;
mod codex;
pub mod fork;
mod gemini;
pub mod homes;
pub mod index;
pub mod lines;
pub mod model;
pub mod price;
mod progress;
pub mod query;
pub mod transcript;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use parking_lot::Mutex;
use rusqlite::{params, Connection, OptionalExtension};
use weft_protocol::{
    LibraryHit, LibraryProgress, LibraryQuery, LibrarySearch, LibrarySession, SessionAction,
    SessionRecord, TranscriptPage, UniversalSnapshot, UsageBy, UsageRow,
};
use weft_store::SqliteStore;

pub use homes::{ambient_homes, Agent, Home};
pub use index::{Indexer, SweepStats};
pub use progress::Progress;

/// How often the whole store is stat-swept besides the watcher.
pub const SWEEP_EVERY: Duration = Duration::from_secs(30);

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

/// A connection to the store's database, as the library uses it.
pub(crate) fn connect(db: &Path) -> Result<Connection, LibraryError> {
    let conn = Connection::open(db)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

enum Msg {
    Paths(Vec<PathBuf>),
    Stop,
}

struct Worker {
    tx: mpsc::Sender<Msg>,
    thread: std::thread::JoinHandle<()>,
}

/// The library over one database.
pub struct Library {
    db: PathBuf,
    read: Mutex<Connection>,
    progress: Arc<Progress>,
    homes: Vec<Home>,
    store: Option<Arc<SqliteStore>>,
    worker: Mutex<Option<Worker>>,
}

impl Library {
    /// The library of the database at `db` (the store has migrated it) over `homes`;
    /// `store`, when given, is flushed before reads so they see its latest writes and
    /// receives the records of adopted sessions. Indexing starts with [`Library::start`].
    pub fn open(
        db: &Path,
        homes: Vec<Home>,
        store: Option<Arc<SqliteStore>>,
    ) -> Result<Arc<Self>, LibraryError> {
        Ok(Arc::new(Self {
            db: db.to_path_buf(),
            read: Mutex::new(connect(db)?),
            progress: Arc::new(Progress::default()),
            homes,
            store,
            worker: Mutex::new(None),
        }))
    }

    /// The homes indexed.
    pub fn homes(&self) -> &[Home] {
        &self.homes
    }

    /// Starts the indexer thread: a sweep, then the watcher's changes and a sweep every
    /// [`SWEEP_EVERY`].
    pub fn start(&self) -> Result<(), LibraryError> {
        let mut worker = self.worker.lock();
        if worker.is_some() {
            return Ok(());
        }
        let mut indexer = Indexer::open(&self.db, self.homes.clone(), self.progress.clone())?;
        indexer.yield_to(self.store.clone());
        let (tx, rx) = mpsc::channel();
        let events = tx.clone();
        let homes = self.homes.clone();
        let thread = std::thread::Builder::new()
            .name("weft-library".into())
            .spawn(move || {
                let watcher =
                    notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
                        if let Ok(ev) = res {
                            if !ev.kind.is_access() {
                                let _ = events.send(Msg::Paths(ev.paths));
                            }
                        }
                    });
                let mut watcher = match watcher {
                    Ok(w) => Some(w),
                    Err(e) => {
                        tracing::warn!("session library: no file watcher ({e}); sweeping only");
                        None
                    }
                };
                let mut watched: Vec<PathBuf> = Vec::new();
                let mut watch_new = |watched: &mut Vec<PathBuf>| {
                    let Some(w) = watcher.as_mut() else { return };
                    for h in &homes {
                        for (dir, mode) in h
                            .session_roots()
                            .into_iter()
                            .map(|d| (d, RecursiveMode::Recursive))
                            .chain([(h.root.clone(), RecursiveMode::NonRecursive)])
                        {
                            if !watched.contains(&dir)
                                && dir.is_dir()
                                && w.watch(&dir, mode).is_ok()
                            {
                                watched.push(dir);
                            }
                        }
                    }
                };
                watch_new(&mut watched);
                if let Err(e) = indexer.sweep() {
                    tracing::warn!("session library: first index failed: {e}");
                }
                loop {
                    match rx.recv_timeout(SWEEP_EVERY) {
                        Ok(Msg::Paths(mut paths)) => {
                            // Take everything queued: one pass for a burst of writes.
                            let mut stop = false;
                            while let Ok(m) = rx.try_recv() {
                                match m {
                                    Msg::Paths(p) => paths.extend(p),
                                    Msg::Stop => stop = true,
                                }
                            }
                            paths.sort();
                            paths.dedup();
                            if paths.iter().any(|p| p.is_dir()) {
                                watch_new(&mut watched);
                            }
                            if let Err(e) = indexer.index_paths(&paths) {
                                tracing::warn!("session library: indexing changes failed: {e}");
                            }
                            if stop {
                                break;
                            }
                        }
                        Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                        Err(RecvTimeoutError::Timeout) => {
                            watch_new(&mut watched);
                            if let Err(e) = indexer.sweep() {
                                tracing::warn!("session library: sweep failed: {e}");
                            }
                        }
                    }
                }
            })?;
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

    /// One sweep now, on this thread (tests and benchmarks; not while started).
    pub fn index_now(&self) -> Result<SweepStats, LibraryError> {
        let mut indexer = Indexer::open(&self.db, self.homes.clone(), self.progress.clone())?;
        indexer.yield_to(self.store.clone());
        indexer.sweep()
    }

    /// Reads these paths now, on this thread, as the watcher does (tests; not while
    /// started).
    pub fn index_paths(&self, paths: &[PathBuf]) -> Result<(), LibraryError> {
        let mut indexer = Indexer::open(&self.db, self.homes.clone(), self.progress.clone())?;
        indexer.yield_to(self.store.clone());
        indexer.index_paths(paths)
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
        query::list(&self.read.lock(), q)
    }

    /// Sessions matching a search, best first.
    pub fn search(&self, s: &LibrarySearch) -> Result<Vec<LibraryHit>, LibraryError> {
        self.flush_store();
        query::search(&self.read.lock(), s)
    }

    /// Usage grouped by `by`, since `since` (ms).
    pub fn usage(&self, by: UsageBy, since: Option<i64>) -> Result<Vec<UsageRow>, LibraryError> {
        query::usage(&self.read.lock(), by, since)
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

    fn file_of(&self, key: &str) -> Result<Option<(i64, PathBuf, bool)>, LibraryError> {
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

    /// Turns `[start, start + limit)` of a native session's transcript (by default the
    /// last `limit`, 50 unless given).
    pub fn open_transcript(
        &self,
        key: &str,
        start: Option<u32>,
        limit: Option<u32>,
    ) -> Result<TranscriptPage, LibraryError> {
        let session = self
            .native(key)?
            .ok_or_else(|| LibraryError::Unknown(key.to_string()))?;
        let native_key = session.session_key.clone();
        let (sid, path, gone) = self
            .file_of(&native_key)?
            .ok_or_else(|| LibraryError::Unknown(key.to_string()))?;
        let total = session.turns;
        let limit = limit.unwrap_or(50).clamp(1, 1000);
        let start = start.unwrap_or(total.saturating_sub(limit)).min(total);
        let end = (start + limit).min(total);
        let offsets: Vec<(u32, i64)> = {
            let conn = self.read.lock();
            let mut stmt = conn.prepare_cached(
                "SELECT n, off FROM lib_turns WHERE session_id = ?1 AND n BETWEEN ?2 AND ?3 ORDER BY n",
            )?;
            let rows = stmt.query_map(params![sid, start + 1, end + 1], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let native_id = session.session_id.clone().unwrap_or_default();
        let turns = if gone || !path.is_file() {
            self.excerpt_turns(sid, start, end, &session)?
        } else if session.agent == "gemini" {
            let all = transcript::read_page("gemini", &native_id, &path, 0, None)?;
            all.into_iter()
                .skip(start as usize)
                .take((end - start) as usize)
                .collect()
        } else {
            let from = offsets
                .iter()
                .find(|(n, _)| *n == start + 1)
                .map(|o| o.1 as u64);
            let until = offsets
                .iter()
                .find(|(n, _)| *n == end + 1)
                .map(|o| o.1 as u64);
            match from {
                Some(from) => {
                    transcript::read_page(&session.agent, &native_id, &path, from, until)?
                }
                None => Vec::new(),
            }
        };
        Ok(TranscriptPage {
            session_key: key.to_string(),
            total,
            start,
            turns,
            source_gone: gone,
        })
    }

    /// What the index kept of turns whose file is gone: the excerpts.
    fn excerpt_turns(
        &self,
        sid: i64,
        start: u32,
        end: u32,
        session: &LibrarySession,
    ) -> Result<Vec<UniversalSnapshot>, LibraryError> {
        let conn = self.read.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT d.turn, d.kind, d.at, f.text FROM lib_docs d JOIN lib_fts f ON f.rowid = d.id
             WHERE d.session_id = ?1 AND d.turn BETWEEN ?2 AND ?3 ORDER BY d.id",
        )?;
        let rows = stmt.query_map(params![sid, start + 1, end], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        let mut out: Vec<UniversalSnapshot> = Vec::new();
        for row in rows {
            let (turn, kind, at, text) = row?;
            if kind == "prompt" || out.is_empty() {
                out.push(UniversalSnapshot {
                    phase: weft_protocol::Phase::Done,
                    agent: session.agent.clone(),
                    session_id: session.session_id.clone(),
                    started_at: Some(at),
                    updated_at: at,
                    incomplete: true,
                    notices: vec![format!(
                        "turn {turn}: the agent's file is gone; these are the excerpts Weft kept"
                    )],
                    ..Default::default()
                });
            }
            if let Some(t) = out.last_mut() {
                match kind.as_str() {
                    "prompt" => t.prompt = text,
                    _ => {
                        if !t.text.is_empty() {
                            t.text.push_str("\n\n");
                        }
                        t.text.push_str(&text);
                    }
                }
                t.updated_at = at;
            }
        }
        Ok(out)
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
            }
            SessionAction::Unarchive => {
                mark("archived", &false)?;
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

    /// Forks a native session (or a managed one's native file) at its end, or after
    /// turn `at` (1-based): a new session of the same agent in the same home holding
    /// the history up to there, recorded with its parent. Returns the new session.
    pub fn fork(&self, key: &str, at: Option<u32>) -> Result<LibrarySession, LibraryError> {
        let session = self
            .native(key)?
            .ok_or_else(|| LibraryError::Unknown(key.to_string()))?;
        let (sid, path, gone) = self
            .file_of(&session.session_key)?
            .ok_or_else(|| LibraryError::Unknown(key.to_string()))?;
        if gone || !path.is_file() {
            return Err(LibraryError::Invalid(format!(
                "the agent's file of {key} is gone: it cannot be forked"
            )));
        }
        let until = match at {
            None => None,
            Some(n) if n == 0 || n > session.turns => {
                return Err(LibraryError::Invalid(format!(
                    "{key} has turns 1 to {}; there is no turn {n}",
                    session.turns
                )))
            }
            Some(n) if n == session.turns => None,
            Some(_) if session.agent == "gemini" => {
                return Err(LibraryError::Invalid(
                    "a Gemini chat is forked at its end only".into(),
                ))
            }
            Some(n) => {
                let off: i64 = self
                    .read
                    .lock()
                    .prepare_cached("SELECT off FROM lib_turns WHERE session_id = ?1 AND n = ?2")?
                    .query_row(params![sid, n + 1], |r| r.get(0))?;
                Some(off as u64)
            }
        };
        let old = session.session_id.clone().unwrap_or_default();
        let forked = fork::fork_file(&session.agent, &path, &old, until)?;
        self.index_paths(std::slice::from_ref(&forked.path))?;
        let new_key = format!("{}:{}", session.agent, forked.native_id);
        self.read.lock().execute(
            "INSERT INTO lib_marks (session_key, parent_key) VALUES (?1, ?2)
             ON CONFLICT (session_key) DO UPDATE SET parent_key = excluded.parent_key",
            params![new_key, session.session_key],
        )?;
        self.native(&new_key)?
            .ok_or_else(|| LibraryError::Invalid("the fork was written but not indexed".into()))
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
