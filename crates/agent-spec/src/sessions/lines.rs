//! Reading a transcript line by line from a byte offset, in bounded memory.
//!
//! Only complete lines are handed out: a last line without its `\n` is an agent still
//! writing it (or a file cut short), so it is left for the next read, and
//! [`LineReader::consumed`] stops before it. A line longer than [`MAX_LINE`] is skipped
//! without being held (its length is reported), so one 3 GB line costs a buffer of
//! [`MAX_LINE`] at most.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

/// Parses one JSON line. The line is checked as UTF-8 once, with SIMD, and parsed as
/// text: parsed as bytes, serde_json checked every string and every borrowed raw value
/// (a tool result's megabytes) with `str::from_utf8`, a sixth of a cold index's
/// parsing. A line that is not UTF-8 is parsed as bytes, as before, so it fails (or
/// not) the same way.
pub fn json<'a, T: serde::Deserialize<'a>>(line: &'a [u8]) -> serde_json::Result<T> {
    match simdutf8::basic::from_utf8(line) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(line),
    }
}

/// The longest line parsed; longer ones are skipped and reported.
pub const MAX_LINE: usize = 64 << 20;

const BUF: usize = 256 << 10;

/// One complete line.
pub enum Line<'a> {
    /// Its bytes (without the `\n`), starting at `off`.
    Text {
        /// Byte offset of its first byte.
        off: u64,
        /// The line.
        bytes: &'a [u8],
    },
    /// A line past [`MAX_LINE`], skipped.
    TooLong {
        /// Byte offset of its first byte.
        off: u64,
        /// Its length.
        len: u64,
    },
}

/// Complete lines of a file from an offset.
pub struct LineReader {
    reader: BufReader<File>,
    /// Offset just past the last complete line handed out.
    consumed: u64,
    /// Stop before this offset (a page of a transcript); `u64::MAX` for the whole file.
    end: u64,
    buf: Vec<u8>,
}

impl LineReader {
    /// Lines of `path` starting at byte `from` (which must be a line start).
    pub fn open(path: &Path, from: u64) -> io::Result<Self> {
        let mut file = File::open(path)?;
        file.seek(SeekFrom::Start(from))?;
        Ok(Self {
            reader: BufReader::with_capacity(BUF, file),
            consumed: from,
            end: u64::MAX,
            buf: Vec::new(),
        })
    }

    /// Lines starting before `end` only.
    pub fn until(mut self, end: u64) -> Self {
        self.end = end;
        self
    }

    /// The offset just past the last complete line read.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The next complete line; `None` at the end (a trailing partial line is not read).
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        if self.consumed >= self.end {
            return Ok(None);
        }
        self.buf.clear();
        let start = self.consumed;
        let mut len: u64 = 0;
        let mut too_long = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                // A partial last line: put nothing back, report nothing. The next read
                // starts again from `consumed`.
                return Ok(None);
            }
            let (piece, found) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], true),
                None => (chunk, false),
            };
            let n = piece.len();
            len += n as u64;
            if !too_long {
                if self.buf.len() + n > MAX_LINE {
                    too_long = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(piece);
                }
            }
            let step = if found { n + 1 } else { n };
            self.reader.consume(step);
            if found {
                self.consumed = start + len + 1;
                return Ok(Some(if too_long {
                    Line::TooLong { off: start, len }
                } else {
                    Line::Text {
                        off: start,
                        bytes: &self.buf,
                    }
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(content: &[u8], from: u64) -> (Vec<(u64, String)>, u64) {
        let mut f = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
        f.write_all(content).unwrap_or_else(|e| panic!("{e}"));
        let mut r = LineReader::open(f.path(), from).unwrap_or_else(|e| panic!("{e}"));
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap_or_else(|e| panic!("{e}")) {
            match l {
                Line::Text { off, bytes } => {
                    out.push((off, String::from_utf8_lossy(bytes).into_owned()))
                }
                Line::TooLong { off, len } => out.push((off, format!("<{len}>"))),
            }
        }
        (out, r.consumed())
    }

    #[test]
    fn complete_lines_only_and_resume_from_an_offset() {
        let (lines, end) = lines_of(b"a\nbb\nccc", 0);
        assert_eq!(lines, [(0, "a".to_string()), (2, "bb".to_string())]);
        assert_eq!(end, 5, "the partial last line is not consumed");
        let (lines, end) = lines_of(b"a\nbb\nccc\n", 5);
        assert_eq!(lines, [(5, "ccc".to_string())]);
        assert_eq!(end, 9);
    }

    #[test]
    fn json_lines_parse_as_text_and_bytes_that_are_not_text_fail_as_before() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct R<'a> {
            #[serde(borrow)]
            a: &'a str,
        }
        let line = r#"{"a":"日本","skip":"x"}"#.as_bytes();
        assert_eq!(json::<R<'_>>(line).ok(), Some(R { a: "日本" }));
        // Invalid UTF-8 in a field that is skipped parses, in one that is read fails.
        let skipped = b"{\"a\":\"ok\",\"skip\":\"\xff\"}";
        assert_eq!(json::<R<'_>>(skipped).ok(), Some(R { a: "ok" }));
        assert!(serde_json::from_slice::<R<'_>>(skipped).is_ok());
        let read = b"{\"a\":\"\xff\"}";
        assert!(json::<R<'_>>(read).is_err());
    }
}
