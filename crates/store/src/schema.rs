//! The schema, as a list of migrations applied in order.
//!
//! `PRAGMA user_version` holds how many of [`MIGRATIONS`] a database has had. Opening
//! applies the missing ones, each in its own transaction together with the version bump,
//! so a crash mid-migration leaves the database at the previous version, never between.
//! Migrations are append-only: never edit one that has shipped; add the next.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::StoreError;

/// How long a statement waits for a lock held by another connection before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The migrations, in order; migration `i` takes the database to version `i + 1`.
///
/// - `sessions`: one row per session, exactly the [`crate::SessionRecord`] given.
/// - `turns`: one row per turn. `id` is an explicit `INTEGER PRIMARY KEY` (so it is the
///   full-text index's stable rowid, which `VACUUM` would not renumber); `task_id` is the
///   unique key callers use. `n` numbers the turns of a session from 1. `snapshot` is the
///   `UniversalSnapshot` JSON: the start snapshot while `running`, the final one after.
/// - `events`: every `DriverEvent` of a turn, JSON, numbered from 0 in arrival order,
///   with the time it was appended (so a rebuilt turn gets a true `updatedAt`). A row
///   may hold a run of consecutive events as a JSON array, numbered from its `n` on
///   (`crate::row_events`); `at` is then its last event's.
/// - `turns_fts`: FTS5 over each turn's prompt and final text, rowid = `turns.id`.
/// - (2) `turns.owner`: the process (`pid:start`) running a turn, so another process
///   opening the store leaves a live turn alone (see `owner.rs`).
/// - (3) `interactions`: every question or permission an agent asked, written when it
///   is asked, kept with its outcome (`answered`, `cancelled`, `expired`), who gave it
///   and when; a row without an outcome is pending. `agent_processes`: the process
///   groups the kernel service started (leader pid and its start time in clock ticks),
///   so the next start can end what a crashed one left.
/// - (accounts) `sessions.account`: the account a session's turns run on. `accounts`:
///   one row per account, its public record as `AccountInfo` JSON (never a secret: those
///   live in the OS secret store). `account_usage`: tokens and cost per account per UTC
///   day.
/// - (library) `lib_files`, `lib_sessions`, `lib_turns`, `lib_docs`, `lib_fts`,
///   `lib_usage`, `lib_marks`: the session library's index of every agent's own
///   sessions (see the `weft-library` crate). `lib_fts` (trigram) also holds each
///   managed turn under rowid `-turns.id`, kept by triggers, so one query searches both.
/// - (library) the triggers again, reading a turn's text only from a snapshot that is
///   valid JSON: a corrupt row must not make the store's writes fail.
/// - (library) native excerpts move out of the trigram index: their text into
///   `lib_docs.text`, their words into `lib_words` (FTS5 `unicode61`, contentless, `_`
///   a word character), each distinct word once into `lib_terms` with a trigram index
///   over the words (`lib_terms_fts`) so a substring finds the words holding it.
///   `lib_fts` (trigram) keeps managed turns only.
/// - (library) `lib_usage_hourly`: the usage events rolled up per session, UTC hour and
///   model (calls, tokens, first and last call), kept by triggers on `lib_usage`, so a
///   dashboard sums hours, not every model call.
/// - (fork) `sessions.fork`: where a forked session forks from (`ForkOrigin` JSON), which
///   its agent's first turn asks the agent for.
/// - (index after the finish) `lib_fts` rows of managed turns are written with
///   `turns_fts`'s (`fts::index_turn`) instead of by triggers, which parsed a turn's
///   whole snapshot JSON twice inside the transaction that finished it; `fts_pending`:
///   turns finished but not yet indexed with their final text (see `fts.rs`).
/// - (switch) `sessions.switch`: a change of agent no turn has confirmed yet
///   (`PendingSwitch` JSON), so taking it back after a restart restores the old agent's
///   session, model, effort, account and fork exactly.
pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE sessions (
    session_key TEXT PRIMARY KEY NOT NULL,
    agent       TEXT NOT NULL,
    session_id  TEXT,
    workdir     TEXT NOT NULL,
    title       TEXT NOT NULL,
    model       TEXT,
    effort      TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX sessions_by_update ON sessions (updated_at);
CREATE INDEX sessions_by_workdir ON sessions (workdir, updated_at);

CREATE TABLE turns (
    id          INTEGER PRIMARY KEY,
    task_id     TEXT NOT NULL UNIQUE,
    session_key TEXT NOT NULL,
    n           INTEGER NOT NULL,
    prompt      TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('running', 'done', 'incomplete')),
    snapshot    TEXT NOT NULL,
    started_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX turns_by_session ON turns (session_key, n);
CREATE INDEX turns_running ON turns (status) WHERE status = 'running';

CREATE TABLE events (
    task_id TEXT NOT NULL,
    n       INTEGER NOT NULL,
    at      INTEGER NOT NULL,
    event   TEXT NOT NULL,
    PRIMARY KEY (task_id, n)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE turns_fts USING fts5 (prompt, text, tokenize = 'unicode61');
"#,
    r#"
ALTER TABLE turns ADD COLUMN owner TEXT;
"#,
    r#"
CREATE TABLE interactions (
    prompt_id   TEXT PRIMARY KEY NOT NULL,
    session_key TEXT NOT NULL,
    task_id     TEXT NOT NULL,
    interaction TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER,
    outcome     TEXT,
    detail      TEXT,
    outcome_by  TEXT,
    outcome_at  INTEGER
);
CREATE INDEX interactions_pending ON interactions (task_id) WHERE outcome IS NULL;

CREATE TABLE agent_processes (
    pid         INTEGER NOT NULL,
    start_ticks INTEGER NOT NULL,
    started_at  INTEGER NOT NULL,
    PRIMARY KEY (pid, start_ticks)
) WITHOUT ROWID;
"#,
    r#"
ALTER TABLE sessions ADD COLUMN account TEXT;

CREATE TABLE accounts (
    id          TEXT PRIMARY KEY NOT NULL,
    agent       TEXT NOT NULL,
    kind        TEXT NOT NULL,
    label       TEXT NOT NULL,
    record      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE account_usage (
    account_id         TEXT NOT NULL,
    day                TEXT NOT NULL,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL NOT NULL DEFAULT 0,
    unpriced_turns     INTEGER NOT NULL DEFAULT 0,
    turns              INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day)
) WITHOUT ROWID;
"#,
    r#"
CREATE TABLE lib_files (
    id          INTEGER PRIMARY KEY,
    agent       TEXT NOT NULL,
    home        TEXT NOT NULL,
    path        TEXT NOT NULL UNIQUE,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    inode       INTEGER NOT NULL,
    head        INTEGER NOT NULL,
    indexed_off INTEGER NOT NULL,
    meta        TEXT NOT NULL,
    status      TEXT NOT NULL,
    error       TEXT
);

CREATE TABLE lib_sessions (
    id                 INTEGER PRIMARY KEY,
    session_key        TEXT NOT NULL UNIQUE,
    agent              TEXT NOT NULL,
    native_id          TEXT NOT NULL,
    file_id            INTEGER,
    home               TEXT NOT NULL,
    account            TEXT,
    workdir            TEXT,
    git_branch         TEXT,
    title              TEXT NOT NULL,
    title_src          TEXT NOT NULL,
    index_title        TEXT,
    model              TEXT,
    parent_key         TEXT,
    relation           TEXT,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    messages           INTEGER NOT NULL,
    turns              INTEGER NOT NULL,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    source_gone        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX lib_sessions_by_update ON lib_sessions (updated_at);
CREATE INDEX lib_sessions_by_workdir ON lib_sessions (workdir, updated_at);
CREATE INDEX lib_sessions_by_file ON lib_sessions (file_id);
CREATE INDEX lib_sessions_by_native ON lib_sessions (agent, native_id);
CREATE INDEX sessions_by_native ON sessions (agent, session_id);

CREATE TABLE lib_turns (
    session_id INTEGER NOT NULL,
    n          INTEGER NOT NULL,
    off        INTEGER NOT NULL,
    at         INTEGER NOT NULL,
    PRIMARY KEY (session_id, n)
) WITHOUT ROWID;

CREATE TABLE lib_docs (
    id         INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL,
    turn       INTEGER NOT NULL,
    off        INTEGER NOT NULL,
    at         INTEGER NOT NULL,
    kind       TEXT NOT NULL
);
CREATE INDEX lib_docs_by_session ON lib_docs (session_id);

CREATE VIRTUAL TABLE lib_fts USING fts5 (text, tokenize = 'trigram');

CREATE TABLE lib_usage (
    key         TEXT PRIMARY KEY NOT NULL,
    session_id  INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    model       TEXT NOT NULL,
    input       INTEGER NOT NULL,
    output      INTEGER NOT NULL,
    cache_read  INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    reasoning   INTEGER NOT NULL
);
CREATE INDEX lib_usage_by_session ON lib_usage (session_id);
CREATE INDEX lib_usage_by_time ON lib_usage (at);

CREATE TABLE lib_marks (
    session_key TEXT PRIMARY KEY NOT NULL,
    title       TEXT,
    archived    INTEGER NOT NULL DEFAULT 0,
    pinned      INTEGER NOT NULL DEFAULT 0,
    hidden      INTEGER NOT NULL DEFAULT 0,
    parent_key  TEXT
);

CREATE TRIGGER lib_turns_insert AFTER INSERT ON turns BEGIN
    INSERT INTO lib_fts (rowid, text) VALUES (-new.id,
        new.prompt || char(10) || substr(COALESCE(json_extract(new.snapshot, '$.text'), ''), 1, 65536));
END;
CREATE TRIGGER lib_turns_update AFTER UPDATE OF prompt, snapshot ON turns BEGIN
    DELETE FROM lib_fts WHERE rowid = -old.id;
    INSERT INTO lib_fts (rowid, text) VALUES (-new.id,
        new.prompt || char(10) || substr(COALESCE(json_extract(new.snapshot, '$.text'), ''), 1, 65536));
END;
CREATE TRIGGER lib_turns_delete AFTER DELETE ON turns BEGIN
    DELETE FROM lib_fts WHERE rowid = -old.id;
END;
INSERT INTO lib_fts (rowid, text)
    SELECT -id, prompt || char(10) || substr(COALESCE(
        CASE WHEN json_valid(snapshot) THEN json_extract(snapshot, '$.text') END, ''), 1, 65536)
    FROM turns;
"#,
    r#"
DROP TRIGGER lib_turns_insert;
DROP TRIGGER lib_turns_update;
CREATE TRIGGER lib_turns_insert AFTER INSERT ON turns BEGIN
    INSERT INTO lib_fts (rowid, text) VALUES (-new.id, new.prompt || char(10) || substr(COALESCE(
        CASE WHEN json_valid(new.snapshot) THEN json_extract(new.snapshot, '$.text') END, ''), 1, 65536));
END;
CREATE TRIGGER lib_turns_update AFTER UPDATE OF prompt, snapshot ON turns BEGIN
    DELETE FROM lib_fts WHERE rowid = -old.id;
    INSERT INTO lib_fts (rowid, text) VALUES (-new.id, new.prompt || char(10) || substr(COALESCE(
        CASE WHEN json_valid(new.snapshot) THEN json_extract(new.snapshot, '$.text') END, ''), 1, 65536));
END;
"#,
    r#"
ALTER TABLE lib_docs ADD COLUMN text TEXT NOT NULL DEFAULT '';
UPDATE lib_docs SET text = COALESCE((SELECT f.text FROM lib_fts f WHERE f.rowid = lib_docs.id), '');
CREATE VIRTUAL TABLE lib_words USING fts5 (text, content = '', contentless_delete = 1,
    tokenize = "unicode61 tokenchars '_'");
INSERT INTO lib_words (rowid, text) SELECT id, text FROM lib_docs;
CREATE TABLE lib_terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
CREATE VIRTUAL TABLE lib_terms_fts USING fts5 (term, content = 'lib_terms', content_rowid = 'id',
    tokenize = 'trigram');
CREATE VIRTUAL TABLE temp.lib_words_vocab USING fts5vocab (main, lib_words, row);
INSERT OR IGNORE INTO lib_terms (term) SELECT term FROM temp.lib_words_vocab WHERE length(term) <= 48;
DROP TABLE temp.lib_words_vocab;
INSERT INTO lib_terms_fts (lib_terms_fts) VALUES ('rebuild');
DROP TABLE lib_fts;
CREATE VIRTUAL TABLE lib_fts USING fts5 (text, tokenize = 'trigram');
INSERT INTO lib_fts (rowid, text)
    SELECT -id, prompt || char(10) || substr(COALESCE(
        CASE WHEN json_valid(snapshot) THEN json_extract(snapshot, '$.text') END, ''), 1, 65536)
    FROM turns;
"#,
    r#"
CREATE TABLE lib_usage_hourly (
    session_id  INTEGER NOT NULL,
    hour        INTEGER NOT NULL,
    model       TEXT NOT NULL,
    calls       INTEGER NOT NULL,
    input       INTEGER NOT NULL,
    output      INTEGER NOT NULL,
    cache_read  INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    first_at    INTEGER NOT NULL,
    last_at     INTEGER NOT NULL,
    PRIMARY KEY (session_id, hour, model)
) WITHOUT ROWID;
CREATE INDEX lib_usage_hourly_by_hour ON lib_usage_hourly (hour);
INSERT INTO lib_usage_hourly
    SELECT session_id, at / 3600000, model, COUNT(*), SUM(input), SUM(output), SUM(cache_read),
           SUM(cache_write), MIN(at), MAX(at)
    FROM lib_usage GROUP BY session_id, at / 3600000, model;
CREATE TRIGGER lib_usage_hourly_insert AFTER INSERT ON lib_usage BEGIN
    INSERT INTO lib_usage_hourly VALUES (new.session_id, new.at / 3600000, new.model, 1, new.input,
        new.output, new.cache_read, new.cache_write, new.at, new.at)
    ON CONFLICT (session_id, hour, model) DO UPDATE SET calls = calls + 1,
        input = input + excluded.input, output = output + excluded.output,
        cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
        first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at);
END;
CREATE TRIGGER lib_usage_hourly_delete AFTER DELETE ON lib_usage BEGIN
    UPDATE lib_usage_hourly SET calls = calls - 1, input = input - old.input,
        output = output - old.output, cache_read = cache_read - old.cache_read,
        cache_write = cache_write - old.cache_write
    WHERE session_id = old.session_id AND hour = old.at / 3600000 AND model = old.model;
    DELETE FROM lib_usage_hourly WHERE session_id = old.session_id AND hour = old.at / 3600000
        AND model = old.model AND calls <= 0;
END;
CREATE TRIGGER lib_usage_hourly_update AFTER UPDATE ON lib_usage BEGIN
    UPDATE lib_usage_hourly SET calls = calls - 1, input = input - old.input,
        output = output - old.output, cache_read = cache_read - old.cache_read,
        cache_write = cache_write - old.cache_write
    WHERE session_id = old.session_id AND hour = old.at / 3600000 AND model = old.model;
    DELETE FROM lib_usage_hourly WHERE session_id = old.session_id AND hour = old.at / 3600000
        AND model = old.model AND calls <= 0;
    INSERT INTO lib_usage_hourly VALUES (new.session_id, new.at / 3600000, new.model, 1, new.input,
        new.output, new.cache_read, new.cache_write, new.at, new.at)
    ON CONFLICT (session_id, hour, model) DO UPDATE SET calls = calls + 1,
        input = input + excluded.input, output = output + excluded.output,
        cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
        first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at);
END;
"#,
    r#"
ALTER TABLE sessions ADD COLUMN fork TEXT;
"#,
    r#"
DROP TRIGGER lib_turns_insert;
DROP TRIGGER lib_turns_update;
CREATE TABLE fts_pending (turn_id INTEGER PRIMARY KEY);
"#,
    // When a session was archived (ms): what it left under WEFT_HOME goes 30 days on.
    r#"
ALTER TABLE lib_marks ADD COLUMN archived_at INTEGER;
"#,
    r#"
ALTER TABLE sessions ADD COLUMN switch TEXT;
"#,
];

/// The schema version this build writes: the number of [`MIGRATIONS`].
pub fn current_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Connection settings both connections need: WAL, a busy timeout, and `NORMAL`
/// synchronous (in WAL mode a commit survives the process dying).
pub(crate) fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!("SQLite refused WAL mode (got {mode}); writes will block reads");
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(())
}

/// Brings the database up to [`current_version`]; refuses one from a newer Weft.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(open_err)?;
    let known = current_version();
    if found > known {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            known,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        let version = i as i64 + 1;
        apply_migration(conn, sql, version).map_err(open_err)?;
        tracing::info!(version, "session store migrated");
    }
    Ok(())
}

fn apply_migration(conn: &mut Connection, sql: &str, version: i64) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(sql)?;
    tx.pragma_update(None, "user_version", version)?;
    tx.commit()
}
