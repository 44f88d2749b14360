//! Reading an agent process's stdout as lines, safely, for drivers that speak a
//! line-delimited protocol: a line is capped (a 16 MB line must not become a 16 MB
//! allocation times the channel depth), a line cut by the process dying is reported as
//! cut, and the caller decides how to decode the bytes. And following a file an agent
//! appends lines to (its session transcript) while its own terminal UI runs.

use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead};
use tokio::sync::mpsc;

/// One read from stdout.
#[derive(Debug)]
pub enum RawLine {
    /// A whole line, without its newline.
    Line(Vec<u8>),
    /// A line longer than the cap: skipped; its size and first bytes.
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// Its first bytes.
        head: Vec<u8>,
    },
    /// Bytes after the last newline when stdout closed: a line cut short.
    Cut(Vec<u8>),
    /// stdout closed.
    Eof,
}

/// How much of a line [`RawLine::TooLong`] keeps and [`preview`] shows.
const HEAD: usize = 120;

/// Cuts a byte stream into capped lines; the async and the blocking reader share it.
#[derive(Default)]
struct Splitter {
    /// The line so far.
    buf: Vec<u8>,
    /// A line over the cap being skipped: its length so far and its head.
    skipping: Option<(usize, Vec<u8>)>,
}

impl Splitter {
    /// Takes `chunk` up to and including its first newline: the bytes used, and the
    /// line that newline ended.
    fn take(&mut self, chunk: &[u8], max_line: usize) -> (usize, Option<RawLine>) {
        let (piece, newline) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (&chunk[..i], true),
            None => (chunk, false),
        };
        match self.skipping.as_mut() {
            Some((len, _)) => *len += piece.len(),
            None => {
                self.buf.extend_from_slice(piece);
                if self.buf.len() > max_line {
                    let head = self.buf[..HEAD.min(self.buf.len())].to_vec();
                    self.skipping = Some((self.buf.len(), head));
                    self.buf = Vec::new();
                }
            }
        }
        let line = newline.then(|| match self.skipping.take() {
            Some((len, head)) => RawLine::TooLong { len, head },
            None => RawLine::Line(std::mem::take(&mut self.buf)),
        });
        (piece.len() + usize::from(newline), line)
    }

    /// The stream ended: the line it cut short or was skipping, if any.
    fn finish(&mut self) -> Option<RawLine> {
        match self.skipping.take() {
            Some((len, head)) => Some(RawLine::TooLong { len, head }),
            None if !self.buf.is_empty() => Some(RawLine::Cut(std::mem::take(&mut self.buf))),
            None => None,
        }
    }
}

/// Reads `reader` into `tx` line by line until EOF or the receiver goes away.
pub async fn read_lines<R: AsyncBufRead + Unpin>(
    mut reader: R,
    max_line: usize,
    tx: mpsc::Sender<RawLine>,
) {
    let mut split = Splitter::default();
    loop {
        let chunk = reader.fill_buf().await.unwrap_or_default();
        if chunk.is_empty() {
            if let Some(last) = split.finish() {
                let _ = tx.send(last).await;
            }
            let _ = tx.send(RawLine::Eof).await;
            return;
        }
        let (used, line) = split.take(chunk, max_line);
        reader.consume(used);
        if let Some(line) = line {
            if tx.send(line).await.is_err() {
                return;
            }
        }
    }
}

/// [`read_lines`] for a thread of its own (not a runtime's): blocking reads, blocking
/// sends.
pub fn read_lines_blocking<R: BufRead>(mut reader: R, max_line: usize, tx: mpsc::Sender<RawLine>) {
    let mut split = Splitter::default();
    loop {
        let chunk = reader.fill_buf().unwrap_or_default();
        if chunk.is_empty() {
            if let Some(last) = split.finish() {
                let _ = tx.blocking_send(last);
            }
            let _ = tx.blocking_send(RawLine::Eof);
            return;
        }
        let (used, line) = split.take(chunk, max_line);
        reader.consume(used);
        if let Some(line) = line {
            if tx.blocking_send(line).is_err() {
                return;
            }
        }
    }
}

/// How long [`Paced`] waits, once it has drained its input, before reading again.
pub const PACE: Duration = Duration::from_millis(1);

/// A read below this size found a trickle (a token stream), not bulk output: the next
/// read waits out [`PACE`]. Bulk output (a long line) is read at full speed.
const TRICKLE: usize = 16 * 1024;

/// A pipe read in bursts: once a read has drained a trickle from it, the next read
/// comes only after [`PACE`].
///
/// Why: an agent streaming a reply writes a line per token, tens of microseconds
/// apart. A reader that waits on the pipe is woken by every one of those writes, and
/// the waking is paid by the agent, inside its `write` (and a pipe that was ever
/// registered with epoll wakes its waiters on *every* write, empty or not, for as long
/// as it lives). A reader that sleeps out `PACE` after draining is not waiting while
/// the lines pile up, so the agent's writes wake nobody, and it takes them all in one
/// read: at most one wakeup per `PACE`, for at most `PACE` of added latency. An idle
/// agent costs nothing: the read after the pause blocks until its next line.
pub struct Paced<R> {
    inner: R,
    drained: bool,
}

