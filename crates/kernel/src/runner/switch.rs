//! Changing a session's agent (and account) between turns. The Weft session, its key,
//! history and transcript stay; the new agent starts a new session of its own whose first
//! turn starts from a handover. If it ends that turn without a session, the session goes
//! back to the agent (and the session id, model and account) it ran on before. Picking
//! the old agent again before that turn takes the switch back, exactly. The process of
//! the agent left is closed at the switch: nothing else would close it.

use std::sync::Arc;

use futures::future::{BoxFuture, FutureExt, Shared as SharedFuture};
use weft_protocol::{DriverEvent, PendingSwitch, SessionRecord, UniversalSnapshot};

use super::{handover, SessionRunner, Shared, State};
use crate::driver::{AgentDriver, AgentTurnInput};
use crate::error::KernelError;

/// The close of an agent's process, awaited by whoever needs it done.
pub(super) type Closing = SharedFuture<BoxFuture<'static, ()>>;

/// What the session ran on before a change of agent, to go back to if the new agent
/// does not start.
pub(super) struct Switch {
    driver: Arc<dyn AgentDriver>,
    agent: String,
    session_id: Option<String>,
    model: Option<String>,
    effort: Option<String>,
    account: Option<String>,
    fork: Option<weft_protocol::ForkOrigin>,
}

impl Switch {
    /// A switch the store kept (a daemon restarted since), going back to `driver`.
    pub(super) fn from_saved(saved: PendingSwitch, driver: Arc<dyn AgentDriver>) -> Self {
        Self {
            driver,
            agent: saved.agent,
            session_id: saved.session_id,
            model: saved.model,
            effort: saved.effort,
            account: saved.account,
            fork: saved.fork,
        }
    }

    /// What the store keeps of it, with the handover the new agent starts from.
    fn saved(&self, handover: Option<String>) -> PendingSwitch {
        PendingSwitch {
            agent: self.agent.clone(),
            session_id: self.session_id.clone(),
            model: self.model.clone(),
            effort: self.effort.clone(),
            account: self.account.clone(),
            fork: self.fork.clone(),
            handover,
        }
    }

    /// Puts the session's record back as it was before the switch (agent, its own
    /// session id, model, effort, account and fork); answers that agent's driver.
    fn restore(self, record: &mut SessionRecord) -> Arc<dyn AgentDriver> {
        record.agent = self.agent;
        record.session_id = self.session_id;
        record.model = self.model;
        record.effort = self.effort;
        record.account = self.account;
        record.fork = self.fork;
        self.driver
    }
}

impl SessionRunner {
    /// Moves the idle session to `driver`'s agent: the key, history and transcript stay;
    /// the next turn starts a new session of the new agent with a handover made from
    /// `history` (oldest first). Refused while a turn runs or waits. If the new agent
    /// fails to start, that turn's end puts the session back on the old one; moving back
    /// to it before then restores its session id, model, effort, account and fork.
    pub fn switch_agent(
        &self,
        driver: Arc<dyn AgentDriver>,
        history: &[UniversalSnapshot],
    ) -> Result<(), KernelError> {
        let mut st = self.shared.state.lock();
        if driver.id() == st.record.agent {
            return Ok(());
        }
        if st.running.is_some() || !st.queue.is_empty() {
            return Err(KernelError::Busy(format!(
                "a turn is running or queued in this session: it can move from {} to {} only between turns (nothing was interrupted)",
                st.record.agent,
                driver.id()
            )));
        }
        let old = std::mem::replace(&mut *self.shared.driver.lock(), driver.clone());
        match st.switch.take() {
            // Taking back a switch no turn has confirmed: the session is again exactly
            // what it was, the old agent's own session and account included.
            Some(sw) if sw.agent == driver.id() => {
                sw.restore(&mut st.record);
                st.handover = None;
            }
            // Another agent instead of the pending one: what to go back to is still
            // what the session ran on before the first switch.
            Some(sw) => {
                st.handover = Some(handover::text(
                    &sw.agent,
                    driver.id(),
                    &st.record.workdir,
                    history,
                ));
                st.record.agent = driver.id().to_string();
                st.switch = Some(sw);
            }
            None => {
                let from = st.record.agent.clone();
                st.handover = Some(handover::text(
                    &from,
                    driver.id(),
                    &st.record.workdir,
                    history,
                ));
                st.switch = Some(Switch {
                    driver: old.clone(),
                    agent: from,
                    session_id: st.record.session_id.take(),
                    model: st.record.model.take(),
                    effort: st.record.effort.take(),
                    account: st.record.account.take(),
                    // A fork point is the old agent's: the new one starts from the handover.
                    fork: st.record.fork.take(),
                });
                st.record.agent = driver.id().to_string();
            }
        }
        self.shared.close_left(&mut st, old);
        // Kept with the record, so a restart does not lose what to go back to.
        st.record.switch = st.switch.as_ref().map(|sw| sw.saved(st.handover.clone()));
        self.shared
            .persist("session", self.shared.env.store.upsert_session(&st.record));
        self.shared.show_recorded_agent(&mut st);
        Ok(())
    }

