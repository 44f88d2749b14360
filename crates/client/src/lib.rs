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
pub mod tls;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::Framed;
use weft_protocol::{
    ClientEnv, ClientMessage, ClientRequest, ErrorCode, Hello, ServerMessage, TerminalFrame,
    TerminalInput, Verb, Welcome, WireError,
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
    /// The socket's folder or the process listening on it is not this user's own:
    /// nothing was sent to it.
    #[error("{0}; nothing was sent to it")]
    Unsafe(String),
}

/// Whether what listens on `home`'s socket is this user's own daemon: the socket's
/// folder is this user's and private ([`paths::check_socket_dir`]) and the listening
/// process runs as this user (`SO_PEERCRED`). Checked before the hello, which carries
/// the client's environment.
pub fn check_listener(home: &Home, stream: &UnixStream) -> Result<(), ClientError> {
    let socket = home.socket();
    if let Some(dir) = socket.parent() {
        paths::check_socket_dir(dir).map_err(|e| ClientError::Unsafe(e.to_string()))?;
    }
    let ours = nix::unistd::getuid().as_raw();
    let theirs = stream.peer_cred().map_err(ClientError::Io)?.uid();
    if theirs != ours {
        return Err(ClientError::Unsafe(format!(
            "the process listening on {} runs as uid {theirs}, not as this user (uid {ours})",
            socket.display()
        )));
    }
    Ok(())
}

/// The requests waiting for their replies; `None` once the reader has ended, so a
/// request made after that fails at once instead of waiting for a reply nobody reads.
pub(crate) type Waiters =
    Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Result<Value, WireError>>>>>>;

/// One connection to the kernel service. Cheap to share behind an `Arc`; requests may
/// be sent from many tasks at once.
pub struct Client {
    out: mpsc::Sender<Bytes>,
    waiters: Waiters,
    catchup: Arc<Mutex<reader::Catchup>>,
    next_id: Arc<AtomicU64>,
    welcome: Welcome,
    /// The reader task, ended by [`Client::close`].
    reader: tokio::task::AbortHandle,
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
        proof: None,
    }
}

