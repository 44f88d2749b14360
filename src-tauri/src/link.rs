//! The windows' link to the kernel service: one connection to the user's daemon
//! (started if none runs), every request forwarded as it is, everything the daemon
//! pushes (patches, terminal frames, resyncs) handed to every open window, each on its
//! own channel (the main window and any pop-out: each page is its own client of the
//! daemon over this one connection, subscribed to every session).
//!
//! When the daemon goes away (killed, restarted for another version) the link
//! reconnects — starting a new one — re-subscribes to every session and tells the
//! windows to resync, so no window shows stale state and none loses anything the
//! daemon kept.
//!
//! The daemon keeps one terminal attachment per connection, so the link counts which
//! window watches which terminal ([`TerminalWatchers`]): one window's detach does not
//! stop another's terminal.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;
use tauri::ipc::{Channel, InvokeResponseBody};
use tauri::AppHandle;
use tokio::sync::mpsc;
use weft_client::{Client, Event, Home};
use weft_protocol::{ClientRequest, ErrorCode, ServerMessage, Welcome, WireError};

use crate::hosts::{Remotes, Windows};
use crate::terminal_watch::TerminalWatchers;

/// The connection, each window's channel, and who watches which terminal.
#[derive(Default)]
pub struct Link {
    client: Mutex<Option<Arc<Client>>>,
    /// Each open window's channel for pushed messages, by window label.
    windows: Mutex<BTreeMap<String, Channel>>,
    terminals: Mutex<TerminalWatchers>,
    /// Serializes (re)connecting.
    connecting: tokio::sync::Mutex<()>,
    /// The other machines' daemons (crates/hosts), each its own link.
    pub remotes: Arc<Remotes>,
    /// The app, for the hosts' notifications (set at start and by the first connect).
    app: std::sync::OnceLock<AppHandle>,
}

/// The windows, as a host's link hands them what it pushes.
struct LinkWindows(Arc<Link>);

impl Windows for LinkWindows {
    fn message(&self, message: Value) {
        self.0
            .to_windows(InvokeResponseBody::Json(message.to_string()));
    }

    fn frame(&self, frame: Vec<u8>) {
        self.0.to_windows(InvokeResponseBody::Raw(frame));
    }

    fn notify(&self, notice: weft_client::attention::Notice) {
        match self.0.app.get() {
            Some(app) => crate::forward::notify_if_unseen(app, &notice),
            None => tracing::debug!("no app to notify of {}", notice.title),
        }
    }
}

/// A wire request's kind (its `type`).
fn kind(wire: &Value) -> Option<&str> {
    wire.get("type").and_then(Value::as_str)
}

fn unavailable(e: impl std::fmt::Display) -> WireError {
    WireError::new(
        ErrorCode::Internal,
        format!("the Weft daemon is not reachable: {e}"),
    )
}

impl Link {
    /// The app this link serves (its notifications are raised through it).
    pub fn set_app(&self, app: &AppHandle) {
        self.app.get_or_init(|| app.clone());
    }

    /// The page of the window `label` connected (its first load or a reload, which
    /// replaces the channel). A page that connects has no terminal pane yet: whatever
    /// the window watched before a reload is let go.
    pub async fn window_connected(&self, label: &str, channel: Channel) {
        self.windows.lock().insert(label.to_string(), channel);
        self.release_terminals(label).await;
    }

    /// The window `label` closed: nothing more is sent to it, and the terminals only it
    /// watched are detached.
    pub async fn window_closed(&self, label: &str) {
        self.windows.lock().remove(label);
        self.release_terminals(label).await;
    }

    /// Detaches the terminals no window but `label` watched (on the live connection;
    /// none is started for it).
    async fn release_terminals(&self, label: &str) {
        let orphaned = self.terminals.lock().window_gone(label);
        if orphaned.is_empty() {
            return;
        }
        let client = self.client.lock().clone();
        let Some(client) = client else { return };
        for session_key in orphaned {
            let detach = ClientRequest::DetachTerminal {
                session_key: session_key.clone(),
            };
            if let Err(e) = client.request(detach).await {
                tracing::debug!(%session_key, label, "letting go of a window's terminal: {e}");
            }
        }
    }

    /// The live connection, connecting (and starting the daemon) if there is none.
    /// (Boxed: connecting starts the pump, which reconnects through here.)
    pub fn client<'a>(
        self: &'a Arc<Self>,
        app: &'a AppHandle,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Arc<Client>, WireError>> + Send + 'a>,
    > {
        Box::pin(self.connect(app))
    }

