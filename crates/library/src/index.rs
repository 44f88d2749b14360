//! The incremental indexer: a stat sweep over every home, then only what changed.
//!
//! Per file it keeps size, mtime, inode, a hash of the first bytes and how far it was
//! read (`indexed_off`, always a line end) with the reader's carried [`Meta`]. An
//! unchanged stat is skipped without opening the file; a grown file with the same
//! inode and head is read on from `indexed_off`; anything else (shrunk, replaced,
//! another head, a Gemini chat) is read again from the start, its old rows replaced.
//! A file that is gone keeps its session, marked `source_gone`.
//!
//! Writes go in short transactions (at most [`TX_BUDGET`] each) so the session store's
//! own writer, which shares the database, never waits long for the lock.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension};

use crate::homes::{Agent, Home};
use crate::lines::{Line, LineReader};
use crate::model::{Batch, Meta};
use crate::progress::Progress;
use crate::{claude, codex, gemini, LibraryError};

/// The longest a write transaction is held for changes the watcher reports.
pub const TX_BUDGET: Duration = Duration::from_millis(20);
/// The longest one is held by a sweep (FTS5 merges less with larger transactions,
/// but the store's writer, which makes managed turns durable, waits this long at most:
/// before each transaction the indexer flushes the store, so its writes go first).
pub const SWEEP_TX_BUDGET: Duration = Duration::from_millis(50);
/// Flush a huge file's excerpts part way once this much text is held.
const BATCH_TEXT: usize = 8 << 20;
const HEAD_BYTES: usize = 1024;
const AUTOMERGE: i64 = 16;

/// A file's row.
#[derive(Debug, Clone)]
struct FileRow {
    id: i64,
    size: i64,
    mtime_ns: i64,
    inode: i64,
    head: i64,
    indexed_off: i64,
    meta: Meta,
    status: String,
}

#[derive(Debug, Clone, Copy)]
struct Stat {
    size: i64,
    mtime_ns: i64,
    inode: i64,
}

fn stat(path: &Path) -> Option<Stat> {
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| Stat {
        size: m.len() as i64,
        mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
        inode: m.ino() as i64,
    })
}

fn head_hash(path: &Path) -> i64 {
    let mut buf = [0u8; HEAD_BYTES];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut buf))
        .unwrap_or(0);
    // FNV-1a: stable across builds (std's hasher is not).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in &buf[..n] {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

/// What a sweep did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SweepStats {
    /// Files looked at.
    pub files: u64,
    /// Files read (in full or from where they stopped).
    pub read: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Files found gone.
    pub gone: u64,
}

/// The indexer's own connection and state.
pub struct Indexer {
    conn: Connection,
    homes: Vec<Home>,
    progress: Arc<Progress>,
    in_tx: bool,
    tx_since: Instant,
    budget: Duration,
    store: Option<Arc<weft_store::SqliteStore>>,
    /// Files whose problem was logged already (logged once, not at every read).
    logged: HashSet<PathBuf>,
    /// Codex thread names, per home.
    names_seen: HashMap<PathBuf, i64>,
}

impl Indexer {
    /// An indexer over the database at `db` (already migrated by the store).
    pub fn open(
        db: &Path,
        homes: Vec<Home>,
        progress: Arc<Progress>,
    ) -> Result<Self, LibraryError> {
        let conn = crate::connect(db)?;
        // FTS5 merges segments once AUTOMERGE of one level exist (default 4): at 16 a
        // first index runs ~1.6x faster (fewer merges) and queries stay well inside
        // their budget (BENCHMARKS.md). The setting lives in the table; writing it again
        // is a no-op.
        conn.execute(
            "INSERT INTO lib_fts (lib_fts, rank) VALUES ('automerge', ?1)",
            [AUTOMERGE],
        )?;
        Ok(Self {
            conn,
            homes,
            progress,
            in_tx: false,
            tx_since: Instant::now(),
            budget: TX_BUDGET,
            store: None,
            logged: HashSet::new(),
            names_seen: HashMap::new(),
        })
    }

    /// The homes indexed.
    pub fn homes(&self) -> &[Home] {
        &self.homes
    }

    /// Lets the store's writer commit what it has queued before this indexer takes
    /// the write lock: managed turns are never held behind a sweep.
    pub fn yield_to(&mut self, store: Option<Arc<weft_store::SqliteStore>>) {
        self.store = store;
    }

