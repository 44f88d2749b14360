//! A checkpoint of the session's files before and after every turn, whatever the agent
//! (see [`crate::checkpoints`]), and the turn's diff from the two.
//!
//! The "before" checkpoint starts as soon as the turn is taken from the queue and runs
//! on a blocking thread while the turn's spawn is prepared; the driver starts only once
//! it is written, so nothing the agent does can slip in ahead of it. The "after" one is
//! taken once the driver returns and before the turn is finished, so the turn's final
//! snapshot (and the history) carries its `turnDiff`. A folder the port will not
//! checkpoint marks the session `degraded` (`checkpoints`) instead of failing the turn.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::task::JoinHandle;
use weft_protocol::degraded::capability::CHECKPOINTS;
use weft_protocol::DriverEvent;

use super::Shared;
use crate::driver::AgentTurnInput;
use crate::time::now_ms;

/// A turn's number and the checkpoint it started from.
pub(super) struct Bracket {
    turn: u32,
    before: String,
    workdir: PathBuf,
}

/// The number of the session's latest turn: read from the store for the runner's first
/// turn, then counted, so a long session's history is not re-read before every turn.
#[derive(Default)]
pub(super) struct TurnCount(Mutex<Option<u32>>);

impl Shared {
    /// Starts the "before" checkpoint of the turn `input` begins; await it before the
    /// driver runs.
    pub(super) fn checkpoint_before(
        self: &Arc<Self>,
        input: &AgentTurnInput,
    ) -> JoinHandle<Option<Bracket>> {
        let shared = self.clone();
        let workdir = input.workdir.clone();
        let task_id = input.task_id.clone();
        tokio::spawn(async move {
            let port = shared.env.checkpoints.clone();
            if !port.active() {
                return None;
            }
            let store = shared.env.store.clone();
            let known = *shared.turns.0.lock();
            let key = shared.key.clone();
            let dir = workdir.clone();
            let task = task_id.clone();
            let done = tokio::task::spawn_blocking(move || {
                // Every turn begun is in the history once it ends, this one included; the
                // running one is not in it yet, so this one is one past it.
                let turn = known.map(|n| n + 1).unwrap_or_else(|| {
                    let done = store.history(&key).map(|h| h.len()).unwrap_or_else(|e| {
                        tracing::warn!(session = %key, "numbering the turn for its checkpoint: {e}");
                        0
                    });
                    u32::try_from(done).unwrap_or(u32::MAX - 1) + 1
                });
                (turn, port.before_turn(&key, &dir, turn, &task))
            })
            .await;
            let (turn, result) = match done {
                Ok(done) => done,
                Err(e) => {
                    shared.checkpoint_degraded(&task_id, Some(format!("checkpoint failed: {e}")));
                    return None;
                }
            };
            *shared.turns.0.lock() = Some(turn);
            match result {
                Ok(before) => {
                    shared.checkpoint_degraded(&task_id, None);
                    Some(Bracket {
                        turn,
                        before,
                        workdir,
                    })
                }
                Err(e) => {
                    shared.checkpoint_degraded(&task_id, Some(e.to_string()));
                    None
                }
            }
        })
    }

    /// Takes the "after" checkpoint of the turn `bracket` began and puts the turn's diff
    /// in its snapshot.
    pub(super) async fn checkpoint_after(
        self: &Arc<Self>,
        bracket: Option<Bracket>,
        task_id: &str,
    ) {
        let Some(bracket) = bracket else {
            return;
        };
        let port = self.env.checkpoints.clone();
        let key = self.key.clone();
        let task = task_id.to_owned();
        let done = tokio::task::spawn_blocking(move || {
            port.after_turn(&key, &bracket.workdir, bracket.turn, &task, &bracket.before)
        })
        .await;
        match done {
            Ok(Ok(diff)) => {
                let mut st = self.state.lock();
                if st.running.as_ref().is_some_and(|r| r.task_id == task_id) {
                    let patch = st.acc.set_turn_diff(Some(diff), now_ms());
                    self.publish(&mut st, patch);
                }
            }
            Ok(Err(e)) => self.checkpoint_degraded(
                task_id,
                Some(format!("the checkpoint after this turn failed: {e}")),
            ),
            Err(e) => self.checkpoint_degraded(task_id, Some(format!("checkpoint failed: {e}"))),
        }
    }

    /// Sets (or clears, `None`) the session's `checkpoints` entry in `degraded`, if
    /// `task_id` is still the running turn.
    fn checkpoint_degraded(&self, task_id: &str, reason: Option<String>) {
        let mut st = self.state.lock();
        if st.running.as_ref().is_none_or(|r| r.task_id != task_id) {
            return;
        }
        let event = DriverEvent::Degraded {
            capability: CHECKPOINTS.into(),
            reason,
        };
        let patch = st.acc.apply(&event, now_ms());
        self.publish(&mut st, patch);
    }
}

impl super::SessionRunner {
    /// Runs `f` (blocking) with the session's folder between two turns: refused while a
    /// turn runs or waits, and a prompt sent meanwhile queues behind it. A restore must
    /// not move files under an agent that is working on them.
    pub(crate) async fn between_turns<T: Send + 'static>(
        &self,
        f: impl FnOnce(PathBuf) -> T + Send + 'static,
    ) -> Result<T, crate::KernelError> {
        let workdir = {
            let mut st = self.shared.state.lock();
            if st.worker_active || st.running.is_some() || !st.queue.is_empty() {
                return Err(crate::KernelError::Busy(
                    "a turn of this session is running or waiting: restore its files between turns"
                        .into(),
                ));
            }
            // What a worker does: prompts arriving now queue instead of starting a turn.
            st.worker_active = true;
            PathBuf::from(&st.record.workdir)
        };
        let done = tokio::task::spawn_blocking(move || f(workdir)).await;
        let queued = {
            let mut st = self.shared.state.lock();
            if st.queue.is_empty() {
                st.worker_active = false;
                self.shared.env.settled.notify_waiters();
            }
            !st.queue.is_empty()
        };
        if queued {
            let shared = self.shared.clone();
            tokio::spawn(async move { shared.work(None).await });
        }
        done.map_err(|e| crate::KernelError::Internal(format!("the restore failed: {e}")))
    }
}
