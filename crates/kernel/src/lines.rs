//! Reading an agent process's stdout as lines, safely, for drivers that speak a
//! line-delimited protocol: a line is capped (a 16 MB line must not become a 16 MB
//! allocation times the channel depth), a line cut by the process dying is reported as
//! cut, and the caller decides how to decode the bytes.

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

/// Reads `reader` into `tx` line by line until EOF or the receiver goes away.
pub async fn read_lines<R: AsyncBufRead + Unpin>(
    mut reader: R,
    max_line: usize,
    tx: mpsc::Sender<RawLine>,
) {
    let mut buf: Vec<u8> = Vec::new();
    let mut skipping: Option<(usize, Vec<u8>)> = None;
    loop {
        let chunk = reader.fill_buf().await.unwrap_or_default();
        if chunk.is_empty() {
            let last = match skipping.take() {
                Some((len, head)) => Some(RawLine::TooLong { len, head }),
                None if !buf.is_empty() => Some(RawLine::Cut(std::mem::take(&mut buf))),
                None => None,
            };
            if let Some(last) = last {
                let _ = tx.send(last).await;
            }
            let _ = tx.send(RawLine::Eof).await;
            return;
        }
        let (piece, newline) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (&chunk[..i], true),
            None => (chunk, false),
        };
        let used = piece.len() + usize::from(newline);
        match skipping.as_mut() {
            Some((len, _)) => *len += piece.len(),
            None => {
                buf.extend_from_slice(piece);
                if buf.len() > max_line {
                    let head = buf[..HEAD.min(buf.len())].to_vec();
                    skipping = Some((buf.len(), head));
                    buf = Vec::new();
                }
            }
        }
        reader.consume(used);
        if newline {
            let out = match skipping.take() {
                Some((len, head)) => RawLine::TooLong { len, head },
                None => RawLine::Line(std::mem::take(&mut buf)),
            };
            if tx.send(out).await.is_err() {
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
    fn preview_cuts_at_the_head() {
        assert_eq!(preview(b"short"), "short");
        let long = vec![b'x'; 200];
        assert_eq!(preview(&long), format!("{}…", "x".repeat(HEAD)));
    }
}
