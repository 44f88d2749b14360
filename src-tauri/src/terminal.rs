//! Terminal panes: a session's agent TUI in a PTY, its output batched over a Tauri IPC
//! channel, keystrokes and resizes back.
//!
//! One bridge per session lives in [`Terminals`]. Output reaches the window as binary
//! frames on the pane's `Channel`: `[kind: u8][offset: u64 LE][payload]`, where kind
//! 0 is a screen restore (the payload redraws the whole screen; `offset` is the
//! stream offset it is current at), 1 is output starting at `offset`, and 2 is the
//! child's exit (payload: JSON `{code, signal, screen}`). Output is coalesced: at
//! most one message per [`BATCH_WINDOW`] while output streams (up to [`BATCH_MAX`]
//! bytes each); the first output after a quiet spell goes at once.
//!
//! Whoever removes a session's entry from the map (the pane's close, the child's own
//! exit, the app's exit) ends the bridge and calls `close_terminal`, exactly once.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde::Serialize;
use tauri::ipc::{Channel, InvokeResponseBody};
use tauri::State;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use weft_kernel::{Loom, LoomIO};
use weft_protocol::{ErrorCode, OpenTerminalRequest, WireError};
use weft_pty::{Attach, PtyBridge, PtySize, PtySpec};

/// While output streams, at most one message per window (unless it fills up).
pub const BATCH_WINDOW: Duration = Duration::from_millis(8);
/// At most this many bytes per message.
pub const BATCH_MAX: usize = 64 * 1024;

/// After the child exits, its last output is awaited until quiet this long…
const EXIT_DRAIN_QUIET: Duration = Duration::from_millis(50);
/// …and no longer than this.
const EXIT_DRAIN_MAX: Duration = Duration::from_millis(500);

const FRAME_SCREEN: u8 = 0;
const FRAME_DATA: u8 = 1;
const FRAME_EXIT: u8 = 2;

type Reply<T> = Result<T, WireError>;

struct Open {
    bridge: Arc<PtyBridge>,
    forwarder: Option<tauri::async_runtime::JoinHandle<()>>,
}

/// Open terminal bridges by session key.
#[derive(Default)]
pub struct Terminals {
    open: Mutex<HashMap<String, Open>>,
}

impl Terminals {
    /// Takes every bridge out (the app is exiting); the caller kills them.
    fn drain(&self) -> Vec<(String, Arc<PtyBridge>)> {
        let mut open = self.open.lock();
        open.drain()
            .map(|(key, o)| {
                if let Some(f) = o.forwarder {
                    f.abort();
                }
                (key, o.bridge)
            })
            .collect()
    }

    /// Removes `key`'s entry when it still holds `bridge`.
    fn remove_if(&self, key: &str, bridge: &Arc<PtyBridge>) -> bool {
        let mut open = self.open.lock();
        match open.get(key) {
            Some(o) if Arc::ptr_eq(&o.bridge, bridge) => {
                open.remove(key);
                true
            }
            _ => false,
        }
    }

    fn bridge(&self, key: &str) -> Reply<Arc<PtyBridge>> {
        self.open
            .lock()
            .get(key)
            .map(|o| o.bridge.clone())
            .ok_or_else(|| not_open(key))
    }
}

/// Kills every open bridge and ends their terminal turns (the app is exiting).
pub async fn close_all(terminals: &Terminals, loom: &Arc<Loom>) {
    for (key, bridge) in terminals.drain() {
        let _ = tokio::task::spawn_blocking(move || bridge.kill()).await;
        let _ = loom.close_terminal(&key).await;
    }
}

fn not_open(key: &str) -> WireError {
    WireError {
        code: ErrorCode::UnknownSession,
        message: format!("no terminal is open for session {key}"),
    }
}

fn internal(message: String) -> WireError {
    WireError {
        code: ErrorCode::Internal,
        message,
    }
}

fn size(cols: u16, rows: u16) -> PtySize {
    PtySize {
        rows: rows.max(1),
        cols: cols.max(1),
    }
}

/// A binary frame for the pane.
pub fn frame(kind: u8, offset: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + payload.len());
    out.push(kind);
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// What `terminal_open` returns.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalHandle {
    /// The session the terminal belongs to.
    pub session_key: String,
}

#[derive(Serialize)]
struct ExitMessage {
    code: u32,
    signal: Option<String>,
    screen: String,
}

