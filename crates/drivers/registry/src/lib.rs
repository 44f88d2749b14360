//! Every driver Weft ships, for the surfaces (CLI, desktop app) to register with the
//! kernel. Drivers whose binary is missing are still listed: `info()` says so, and a
//! turn sent to them fails with a clear error.

use std::sync::Arc;

mod acp_agents;
mod mcp;
mod skills;
mod specs;
pub use acp_agents::AcpAgents;
pub use mcp::{McpPlugin, SecretLookup};
pub use skills::{claude_dir as skills_dir_for_claude, SkillsPlugin};
pub use specs::{built_in, pinned, specs, specs_in};

use weft_agent_spec::spec::AgentSpec;
use weft_kernel::{AgentDriver, DriverSource};

/// The reader of an agent's own session files.
type Sessions = Arc<dyn weft_agent_spec::sessions::NativeSessions>;

/// A built-in agent: its driver, its spec, and its reader of its own session files
/// when it keeps any.
type Agent = (
    fn() -> Arc<dyn AgentDriver>,
    fn() -> AgentSpec,
    Option<fn() -> Sessions>,
);

/// Every built-in (non-ACP) agent, the default (echo) first: adding one is its crate
/// and one line here (docs/adding-an-agent.md).
const AGENTS: &[Agent] = &[
    (
        || Arc::new(weft_echo::EchoDriver::new()),
        weft_echo::spec::spec,
        None,
    ),
    (
        || Arc::new(weft_claude::ClaudeDriver::new()),
        weft_claude::spec::spec,
        Some(|| Arc::new(weft_claude::native_sessions::ClaudeSessions)),
    ),
    (
        || Arc::new(weft_codex::CodexDriver::new()),
        weft_codex::spec::spec,
        Some(|| Arc::new(weft_codex::native_sessions::CodexSessions)),
    ),
    (
        || Arc::new(weft_gemini::GeminiDriver::new()),
        weft_gemini::spec::spec,
        Some(|| Arc::new(weft_gemini::native_sessions::GeminiSessions)),
    ),
    (
        || Arc::new(weft_native::NativeDriver::new()),
        weft_native::spec::spec,
        None,
    ),
];

/// The built-in (non-ACP) drivers, the default (echo) first.
pub fn built_in_drivers() -> Vec<Arc<dyn AgentDriver>> {
    AGENTS.iter().map(|(driver, _, _)| driver()).collect()
}

/// The ACP agents (the presets: hermes, kimi, claude-acp, gemini-acp; and the user's
/// own from `<state_dir>/agents.json`) as a source the kernel looks at again, so one
/// added to the file needs no restart.
pub fn acp_agents(state_dir: &std::path::Path) -> AcpAgents {
    let taken = AGENTS.iter().map(|(_, spec, _)| spec().id).collect();
    AcpAgents::new(state_dir, taken)
}

/// All drivers as they are now, the default (echo) first: the built-in ones, then the
/// ACP agents of the global state folder.
pub fn all() -> Vec<Arc<dyn AgentDriver>> {
    let mut drivers = built_in_drivers();
    drivers.extend(
        acp_agents(&weft_kernel::state::global_state_dir())
            .changed()
            .unwrap_or_default(),
    );
    drivers
}

/// Every agent's reader of its own session files, for the session library (the
/// daemon hands them to it; the library never imports a driver).
pub fn native_sessions() -> Vec<Sessions> {
    AGENTS
        .iter()
        .filter_map(|(_, _, sessions)| sessions.map(|s| s()))
        .collect()
}
