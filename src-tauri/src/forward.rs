//! Raises a desktop notification when a session needs an answer or finishes while no
//! window of the app (the main one or a pop-out) is focused — and, for a question,
//! also while the window in front shows another session. (With no window open, the
//! daemon notifies by itself.) One link serves every window, so each event is looked
//! at once, however many windows are open.
//!
//! A remote host's questions come the same way from that host's link
//! ([`crate::hosts`]), named with the host ("claude on gpu needs an answer"): a host's
//! daemon cannot reach this desktop, and the app is the client it would count on.
//!
//! Clicking a notification opens its session in the main window (brought forward, made
//! again if it was closed: [`crate::main_window::show_at`]). On Linux the click comes
//! back over D-Bus as the notification's `default` action, which one thread per
//! notification on screen waits for (at most [`WAITING`]; past that a notification is
//! shown without one, through the plugin); elsewhere the plugin shows it.

use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_notification::NotificationExt;
use weft_client::attention::{Notice, Tracker};
use weft_protocol::PatchEvent;

/// Notifications on screen whose click is waited for, at most.
pub const WAITING: usize = 16;

/// Notifies of a new question or a finished turn of this machine's sessions.
#[derive(Default)]
pub struct Attention {
    tracker: Tracker,
}

impl Attention {
    /// Looks at one patch the window receives.
    pub fn on_patch(&mut self, app: &AppHandle, event: &PatchEvent) {
        if let Some(notice) = self.tracker.notice(None, event) {
            notify_if_unseen(app, &notice);
        }
    }
}

/// Whether `notice` is something the user is not looking at: no window of the app is
/// focused (`shown`: the address each focused window shows), or — for a question — the
/// focused window shows another place than its session.
pub fn unseen(notice: &Notice, shown: &[String]) -> bool {
    if shown.is_empty() {
        return true;
    }
    let address = notice.address();
    notice.question
        && !shown
            .iter()
            .any(|at| at.split('?').next() == Some(address.as_str()))
}

/// Shows `notice` unless the user is looking at its session already.
pub fn notify_if_unseen<R: Runtime>(app: &AppHandle<R>, notice: &Notice) {
    let shown: Vec<String> = app
        .webview_windows()
        .values()
        .filter(|w| w.is_focused().unwrap_or(false))
        .map(|w| {
            w.url()
                .ok()
                .and_then(|u| u.fragment().map(|f| format!("#{f}")))
                .unwrap_or_default()
        })
        .collect();
    if unseen(notice, &shown) {
        show(app, notice);
    }
}

/// Shows `notice`; its click opens the session.
fn show<R: Runtime>(app: &AppHandle<R>, notice: &Notice) {
    if clickable::show(app, notice) {
        return;
    }
    if let Err(e) = app
        .notification()
        .builder()
        .title(&notice.title)
        .body(&notice.body)
        .show()
    {
        tracing::debug!("notification not shown: {e}");
    }
}

#[cfg(target_os = "linux")]
mod clickable {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tauri::{AppHandle, Runtime};
    use weft_client::attention::Notice;

    static WAITING_NOW: AtomicUsize = AtomicUsize::new(0);

    /// Shows `notice` on a thread that waits for its click; false when too many wait
    /// already (or no thread could be made).
    pub fn show<R: Runtime>(app: &AppHandle<R>, notice: &Notice) -> bool {
        if WAITING_NOW.fetch_add(1, Ordering::SeqCst) >= super::WAITING {
            WAITING_NOW.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        let app = app.clone();
        let notice = notice.clone();
        let spawned = std::thread::Builder::new()
            .name("weft-notice".into())
            .spawn(move || {
                show_and_wait(&app, &notice);
                WAITING_NOW.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(e) = spawned {
            WAITING_NOW.fetch_sub(1, Ordering::SeqCst);
            tracing::debug!("no thread for a notification: {e}");
            return false;
        }
        true
    }

    /// Shows `notice` over D-Bus and waits until it is clicked (the session opens) or
    /// closed.
    fn show_and_wait<R: Runtime>(app: &AppHandle<R>, notice: &Notice) {
        let shown = notify_rust::Notification::new()
            .appname("Weft")
            .summary(&notice.title)
            .body(&notice.body)
            .action("default", "Open")
            .show();
        let handle = match shown {
            Ok(handle) => handle,
            Err(e) => {
                tracing::debug!("notification not shown: {e}");
                return;
            }
        };
        tracing::info!(session = %notice.session_key, "notified: {}", notice.title);
        handle.wait_for_action(|action| {
            if action == "default" {
                super::open(app, &notice.address());
            }
        });
    }
}

#[cfg(not(target_os = "linux"))]
mod clickable {
    use tauri::{AppHandle, Runtime};
    use weft_client::attention::Notice;

    /// The plugin shows it (no click comes back).
    pub fn show<R: Runtime>(_app: &AppHandle<R>, _notice: &Notice) -> bool {
        false
    }
}

/// Opens the main window at `address` (a notification was clicked).
fn open<R: Runtime>(app: &AppHandle<R>, address: &str) {
    let app2 = app.clone();
    let address = address.to_string();
    // Windows are made and focused on the main thread.
    let ran = app.run_on_main_thread(move || {
        if let Err(e) = crate::main_window::show_at(&app2, &address) {
            tracing::warn!("opening a notification's session: {e}");
        }
    });
    if let Err(e) = ran {
        tracing::warn!("opening a notification's session: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice(question: bool) -> Notice {
        Notice {
            title: "claude on gpu needs an answer".into(),
            body: "Run it?".into(),
            session_key: "gpu/claude:7".into(),
            question,
        }
    }

    #[test]
    fn a_question_is_news_unless_its_session_is_in_front() {
        let none: [String; 0] = [];
        assert!(unseen(&notice(true), &none), "no window focused");
        assert!(unseen(&notice(true), &["#/s/echo%3A1".into()]));
        assert!(unseen(&notice(true), &["#/inbox".into()]));
        assert!(!unseen(&notice(true), &["#/s/gpu%2Fclaude%3A7".into()]));
        assert!(!unseen(
            &notice(true),
            &["#/s/gpu%2Fclaude%3A7?with=echo%3A1".into()]
        ));
        // A finished turn only while no window is focused, as before.
        assert!(unseen(&notice(false), &none));
        assert!(!unseen(&notice(false), &["#/inbox".into()]));
    }
}
