//! The stream to a host's daemon: `ssh -T HOST <abs path>/weft proxy`, its stdout
//! and stdin as one byte stream that `weft_client::Client::connect_over` speaks the
//! daemon's framing over.
//!
//! A login shell's rc file may print to stdout before the command runs (a banner, a
//! `echo` in `.bashrc`, which bash reads even for ssh's commands): those bytes would
//! be read as a frame's length. So `weft proxy` first writes [`MARKER`], and the link
//! drops everything up to it.
//!
//! Dropping the link closes ssh's stdin: the remote `weft proxy` sees its input end
//! and exits, and the host's daemon, which never belonged to the SSH session, goes on
//! with every turn. Killing the `ssh` process does the same from the host's side.

use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::task::{Context, Poll};

use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, Join, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};
use weft_client::Home;

use crate::list::{Host, Hosts};
use crate::{contact, remote_binary, HostError, Ssh};

/// What ssh (and the remote `weft proxy`) wrote to stderr, kept to explain a link
/// that failed.
#[derive(Debug, Clone, Default)]
pub struct Stderr(Arc<Mutex<(String, bool)>>);

impl Stderr {
    /// What was written so far, once the writer closed it or `wait` has passed.
    pub async fn text(&self, wait: std::time::Duration) -> String {
        let deadline = tokio::time::Instant::now() + wait;
        while !self.0.lock().1 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        self.0.lock().0.trim().to_string()
    }
}

/// What `weft proxy` writes before its first frame.
pub const MARKER: &[u8] = b"\0weft-proxy-1\0";

/// How much a login shell may print before the marker (more is dropped all the same,
/// but not kept).
const BANNER_KEPT: usize = 64 << 10;

/// A running `ssh … weft proxy`.
#[derive(Debug)]
pub struct Link {
    io: Join<ChildStdout, ChildStdin>,
    /// Read before the marker was found (what follows it is handed out first).
    before: Vec<u8>,
    /// Whether the marker was found.
    found: bool,
    /// Held so the process is reaped when the link goes; not killed: its stdin
    /// closing ends it.
    child: Child,
    stderr: Stderr,
}

impl Link {
    /// Its stderr, to explain a failure.
    pub fn stderr(&self) -> Stderr {
        self.stderr.clone()
    }

    /// The ssh process's pid.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

impl AsyncRead for Link {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        while !this.found {
            let mut chunk = [0u8; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.io).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                // Ended before the proxy spoke: the caller sees the end.
                Poll::Ready(Ok(())) if read.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => {}
            }
            this.before.extend_from_slice(read.filled());
            if let Some(at) = find(&this.before, MARKER) {
                this.before.drain(..at + MARKER.len());
                this.found = true;
            } else if this.before.len() > BANNER_KEPT {
                let keep = this.before.len() - (MARKER.len() - 1);
                this.before.drain(..keep);
            }
        }
        if !this.before.is_empty() {
            let n = this.before.len().min(buf.remaining());
            buf.put_slice(&this.before[..n]);
            this.before.drain(..n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

impl AsyncWrite for Link {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The host `name` ready for a link: first contact made if this binary was never
/// checked there (or `again`), its record updated.
pub async fn ready(home: &Home, ssh: &Ssh, name: &str, again: bool) -> Result<Host, HostError> {
    let mut hosts = Hosts::load(home)?;
    let mut host = hosts.get(name)?.clone();
    // A `weft serve` reached over TLS runs its own weft: nothing to install.
    if host.direct() {
        return Ok(host);
    }
    let exe = weft_client::start::weft_binary().ok_or_else(|| {
        HostError::Io(std::io::Error::other(
            "this weft's own binary was not found (set WEFT_BIN) to copy to the host",
        ))
    })?;
    let local = contact::local_id(&exe)?;
    let current = host.installed.as_ref().is_some_and(|i| {
        i.version == weft_client::VERSION && i.local == local && host.home.is_some()
    });
    if current && !again {
        return Ok(host);
    }
    let made = contact::contact(ssh, name, &host.destination, &exe).await?;
    host.home = Some(made.probe.home);
    host.installed = Some(made.installed);
    // Re-read: another command may have changed the list meanwhile.
    hosts = Hosts::load(home)?;
    hosts.update(host.clone());
    hosts.save(home)?;
    Ok(host)
}

/// Opens `ssh … weft proxy` to `host` (made [`ready`] first).
pub fn open(ssh: &Ssh, host: &Host) -> Result<Link, HostError> {
    let home = host.home.as_deref().unwrap_or_default();
    let bin = remote_binary(home, weft_client::VERSION);
    let mut child = ssh
        .command(&host.destination, &[&bin, "proxy"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| HostError::Unreachable {
            host: host.name.clone(),
            why: format!("cannot run ssh: {e}"),
        })?;
    let (Some(stdin), Some(stdout), Some(mut err)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(HostError::Io(std::io::Error::other("ssh without pipes")));
    };
    let stderr = Stderr::default();
    let kept = stderr.clone();
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        loop {
            match err.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let mut slot = kept.0.lock();
                    // Enough to explain a failure; a chatty rc file cannot grow it.
                    if slot.0.len() < 16 << 10 {
                        slot.0.push_str(&String::from_utf8_lossy(&buf[..n]));
                    }
                }
            }
        }
        kept.0.lock().1 = true;
    });
    Ok(Link {
        io: tokio::io::join(stdout, stdin),
        before: Vec::new(),
        found: false,
        child,
        stderr,
    })
}
