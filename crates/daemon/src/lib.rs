//! `weft daemon`: the kernel service. One per `WEFT_HOME` (a lock), it owns every
//! session, terminal and pending question, and every surface — the desktop window,
//! the CLI, a browser — is its client through one API layer ([`api::handle`]).
//!
//! Start: take the lock (a second daemon says who holds it and exits 2), make the home
//! 0700, end any agent process group a crashed predecessor left (the store's process
//! ledger), open the kernel with SQLite wired in, bind the socket, then serve until
//! stopped (`weft daemon stop`, the app's Quit, SIGTERM/SIGINT) or idle. Stop: every
//! client is told why, every turn and terminal is ended, and no agent process remains.

mod accounts;
mod agents;
pub mod api;
mod attach;
mod attachments;
mod checkpoints;
mod cleanup;
pub mod conn;
mod dirs;
mod files;
mod library;
pub mod lock;
mod mcp;
mod notify;
pub mod policy;
mod proof;
mod reply;
pub mod service;
mod socket;
pub mod surfaces;
pub mod tls;
pub mod tokens;
mod trust;
mod worktrees;
pub mod ws;

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Duration;

use weft_client::Home;
use weft_kernel::Loom;
use weft_protocol::ServerMessage;

pub use service::Service;

/// The agent a prompt goes to when it names none: the built-in echo agent, which
/// needs no account.
pub const DEFAULT_AGENT: &str = "echo";

/// Default for `WEFT_DAEMON_IDLE_SECS`.
pub const DEFAULT_IDLE_SECS: u64 = 600;

/// How the daemon runs.
#[derive(Clone)]
pub struct Options {
    /// Its home.
    pub home: Home,
    /// How long it stays up with nothing to do.
    pub idle: Duration,
    /// WebSocket addresses to listen on for its whole life.
    pub listen: Vec<String>,
    /// Drivers registered after the built-in ones (a later one with the same id
    /// replaces a built-in): for benchmarks and tests of the service itself.
    pub extra_drivers: Vec<Arc<dyn weft_kernel::AgentDriver>>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("home", &self.home)
            .field("idle", &self.idle)
            .field("listen", &self.listen)
            .field("extra_drivers", &self.extra_drivers.len())
            .finish()
    }
}

