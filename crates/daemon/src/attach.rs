//! One connection attached to one terminal: the screen as it is now, then live output,
//! as binary frames carrying the session key. Output is coalesced: at most one frame
//! per [`BATCH_WINDOW`] while output streams (up to [`BATCH_MAX`] bytes each); the
//! first output after a quiet spell goes at once, so a keystroke's echo is not held
//! back. A connection that falls behind the bridge's buffer gets the screen again and
//! continues from there (it skips, it never makes the bridge wait).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::mpsc;
use weft_kernel::pty::{Attach, Chunk, PtyBridge};
use weft_protocol::{frame_kind, TerminalFrame};

/// While output streams, at most one frame per window (unless it fills up).
pub const BATCH_WINDOW: Duration = Duration::from_millis(8);
/// At most this many bytes per frame.
pub const BATCH_MAX: usize = 64 * 1024;
/// After the child exits, its last output is awaited until quiet this long…
const EXIT_DRAIN_QUIET: Duration = Duration::from_millis(50);
/// …and no longer than this.
const EXIT_DRAIN_MAX: Duration = Duration::from_millis(500);

#[derive(Serialize)]
struct ExitMessage {
    code: u32,
    signal: Option<String>,
    screen: String,
}

struct Out {
    key: String,
    tx: mpsc::Sender<Bytes>,
}

impl Out {
    async fn send(&self, kind: u8, offset: u64, payload: &[u8]) -> bool {
        let frame = TerminalFrame {
            session_key: self.key.clone(),
            kind,
            offset,
            payload: payload.to_vec(),
        };
        self.tx.send(Bytes::from(frame.encode())).await.is_ok()
    }
}

/// Appends the part of `chunk` past `offset` to `buf`; returns the new offset.
fn take_chunk(buf: &mut Vec<u8>, offset: u64, chunk: &Chunk) -> u64 {
    let end = chunk.offset + chunk.data.len() as u64;
    if end <= offset {
        return offset;
    }
    let skip = offset.saturating_sub(chunk.offset) as usize;
    buf.extend_from_slice(&chunk.data[skip..]);
    end
}

/// Forwards `bridge`'s output to `tx` until the program exits (then an exit frame) or
/// the connection goes away. `first` is sent before anything else (the reply that
/// tells the client which session's frames follow).
pub async fn forward(key: String, bridge: Arc<PtyBridge>, tx: mpsc::Sender<Bytes>, first: Bytes) {
    if tx.send(first).await.is_err() {
        return;
    }
    let out = Out { key, tx };
    let mut attach: Attach = bridge.attach();
    let mut offset = attach.offset;
    if !out.send(frame_kind::SCREEN, offset, &attach.screen).await {
        return;
    }
    let mut buf: Vec<u8> = Vec::new();
    let mut last_sent = tokio::time::Instant::now();
    loop {
        let start = offset;
        tokio::select! {
            chunk = attach.chunks.recv() => match chunk {
                Ok(chunk) => offset = take_chunk(&mut buf, offset, &chunk),
                Err(RecvError::Lagged(_)) => {
                    attach = bridge.attach();
                    offset = attach.offset;
                    buf.clear();
                    if !out.send(frame_kind::SCREEN, offset, &attach.screen).await {
                        return;
                    }
                    continue;
                }
                Err(RecvError::Closed) => break,
            },
            _ = bridge.wait() => break,
        }
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
            if !out.send(frame_kind::SCREEN, offset, &attach.screen).await {
                return;
            }
            last_sent = tokio::time::Instant::now();
            continue;
        }
        if !buf.is_empty() {
            if !out.send(frame_kind::DATA, start, &buf).await {
                return;
            }
            last_sent = tokio::time::Instant::now();
        }
        buf.clear();
    }
    let info = bridge.wait().await;
    // The reader may still hold the child's last output: take what comes until the
    // output has been quiet for a moment.
    let start = offset;
    let deadline = tokio::time::Instant::now() + EXIT_DRAIN_MAX;
    while tokio::time::Instant::now() < deadline {
        match tokio::time::timeout(EXIT_DRAIN_QUIET, attach.chunks.recv()).await {
            Ok(Ok(chunk)) => offset = take_chunk(&mut buf, offset, &chunk),
            _ => break,
        }
    }
    if !buf.is_empty() {
        out.send(frame_kind::DATA, start, &buf).await;
    }
    let message = ExitMessage {
        code: info.code,
        signal: info.signal.clone(),
        screen: bridge.screen_text(),
    };
    let payload = serde_json::to_vec(&message).unwrap_or_default();
    out.send(frame_kind::EXIT, offset, &payload).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_already_seen_are_skipped() {
        let mut buf = Vec::new();
        let c = Chunk {
            offset: 10,
            data: Bytes::from_static(b"abcdef"),
        };
        assert_eq!(take_chunk(&mut buf, 20, &c), 20);
        assert!(buf.is_empty());
        assert_eq!(take_chunk(&mut buf, 13, &c), 16);
        assert_eq!(buf, b"def");
    }
}