/// The proof a socket client sends: the contents of the home's `client.key` (none when
/// it cannot be read: the daemon then refuses the hello and says why).
fn proof_of(home: &Home) -> Option<String> {
    std::fs::read_to_string(home.client_key())
        .ok()
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
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
        mut hello: Hello,
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
        check_listener(home, &stream)?;
        // Read once connected: a daemon that listens has made its key.
        if hello.proof.is_none() {
            hello.proof = proof_of(home);
        }
        let (mut client, events) = Client::over(stream);
        client.welcome = client.send(hello).await.map_err(|e| {
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

    /// Says `hello` over an already connected stream: any byte stream that carries the
    /// socket's framing (a remote host's daemon reached through `ssh … weft proxy`).
    /// Nothing about the peer is checked here: whoever made the stream vouches for it.
    pub async fn connect_over<S>(
        stream: S,
        hello: Hello,
    ) -> Result<(Client, mpsc::Receiver<Event>), ClientError>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
    {
        let (mut client, events) = Client::over(stream);
        client.welcome = client.send(hello).await.map_err(ClientError::Refused)?;
        Ok((client, events))
    }

    /// Ends the connection now: its reader stops and the stream is closed, so the
    /// daemon no longer counts it as a client (dropping a [`Client`] leaves its reader
    /// running until the daemon hangs up, which a caller waiting for the goodbye needs).
    pub fn close(self) {
        self.reader.abort();
    }

    /// A client over a connected stream: its writer and reader tasks started, no hello
    /// said yet.
    fn over<S>(stream: S) -> (Client, mpsc::Receiver<Event>)
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
    {
        let (mut sink, stream) = Framed::new(stream, frame::codec()).split();
        let (out, mut outgoing) = mpsc::channel::<Bytes>(OUTGOING);
        let (events_tx, events) = mpsc::channel(EVENTS);
        let waiters: Waiters = Arc::new(Mutex::new(Some(HashMap::new())));
        tokio::spawn(async move {
            while let Some(bytes) = outgoing.recv().await {
                if sink.send(bytes).await.is_err() {
                    break;
                }
            }
        });
        let catchup: Arc<Mutex<reader::Catchup>> = Arc::default();
        let next_id = Arc::new(AtomicU64::new(1));
        let reader = tokio::spawn(reader::read(
            stream,
            reader::Shared {
                waiters: waiters.clone(),
                catchup: catchup.clone(),
                next_id: next_id.clone(),
                out: out.downgrade(),
            },
            events_tx,
        ))
        .abort_handle();
        let client = Client {
            out,
            waiters,
            catchup,
            next_id,
            reader,
            welcome: Welcome {
                version: String::new(),
                pid: 0,
                scopes: Vec::new(),
                restarting: false,
            },
        };
        (client, events)
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
        // The connection may have closed since this client was made (a daemon killed
        // as it answered our hello): a waiter put in after the reader ended would wait
        // for ever, so the check and the insert are one step.
        match self.waiters.lock().as_mut() {
            Some(waiters) => waiters.insert(id, tx),
            None => return Err(gone()),
        };
        let bytes = frame::encode_json(&ClientMessage { id, request });
        if self.out.send(bytes).await.is_err() {
            if let Some(waiters) = self.waiters.lock().as_mut() {
                waiters.remove(&id);
            }
            return Err(gone());
        }
        rx.await.unwrap_or_else(|_| Err(gone()))
    }

    /// Sends a verb and reads its reply as the type the verb declares.
    pub async fn send<V: Verb>(&self, verb: V) -> Result<V::Reply, WireError> {
        let value = self.request(verb.into()).await?;
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

    /// A connection the daemon closed before the request was made (killed as it took
    /// the connection): the request fails at once. It once waited for ever, its waiter
    /// put in after the reader had ended (a CI run's `weft history` hung so).
    #[tokio::test]
    async fn a_request_on_a_closed_connection_fails_at_once() {
        let (ours, theirs) = UnixStream::pair().unwrap_or_else(|e| panic!("{e}"));
        drop(theirs);
        let (client, mut events) = Client::over(ours);
        // The reader has ended once it says so.
        loop {
            match events.recv().await {
                Some(Event::Disconnected(_)) | None => break,
                Some(_) => {}
            }
        }
        let reply = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            client.request(ClientRequest::DaemonStatus {}),
        )
        .await
        .unwrap_or_else(|_| panic!("a request on a closed connection waited for ever"));
        let e = reply.err().unwrap_or_else(|| panic!("no error"));
        assert_eq!(e.message, GONE);
    }

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
        std::fs::set_permissions(
            home.dir(),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        paths::make_socket_dir(home.dir()).unwrap_or_else(|e| panic!("{e}"));
        let listener = UnixListener::bind(home.socket()).unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(unattributable_daemon(listener));
        let hello = Hello {
            version: VERSION.into(),
            surface: "test".into(),
            env: None,
            token: None,
            ..Default::default()
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

    /// A listener that records how many bytes reach it, on the socket of `home`.
    fn recording_listener(home: &Home) -> tokio::task::JoinHandle<usize> {
        let listener = UnixListener::bind(home.socket()).unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(async move {
            let Ok((mut socket, _)) = listener.accept().await else {
                return 0;
            };
            let mut got = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut socket, &mut got).await;
            got.len()
        })
    }

    /// The error of a connection attempt (a listener that takes the hello and never
    /// answers holds the attempt until the time is up: an error too).
    async fn connect_or_time_out(home: &Home) -> Option<ClientError> {
        let attempt = Client::connect(home, hello());
        match tokio::time::timeout(std::time::Duration::from_secs(20), attempt).await {
            Ok(result) => result.err(),
            Err(_) => Some(ClientError::Start("the hello went out, unanswered".into())),
        }
    }

    fn hello() -> Hello {
        Hello {
            version: VERSION.into(),
            surface: "test".into(),
            env: Some(ClientEnv(
                [("ANTHROPIC_API_KEY".to_string(), "sk-victim".to_string())].into(),
            )),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn a_socket_in_a_folder_others_can_write_gets_no_hello() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path().join("home"));
        std::fs::create_dir(home.dir()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(home.dir(), std::fs::Permissions::from_mode(0o777))
            .unwrap_or_else(|e| panic!("{e}"));
        let received = recording_listener(&home);
        let e = connect_or_time_out(&home).await;
        assert!(
            matches!(&e, Some(ClientError::Unsafe(m)) if m.contains("mode 0777")),
            "{e:?}"
        );
        assert_eq!(received.await.unwrap_or_else(|e| panic!("{e}")), 0);
    }

    /// An impostor of another uid listening on our socket's name (root only: it runs
    /// as `nobody`; elsewhere the test is skipped).
    #[tokio::test]
    async fn a_listener_of_another_user_gets_no_hello() {
        use std::os::unix::fs::PermissionsExt;
        if nix::unistd::getuid().as_raw() != 0 {
            eprintln!("SKIPPED: only root can run an impostor as another user");
            return;
        }
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        // The impostor may pass through, and binds in a folder of its own.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711))
            .unwrap_or_else(|e| panic!("{e}"));
        let theirs = dir.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534))
            .unwrap_or_else(|e| panic!("{e}"));
        let bound = theirs.join("s");
        let script = format!(
            "import socket,sys\n\
             s=socket.socket(socket.AF_UNIX); s.bind({bound:?}); s.listen(1)\n\
             print('ready', flush=True)\n\
             c,_=s.accept(); c.settimeout(20); n=0\n\
             try:\n    while True:\n        b=c.recv(65536)\n        if not b: break\n        n+=len(b)\n\
             except Exception: pass\n\
             print(n, flush=True)\n",
            bound = bound.display().to_string()
        );
        let mut impostor = tokio::process::Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "/usr/bin/python3",
                "-c",
            ])
            .arg(&script)
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("setpriv: {e}"));
        let stdout = impostor
            .stdout
            .take()
            .unwrap_or_else(|| panic!("no stdout"));
        let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
        let ready = lines.next_line().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ready.as_deref(), Some("ready"));
        // Its socket under our home's name, in our own private folder.
        let home = Home::at(dir.path().join("home"));
        paths::make_socket_dir(home.dir()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::rename(&bound, home.socket()).unwrap_or_else(|e| panic!("{e}"));
        let e = connect_or_time_out(&home).await;
        assert!(
            matches!(&e, Some(ClientError::Unsafe(m)) if m.contains("runs as uid 65534")),
            "{e:?}"
        );
        let received = lines.next_line().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(received.as_deref(), Some("0"), "the impostor got bytes");
    }
}
