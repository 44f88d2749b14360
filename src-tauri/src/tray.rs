//! The tray icon: how many questions wait, while the window is behind others,
//! minimized or on another desktop, and a way back to them (Open inbox).
//!
//! The page counts the questions (it holds every session's snapshot) and tells the
//! shell with `set_inbox_count`; the icon's tooltip says it ("Weft — 2 questions
//! waiting"), its title shows the number where the platform shows one (the panel
//! label on Linux, the menu bar on macOS), and its menu's first line repeats it (a
//! Linux tray shows no tooltip). Clicking the icon (Windows, macOS) or Open inbox shows
//! and focuses the main window at `#/inbox` ([`crate::main_window::show_at`]).
//!
//! A desktop may have no tray at all (stock GNOME, Xvfb in CI): the icon is then simply
//! not seen, and where the tray library itself is missing, the app logs it and runs on
//! without one. That is also why closing the last window still quits the app (the
//! daemon keeps every agent running and notifies by itself): a window hidden "to the
//! tray" on a desktop that shows none could not be found again.

use std::panic::AssertUnwindSafe;
use std::path::Path;

use parking_lot::Mutex;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIcon, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Runtime};

/// The tray icon's id.
pub const ID: &str = "weft";
/// The menu item that opens the inbox (handled with the app's menu events, in lib.rs).
pub const OPEN_INBOX: &str = "open-inbox";
/// The inbox's address.
pub const INBOX: &str = "#/inbox";

/// "2 questions waiting".
pub fn waiting(count: u32) -> String {
    match count {
        0 => "No questions waiting".to_string(),
        1 => "1 question waiting".to_string(),
        n => format!("{n} questions waiting"),
    }
}

/// The icon's tooltip: "Weft — 2 questions waiting".
pub fn tooltip(count: u32) -> String {
    match count {
        0 => "Weft — no questions waiting".to_string(),
        n => format!("Weft — {}", waiting(n)),
    }
}

/// The icon's title, where the platform shows one: the count, or nothing when none wait.
pub fn title(count: u32) -> Option<String> {
    (count > 0).then(|| count.to_string())
}

/// The icon, its menu's first line, and the count they show.
pub struct Tray<R: Runtime> {
    icon: TrayIcon<R>,
    status: MenuItem<R>,
    shown: Mutex<u32>,
}

impl<R: Runtime> Tray<R> {
    fn show(&self, count: u32) -> tauri::Result<()> {
        let mut shown = self.shown.lock();
        if *shown == count {
            return Ok(());
        }
        self.icon.set_tooltip(Some(tooltip(count)))?;
        self.icon.set_title(title(count))?;
        self.status.set_text(waiting(count))?;
        *shown = count;
        Ok(())
    }
}

/// Puts the icon in the tray; on failure (no tray library, no tray support) logs why
/// and leaves the app without one. Its icon file goes to `temp_dir` (the app's private
/// state folder, not a shared /tmp).
pub fn install<R: Runtime>(app: &AppHandle<R>, temp_dir: &Path) {
    let started = std::time::Instant::now();
    // The Linux tray library is loaded at first use and panics when it is missing.
    match std::panic::catch_unwind(AssertUnwindSafe(|| build(app, temp_dir))) {
        Ok(Ok(tray)) => {
            app.manage(tray);
            tracing::info!("tray icon shown ({} ms)", started.elapsed().as_millis());
        }
        Ok(Err(e)) => tracing::warn!("no tray icon: {e}"),
        Err(_) => tracing::warn!("no tray icon: the tray library could not be loaded"),
    }
}

fn build<R: Runtime>(app: &AppHandle<R>, temp_dir: &Path) -> tauri::Result<Tray<R>> {
    let status = MenuItem::with_id(app, "tray-status", waiting(0), false, None::<&str>)?;
    let open = MenuItem::with_id(app, OPEN_INBOX, "Open inbox", true, None::<&str>)?;
    // The same id as the window menu's Quit: one handler (lib.rs) for both.
    let quit = MenuItem::with_id(
        app,
        "quit",
        "Quit Weft (stop every agent)",
        true,
        None::<&str>,
    )?;
    let menu = Menu::with_items(
        app,
        &[
            &status,
            &PredefinedMenuItem::separator(app)?,
            &open,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let mut builder = TrayIconBuilder::with_id(ID)
        .menu(&menu)
        .show_menu_on_left_click(false)
        .tooltip(tooltip(0))
        .temp_dir_path(temp_dir)
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                open_inbox(tray.app_handle());
            }
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    let icon = builder.build(app)?;
    Ok(Tray {
        icon,
        status,
        shown: Mutex::new(0),
    })
}

/// Shows `count` questions waiting on the icon; nothing when there is no icon.
pub fn set_count<R: Runtime>(app: &AppHandle<R>, count: u32) -> tauri::Result<()> {
    match app.try_state::<Tray<R>>() {
        Some(tray) => tray.show(count),
        None => Ok(()),
    }
}

/// Open inbox: the main window, shown and focused, at the inbox.
pub fn open_inbox<R: Runtime>(app: &AppHandle<R>) {
    if let Err(e) = crate::main_window::show_at(app, INBOX) {
        tracing::warn!("opening the inbox: {e:#}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_reads_as_a_sentence() {
        assert_eq!(tooltip(0), "Weft — no questions waiting");
        assert_eq!(tooltip(1), "Weft — 1 question waiting");
        assert_eq!(tooltip(2), "Weft — 2 questions waiting");
        assert_eq!(waiting(0), "No questions waiting");
        assert_eq!(waiting(12), "12 questions waiting");
        assert_eq!(title(0), None);
        assert_eq!(title(3), Some("3".to_string()));
    }

    #[test]
    fn without_a_tray_the_count_is_a_no_op() {
        let app = tauri::test::mock_app();
        assert!(set_count(app.handle(), 4).is_ok());
    }
}
