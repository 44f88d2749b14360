//! Reading an agent's stdout in bursts, on a thread of its own: why and how.
//!
//! An agent streaming a reply writes a line per token, tens of microseconds apart. A
//! reader that waits on the pipe is woken by every one of those writes, and the waking is
//! paid by the agent, inside its `write`; a pipe that was ever registered with epoll (as
//! the async runtime registers a child's stdout the moment it starts) wakes its waiters on
//! *every* write, empty or not, for as long as it lives. So the agents' stdout is a pipe
//! Weft makes itself, never polled, read by a thread with blocking reads that sleeps out
//! [`PACE`] after each read that drained a trickle: while it sleeps nobody waits on the
//! pipe, the agent's writes wake nobody, and the next read takes everything written
//! meanwhile.

use std::io::Read;
use std::time::Duration;

use tokio::io::AsyncRead;
use tokio::sync::mpsc;

/// How long [`Paced`] waits, once it has drained its input, before reading again.
pub const PACE: Duration = Duration::from_millis(1);

/// A read below this size found a trickle (a token stream), not bulk output: the next
/// read waits out [`PACE`]. Bulk output (a long line) is read at full speed.
const TRICKLE: usize = 16 * 1024;

/// A pipe read in bursts: once a read has drained a trickle from it, the next read
/// comes only after [`PACE`] (see the module docs). At most one wakeup per `PACE`, for
/// at most `PACE` of added latency; an idle agent costs nothing (the read after the
/// pause blocks until its next line).
pub struct Paced<R> {
    inner: R,
    drained: bool,
}

impl<R: Read> Paced<R> {
    /// Paces reads of `inner`, which must never have been polled (see the module docs).
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            drained: false,
        }
    }
}

impl<R: Read> Read for Paced<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.drained {
            std::thread::sleep(PACE);
        }
        let n = loop {
            match self.inner.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                r => break r?,
            }
        };
        // A read that did not fill `buf` emptied the pipe (a pipe read returns what it
        // holds, up to the size asked).
        self.drained = n > 0 && n < buf.len() && n < TRICKLE;
        Ok(n)
    }
}

/// A child's stdout read in paced bursts by a thread of its own ([`Paced`]), handed
/// over as an [`AsyncRead`] for a caller that parses the bytes itself (a JSON-RPC
/// connection). Ends (reads 0) when the pipe closes.
pub struct PacedStdout {
    chunks: mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl PacedStdout {
    /// Starts the thread reading `pipe`, which must never have been polled (see the
    /// module docs).
    pub fn start(pipe: std::io::PipeReader) -> std::io::Result<Self> {
        let (tx, chunks) = mpsc::channel(64);
        std::thread::Builder::new()
            .name("weft-agent-out".into())
            .spawn(move || {
                let mut paced = Paced::new(pipe);
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n @ 1..) = paced.read(&mut buf) {
                    if tx.blocking_send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Self {
            chunks,
            chunk: Vec::new(),
            at: 0,
        })
    }
}

impl AsyncRead for PacedStdout {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.at == this.chunk.len() {
            match this.chunks.poll_recv(cx) {
                std::task::Poll::Ready(Some(chunk)) => {
                    this.chunk = chunk;
                    this.at = 0;
                }
                // The pipe closed: end of file.
                std::task::Poll::Ready(None) => return std::task::Poll::Ready(Ok(())),
                std::task::Poll::Pending => return std::task::Poll::Pending,
            }
        }
        let n = buf.remaining().min(this.chunk.len() - this.at);
        buf.put_slice(&this.chunk[this.at..this.at + n]);
        this.at += n;
        std::task::Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::lines::{read_lines_blocking, RawLine};

    /// Counts the reads that reach the pipe.
    struct Counted<R>(R, Arc<AtomicUsize>);

    impl<R: Read> Read for Counted<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.1.fetch_add(1, Ordering::Relaxed);
            self.0.read(buf)
        }
    }

    #[test]
    fn a_trickle_of_lines_is_read_at_most_once_per_pace() {
        // 300 lines 50 µs apart, the way an agent streams tokens: read as they come, that
        // would be a read (and a wakeup of the reader, paid by the writer) per line.
        let (reader, mut writer) = std::io::pipe().unwrap();
        let reads = Arc::new(AtomicUsize::new(0));
        let (tx, mut rx) = mpsc::channel(1024);
        let counted = Counted(reader, reads.clone());
        let thread = std::thread::spawn(move || {
            read_lines_blocking(
                std::io::BufReader::with_capacity(64 * 1024, Paced::new(counted)),
                1 << 20,
                tx,
            )
        });
        let start = std::time::Instant::now();
        for i in 0..300 {
            use std::io::Write;
            writer
                .write_all(format!("{{\"delta\":{i}}}\n").as_bytes())
                .unwrap();
            std::thread::sleep(Duration::from_micros(50));
        }
        drop(writer);
        let elapsed = start.elapsed();
        thread.join().unwrap();
        let mut lines = 0;
        while let Ok(l) = rx.try_recv() {
            if matches!(l, RawLine::Line(_)) {
                lines += 1;
            }
        }
        assert_eq!(lines, 300);
        // However slow the machine (the bound grows with the time taken), at most one
        // read per PACE, plus the first, the one that sees EOF and a spare.
        let allowed = (elapsed.as_micros() / PACE.as_micros()) as usize + 3;
        let reads = reads.load(Ordering::Relaxed);
        assert!(
            reads <= allowed,
            "{reads} reads for 300 lines over {elapsed:?} (at most {allowed})"
        );
    }

    /// Hands over at most 64 KB a read, as a pipe does.
    struct Pipe<'a>(&'a [u8]);

    impl Read for Pipe<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(64 * 1024).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn bulk_output_is_read_without_pauses_and_a_trickle_with_one() {
        let big = vec![b'x'; 1 << 20];
        let mut paced = Paced::new(Pipe(&big));
        let mut buf = vec![0; 256 * 1024];
        for _ in 0..16 {
            assert_eq!(paced.read(&mut buf).unwrap(), 64 * 1024);
            assert!(
                !paced.drained,
                "a 64 KB read is bulk: no pause before the next"
            );
        }
        let mut paced = Paced::new(Pipe(b"{\"delta\":1}\n"));
        assert_eq!(paced.read(&mut buf).unwrap(), 12);
        assert!(paced.drained, "a line read alone is a trickle: pause");
        assert_eq!(paced.read(&mut buf).unwrap(), 0);
        assert!(!paced.drained, "end of input: nothing to pause for");
    }
}
