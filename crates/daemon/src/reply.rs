//! The one reply path: a verb's typed reply, or its error, becomes what the connection
//! is sent. It sits below the API layer and the handlers it calls (accounts, library,
//! trust, MCP), which all answer with its `Reply`, so none of them imports the API layer back.

use serde_json::Value;
use weft_protocol::{ErrorCode, Verb, WireError};

/// How a request was answered.
pub enum Reply {
    /// Send this as the reply.
    Value(Value),
    /// Already sent, by a task that must order it before what follows (a
    /// subscription's patches, a terminal's frames).
    Sent,
}

/// Verb `V`'s answer, checked against the reply type its declaration names.
pub(crate) fn answer<V: Verb>(reply: Result<V::Reply, WireError>) -> Result<Reply, WireError> {
    to_value(reply?)
}

/// Any serializable value as the reply.
fn to_value<T: serde::Serialize>(value: T) -> Result<Reply, WireError> {
    serde_json::to_value(value)
        .map(Reply::Value)
        .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))
}
