//! Every driver Weft ships, for the surfaces (CLI, desktop app) to register with the
//! kernel. Drivers whose binary is missing are still listed: `info()` says so, and a
//! turn sent to them fails with a clear error.

use std::sync::Arc;

use weft_kernel::AgentDriver;

/// All drivers, the default (echo) first.
pub fn all() -> Vec<Arc<dyn AgentDriver>> {
    vec![
        Arc::new(weft_echo::EchoDriver::new()),
        Arc::new(weft_claude::ClaudeDriver::new()),
    ]
}
