//! The windows' commands: one generic `weft_request` that forwards any verb of the wire
//! to the daemon, `weft_connect` that hands over a window's channel for what the
//! daemon pushes, and the shell's own few (workspaces, log, quit, the tray's count, a
//! pop-out window). No verb is listed here:
//! adding one touches the protocol, the kernel and the UI only.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State, Webview};
use weft_protocol::{ClientRequest, ErrorCode, ExportFormat, Welcome, WireError};

use crate::link::Link;
use crate::{workspaces, AppConfig};

type Reply<T> = Result<T, WireError>;

/// Connects the window: `on_message` receives every pushed message (JSON) and
/// terminal frame (bytes). Answers what the daemon said to the hello.
/// Each window (the main one, a pop-out) connects its own channel.
#[tauri::command]
pub async fn weft_connect(
    app: AppHandle,
    webview: Webview,
    link: State<'_, Arc<Link>>,
    on_message: Channel,
) -> Reply<Welcome> {
    link.window_connected(webview.label(), on_message).await;
    link.welcome(&app).await
}

/// Forwards one request to the daemon and answers its reply: to the host its names
/// say (`HOST/agent:id`, `HOST:/path`), or to `host` when the window names one (a view
/// showing one host's library, usage, agents or accounts; `local`: this machine).
#[tauri::command]
pub async fn weft_request(
    app: AppHandle,
    webview: Webview,
    link: State<'_, Arc<Link>>,
    request: ClientRequest,
    host: Option<String>,
) -> Reply<Value> {
    window_may_send(&request)?;
    match host.as_deref() {
        None => link.request_from(&app, webview.label(), request).await,
        Some(host) => link.request_on(&app, Some(host), request).await,
    }
}

/// The number of questions waiting, for the tray icon (its tooltip, its title where
/// the platform shows one, its menu). Where there is no tray icon, nothing happens.
#[tauri::command]
pub fn set_inbox_count<R: Runtime>(app: AppHandle<R>, count: u32) -> Reply<()> {
    crate::tray::set_count(&app, count)
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("the tray icon: {e}")))
}

/// Opens the app at `hash` (an address of the app, `#/s/<key>`) in a window of its own,
/// or brings forward the pop-out already showing it. The address is the page's, so it
/// is checked (`#/` and printable ASCII, bounded: popout.rs).
#[tauri::command]
pub async fn open_window<R: Runtime>(app: AppHandle<R>, hash: String) -> Reply<()> {
    crate::popout::open(&app, &hash).map(|_| ()).map_err(|e| {
        let code = match e {
            crate::popout::OpenError::Address(_) => ErrorCode::BadRequest,
            crate::popout::OpenError::Window(_) => ErrorCode::Internal,
        };
        WireError::new(code, e.to_string())
    })
}

/// The window's requests reach the daemon over the owner's socket, where a path is
/// trusted as the owner's: a path to write an export to comes only from the save
/// dialog (`export_session`), never from the window.
fn window_may_send(request: &ClientRequest) -> Reply<()> {
    match request {
        ClientRequest::ExportSessionToFile { .. } => Err(WireError::new(
            ErrorCode::Forbidden,
            "the window exports through the save dialog, not to a path of its own",
        )),
        _ => Ok(()),
    }
}

