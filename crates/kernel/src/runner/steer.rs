//! Steering a running turn: a message sent into it, held until its agent is ready for
//! it, or queued as the next turn when the agent takes none mid-turn.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;
use weft_protocol::{ClientEnv, DriverEvent, SteerOutcome};

use super::{SessionRunner, Shared, Task};
use crate::driver::Steer;
use crate::time::now_ms;

/// A steer held for a turn whose agent has not asked for steers yet; one it never asks
/// for before the turn ends runs as the next turn, as if it had been queued.
pub(super) struct EarlySteer {
    pub(super) steer: Steer,
    pub(super) task_id: String,
    pub(super) client_env: Option<Arc<ClientEnv>>,
}

impl SessionRunner {
    pub fn steer(
        &self,
        steer: Steer,
        task_id: String,
        client_env: Option<Arc<ClientEnv>>,
    ) -> SteerOutcome {
        let mut st = self.shared.state.lock();
        let shown = format!("{}{}", steer.text, attached_names(&steer.attachments));
        // Sent now, or held for a turn whose agent takes steers but is still starting.
        let delivered = match st.running.as_mut() {
            Some(r) => match &r.steer {
                Some(tx) => tx
                    .send(steer.clone())
                    .is_ok()
                    .then_some("sent into the running turn"),
                None if r.takes_steer => {
                    r.early.push(EarlySteer {
                        steer: steer.clone(),
                        task_id: task_id.clone(),
                        client_env: client_env.clone(),
                    });
                    Some("held for the running turn until its agent is ready for it")
                }
                None => None,
            },
            None => None,
        };
        if let Some(how) = delivered {
            let patch = st.acc.apply(
                &DriverEvent::Notice {
                    text: format!("steer {how}: {shown}"),
                },
                now_ms(),
            );
            self.shared.publish(&mut st, patch);
            return SteerOutcome::Injected;
        }
        let running = st.running.is_some();
        drop(st);
        if running {
            let mut st = self.shared.state.lock();
            let patch = st.acc.apply(
                &DriverEvent::Notice {
                    text: format!(
                        "steer queued as the next turn (this agent takes no messages mid-turn): {shown}"
                    ),
                },
                now_ms(),
            );
            self.shared.publish(&mut st, patch);
        }
        self.enqueue(Task {
            task_id,
            prompt: steer.text,
            model: None,
            effort: None,
            attachments: steer.attachments,
            steer: true,
            terminal: false,
            client_env,
            account: None,
            pack: None,
        });
        SteerOutcome::Queued
    }
}

/// The running turn `task_id` asks for its steers: those held while it started come
/// first.
pub(super) fn register(shared: &Shared, task_id: &str) -> mpsc::UnboundedReceiver<Steer> {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut st = shared.state.lock();
    if let Some(running) = st.running.as_mut().filter(|r| r.task_id == task_id) {
        for early in running.early.drain(..) {
            let _ = tx.send(early.steer);
        }
        running.steer = Some(tx);
    }
    rx
}

/// ` (attached: a.png, b.md)` for a steer's notice, so where its files went shows.
fn attached_names(attachments: &[PathBuf]) -> String {
    if attachments.is_empty() {
        return String::new();
    }
    let names: Vec<String> = attachments
        .iter()
        .map(|p| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .collect();
    format!(" (attached: {})", names.join(", "))
}
