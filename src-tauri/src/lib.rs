//! Weft's desktop app: a thin Tauri 2 shell over the kernel.
//!
//! One [`weft_kernel::Loom`] lives in managed state. Every verb is a command in
//! [`commands`] that calls `LoomIO` in one line; every snapshot patch of every session
//! is forwarded to the window as one `weft://patch` event ({sessionKey, seq, patch})
//! by [`forward`]. The window keeps its own per-session seq and re-reads a snapshot
//! on a gap; when this side lags behind the kernel's broadcast it says so with
//! `weft://resync`. Nothing here parses agent output or decides anything about a
//! session: that is the kernel's.
//!
//! Hazards: commands live in a module (a `#[tauri::command] pub fn` in the crate root
//! collides with its generated macro, E0255); the window may call only the commands
//! listed in build.rs and granted in capabilities/main.json; on exit, and on SIGTERM,
//! SIGINT or SIGHUP, the kernel is shut down so no agent process outlives the app.

pub mod commands;
pub mod forward;
pub mod logging;
pub mod rendering;
pub mod terminal;
pub mod workspaces;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use tauri::{Manager, RunEvent};
use weft_kernel::Loom;

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

/// Builds and runs the app until its window closes.
pub fn run() -> anyhow::Result<()> {
    let rendering = rendering::choose();
    let state_dir = weft_kernel::state::global_state_dir();
    std::fs::create_dir_all(&state_dir)
        .with_context(|| format!("creating the state folder {}", state_dir.display()))?;
    let log_dir = state_dir.join("logs");
    let _log_guard = logging::init(&log_dir)?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = AppConfig {
        initial_workspace: initial_workspace(&args, std::env::var("WEFT_WORKSPACE").ok()),
        state_dir: state_dir.clone(),
        log_dir,
    };
    tracing::info!(state_dir = %state_dir.display(), ?rendering, "weft desktop app starting");

    let loom = Loom::builder(&state_dir)
        .drivers(weft_drivers::all())
        .open()
        .context("opening the kernel")?;

    let terminals = Arc::new(terminal::Terminals::default());
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .manage(loom.clone())
        .manage(terminals.clone())
        .manage(config)
        .invoke_handler(tauri::generate_handler![
            commands::prompt,
            commands::stop,
            commands::steer,
            commands::interact,
            commands::get_snapshot,
            commands::get_history,
            commands::list_sessions,
            commands::search,
            commands::list_agent_info,
            commands::list_models,
            commands::list_effort,
            commands::list_tools,
            commands::list_skills,
            commands::app_info,
            commands::recent_workspaces,
            commands::add_recent_workspace,
            commands::open_log,
            terminal::terminal_open,
            terminal::terminal_attach,
            terminal::terminal_write,
            terminal::terminal_resize,
            terminal::terminal_close,
        ])
        .setup(|app| {
            let handle = app.handle().clone();
            let loom = app.state::<Arc<Loom>>().inner().clone();
            tauri::async_runtime::spawn(forward::forward_patches(handle.clone(), loom.clone()));
            tauri::async_runtime::spawn(shutdown_on_signal(handle, loom));
            Ok(())
        })
        .build(tauri::generate_context!())
        .context("building the window")?;

    app.run(move |_handle, event| {
        if let RunEvent::Exit = event {
            tracing::info!("exiting: closing terminals, shutting the kernel down");
            tauri::async_runtime::block_on(async {
                terminal::close_all(&terminals, &loom).await;
                loom.shutdown().await;
            });
        }
    });
    Ok(())
}

/// SIGTERM, SIGINT or SIGHUP: stop every turn, let drivers release their processes, exit.
async fn shutdown_on_signal(handle: tauri::AppHandle, loom: Arc<Loom>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            tracing::warn!("cannot listen for signals; agents are stopped only on a normal exit");
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
            _ = hup.recv() => {}
        }
        tracing::info!("signal received: shutting the kernel down");
        loom.shutdown().await;
        handle.exit(0);
    }
    #[cfg(not(unix))]
    {
        let _ = (handle, loom);
    }
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