impl Options {
    /// Options from the environment (`WEFT_HOME`, `WEFT_DAEMON_IDLE_SECS`).
    pub fn from_env() -> Options {
        let idle = std::env::var("WEFT_DAEMON_IDLE_SECS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_IDLE_SECS);
        Options {
            home: Home::from_env(),
            idle: Duration::from_secs(idle),
            listen: Vec::new(),
            extra_drivers: Vec::new(),
        }
    }
}

/// Why the daemon could not run.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// Another daemon holds the home.
    #[error(transparent)]
    Lock(#[from] lock::LockError),
    /// The home, socket or a listener could not be set up.
    #[error("{0}")]
    Setup(String),
}

/// Makes `home` private to its owner: the folder 0700.
fn private_home(home: &Home) -> Result<(), DaemonError> {
    let setup = |what: &str, e: std::io::Error| {
        DaemonError::Setup(format!("{what} {}: {e}", home.dir().display()))
    };
    std::fs::create_dir_all(home.dir()).map_err(|e| setup("cannot create", e))?;
    std::fs::set_permissions(home.dir(), std::fs::Permissions::from_mode(0o700))
        .map_err(|e| setup("cannot make private", e))?;
    std::fs::create_dir_all(home.log_dir()).map_err(|e| setup("cannot create logs in", e))?;
    std::fs::set_permissions(home.log_dir(), std::fs::Permissions::from_mode(0o700))
        .map_err(|e| setup("cannot make private", e))?;
    Ok(())
}

/// Runs the daemon until it is stopped or idle.
pub async fn run(options: Options) -> Result<(), DaemonError> {
    private_home(&options.home)?;
    let _lock = lock::take(&options.home.lock())?;
    let store = Arc::new(
        weft_store::SqliteStore::open(&options.home.dir().join("weft.db"))
            .map_err(|e| DaemonError::Setup(e.to_string()))?,
    );
    restrict(&options.home.dir().join("weft.db"));
    reap_leftovers(&store);
    weft_proctree::ledger::install(Arc::new(StoreLedger(store.clone())));
    let specs = weft_drivers::specs_in(options.home.dir());
    let accounts = Arc::new(
        weft_accounts::Accounts::open(
            options.home.dir(),
            &options.home.dir().join("weft.db"),
            Arc::new(weft_accounts::SecretServiceStore),
            specs.clone(),
        )
        .map_err(|e| DaemonError::Setup(format!("opening the accounts: {e}")))?,
    );
    let library = library::open(options.home.dir(), &store);
    let mut loom = Loom::builder(options.home.dir());
    // Every spawn in a worktree Weft made gets that worktree's ports.
    loom = loom.plugin(Arc::new(worktrees::WorktreePorts(
        options.home.dir().to_path_buf(),
    )));
    if let Some(library) = &library {
        loom = loom.index(Arc::new(library::LibraryIndex(library.clone())));
    }
    let loom = loom
        .skills_dirs(specs.iter().flat_map(|s| s.skills.clone()))
        .accounts(accounts.clone())
        .store(Arc::new(weft_store_port::SqlitePort(store.clone())))
        .drivers(weft_drivers::built_in_drivers())
        .driver_source(Arc::new(weft_drivers::acp_agents(options.home.dir())))
        .drivers(options.extra_drivers.iter().cloned())
        .plugin(Arc::new(weft_drivers::McpPlugin::with_secrets(
            mcp::secret_lookup(),
        )))
        .plugin(Arc::new(weft_drivers::SkillsPlugin))
        .interaction_handler(Arc::new(policy::ShellPolicy::new(options.home.dir())))
        .checkpoints(Arc::new(checkpoints::GitCheckpoints::new(
            options.home.dir(),
        )))
        .default_agent(DEFAULT_AGENT)
        .open()
        .map_err(|e| DaemonError::Setup(format!("opening the kernel: {e}")))?;
    // Made before the socket exists: a client that connects as soon as it appears
    // reads the key it must prove itself with.
    proof::ensure(&options.home.client_key()).map_err(|e| {
        DaemonError::Setup(format!(
            "cannot make {}: {e}",
            options.home.client_key().display()
        ))
    })?;
    let listener = socket::bind(&options.home.socket()).map_err(|e| {
        DaemonError::Setup(format!(
            "cannot listen on {}: {e}",
            options.home.socket().display()
        ))
    })?;
    let service = Service::new(
        loom.clone(),
        accounts,
        options.home.clone(),
        options.idle,
        ws::find_ui_dir(),
    );
    let _ = service.store.set(store.clone());
    let mut kept = Vec::new();
    for addr in &options.listen {
        let (listener, listening) = ws::open(&service, &ws::ListenOptions::at(addr), api::on_frame)
            .await
            .map_err(|e| DaemonError::Setup(e.message))?;
        // Not the UI's address with its token: stderr is the journal under systemd.
        eprintln!("weft: serving on {}", listening.ws_url);
        let page = listening.ws_url.trim_end_matches("/ws");
        eprintln!("weft: browser UI at {page}/ (a token: `weft tokens add NAME`)");
        if let Some(fingerprint) = &listening.fingerprint {
            eprintln!("weft: TLS key fingerprint (SHA-256 of the SPKI): {fingerprint}");
        }
        kept.push(listener);
    }
    tracing::info!(
        pid = std::process::id(),
        home = %options.home.dir().display(),
        "weft daemon started"
    );
    if let Some(library) = library {
        library::start(&service, library);
    }
    // Probed once, off the request path: the first native turn and `daemon status`
    // then read the cached answer.
    tokio::task::spawn_blocking(|| {
        let probe = weft_sandbox::probe();
        tracing::info!(mechanism = ?probe.mechanism, details = %probe.details, "sandbox probed");
    });
    tokio::spawn(socket::serve(service.clone(), listener));
    tokio::spawn(service.clone().watch());
    tokio::spawn(notify::watch(service.clone()));
    surfaces::Surfaces::start_configured(&service);
    tokio::select! {
        _ = service.stopped() => {}
        _ = terminate_signal() => service.stop_soon("the Weft daemon received a signal to stop"),
    }
    let reason = service.stop_reason();
    tracing::info!(%reason, "weft daemon stopping");
    // Before the clients hear "closing": a surface that saw it would reconnect.
    service.surfaces.stop_all().await;
    let conns: Vec<_> = service
        .conns
        .lock()
        .values()
        .filter_map(tokio::sync::mpsc::WeakSender::upgrade)
        .collect();
    let goodbye = weft_client::frame::encode_json(&ServerMessage::Closing { reason });
    for out in &conns {
        let _ = tokio::time::timeout(Duration::from_millis(500), out.send(goodbye.clone())).await;
    }
    drop(conns);
    service.hang_up();
    service.connections_ended(Duration::from_secs(3)).await;
    drop(kept);
    if let Some(library) = service.library.get() {
        let library = library.clone();
        let _ = tokio::task::spawn_blocking(move || library.stop()).await;
    }
    loom.shutdown().await;
    let _ = std::fs::remove_file(options.home.socket());
    tracing::info!("weft daemon stopped");
    Ok(())
}

/// Records agent process groups in the store, so the next start can end what a
/// crashed daemon left.
struct StoreLedger(Arc<weft_store::SqliteStore>);

impl weft_proctree::ledger::Ledger for StoreLedger {
    fn started(&self, pid: u32, start_ticks: u64) {
        if let Err(e) = self.0.record_process(pid, start_ticks) {
            tracing::warn!(pid, "recording an agent process: {e}");
        }
    }

    fn ended(&self, pid: u32) {
        if let Err(e) = self.0.forget_process(pid) {
            tracing::warn!(pid, "forgetting an agent process: {e}");
        }
    }
}

/// Ends every agent process group a daemon that died left running (its leader still
/// the very process recorded: a reused pid is left alone).
fn reap_leftovers(store: &weft_store::SqliteStore) {
    match store.take_processes() {
        Ok(left) if !left.is_empty() => {
            let killed = weft_proctree::ledger::reap(&left);
            tracing::info!(
                recorded = left.len(),
                killed = killed.len(),
                ?killed,
                "ended the agent processes a previous daemon left"
            );
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("reading the agent process ledger: {e}"),
    }
}

/// Files that may hold what users typed are the owner's alone.
fn restrict(path: &std::path::Path) {
    for p in [
        path.to_path_buf(),
        path.with_extension("db-wal"),
        path.with_extension("db-shm"),
    ] {
        if p.exists() {
            let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600));
        }
    }
}

async fn terminate_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
