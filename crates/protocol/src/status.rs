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
    /// Agent processes started ahead of their turn that no turn has taken yet.
    #[serde(default)]
    pub warm: Vec<WarmProcess>,
    /// The chat surfaces it runs and restarts (`weft-matrix run`), configured or not.
    #[serde(default)]
    pub surfaces: Vec<SurfaceStatus>,
}

/// A surface the daemon supervises: a client program of its own (`weft-matrix run`),
/// started while it is configured and restarted with backoff when it fails.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceStatus {
    /// `matrix`.
    pub name: String,
    /// Its process is running.
    pub running: bool,
    /// That process.
    pub pid: Option<u32>,
    /// Started after a failure since the daemon started.
    pub restarts: u32,
    /// Why it last failed (its exit status and the last line it wrote), if it did.
    pub last_error: Option<String>,
    /// When its process started (ms since the epoch).
    #[ts(type = "number | null")]
    pub since: Option<i64>,
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

/// An agent process started ahead of its turn (the warm pool).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WarmProcess {
    /// The agent.
    pub agent: String,
    /// The folder it works in.
    pub workdir: String,
    /// The account it runs on (none: the agent's own login).
    pub account: Option<String>,
    /// The session it waits for: an existing one, or the key a new one will get.
    pub session_key: String,
    /// Its resident memory with its children's, in bytes.
    #[ts(type = "number")]
    pub rss_bytes: u64,
    /// Started (ms since the epoch).
    #[ts(type = "number")]
    pub since: i64,
}

/// Start an agent's process ahead of a turn: for a new session in `workdir` (when
/// `sessionKey` is absent) or for an existing session whose process was closed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct PrewarmRequest {
    /// The session to get ready; absent: a new session's.
    pub session_key: Option<String>,
    /// The new session's agent (default: the daemon's default agent).
    pub agent: Option<String>,
    /// The new session's folder.
    pub workdir: Option<String>,
    /// The new session's model.
    pub model: Option<String>,
    /// The new session's effort.
    pub effort: Option<String>,
    /// The new session's account.
    pub account: Option<String>,
}

/// Reply to [`PrewarmRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Prewarmed {
    /// A process was started (its pid).
    pub pid: Option<u32>,
    /// Why none was, for the curious (`weft agents warm`); clients need not show it.
    pub reason: Option<String>,
}

/// One of a supervised surface's account commands (`weft matrix login`, `allow`,
/// `deny`, `status`, `logout`), run by the daemon for a client on its own socket: the
/// window's Settings → Chat.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceCommandRequest {
    /// `matrix`.
    pub name: String,
    /// The command and its arguments, as after `weft matrix` (`["status", "--json"]`).
    pub args: Vec<String>,
    /// What the command reads on stdin (`login`'s password or access token).
    #[serde(default)]
    #[ts(optional)]
    pub stdin: Option<crate::SecretText>,
}

/// What a surface's command printed, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceOutput {
    /// Its exit code (0: done).
    pub code: i32,
    /// What it printed (`status --json`: the JSON).
    pub stdout: String,
    /// Its errors.
    pub stderr: String,
}
