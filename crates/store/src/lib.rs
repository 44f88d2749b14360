//! Weft's session store on SQLite: sessions, turns, every driver event, and a full-text
//! index over prompts and replies.
//!
//! # Design
//!
//! Streaming must never wait on disk: a driver event is persisted while the session's
//! runner holds its lock. So every write ([`SqliteStore::upsert_session`],
//! [`SqliteStore::begin_turn`], [`SqliteStore::append_event`],
//! [`SqliteStore::finish_turn`]) is serialized to JSON on the caller's thread and sent
//! over a channel to **one** writer thread that owns the write connection. The writer
//! takes whatever is queued (up to [`BATCH_OPS`] operations) and applies it in one
//! transaction, so a burst of 10,000 tokens costs a handful of commits, not 10,000. An
//! agent that streams slower than the writer commits would still get a commit per
//! token, so a batch of streamed events within [`LINGER`] of the last commit waits out
//! the rest of it for more (anything else commits at once).
//! Order is the channel's order: a turn's events land in the order they were appended.
//!
//! Reads use a second connection. Each read first [`SqliteStore::flush`]es — it waits
//! until everything queued before it is committed — so a read sees every write made
//! before it, even though writes return before they reach the disk. SQLite runs in WAL
//! mode, so the reader never blocks the writer and vice versa.
//!
//! # Durability and recovery
//!
//! A turn is `running` from `begin_turn` until `finish_turn`. Dropping the store drains
//! the queue and joins the writer, so a dropped store has written everything it was
//! given. A process that dies mid-turn leaves the turn `running` with every event that
//! reached a commit; the next [`SqliteStore::open`] rebuilds it from those events with
//! the same [`weft_protocol::Accumulator`] that built it live, and marks it
//! `incomplete` (see [`INTERRUPTED_ERROR`]). With `synchronous = NORMAL` a commit
//! survives the process dying; only a power cut can lose the last few commits.
//!
//! # Hazards
//!
//! - Several Weft processes may share a database (the app and the CLI): each running
//!   turn records its owner process, and recovery leaves alone a turn whose owner is
//!   still alive (see `owner.rs`).
//! - Only what callers pass in is stored. Nothing here reads the environment, so a
//!   secret reaches the database only if a caller puts it into a record or an event.
//! - A stored row that no longer parses (a corrupt or hand-edited JSON value) is skipped
//!   with a warning, never a panic: one bad row must not hide a session's other turns.
//! - Schema changes are versioned with `PRAGMA user_version` (see [`schema`]); a
//!   database from a newer Weft is refused rather than misread.
#![deny(missing_docs)]

pub mod accounts;
mod fts;
mod owner;
mod reads;
mod recovery;
pub mod schema;
mod store;
mod writer;

use std::path::PathBuf;

pub use store::SqliteStore;
pub use writer::{BATCH_OPS, LINGER};

/// The `error` of a turn that was still running when Weft stopped, as rebuilt on open.
pub const INTERRUPTED_ERROR: &str = "interrupted: Weft stopped before this turn finished";

/// The notice added to a turn rebuilt on open.
pub const INTERRUPTED_NOTICE: &str =
    "Weft stopped during this turn; everything received until then was kept";

/// Marks where a search term starts inside a [`SearchHit::snippet`].
pub const SNIPPET_OPEN: &str = "«";
/// Marks where a search term ends inside a [`SearchHit::snippet`].
pub const SNIPPET_CLOSE: &str = "»";

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite said no.
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A stored value did not parse.
    #[error("stored data: {0}")]
    Json(#[from] serde_json::Error),
    /// The folder or file could not be made or opened.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The writer thread is gone.
    #[error("the store's writer has stopped")]
    WriterGone,
    /// The folder that should hold the database could not be created.
    #[error("cannot create the folder {} for the session store: {source}", path.display())]
    CreateDir {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The database file could not be opened, configured or migrated.
    #[error("cannot open the session store {}: {source}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// Why.
        source: rusqlite::Error,
    },
    /// The database was written by a newer Weft, with a schema this one does not know.
    #[error(
        "the session store {} has schema version {found}, newer than this Weft knows ({known})",
        path.display()
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// Writes queued earlier failed (the writer logged each one); reported by
    /// [`SqliteStore::flush`].
    #[error("the store could not write: {0}")]
    Write(String),
}

pub use weft_protocol::SearchHit;
pub use weft_protocol::{AskedInteraction, SessionRecord};

/// How an interaction ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InteractionOutcome {
    /// `answered`, `cancelled` or `expired`.
    pub outcome: String,
    /// What the answer was, or why it expired.
    pub detail: Option<String>,
    /// Who gave it (a surface), when someone did.
    pub by: Option<String>,
}

/// The outcome recorded for an interaction whose agent process was gone when the
/// service started again.
pub const AGENT_GONE: &str = "the agent process ended";

/// The events one `events` row holds, in order: a row is one event (a JSON object) or,
/// since the writer joins a turn's consecutive events within a transaction, a JSON array
/// of them numbered from the row's `n` on. An event that does not parse is its error.
pub fn row_events(json: &str) -> Vec<Result<weft_protocol::DriverEvent, String>> {
    if !json.trim_start().starts_with('[') {
        return vec![serde_json::from_str(json).map_err(|e| e.to_string())];
    }
    match serde_json::from_str::<Vec<serde_json::Value>>(json) {
        Ok(items) => items
            .into_iter()
            .map(|v| serde_json::from_value(v).map_err(|e| e.to_string()))
            .collect(),
        Err(e) => vec![Err(e.to_string())],
    }
}

/// SQL for how many events the `events` rows selected hold (see [`row_events`]).
pub const EVENT_COUNT_SQL: &str =
    "COALESCE(SUM(CASE WHEN substr(event, 1, 1) = '[' THEN json_array_length(event) ELSE 1 END), 0)";

/// Milliseconds since the epoch (0 if the clock is before it).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
