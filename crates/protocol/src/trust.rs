//! Workspace trust on the wire: what a folder's `.weft/` and the agents' project files
//! would grant, and whether the user trusted it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One thing a workspace would let act with the user's authority.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TrustGrant {
    /// The file, relative to the workspace (`.weft/mcp.json`, `.claude/settings.json`).
    pub file: String,
    /// What it is: `allowRule`, `mcpServer`, `hook`, `check`, `permissionMode`,
    /// `setting`, `pack`, `skill`, `worktree`, `agentConfig`, `unreadable`.
    pub kind: String,
    /// What exactly, for the user to judge (a command line, a server, a rule).
    pub detail: String,
}

/// A workspace's trust: what it grants and whether that takes effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceTrust {
    /// True when what the folder grants takes effect: the user trusted exactly these
    /// grants (by their hash), or the folder grants nothing.
    pub trusted: bool,
    /// Everything the folder grants, in a stable order.
    pub grants: Vec<TrustGrant>,
    /// The hash of what it grants (hex SHA-256): trusting names it, so a change made
    /// after the user looked asks again.
    pub hash: String,
    /// The folder, absolute.
    pub workdir: String,
    /// What the decision is kept for: the repository (its every worktree) or, outside
    /// git, the folder.
    pub scope: String,
    /// The user said no to these grants (the app does not ask again until they change).
    pub declined: bool,
}
