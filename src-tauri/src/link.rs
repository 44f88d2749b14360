//! The window's link to the kernel service: one connection to the user's daemon
//! (started if none runs), every request forwarded as it is, everything the daemon
//! pushes (patches, terminal frames, resyncs) handed to the window on one channel.
//!
//! When the daemon goes away (killed, restarted for another version) the link
//! reconnects — starting a new one — re-subscribes to every session and tells the
//! window to resync, so the window never shows stale state and loses nothing the
//! daemon kept.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;
use tauri::ipc::{Channel, InvokeResponseBody};
use tauri::AppHandle;
use tokio::sync::mpsc;
use weft_client::{Client, Event, Home};
use weft_protocol::{ClientRequest, ErrorCode, ServerMessage, Welcome, WireError};

/// The connection, the window's channel, and the notification state.
#[derive(Default)]
pub struct Link {
    client: Mutex<Option<Arc<Client>>>,
    window: Mutex<Option<Channel>>,
    /// Serializes (re)connecting.
    connecting: tokio::sync::Mutex<()>,
}

fn unavailable(e: impl std::fmt::Display) -> WireError {
    WireError::new(
        ErrorCode::Internal,
        format!("the Weft daemon is not reachable: {e}"),
    )
}

impl Link {
    /// The window's channel for pushed messages (a reload replaces it).
    pub fn set_window(&self, channel: Channel) {
        *self.window.lock() = Some(channel);
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
        // The window shows every session: it gets every session's patches.
        client
            .request(ClientRequest::SubscribeAll {})
            .await
            .map_err(unavailable)?;
        *self.client.lock() = Some(client.clone());
        tokio::spawn(
            self.clone()
                .pump(app.clone(), client.clone(), connected.events),
        );
        Ok(client)
    }

    /// What the daemon said when the window connected.
    pub async fn welcome(self: &Arc<Self>, app: &AppHandle) -> Result<Welcome, WireError> {
        Ok(self.client(app).await?.welcome().clone())
    }

    /// Forwards one request.
    pub async fn request(
        self: &Arc<Self>,
        app: &AppHandle,
        request: ClientRequest,
    ) -> Result<Value, WireError> {
        let client = self.client(app).await?;
        client.request(request).await
    }

    fn to_window(&self, body: InvokeResponseBody) -> bool {
        match self.window.lock().as_ref() {
            Some(channel) => channel.send(body).is_ok(),
            None => false,
        }
    }

    fn message_to_window(&self, message: &ServerMessage) {
        match serde_json::to_string(message) {
            Ok(json) => {
                self.to_window(InvokeResponseBody::Json(json));
            }
            Err(e) => tracing::warn!("cannot encode a message for the window: {e}"),
        }
    }

    /// Hands pushed events to the window until the connection ends, then reconnects.
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
                    self.message_to_window(&message);
                }
                Some(Event::Terminal(frame)) => {
                    self.to_window(InvokeResponseBody::Raw(frame.encode()));
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
        // Everything the window shows is re-read from the new connection.
        self.message_to_window(&ServerMessage::Resync { session_key: None });
    }
}
