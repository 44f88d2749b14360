//! Desktop notifications while no window is open: a turn that ran with no window
//! finished, or needs an answer. (With a window connected, the window notifies when
//! it is not focused.) Where there is no desktop session (a CI box, ssh), showing one
//! fails and is only logged.

use std::sync::Arc;

use weft_client::attention::Tracker;
use weft_kernel::feed::RecvError;
use weft_kernel::LoomIO;

use crate::service::Service;

/// Runs until the service stops.
pub async fn watch(service: Arc<Service>) {
    let mut patches = service.loom.subscribe_all();
    let mut tracker = Tracker::default();
    loop {
        let event = tokio::select! {
            e = patches.recv_direct() => e,
            _ = service.stopped() => return,
        };
        match event {
            Ok(event) => {
                let Some((title, body)) = tracker.news(&event) else {
                    continue;
                };
                if service.has_client("app") {
                    continue;
                }
                // D-Bus can block: keep it off the async workers.
                tokio::task::spawn_blocking(move || {
                    let shown = notify_rust::Notification::new()
                        .appname("Weft")
                        .summary(&title)
                        .body(&body)
                        .show();
                    if let Err(e) = shown {
                        tracing::debug!("no desktop notification: {e}");
                    }
                });
            }
            Err(RecvError::Overflowed(_)) => continue,
            Err(RecvError::Closed) => return,
        }
    }
}
