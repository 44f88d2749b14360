//! The read model of sessions, as a port: what every list and per-turn search shows,
//! and the one writer of the user's marks and of adoption. The daemon wires the session
//! library in (it applies a title the user gave, pins, archive and delete, and knows the
//! agents' own sessions to adopt); without it the store is read as it is.

use std::sync::Arc;

use weft_protocol::{SearchHit, SessionAction, SessionInfo};

use crate::error::IndexError;
use crate::ports::SessionStore;

/// Sessions as the surfaces see them. Calls may wait on the disk: the kernel makes them
/// off its async workers.
pub trait SessionIndex: Send + Sync {
    /// Weft's sessions (in `workdir` when given) in the order lists show them: pinned
    /// first, then newest first; archived ones only with `archived`.
    fn list_sessions(
        &self,
        workdir: Option<&str>,
        archived: bool,
    ) -> Result<Vec<SessionInfo>, IndexError>;
    /// Finished turns whose prompt or reply match `query`, best first, at most `limit`.
    fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, IndexError>;
    /// Makes the agent's own session `session_key` one of Weft's, on the same agent
    /// session id (what Continue does). `Ok(false)`: not an agent's session it knows,
    /// or already Weft's.
    fn adopt(&self, session_key: &str) -> Result<bool, IndexError>;
    /// Renames, pins, archives or deletes a session's record.
    fn manage(&self, session_key: &str, action: &SessionAction) -> Result<(), IndexError>;
}

/// The store read as it is: no marks, nothing to adopt.
pub(crate) struct StoreIndex(pub(crate) Arc<dyn SessionStore>);

impl SessionIndex for StoreIndex {
    fn list_sessions(
        &self,
        workdir: Option<&str>,
        _archived: bool,
    ) -> Result<Vec<SessionInfo>, IndexError> {
        Ok(self.0.list_sessions(workdir)?)
    }

    fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, IndexError> {
        Ok(self.0.search(query, limit)?)
    }

    fn adopt(&self, _session_key: &str) -> Result<bool, IndexError> {
        Ok(false)
    }

    fn manage(&self, _session_key: &str, _action: &SessionAction) -> Result<(), IndexError> {
        Err(IndexError::Invalid(
            "sessions are renamed, pinned, archived and deleted in the session library, which is off here"
                .into(),
        ))
    }
}
