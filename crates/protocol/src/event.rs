//! What drivers say: one agent's output, normalized.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::LimitWindow;
use crate::command::SlashCommand;
use crate::snapshot::{Artifact, Plan, SubAgent, ToolCall, Usage};

/// One normalized piece of an agent's output. Drivers emit these; the kernel folds them
/// into the session's snapshot ([`crate::Accumulator`]) and persists them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum DriverEvent {
    /// The agent's own session id is known (and, when reported, the model it runs).
    Session {
        /// The agent's session id, what resume uses.
        session_id: String,
        /// The model the agent reports it is running.
        model: Option<String>,
    },
    /// A piece of the reply.
    Text {
        /// Appended to `text`.
        delta: String,
    },
    /// A piece of visible reasoning.
    Reasoning {
        /// Appended to `reasoning`.
        delta: String,
    },
    /// A tool call started or changed; upserted by `call.id`.
    Tool {
        /// The call's whole current state.
        call: ToolCall,
    },
    /// The plan, replaced as a whole.
    Plan {
        /// The new plan.
        plan: Plan,
    },
    /// A subagent started or changed; upserted by `agent.id`.
    Subagent {
        /// The subagent's whole current state.
        agent: SubAgent,
    },
    /// Usage so far, replaced as a whole.
    Usage {
        /// The new figures.
        usage: Usage,
    },
    /// A file or link the agent produced; appended.
    Artifact {
        /// The artifact.
        artifact: Artifact,
    },
    /// A transient status line from the driver ("compacting", "waiting for background
    /// task"); an empty string clears it. Shown after the derived tool lines.
    Activity {
        /// The status line.
        text: String,
    },
    /// A lasting note about the turn (a steer injected, output recovered from disk).
    Notice {
        /// The note.
        text: String,
    },
    /// How one MCP server of the agent is doing; upserted by `server.name`.
    Mcp {
        /// The server's whole current state.
        server: crate::McpServerStatus,
    },
    /// A usage-limit window of the account the turn runs on, as the agent reported it
    /// (Claude's `rate_limit_event`); folded into the account. A window that is used up
    /// (`rejected`) is noted in the snapshot.
    Limit {
        /// The window.
        limit: LimitWindow,
    },
    /// The slash commands the agent accepts in this session, replaced as a whole.
    Commands {
        /// Every command, in the agent's order.
        commands: Vec<SlashCommand>,
    },
    /// The session runs without `capability` (a reason given), or has it again (none):
    /// see `UniversalSnapshot::degraded`.
    Degraded {
        /// What (`context`, `prompts`, `sandbox`, `mcp:<server>`).
        capability: String,
        /// Why; none clears it.
        reason: Option<String>,
    },
}
