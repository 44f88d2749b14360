//! The one writer thread: applies queued writes in order, in batched transactions.
//!
//! Each batch is one `BEGIN IMMEDIATE … COMMIT` around whatever was queued when the
//! writer woke, up to [`BATCH_OPS`] operations. Consecutive events of one turn within a
//! batch are one row: its `event` a JSON array of them, numbered from the row's `n` on
//! (a lone event stays a plain object). A streamed turn is mostly such runs of text
//! deltas, and a row per delta capped the whole path at the B-tree's insert rate
//! (~200 k rows/s on a loaded 2-core machine); every event is still kept, in order. Flush requests inside a batch are
//! answered after its commit, so an answered flush means "everything sent before me is
//! on disk". The turns a batch finished are indexed for search in a transaction of
//! their own right after it (`fts.rs`): the barrier callbacks (what the transports wait
//! on before they show patches) run at the batch's commit, before that, and flushes
//! after it, so an answered flush still means "searchable".
//!
//! A failed write is logged at once and the writer keeps going: the operations after it
//! are still worth keeping. Who is told: a turn's end asks whether *that turn's* writes
//! were kept ([`Take::Turn`]: its start, events, questions, its session's record while it
//! ran, its end, and the commits of the batches that held them), and [`Take::All`] hands
//! over the first failure of any write since the last such flush. A failure was once
//! only the latter, and the next turn to end reported it: a full disk failed a write
//! made after one turn had ended (its session's record), and once space came back the
//! next turn, all of whose writes were kept, ended with "database or disk is full".

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension};

use crate::{fts, SessionRecord};

/// The most operations the writer applies in one transaction. Large enough that a burst
/// of streamed tokens costs few commits, small enough that a flush behind a huge queue is
/// answered in steps and the WAL does not balloon.
pub const BATCH_OPS: usize = 4096;

/// A write, prepared (serialized) on the caller's thread.
pub(crate) enum Op {
    Session(Box<SessionRecord>),
    Begin {
        session_key: String,
        task_id: String,
        prompt: String,
        text: String,
        snapshot: String,
        started_at: i64,
        at: i64,
    },
    Event {
        task_id: String,
        at: i64,
        event: String,
    },
    Finish {
        task_id: String,
        prompt: String,
        text: String,
        snapshot: String,
        incomplete: bool,
        at: i64,
    },
    /// A question or permission was asked.
    AskInteraction {
        prompt_id: String,
        session_key: String,
        task_id: String,
        interaction: String,
        created_at: i64,
        expires_at: Option<i64>,
    },
    /// Its outcome.
    ResolveInteraction {
        prompt_id: String,
        outcome: String,
        detail: Option<String>,
        by: Option<String>,
        at: i64,
    },
    /// A process group was started (`start`) or has ended.
    Process {
        pid: u32,
        start_ticks: u64,
        start: bool,
    },
    /// Answered once everything before it is committed, with the failure `take` asks
    /// for (which is then cleared).
    Flush {
        done: Sender<Option<String>>,
        take: Take,
    },
    /// Called once everything before it is committed (failures left for a flush): the
    /// barrier an async caller waits on without holding a thread (see
    /// [`crate::SqliteStore::when_committed`]).
    Committed(Box<dyn FnOnce() + Send>),
    /// Commit what is queued, then stop.
    Shutdown,
}

/// Which write failure a [`Op::Flush`] hands over.
pub(crate) enum Take {
    /// None: the flush is only a barrier.
    Nothing,
    /// The first failure of any write since the last flush that took it.
    All,
    /// The first failure of a write of this turn (by task id).
    Turn(String),
}

struct Writer {
    conn: Connection,
    /// Next event number of each turn begun or appended to since the writer started.
    next_event: HashMap<String, i64>,
    /// The first failure not yet reported to a flush of [`Take::All`].
    error: Option<String>,
    /// The first failure of each turn's writes, until its end's flush takes it.
    turn_errors: HashMap<String, String>,
    /// The turn running in each session (begun, not finished), by session key: a
    /// failed write of the session's record is that turn's.
    running: HashMap<String, String>,
    /// Turns with a write in the batch under way: a failed commit is theirs.
    batch_turns: HashSet<String>,
    /// Consecutive events of one turn not yet inserted (one row at the next other
    /// operation or the commit).
    run: Option<Run>,
    /// Turns this batch finished, to index once it is committed: `(turns.id, prompt,
    /// final text)`.
    due: Vec<(i64, String, String)>,
}

/// Events of one turn, numbered `first` on, to be inserted as one row.
struct Run {
    task_id: String,
    first: i64,
    at: i64,
    events: Vec<String>,
}

