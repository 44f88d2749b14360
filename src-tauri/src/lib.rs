//! Weft's desktop app: a thin Tauri 2 shell, one client of the user's kernel service.
//!
//! The window's requests go to the daemon (`weft daemon`, started on demand) through
//! one generic command ([`commands::weft_request`]); everything the daemon pushes —
//! patches, terminal frames, resyncs — reaches the window on one channel
//! ([`commands::weft_connect`]). Nothing here parses agent output or decides anything
//! about a session: that is the kernel's.
//!
//! Closing the window ends no turn and no agent terminal: they go on in the daemon and
//! the reopened window shows them live. The menu's Quit stops the daemon (every turn
//! and terminal ends).
//!
//! More windows than one: a session popped out ([`popout`]) is another page of the
//! app, served by the same link, granted the same commands. The app runs while any
//! window is open; closing the last quits it as before (the daemon goes on and
//! notifies by itself). While it runs, a tray icon ([`tray`]) counts the questions
//! waiting and opens the inbox in the main window ([`main_window`]).
//!
//! Hazards: commands live in a module (a `#[tauri::command] pub fn` in the crate root
//! collides with its generated macro, E0255); a window may call only the commands
//! listed in build.rs and granted in capabilities/main.json (to `main` and `popout-*`).

pub mod commands;
pub mod export;
pub mod forward;
pub mod hosts;
pub mod link;
pub mod logging;
pub mod main_window;
pub mod navigation;
pub mod open;
pub mod popout;
pub mod remote_file;
pub mod remote_image;
pub mod rendering;
pub mod route;
pub mod terminal_watch;
pub mod tray;
pub mod window_size;
pub mod workspaces;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::Manager;

use crate::link::Link;

static QUITTING: AtomicBool = AtomicBool::new(false);

/// True once Quit was chosen: the link does not reconnect then.
pub fn quitting() -> bool {
    QUITTING.load(Ordering::SeqCst)
}

/// Stops the daemon (so no agent outlives a Quit), then exits.
pub async fn quit(app: &tauri::AppHandle, link: &Arc<Link>) {
    QUITTING.store(true, Ordering::SeqCst);
    tracing::info!("quit: stopping the daemon");
    if let Err(e) = link
        .request(app, weft_protocol::ClientRequest::DaemonStop {})
        .await
    {
        tracing::warn!("stopping the daemon: {e}");
    }
    app.exit(0);
}

/// The menu's Close Window: the window in front (a pop-out or the main one), else the
/// main window.
fn close_focused_window<R: tauri::Runtime>(app: &tauri::AppHandle<R>) {
    let windows = app.webview_windows();
    let target = windows
        .values()
        .find(|w| w.is_focused().unwrap_or(false))
        .or_else(|| windows.get(main_window::LABEL));
    if let Some(window) = target {
        if let Err(e) = window.close() {
            tracing::warn!("closing the window: {e}");
        }
    }
}

/// What the app knows at start that the window asks for.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// Weft's global state folder (`~/.weft`, or `$WEFT_HOME`).
    pub state_dir: PathBuf,
    /// Folder holding the rotating log files.
    pub log_dir: PathBuf,
    /// Workspace named on the command line (`--workspace DIR` or a folder argument)
    /// or by `WEFT_WORKSPACE`: tests choose the workspace this way, without the dialog.
    pub initial_workspace: Option<String>,
    /// The editor files open in (`WEFT_OPEN_WITH`, else settings.json's `openWith`);
    /// none: the desktop's handler.
    pub open_with: Option<Vec<String>>,
}

/// The workspace asked for by `args` (without the program name) or `env_value`.
pub fn initial_workspace(args: &[String], env_value: Option<String>) -> Option<String> {
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--workspace" {
            return it.next().cloned();
        }
        if let Some(v) = arg.strip_prefix("--workspace=") {
            return Some(v.to_string());
        }
        if !arg.starts_with('-') && std::path::Path::new(arg).is_dir() {
            return Some(arg.clone());
        }
    }
    env_value.filter(|v| !v.is_empty())
}