/// The Library's Export: the user picks where it goes in the dialog plugin's save
/// dialog, and the daemon renders the session there (`exportSessionToFile`, 0644, a
/// page of the transcript at a time, so a session of any size exports). Answers the
/// path written, or none when the user cancelled.
///
/// Why here and not the dialog's `save()` in the window plus a write: the path never
/// comes from the window, so the window (whatever script runs in it) can have a
/// session written only where the user chose in a dialog; it gets no file-writing
/// command, no `dialog:allow-save`, and `weft_request` refuses it the daemon's
/// path-taking verb (over the socket the window's requests reach, a path would be
/// trusted as the owner's).
#[tauri::command]
pub async fn export_session(
    app: AppHandle,
    link: State<'_, Arc<Link>>,
    session_key: String,
    format: ExportFormat,
) -> Reply<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let (name, ext, kind) = crate::export::file_name(&session_key, format);
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Export the session")
        .set_file_name(name)
        .add_filter(kind, &[ext])
        .save_file(move |picked| {
            let _ = tx.send(picked);
        });
    let Some(picked) = rx.await.ok().flatten() else {
        return Ok(None);
    };
    let path = picked
        .into_path()
        .map_err(|e| WireError::new(ErrorCode::BadRequest, format!("that path: {e}")))?;
    // The daemon writes it a page at a time (the dialog asked before an overwrite):
    // no reply has to carry the whole document.
    let request = ClientRequest::ExportSessionToFile {
        session_key,
        format,
        path: path.display().to_string(),
    };
    link.request(&app, request).await?;
    tracing::info!(path = %path.display(), "exported a session");
    Ok(Some(path.display().to_string()))
}

/// Quit from the menu: stop the daemon (every turn and terminal ends), then exit.
#[tauri::command]
pub async fn quit(app: AppHandle, link: State<'_, Arc<Link>>) -> Reply<()> {
    crate::quit(&app, link.inner()).await;
    Ok(())
}

/// What the window shows about the app itself.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    version: String,
    state_dir: String,
    log_path: String,
    initial_workspace: Option<String>,
}

#[tauri::command]
pub fn app_info(config: State<'_, AppConfig>) -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        state_dir: config.state_dir.display().to_string(),
        log_path: config.log_dir.display().to_string(),
        initial_workspace: config.initial_workspace.clone(),
    }
}

#[tauri::command]
pub fn recent_workspaces(config: State<'_, AppConfig>, link: State<'_, Arc<Link>>) -> Vec<String> {
    workspaces::load(&config.state_dir, &link.remotes.names())
}

#[tauri::command]
pub fn add_recent_workspace(
    config: State<'_, AppConfig>,
    link: State<'_, Arc<Link>>,
    path: String,
) -> Reply<Vec<String>> {
    workspaces::remember(&config.state_dir, &path, &link.remotes.names())
        .map_err(|e| WireError::new(ErrorCode::BadWorkdir, format!("workspace `{path}`: {e}")))
}

/// Forgets a recent workspace (its folder and sessions are untouched).
#[tauri::command]
pub fn remove_recent_workspace(
    config: State<'_, AppConfig>,
    link: State<'_, Arc<Link>>,
    path: String,
) -> Reply<Vec<String>> {
    workspaces::forget(&config.state_dir, &path, &link.remotes.names()).map_err(|e| {
        WireError::new(
            ErrorCode::Internal,
            format!("forgetting workspace `{path}`: {e}"),
        )
    })
}

/// Copies a host's file (an artifact of a remote session, a tool call's path; named as
/// `open_path` names it) to this machine where the user picks in a save dialog: read
/// through the host's daemon (at most 16 MiB), written there (0600). The path is the
/// dialog's, never the window's: no `dialog:allow-save` for the page. `None`: the dialog
/// was cancelled. A file of this machine is refused (it is here already).
#[tauri::command]
pub async fn save_remote_file(
    app: AppHandle,
    link: State<'_, Arc<Link>>,
    path: String,
    workdir: Option<String>,
) -> Reply<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let Some((host, own)) =
        crate::remote_file::remote_target(&path, workdir.as_deref(), &link.remotes.names())
    else {
        return Err(WireError::new(
            ErrorCode::BadRequest,
            format!("{path} is a file of this machine: there is nothing to copy"),
        ));
    };
    let link = link.inner().clone();
    let (own, bytes) = crate::remote_file::read(&link, &app, &host, &own).await?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut dialog = app
        .dialog()
        .file()
        .set_title(format!("Copy {host}:{own} to this machine"))
        .set_file_name(crate::remote_file::download_name(&own));
    if let Some(downloads) = dirs_downloads() {
        dialog = dialog.set_directory(downloads);
    }
    dialog.save_file(move |picked| {
        let _ = tx.send(picked);
    });
    let Some(picked) = rx.await.ok().flatten() else {
        return Ok(None);
    };
    let dest = picked
        .into_path()
        .map_err(|e| WireError::new(ErrorCode::BadRequest, format!("that path: {e}")))?;
    crate::remote_file::save(&dest, &bytes).map_err(|e| {
        WireError::new(
            ErrorCode::Internal,
            format!("copying {host}:{own} to {}: {e}", dest.display()),
        )
    })?;
    tracing::info!(host, path = own, to = %dest.display(), "copied a host's file to this machine");
    Ok(Some(dest.display().to_string()))
}