    async fn connect(self: &Arc<Self>, app: &AppHandle) -> Result<Arc<Client>, WireError> {
        self.set_app(app);
        if let Some(c) = self.client.lock().clone() {
            return Ok(c);
        }
        let _guard = self.connecting.lock().await;
        if let Some(c) = self.client.lock().clone() {
            return Ok(c);
        }
        let connected = weft_client::start::connect_or_start(
            &Home::from_env(),
            weft_client::hello_with_env("app"),
            None,
        )
        .await
        .map_err(unavailable)?;
        if let Some(old) = &connected.restarted {
            tracing::info!(old, "the daemon was restarted for this app's version");
        }
        let client = Arc::new(connected.client);
        // Every window shows every session: the connection gets every session's patches.
        client
            .request(ClientRequest::SubscribeAll {})
            .await
            .map_err(unavailable)?;
        *self.client.lock() = Some(client.clone());
        // A new connection holds no terminal attachment.
        self.terminals.lock().clear();
        tokio::spawn(
            self.clone()
                .pump(app.clone(), client.clone(), connected.events),
        );
        Ok(client)
    }

    /// What the daemon said when the link connected.
    pub async fn welcome(self: &Arc<Self>, app: &AppHandle) -> Result<Welcome, WireError> {
        Ok(self.client(app).await?.welcome().clone())
    }

    /// Where the remote hosts' links hand what they push.
    pub fn windows(self: &Arc<Self>) -> Arc<dyn Windows> {
        Arc::new(LinkWindows(self.clone()))
    }

    /// Forwards one request: to the host it names (`HOST/agent:id`, `HOST:/path`,
    /// crate::route), else to this machine's daemon; the sidebar's and the inbox's
    /// lists come from every connected host together.
    pub async fn request(
        self: &Arc<Self>,
        app: &AppHandle,
        request: ClientRequest,
    ) -> Result<Value, WireError> {
        let names = self.remotes.names();
        if names.is_empty() {
            return self.client(app).await?.request(request).await;
        }
        let mut wire = serde_json::to_value(&request)
            .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?;
        let host = crate::route::target(&mut wire, &names)
            .map_err(|why| WireError::new(ErrorCode::BadRequest, why))?;
        if let Some(host) = host {
            let what = kind(&wire).map(str::to_string);
            let request: ClientRequest = serde_json::from_value(wire)
                .map_err(|e| WireError::new(ErrorCode::BadRequest, e.to_string()))?;
            let client = self.remotes.client(&host, self.windows()).await?;
            let mut reply = client.request(request).await?;
            crate::route::tag_reply(what.as_deref(), &mut reply, &host);
            return Ok(reply);
        }
        let every = crate::route::every_host(&wire);
        let mut reply = self.client(app).await?.request(request.clone()).await?;
        if every {
            let asks = names.into_iter().filter_map(|name| {
                let client = self.remotes.connected(&name)?;
                let request = request.clone();
                Some(async move { (name, client.request(request).await) })
            });
            for (name, answer) in futures::future::join_all(asks).await {
                match answer {
                    Ok(mut rows) => {
                        crate::route::tag_reply(kind(&wire), &mut rows, &name);
                        if let (Some(all), Value::Array(more)) = (reply.as_array_mut(), rows) {
                            all.extend(more);
                        }
                    }
                    Err(e) => tracing::warn!(host = %name, "listing: {e}"),
                }
            }
        }
        Ok(reply)
    }

