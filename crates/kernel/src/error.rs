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
