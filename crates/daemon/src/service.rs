//! The service's state beside the kernel: who is connected, what listens, when to go.
//!
//! It stays up while it has clients, running or queued turns, open terminals or
//! pending questions, and exits once it has had none of those for its idle period. A
//! client of another version asks it to restart: it exits as soon as it has no
//! running turns and no open terminals, saying so to every client.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;
use weft_client::Home;
use weft_kernel::Loom;
use weft_protocol::{DaemonStatus, Scope};

use crate::tokens::{self, TokenFile};

/// A running connection task (see [`Service::connection_task`]).
pub struct ConnectionTask(Arc<Service>);

impl Drop for ConnectionTask {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::SeqCst);
        self.0.ended.notify_waiters();
    }
}

/// The kernel service.
pub struct Service {
    /// The kernel.
    pub loom: Arc<Loom>,
    /// Its home.
    pub home: Home,
    /// How long it stays up with nothing to do.
    pub idle: Duration,
    /// Where the browser UI's files are, when found.
    pub ui_dir: Option<PathBuf>,
    /// The session library, once opened beside the store.
    pub library: std::sync::OnceLock<Arc<weft_library::Library>>,
    /// The accounts (also the kernel's Accounts).
    pub accounts: Arc<weft_accounts::Accounts>,
    /// The store, whose commits patches wait for before they leave ([`Service::durable`]).
    pub(crate) store: std::sync::OnceLock<Arc<weft_store::SqliteStore>>,
    started_at: i64,
    next_conn: AtomicU64,
    clients: Mutex<HashMap<u64, String>>,
    /// Live connections' outgoing frames, to say goodbye to at stop.
    pub(crate) conns: Mutex<HashMap<u64, tokio::sync::mpsc::WeakSender<bytes::Bytes>>>,
    pub(crate) listening: Mutex<Vec<String>>,
    tokens: Mutex<TokenFile>,
    /// The hashes of the tokens of this run's listeners (read and control), each
    /// valid while its listener is open; never written anywhere.
    listener_tokens: Mutex<Vec<String>>,
    /// What a socket client proves it runs outside the sandbox with (none when the key
    /// could not be made: every socket hello is then refused, saying why).
    client_key: Option<String>,
    stop: CancellationToken,
    /// Cancelled once every client was told the daemon is going: connections end.
    hang_up: CancellationToken,
    /// Connection tasks still running (each flushes its last frames before it ends).
    live: std::sync::atomic::AtomicUsize,
    ended: tokio::sync::Notify,
    stop_reason: Mutex<Option<String>>,
    restart_for: Mutex<Option<String>>,
    /// The chat surfaces it runs (`weft-matrix run`).
    pub surfaces: crate::surfaces::Surfaces,
}

impl Service {
    /// A service over `loom`.
    pub fn new(
        loom: Arc<Loom>,
        accounts: Arc<weft_accounts::Accounts>,
        home: Home,
        idle: Duration,
        ui_dir: Option<PathBuf>,
    ) -> Arc<Self> {
        let tokens = TokenFile::open(&home.tokens());
        let client_key = match crate::proof::ensure(&home.client_key()) {
            Ok(k) => Some(k),
            Err(e) => {
                tracing::error!(
                    "cannot make {}: {e}; no socket client can connect",
                    home.client_key().display()
                );
                None
            }
        };
        Arc::new(Service {
            loom,
            accounts,
            home,
            idle,
            ui_dir,
            library: std::sync::OnceLock::new(),
            store: std::sync::OnceLock::new(),
            started_at: weft_kernel::now_ms(),
            next_conn: AtomicU64::new(1),
            clients: Mutex::default(),
            conns: Mutex::default(),
            listening: Mutex::default(),
            tokens: Mutex::new(tokens),
            listener_tokens: Mutex::default(),
            client_key,
            stop: CancellationToken::new(),
            hang_up: CancellationToken::new(),
            live: std::sync::atomic::AtomicUsize::new(0),
            ended: tokio::sync::Notify::new(),
            stop_reason: Mutex::default(),
            restart_for: Mutex::default(),
            surfaces: crate::surfaces::Surfaces::default(),
        })
    }