/// Runs until [`Op::Shutdown`] or until every sender is gone; everything received is
/// applied before it returns.
pub(crate) fn run(conn: Connection, ops: Receiver<Op>) {
    let mut writer = Writer {
        conn,
        next_event: HashMap::new(),
        error: None,
        turn_errors: HashMap::new(),
        running: HashMap::new(),
        batch_turns: HashSet::new(),
        run: None,
        due: Vec::new(),
    };
    let mut flushes: Vec<(Sender<Option<String>>, Take)> = Vec::new();
    let mut committed: Vec<Box<dyn FnOnce() + Send>> = Vec::new();
    let mut gathered: VecDeque<Op> = VecDeque::new();
    let mut last_commit: Option<Instant> = None;
    while let Ok(first) = ops.recv() {
        gathered.push_back(first);
        gather(&ops, &mut gathered, last_commit);
        writer.end_stale_transaction();
        let in_tx = match writer.conn.execute_batch("BEGIN IMMEDIATE") {
            Ok(()) => true,
            Err(e) => {
                // Still apply the batch, one autocommit statement at a time.
                writer.fail(format!("begin a batch: {e}"));
                false
            }
        };
        let mut stop = false;
        let mut next = gathered.pop_front();
        let mut applied = 0;
        while let Some(op) = next.take() {
            match op {
                Op::Flush { done, take } => flushes.push((done, take)),
                Op::Committed(then) => committed.push(then),
                Op::Shutdown => stop = true,
                op => writer.apply(op),
            }
            applied += 1;
            if stop || applied >= BATCH_OPS {
                break;
            }
            // Empty or disconnected: either way this batch is complete.
            next = gathered.pop_front().or_else(|| ops.try_recv().ok());
        }
        // Without a transaction too: the run's events are inserted (autocommit).
        writer.end_run();
        if in_tx && !writer.commit() {
            // Their marks were rolled back with them.
            writer.due.clear();
        }
        writer.batch_turns.clear();
        last_commit = Some(Instant::now());
        for then in committed.drain(..) {
            then();
        }
        writer.index_due();
        for (done, take) in flushes.drain(..) {
            let error = match take {
                Take::Nothing => None,
                Take::All => writer.error.take(),
                Take::Turn(task_id) => writer.turn_errors.remove(&task_id),
            };
            // The asker may have given up waiting; nothing to do then.
            let _ = done.send(error);
        }
        if stop {
            return;
        }
    }
}

/// How long after a commit a batch of streamed events waits for more before it commits.
/// An agent streams a line per token, each a few tens of microseconds apart: committed
/// one by one, every token cost a transaction (SQLite's locks and a WAL frame) and woke
/// every client's forwarder and the client itself, which at 20,000 tokens made a
/// `weft run` a third slower than the agent alone. Waiting this long gathers a burst into
/// one commit (and one merged patch on the wire); a token reaches a client at most this
/// much later.
pub const LINGER: Duration = Duration::from_millis(2);

/// A batch that already holds this many operations commits without waiting.
const LINGER_OPS: usize = 64;

/// Gathers what arrives for a batch of streamed events (`gathered` holds the first)
/// that follows the last commit by less than [`LINGER`]: the writer sleeps out the rest
/// of it unless [`LINGER_OPS`] are already queued or anything else is (a flush, a turn
/// begun or finished, a question, a process: queued, those commit at once as before;
/// one that arrives during the sleep waits out the rest of it). It sleeps rather than
/// waiting on the channel, which would wake it for every token. A batch after a pause
/// (the first event of a burst) waits for nothing. What is gathered stays in order
/// ahead of what is still in the channel.
fn gather(ops: &Receiver<Op>, gathered: &mut VecDeque<Op>, last_commit: Option<Instant>) {
    let Some(until) = last_commit.map(|t| t + LINGER) else {
        return;
    };
    while gathered.back().is_some_and(streamed) && gathered.len() < LINGER_OPS {
        match ops.try_recv() {
            Ok(op) => gathered.push_back(op),
            Err(_) => {
                let left = until.saturating_duration_since(Instant::now());
                if !left.is_zero() {
                    std::thread::sleep(left);
                }
                return;
            }
        }
    }
}

/// Whether an operation is part of a streamed turn and may wait for the rest of its
/// burst: an event, or a barrier a forwarder waits on before it sends patches.
fn streamed(op: &Op) -> bool {
    matches!(op, Op::Event { .. } | Op::Committed(_))
}

