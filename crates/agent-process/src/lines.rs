//! Reading an agent process's stdout as lines, safely, for drivers that speak a
//! line-delimited protocol: a line is capped (a 16 MB line must not become a 16 MB
//! allocation times the channel depth), a line cut by the process dying is reported as
//! cut, and the caller decides how to decode the bytes. And following a file an agent
//! appends lines to (its session transcript) while its own terminal UI runs.

use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
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

    /// A line, one over the cap of 20, another, and a tail with no newline.
    const INPUT: &[u8] =
        b"{\"a\":1}\n0123456789012345678901234567890123456789\nshort\ntail-no-newline";

    /// What either reader makes of [`INPUT`] with a cap of 20.
    fn assert_split(lines: &[RawLine]) {
        assert!(matches!(&lines[0], RawLine::Line(l) if l == b"{\"a\":1}"));
        assert!(matches!(&lines[1], RawLine::TooLong { len: 40, .. }));
        assert!(matches!(&lines[2], RawLine::Line(l) if l == b"short"));
        assert!(matches!(&lines[3], RawLine::Cut(l) if l == b"tail-no-newline"));
        assert!(matches!(lines[4], RawLine::Eof));
        assert_eq!(lines.len(), 5);
    }

    #[tokio::test]
    async fn splits_caps_and_reports_a_cut_tail() {
        assert_split(&collect(INPUT, 20).await);
    }

    #[test]
    fn the_blocking_reader_splits_the_same_way() {
        let (tx, mut rx) = mpsc::channel(64);
        read_lines_blocking(std::io::BufReader::with_capacity(7, INPUT), 20, tx);
        let mut lines = Vec::new();
        while let Ok(l) = rx.try_recv() {
            lines.push(l);
        }
        assert_split(&lines);
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
