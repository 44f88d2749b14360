//! Questions and permissions: pending from the moment a driver asks until an outcome —
//! answered (by whom, from which surface), cancelled (the turn stopped or ended), or
//! expired (`WEFT_INTERACTION_TIMEOUT_SECS`). Each is written to the store when asked
//! and resolved there with its outcome, so a restart shows what was left unanswered.
//! An expiry is never reported as a denial: the agent receives a cancellation and the
//! snapshot says "expired after N s".

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use weft_protocol::{DriverEvent, InboxItem, InteractAction, Interaction, InteractionResponse};

use super::{Pending, RunnerSink, SessionRunner, Shared, State};
use crate::error::KernelError;
use crate::ports::AskedInteraction;
use crate::time::now_ms;

impl SessionRunner {
    /// Answers a pending interaction; `by` names who answered (a surface).
    pub fn interact(
        &self,
        prompt_id: &str,
        response: InteractionResponse,
        by: &str,
    ) -> Result<(), KernelError> {
        let mut st = self.shared.state.lock();
        let not_pending = || KernelError::NotPending {
            session_key: self.shared.key.clone(),
            prompt_id: prompt_id.to_string(),
        };
        let Some(asked) = Shared::pending_interaction(&st, prompt_id) else {
            return Err(not_pending());
        };
        let what = answer_summary(asked, &response);
        let title = asked.title.clone();
        let outcome = if response.action == InteractAction::Cancel {
            "cancelled"
        } else {
            "answered"
        };
        let by_note = if by.is_empty() {
            String::new()
        } else {
            format!(" (from {by})")
        };
        // Said before the question leaves the list: a surface that sees it go (the
        // Matrix bot edits its message then) already has how it was answered.
        self.shared
            .notice(&mut st, format!("\"{title}\" {what}{by_note}"));
        let Some(pending) = self.shared.take_pending(&mut st, prompt_id) else {
            return Err(not_pending());
        };
        self.shared.persist(
            "interaction outcome",
            self.shared.env.store.resolve_interaction(
                prompt_id,
                outcome,
                Some(&what),
                Some(by).filter(|b| !b.is_empty()),
            ),
        );
        let workdir = std::path::PathBuf::from(&st.record.workdir);
        drop(st);
        // Outside the lock: the handler may write a file (a rule the user chose).
        let given = self.shared.env.interactions.on_answer(
            &self.shared.key,
            &workdir,
            &pending.interaction,
            response.clone(),
        );
        if given != response {
            if let Some(why) = given.answers.get("reason") {
                let mut st = self.shared.state.lock();
                self.shared
                    .notice(&mut st, format!("\"{}\": {why}", pending.interaction.title));
            }
        }
        // The asker may have given up (turn stopped) between our lock and now.
        let _ = pending.answer.send(given);
        Ok(())
    }

    /// True when `prompt_id` is pending here.
    pub fn has_pending(&self, prompt_id: &str) -> bool {
        self.shared
            .state
            .lock()
            .pending
            .iter()
            .any(|p| p.interaction.prompt_id == prompt_id)
    }

    /// How many interactions wait for an answer here.
    pub fn pending_count(&self) -> usize {
        self.shared.state.lock().pending.len()
    }

    /// This session's pending interactions, as the inbox lists them.
    pub fn inbox(&self) -> Vec<InboxItem> {
        let st = self.shared.state.lock();
        st.pending
            .iter()
            .map(|p| InboxItem {
                prompt_id: p.interaction.prompt_id.clone(),
                session_key: self.shared.key.clone(),
                kind: p.interaction.kind,
                title: p.interaction.title.clone(),
                detail: p.interaction.detail.clone(),
                tool_name: p.interaction.tool_name.clone(),
                questions: p.interaction.questions.clone(),
                created_at: p.created_at,
                expires_at: p.expires_at,
            })
            .collect()
    }
}