    /// Waits until the store has committed every write queued so far (none wired: at
    /// once). Patches and snapshots pass this before they are sent, so what a client saw
    /// is on disk even if the daemon is killed the next moment. The writer answers
    /// through a oneshot: no thread is held (or handed the wait) per batch of patches.
    pub async fn durable(&self) {
        let Some(store) = self.store.get() else {
            return;
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        store.when_committed(move || {
            let _ = tx.send(());
        });
        if rx.await.is_err() {
            tracing::warn!("waiting for the store: its writer is gone");
        }
    }

    pub(crate) fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn client_joined(&self, id: u64, surface: &str) {
        self.clients.lock().insert(id, surface.to_string());
    }

    /// A connection ended.
    pub fn client_left(&self, id: u64) {
        self.clients.lock().remove(&id);
    }

    /// Connected clients that said hello.
    pub fn client_count(&self) -> usize {
        self.clients.lock().len()
    }

    /// Whether a client of `surface` is connected.
    pub fn has_client(&self, surface: &str) -> bool {
        self.clients.lock().values().any(|s| s == surface)
    }

    /// True when `given` is this home's client key (a socket client outside the
    /// sandbox).
    pub fn proves(&self, given: Option<&str>) -> bool {
        match (&self.client_key, given) {
            (Some(ours), Some(given)) => crate::proof::matches(ours, given),
            _ => false,
        }
    }

    /// The scopes a WebSocket token grants: a named token's (the file is read again
    /// whenever it changed, so one added or revoked meanwhile counts at once), or read
    /// and control for an open listener's own token.
    pub fn token_scopes(&self, given: &str) -> Option<Vec<Scope>> {
        if let Some(entry) = self.tokens.lock().find(given) {
            return Some(entry.scopes);
        }
        let wanted = tokens::hash(given);
        self.listener_tokens
            .lock()
            .contains(&wanted)
            .then(|| vec![Scope::Read, Scope::Control])
    }

    /// True while the token with this hash is valid (not revoked, its listener open).
    pub fn token_held(&self, hash: &str) -> bool {
        self.tokens.lock().holds(hash) || self.listener_tokens.lock().iter().any(|h| h == hash)
    }

    /// A fresh read-and-control token for a listener, valid until
    /// [`Service::forget_listener_token`] (kept in memory only, as its hash).
    pub fn listener_token(&self) -> String {
        let token = tokens::secret();
        self.listener_tokens.lock().push(tokens::hash(&token));
        token
    }

    /// The listener's token (as given by [`Service::listener_token`]) is no longer valid.
    pub fn forget_listener_token(&self, token: &str) {
        let gone = tokens::hash(token);
        self.listener_tokens.lock().retain(|h| *h != gone);
    }

    /// A client of `version` connected: restart for it once idle. True when the
    /// restart is under way.
    pub(crate) fn restart_for(&self, version: &str) -> bool {
        if version.is_empty() {
            return false;
        }
        tracing::info!(
            ours = weft_client::VERSION,
            theirs = version,
            "a client of another version: restarting once no turn runs"
        );
        *self.restart_for.lock() = Some(version.to_string());
        true
    }

    /// Asks the service to stop (after the current reply is on its way).
    pub fn stop_soon(&self, why: &str) {
        self.stop_reason
            .lock()
            .get_or_insert_with(|| why.to_string());
        self.stop.cancel();
    }

    /// Resolves when a stop was asked for.
    pub async fn stopped(&self) {
        self.stop.cancelled().await
    }

    /// Ends every connection (after each was told why).
    pub fn hang_up(&self) {
        self.hang_up.cancel();
    }

    /// Counts a connection task until the guard is dropped (at its very end, after
    /// its last frame was written).
    pub fn connection_task(self: &Arc<Self>) -> ConnectionTask {
        self.live.fetch_add(1, Ordering::SeqCst);
        ConnectionTask(self.clone())
    }

    /// Waits (at most `limit`) until every connection task has ended, so what they
    /// were told last (why the daemon stops) reaches them before the process exits.
    pub async fn connections_ended(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let ended = self.ended.notified();
            if self.live.load(Ordering::SeqCst) == 0 {
                return;
            }
            if tokio::time::timeout_at(deadline, ended).await.is_err() {
                return;
            }
        }
    }

    /// Resolves when connections are to end.
    pub async fn hung_up(&self) {
        self.hang_up.cancelled().await
    }

    /// Why it stops.
    pub fn stop_reason(&self) -> String {
        self.stop_reason
            .lock()
            .clone()
            .unwrap_or_else(|| "the Weft daemon is stopping".into())
    }

    /// True while something needs the service: a client, a turn, a terminal, a question.
    pub fn in_use(&self) -> bool {
        self.client_count() > 0
            || self.loom.is_busy()
            || self.loom.terminal_count() > 0
            || self.loom.pending_interactions() > 0
    }

    /// Runs until nothing has needed the service for its idle period, or a restart for
    /// another version can happen, then asks it to stop.
    pub async fn watch(self: Arc<Self>) {
        let tick = Duration::from_millis(250).min(self.idle.max(Duration::from_millis(10)));
        let mut idle_since: Option<tokio::time::Instant> = None;
        let mut last_evict = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(tick) => {}
                _ = self.stop.cancelled() => return,
            }
            if let Some(version) = self.restart_for.lock().clone() {
                if !self.loom.is_busy() && self.loom.terminal_count() == 0 {
                    self.stop_soon(&format!(
                        "the Weft daemon restarts for version {version} (it was {})",
                        weft_client::VERSION
                    ));
                    return;
                }
            }
            if last_evict.elapsed() > Duration::from_secs(60) {
                self.loom.evict_idle();
                last_evict = tokio::time::Instant::now();
            }
            if self.in_use() {
                idle_since = None;
                continue;
            }
            let since = *idle_since.get_or_insert_with(tokio::time::Instant::now);
            if since.elapsed() >= self.idle {
                self.stop_soon(&format!(
                    "the Weft daemon exits after {} s with nothing to do",
                    self.idle.as_secs()
                ));
                return;
            }
        }
    }

    /// What `weft daemon status` shows.
    pub fn status(&self) -> DaemonStatus {
        let mut clients: BTreeMap<String, u32> = BTreeMap::new();
        for surface in self.clients.lock().values() {
            *clients.entry(surface.clone()).or_default() += 1;
        }
        DaemonStatus {
            pid: std::process::id(),
            version: weft_client::VERSION.to_string(),
            home: self.home.dir().display().to_string(),
            socket: self.home.socket().display().to_string(),
            started_at: self.started_at,
            listening: self.listening.lock().clone(),
            clients,
            busy_sessions: u32::try_from(self.loom.busy_sessions()).unwrap_or(u32::MAX),
            terminals: u32::try_from(self.loom.terminal_count()).unwrap_or(u32::MAX),
            pending: u32::try_from(self.loom.pending_interactions()).unwrap_or(u32::MAX),
            idle_secs: self.idle.as_secs(),
            sandbox: weft_sandbox::probed().map(|p| weft_protocol::SandboxStatus {
                mechanism: p.mechanism.as_str().to_string(),
                details: p.details.clone(),
            }),
            warm: self.loom.warm_processes(),
            surfaces: self.surfaces.status(),
        }
    }
}
