//! Raises a desktop notification when a session needs an answer or finishes while no
//! window of the app (the main one or a pop-out) is focused. (With no window open, the
//! daemon notifies by itself.) One link serves every window, so each event is looked
//! at once, however many windows are open.

use tauri::{AppHandle, Manager};
use tauri_plugin_notification::NotificationExt;
use weft_client::attention::Tracker;
use weft_protocol::PatchEvent;

/// Notifies (when no window is focused) of a new question or a finished turn.
#[derive(Default)]
pub struct Attention {
    tracker: Tracker,
}

impl Attention {
    /// Looks at one patch the window receives.
    pub fn on_patch(&mut self, app: &AppHandle, event: &PatchEvent) {
        if let Some((title, body)) = self.tracker.news(event) {
            notify_if_unfocused(app, &title, &body);
        }
    }
}

fn notify_if_unfocused(app: &AppHandle, title: &str, body: &str) {
    let focused = app
        .webview_windows()
        .values()
        .any(|w| w.is_focused().unwrap_or(false));
    if focused {
        return;
    }
    if let Err(e) = app.notification().builder().title(title).body(body).show() {
        tracing::debug!("notification not shown: {e}");
    }
}
