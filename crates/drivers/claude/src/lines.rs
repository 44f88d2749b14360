//! Reading the CLI's stdout as lines, safely: a line is capped (a 16 MB line must not
//! become a 16 MB allocation times the channel depth), a line cut by the process dying
//! is reported as cut, and invalid UTF-8 is decoded lossily rather than dropped.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tokio::sync::mpsc;

use crate::wire::OutLine;

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

const HEAD: usize = 120;

/// Reads `reader` into `tx` until EOF or the receiver goes away.
pub async fn read_lines<R: AsyncBufRead + Unpin>(
    mut reader: R,
    max_line: usize,
    tx: mpsc::Sender<RawLine>,
) {
    let mut buf: Vec<u8> = Vec::new();
    let mut skipping: Option<(usize, Vec<u8>)> = None;
    loop {
        let chunk = match reader.fill_buf().await {
            Ok(c) => c,
            Err(_) => &[],
        };
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

/// A line parsed.
#[derive(Debug)]
pub enum Parsed {
    /// Valid JSON of a known shape (or `Other`).
    Line(OutLine),
    /// Valid once invalid UTF-8 was replaced.
    Lossy(OutLine),
    /// Not a stream-json line; why.
    Malformed(String),
    /// Blank.
    Blank,
}

/// Parses one line.
pub fn parse(bytes: &[u8]) -> Parsed {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Blank;
    }
    match serde_json::from_slice::<OutLine>(bytes) {
        Ok(line) => Parsed::Line(line),
        Err(e) => match std::str::from_utf8(bytes) {
            Ok(_) => Parsed::Malformed(e.to_string()),
            Err(_) => {
                let text = String::from_utf8_lossy(bytes);
                match serde_json::from_str::<OutLine>(&text) {
                    Ok(line) => Parsed::Lossy(line),
                    Err(e) => Parsed::Malformed(format!("invalid UTF-8, and then: {e}")),
                }
            }
        },
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
        let reader = tokio::io::BufReader::with_capacity(7, input);
        read_lines(reader, max, tx).await;
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
    fn parses_with_lossy_utf8_and_rejects_garbage() {
        assert!(matches!(
            parse(b"{\"type\":\"weird\"}"),
            Parsed::Line(OutLine::Other)
        ));
        let bad = b"{\"type\":\"assistant\",\"message\":{\"id\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"a\xff\"}]}}";
        assert!(matches!(parse(bad), Parsed::Lossy(OutLine::Assistant(_))));
        assert!(matches!(parse(b"not json"), Parsed::Malformed(_)));
        assert!(matches!(parse(b"  "), Parsed::Blank));
    }
}