/// `~/Downloads` (the XDG folder's usual name), when it exists.
fn dirs_downloads() -> Option<std::path::PathBuf> {
    let dir = std::path::PathBuf::from(std::env::var_os("HOME")?).join("Downloads");
    dir.is_dir().then_some(dir)
}

/// Opens a file an agent pointed at (an artifact, a tool call's path; relative paths
/// are the session folder's): the configured editor, else the desktop's handler; with
/// `reveal`, the file manager shows it. Never through a shell. A host's file (its
/// session's folder, or the path, named `HOST:/…`) is read through that host's daemon
/// and opened as a copy on this machine ([`crate::remote_file`]).
#[tauri::command]
pub async fn open_path(
    app: AppHandle,
    config: State<'_, AppConfig>,
    link: State<'_, Arc<Link>>,
    path: String,
    workdir: Option<String>,
    reveal: bool,
) -> Reply<()> {
    use tauri_plugin_opener::OpenerExt;
    let bad = |m: String| WireError::new(ErrorCode::BadRequest, m);
    let remote =
        crate::remote_file::remote_target(&path, workdir.as_deref(), &link.remotes.names());
    let target = match remote {
        Some((host, own)) => {
            let link = link.inner().clone();
            crate::remote_file::fetch(&link, &app, &config.state_dir, &host, &own).await?
        }
        None => crate::open::resolve(&path, workdir.as_deref()).map_err(bad)?,
    };
    let how = if reveal {
        crate::open::How::Reveal
    } else {
        crate::open::how(&target, config.open_with.as_deref())
    };
    tracing::info!(path = %target.display(), ?how, "opening a file");
    let failed = |e: String| {
        WireError::new(
            ErrorCode::Internal,
            format!("cannot open {}: {e}", target.display()),
        )
    };
    match how {
        crate::open::How::Run(program, args) => {
            crate::open::run(&program, &args).map_err(|e| failed(format!("{program}: {e}")))
        }
        crate::open::How::Default => app
            .opener()
            .open_path(target.display().to_string(), None::<&str>)
            .map_err(|e| failed(e.to_string())),
        crate::open::How::Reveal => app
            .opener()
            .reveal_item_in_dir(&target)
            .map_err(|e| failed(e.to_string())),
    }
}

/// Fetches a remote image the user asked to see (the page's CSP loads none itself):
/// https only, size- and time-limited; the page gets it as a `data:` URL.
#[tauri::command]
pub async fn fetch_image(url: String) -> Reply<String> {
    let bad =
        |e: crate::remote_image::ImageError| WireError::new(ErrorCode::BadRequest, e.to_string());
    let parsed = crate::remote_image::parse(&url).map_err(bad)?;
    let client = crate::remote_image::client().map_err(bad)?;
    tracing::info!(
        host = parsed.host_str().unwrap_or(""),
        "loading a remote image the user asked for"
    );
    crate::remote_image::fetch(&client, parsed, crate::remote_image::MAX_BYTES)
        .await
        .map_err(bad)
}

