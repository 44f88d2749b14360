//! What a spawn gets before its driver runs: the folder's trust decision, the
//! account's environment and arguments, the plugins' servers, prompt and files. One
//! path for a turn and for a process started ahead of its turn, so the two ask for the
//! same process and the driver can hand the ready one to the turn.

use std::any::Any;

use crate::driver::AgentTurnInput;
use crate::env::KernelEnv;

use super::{workspace_trusted, SessionRunner, Task};

/// What must live as long as the spawn's turn (or its warm process).
pub(crate) type Held = Vec<Box<dyn Any + Send + Sync>>;

/// Fills `input` for `agent`'s spawn. An error fails the turn before any process starts.
pub(crate) async fn spawn_input(
    env: &KernelEnv,
    agent: &str,
    input: &mut AgentTurnInput,
) -> Result<Held, String> {
    input.workspace_trusted = workspace_trusted(input).await;
    // Resolved outside the state lock and on a blocking thread: it may ask the OS
    // secret store or run the account's secret command for seconds.
    let accounts = env.accounts.clone();
    let asked = input.clone();
    let spawn = tokio::task::spawn_blocking(move || accounts.resolve(&asked))
        .await
        .unwrap_or_else(|e| Err(format!("resolving the account failed: {e}")))?;
    input.env = spawn.env;
    input.extra_args.extend(spawn.extra_args);
    input.isolated = spawn.isolated;
    let is_first = input.session_id.is_none();
    env.plugins.apply(agent, input, is_first)
}

impl SessionRunner {
    /// The input the session's next turn would start its process with (an empty
    /// prompt), for starting that process ahead. `None` while a turn runs or is queued,
    /// or when the next turn starts afresh from a handover (its process is new anyway).
    pub(crate) fn warm_input(
        &self,
        client_env: Option<std::sync::Arc<weft_protocol::ClientEnv>>,
    ) -> Option<AgentTurnInput> {
        let shared = &self.shared;
        let st = shared.state.lock();
        if st.worker_active || st.running.is_some() || !st.queue.is_empty() {
            return None;
        }
        if st.handover.is_some() && st.record.session_id.is_none() {
            return None;
        }
        let task = Task {
            task_id: format!("warm-{}", uuid::Uuid::new_v4()),
            prompt: String::new(),
            model: None,
            effort: None,
            attachments: Vec::new(),
            steer: false,
            terminal: false,
            client_env,
            account: None,
            pack: None,
        };
        Some(shared.input_for(&st, &task))
    }

    /// The agent the session runs on now.
    pub(crate) fn agent_driver(&self) -> std::sync::Arc<dyn crate::driver::AgentDriver> {
        self.shared.driver()
    }
}