    /// Takes up the pending switch its record kept (the runner is rebuilt from the
    /// store after a restart or an eviction): `left` is the driver of the agent it
    /// goes back to; unknown now, the switch is dropped and the session stays where it is.
    pub fn with_saved_switch(self, left: Option<Arc<dyn AgentDriver>>) -> Self {
        {
            let mut st = self.shared.state.lock();
            match (st.record.switch.clone(), left) {
                (Some(saved), Some(driver)) if driver.id() == saved.agent => {
                    st.handover = saved.handover.clone();
                    st.switch = Some(Switch::from_saved(saved, driver));
                }
                _ => st.record.switch = None,
            }
        }
        self
    }
}

impl Shared {
    /// Closes the process `left` (the agent the session just moved off) keeps for this
    /// session. Its idle close would go through the session's new driver, so without
    /// this it ran until Weft stopped. A turn of that agent (a switch taken back) waits
    /// for the close before it starts.
    pub(super) fn close_left(&self, st: &mut State, left: Arc<dyn AgentDriver>) {
        let key = self.key.clone();
        let agent = left.id().to_string();
        let close = async move { left.close_session(&key).await }
            .boxed()
            .shared();
        tokio::spawn(close.clone());
        st.closing.retain(|(_, c)| c.peek().is_none());
        st.closing.push((agent, close));
    }

    /// The close of `agent`'s process still under way, if any.
    pub(super) fn closing(&self, agent: &str) -> Vec<Closing> {
        let st = self.state.lock();
        st.closing
            .iter()
            .filter(|(a, c)| a == agent && c.peek().is_none())
            .map(|(_, c)| c.clone())
            .collect()
    }

    /// At the end of the first turn after a change of agent: the switch is confirmed
    /// when the new agent gave a session, otherwise undone.
    pub(super) fn settle_switch(&self, st: &mut State, now: i64) {
        if let Some(sw) = st.switch.take() {
            st.record.switch = None;
            if st.record.session_id.is_some() {
                st.handover = None;
            } else {
                let text = format!(
                    "{} did not start, so the session stays on {}; its next turn runs there",
                    st.record.agent, sw.agent
                );
                let patch = st.acc.apply(&DriverEvent::Notice { text }, now);
                self.publish(st, patch);
                *self.driver.lock() = sw.restore(&mut st.record);
                st.handover = None;
                self.show_recorded_agent(st);
            }
        }
    }

    /// Puts the record's agent in the snapshot's `recorded_agent` when it is not the
    /// agent of the turn shown (a switch in flight or failed), and clears it otherwise.
    pub(super) fn show_recorded_agent(&self, st: &mut State) {
        let shown = &st.acc.snapshot().agent;
        let recorded =
            (!shown.is_empty() && *shown != st.record.agent).then(|| st.record.agent.clone());
        let patch = st.acc.set_recorded_agent(recorded, crate::time::now_ms());
        self.publish(st, patch);
    }
}

/// The new agent's first turn (no session of its own yet) starts from the handover,
/// ahead of the system prompt.
pub(super) fn with_handover(st: &State, input: &mut AgentTurnInput) {
    if input.session_id.is_none() {
        if let Some(h) = &st.handover {
            input.fresh = true;
            let mut all = vec![h.clone()];
            all.extend(input.system_prompt.take());
            input.system_prompt = Some(all.join("\n\n"));
        }
    }
}

/// The account a request names, as a session records it (`ambient`: none).
pub(crate) fn chosen(account: &str) -> Option<String> {
    let a = account.trim();
    (!a.is_empty() && a != crate::ports::AMBIENT).then(|| a.to_string())
}
