//! The CLI's stdout lines: read by the shared capped line reader (re-exported here),
//! parsed here, with invalid UTF-8 decoded lossily rather than dropped.

pub use weft_agent_process::{preview, read_lines, RawLine};

use crate::wire::OutLine;

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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

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
