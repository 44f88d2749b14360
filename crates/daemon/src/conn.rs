//! One client connection, whatever carries it (the Unix socket, a WebSocket): what it
//! may do, who it is, what it is subscribed and attached to. Transports only move
//! frames, and hand each to the API layer's [`OnFrame`] (its `on_frame`), which
//! decides what it means.
//!
//! Every channel a peer can fill is bounded: outgoing frames (a slow reader makes its
//! forwarders wait, their broadcast receivers lag, and the client is told to resync
//! instead of memory growing), terminal input (a client typing into a program that
//! does not read waits for it) and requests in flight ([`IN_FLIGHT`]: past them the
//! connection is not read until one ends, so a peer that sends faster than it is
//! answered is slowed at its own socket; a task per frame once let one connection with
//! a read token grow the daemon to 1.4 GB with 200,000 requests in 3 s).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use weft_client::frame;
use weft_kernel::Caller;
use weft_protocol::{Scope, ServerMessage, TerminalInput};

use crate::service::Service;

/// Outgoing frames waiting for the transport.
pub const OUTGOING: usize = 1024;
/// Keystroke frames waiting for their terminal.
const INPUT: usize = 256;
/// Requests of one connection answered at once. Enough that a window's burst at
/// start (a dozen reads) and a slow probe beside a stop never wait on each other; a
/// peer with more outstanding is read no further until one is answered.
pub const IN_FLIGHT: usize = 64;

/// What a transport hands each frame to: the API layer's `on_frame` (a parameter, so
/// a transport need not know the API layer that starts it).
pub type OnFrame = for<'a> fn(
    &'a Arc<Service>,
    &'a Arc<Conn>,
    &'a [u8],
    bool,
) -> futures::future::BoxFuture<'a, ()>;

/// How the connection reached us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The owner-only Unix socket.
    Socket,
    /// A WebSocket (token required).
    WebSocket,
}

/// A connection's state.
pub struct Conn {
    /// Numbered per daemon.
    pub id: u64,
    /// What carries it.
    pub transport: Transport,
    /// Frames for the peer (JSON messages and binary terminal frames).
    pub out: mpsc::Sender<Bytes>,
    greeted: AtomicBool,
    scopes: Mutex<Vec<Scope>>,
    /// The hash of the token it proved itself with (a WebSocket): once that token is
    /// revoked, the connection is closed.
    token: Mutex<Option<String>>,
    caller: Mutex<Caller>,
    pub(crate) subscriptions: Mutex<HashMap<String, JoinHandle<()>>>,
    pub(crate) all: Mutex<Option<JoinHandle<()>>>,
    pub(crate) terminals: Mutex<HashMap<String, JoinHandle<()>>>,
    /// What this connection opened that ends with it (`weft serve`'s listeners).
    pub(crate) held: Mutex<Vec<Box<dyn std::any::Any + Send + Sync>>>,
    input: mpsc::Sender<TerminalInput>,
    input_task: JoinHandle<()>,
    /// A permit per request being answered ([`IN_FLIGHT`]).
    slots: Arc<Semaphore>,
    /// Requests being answered now.
    in_flight: Arc<AtomicUsize>,
}