impl<R: Read> Paced<R> {
    /// Paces reads of `inner`, which must never have been polled (see above).
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
    /// Starts the thread reading `pipe`, which must never have been polled (see
    /// [`Paced`]).
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

/// The first bytes of a line, printable, for an error message.
pub fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(HEAD)]).into_owned();
    if bytes.len() > HEAD {
        format!("{text}…")
    } else {
        text
    }
}

/// Most bytes one [`FileTail::read`] takes from the file (a longer record is read over
/// several calls).
const TAIL_READ_MAX: u64 = 16 << 20;

/// A file another process appends lines to, read from an offset, complete lines at a
/// time.
#[derive(Debug)]
pub struct FileTail {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
}

impl FileTail {
    /// Follows `path` from its start.
    pub fn from_start(path: PathBuf) -> Self {
        Self {
            path,
            offset: 0,
            partial: Vec::new(),
        }
    }

    /// Follows `path` from its current end: what it holds now is history.
    pub fn from_end(path: PathBuf) -> Self {
        let offset = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        Self {
            path,
            offset,
            partial: Vec::new(),
        }
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The complete, non-empty lines appended since the last call. A file rewritten
    /// shorter is followed from its new end: what is there now was not appended.
    pub fn read(&mut self) -> Vec<Vec<u8>> {
        let Ok(mut f) = std::fs::File::open(&self.path) else {
            return Vec::new();
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        if len < self.offset {
            self.offset = len;
            self.partial.clear();
            return Vec::new();
        }
        if len == self.offset || f.seek(SeekFrom::Start(self.offset)).is_err() {
            return Vec::new();
        }
        let mut buf = Vec::new();
        let n = f
            .take((len - self.offset).min(TAIL_READ_MAX))
            .read_to_end(&mut buf)
            .unwrap_or(0);
        self.offset += n as u64;
        self.partial.extend_from_slice(&buf[..n]);
        let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') else {
            return Vec::new();
        };
        let rest = self.partial.split_off(end + 1);
        let complete = std::mem::replace(&mut self.partial, rest);
        complete
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;

    async fn collect(input: &[u8], max: usize) -> Vec<RawLine> {
        let (tx, mut rx) = mpsc::channel(64);
        read_lines(tokio::io::BufReader::with_capacity(7, input), max, tx).await;
        let mut out = Vec::new();
        while let Some(l) = rx.recv().await {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn splits_caps_and_reports_a_cut_tail() {
        let input = b"{\"a\":1}\n0123456789012345678901234567890123456789\nshort\ntail-no-newline";
        let lines = collect(input, 20).await;
        assert!(matches!(&lines[0], RawLine::Line(l) if l == b"{\"a\":1}"));
        assert!(matches!(&lines[1], RawLine::TooLong { len: 40, .. }));
        assert!(matches!(&lines[2], RawLine::Line(l) if l == b"short"));
        assert!(matches!(&lines[3], RawLine::Cut(l) if l == b"tail-no-newline"));
        assert!(matches!(lines[4], RawLine::Eof));
    }

    #[test]
    fn the_blocking_reader_splits_the_same_way() {
        let input = b"{\"a\":1}\n0123456789012345678901234567890123456789\nshort\ntail-no-newline";
        let (tx, mut rx) = mpsc::channel(64);
        read_lines_blocking(std::io::BufReader::with_capacity(7, &input[..]), 20, tx);
        let mut lines = Vec::new();
        while let Ok(l) = rx.try_recv() {
            lines.push(l);
        }
        assert!(matches!(&lines[0], RawLine::Line(l) if l == b"{\"a\":1}"));
        assert!(matches!(&lines[1], RawLine::TooLong { len: 40, .. }));
        assert!(matches!(&lines[2], RawLine::Line(l) if l == b"short"));
        assert!(matches!(&lines[3], RawLine::Cut(l) if l == b"tail-no-newline"));
        assert!(matches!(lines[4], RawLine::Eof));
        assert_eq!(lines.len(), 5);
    }

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

    #[test]
    fn preview_cuts_at_the_head() {
        assert_eq!(preview(b"short"), "short");
        let long = vec![b'x'; 200];
        assert_eq!(preview(&long), format!("{}…", "x".repeat(HEAD)));
    }

    #[test]
    fn the_tail_reads_complete_lines_only_and_from_where_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "old line\n").unwrap();
        let mut tail = FileTail::from_end(path.clone());
        assert!(tail.read().is_empty());
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"one\ntw").unwrap();
        assert_eq!(tail.read(), vec![b"one".to_vec()]);
        f.write_all(b"o\n\n").unwrap();
        assert_eq!(tail.read(), vec![b"two".to_vec()]);
        assert!(tail.read().is_empty());
        let mut from_start = FileTail::from_start(path.clone());
        assert_eq!(from_start.read().len(), 3);
        // Rewritten shorter: nothing of what is there now is taken as appended.
        std::fs::write(&path, "x\n").unwrap();
        assert!(tail.read().is_empty());
        std::fs::write(&path, "x\nnew\n").unwrap();
        assert_eq!(tail.read(), vec![b"new".to_vec()]);
    }
}
