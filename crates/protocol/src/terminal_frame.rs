//! The binary frames an attached terminal's bytes travel in, beside the JSON messages
//! of [`crate::ClientMessage`] and [`crate::ServerMessage`] on one connection.

/// Kinds of [`TerminalFrame`].
pub mod frame_kind {
    /// The whole screen, redrawn (`offset`: the output offset it is current at).
    pub const SCREEN: u8 = 0;
    /// Output starting at `offset`.
    pub const DATA: u8 = 1;
    /// The program exited; the payload is JSON `{code, signal, screen}`.
    pub const EXIT: u8 = 2;
}

const TAG_TERMINAL: u8 = 1;
const TAG_INPUT: u8 = 2;

/// Terminal output for one attached connection, as a binary frame:
/// `[1][kind u8][offset u64 LE][key length u16 LE][key][payload]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalFrame {
    /// The session.
    pub session_key: String,
    /// [`frame_kind`].
    pub kind: u8,
    /// Output offset.
    pub offset: u64,
    /// Bytes.
    pub payload: Vec<u8>,
}

/// Raw keystrokes for a terminal, as a binary frame:
/// `[2][key length u16 LE][key][payload]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalInput {
    /// The session.
    pub session_key: String,
    /// Bytes.
    pub data: Vec<u8>,
}

fn put_key(out: &mut Vec<u8>, key: &str) {
    let len = u16::try_from(key.len()).unwrap_or(u16::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&key.as_bytes()[..usize::from(len)]);
}

fn take_key(bytes: &[u8]) -> Option<(String, &[u8])> {
    let len = usize::from(u16::from_le_bytes([*bytes.first()?, *bytes.get(1)?]));
    let key = bytes.get(2..2 + len)?;
    Some((String::from_utf8(key.to_vec()).ok()?, &bytes[2 + len..]))
}

impl TerminalFrame {
    /// Its bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12 + self.session_key.len() + self.payload.len());
        out.push(TAG_TERMINAL);
        out.push(self.kind);
        out.extend_from_slice(&self.offset.to_le_bytes());
        put_key(&mut out, &self.session_key);
        out.extend_from_slice(&self.payload);
        out
    }

    /// Reads one; `None` when the bytes are not a terminal frame.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.first() != Some(&TAG_TERMINAL) {
            return None;
        }
        let kind = *bytes.get(1)?;
        let offset = u64::from_le_bytes(bytes.get(2..10)?.try_into().ok()?);
        let (session_key, payload) = take_key(bytes.get(10..)?)?;
        Some(Self {
            session_key,
            kind,
            offset,
            payload: payload.to_vec(),
        })
    }
}

impl TerminalInput {
    /// Its bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(3 + self.session_key.len() + self.data.len());
        out.push(TAG_INPUT);
        put_key(&mut out, &self.session_key);
        out.extend_from_slice(&self.data);
        out
    }

    /// Reads one; `None` when the bytes are not terminal input.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.first() != Some(&TAG_INPUT) {
            return None;
        }
        let (session_key, data) = take_key(bytes.get(1..)?)?;
        Some(Self {
            session_key,
            data: data.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_refuse_each_other() {
        let f = TerminalFrame {
            session_key: "echo:1".into(),
            kind: frame_kind::DATA,
            offset: 0x0102_0304,
            payload: b"hi\x1b[0m".to_vec(),
        };
        assert_eq!(TerminalFrame::decode(&f.encode()), Some(f.clone()));
        assert_eq!(TerminalInput::decode(&f.encode()), None);
        let i = TerminalInput {
            session_key: "claude:x".into(),
            data: vec![0xff, 0, 3],
        };
        assert_eq!(TerminalInput::decode(&i.encode()), Some(i.clone()));
        assert_eq!(TerminalFrame::decode(&i.encode()), None);
        assert_eq!(TerminalFrame::decode(&[1, 0, 0]), None, "cut short");
    }
}
