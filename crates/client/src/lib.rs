//! How every surface reaches the kernel service (`weft daemon`): the socket of a
//! `WEFT_HOME` ([`Home`]), its framing ([`frame`]), starting a daemon when none runs
//! ([`start`]), and a [`Client`] that sends requests and hands over what the daemon
//! pushes (patches, terminal frames, resyncs) as [`Event`]s.
//!
//! A client never holds kernel state: a connection that drops loses nothing but its
//! subscriptions, which a surface re-makes after reconnecting (and re-reads its
//! snapshots).

pub mod attention;
pub mod frame;
pub mod paths;
pub mod start;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::Framed;
use weft_protocol::{
    ClientEnv, ClientMessage, ClientRequest, ErrorCode, Hello, ServerMessage, TerminalFrame,
    TerminalInput, Welcome, WireError,
};

pub use paths::Home;

use frame::ServerFrame;

/// This build's version, sent in every hello.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// How many pushed events wait for the surface before the socket stops being read
/// (and the daemon, seeing this client fall behind, resyncs it instead of queueing).
const EVENTS: usize = 4096;
/// How many outgoing frames wait to be written.
const OUTGOING: usize = 1024;

/// What the daemon pushes.
#[derive(Debug)]
pub enum Event {
    /// A patch, a resync request, or the daemon's goodbye.
    Message(ServerMessage),
    /// Output of a terminal this connection is attached to.
    Terminal(TerminalFrame),
    /// The connection ended (the daemon stopped, crashed or restarted).
    Disconnected(String),
}

/// Why a connection could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing listens on the socket.
    #[error("no Weft daemon is running for {home}")]
    NotRunning {
        /// The home.
        home: String,
    },
    /// The socket or the handshake failed.
    #[error("cannot reach the Weft daemon: {0}")]
    Io(#[from] std::io::Error),
    /// The daemon refused the hello.
    #[error("the Weft daemon refused this client: {0}")]
    Refused(WireError),
    /// The socket took the connection but closed it before answering the hello: a
    /// daemon on its way out (killed, its last threads still exiting).
    #[error("the Weft daemon of {home} closed the connection before answering")]
    Closing {
        /// The home.
        home: String,
    },
    /// Starting a daemon failed.
    #[error("{0}")]
    Start(String),
}

type Waiters = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, WireError>>>>>;

/// One connection to the kernel service. Cheap to share behind an `Arc`; requests may
/// be sent from many tasks at once.
pub struct Client {
    out: mpsc::Sender<Bytes>,
    waiters: Waiters,
    next_id: AtomicU64,
    welcome: Welcome,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("welcome", &self.welcome)
            .finish_non_exhaustive()
    }
}

/// A hello for `surface` carrying this process's environment (what a CLI sends, so
/// the agents of its turns see what its shell set).
pub fn hello_with_env(surface: &str) -> Hello {
    Hello {
        version: VERSION.to_string(),
        surface: surface.to_string(),
        env: Some(ClientEnv(std::env::vars().collect())),
        token: None,
    }
}

const GONE: &str = "the connection to the Weft daemon closed";

fn gone() -> WireError {
    WireError::new(ErrorCode::Internal, GONE)
}

impl Client {
    /// Connects to the daemon of `home` (none running: [`ClientError::NotRunning`]) and
    /// says hello.
    pub async fn connect(
        home: &Home,
        hello: Hello,
    ) -> Result<(Client, mpsc::Receiver<Event>), ClientError> {
        let stream = match UnixStream::connect(home.socket()).await {
            Ok(s) => s,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                ) =>
            {
                return Err(ClientError::NotRunning {
                    home: home.dir().display().to_string(),
                })
            }
            Err(e) => return Err(ClientError::Io(e)),
        };
        let (mut sink, mut stream) = Framed::new(stream, frame::codec()).split();
        let (out, mut outgoing) = mpsc::channel::<Bytes>(OUTGOING);
        let (events_tx, events) = mpsc::channel(EVENTS);
        let waiters: Waiters = Arc::default();
        tokio::spawn(async move {
            while let Some(bytes) = outgoing.recv().await {
                if sink.send(bytes).await.is_err() {
                    break;
                }
            }
        });
        let reader_waiters = waiters.clone();
        tokio::spawn(async move {
            let why = loop {
                let bytes = match stream.next().await {
                    Some(Ok(b)) => b,
                    Some(Err(e)) => break format!("the connection failed: {e}"),
                    None => break "the daemon closed the connection".to_string(),
                };
                let event = match frame::decode_server(&bytes) {
                    Ok(ServerFrame::Message(ServerMessage::Reply { id, result })) => {
                        if let Some(w) = reader_waiters.lock().remove(&id) {
                            let _ = w.send(Ok(result));
                        }
                        continue;
                    }
                    Ok(ServerFrame::Message(ServerMessage::Error { id, error })) => {
                        if let Some(w) = reader_waiters.lock().remove(&id) {
                            let _ = w.send(Err(error));
                        }
                        continue;
                    }
                    Ok(ServerFrame::Message(m)) => Event::Message(m),
                    Ok(ServerFrame::Terminal(t)) => Event::Terminal(t),
                    Err(e) => {
                        tracing::warn!("ignoring a frame from the daemon: {e}");
                        continue;
                    }
                };
                if events_tx.send(event).await.is_err() {
                    // Nobody listens for pushed events; replies still matter.
                    continue;
                }
            };
            // Whoever still waits for a reply gets an error, not a hang.
            reader_waiters.lock().clear();
            let _ = events_tx.send(Event::Disconnected(why)).await;
        });
        let mut client = Client {
            out,
            waiters,
            next_id: AtomicU64::new(1),
            welcome: Welcome {
                version: String::new(),
                pid: 0,
                scopes: Vec::new(),
                restarting: false,
            },
        };
        client.welcome = client
            .call(ClientRequest::Hello(hello))
            .await
            .map_err(|e| {
                if e.code == ErrorCode::Internal && e.message == GONE {
                    ClientError::Closing {
                        home: home.dir().display().to_string(),
                    }
                } else {
                    ClientError::Refused(e)
                }
            })?;
        Ok((client, events))
    }

    /// What the daemon said to our hello.
    pub fn welcome(&self) -> &Welcome {
        &self.welcome
    }

    /// Sends a request and waits for its reply.
    pub async fn request(&self, request: ClientRequest) -> Result<Value, WireError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().insert(id, tx);
        let bytes = frame::encode_json(&ClientMessage { id, request });
        if self.out.send(bytes).await.is_err() {
            self.waiters.lock().remove(&id);
            return Err(gone());
        }
        rx.await.unwrap_or_else(|_| Err(gone()))
    }

    /// Sends a request and reads its reply as `T`.
    pub async fn call<T: DeserializeOwned>(&self, request: ClientRequest) -> Result<T, WireError> {
        let value = self.request(request).await?;
        serde_json::from_value(value).map_err(|e| {
            WireError::new(
                ErrorCode::Internal,
                format!("an unexpected reply from the daemon: {e}"),
            )
        })
    }

    /// Raw keystrokes for an attached terminal.
    pub async fn send_input(&self, session_key: &str, data: &[u8]) -> Result<(), WireError> {
        let frame = TerminalInput {
            session_key: session_key.to_string(),
            data: data.to_vec(),
        };
        self.out
            .send(Bytes::from(frame.encode()))
            .await
            .map_err(|_| gone())
    }
}