impl Shared {
    /// The pending interaction `prompt_id`, left in the list.
    fn pending_interaction<'a>(st: &'a State, prompt_id: &str) -> Option<&'a Interaction> {
        st.pending
            .iter()
            .map(|p| &p.interaction)
            .find(|i| i.prompt_id == prompt_id)
    }

    /// Removes `prompt_id` from the pending list, publishing the new list.
    fn take_pending(&self, st: &mut State, prompt_id: &str) -> Option<Pending> {
        let i = st
            .pending
            .iter()
            .position(|p| p.interaction.prompt_id == prompt_id)?;
        let pending = st.pending.remove(i);
        let list = st.pending.iter().map(|p| p.interaction.clone()).collect();
        let patch = st.acc.set_interactions(list, now_ms());
        self.publish(st, patch);
        Some(pending)
    }

    pub(super) fn notice(&self, st: &mut State, text: String) {
        let patch = st.acc.apply(&DriverEvent::Notice { text }, now_ms());
        self.publish(st, patch);
    }

    /// Withdraws every pending interaction (the turn stopped or ended): each is
    /// recorded as cancelled, and its asker gets a cancellation.
    pub(super) fn cancel_pending(&self, st: &mut State, why: &str) {
        if st.pending.is_empty() {
            return;
        }
        for p in std::mem::take(&mut st.pending) {
            self.notice(
                st,
                format!("\"{}\" was cancelled: {why}", p.interaction.title),
            );
            self.persist(
                "interaction outcome",
                self.env.store.resolve_interaction(
                    &p.interaction.prompt_id,
                    "cancelled",
                    Some(why),
                    None,
                ),
            );
            // Dropping `p.answer` tells the asker it was cancelled.
        }
        let patch = st.acc.set_interactions(Vec::new(), now_ms());
        self.publish(st, patch);
    }

    /// The interaction's time is up: it leaves the pending list, the agent gets a
    /// cancellation, and the record says it expired (not that anyone denied it).
    fn expire(&self, prompt_id: &str, after: Duration) {
        let mut st = self.state.lock();
        let Some(title) = Self::pending_interaction(&st, prompt_id).map(|i| i.title.clone()) else {
            return; // Answered or withdrawn in time.
        };
        let why = format!("expired after {} s", after.as_secs());
        // Said before it leaves the list, as an answer is (see `interact`).
        self.notice(&mut st, format!("\"{title}\" {why} with no answer"));
        // Dropped at the end: the asker receives a cancellation.
        let Some(_pending) = self.take_pending(&mut st, prompt_id) else {
            return;
        };
        self.persist(
            "interaction outcome",
            self.env
                .store
                .resolve_interaction(prompt_id, "expired", Some(&why), None),
        );
    }
}

impl RunnerSink {
    /// Makes `interaction` pending (or lets the InteractionHandler port answer it).
    pub(super) fn ask_pending(
        &self,
        mut interaction: Interaction,
    ) -> oneshot::Receiver<InteractionResponse> {
        let (tx, rx) = oneshot::channel();
        let shared = &self.shared;
        if interaction.prompt_id.is_empty() {
            interaction.prompt_id = uuid::Uuid::new_v4().to_string();
        }
        let mut st = shared.state.lock();
        if !self.is_current(&st) {
            return rx; // `tx` dropped: cancelled.
        }
        let workdir = std::path::PathBuf::from(&st.record.workdir);
        if let Some(answer) =
            shared
                .env
                .interactions
                .on_interaction_in(&shared.key, &workdir, &mut interaction)
        {
            let why = answer
                .answers
                .get("reason")
                .cloned()
                .unwrap_or_else(|| "nobody is there to answer".into());
            shared.notice(
                &mut st,
                format!(
                    "\"{}\" was answered automatically: {:?} ({why})",
                    interaction.title, answer.action
                ),
            );
            let _ = tx.send(answer);
            return rx;
        }
        let now = now_ms();
        let timeout = shared.env.interaction_timeout;
        let expires_at = timeout.map(|t| now + i64::try_from(t.as_millis()).unwrap_or(i64::MAX));
        shared.persist(
            "interaction",
            shared.env.store.ask_interaction(&AskedInteraction {
                prompt_id: interaction.prompt_id.clone(),
                session_key: shared.key.clone(),
                task_id: self.task_id.clone(),
                interaction: interaction.clone(),
                created_at: now,
                expires_at,
            }),
        );
        if let Some(after) = timeout {
            let shared: Arc<Shared> = shared.clone();
            let id = interaction.prompt_id.clone();
            tokio::spawn(async move {
                tokio::time::sleep(after).await;
                shared.expire(&id, after);
            });
        }
        st.pending.push(Pending {
            interaction,
            answer: tx,
            created_at: now,
            expires_at,
        });
        let list = st.pending.iter().map(|p| p.interaction.clone()).collect();
        let patch = st.acc.set_interactions(list, now);
        shared.publish(&mut st, patch);
        rx
    }
}

/// What the answer was, in words (HITL outcomes are kept, not lost).
fn answer_summary(interaction: &Interaction, response: &InteractionResponse) -> String {
    let label = |value: &str| {
        interaction
            .questions
            .iter()
            .flat_map(|q| &q.choices)
            .find(|c| c.value == value)
            .map_or_else(|| value.to_string(), |c| c.label.clone())
    };
    match response.action {
        InteractAction::Select | InteractAction::Text => {
            let mut parts: Vec<String> = response.value.iter().map(|v| label(v)).collect();
            parts.extend(
                response
                    .answers
                    .iter()
                    .map(|(q, v)| format!("{q}={}", label(v))),
            );
            parts.extend(response.selected.iter().map(|(q, vs)| {
                let picked: Vec<String> = vs.iter().map(|v| label(v)).collect();
                format!("{q}=[{}]", picked.join(", "))
            }));
            parts.extend(response.texts.iter().map(|(q, t)| format!("{q}: \"{t}\"")));
            format!("answered {}", parts.join(", "))
        }
        InteractAction::Skip => "skipped".to_string(),
        InteractAction::Cancel => "cancelled".to_string(),
    }
}
