//! The agents Weft can install (`weft agents install NAME`, the app's Agents view):
//! where each one's binary was found, or every place looked.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// An npm-distributed agent CLI Weft installs into `$WEFT_HOME/agents`. Answered to
/// [`crate::ClientRequest::ListAgentInstalls`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentInstall {
    /// The command (`claude`, `codex`, `gemini`, `claude-agent-acp`).
    pub name: String,
    /// The agent Weft runs with it (`claude`, `codex`, `gemini`, `claude-acp`).
    pub agent: String,
    /// Its npm package.
    pub package: String,
    /// The version Weft is tested with (what an install puts in place).
    pub tested_version: String,
    /// The binary the daemon would run, when found.
    pub path: Option<String>,
    /// Its version, when found (from its npm package, else its `--version`).
    pub version: Option<String>,
    /// True when `path` is the one Weft installed (`$WEFT_HOME/agents`).
    pub managed: bool,
    /// Where the daemon looked, when it was not found.
    pub problem: Option<String>,
    /// The folder an install goes to.
    pub install_dir: Option<String>,
}
