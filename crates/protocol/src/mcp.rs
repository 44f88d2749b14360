//! MCP servers and skills as Weft configures them once for every agent: how each
//! server of a session is doing, what `weft mcp list` and `weft skills list` show.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where an MCP server's connection stands, as the session's agent reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum McpState {
    /// Starting (or not reported yet).
    #[default]
    Pending,
    /// Connected: its tools are offered.
    Connected,
    /// Did not start, or needs something (authentication) first: see `error`.
    Failed,
}

/// One MCP server of a session's agent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    /// Its name.
    pub name: String,
    /// Pending, connected or failed.
    pub status: McpState,
    /// Why it failed: the agent's reason, then what the server wrote to stderr
    /// (captured for servers Weft configured).
    pub error: Option<String>,
}

/// A server configured in Weft (`$WEFT_HOME/mcp.json` or `<ws>/.weft/mcp.json`), as
/// `weft mcp list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerInfo {
    /// Its name.
    pub name: String,
    /// `global` or `workspace`.
    pub scope: String,
    /// The file it is configured in.
    pub source: String,
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// The URL of an HTTP server.
    pub url: Option<String>,
    /// The names of its environment variables and headers (never their values).
    pub env_names: Vec<String>,
    /// The secrets it reads from the secret store, by name.
    pub secrets: Vec<String>,
    /// False when the file disables it, or the session given does.
    pub enabled: bool,
}

/// The servers configured in Weft, and the lines for what could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpList {
    /// Every usable server, by name.
    pub servers: Vec<McpServerInfo>,
    /// Why a file or a server was skipped (the file named).
    pub problems: Vec<String>,
}
