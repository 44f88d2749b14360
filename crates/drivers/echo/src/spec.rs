//! What Weft knows about the built-in echo agent, as data: no install, no accounts.

use weft_agent_spec::spec::{AgentSpec, Can};
use weft_protocol::Capabilities;

/// The echo agent's spec.
pub fn spec() -> AgentSpec {
    let mut spec = AgentSpec::new("echo", "Echo (built-in)");
    spec.can = Can {
        capabilities: Capabilities {
            steer: true,
            interact: true,
            resume: true,
            tui: true,
        },
        ..Can::default()
    };
    spec
}
