//! The kernel's errors, each with its wire code.

use crate::ports::StoreError;
use weft_protocol::{ErrorCode, WireError};

/// Why a verb failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// No driver under that id.
    #[error("unknown agent `{0}`; `weft agents` lists the agents")]
    UnknownAgent(String),
    /// No session under that key.
    #[error("unknown session `{0}`")]
    UnknownSession(String),
    /// The workdir is not a folder.
    #[error("workdir `{path}` {reason}")]
    BadWorkdir {
        /// The path given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The interaction is not pending.
    #[error("no pending interaction `{prompt_id}` in session `{session_key}`")]
    NotPending {
        /// The session.
        session_key: String,
        /// The id given.
        prompt_id: String,
    },
    /// The session's state rules the verb out.
    #[error("{0}")]
    Busy(String),
    /// The agent has no terminal UI.
    #[error("agent `{0}` has no terminal UI")]
    NoTui(String),
    /// The request is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// The Accounts port refused the account.
    #[error("{0}")]
    Account(String),
    /// A plugin could not prepare the spawn.
    #[error("{0}")]
    Plugin(String),
    /// The agent's program (or a terminal's) is missing or would not start.
    #[error("{0}")]
    AgentUnavailable(String),
    /// A bug: a task panicked, a channel closed under us.
    #[error("internal: {0}")]
    Internal(String),
    /// The user must confirm first (an account switch the agent's session cannot
    /// follow); the message says what.
    #[error("{0}")]
    NeedsConfirmation(String),
    /// A skill's or an MCP server's file in Weft's home.
    #[error(transparent)]
    Files(#[from] FilesError),
    /// The session index (the library) refused or failed.
    #[error(transparent)]
    Index(#[from] IndexError),
}

/// The session index's failure: which session, what was wrong with the request, or
/// its storage.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// No session under that key.
    #[error("unknown session `{0}`")]
    Unknown(String),
    /// The request cannot be done (an empty title, no agent file to delete).
    #[error("{0}")]
    Invalid(String),
    /// Its database or files failed.
    #[error("session index: {0}")]
    Storage(String),
}

impl From<crate::ports::StoreError> for IndexError {
    fn from(e: crate::ports::StoreError) -> Self {
        IndexError::Storage(e.0)
    }
}

/// Placing a skill, a session's MCP choices: what the user gave is not usable, or
/// Weft's own files could not be written (which is not the user's request's fault).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilesError {
    /// Not a skill folder, a name that is taken or malformed, no such skill.
    #[error("{0}")]
    Invalid(String),
    /// Reading or writing under Weft's home failed.
    #[error("cannot {doing} {}: {source}", path.display())]
    Io {
        /// What was being done ("write", "copy into", …).
        doing: &'static str,
        /// Where.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl FilesError {
    /// An I/O failure `doing` something at `path`.
    pub fn io(doing: &'static str, path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| FilesError::Io {
            doing,
            path,
            source,
        }
    }

    /// The wire code: the request's fault, or the disk's.
    pub fn code(&self) -> ErrorCode {
        match self {
            FilesError::Invalid(_) => ErrorCode::BadRequest,
            FilesError::Io { .. } => ErrorCode::Storage,
        }
    }
}

impl From<FilesError> for WireError {
    fn from(e: FilesError) -> Self {
        WireError::new(e.code(), e.to_string())
    }
}

impl KernelError {
    /// The wire code a surface branches on.
    pub fn code(&self) -> ErrorCode {
        match self {
            KernelError::UnknownAgent(_) => ErrorCode::UnknownAgent,
            KernelError::UnknownSession(_) => ErrorCode::UnknownSession,
            KernelError::BadWorkdir { .. } => ErrorCode::BadWorkdir,
            KernelError::NotPending { .. } => ErrorCode::NotPending,
            KernelError::BadRequest(_) | KernelError::NoTui(_) => ErrorCode::BadRequest,
            KernelError::Busy(_) => ErrorCode::Busy,
            KernelError::Store(_) => ErrorCode::Storage,
            KernelError::NeedsConfirmation(_) => ErrorCode::NeedsConfirmation,
            KernelError::Account(_) => ErrorCode::Account,
            KernelError::Plugin(_) => ErrorCode::Plugin,
            KernelError::AgentUnavailable(_) => ErrorCode::AgentUnavailable,
            KernelError::Internal(_) => ErrorCode::Internal,
            KernelError::Files(e) => e.code(),
            KernelError::Index(IndexError::Unknown(_)) => ErrorCode::UnknownSession,
            KernelError::Index(IndexError::Invalid(_)) => ErrorCode::BadRequest,
            KernelError::Index(_) => ErrorCode::Storage,
        }
    }

    /// The error as it travels.
    pub fn to_wire(&self) -> WireError {
        WireError::new(self.code(), self.to_string())
    }
}

impl From<KernelError> for WireError {
    fn from(e: KernelError) -> Self {
        e.to_wire()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_the_user_gave_wrong_is_their_request_and_a_failed_write_is_the_disk() {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let not_a_skill = home.path().join("empty");
        std::fs::create_dir_all(&not_a_skill).unwrap_or_else(|e| panic!("{e}"));
        let Err(e) = crate::skills::add(home.path(), &not_a_skill) else {
            panic!("a folder without a SKILL.md was placed as a skill");
        };
        assert_eq!(WireError::from(e).code, ErrorCode::BadRequest);

        // Weft's own file cannot be written: its home is a file, not a folder.
        let blocked = home.path().join("blocked");
        std::fs::write(&blocked, "").unwrap_or_else(|e| panic!("{e}"));
        let Err(e) = crate::skills::set_enabled(&blocked, "tidy", false) else {
            panic!("a skill was turned off in a home that is a file");
        };
        let wire = KernelError::from(e).to_wire();
        assert_eq!(wire.code, ErrorCode::Storage, "{}", wire.message);
        assert!(wire.message.contains("cannot write"), "{}", wire.message);
    }
}
