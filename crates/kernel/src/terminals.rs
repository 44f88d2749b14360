//! Agents' own terminal UIs, kept beside the sessions: one PTY bridge per session,
//! which any number of clients attach to and detach from (the window's pane, `weft
//! attach` in a terminal, a browser), like tmux. Surfaces only frame bytes.
//!
//! The bridge ends exactly once, by whoever takes it out of the registry: a client's
//! `close`, the program's own exit (a watcher per bridge), or shutdown. Taking it out
//! also ends the session's terminal turn, so queued prompts then run on the structured
//! rail.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;
use weft_protocol::OpenTerminalRequest;
use weft_pty::{PtyBridge, PtySize, PtySpec};

use crate::error::KernelError;
use crate::hub::Loom;
use crate::io::Caller;
use crate::runner::SessionRunner;

/// Open bridges by session key.
#[derive(Default, Clone)]
pub(crate) struct Registry {
    open: Arc<Mutex<HashMap<String, Arc<PtyBridge>>>>,
    /// Keys of the open terminals that belong to no session (see
    /// [`Loom::side_terminal_open`]).
    side: Arc<Mutex<HashSet<String>>>,
}

impl Registry {
    /// Removes `key`'s entry when it still holds `bridge`.
    fn remove_if(&self, key: &str, bridge: &Arc<PtyBridge>) -> bool {
        let mut open = self.open.lock();
        match open.get(key) {
            Some(b) if Arc::ptr_eq(b, bridge) => {
                open.remove(key);
                true
            }
            _ => false,
        }
    }
}

/// The size a client asked for (80 × 24 when it did not say; zero taken as one),
/// refused past [`weft_pty::MAX_COLS`] × [`weft_pty::MAX_ROWS`]: the terminal's grid
/// is allocated whole, and a client's 65535 × 65535 aborted the daemon.
fn size(cols: Option<u16>, rows: Option<u16>) -> Result<PtySize, KernelError> {
    let size = PtySize {
        rows: rows.unwrap_or(24).max(1),
        cols: cols.unwrap_or(80).max(1),
    };
    weft_pty::check_size(size).map_err(|e| KernelError::BadRequest(e.to_string()))?;
    Ok(size)
}

fn not_open(key: &str) -> KernelError {
    KernelError::BadRequest(format!("no terminal is open for session `{key}`"))
}

/// Kills the program and waits for it, off the async workers (a kill waits out a
/// grace period).
async fn kill(bridge: Arc<PtyBridge>) {
    let pid = bridge.pid();
    let _ = tokio::task::spawn_blocking(move || {
        bridge.kill();
        drop(bridge);
    })
    .await;
    if let Some(pid) = pid {
        weft_proctree::ledger::record_ended(pid);
    }
}

/// Why a terminal did not start, with its wire code: a program missing or refusing
/// to start is the agent's (or the login's, the install's) unavailability.
pub(crate) fn spawn_failed(e: weft_pty::PtyError) -> KernelError {
    let message = format!("cannot start the terminal: {e}");
    match e {
        weft_pty::PtyError::NotFound(_) | weft_pty::PtyError::Spawn { .. } => {
            KernelError::AgentUnavailable(message)
        }
        _ => KernelError::BadRequest(message),
    }
}

