//! The Unix socket: mode 0600 in a 0700 folder that is ours (one that another user
//! made first, or that others may write, is refused: see
//! `weft_client::paths::check_socket_dir`), and every peer's uid checked against ours
//! (`SO_PEERCRED`), so only the user who owns the home reaches the kernel. Frames are
//! length-delimited (see `weft_client::frame`).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use tokio_util::codec::Framed;

use crate::conn::{Conn, Transport, OUTGOING};
use crate::service::Service;

/// Binds the socket at `path` (a stale file from a dead daemon is replaced: we hold the
/// lock, so nobody else is listening there). Its folder is made 0700 when missing and
/// refused when it is another user's or open to others.
pub fn bind(path: &Path) -> std::io::Result<UnixListener> {
    if let Some(dir) = path.parent() {
        weft_client::paths::make_socket_dir(dir)?;
    }
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Accepts connections until the service stops.
pub async fn serve(service: Arc<Service>, listener: UnixListener) {
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("accepting a socket client: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = service.stopped() => return,
        };
        if !same_user(&stream) {
            tracing::warn!("refused a socket client of another user");
            continue;
        }
        tokio::spawn(connection(service.clone(), stream));
    }
}

fn same_user(stream: &UnixStream) -> bool {
    let ours = nix::unistd::getuid().as_raw();
    stream.peer_cred().is_ok_and(|c| c.uid() == ours)
}

async fn connection(service: Arc<Service>, stream: UnixStream) {
    let _task = service.connection_task();
    let (mut sink, mut frames) = Framed::new(stream, weft_client::frame::codec()).split();
    let (out, mut outgoing) = mpsc::channel::<Bytes>(OUTGOING);
    let writer = tokio::spawn(async move {
        // Frames already queued go out in one write: a streamed turn is a patch per
        // token, and a write (and a wake-up of the client) per frame was a syscall per
        // token on both sides. Nothing waits: the flush comes once the queue is empty.
        'write: while let Some(bytes) = outgoing.recv().await {
            if sink.feed(bytes).await.is_err() {
                break;
            }
            while let Ok(bytes) = outgoing.try_recv() {
                if sink.feed(bytes).await.is_err() {
                    break 'write;
                }
            }
            if sink.flush().await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let initial = crate::api::initial_scopes(Transport::Socket);
    let conn = Conn::new(&service, Transport::Socket, out, initial);
    loop {
        let frame = tokio::select! {
            f = frames.next() => f,
            _ = service.hung_up() => break,
        };
        match frame {
            Some(Ok(bytes)) => crate::api::on_frame(&service, &conn, &bytes, false).await,
            Some(Err(e)) => {
                tracing::debug!("a socket client sent a bad frame: {e}");
                break;
            }
            None => break,
        }
    }
    conn.close(&service, writer).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_socket_folder_open_to_others_or_theirs_is_not_bound() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let fallback = dir.path().join("weft-0");
        std::fs::create_dir(&fallback).unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&fallback, std::fs::Permissions::from_mode(0o777))
            .unwrap_or_else(|e| panic!("{e}"));
        let socket = fallback.join("weft-0123456789abcdef.sock");
        let e = bind(&socket).err().map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("mode 0777")),
            "{e:?}"
        );
        assert!(!socket.exists());
        if nix::unistd::getuid().is_root() {
            std::fs::set_permissions(&fallback, std::fs::Permissions::from_mode(0o700))
                .unwrap_or_else(|e| panic!("{e}"));
            std::os::unix::fs::chown(&fallback, Some(65534), Some(65534))
                .unwrap_or_else(|e| panic!("{e}"));
            let e = bind(&socket).err().map(|e| e.to_string());
            assert!(
                e.as_deref()
                    .is_some_and(|e| e.contains("belongs to uid 65534")),
                "{e:?}"
            );
            assert!(!socket.exists());
        } else {
            eprintln!("SKIPPED another user's folder: only root can make one");
        }
        // Made fresh, it is private.
        let fresh = dir.path().join("fresh").join("weft-1");
        let listener = bind(&fresh.join("s.sock")).unwrap_or_else(|e| panic!("{e}"));
        drop(listener);
        let mode = std::fs::metadata(&fresh).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o700));
    }
}
