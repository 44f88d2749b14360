//! What Weft knows about an ACP agent, as data: an [`AcpSpec`] says how to start it,
//! its [`AgentSpec`] what the rest of Weft needs (accounts of named variables, MCP
//! servers in `session/new`).

use std::path::Path;

use weft_agent_spec::spec::{AccountForm, AgentSpec, Can, Install, McpForm};
use weft_protocol::Capabilities;

use crate::config::{self, AcpSpec};

/// The spec of the ACP agent `acp`.
pub fn spec_of(acp: &AcpSpec) -> AgentSpec {
    let mut spec = AgentSpec::new(&acp.id, &acp.name);
    spec.install = acp.package.clone().map(|package| Install {
        command: acp.command.clone(),
        package,
        version: String::new(),
        offered: acp.offer_install,
        repair: None,
    });
    spec.accounts = AccountForm::Env;
    spec.mcp = McpForm::Acp;
    spec.skills_form = acp.skills_form.clone();
    spec.can = Can {
        capabilities: Capabilities {
            steer: false,
            interact: true,
            resume: acp.load_session,
            tui: false,
        },
        attachments: true,
        fork_at_turn: false,
        undo: false,
    };
    spec
}

/// The specs of every ACP agent: the presets, then the user's from
/// `<state_dir>/agents.json` (read now, so one added there is known at once).
pub fn specs(state_dir: &Path) -> Vec<AgentSpec> {
    let mut all = config::presets();
    if let Ok(user) = config::user_agents(state_dir) {
        for u in user {
            all.retain(|s| s.id != u.id);
            all.push(u);
        }
    }
    all.iter().map(spec_of).collect()
}
