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
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension};

use crate::homes::{Agent, Home};
use crate::model::{Batch, Meta};
use crate::progress::Progress;
use crate::read::{self, stat, Chunk, FileRow, Plan, Stat};
use crate::words::Vocabulary;
use crate::LibraryError;

/// The longest a write transaction is held for changes the watcher reports.
pub const TX_BUDGET: Duration = Duration::from_millis(20);
/// The longest one is held by a sweep (FTS5 merges less with larger transactions,
/// but the store's writer, which makes managed turns durable, waits this long at most:
/// before each transaction the indexer flushes the store, so its writes go first).
pub const SWEEP_TX_BUDGET: Duration = Duration::from_millis(50);
const AUTOMERGE: i64 = 16;

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
    pub(crate) homes: Vec<Home>,
    pub(crate) progress: Arc<Progress>,
    in_tx: bool,
    tx_since: Instant,
    pub(crate) budget: Duration,
    store: Option<Arc<weft_store::SqliteStore>>,
    /// Files whose problem was logged already (logged once, not at every read).
    logged: HashSet<PathBuf>,
    /// Codex thread names, per home.
    names_seen: HashMap<PathBuf, i64>,
    /// Words written to the vocabulary.
    vocabulary: Vocabulary,
    /// Excerpts (`lib_docs` id, text) written this transaction but not yet given to
    /// the word index: FTS5 writes its pending terms out as a new segment at every
    /// statement savepoint (each usage upsert opens one, for its trigger), so rows
    /// given to it one by one between those statements made a segment per statement
    /// and a merge every few; given together just before the commit they make one.
    words_due: Vec<(i64, String)>,
    /// The homes given, before account homes are added.
    base: Vec<Home>,
    /// Where login accounts' homes are (`<WEFT_HOME>/homes`).
    accounts: Option<PathBuf>,
    /// The agents whose accounts' homes are looked for there.
    agents: Vec<Agent>,
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
            "INSERT INTO lib_words (lib_words, rank) VALUES ('automerge', ?1)",
            [AUTOMERGE],
        )?;
        // The indexer's own page cache (the store's connections keep theirs): index
        // B-trees stay in memory across a sweep's transactions.
        conn.pragma_update(None, "cache_size", -32_768)?;
        // Room for the usage statements of every chunk size beside the rest.
        conn.set_prepared_statement_cache_capacity(64);
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        Ok(Self {
            conn,
            progress,
            in_tx: false,
            tx_since: Instant::now(),
            budget: TX_BUDGET,
            store: None,
            logged: HashSet::new(),
            names_seen: HashMap::new(),
            vocabulary: Vocabulary::default(),
            words_due: Vec::new(),
            base: homes.clone(),
            accounts: None,
            agents: Vec::new(),
            homes,
        })
    }

    /// The homes indexed.
    pub fn homes(&self) -> &[Home] {
        &self.homes
    }

    /// Also index the login accounts' homes under `root`, of these agents.
    pub fn accounts_under(&mut self, root: Option<PathBuf>, agents: Vec<Agent>) {
        self.accounts = root;
        self.agents = agents;
    }

    /// The homes given plus every account home that exists now.
    pub fn refresh_homes(&mut self) {
        let mut homes = self.base.clone();
        if let Some(root) = &self.accounts {
            for h in crate::homes::account_homes(&self.agents, root) {
                if !homes.iter().any(|b| b.root == h.root) {
                    homes.push(h);
                }
            }
        }
        self.homes = homes;
    }

    /// Lets the store's writer commit what it has queued before this indexer takes
    /// the write lock: managed turns are never held behind a sweep.
    pub fn yield_to(&mut self, store: Option<Arc<weft_store::SqliteStore>>) {
        self.store = store;
    }

    pub(crate) fn begin(&mut self) -> rusqlite::Result<()> {
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

    pub(crate) fn commit(&mut self) -> rusqlite::Result<()> {
        if self.in_tx {
            self.vocabulary.flush(&self.conn)?;
            self.index_words()?;
            self.in_tx = false;
            self.conn.execute_batch("COMMIT")?;
        }
        Ok(())
    }

    pub(crate) fn rollback(&mut self) {
        if self.in_tx {
            self.in_tx = false;
            self.vocabulary.reset();
            self.words_due.clear();
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }

    /// Gives the word index the excerpts written since the last time.
    fn index_words(&mut self) -> rusqlite::Result<()> {
        if self.words_due.is_empty() {
            return Ok(());
        }
        let mut fts = self
            .conn
            .prepare_cached("INSERT INTO lib_words (rowid, text) VALUES (?1, ?2)")?;
        for (id, text) in self.words_due.drain(..) {
            fts.execute(params![id, text])?;
        }
        Ok(())
    }

    /// Merges the word index's segments until no level holds two, a short
    /// transaction at a time. A sweep gives FTS5 one segment per transaction, so a
    /// large one ends with up to `AUTOMERGE - 1` big segments on the lowest level:
    /// every search reads each of them, and the watcher's next small writes, once
    /// there are `AUTOMERGE` segments, merge them all while a line waits to be found.
    pub(crate) fn compact_words(&mut self) -> Result<(), LibraryError> {
        self.conn.execute(
            "INSERT INTO lib_words (lib_words, rank) VALUES ('usermerge', 2)",
            [],
        )?;
        loop {
            self.begin()?;
            let before = self.conn.total_changes();
            self.conn.execute(
                "INSERT INTO lib_words (lib_words, rank) VALUES ('merge', 500)",
                [],
            )?;
            // FTS5: fewer than two changes means there was nothing to merge.
            let done = self.conn.total_changes() - before < 2;
            self.commit()?;
            if done {
                return Ok(());
            }
        }
    }

    pub(crate) fn maybe_commit(&mut self) -> rusqlite::Result<()> {
        if self.in_tx && self.tx_since.elapsed() >= self.budget {
            self.commit()?;
        }
        Ok(())
    }

    pub(crate) fn file_rows(&self) -> Result<HashMap<String, FileRow>, LibraryError> {
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

    pub(crate) fn file_row(&self, path: &str) -> Result<Option<FileRow>, LibraryError> {
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
                if !resolves_inside(&self.homes[home].root, path) {
                    // A link (or a path through one) out of the agent's home: what it
                    // leads to is not the agent's transcript, and the sweep never
                    // reads it. One read before is dropped, not kept as gone.
                    if let Some(row) = self.file_row(&key)? {
                        self.begin()?;
                        self.drop_file(row.id)?;
                    }
                    self.maybe_commit()?;
                    continue;
                }
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
                self.load_names()?;
            }
            self.commit()?;
            Ok(())
        })();
        if result.is_err() {
            self.rollback();
        }
        result
    }

    /// Forgets a file and everything read from it (its session no longer listed,
    /// searched or opened).
    fn drop_file(&mut self, file_id: i64) -> rusqlite::Result<()> {
        self.forget_file_rows(file_id)?;
        for sql in [
            "DELETE FROM lib_sessions WHERE file_id = ?1",
            "DELETE FROM lib_files WHERE id = ?1",
        ] {
            self.conn.prepare_cached(sql)?.execute([file_id])?;
        }
        Ok(())
    }

    pub(crate) fn mark_gone(&mut self, file_id: i64) -> rusqlite::Result<()> {
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
    pub(crate) fn index_file(
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
        let plan = read::plan(&self.homes, home, path, st, row);
        let mut file_id = None;
        read::parse(&plan, &mut |chunk| self.apply(&plan, &mut file_id, chunk))?;
        Ok(if file_id.is_some() {
            (st.size as u64).saturating_sub(plan.from)
        } else {
            0
        })
    }

    /// Writes one chunk of a planned read, inside a transaction (begun when needed).
    /// `file_id` is set by the first chunk, which also drops what a file read from the
    /// start contributed before.
    pub(crate) fn apply(
        &mut self,
        plan: &Plan,
        file_id: &mut Option<i64>,
        chunk: Chunk,
    ) -> Result<(), LibraryError> {
        if let Chunk::Unreadable(why) = &chunk {
            self.log_once(&plan.path, why);
            return Ok(());
        }
        self.begin()?;
        let id = match *file_id {
            Some(id) => id,
            None => {
                let id = match (&plan.basis, plan.append) {
                    (Some(r), true) => r.id,
                    (Some(r), false) => {
                        self.forget_file_rows(r.id)?;
                        r.id
                    }
                    (None, _) => self.new_file(plan.home, &plan.path.to_string_lossy())?,
                };
                *file_id = Some(id);
                id
            }
        };
        match chunk {
            Chunk::Part {
                mut batch,
                meta,
                done,
            } => {
                let session_id = self.ensure_session(id, plan.home, &meta)?;
                self.write(
                    id, session_id, plan.home, &meta, &mut batch, done, plan.st, plan.head, None,
                )?;
                self.progress
                    .bytes_done
                    .fetch_add(done.saturating_sub(plan.from), Ordering::Relaxed);
                self.commit()?;
                self.begin()?;
            }
            Chunk::End {
                mut batch,
                meta,
                consumed,
                bad,
                error,
            } => {
                if let Some(e) = &error {
                    self.log_once(
                        &plan.path,
                        &format!("indexed as far as it is valid ({bad} bad lines); first: {e}"),
                    );
                }
                let session_id = self.ensure_session(id, plan.home, &meta)?;
                self.write(
                    id, session_id, plan.home, &meta, &mut batch, consumed, plan.st, plan.head,
                    error,
                )?;
                self.progress
                    .bytes_done
                    .fetch_add(plan.st.size as u64, Ordering::Relaxed);
            }
            Chunk::Unreadable(_) => {}
        }
        Ok(())
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
        // The delete below finds the rows to drop through the word index.
        self.index_words()?;
        let sid: Option<i64> = self
            .conn
            .prepare_cached("SELECT id FROM lib_sessions WHERE file_id = ?1")?
            .query_row([file_id], |r| r.get(0))
            .optional()?;
        let Some(sid) = sid else { return Ok(()) };
        self.conn
            .prepare_cached(
                "DELETE FROM lib_words WHERE rowid IN (SELECT id FROM lib_docs WHERE session_id = ?1)",
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

    /// The session row of a file (made when missing), keyed `agent:native id`; `None`
    /// when the file holds no message of a session another file still holds. Gemini
    /// leaves a header-only file beside a session it resumed: it must not take the
    /// session (and its title, turns and counts) from the file with the conversation.
    fn ensure_session(
        &mut self,
        file_id: i64,
        home: usize,
        meta: &Meta,
    ) -> rusqlite::Result<Option<i64>> {
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
            return Ok(Some(id));
        }
        if meta.messages == 0 {
            let holder: Option<String> = self
                .conn
                .prepare_cached(
                    "SELECT f.path FROM lib_sessions s JOIN lib_files f ON f.id = s.file_id
                     WHERE s.session_key = ?1 AND s.file_id != ?2 AND s.source_gone = 0",
                )?
                .query_row(params![key, file_id], |r| r.get(0))
                .optional()?;
            if holder.is_some_and(|p| Path::new(&p).exists()) {
                return Ok(None);
            }
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
            .map(Some)
    }

    /// Writes what one read of a file found: into its session when it holds one, and
    /// where the file was read to.
    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        file_id: i64,
        session_id: Option<i64>,
        home: usize,
        meta: &Meta,
        batch: &mut Batch,
        consumed: u64,
        st: Stat,
        head: i64,
        error: Option<String>,
    ) -> Result<(), LibraryError> {
        match session_id {
            Some(sid) => self.write_session(sid, home, meta, batch)?,
            None => *batch = Batch::default(),
        }
        let status = if error.is_some() { "error" } else { "ok" };
        self.conn
            .prepare_cached(
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

    /// A read's excerpts, turns and usage into its session, and the session's row.
    /// The row's token totals are summed from the hourly rollup (a few hundred rows for
    /// the largest session), not its usage events (35,000 of them: 26 ms of every
    /// appended line went to that sum).
    fn write_session(
        &mut self,
        session_id: i64,
        home: usize,
        meta: &Meta,
        batch: &mut Batch,
    ) -> Result<(), LibraryError> {
        let c = &self.conn;
        {
            let mut doc = c.prepare_cached(
                "INSERT INTO lib_docs (session_id, turn, off, at, kind, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for d in batch.docs.drain(..) {
                doc.execute(params![
                    session_id,
                    d.turn,
                    d.off as i64,
                    d.at,
                    d.kind.as_str(),
                    d.text
                ])?;
                self.words_due.push((c.last_insert_rowid(), d.text));
            }
            self.vocabulary.add(std::mem::take(&mut batch.words));
            let mut turn = c.prepare_cached(
                "INSERT OR REPLACE INTO lib_turns (session_id, n, off, at) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for t in batch.turns.drain(..) {
                turn.execute(params![session_id, t.n, t.off as i64, t.at])?;
            }
            insert_usage(c, session_id, &mut batch.usage)?;
        }
        batch.text_bytes = 0;
        let (title, title_src) = meta.title();
        let h = &self.homes[home];
        let parent_key = meta
            .parent
            .as_ref()
            .map(|p| format!("{}:{p}", h.agent.id()));
        // Two statements: as one (`UPDATE … FROM (SELECT SUM …)`) SQLite compiled it
        // again at every run.
        let (i, o, r, w): (i64, i64, i64, i64) = c
            .prepare_cached(
                "SELECT COALESCE(SUM(input), 0), COALESCE(SUM(output), 0), COALESCE(SUM(cache_read), 0),
                        COALESCE(SUM(cache_write), 0)
                 FROM lib_usage_hourly WHERE session_id = ?1",
            )?
            .query_row([session_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
        c.prepare_cached(
            "UPDATE lib_sessions SET workdir = ?2, git_branch = ?3, title = ?4, title_src = ?5, model = ?6,
                 parent_key = ?7, relation = ?8, created_at = ?9, updated_at = ?10, messages = ?11,
                 turns = ?12, source_gone = 0,
                 input_tokens = ?13, output_tokens = ?14, cache_read_tokens = ?15, cache_write_tokens = ?16
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
            meta.turns,
            i,
            o,
            r,
            w
        ])?;
        Ok(())
    }

    /// Session titles agents keep apart from their files (Codex's thread names) onto
    /// their sessions.
    pub(crate) fn load_names(&mut self) -> Result<(), LibraryError> {
        let homes: Vec<Home> = self.homes.clone();
        for h in homes {
            let Some(file) = h.agent.sessions().names_file(&h.root) else {
                continue;
            };
            let Some(st) = stat(&file) else { continue };
            if self.names_seen.get(&file) == Some(&st.mtime_ns) {
                continue;
            }
            self.names_seen.insert(file.clone(), st.mtime_ns);
            let names: HashMap<String, String> =
                h.agent.sessions().read_names(&file).into_iter().collect();
            self.begin()?;
            let mut stmt = self.conn.prepare_cached(
                "UPDATE lib_sessions SET index_title = ?2 WHERE session_key = ?1",
            )?;
            for (id, name) in names {
                stmt.execute(params![format!("{}:{id}", h.agent.id()), name])?;
            }
        }
        Ok(())
    }
}

/// The most rows of usage in one statement: a statement with a savepoint (for the
/// rollup's trigger) journals every page it touches, so a statement per event was a
/// third of a cold index. A batch goes in chunks of powers of two (256, 128, … 1), so
/// nine statements, each compiled once, serve every size (a statement of the exact
/// size, compiled per batch, cost more than the rows).
const USAGE_ROWS: usize = 256;

/// A batch's usage events into `lib_usage`, in as few statements as the chunks allow.
fn insert_usage(
    conn: &Connection,
    session_id: i64,
    events: &mut Vec<crate::model::UsageEvent>,
) -> rusqlite::Result<()> {
    let mut rest = &events[..];
    while !rest.is_empty() {
        let n = USAGE_ROWS.min(1 << rest.len().ilog2());
        let (chunk, after) = rest.split_at(n);
        rest = after;
        let mut stmt = conn.prepare_cached(&USAGE_SQL[n.ilog2() as usize])?;
        let mut i = 0;
        for u in chunk {
            let values: [&dyn rusqlite::ToSql; 9] = [
                &u.key,
                &session_id,
                &u.at,
                &u.model,
                &(u.input as i64),
                &(u.output as i64),
                &(u.cache_read as i64),
                &(u.cache_write as i64),
                &(u.reasoning as i64),
            ];
            for v in values {
                i += 1;
                stmt.raw_bind_parameter(i, v)?;
            }
        }
        stmt.raw_execute()?;
    }
    events.clear();
    Ok(())
}

/// The usage statement for 1, 2, 4 … `USAGE_ROWS` rows.
static USAGE_SQL: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    (0..=USAGE_ROWS.ilog2())
        .map(|k| usage_sql(1 << k))
        .collect()
});

fn usage_sql(rows: usize) -> String {
    let mut sql = String::from(
        "INSERT INTO lib_usage (key, session_id, at, model, input, output, cache_read, cache_write, reasoning) VALUES ",
    );
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        sql.push_str("(?,?,?,?,?,?,?,?,?)");
    }
    sql.push_str(
        " ON CONFLICT (key) DO UPDATE SET input = excluded.input, output = excluded.output,
             cache_read = excluded.cache_read, cache_write = excluded.cache_write,
             reasoning = excluded.reasoning, model = excluded.model
         WHERE excluded.input + excluded.output + excluded.cache_read + excluded.cache_write
             > lib_usage.input + lib_usage.output + lib_usage.cache_read + lib_usage.cache_write",
    );
    sql
}

/// True when `path` is no link itself and, its links resolved, lies under `root` (a
/// missing file counts as inside: it is gone, not elsewhere). The watcher reports
/// paths as they are named; the sweep never follows a link.
fn resolves_inside(root: &Path, path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => return false,
        Ok(_) => {}
        Err(_) => return true,
    }
    match (std::fs::canonicalize(root), std::fs::canonicalize(path)) {
        (Ok(root), Ok(path)) => path.starts_with(root),
        _ => true,
    }
}
