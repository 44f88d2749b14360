//! The queue verbs: prompts waiting behind the running turn can be taken out or moved
//! before they run; every client sees the queue in the snapshot's `queued`.

use std::collections::VecDeque;

use weft_protocol::QueuedPrompt;

use super::{SessionRunner, State, Task};
use crate::error::KernelError;
use crate::time::now_ms;

impl SessionRunner {
    /// Takes a queued prompt out of the queue: it never runs. Every client sees the
    /// shorter queue in the snapshot's `queued`.
    pub fn dequeue(&self, task_id: &str) -> Result<(), KernelError> {
        let mut st = self.shared.state.lock();
        let at = self.queued_at(&st, task_id)?;
        st.queue.remove(at);
        self.publish_queue(&mut st);
        Ok(())
    }

    /// Moves a queued prompt to `position` (1 runs next); a position past the end moves
    /// it last.
    pub fn requeue(&self, task_id: &str, position: usize) -> Result<(), KernelError> {
        if position == 0 {
            return Err(KernelError::BadRequest(
                "a queue position starts at 1 (the next prompt to run)".into(),
            ));
        }
        let mut st = self.shared.state.lock();
        let at = self.queued_at(&st, task_id)?;
        let Some(task) = st.queue.remove(at) else {
            return Ok(());
        };
        let to = (position - 1).min(st.queue.len());
        st.queue.insert(to, task);
        self.publish_queue(&mut st);
        Ok(())
    }

    fn queued_at(&self, st: &State, task_id: &str) -> Result<usize, KernelError> {
        st.queue
            .iter()
            .position(|t| t.task_id == task_id && !t.terminal)
            .ok_or_else(|| {
                KernelError::BadRequest(format!(
                    "no prompt `{task_id}` is queued in session `{}` (it may have started or been removed already)",
                    self.shared.key
                ))
            })
    }

    fn publish_queue(&self, st: &mut State) {
        let queued = queued_list(&st.queue);
        let patch = st.acc.set_queued(queued, now_ms());
        self.shared.publish(st, patch);
    }

    pub fn is_busy(&self) -> bool {
        let st = self.shared.state.lock();
        st.running.is_some() || !st.queue.is_empty()
    }
}

pub(super) fn queued_list(queue: &VecDeque<Task>) -> Vec<QueuedPrompt> {
    queue
        .iter()
        .map(|t| QueuedPrompt {
            task_id: t.task_id.clone(),
            prompt: t.prompt.clone(),
            steer: t.steer,
        })
        .collect()
}