    fn begin(&mut self) -> rusqlite::Result<()> {
        if !self.in_tx {
            if let Some(store) = &self.store {
                let _ = store.flush();
            }
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            self.in_tx = true;
            self.tx_since = Instant::now();
        }
        Ok(())
    }

    fn commit(&mut self) -> rusqlite::Result<()> {
        if self.in_tx {
            self.in_tx = false;
            self.conn.execute_batch("COMMIT")?;
        }
        Ok(())
    }

    fn maybe_commit(&mut self) -> rusqlite::Result<()> {
        if self.in_tx && self.tx_since.elapsed() >= self.budget {
            self.commit()?;
        }
        Ok(())
    }

    /// Every session file of every home, with its home's index.
    fn walk(&self) -> Vec<(usize, PathBuf)> {
        let mut out = Vec::new();
        for (i, home) in self.homes.iter().enumerate() {
            for root in home.session_roots() {
                if !root.is_dir() {
                    continue;
                }
                for entry in walkdir::WalkDir::new(&root)
                    .max_depth(6)
                    .into_iter()
                    .filter_map(Result::ok)
                {
                    if entry.file_type().is_file() && home.owns(entry.path()) {
                        out.push((i, entry.into_path()));
                    }
                }
            }
        }
        out
    }

    fn file_rows(&self) -> Result<HashMap<String, FileRow>, LibraryError> {
        let mut stmt = self.conn.prepare(
            "SELECT path, id, size, mtime_ns, inode, head, indexed_off, meta, status FROM lib_files",
        )?;
        let rows = stmt.query_map([], |r| {
            let meta: String = r.get(7)?;
            Ok((
                r.get::<_, String>(0)?,
                FileRow {
                    id: r.get(1)?,
                    size: r.get(2)?,
                    mtime_ns: r.get(3)?,
                    inode: r.get(4)?,
                    head: r.get(5)?,
                    indexed_off: r.get(6)?,
                    meta: serde_json::from_str(&meta).unwrap_or_default(),
                    status: r.get(8)?,
                },
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn file_row(&self, path: &str) -> Result<Option<FileRow>, LibraryError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT id, size, mtime_ns, inode, head, indexed_off, meta, status FROM lib_files WHERE path = ?1",
            )?
            .query_row([path], |r| {
                let meta: String = r.get(6)?;
                Ok(FileRow {
                    id: r.get(0)?,
                    size: r.get(1)?,
                    mtime_ns: r.get(2)?,
                    inode: r.get(3)?,
                    head: r.get(4)?,
                    indexed_off: r.get(5)?,
                    meta: serde_json::from_str(&meta).unwrap_or_default(),
                    status: r.get(7)?,
                })
            })
            .optional()?)
    }

    /// Stats every file of every home and reads what changed; marks what is gone.
    pub fn sweep(&mut self) -> Result<SweepStats, LibraryError> {
        let started = Instant::now();
        let files = self.walk();
        let rows = self.file_rows()?;
        let mut todo = Vec::new();
        let mut seen = HashSet::new();
        for (home, path) in files {
            let key = path.to_string_lossy().into_owned();
            let Some(st) = stat(&path) else { continue };
            seen.insert(key.clone());
            let row = rows.get(&key);
            let unchanged = row.is_some_and(|r| {
                r.size == st.size
                    && r.mtime_ns == st.mtime_ns
                    && r.inode == st.inode
                    && r.status != "gone"
            });
            if !unchanged {
                todo.push((home, path, st));
            }
        }
        let mut stats = SweepStats {
            files: seen.len() as u64,
            ..Default::default()
        };
        let p = &self.progress;
        p.files_total.store(todo.len() as u64, Ordering::Relaxed);
        p.files_done.store(0, Ordering::Relaxed);
        p.bytes_total.store(
            todo.iter().map(|t| t.2.size as u64).sum(),
            Ordering::Relaxed,
        );
        p.bytes_done.store(0, Ordering::Relaxed);
        p.running.store(true, Ordering::Relaxed);
        self.budget = SWEEP_TX_BUDGET;
        let result = (|| -> Result<(), LibraryError> {
            for (home, path, st) in todo {
                let read = self.index_file(home, &path, Some(st))?;
                stats.read += 1;
                stats.bytes += read;
                self.progress.files_done.fetch_add(1, Ordering::Relaxed);
                self.maybe_commit()?;
            }
            for (path, row) in &rows {
                if !seen.contains(path) && row.status != "gone" {
                    self.begin()?;
                    self.mark_gone(row.id)?;
                    stats.gone += 1;
                }
            }
            self.load_codex_names()?;
            self.commit()?;
            Ok(())
        })();
        if result.is_err() && self.in_tx {
            self.in_tx = false;
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        self.budget = TX_BUDGET;
        self.progress.running.store(false, Ordering::Relaxed);
        self.progress.sweeps.fetch_add(1, Ordering::Relaxed);
        result?;
        tracing::debug!(
            ?stats,
            ms = started.elapsed().as_millis() as u64,
            "library sweep"
        );
        Ok(stats)
    }

    /// Reads the files named (a watcher's events) if they belong to a home and changed.
    pub fn index_paths(&mut self, paths: &[PathBuf]) -> Result<(), LibraryError> {
        let mut names = false;
        let result = (|| -> Result<(), LibraryError> {
            for path in paths {
                if path.file_name().is_some_and(|n| n == "session_index.jsonl") {
                    names = true;
                    continue;
                }
                let Some(home) = self.homes.iter().position(|h| h.owns(path)) else {
                    continue;
                };
                let key = path.to_string_lossy().into_owned();
                match stat(path) {
                    Some(st) => {
                        let row = self.file_row(&key)?;
                        if row.is_some_and(|r| {
                            r.size == st.size && r.mtime_ns == st.mtime_ns && r.inode == st.inode
                        }) {
                            continue;
                        }
                        self.index_file(home, path, Some(st))?;
                    }
                    None => {
                        if let Some(row) = self.file_row(&key)? {
                            self.begin()?;
                            self.mark_gone(row.id)?;
                        }
                    }
                }
                self.maybe_commit()?;
            }
            if names {
                self.begin()?;
                self.load_codex_names()?;
            }
            self.commit()?;
            Ok(())
        })();
        if result.is_err() && self.in_tx {
            self.in_tx = false;
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        result
    }

    fn mark_gone(&mut self, file_id: i64) -> rusqlite::Result<()> {
        self.conn
            .prepare_cached("UPDATE lib_files SET status = 'gone' WHERE id = ?1")?
            .execute([file_id])?;
        self.conn
            .prepare_cached("UPDATE lib_sessions SET source_gone = 1 WHERE file_id = ?1")?
            .execute([file_id])?;
        Ok(())
    }

    fn log_once(&mut self, path: &Path, what: &str) {
        if self.logged.insert(path.to_path_buf()) {
            tracing::warn!(path = %path.display(), "session library: {what}");
        }
    }

    /// Reads one file (from where it stopped when it only grew). Returns bytes read.
    fn index_file(
        &mut self,
        home: usize,
        path: &Path,
        st: Option<Stat>,
    ) -> Result<u64, LibraryError> {
        let Some(st) = st.or_else(|| stat(path)) else {
            return Ok(0);
        };
        let key = path.to_string_lossy().into_owned();
        // The row is read under the write lock: another indexer (a fork's, a test's)
        // that read the same file first has committed where it stopped.
        self.begin()?;
        let row = self.file_row(&key)?;
        let head = head_hash(path);
        let agent = self.homes[home].agent;
        let append = agent != Agent::Gemini
            && row.as_ref().is_some_and(|r| {
                r.inode == st.inode
                    && r.head == head
                    && st.size >= r.indexed_off
                    && r.status != "gone"
            });
        let (file_id, mut meta, from) = match (&row, append) {
            (Some(r), true) => (r.id, r.meta.clone(), r.indexed_off as u64),
            _ => {
                let id = match &row {
                    Some(r) => {
                        self.forget_file_rows(r.id)?;
                        r.id
                    }
                    None => self.new_file(home, &key)?,
                };
                (id, self.seed_meta(home, path), 0)
            }
        };
        let mut batch = Batch::default();
        let mut bad = 0u32;
        let mut first_error: Option<String> = None;
        let consumed;
        if agent == Agent::Gemini {
            let mut chat = match gemini::read_chat(path) {
                Ok(c) => c,
                Err(e) => {
                    self.log_once(path, &format!("cannot be read: {e}"));
                    return Ok(0);
                }
            };
            chat.meta.workdir = meta.workdir.take().or(chat.meta.workdir);
            if chat.meta.native_id.is_none() {
                chat.meta.native_id = meta.native_id.take();
            }
            chat.meta.parent = meta.parent.take().or(chat.meta.parent);
            if meta.relation.is_some() {
                chat.meta.relation = meta.relation.take();
            }
            gemini::index_chat(&mut chat, &mut batch);
            bad = chat.bad_lines;
            first_error = chat.first_error.take();
            meta = chat.meta;
            consumed = st.size as u64;
        } else {
            let read_line = match agent {
                Agent::Claude => claude::read_line,
                _ => codex::read_line,
            };
            let mut reader = match LineReader::open(path, from) {
                Ok(r) => r,
                Err(e) => {
                    self.log_once(path, &format!("cannot be read: {e}"));
                    self.commit()?;
                    return Ok(0);
                }
            };
            loop {
                let line = match reader.next_line() {
                    Ok(Some(l)) => l,
                    Ok(None) => break,
                    Err(e) => {
                        first_error.get_or_insert(format!("read failed part way: {e}"));
                        break;
                    }
                };
                match line {
                    Line::Text { off, bytes } => {
                        if bytes.iter().all(u8::is_ascii_whitespace) {
                            continue;
                        }
                        if let Err(e) = read_line(&mut meta, off, bytes, &mut batch) {
                            bad += 1;
                            first_error.get_or_insert_with(|| {
                                format!("a line at byte {off} is not a record: {e}")
                            });
                        }
                    }
                    Line::TooLong { off, len } => {
                        bad += 1;
                        first_error.get_or_insert_with(|| {
                            format!("a {len}-byte line at byte {off} was skipped")
                        });
                    }
                }
                if batch.text_bytes >= BATCH_TEXT {
                    let done = reader.consumed();
                    let session_id = self.ensure_session(file_id, home, &meta)?;
                    self.write(
                        file_id, session_id, home, &meta, &mut batch, done, st, head, None,
                    )?;
                    self.progress
                        .bytes_done
                        .fetch_add(done - from, Ordering::Relaxed);
                    self.commit()?;
                    self.begin()?;
                }
            }
            consumed = reader.consumed();
        }
        if let Some(e) = &first_error {
            self.log_once(
                path,
                &format!("indexed as far as it is valid ({bad} bad lines); first: {e}"),
            );
        }
        let session_id = self.ensure_session(file_id, home, &meta)?;
        self.write(
            file_id,
            session_id,
            home,
            &meta,
            &mut batch,
            consumed,
            st,
            head,
            first_error,
        )?;
        self.progress
            .bytes_done
            .fetch_add(st.size as u64, Ordering::Relaxed);
        Ok(consumed.saturating_sub(from))
    }

    fn new_file(&mut self, home: usize, path: &str) -> rusqlite::Result<i64> {
        let h = &self.homes[home];
        self.conn
            .prepare_cached(
                "INSERT INTO lib_files (agent, home, path, size, mtime_ns, inode, head, indexed_off, meta, status)
                 VALUES (?1, ?2, ?3, 0, 0, 0, 0, 0, '{}', 'new')",
            )?
            .execute(params![h.agent.id(), h.root.to_string_lossy(), path])?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Drops what a file contributed, before it is read again from the start.
    fn forget_file_rows(&mut self, file_id: i64) -> rusqlite::Result<()> {
        let sid: Option<i64> = self
            .conn
            .prepare_cached("SELECT id FROM lib_sessions WHERE file_id = ?1")?
            .query_row([file_id], |r| r.get(0))
            .optional()?;
        let Some(sid) = sid else { return Ok(()) };
        self.conn
            .prepare_cached(
                "DELETE FROM lib_fts WHERE rowid IN (SELECT id FROM lib_docs WHERE session_id = ?1)",
            )?
            .execute([sid])?;
        for sql in [
            "DELETE FROM lib_docs WHERE session_id = ?1",
            "DELETE FROM lib_turns WHERE session_id = ?1",
            "DELETE FROM lib_usage WHERE session_id = ?1",
        ] {
            self.conn.prepare_cached(sql)?.execute([sid])?;
        }
        Ok(())
    }

    /// What is known of a file's session before reading it: its id from the file name,
    /// a subagent's parent, a Gemini chat's folder.
    fn seed_meta(&self, home: usize, path: &Path) -> Meta {
        let mut meta = Meta::default();
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent_dir = |n: usize| {
            let mut p = path.parent();
            for _ in 0..n {
                p = p.and_then(Path::parent);
            }
            p.and_then(Path::file_name)
                .map(|s| s.to_string_lossy().into_owned())
        };
        match self.homes[home].agent {
            Agent::Claude => {
                meta.native_id = Some(stem);
                if parent_dir(0).as_deref() == Some("subagents") {
                    meta.parent = parent_dir(1);
                    meta.relation = Some("subagent".into());
                }
            }
            Agent::Codex => {}
            Agent::Gemini => {
                // tmp/<project>/chats/[<parent>/]session-….jsonl
                let mut dir = path.parent();
                if dir.and_then(Path::file_name).is_some_and(|n| n != "chats") {
                    meta.parent = parent_dir(0);
                    meta.relation = Some("subagent".into());
                    dir = dir.and_then(Path::parent);
                }
                let project = dir.and_then(Path::parent);
                if let Some(project) = project {
                    meta.workdir = std::fs::read_to_string(project.join(".project_root"))
                        .ok()
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .or_else(|| {
                            let name = project.file_name()?.to_string_lossy().into_owned();
                            gemini_projects(&self.homes[home].root).remove(&name)
                        });
                }
            }
        }
        meta
    }

    /// The session row of a file (made when missing), keyed `agent:native id`.
    fn ensure_session(&mut self, file_id: i64, home: usize, meta: &Meta) -> rusqlite::Result<i64> {
        let existing: Option<i64> = self
            .conn
            .prepare_cached("SELECT id FROM lib_sessions WHERE file_id = ?1")?
            .query_row([file_id], |r| r.get(0))
            .optional()?;
        let h = &self.homes[home];
        let native = meta
            .native_id
            .clone()
            .unwrap_or_else(|| format!("file-{file_id}"));
        let key = format!("{}:{native}", h.agent.id());
        if let Some(id) = existing {
            // A file read before its id was known (cut short before `session_meta`).
            self.conn
                .prepare_cached(
                    "UPDATE OR IGNORE lib_sessions SET session_key = ?2, native_id = ?3 WHERE id = ?1 AND session_key != ?2",
                )?
                .execute(params![id, key, native])?;
            return Ok(id);
        }
        self.conn
            .prepare_cached(
                "INSERT INTO lib_sessions (session_key, agent, native_id, file_id, home, account, title, title_src,
                     created_at, updated_at, messages, turns)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, '', 'none', 0, 0, 0, 0)
                 ON CONFLICT (session_key) DO UPDATE SET file_id = excluded.file_id, source_gone = 0",
            )?
            .execute(params![
                key,
                h.agent.id(),
                native,
                file_id,
                h.root.to_string_lossy(),
                h.account
            ])?;
        self.conn
            .prepare_cached("SELECT id FROM lib_sessions WHERE session_key = ?1")?
            .query_row([key], |r| r.get(0))
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        file_id: i64,
        session_id: i64,
        home: usize,
        meta: &Meta,
        batch: &mut Batch,
        consumed: u64,
        st: Stat,
        head: i64,
        error: Option<String>,
    ) -> Result<(), LibraryError> {
        let c = &self.conn;
        {
            let mut doc = c.prepare_cached(
                "INSERT INTO lib_docs (session_id, turn, off, at, kind) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            let mut fts = c.prepare_cached("INSERT INTO lib_fts (rowid, text) VALUES (?1, ?2)")?;
            for d in batch.docs.drain(..) {
                doc.execute(params![
                    session_id,
                    d.turn,
                    d.off as i64,
                    d.at,
                    d.kind.as_str()
                ])?;
                fts.execute(params![c.last_insert_rowid(), d.text])?;
            }
            let mut turn = c.prepare_cached(
                "INSERT OR REPLACE INTO lib_turns (session_id, n, off, at) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for t in batch.turns.drain(..) {
                turn.execute(params![session_id, t.n, t.off as i64, t.at])?;
            }
            let mut usage = c.prepare_cached(
                "INSERT INTO lib_usage (key, session_id, at, model, input, output, cache_read, cache_write, reasoning)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (key) DO UPDATE SET input = excluded.input, output = excluded.output,
                     cache_read = excluded.cache_read, cache_write = excluded.cache_write,
                     reasoning = excluded.reasoning, model = excluded.model
                 WHERE excluded.input + excluded.output + excluded.cache_read + excluded.cache_write
                     > lib_usage.input + lib_usage.output + lib_usage.cache_read + lib_usage.cache_write",
            )?;
            for u in batch.usage.drain(..) {
                usage.execute(params![
                    u.key,
                    session_id,
                    u.at,
                    u.model,
                    u.input as i64,
                    u.output as i64,
                    u.cache_read as i64,
                    u.cache_write as i64,
                    u.reasoning as i64
                ])?;
            }
        }
        batch.text_bytes = 0;
        let (title, title_src) = meta.title();
        let h = &self.homes[home];
        let parent_key = meta
            .parent
            .as_ref()
            .map(|p| format!("{}:{p}", h.agent.id()));
        c.prepare_cached(
            "UPDATE lib_sessions SET workdir = ?2, git_branch = ?3, title = ?4, title_src = ?5, model = ?6,
                 parent_key = ?7, relation = ?8, created_at = ?9, updated_at = ?10, messages = ?11,
                 turns = ?12, source_gone = 0,
                 input_tokens = u.i, output_tokens = u.o, cache_read_tokens = u.r, cache_write_tokens = u.w
             FROM (SELECT COALESCE(SUM(input), 0) AS i, COALESCE(SUM(output), 0) AS o,
                          COALESCE(SUM(cache_read), 0) AS r, COALESCE(SUM(cache_write), 0) AS w
                   FROM lib_usage WHERE session_id = ?1) AS u
             WHERE id = ?1",
        )?
        .execute(params![
            session_id,
            meta.workdir,
            meta.git_branch,
            title,
            title_src,
            meta.model,
            parent_key,
            meta.relation,
            meta.created_at,
            meta.updated_at,
            meta.messages,
            meta.turns
        ])?;
        let status = if error.is_some() { "error" } else { "ok" };
        c.prepare_cached(
            "UPDATE lib_files SET size = ?2, mtime_ns = ?3, inode = ?4, head = ?5, indexed_off = ?6,
                 meta = ?7, status = ?8, error = ?9 WHERE id = ?1",
        )?
        .execute(params![
            file_id,
            st.size,
            st.mtime_ns,
            st.inode,
            head,
            consumed as i64,
            serde_json::to_string(meta)?,
            status,
            error
        ])?;
        Ok(())
    }

    /// Codex thread names (`session_index.jsonl`, newest line wins) onto their sessions.
    fn load_codex_names(&mut self) -> Result<(), LibraryError> {
        let homes: Vec<Home> = self
            .homes
            .iter()
            .filter(|h| h.agent == Agent::Codex)
            .cloned()
            .collect();
        for h in homes {
            let file = h.root.join("session_index.jsonl");
            let Some(st) = stat(&file) else { continue };
            if self.names_seen.get(&file) == Some(&st.mtime_ns) {
                continue;
            }
            self.names_seen.insert(file.clone(), st.mtime_ns);
            let mut names: HashMap<String, String> = HashMap::new();
            let Ok(mut reader) = LineReader::open(&file, 0) else {
                continue;
            };
            while let Ok(Some(line)) = reader.next_line() {
                if let Line::Text { bytes, .. } = line {
                    #[derive(serde::Deserialize)]
                    struct Entry {
                        id: String,
                        #[serde(default)]
                        thread_name: Option<String>,
                    }
                    if let Ok(e) = serde_json::from_slice::<Entry>(bytes) {
                        if let Some(n) = e.thread_name.filter(|n| !n.trim().is_empty()) {
                            names.insert(e.id, n);
                        }
                    }
                }
            }
            self.begin()?;
            let mut stmt = self.conn.prepare_cached(
                "UPDATE lib_sessions SET index_title = ?2 WHERE session_key = ?1",
            )?;
            for (id, name) in names {
                stmt.execute(params![format!("codex:{id}"), name])?;
            }
        }
        Ok(())
    }
}

/// Gemini's project name → folder map (`projects.json`).
fn gemini_projects(root: &Path) -> HashMap<String, String> {
    let v: serde_json::Value = std::fs::read_to_string(root.join("projects.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    v["projects"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(dir, name)| Some((name.as_str()?.to_string(), dir.clone())))
                .collect()
        })
        .unwrap_or_default()
}
