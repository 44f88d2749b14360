//! The main window, brought forward at an address when the tray asks (Open inbox).
//!
//! The page moves itself: the shell emits [`NAVIGATE`] with the address to the main
//! window only, and the UI sets `location.hash` from it (`onNavigate` in
//! ui/src/lib/client/tauri.ts). When the main window was closed while a pop-out kept
//! the app running, it is made again from its configuration (tauri.conf.json), at the
//! address, with the size it last had.

use anyhow::Context;
use tauri::{
    AppHandle, Emitter, EventTarget, Manager, Runtime, WebviewUrl, WebviewWindow,
    WebviewWindowBuilder,
};

/// The main window's label (tauri.conf.json; capabilities/main.json).
pub const LABEL: &str = "main";
/// The event that asks the main window's page to go to an address (its payload).
pub const NAVIGATE: &str = "weft://navigate";

/// Shows, unminimizes and focuses the main window — making it again if it was closed —
/// and sends its page to `hash` (checked as a pop-out's address is).
pub fn show_at<R: Runtime>(app: &AppHandle<R>, hash: &str) -> anyhow::Result<WebviewWindow<R>> {
    let hash = crate::popout::check(hash)?;
    if let Some(window) = app.get_webview_window(LABEL) {
        window.unminimize()?;
        window.show()?;
        window.set_focus()?;
        // To the main window's own listener only (`getCurrentWebviewWindow().listen`).
        app.emit_to(EventTarget::webview_window(LABEL), NAVIGATE, hash)?;
        return Ok(window);
    }
    let mut config = app
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == LABEL)
        .cloned()
        .context("tauri.conf.json names no main window")?;
    // A fragment-only reference: the app's own page at that address.
    config.url = WebviewUrl::App(hash.into());
    let window = WebviewWindowBuilder::from_config(app, &config)?.build()?;
    if let Some(state) = app.try_state::<crate::AppConfig>() {
        restore_size(&window, &state.state_dir);
    }
    window.set_focus()?;
    tracing::info!(address = hash, "opened the main window again");
    Ok(window)
}

/// Gives `window` the size the main window last had, if one was kept.
pub fn restore_size<R: Runtime>(window: &WebviewWindow<R>, state_dir: &std::path::Path) {
    if let Some((w, h)) = crate::window_size::load(state_dir) {
        if let Err(e) = window.set_size(tauri::LogicalSize::new(w, h)) {
            tracing::warn!("restoring the window size: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tauri::{Listener, Manager};

    use super::*;

    fn app_with_main() -> tauri::App<tauri::test::MockRuntime> {
        let mut context = tauri::test::mock_context(tauri::test::noop_assets());
        context
            .config_mut()
            .app
            .windows
            .push(tauri::utils::config::WindowConfig {
                label: LABEL.into(),
                title: "Weft".into(),
                ..Default::default()
            });
        tauri::test::mock_builder()
            .build(context)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn an_open_main_window_is_sent_to_the_address() {
        let app = app_with_main();
        let handle = app.handle();
        WebviewWindowBuilder::new(handle, LABEL, WebviewUrl::default())
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let heard = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = heard.clone();
        handle.listen_any(NAVIGATE, move |event| {
            if let Ok(mut heard) = sink.lock() {
                heard.push(event.payload().to_string());
            }
        });
        let window = show_at(handle, "#/inbox").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(window.label(), LABEL);
        let heard = heard.lock().map(|h| h.clone()).unwrap_or_default();
        assert_eq!(heard, vec!["\"#/inbox\"".to_string()]);
        assert!(show_at(handle, "https://evil.example/").is_err());
    }

    #[test]
    fn a_closed_main_window_is_made_again_at_the_address() {
        let app = app_with_main();
        let handle = app.handle();
        assert!(handle.get_webview_window(LABEL).is_none());
        let window = show_at(handle, "#/inbox").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(window.label(), LABEL);
        let url = window.url().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url.fragment(), Some("/inbox"));
        assert!(crate::navigation::is_app_url(&url, None), "{url}");
    }
}
