//! Terminals: the agents' own terminal UIs, and the daemon's login and install
//! terminals; their frames go to the connections attached.

use std::sync::Arc;

use weft_kernel::{Caller, Loom};
use weft_protocol::{ErrorCode, OpenTerminalRequest, ServerMessage, TerminalAttached, WireError};

use super::wire;
use crate::conn::Conn;
use crate::reply::Reply;
use crate::service::Service;

pub(super) async fn open(
    loom: &Loom,
    conn: &Arc<Conn>,
    caller: &Caller,
    id: u64,
    r: OpenTerminalRequest,
) -> Result<Reply, WireError> {
    let (key, bridge) = loom.terminal_open(caller, r).await.map_err(wire)?;
    attach(conn, id, key, bridge)
}

pub(super) fn attach_to(
    loom: &Loom,
    conn: &Arc<Conn>,
    id: u64,
    session_key: String,
) -> Result<Reply, WireError> {
    let bridge = loom.terminal(&session_key).map_err(wire)?;
    attach(conn, id, session_key, bridge)
}

pub(super) fn detach(conn: &Conn, session_key: &str) -> Result<(), WireError> {
    if let Some(task) = conn.terminals.lock().remove(session_key) {
        task.abort();
    }
    Ok(())
}

pub(super) async fn write(
    loom: &Loom,
    conn: &Arc<Conn>,
    session_key: String,
    data: String,
) -> Result<(), WireError> {
    loom.terminal(&session_key).map_err(wire)?;
    conn.type_text(session_key, data).await;
    Ok(())
}

pub(super) fn resize(
    loom: &Loom,
    session_key: &str,
    cols: u16,
    rows: u16,
) -> Result<(), WireError> {
    let bridge = loom.terminal(session_key).map_err(wire)?;
    let size = weft_kernel::pty::PtySize {
        cols: cols.max(1),
        rows: rows.max(1),
    };
    bridge.resize(size).map_err(|e| match e {
        // Past the limits (the grid is allocated whole): the message names them.
        weft_kernel::pty::PtyError::TooLarge { .. } => {
            WireError::new(ErrorCode::BadRequest, e.to_string())
        }
        e => WireError::new(ErrorCode::Internal, format!("resizing the terminal: {e}")),
    })
}

pub(super) async fn close(loom: &Loom, conn: &Conn, session_key: &str) -> Result<(), WireError> {
    if let Some(task) = conn.terminals.lock().remove(session_key) {
        task.abort();
    }
    loom.terminal_close(session_key).await.map_err(wire)
}

pub(super) async fn login(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    caller: &Caller,
    id: u64,
    account: String,
    cols: Option<u16>,
    rows: Option<u16>,
) -> Result<Reply, WireError> {
    let (key, bridge) = crate::agents::login(service, caller, account, cols, rows).await?;
    attach(conn, id, key, bridge)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn install(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    caller: &Caller,
    id: u64,
    name: String,
    version: Option<String>,
    cols: Option<u16>,
    rows: Option<u16>,
) -> Result<Reply, WireError> {
    let (key, bridge) = crate::agents::install(service, caller, name, version, cols, rows)?;
    attach(conn, id, key, bridge)
}

/// A worktree's `run` command in a terminal of the daemon's, this connection attached.
pub(super) fn run_worktree(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    caller: &Caller,
    id: u64,
    name: String,
    repo: Option<String>,
    size: (Option<u16>, Option<u16>),
) -> Result<Reply, WireError> {
    let (key, bridge) = crate::worktrees::run_terminal(service, caller, &name, repo, size)?;
    attach(conn, id, key, bridge)
}

/// Replies [`TerminalAttached`] ahead of the terminal's frames, from the task that
/// forwards them.
fn attach(
    conn: &Arc<Conn>,
    id: u64,
    session_key: String,
    bridge: Arc<weft_kernel::pty::PtyBridge>,
) -> Result<Reply, WireError> {
    let result = serde_json::to_value(TerminalAttached {
        session_key: session_key.clone(),
    })
    .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?;
    let first = weft_client::frame::encode_json(&ServerMessage::Reply { id, result });
    let task = tokio::spawn(crate::attach::forward(
        session_key.clone(),
        bridge,
        conn.out.clone(),
        first,
    ));
    if let Some(old) = conn.terminals.lock().insert(session_key, task) {
        old.abort();
    }
    Ok(Reply::Sent)
}
