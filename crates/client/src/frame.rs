//! Frames on the Unix socket: each is a 4-byte big-endian length, then either a JSON
//! message (`{`…) or a binary terminal frame (see `weft_protocol::TerminalFrame`). A
//! WebSocket carries the same two kinds as its text and binary frames.

use bytes::Bytes;
use tokio_util::codec::LengthDelimitedCodec;
use weft_protocol::{ClientMessage, ServerMessage, TerminalFrame, TerminalInput};

/// The largest frame either side accepts: a big paste or a whole snapshot fits, a
/// hostile length does not allocate.
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

/// The socket's framing.
pub fn codec() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .max_frame_length(MAX_FRAME)
        .new_codec()
}

/// What a server frame holds.
#[derive(Debug)]
pub enum ServerFrame {
    /// A JSON message.
    Message(ServerMessage),
    /// Terminal output.
    Terminal(TerminalFrame),
}

/// What a client frame holds.
#[derive(Debug)]
pub enum ClientFrame {
    /// A JSON request.
    Message(ClientMessage),
    /// Raw keystrokes for a terminal.
    Input(TerminalInput),
}

/// Why a frame was not understood.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// JSON that is not a message of the wire (the request id, when it could be read).
    #[error("bad message: {message}")]
    Json {
        /// What serde said.
        message: String,
        /// The `id` field, if the frame had one.
        id: Option<u64>,
    },
    /// Neither JSON nor a known binary frame.
    #[error("a frame that is neither JSON nor a terminal frame")]
    Unknown,
}

/// Reads a frame from the server.
pub fn decode_server(bytes: &[u8]) -> Result<ServerFrame, FrameError> {
    if bytes.first() == Some(&b'{') {
        return serde_json::from_slice(bytes)
            .map(ServerFrame::Message)
            .map_err(|e| json_error(bytes, e));
    }
    TerminalFrame::decode(bytes)
        .map(ServerFrame::Terminal)
        .ok_or(FrameError::Unknown)
}

/// Reads a frame from a client.
pub fn decode_client(bytes: &[u8]) -> Result<ClientFrame, FrameError> {
    if bytes.first() == Some(&b'{') {
        return decode_client_text(bytes);
    }
    TerminalInput::decode(bytes)
        .map(ClientFrame::Input)
        .ok_or(FrameError::Unknown)
}

/// Reads a JSON request (a WebSocket text frame).
pub fn decode_client_text(bytes: &[u8]) -> Result<ClientFrame, FrameError> {
    serde_json::from_slice(bytes)
        .map(ClientFrame::Message)
        .map_err(|e| json_error(bytes, e))
}

/// Just a frame's `id`, everything else skipped unbuilt.
#[derive(serde::Deserialize)]
struct IdOnly {
    id: Option<u64>,
}

/// The error for a frame that did not parse, with its `id` when it has one. Bytes
/// that are not JSON at all are not parsed again (a second parse would fail the same
/// way, and a peer could make each bad frame cost twice); well-formed JSON that is not
/// a message of the wire is scanned once more for its `id` only, building nothing.
fn json_error(bytes: &[u8], e: serde_json::Error) -> FrameError {
    let id = if e.classify() == serde_json::error::Category::Data {
        serde_json::from_slice::<IdOnly>(bytes)
            .ok()
            .and_then(|v| v.id)
    } else {
        None
    };
    FrameError::Json {
        message: e.to_string(),
        id,
    }
}

/// A message as frame bytes.
pub fn encode_json<T: serde::Serialize>(message: &T) -> Bytes {
    // Our own wire types always serialize; an empty frame would be refused, not misread.
    Bytes::from(serde_json::to_vec(message).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::ClientRequest;

    #[test]
    fn json_and_binary_frames_are_told_apart_and_bad_ones_keep_their_id() {
        let msg = ClientMessage {
            id: 7,
            request: ClientRequest::Inbox {},
        };
        assert!(matches!(
            decode_client(&encode_json(&msg)),
            Ok(ClientFrame::Message(m)) if m.id == 7
        ));
        let input = TerminalInput {
            session_key: "echo:1".into(),
            data: b"ls\r".to_vec(),
        };
        assert!(matches!(
            decode_client(&input.encode()),
            Ok(ClientFrame::Input(i)) if i.data == b"ls\r"
        ));
        assert!(matches!(
            decode_client(br#"{"id":9,"type":"nope"}"#),
            Err(FrameError::Json { id: Some(9), .. })
        ));
        assert!(matches!(
            decode_client(b"\x07junk"),
            Err(FrameError::Unknown)
        ));
        // Not JSON (cut short): no id.
        assert!(matches!(
            decode_client(br#"{"id":9,"type":"inbox""#),
            Err(FrameError::Json { id: None, .. })
        ));
        assert!(matches!(
            decode_client(br#"{"type":"nope","id":11,"more":[1,{"a":"b"}]}"#),
            Err(FrameError::Json { id: Some(11), .. })
        ));
    }
}