#[tauri::command]
#[allow(clippy::too_many_arguments)]
pub async fn terminal_open(
    app: tauri::AppHandle,
    loom: State<'_, Arc<Loom>>,
    terminals: State<'_, Arc<Terminals>>,
    session_key: Option<String>,
    agent: Option<String>,
    workdir: Option<String>,
    cols: u16,
    rows: u16,
    on_output: Channel,
) -> Reply<TerminalHandle> {
    if let Some(key) = &session_key {
        if terminals.open.lock().contains_key(key) {
            attach_to(&app, &terminals, key, on_output)?;
            return Ok(TerminalHandle {
                session_key: key.clone(),
            });
        }
    }
    let opened = loom
        .open_terminal(OpenTerminalRequest {
            agent,
            session_key,
            workdir,
            model: None,
        })
        .await?;
    let key = opened.session_key.clone();
    let spec = PtySpec {
        program: opened.spec.program,
        args: opened.spec.args,
        env: opened.spec.env,
        cwd: opened.spec.cwd,
    };
    let bridge = match PtyBridge::spawn(&spec, size(cols, rows)) {
        Ok(b) => Arc::new(b),
        Err(e) => {
            let _ = loom.close_terminal(&key).await;
            return Err(internal(format!("cannot start the terminal: {e}")));
        }
    };
    tracing::info!(session = %key, pid = ?bridge.pid(), "terminal opened");
    terminals.open.lock().insert(
        key.clone(),
        Open {
            bridge,
            forwarder: None,
        },
    );
    attach_to(&app, &terminals, &key, on_output)?;
    Ok(TerminalHandle { session_key: key })
}

/// A pane re-opened (after switching sessions): the screen as it is now, then live.
#[tauri::command]
pub async fn terminal_attach(
    app: tauri::AppHandle,
    terminals: State<'_, Arc<Terminals>>,
    session_key: String,
    on_output: Channel,
) -> Reply<()> {
    attach_to(&app, &terminals, &session_key, on_output)
}

#[tauri::command]
pub async fn terminal_write(
    terminals: State<'_, Arc<Terminals>>,
    session_key: String,
    data: String,
) -> Reply<()> {
    let bridge = terminals.bridge(&session_key)?;
    // A write blocks while the child does not read (a big paste): keep it off the
    // async workers.
    tokio::task::spawn_blocking(move || bridge.write(data.as_bytes()))
        .await
        .map_err(|e| internal(format!("writing to the terminal: {e}")))?
        .map_err(|e| internal(format!("writing to the terminal: {e}")))
}

#[tauri::command]
pub async fn terminal_resize(
    terminals: State<'_, Arc<Terminals>>,
    session_key: String,
    cols: u16,
    rows: u16,
) -> Reply<()> {
    let bridge = terminals.bridge(&session_key)?;
    bridge
        .resize(size(cols, rows))
        .map_err(|e| internal(format!("resizing the terminal: {e}")))
}

#[tauri::command]
pub async fn terminal_close(
    loom: State<'_, Arc<Loom>>,
    terminals: State<'_, Arc<Terminals>>,
    session_key: String,
) -> Reply<()> {
    let taken = terminals.open.lock().remove(&session_key);
    let Some(open) = taken else {
        return Ok(());
    };
    if let Some(f) = open.forwarder {
        f.abort();
    }
    let bridge = open.bridge;
    let _ = tokio::task::spawn_blocking(move || {
        bridge.kill();
        drop(bridge);
    })
    .await;
    tracing::info!(session = %session_key, "terminal closed");
    Ok(loom.close_terminal(&session_key).await?)
}

/// Starts (or replaces) the forwarder of `key`'s output to `channel`.
fn attach_to(
    app: &tauri::AppHandle,
    terminals: &Arc<Terminals>,
    key: &str,
    channel: Channel,
) -> Reply<()> {
    let mut open = terminals.open.lock();
    let entry = open.get_mut(key).ok_or_else(|| not_open(key))?;
    if let Some(old) = entry.forwarder.take() {
        old.abort();
    }
    let bridge = entry.bridge.clone();
    let attach = bridge.attach();
    let task = forward(
        app.clone(),
        terminals.clone(),
        key.to_string(),
        bridge,
        attach,
        channel,
    );
    entry.forwarder = Some(tauri::async_runtime::spawn(task));
    Ok(())
}

fn send(channel: &Channel, bytes: Vec<u8>) -> bool {
    channel.send(InvokeResponseBody::Raw(bytes)).is_ok()
}

/// Appends the part of `chunk` past `offset` to `buf`; returns the new offset.
fn take_chunk(buf: &mut Vec<u8>, offset: u64, chunk: &weft_pty::Chunk) -> u64 {
    let end = chunk.offset + chunk.data.len() as u64;
    if end <= offset {
        return offset;
    }
    let skip = offset.saturating_sub(chunk.offset) as usize;
    buf.extend_from_slice(&chunk.data[skip..]);
    end
}