    /// Forwards one request to host `host`'s daemon (`local` or none: this machine's,
    /// routed as [`Link::request`] does): the views that show one host at a time (the
    /// library, usage, agents, accounts) ask a verb that names no session or folder.
    /// The request's names are that host's own (`agent:id`, `/path`), or named with it
    /// (`HOST/agent:id`); naming another host is refused. The reply is named back.
    pub async fn request_on(
        self: &Arc<Self>,
        app: &AppHandle,
        host: Option<&str>,
        request: ClientRequest,
    ) -> Result<Value, WireError> {
        let host = match host {
            None | Some(crate::route::LOCAL) => return self.request(app, request).await,
            Some(host) => host,
        };
        let names = self.remotes.names();
        if !names.iter().any(|n| n == host) {
            return Err(WireError::new(
                ErrorCode::BadRequest,
                format!("no host {host} in the hosts list (weft hosts add {host} DESTINATION)"),
            ));
        }
        let mut wire = serde_json::to_value(&request)
            .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?;
        match crate::route::target(&mut wire, &names)
            .map_err(|why| WireError::new(ErrorCode::BadRequest, why))?
        {
            Some(named) if named != host => {
                return Err(WireError::new(
                    ErrorCode::BadRequest,
                    format!("the request for host {host} names host {named}"),
                ))
            }
            _ => {}
        }
        let what = kind(&wire).map(str::to_string);
        let request: ClientRequest = serde_json::from_value(wire)
            .map_err(|e| WireError::new(ErrorCode::BadRequest, e.to_string()))?;
        let client = self.remotes.client(host, self.windows()).await?;
        let mut reply = client.request(request).await?;
        crate::route::tag_reply(what.as_deref(), &mut reply, host);
        Ok(reply)
    }

    /// Forwards one request from the window `window`, keeping count of the terminals
    /// it watches: its detach reaches the daemon only when no other window watches.
    pub async fn request_from(
        self: &Arc<Self>,
        app: &AppHandle,
        window: &str,
        request: ClientRequest,
    ) -> Result<Value, WireError> {
        let forward = match &request {
            ClientRequest::AttachTerminal { session_key } => {
                self.terminals.lock().watch(session_key, window);
                true
            }
            ClientRequest::DetachTerminal { session_key } => {
                self.terminals.lock().unwatch(session_key, window)
            }
            ClientRequest::CloseTerminal { session_key } => {
                self.terminals.lock().closed(session_key);
                true
            }
            _ => true,
        };
        if !forward {
            // Another window still watches it: detached for this window only.
            return Ok(Value::Null);
        }
        let opening = matches!(request, ClientRequest::OpenTerminal(_));
        let reply = self.request(app, request).await?;
        if opening {
            // The reply names the new terminal (TerminalAttached).
            if let Some(key) = reply.get("sessionKey").and_then(Value::as_str) {
                self.terminals.lock().watch(key, window);
            }
        }
        Ok(reply)
    }

    /// Hands `body` to every window; a window whose channel fails is only logged (its
    /// close event forgets it).
    pub(crate) fn to_windows(&self, body: InvokeResponseBody) {
        for (label, channel) in self.windows.lock().iter() {
            if let Err(e) = channel.send(body.clone()) {
                tracing::debug!(%label, "a message did not reach the window: {e}");
            }
        }
    }

    fn message_to_windows(&self, message: &ServerMessage) {
        match serde_json::to_string(message) {
            Ok(json) => self.to_windows(InvokeResponseBody::Json(json)),
            Err(e) => tracing::warn!("cannot encode a message for the windows: {e}"),
        }
    }

    /// Hands pushed events to the windows until the connection ends, then reconnects.
    async fn pump(
        self: Arc<Self>,
        app: AppHandle,
        client: Arc<Client>,
        mut events: mpsc::Receiver<Event>,
    ) {
        let mut attention = crate::forward::Attention::default();
        let why = loop {
            match events.recv().await {
                Some(Event::Message(message)) => {
                    if let ServerMessage::Patch(event) = &message {
                        attention.on_patch(&app, event);
                    }
                    if let ServerMessage::Closing { reason } = &message {
                        tracing::info!(%reason, "the daemon is closing");
                    }
                    self.message_to_windows(&message);
                }
                Some(Event::Terminal(frame)) => {
                    self.to_windows(InvokeResponseBody::Raw(frame.encode()));
                }
                Some(Event::Disconnected(why)) => break why,
                None => break "the connection ended".to_string(),
            }
        };
        tracing::warn!(%why, "lost the daemon; reconnecting");
        {
            let mut current = self.client.lock();
            if current.as_ref().is_some_and(|c| Arc::ptr_eq(c, &client)) {
                *current = None;
            }
        }
        drop(client);
        if crate::quitting() {
            return;
        }
        let mut pause = Duration::from_millis(100);
        loop {
            match self.client(&app).await {
                Ok(_) => break,
                Err(e) => {
                    tracing::warn!("reconnecting to the daemon: {e}");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
            }
        }
        // Everything the windows show is re-read from the new connection.
        self.message_to_windows(&ServerMessage::Resync { session_key: None });
    }
}
