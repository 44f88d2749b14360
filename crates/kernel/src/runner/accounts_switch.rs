//! Moving a session to another account between turns: by the user (`switchAccount`,
//! the app's one click after a used-up limit) or by the session itself when it has
//! opted in (auto-switch) and its account's limit window is used up.
//!
//! Where the agent's own session can follow (same provider; Weft carries the
//! transcript into the new account's home, see the accounts crate), only the account
//! changes. Where it cannot (the accounts port's `switch_warning`), the session forgets its
//! agent session id and the next turn starts a new one from the same handover a change
//! of agent uses (`handover.rs`), so the Weft session and its history stay one.

use std::path::PathBuf;

use weft_protocol::{DriverEvent, UniversalSnapshot};

use super::{handover, SessionRunner, Shared, State, Task};
use crate::error::KernelError;

/// What the new account's first turn starts from when the agent's own session cannot
/// follow, made with the change of agent's handover.
fn handover_text(
    shared: &Shared,
    st: &State,
    from: Option<&str>,
    to: Option<&str>,
    history: &[UniversalSnapshot],
) -> String {
    let agent = &st.record.agent;
    let accounts = &shared.env.accounts;
    handover::text(
        &format!("{agent} on account {}", accounts.describe(from)),
        &format!("{agent} on account {}", accounts.describe(to)),
        &st.record.workdir,
        history,
    )
}

impl SessionRunner {
    /// Puts the idle session on account `to` (none: ambient) from its next turn. With
    /// `history` (the session's turns, oldest first) the agent's own session cannot
    /// follow: the next turn starts a new one from a handover. With `resume`, the last
    /// turn's prompt runs again there as `task_id`. Refused while a turn runs or waits.
    pub fn switch_account(
        &self,
        to: Option<String>,
        history: Option<&[UniversalSnapshot]>,
        resume: Option<(String, Option<std::sync::Arc<weft_protocol::ClientEnv>>)>,
    ) -> Result<(), KernelError> {
        let mut st = self.shared.state.lock();
        if st.running.is_some() || !st.queue.is_empty() {
            return Err(KernelError::Busy(
                "a turn is running or queued in this session: it can change account only between turns (nothing was interrupted)".into(),
            ));
        }
        let prompt = st.acc.snapshot().prompt.clone();
        if resume.is_some() && (prompt.trim().is_empty() || st.acc.snapshot().terminal) {
            return Err(KernelError::BadRequest(format!(
                "session `{}` has no prompt to run again (nothing was changed)",
                self.shared.key
            )));
        }
        if let Some(history) = history {
            let from = st.record.account.clone();
            let text = handover_text(&self.shared, &st, from.as_deref(), to.as_deref(), history);
            st.handover = Some(text);
            st.record.session_id = None;
        }
        st.record.account = to;
        self.shared
            .persist("session", self.shared.env.store.upsert_session(&st.record));
        drop(st);
        if let Some((task_id, client_env)) = resume {
            self.enqueue(again(task_id, prompt, client_env));
        }
        Ok(())
    }
}

/// The cut-short prompt, run again on the new account (the session's model, effort and
/// pack stay; its attachments were sent with the first try).
fn again(
    task_id: String,
    prompt: String,
    client_env: Option<std::sync::Arc<weft_protocol::ClientEnv>>,
) -> Task {
    Task {
        task_id,
        prompt,
        model: None,
        effort: None,
        attachments: Vec::<PathBuf>::new(),
        steer: false,
        terminal: false,
        client_env,
        account: None,
        pack: None,
    }
}

impl Shared {
    /// At a turn's end: a handover given after an account switch is done with once the
    /// new agent session exists; and a turn that used up its account's limit in a
    /// session that opted in to auto-switch moves the session to the next account with
    /// capacity and queues its prompt again, first.
    pub(super) fn after_limit(&self, st: &mut State, now: i64) {
        if st.switch.is_none() && st.record.session_id.is_some() {
            st.handover = None;
        }
        let snap = st.acc.snapshot();
        if snap.limit_hit.is_none() || snap.terminal || snap.prompt.trim().is_empty() {
            return;
        }
        let Some(from) = st.running.as_ref().and_then(|r| r.account.clone()) else {
            return;
        };
        let agent = st.record.agent.clone();
        let accounts = self.env.accounts.clone();
        let Some(to) = accounts.auto_switch_to(&self.key, &agent, &from) else {
            return;
        };
        let prompt = snap.prompt.clone();
        let cannot_follow = st.record.session_id.is_some()
            && accounts
                .switch_warning(&agent, Some(&from), Some(&to), None)
                .is_some();
        if cannot_follow {
            // The store holds the earlier turns; this one is not finished there yet.
            let mut history = self.env.store.history(&self.key).unwrap_or_default();
            history.retain(|s| s.task_id != st.acc.snapshot().task_id);
            history.push(st.acc.snapshot().clone());
            let text = handover_text(self, st, Some(&from), Some(&to), &history);
            st.handover = Some(text);
            st.record.session_id = None;
        }
        let text = format!(
            "auto-switch: account {} used up its limit, so the session moves to account {} and runs this prompt again there{}",
            accounts.describe(Some(&from)),
            accounts.describe(Some(&to)),
            if cannot_follow {
                " (in a new agent session started from a handover: the old one cannot follow)"
            } else {
                ""
            }
        );
        let patch = st.acc.apply(&DriverEvent::Notice { text }, now);
        self.publish(st, patch);
        st.record.account = Some(to);
        st.queue
            .push_front(again(crate::env::new_task_id(), prompt, None));
        // Shown at once, so a client waiting for the session sees more is coming.
        let queued = super::queued_list(&st.queue);
        let patch = st.acc.set_queued(queued, now);
        self.publish(st, patch);
    }
}
