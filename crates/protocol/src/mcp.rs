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

/// What became of one MCP server or skill an import found in an agent's own files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ImportOutcome {
    /// Added to Weft (on a dry run: would be).
    #[default]
    Added,
    /// Weft already has one of this name: left as it is.
    Exists,
    /// Another agent's of the same name was taken first.
    Duplicate,
    /// Weft cannot express it (`note` says why).
    Unsupported,
    /// Adding it failed (`note` says why); the others were still added.
    Failed,
}

/// One MCP server found in an agent's own configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportedMcpServer {
    /// Its name.
    pub name: String,
    /// The agent whose file it is in (its id).
    pub agent: String,
    /// That file.
    pub source: String,
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// The URL of an HTTP server.
    pub url: Option<String>,
    /// The names of its environment variables and headers (never their values).
    pub env_names: Vec<String>,
    /// Values that looked like secrets, not copied: each is written as
    /// `${secret:NAME}` and is to be set with `weft mcp secret set NAME --stdin`.
    pub secrets: Vec<String>,
    /// Added, or why not.
    pub outcome: ImportOutcome,
    /// Why it was skipped, or what was left out of it.
    pub note: Option<String>,
}

/// One skill folder found among an agent's own skills.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportedSkill {
    /// Its name (its SKILL.md's; the folder's when that has none).
    pub name: String,
    /// The agent whose skills folder it is in (its id).
    pub agent: String,
    /// The folder.
    pub source: String,
    /// Its description.
    pub description: String,
    /// Added, or why not.
    pub outcome: ImportOutcome,
    /// Why it was skipped.
    pub note: Option<String>,
}

/// What `importAgentSetup` found in the agents' own files and did (on a dry run:
/// would do).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentSetupImport {
    /// Nothing was written.
    pub dry_run: bool,
    /// The Weft file the servers go into (`$WEFT_HOME/mcp.json`).
    pub mcp_file: String,
    /// Every server found, in the agents' order.
    pub servers: Vec<ImportedMcpServer>,
    /// Every skill folder found.
    pub skills: Vec<ImportedSkill>,
    /// Files that could not be read or parsed, each named: skipped.
    pub problems: Vec<String>,
}