/// Builds and runs the app until its last window closes (or Quit).
pub fn run() -> anyhow::Result<()> {
    let rendering = rendering::choose();
    let state_dir = weft_client::Home::from_env().dir().to_path_buf();
    // Private from the start: the app may create the home before any daemon does.
    logging::private_dir(&state_dir)
        .with_context(|| format!("creating the state folder {}", state_dir.display()))?;
    let log_dir = state_dir.join("logs");
    let _log_guard = logging::init(&log_dir)?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = AppConfig {
        initial_workspace: initial_workspace(&args, std::env::var("WEFT_WORKSPACE").ok()),
        open_with: open::open_with(&state_dir, std::env::var("WEFT_OPEN_WITH").ok()),
        state_dir: state_dir.clone(),
        log_dir,
    };
    tracing::info!(state_dir = %state_dir.display(), ?rendering, "weft desktop app starting");

    let link = Arc::new(Link::default());
    let context = tauri::generate_context!();
    // A dev build's pages come from the dev server; a bundled build has none.
    let dev_url = if cfg!(dev) {
        context.config().build.dev_url.clone()
    } else {
        None
    };
    let app = tauri::Builder::default()
        .plugin(navigation::guard(dev_url))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_opener::init())
        .manage(link.clone())
        .manage(config)
        .menu(|handle| {
            let close = MenuItem::with_id(
                handle,
                "close",
                "Close Window (agents keep running)",
                true,
                Some("CmdOrCtrl+W"),
            )?;
            let quit = MenuItem::with_id(
                handle,
                "quit",
                "Quit Weft (stop every agent)",
                true,
                Some("CmdOrCtrl+Q"),
            )?;
            let weft = Submenu::with_items(
                handle,
                "Weft",
                true,
                &[&close, &PredefinedMenuItem::separator(handle)?, &quit],
            )?;
            Menu::with_items(handle, &[&weft])
        })
        // The window menu's and the tray menu's items alike.
        .on_menu_event(|app, event| match event.id().as_ref() {
            "quit" => {
                let app = app.clone();
                let link = app.state::<Arc<Link>>().inner().clone();
                tauri::async_runtime::spawn(async move { quit(&app, &link).await });
            }
            "close" => close_focused_window(app),
            tray::OPEN_INBOX => tray::open_inbox(app),
            _ => {}
        })
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::Destroyed = event {
                let label = window.label().to_string();
                let link = window.state::<Arc<Link>>().inner().clone();
                tauri::async_runtime::spawn(async move { link.window_closed(&label).await });
            }
        })
        .invoke_handler(tauri::generate_handler![
            commands::weft_connect,
            commands::weft_request,
            commands::quit,
            commands::app_info,
            commands::recent_workspaces,
            commands::add_recent_workspace,
            commands::remove_recent_workspace,
            commands::open_log,
            commands::open_path,
            commands::save_remote_file,
            commands::fetch_image,
            commands::save_window_size,
            commands::export_session,
            commands::set_inbox_count,
            commands::open_window,
            commands::hosts_list,
            commands::hosts_add,
            commands::hosts_remove,
            commands::hosts_status,
            commands::hosts_forwards,
            commands::hosts_forward,
        ])
        .setup(move |app| {
            if let Some(window) = app.get_webview_window(main_window::LABEL) {
                main_window::restore_size(&window, &state_dir);
            }
            tray::install(app.handle(), &state_dir.join("tray"));
            // Connect (starting the daemon) while the window loads.
            let handle = app.handle().clone();
            let link = app.state::<Arc<Link>>().inner().clone();
            link.set_app(&handle);
            tauri::async_runtime::spawn(async move {
                if let Err(e) = link.client(&handle).await {
                    tracing::warn!("connecting to the daemon: {e}");
                }
                // And every other machine of the hosts list, each retrying by itself.
                link.remotes.connect_all(link.windows());
            });
            Ok(())
        })
        .build(context)
        .context("building the window")?;
    app.run(|_handle, _event| {});
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_from_flag_positional_or_env() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path().display().to_string();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            initial_workspace(&s(&["--workspace", "/x"]), None),
            Some("/x".into())
        );
        assert_eq!(
            initial_workspace(&s(&["--workspace=/y"]), None),
            Some("/y".into())
        );
        assert_eq!(initial_workspace(&s(&[&d]), None), Some(d.clone()));
        assert_eq!(
            initial_workspace(&[], Some("/env".into())),
            Some("/env".into())
        );
        assert_eq!(
            initial_workspace(&s(&["--flag"]), Some(String::new())),
            None
        );
    }
}
