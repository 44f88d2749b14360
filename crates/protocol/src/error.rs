//! Error codes on the wire. Surfaces branch on the code, never on the message text.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What kind of failure a verb met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The request itself is malformed (missing prompt, bad action, …).
    BadRequest,
    /// No driver is registered under that agent id.
    UnknownAgent,
    /// No session has that key.
    UnknownSession,
    /// The workdir does not exist or is not a directory.
    BadWorkdir,
    /// The interaction id is not pending in that session.
    NotPending,
    /// The agent's binary is missing or will not start.
    AgentUnavailable,
    /// The account cannot run this agent's turns (unknown, another agent's, its secret
    /// gone, …): the message says which and why.
    Account,
    /// A plugin (MCP servers, skills) could not prepare the turn: the message says why.
    Plugin,
    /// The session is busy in a way that rules the verb out (a turn is running while
    /// its terminal is asked for; the terminal is open while stop is asked for).
    Busy,
    /// The persistent store failed.
    Storage,
    /// The verb would do something the user must confirm first (an account switch the
    /// agent's own session cannot follow): the message says what; see
    /// `ClientRequest::SwitchAccount`.
    NeedsConfirmation,
    /// The connection may not do this (no token, or a token without the scope).
    Forbidden,
    /// Anything else; a bug.
    Internal,
}

/// An error as it travels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WireError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// A sentence for a person.
    pub message: String,
}

impl WireError {
    /// Builds an error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WireError {}
