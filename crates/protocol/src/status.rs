//! What the daemon reports of itself: `weft daemon status`, the app's Agents view.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The daemon as `weft daemon status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStatus {
    /// Its process id.
    pub pid: u32,
    /// Its version.
    pub version: String,
    /// Its `WEFT_HOME`.
    pub home: String,
    /// Its Unix socket.
    pub socket: String,
    /// Started (ms since the epoch).
    #[ts(type = "number")]
    pub started_at: i64,
    /// WebSocket addresses it listens on.
    pub listening: Vec<String>,
    /// Connected clients, by surface.
    pub clients: BTreeMap<String, u32>,
    /// Sessions with a turn running or queued.
    pub busy_sessions: u32,
    /// Agent terminals open.
    pub terminals: u32,
    /// Interactions waiting for an answer.
    pub pending: u32,
    /// Seconds it stays up once nothing needs it.
    #[ts(type = "number")]
    pub idle_secs: u64,
    /// How Weft's own agent confines its shell commands, as probed once at the
    /// daemon's start; none while that probe is still running.
    #[serde(default)]
    pub sandbox: Option<SandboxStatus>,
}

/// The OS sandbox Weft's own agent runs shell commands in (`weft sandbox --probe`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SandboxStatus {
    /// `bwrap`, `landlock` or `unavailable` (then every command that is not provably
    /// read-only asks first).
    pub mechanism: String,
    /// What was tried and what works, for the user.
    pub details: String,
}