impl Writer {
    fn fail(&mut self, message: String) {
        tracing::error!("session store: {message}");
        self.error.get_or_insert(message);
    }

    /// A write of turn `task_id` failed: its end will say so.
    fn fail_turn(&mut self, task_id: &str, message: String) {
        self.turn_errors
            .entry(task_id.to_string())
            .or_insert_with(|| message.clone());
        self.fail(message);
    }

    /// Notes that the batch under way writes for `task_id`.
    fn touch(&mut self, task_id: &str) {
        if !self.batch_turns.contains(task_id) {
            self.batch_turns.insert(task_id.to_string());
        }
    }

    /// Rolls back a transaction a failure left open (a `ROLLBACK` that failed too):
    /// the next `BEGIN` would fail and every later write would go into it, never
    /// committed.
    fn end_stale_transaction(&mut self) {
        if self.conn.is_autocommit() {
            return;
        }
        tracing::warn!("session store: a transaction was left open; rolling it back");
        if let Err(e) = self.conn.execute_batch("ROLLBACK") {
            tracing::error!("session store: roll back a transaction left open: {e}");
        }
    }

    /// The batch's writes were rolled back: each turn with a write in it failed, and
    /// numbers its next events after what the database holds (not after rows that were
    /// never committed).
    fn batch_lost(&mut self, message: String) {
        let turns: Vec<String> = self.batch_turns.drain().collect();
        for task_id in &turns {
            self.next_event.remove(task_id);
            self.turn_errors
                .entry(task_id.clone())
                .or_insert_with(|| message.clone());
        }
        self.fail(message);
    }

    /// Commits the batch; false when it was rolled back.
    fn commit(&mut self) -> bool {
        self.end_run();
        if self.conn.is_autocommit() {
            // SQLite rolled the transaction back on its own (disk full, I/O error).
            self.batch_lost("a batch of writes was rolled back by SQLite".into());
            return false;
        }
        if let Err(e) = self.conn.execute_batch("COMMIT") {
            self.batch_lost(format!("commit a batch: {e}"));
            if let Err(e) = self.conn.execute_batch("ROLLBACK") {
                tracing::error!("session store: roll back a failed batch: {e}");
            }
            return false;
        }
        true
    }

    /// Indexes the turns the last batch finished, in one transaction. A failure is only
    /// logged: the turns stay marked, and the next open indexes them.
    fn index_due(&mut self) {
        if self.due.is_empty() {
            return;
        }
        let due = std::mem::take(&mut self.due);
        let result = self.conn.execute_batch("BEGIN IMMEDIATE").and_then(|()| {
            for (id, prompt, text) in &due {
                fts::index_due(&self.conn, *id, prompt, text)?;
            }
            self.conn.execute_batch("COMMIT")
        });
        if let Err(e) = result {
            tracing::error!(
                turns = due.len(),
                "session store: index finished turns (left for the next start): {e}"
            );
            if !self.conn.is_autocommit() {
                let _ = self.conn.execute_batch("ROLLBACK");
            }
        }
    }

