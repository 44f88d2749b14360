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
mod reader;
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

/// This build's version, sent in every hello.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// How many pushed events wait for the surface; past that they are dropped and the
/// surface is resynced once it reads again (see [`reader`]), so its replies never wait
/// behind them.
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

pub(crate) type Waiters = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, WireError>>>>>;

/// One connection to the kernel service. Cheap to share behind an `Arc`; requests may
/// be sent from many tasks at once.
pub struct Client {
    out: mpsc::Sender<Bytes>,
    waiters: Waiters,
    catchup: Arc<Mutex<reader::Catchup>>,
    next_id: Arc<AtomicU64>,
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
        let (mut sink, stream) = Framed::new(stream, frame::codec()).split();
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
        let catchup: Arc<Mutex<reader::Catchup>> = Arc::default();
        let next_id = Arc::new(AtomicU64::new(1));
        tokio::spawn(reader::read(
            stream,
            reader::Shared {
                waiters: waiters.clone(),
                catchup: catchup.clone(),
                next_id: next_id.clone(),
                out: out.downgrade(),
            },
            events_tx,
        ));
        let mut client = Client {
            out,
            waiters,
            catchup,
            next_id,
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
        if let ClientRequest::DetachTerminal { session_key } = &request {
            self.catchup.lock().detached(session_key);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::UnixListener;

    /// A stand-in daemon that greets, then answers the next request with an error it
    /// cannot attribute (id 0), as the daemon does for a frame whose id it cannot read.
    async fn unattributable_daemon(listener: UnixListener) {
        let Ok((socket, _)) = listener.accept().await else {
            return;
        };
        let mut framed = Framed::new(socket, frame::codec());
        let mut answered_hello = false;
        while let Some(Ok(bytes)) = framed.next().await {
            let Ok(frame::ClientFrame::Message(msg)) = frame::decode_client(&bytes) else {
                continue;
            };
            let reply = if answered_hello {
                ServerMessage::Error {
                    id: 0,
                    error: WireError::new(ErrorCode::BadRequest, "bad message: no id"),
                }
            } else {
                answered_hello = true;
                let welcome = Welcome {
                    version: VERSION.into(),
                    pid: 1,
                    scopes: Vec::new(),
                    restarting: false,
                };
                ServerMessage::Reply {
                    id: msg.id,
                    result: serde_json::to_value(welcome).unwrap_or_default(),
                }
            };
            if framed.send(frame::encode_json(&reply)).await.is_err() {
                return;
            }
        }
    }

    #[tokio::test]
    async fn an_error_the_daemon_cannot_attribute_fails_the_request_instead_of_hanging() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        let listener = UnixListener::bind(home.socket()).unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(unattributable_daemon(listener));
        let hello = Hello {
            version: VERSION.into(),
            surface: "test".into(),
            env: None,
            token: None,
        };
        let (client, _events) = Client::connect(&home, hello)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let reply = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            client.request(ClientRequest::ListAgentInfo {}),
        )
        .await
        .unwrap_or_else(|_| panic!("the request still waits for a reply that never comes"));
        let error = reply
            .err()
            .unwrap_or_else(|| panic!("an error was expected"));
        assert_eq!(error.code, ErrorCode::BadRequest);
        assert_eq!(error.message, "bad message: no id");
    }
}
