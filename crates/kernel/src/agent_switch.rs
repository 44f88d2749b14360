//! The `switchAgent` verb: an idle session moves to another agent without a prompt
//! (the app's switch control). The next prompt runs on the new agent, which starts
//! from the handover; until then the snapshot's `recordedAgent` names it beside the
//! agent that ran the last turn.

use crate::error::KernelError;
use crate::hub::Loom;
use crate::io::Caller;

impl Loom {
    /// Moves the idle session `session_key` to `agent`. Refused (busy) while a turn
    /// runs or waits, and for an agent Weft does not have; nothing changes then.
    pub async fn switch_agent_as(
        &self,
        _caller: &Caller,
        session_key: &str,
        agent: &str,
    ) -> Result<(), KernelError> {
        let runner = self.runner(session_key).await?;
        let driver = self.driver(agent)?;
        if runner.is_busy() {
            // Checked before reading the history, and again under the runner's lock.
            return Err(KernelError::Busy(format!(
                "a turn is running or queued in this session: it can move from {} to {agent} only between turns (nothing was interrupted)",
                runner.record().agent
            )));
        }
        let key = session_key.to_string();
        let history = self.blocking(move |store| store.history(&key)).await?;
        runner.switch_agent(driver, &history)
    }
}
