//! What a session runs without: a lasting state of the session, not a notice of one
//! turn. A surface shows it (the session's header) until the condition clears.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A capability the session's agent has but this session runs without, and why.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Degraded {
    /// What is missing, one of the names in [`capability`] (`context`, `prompts`,
    /// `sandbox`) or `mcp:<server>` for an MCP server that did not start.
    pub capability: String,
    /// Why, in words for the user.
    pub reason: String,
}

/// The capability names drivers and the kernel use.
pub mod capability {
    /// The agent's memory of the conversation: its session could not be reloaded.
    pub const CONTEXT: &str = "context";
    /// Permission prompts and questions: the turn runs headless.
    pub const PROMPTS: &str = "prompts";
    /// The OS sandbox around the agent's commands (Weft's own agent).
    pub const SANDBOX: &str = "sandbox";
    /// Checkpoints of the session's files around each turn (restore, the turn's diff).
    pub const CHECKPOINTS: &str = "checkpoints";
    /// Prefix of an MCP server's entry (`mcp:<name>`).
    pub const MCP_PREFIX: &str = "mcp:";
}

/// Sets (`reason` given) or clears (`None`) `capability` in `list`; true when it
/// changed.
pub fn set(list: &mut Vec<Degraded>, capability: &str, reason: Option<&str>) -> bool {
    let at = list.iter().position(|d| d.capability == capability);
    match (at, reason) {
        (Some(i), Some(r)) if list[i].reason == r => false,
        (Some(i), Some(r)) => {
            list[i].reason = r.to_string();
            true
        }
        (None, Some(r)) => {
            list.push(Degraded {
                capability: capability.to_string(),
                reason: r.to_string(),
            });
            true
        }
        (Some(i), None) => {
            list.remove(i);
            true
        }
        (None, None) => false,
    }
}