impl Loom {
    /// The session's terminal: the one already open (`sessionKey` given), else a new
    /// one — its program in a PTY of the asked size, with the caller's environment.
    /// Returns the session key and the bridge to attach to.
    pub async fn terminal_open(
        &self,
        caller: &Caller,
        request: OpenTerminalRequest,
    ) -> Result<(String, Arc<PtyBridge>), KernelError> {
        if let Some(key) = &request.session_key {
            if let Some(bridge) = self.terminals.open.lock().get(key) {
                return Ok((key.clone(), bridge.clone()));
            }
        }
        let size = size(request.cols, request.rows)?;
        let opened = self.open_terminal_as(caller, request).await?;
        let key = opened.session_key.clone();
        let spec = PtySpec {
            program: opened.spec.program,
            args: opened.spec.args,
            base_env: opened
                .base_env
                .as_ref()
                .or(caller.env.as_ref())
                .map(|env| env.0.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
            env: opened.spec.env,
            cwd: opened.spec.cwd,
            ..PtySpec::default()
        };
        let runner = self.runner(&key).await?;
        let bridge = match PtyBridge::spawn(&spec, size) {
            Ok(b) => Arc::new(b),
            Err(e) => {
                let _ = runner.close_terminal();
                return Err(spawn_failed(e));
            }
        };
        tracing::info!(session = %key, pid = ?bridge.pid(), "terminal opened");
        // The PTY's program leads its own session and group: recorded so a kernel that
        // dies is followed by one that ends it.
        if let Some(pid) = bridge.pid() {
            weft_proctree::ledger::record_started(pid);
        }
        self.terminals
            .open
            .lock()
            .insert(key.clone(), bridge.clone());
        tokio::spawn(close_on_exit(
            self.terminals.clone(),
            runner,
            key.clone(),
            bridge.clone(),
        ));
        Ok((key, bridge))
    }

    /// The open terminal of a session.
    pub fn terminal(&self, session_key: &str) -> Result<Arc<PtyBridge>, KernelError> {
        self.terminals
            .open
            .lock()
            .get(session_key)
            .cloned()
            .ok_or_else(|| not_open(session_key))
    }

    /// Ends a session's terminal (its program is killed); the structured rail takes the
    /// session back. Closing one that is not open is not an error.
    pub async fn terminal_close(&self, session_key: &str) -> Result<(), KernelError> {
        let Some(bridge) = self.terminals.open.lock().remove(session_key) else {
            return Ok(());
        };
        kill(bridge).await;
        tracing::info!(session = %session_key, "terminal closed");
        if self.terminals.side.lock().remove(session_key) {
            return Ok(());
        }
        self.runner(session_key).await?.close_terminal()
    }

    /// A terminal that belongs to no session — an account's login, an agent's install —
    /// under `key` (which names no session: `login:ID`, `install:NAME`), attached,
    /// written, resized and closed like a session's. The one open under `key` is
    /// returned as it is. `on_exit` runs once its program has ended, however it ended.
    /// An ended one stays (its last screen and exit code, for a pane that attaches
    /// late) until a client closes it or the key is opened again.
    pub fn side_terminal_open(
        &self,
        key: &str,
        spec: &PtySpec,
        cols: Option<u16>,
        rows: Option<u16>,
        on_exit: impl FnOnce() + Send + 'static,
    ) -> Result<Arc<PtyBridge>, KernelError> {
        if let Some(bridge) = self.terminals.open.lock().get(key) {
            if bridge.exit_info().is_none() {
                return Ok(bridge.clone());
            }
        }
        let bridge = PtyBridge::spawn(spec, size(cols, rows)?)
            .map(Arc::new)
            .map_err(spawn_failed)?;
        tracing::info!(terminal = %key, pid = ?bridge.pid(), "terminal opened");
        if let Some(pid) = bridge.pid() {
            weft_proctree::ledger::record_started(pid);
        }
        self.terminals.side.lock().insert(key.to_string());
        self.terminals
            .open
            .lock()
            .insert(key.to_string(), bridge.clone());
        let key = key.to_string();
        let watched = bridge.clone();
        tokio::spawn(async move {
            let info = watched.wait().await;
            if let Some(pid) = watched.pid() {
                weft_proctree::ledger::record_ended(pid);
            }
            tracing::info!(terminal = %key, code = info.code, "terminal ended");
            on_exit();
        });
        Ok(bridge)
    }

    /// How many terminals are open.
    pub fn terminal_count(&self) -> usize {
        self.terminals.open.lock().len()
    }

    /// Kills every terminal and ends their turns (shutdown).
    pub(crate) async fn close_all_terminals(&self) {
        let all: Vec<(String, Arc<PtyBridge>)> = self.terminals.open.lock().drain().collect();
        futures::future::join_all(all.into_iter().map(|(key, bridge)| async move {
            kill(bridge).await;
            if let Some(runner) = self.sessions.lock().get(&key).cloned() {
                let _ = runner.close_terminal();
            }
        }))
        .await;
    }
}

/// The program exited by itself: the terminal is closed (if nobody closed it first).
async fn close_on_exit(
    registry: Registry,
    runner: SessionRunner,
    key: String,
    bridge: Arc<PtyBridge>,
) {
    let info = bridge.wait().await;
    if let Some(pid) = bridge.pid() {
        weft_proctree::ledger::record_ended(pid);
    }
    if registry.remove_if(&key, &bridge) {
        tracing::info!(session = %key, code = info.code, "terminal exited on its own");
        if let Err(e) = runner.close_terminal() {
            tracing::warn!(session = %key, "closing the terminal turn: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use weft_protocol::ErrorCode;

    use super::*;

    #[test]
    fn a_program_that_is_missing_or_will_not_start_is_the_agent_unavailable() {
        let missing = spawn_failed(weft_pty::PtyError::NotFound("claude".into()));
        assert_eq!(missing.code(), ErrorCode::AgentUnavailable);
        assert!(
            missing.to_string().contains("`claude` was not found"),
            "{missing}"
        );
        let refused = spawn_failed(weft_pty::PtyError::Spawn {
            program: "/x".into(),
            message: "permission denied".into(),
        });
        assert_eq!(refused.code(), ErrorCode::AgentUnavailable);
        assert_eq!(
            spawn_failed(weft_pty::PtyError::BadSize).code(),
            ErrorCode::BadRequest
        );
    }
}