    fn apply(&mut self, op: Op) {
        if let Op::Event { task_id, at, event } = op {
            self.append(task_id, at, event);
            return;
        }
        self.end_run();
        // The turn a failure is charged to, besides the flush of everything.
        let mut turn: Option<String> = None;
        let (what, result) = match op {
            Op::Session(record) => {
                turn = self.running.get(&record.session_key).cloned();
                ("upsert a session", upsert_session(&self.conn, &record))
            }
            Op::Begin {
                session_key,
                task_id,
                prompt,
                text,
                snapshot,
                started_at,
                at,
            } => {
                let result = begin_turn(
                    &self.conn,
                    &session_key,
                    &task_id,
                    &prompt,
                    &text,
                    &snapshot,
                    started_at,
                    at,
                );
                // A turn begun again starts over: what failed before is moot.
                self.turn_errors.remove(&task_id);
                self.running.insert(session_key, task_id.clone());
                if result.is_ok() {
                    self.next_event.insert(task_id.clone(), 0);
                }
                turn = Some(task_id);
                ("begin a turn", result)
            }
            Op::Event { .. } => return,
            Op::Finish {
                task_id,
                prompt,
                text,
                snapshot,
                incomplete,
                at,
            } => {
                self.next_event.remove(&task_id);
                self.running.retain(|_, running| *running != task_id);
                let result = finish_turn(&self.conn, &task_id, &prompt, &snapshot, incomplete, at);
                let result = match result {
                    Ok(Some(id)) => {
                        self.due.push((id, prompt, text));
                        Ok(())
                    }
                    Ok(None) => Ok(()),
                    Err(e) => Err(e),
                };
                turn = Some(task_id);
                ("finish a turn", result)
            }
            Op::AskInteraction {
                prompt_id,
                session_key,
                task_id,
                interaction,
                created_at,
                expires_at,
            } => {
                let result = self
                    .conn
                    .prepare_cached(
                        "INSERT OR REPLACE INTO interactions
                             (prompt_id, session_key, task_id, interaction, created_at, expires_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    )
                    .and_then(|mut st| {
                        st.execute(params![
                            prompt_id,
                            session_key,
                            task_id,
                            interaction,
                            created_at,
                            expires_at
                        ])
                    })
                    .map(drop);
                turn = Some(task_id);
                ("record an interaction", result)
            }
            Op::ResolveInteraction {
                prompt_id,
                outcome,
                detail,
                by,
                at,
            } => (
                "record an interaction's outcome",
                self.conn
                    .prepare_cached(
                        "UPDATE interactions SET outcome = ?2, detail = ?3, outcome_by = ?4,
                             outcome_at = ?5 WHERE prompt_id = ?1 AND outcome IS NULL",
                    )
                    .and_then(|mut st| st.execute(params![prompt_id, outcome, detail, by, at]))
                    .map(drop),
            ),
            Op::Process {
                pid,
                start_ticks,
                start,
            } => {
                let ticks = i64::try_from(start_ticks).unwrap_or(i64::MAX);
                let result = if start {
                    self.conn
                        .prepare_cached(
                            "INSERT OR REPLACE INTO agent_processes (pid, start_ticks, started_at)
                             VALUES (?1, ?2, ?3)",
                        )
                        .and_then(|mut st| st.execute(params![pid, ticks, crate::now_ms()]))
                } else {
                    self.conn
                        .prepare_cached("DELETE FROM agent_processes WHERE pid = ?1")
                        .and_then(|mut st| st.execute(params![pid]))
                };
                ("record an agent process", result.map(drop))
            }
            Op::Flush { .. } | Op::Committed(_) | Op::Shutdown => return,
        };
        if let Some(task_id) = &turn {
            self.touch(task_id);
        }
        if let Err(e) = result {
            match turn {
                Some(task_id) => self.fail_turn(&task_id, format!("{what}: {e}")),
                None => self.fail(format!("{what}: {e}")),
            }
        }
    }

    /// Numbers `event` and adds it to the current run (ending the run first when it is
    /// another turn's).
    fn append(&mut self, task_id: String, at: i64, event: String) {
        if let Some(run) = self.run.as_mut().filter(|r| r.task_id == task_id) {
            run.events.push(event);
            run.at = at;
            return;
        }
        self.end_run();
        // Once per run, not per event: every run ends in the batch it began in.
        self.touch(&task_id);
        let n = match self.next_event.get(&task_id) {
            Some(&n) => n,
            None => match self.stored_next(&task_id) {
                Ok(n) => n,
                Err(e) => {
                    self.fail_turn(&task_id, format!("append an event: {e}"));
                    return;
                }
            },
        };
        self.run = Some(Run {
            task_id,
            first: n,
            at,
            events: vec![event],
        });
    }

    /// The number of a turn's next event after what the database holds: for a turn
    /// begun before this writer started (or never begun), or whose last batch was
    /// rolled back.
    fn stored_next(&self, task_id: &str) -> rusqlite::Result<i64> {
        let known: bool = self
            .conn
            .prepare_cached("SELECT 1 FROM turns WHERE task_id = ?1")?
            .query_row([task_id], |_| Ok(true))
            .optional()?
            .unwrap_or(false);
        if !known {
            tracing::warn!(task_id, "session store: event for a turn never begun; kept");
        }
        Ok(self
            .conn
            .prepare_cached(
                "SELECT n + CASE WHEN substr(event, 1, 1) = '[' THEN json_array_length(event) ELSE 1 END
                 FROM events WHERE task_id = ?1 ORDER BY n DESC LIMIT 1",
            )?
            .query_row([task_id], |r| r.get(0))
            .optional()?
            .unwrap_or(0))
    }

    /// Inserts the current run as one row.
    fn end_run(&mut self) {
        let Some(run) = self.run.take() else {
            return;
        };
        let count = run.events.len() as i64;
        let event = if run.events.len() == 1 {
            run.events.into_iter().next().unwrap_or_default()
        } else {
            let mut joined =
                String::with_capacity(run.events.iter().map(|e| e.len() + 1).sum::<usize>() + 1);
            joined.push('[');
            for (i, e) in run.events.iter().enumerate() {
                if i > 0 {
                    joined.push(',');
                }
                joined.push_str(e);
            }
            joined.push(']');
            joined
        };
        let result = self
            .conn
            .prepare_cached("INSERT INTO events (task_id, n, at, event) VALUES (?1, ?2, ?3, ?4)")
            .and_then(|mut st| st.execute(params![run.task_id, run.first, run.at, event]));
        match result {
            Ok(_) => {
                self.next_event.insert(run.task_id, run.first + count);
            }
            Err(e) => self.fail_turn(&run.task_id, format!("append {count} events: {e}")),
        }
    }
}

fn upsert_session(conn: &Connection, r: &SessionRecord) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO sessions
             (session_key, agent, session_id, workdir, title, model, effort, created_at, updated_at, account, fork, switch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
         ON CONFLICT (session_key) DO UPDATE SET
             agent = excluded.agent, session_id = excluded.session_id,
             workdir = excluded.workdir, title = excluded.title, model = excluded.model,
             effort = excluded.effort, created_at = excluded.created_at,
             updated_at = excluded.updated_at, account = excluded.account, fork = excluded.fork,
             switch = excluded.switch",
    )?
    .execute(params![
        r.session_key,
        r.agent,
        r.session_id,
        r.workdir,
        r.title,
        r.model,
        r.effort,
        r.created_at,
        r.updated_at,
        r.account,
        r.fork.as_ref().and_then(|f| serde_json::to_string(f).ok()),
        r.switch.as_ref().and_then(|s| serde_json::to_string(s).ok())
    ])?;
    Ok(())
}

