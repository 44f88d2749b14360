//! Desktop notifications while no window is open: a turn that ran with no window
//! finished, or needs an answer. (With a window connected, the window notifies when
//! it is not focused.) Where there is no desktop session (a CI box, ssh), showing one
//! fails and is only logged.
//!
//! One thread shows them, from a queue of at most [`QUEUED`]: showing one is a D-Bus
//! call that can block, and a blocking task per event let a burst of turns (or a bus
//! that hangs) grow the blocking pool without bound. Past the queue a notification is
//! dropped: the session list still says what happened.

use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;

use weft_client::attention::Tracker;
use weft_kernel::feed::RecvError;

use crate::service::Service;

/// Notifications waiting to be shown.
pub const QUEUED: usize = 16;

type Note = (String, String);

/// Queues `note` for the showing thread; false when it was dropped (the queue full or
/// the thread gone).
fn offer(queue: &SyncSender<Note>, note: Note) -> bool {
    match queue.try_send(note) {
        Ok(()) => true,
        Err(TrySendError::Full(_)) => {
            tracing::debug!("a desktop notification was dropped: {QUEUED} are waiting");
            false
        }
        Err(TrySendError::Disconnected(_)) => false,
    }
}

/// Runs until the service stops.
pub async fn watch(service: Arc<Service>) {
    let mut patches = service.loom.subscribe_all();
    let mut tracker = Tracker::default();
    let (queue, notes) = sync_channel::<Note>(QUEUED);
    let shower = std::thread::Builder::new()
        .name("weft-notify".into())
        .spawn(move || {
            for (title, body) in notes {
                let shown = notify_rust::Notification::new()
                    .appname("Weft")
                    .summary(&title)
                    .body(&body)
                    .show();
                if let Err(e) = shown {
                    tracing::debug!("no desktop notification: {e}");
                }
            }
        });
    if let Err(e) = shower {
        tracing::warn!("no desktop notifications: {e}");
        return;
    }
    loop {
        let event = tokio::select! {
            e = patches.recv_direct() => e,
            _ = service.stopped() => return,
        };
        match event {
            Ok(event) => {
                let Some(note) = tracker.news(&event) else {
                    continue;
                };
                if service.has_client("app") {
                    continue;
                }
                offer(&queue, note);
            }
            Err(RecvError::Overflowed(_)) => continue,
            Err(RecvError::Closed) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stuck_bus_holds_at_most_the_queue() {
        // Nothing shows them: as a D-Bus call that never returns would leave it.
        let (queue, _stuck) = sync_channel::<Note>(QUEUED);
        let offered: Vec<bool> = (0..QUEUED * 4)
            .map(|i| offer(&queue, (format!("turn {i}"), String::new())))
            .collect();
        assert_eq!(offered.iter().filter(|&&queued| queued).count(), QUEUED);
        assert!(offered[..QUEUED].iter().all(|&q| q));
    }
}