/// Keeps the main window's size for the next window: its inner size as the window
/// system has it (the menu bar included, as `set_size` takes it), not the page's. A
/// pop-out's size is not kept (it would become the main window's).
#[tauri::command]
pub fn save_window_size(window: tauri::WebviewWindow, config: State<'_, AppConfig>) -> Reply<()> {
    if window.label() != crate::main_window::LABEL {
        return Ok(());
    }
    let internal = |e: tauri::Error| WireError::new(ErrorCode::Internal, e.to_string());
    let scale = window.scale_factor().map_err(internal)?;
    let size = window
        .inner_size()
        .map_err(internal)?
        .to_logical::<f64>(scale);
    crate::window_size::save(&config.state_dir, size.width, size.height)
        .map_err(|e| WireError::new(ErrorCode::BadRequest, e))
}

/// Opens the newest log file with the desktop's default viewer.
#[tauri::command]
pub fn open_log(config: State<'_, AppConfig>) -> Reply<()> {
    let path =
        crate::logging::newest_log(&config.log_dir).unwrap_or_else(|| config.log_dir.clone());
    std::process::Command::new("xdg-open")
        .arg(&path)
        .spawn()
        .map(|mut child| {
            // Reap it when it exits, so it leaves no zombie.
            std::thread::spawn(move || child.wait());
        })
        .map_err(|e| {
            WireError::new(
                ErrorCode::Internal,
                format!("cannot open the log ({e}); it is at {}", path.display()),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauri::ipc::{CallbackFn, InvokeBody};
    use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
    use tauri::webview::InvokeRequest;
    use tauri::Manager;

    fn invoke(
        window: &tauri::WebviewWindow<MockRuntime>,
        cmd: &str,
        body: Value,
    ) -> Result<Value, Value> {
        let request = InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost"
                .parse()
                .unwrap_or_else(|e| panic!("{e}")),
            body: InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        };
        get_ipc_response(window, request)
            .map(|b| b.deserialize::<Value>().unwrap_or_else(|e| panic!("{e}")))
    }

    /// capabilities/main.json grants a pop-out (`popout-*`) what it grants the main
    /// window, and no other window anything; `open_window` checks the address.
    #[test]
    fn pop_outs_have_the_main_windows_commands_and_other_windows_none() {
        let app = mock_builder()
            .invoke_handler(tauri::generate_handler![set_inbox_count, open_window])
            .build(tauri::generate_context!(test = true))
            .unwrap_or_else(|e| panic!("{e}"));
        for (label, granted) in [("main", true), ("popout-7", true), ("other", false)] {
            let window = tauri::WebviewWindowBuilder::new(&app, label, Default::default())
                .build()
                .unwrap_or_else(|e| panic!("{e}"));
            let count = invoke(&window, "set_inbox_count", serde_json::json!({"count": 2}));
            assert_eq!(count.is_ok(), granted, "{label}: {count:?}");
            let bad = invoke(
                &window,
                "open_window",
                serde_json::json!({"hash": "https://evil.example/"}),
            );
            let refused = bad.err().map(|e| e.to_string()).unwrap_or_default();
            if granted {
                assert!(refused.contains("badRequest"), "{label}: {refused}");
            } else {
                assert!(!refused.contains("badRequest"), "{label}: {refused}");
            }
        }
        let opened = app.webview_windows().len();
        let main = app
            .get_webview_window("main")
            .unwrap_or_else(|| panic!("the main window"));
        assert_eq!(
            invoke(
                &main,
                "open_window",
                serde_json::json!({"hash": "#/s/echo%3Aa"})
            ),
            Ok(Value::Null)
        );
        assert_eq!(app.webview_windows().len(), opened + 1);
    }

    #[test]
    fn the_window_cannot_name_a_path_for_the_daemon_to_write() {
        let to_file = ClientRequest::ExportSessionToFile {
            session_key: "echo:a".into(),
            format: ExportFormat::Markdown,
            path: "/home/u/.bashrc".into(),
        };
        let refused = window_may_send(&to_file).err().map(|e| e.code);
        assert_eq!(refused, Some(ErrorCode::Forbidden));
        let as_text = ClientRequest::ExportSession {
            session_key: "echo:a".into(),
            format: ExportFormat::Markdown,
        };
        assert!(window_may_send(&as_text).is_ok());
    }
}

/// The hosts of the user's list (`weft hosts add`, or the host picker), each with its
/// link's state (`local`, this machine, is not listed: it is always there).
#[tauri::command]
pub fn hosts_list(link: State<'_, Arc<Link>>) -> Vec<crate::hosts::HostLinkState> {
    link.remotes.states()
}

/// Adds a host, as `weft hosts add NAME DESTINATION` does (first contact copies this
/// weft there), and connects to its daemon.
#[tauri::command]
pub async fn hosts_add(
    link: State<'_, Arc<Link>>,
    name: String,
    destination: String,
) -> Reply<Vec<crate::hosts::HostLinkState>> {
    crate::hosts::add(&name, &destination).await?;
    let link = link.inner().clone();
    link.remotes.client(&name, link.windows()).await?;
    link.to_windows(tauri::ipc::InvokeResponseBody::Json(
        crate::hosts::resync_all().to_string(),
    ));
    Ok(link.remotes.states())
}

/// Removes a host, as `weft hosts remove NAME` does (Weft's daemon there stopped, its
/// binaries removed, its sessions and state left), and drops its link.
#[tauri::command]
pub async fn hosts_remove(
    link: State<'_, Arc<Link>>,
    name: String,
) -> Reply<Vec<crate::hosts::HostLinkState>> {
    let link = link.inner().clone();
    link.remotes.forget(&name);
    let done = crate::hosts::run_weft(&["hosts", "remove", "--", &name]).await;
    link.to_windows(tauri::ipc::InvokeResponseBody::Json(
        crate::hosts::resync_all().to_string(),
    ));
    done.map(|_| link.remotes.states())
}

/// The forwards of hosts' ports to this machine, as `weft hosts forward --list --json`
/// reports them (each with whether it still listens).
#[tauri::command]
pub async fn hosts_forwards() -> Reply<Value> {
    json_of(crate::hosts::run_weft(&["hosts", "forward", "--list", "--json"]).await?)
}

/// Opens host `name`'s `port` (`PORT` or `PORT:LOCALPORT`) on this machine's loopback
/// through its shared ssh connection, as `weft hosts forward NAME PORT` does — or, with
/// `cancel`, closes that forward of the host's PORT. Answers the forwards after.
#[tauri::command]
pub async fn hosts_forward(name: String, port: String, cancel: bool) -> Reply<Value> {
    let (remote, _) = weft_hosts::forward::parse(&port)
        .map_err(|e| WireError::new(ErrorCode::BadRequest, e.to_string()))?;
    if cancel {
        let remote = remote.to_string();
        crate::hosts::run_weft(&["hosts", "forward", "--cancel", "--", &name, &remote]).await?;
    } else {
        crate::hosts::run_weft(&["hosts", "forward", "--", &name, &port]).await?;
    }
    hosts_forwards().await
}

fn json_of(out: String) -> Reply<Value> {
    serde_json::from_str(&out).map_err(|e| {
        WireError::new(
            ErrorCode::Internal,
            format!("weft said something else than JSON: {e}"),
        )
    })
}

/// Each host's daemon as `weft hosts status --json` reports it (`local` first).
#[tauri::command]
pub async fn hosts_status() -> Reply<Value> {
    let out = crate::hosts::run_weft(&["hosts", "status", "--json"]).await?;
    serde_json::from_str(&out).map_err(|e| {
        WireError::new(
            ErrorCode::Internal,
            format!("weft hosts status said something else than JSON: {e}"),
        )
    })
}