/// Inserts the turn as `running`. Beginning a task id again restarts that turn: its
/// start snapshot is replaced and its old events dropped, so a rebuild after a crash
/// does not fold the first attempt's events into the second.
#[allow(clippy::too_many_arguments)]
fn begin_turn(
    conn: &Connection,
    session_key: &str,
    task_id: &str,
    prompt: &str,
    text: &str,
    snapshot: &str,
    started_at: i64,
    at: i64,
) -> rusqlite::Result<()> {
    let existing: Option<(i64, String, i64)> = conn
        .prepare_cached("SELECT id, session_key, n FROM turns WHERE task_id = ?1")?
        .query_row([task_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let n = match &existing {
        Some((_, key, n)) if key == session_key => *n,
        _ => conn
            .prepare_cached("SELECT COALESCE(MAX(n), 0) + 1 FROM turns WHERE session_key = ?1")?
            .query_row([session_key], |r| r.get(0))?,
    };
    let id = match existing {
        Some((id, _, _)) => {
            conn.prepare_cached(
                "UPDATE turns SET session_key = ?2, n = ?3, prompt = ?4, status = 'running',
                     snapshot = ?5, started_at = ?6, updated_at = ?7, owner = ?8 WHERE id = ?1",
            )?
            .execute(params![
                id,
                session_key,
                n,
                prompt,
                snapshot,
                started_at,
                at,
                crate::owner::current()
            ])?;
            conn.prepare_cached("DELETE FROM events WHERE task_id = ?1")?
                .execute([task_id])?;
            id
        }
        None => {
            conn.prepare_cached(
                "INSERT INTO turns
                     (task_id, session_key, n, prompt, status, snapshot, started_at, updated_at, owner)
                 VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                task_id,
                session_key,
                n,
                prompt,
                snapshot,
                started_at,
                at,
                crate::owner::current()
            ])?;
            conn.last_insert_rowid()
        }
    };
    fts::index_turn(conn, id, prompt, text)
}

/// Records the turn's end and marks it for the index; its `turns.id`, or `None` when it
/// was never begun.
fn finish_turn(
    conn: &Connection,
    task_id: &str,
    prompt: &str,
    snapshot: &str,
    incomplete: bool,
    at: i64,
) -> rusqlite::Result<Option<i64>> {
    let status = if incomplete { "incomplete" } else { "done" };
    let id: Option<i64> = conn
        .prepare_cached(
            "UPDATE turns SET prompt = ?2, status = ?3, snapshot = ?4, updated_at = ?5
             WHERE task_id = ?1 RETURNING id",
        )?
        .query_row(params![task_id, prompt, status, snapshot, at], |r| r.get(0))
        .optional()?;
    match id {
        Some(id) => {
            fts::mark_due(conn, id)?;
            Ok(Some(id))
        }
        None => {
            // Without begin_turn there is no session to file the turn under.
            tracing::warn!(
                task_id,
                "session store: finish_turn for a turn never begun; dropped"
            );
            Ok(None)
        }
    }
}