async fn forward(
    app: tauri::AppHandle,
    terminals: Arc<Terminals>,
    key: String,
    bridge: Arc<PtyBridge>,
    mut attach: Attach,
    channel: Channel,
) {
    let mut offset = attach.offset;
    if !send(&channel, frame(FRAME_SCREEN, offset, &attach.screen)) {
        return;
    }
    let mut buf: Vec<u8> = Vec::new();
    let mut last_sent = tokio::time::Instant::now();
    let exited = loop {
        let start = offset;
        tokio::select! {
            chunk = attach.chunks.recv() => match chunk {
                Ok(chunk) => offset = take_chunk(&mut buf, offset, &chunk),
                Err(RecvError::Lagged(_)) => {
                    attach = bridge.attach();
                    offset = attach.offset;
                    buf.clear();
                    if !send(&channel, frame(FRAME_SCREEN, offset, &attach.screen)) {
                        return;
                    }
                    continue;
                }
                Err(RecvError::Closed) => break true,
            },
            _ = bridge.wait() => break true,
        }
        // What is already queued goes along. After a quiet spell that is all (a
        // keystroke's echo is not held back); while output streams, what arrives
        // until one window after the last message goes in the next one.
        let mut resynced = false;
        while buf.len() < BATCH_MAX {
            match attach.chunks.try_recv() {
                Ok(chunk) => offset = take_chunk(&mut buf, offset, &chunk),
                Err(TryRecvError::Lagged(_)) => {
                    resynced = true;
                    break;
                }
                Err(_) => break,
            }
        }
        let deadline = last_sent + BATCH_WINDOW;
        while !resynced && buf.len() < BATCH_MAX && tokio::time::Instant::now() < deadline {
            match tokio::time::timeout_at(deadline, attach.chunks.recv()).await {
                Ok(Ok(chunk)) => offset = take_chunk(&mut buf, offset, &chunk),
                Ok(Err(RecvError::Lagged(_))) => resynced = true,
                Ok(Err(RecvError::Closed)) | Err(_) => break,
            }
        }
        if resynced {
            attach = bridge.attach();
            offset = attach.offset;
            buf.clear();
            if !send(&channel, frame(FRAME_SCREEN, offset, &attach.screen)) {
                return;
            }
            last_sent = tokio::time::Instant::now();
            continue;
        }
        if !buf.is_empty() {
            if !send(&channel, frame(FRAME_DATA, start, &buf)) {
                return;
            }
            last_sent = tokio::time::Instant::now();
        }
        buf.clear();
    };
    if exited {
        let info = bridge.wait().await;
        // The reader may still hold the child's last output: take what comes until
        // the output has been quiet for a moment.
        let start = offset;
        let deadline = tokio::time::Instant::now() + EXIT_DRAIN_MAX;
        while tokio::time::Instant::now() < deadline {
            match tokio::time::timeout(EXIT_DRAIN_QUIET, attach.chunks.recv()).await {
                Ok(Ok(chunk)) => offset = take_chunk(&mut buf, offset, &chunk),
                _ => break,
            }
        }
        if !buf.is_empty() {
            send(&channel, frame(FRAME_DATA, start, &buf));
            buf.clear();
        }
        let message = ExitMessage {
            code: info.code,
            signal: info.signal.clone(),
            screen: bridge.screen_text(),
        };
        let payload = serde_json::to_vec(&message).unwrap_or_default();
        send(&channel, frame(FRAME_EXIT, offset, &payload));
        if terminals.remove_if(&key, &bridge) {
            tracing::info!(session = %key, code = info.code, "terminal exited on its own");
            drop(bridge);
            use tauri::Manager;
            let loom = app.state::<Arc<Loom>>().inner().clone();
            if let Err(e) = loom.close_terminal(&key).await {
                tracing::warn!(session = %key, "closing the terminal turn: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_kind_offset_payload() {
        let f = frame(FRAME_DATA, 0x0102, b"hi");
        assert_eq!(f[0], 1);
        assert_eq!(&f[1..9], &0x0102u64.to_le_bytes());
        assert_eq!(&f[9..], b"hi");
    }

    #[test]
    fn chunks_already_seen_are_skipped() {
        let mut buf = Vec::new();
        let c = weft_pty::Chunk {
            offset: 10,
            data: bytes_of(b"abcdef"),
        };
        assert_eq!(take_chunk(&mut buf, 20, &c), 20);
        assert!(buf.is_empty());
        assert_eq!(take_chunk(&mut buf, 13, &c), 16);
        assert_eq!(buf, b"def");
    }

    fn bytes_of(b: &[u8]) -> bytes::Bytes {
        bytes::Bytes::copy_from_slice(b)
    }
}