/// A request being answered: counted while it runs, and holding one of the
/// connection's [`IN_FLIGHT`] permits.
pub(crate) struct Running(Arc<AtomicUsize>, #[allow(dead_code)] OwnedSemaphorePermit);

impl Running {
    fn new(count: &Arc<AtomicUsize>, slot: OwnedSemaphorePermit) -> Running {
        count.fetch_add(1, Ordering::SeqCst);
        Running(count.clone(), slot)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Conn {
    /// A connection whose frames go to `out`. `scopes` are granted before any hello
    /// (the socket's owner, a WebSocket's bearer header); a hello may add a token's.
    pub fn new(
        service: &Arc<Service>,
        transport: Transport,
        out: mpsc::Sender<Bytes>,
        scopes: Vec<Scope>,
    ) -> Arc<Conn> {
        let (input, inputs) = mpsc::channel(INPUT);
        let input_task = tokio::spawn(write_inputs(service.clone(), inputs));
        let conn = Arc::new(Conn {
            id: service.next_conn_id(),
            transport,
            out,
            greeted: AtomicBool::new(false),
            scopes: Mutex::new(scopes),
            token: Mutex::default(),
            caller: Mutex::new(Caller::local()),
            subscriptions: Mutex::default(),
            all: Mutex::default(),
            terminals: Mutex::default(),
            held: Mutex::default(),
            input,
            input_task,
            slots: Arc::new(Semaphore::new(IN_FLIGHT)),
            in_flight: Arc::default(),
        });
        // Known to the service, to be told why when it stops.
        service.conns.lock().insert(conn.id, conn.out.downgrade());
        conn
    }

    /// The peer is gone (or the service hung up): forgets the connection, ends its
    /// subscriptions and attachments, and lets `writer` send what is queued (a goodbye)
    /// before it ends, for at most 2 s.
    pub async fn close(self: Arc<Self>, service: &Service, writer: JoinHandle<()>) {
        service.client_left(self.id);
        service.conns.lock().remove(&self.id);
        drop(self);
        // The writer ends once every sender of its frames is gone.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
    }

    /// True once hello was said.
    pub fn greeted(&self) -> bool {
        self.greeted.load(Ordering::SeqCst)
    }

    pub(crate) fn greet(&self, caller: Caller, scopes: Vec<Scope>) {
        *self.caller.lock() = caller;
        *self.scopes.lock() = scopes;
        self.greeted.store(true, Ordering::SeqCst);
    }

    /// The connection proved itself with `token` (kept as its hash).
    pub(crate) fn proved_with(&self, token: &str) {
        *self.token.lock() = Some(crate::tokens::hash(token));
    }

    /// The hash of the token it proved itself with, if any.
    pub(crate) fn token_hash(&self) -> Option<String> {
        self.token.lock().clone()
    }

    /// What it may do.
    pub fn scopes(&self) -> Vec<Scope> {
        self.scopes.lock().clone()
    }

    /// Who it is.
    pub fn caller(&self) -> Caller {
        self.caller.lock().clone()
    }

    /// Requests of this connection being answered now (at most [`IN_FLIGHT`]).
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Takes a permit to answer one request: waits while [`IN_FLIGHT`] are being
    /// answered; `None` once the service hangs up.
    pub(crate) async fn slot(&self, service: &Service) -> Option<Running> {
        let slot = tokio::select! {
            slot = self.slots.clone().acquire_owned() => slot.ok()?,
            _ = service.hung_up() => return None,
        };
        Some(Running::new(&self.in_flight, slot))
    }

    /// Sends a message; false when the peer is gone.
    pub async fn send(&self, message: &ServerMessage) -> bool {
        self.out.send(frame::encode_json(message)).await.is_ok()
    }

    /// Queues keystrokes (a binary frame), in order.
    pub(crate) async fn queue_input(&self, input: TerminalInput) {
        let _ = self.input.send(input).await;
    }

    /// Queues keystrokes typed as JSON (`writeTerminal`) behind binary ones.
    pub(crate) async fn type_text(&self, session_key: String, data: String) -> bool {
        self.input
            .send(TerminalInput {
                session_key,
                data: data.into_bytes(),
            })
            .await
            .is_ok()
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.input_task.abort();
        for (_, task) in self.subscriptions.get_mut().drain() {
            task.abort();
        }
        if let Some(task) = self.all.get_mut().take() {
            task.abort();
        }
        for (_, task) in self.terminals.get_mut().drain() {
            task.abort();
        }
        // Listeners opened by this connection (`weft serve`) close with it.
        self.held.get_mut().clear();
    }
}

/// Writes keystrokes in order, each off the async workers (a write blocks while the
/// program does not read, e.g. under a big paste).
async fn write_inputs(service: Arc<Service>, mut inputs: mpsc::Receiver<TerminalInput>) {
    while let Some(input) = inputs.recv().await {
        let Ok(bridge) = service.loom.terminal(&input.session_key) else {
            // Said, not silent: a CI run's burst never reached its pane, and keystrokes
            // lost on the way are one of the places it could have stopped.
            tracing::warn!(
                session = %input.session_key,
                bytes = input.data.len(),
                "keystrokes for a terminal that is not open were dropped"
            );
            continue;
        };
        let result = tokio::task::spawn_blocking(move || bridge.write(&input.data)).await;
        if let Ok(Err(e)) = result {
            tracing::debug!("writing to a terminal: {e}");
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::time::Duration;
    use weft_kernel::Loom;
    use weft_protocol::{ClientMessage, ClientRequest};

    /// A service over an empty kernel in `dir`, for tests of the transports.
    pub(crate) fn service(dir: &std::path::Path) -> Arc<Service> {
        let loom = Loom::builder(dir).open().unwrap_or_else(|e| panic!("{e}"));
        let accounts = weft_accounts::Accounts::open(
            dir,
            &dir.join("accounts.db"),
            Arc::new(weft_accounts::MemoryStore::default()),
            weft_drivers::specs_in(dir),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        Service::new(
            loom,
            Arc::new(accounts),
            weft_client::Home::at(dir),
            Duration::from_secs(600),
            None,
        )
    }

    async fn until(what: &str, mut f: impl FnMut() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while !f() {
            assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// A peer that sends requests and reads no reply: its replies fill the outgoing
    /// queue, [`IN_FLIGHT`] requests then wait to send theirs, and the connection is
    /// read no further (before: a task per frame, all waiting, without end).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_peer_that_reads_no_replies_has_at_most_the_bound_in_flight() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let service = service(dir.path());
        let (out, mut replies) = mpsc::channel(OUTGOING);
        let conn = Conn::new(&service, Transport::Socket, out, vec![Scope::Read]);
        conn.greet(Caller::local(), vec![Scope::Read]);
        const SENT: u64 = 3 * OUTGOING as u64;
        let read = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let feeder = {
            let (conn, service, read) = (conn.clone(), service.clone(), read.clone());
            tokio::spawn(async move {
                for id in 1..=SENT {
                    let msg = ClientMessage {
                        id,
                        request: ClientRequest::DaemonStatus {},
                    };
                    crate::api::on_frame(&service, &conn, &frame::encode_json(&msg), false).await;
                    read.store(id, Ordering::SeqCst);
                }
            })
        };
        // The queue fills, then the slots.
        until("the outgoing queue to fill", || conn.out.capacity() == 0).await;
        until("the slots to fill", || {
            assert!(
                conn.in_flight() <= IN_FLIGHT,
                "{} in flight",
                conn.in_flight()
            );
            conn.in_flight() == IN_FLIGHT
        })
        .await;
        // Nothing more is read while no reply leaves.
        let stuck = read.load(Ordering::SeqCst);
        assert!(stuck < SENT, "every frame was read");
        for _ in 0..50 {
            tokio::task::yield_now().await;
            assert!(conn.in_flight() <= IN_FLIGHT);
        }
        assert!(read.load(Ordering::SeqCst) <= stuck + 1);
        // Once replies are read, every request is answered.
        let mut answered = 0;
        while answered < SENT {
            let got = tokio::time::timeout(Duration::from_secs(30), replies.recv()).await;
            assert!(matches!(got, Ok(Some(_))), "reply {answered} never came");
            answered += 1;
        }
        feeder.await.unwrap_or_else(|e| panic!("{e}"));
        until("the tasks to end", || conn.in_flight() == 0).await;
    }
}
