//! Slash commands an agent accepts, as a composer offers them on `/`.
//!
//! Each driver reports its agent's own list (Claude's `system/init`, an ACP agent's
//! `available_commands_update`, the command files Claude reads, Codex's and the native
//! agent's built-ins); a prompt that is a bare `/name args` line goes to the agent
//! verbatim and its answer is the agent's, except where a driver runs the command
//! itself (Codex's `/compact`, `/review`, `/status`; the native agent's `/plan`,
//! `/undo`, `/compact`) or explains one the agent cannot take.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a slash command comes from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize, TS,
)]
#[serde(rename_all = "lowercase")]
pub enum CommandSource {
    /// Built into the agent (or one of its bundled skills or plugins).
    #[default]
    Builtin,
    /// The user's own (`~/.claude/commands`).
    User,
    /// The workspace's (`<ws>/.claude/commands`).
    Project,
    /// An MCP server's prompt.
    Mcp,
}

/// One slash command.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct SlashCommand {
    /// Its name, without the leading `/` (`compact`, `frontend:review`).
    pub name: String,
    /// What it does (empty when the agent gives no description).
    pub description: String,
    /// What its arguments look like (`[issue description]`), when the agent says.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub argument_hint: Option<String>,
    /// Where it comes from.
    pub source: CommandSource,
}
