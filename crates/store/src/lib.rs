//! Weft's session store on SQLite. (Being written: see the record types below.)

use serde::{Deserialize, Serialize};
use weft_protocol::{Phase, SessionInfo};

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
}

/// A session as stored.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SessionRecord {
    /// `agent:id`.
    pub session_key: String,
    /// Agent id.
    pub agent: String,
    /// The agent's own session id, once known.
    pub session_id: Option<String>,
    /// Workspace folder (absolute).
    pub workdir: String,
    /// Title: the first prompt, shortened.
    pub title: String,
    /// Model last asked for.
    pub model: Option<String>,
    /// Effort last asked for.
    pub effort: Option<String>,
    /// Created (ms since the epoch).
    pub created_at: i64,
    /// Last changed (ms since the epoch).
    pub updated_at: i64,
}

impl SessionRecord {
    /// The record as listed, with its latest turn's phase and its turn count.
    pub fn info(&self, phase: Phase, turns: u32) -> SessionInfo {
        SessionInfo {
            session_key: self.session_key.clone(),
            agent: self.agent.clone(),
            session_id: self.session_id.clone(),
            title: self.title.clone(),
            workdir: self.workdir.clone(),
            model: self.model.clone(),
            phase,
            turns,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}
