//! The SSE pump every streaming protocol shares: bytes in (split anywhere, even inside
//! a UTF-8 character — eventsource-stream reassembles them), one decoder per protocol
//! turning events into [`StreamEvent`]s and finally a [`ModelReply`].

use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use super::{ModelError, ModelReply, StreamEvent};

/// Turns one protocol's SSE events into a reply.
pub trait Decoder: Send {
    /// One event (`event` is empty when the stream names none). Returns true once the
    /// protocol's own end of reply arrived.
    fn event(
        &mut self,
        event: &str,
        data: &str,
        sink: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, ModelError>;

    /// The reply, once the end arrived.
    fn finish(&mut self) -> Result<ModelReply, ModelError>;

    /// Whether the stream closing now is the reply's end (protocols with no end event
    /// of their own, such as Gemini's, end with the connection after a finish reason).
    fn complete_at_eof(&self) -> bool {
        false
    }
}

/// How long a stream may stay silent before it counts as broken.
pub const IDLE: Duration = Duration::from_secs(300);

/// Reads `body` to the decoder's end. Every failure here is [`ModelError::Interrupted`]
/// (or an error the stream itself reported): part of the response already arrived.
pub async fn pump<S, E>(
    body: S,
    decoder: &mut dyn Decoder,
    cancel: &CancellationToken,
    idle: Duration,
    sink: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<ModelReply, ModelError>
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin,
    E: std::fmt::Display + Send,
{
    let mut events = Box::pin(body.eventsource());
    let mut seen = 0usize;
    loop {
        let next = tokio::select! {
            n = tokio::time::timeout(idle, events.next()) => n,
            _ = cancel.cancelled() => return Err(ModelError::Cancelled),
        };
        let item = match next {
            Err(_) => {
                return Err(ModelError::Interrupted(format!(
                    "no data for {} s after {seen} event(s)",
                    idle.as_secs()
                )))
            }
            Ok(None) if decoder.complete_at_eof() => return decoder.finish(),
            Ok(None) => {
                return Err(ModelError::Interrupted(format!(
                    "the connection closed after {seen} event(s), before the reply was complete"
                )))
            }
            Ok(Some(item)) => item,
        };
        let event = item.map_err(|e| {
            ModelError::Interrupted(format!("the stream failed after {seen} event(s): {e}"))
        })?;
        seen += 1;
        if event.data.is_empty() && event.event.is_empty() {
            continue;
        }
        if decoder.event(&event.event, &event.data, sink)? {
            return decoder.finish();
        }
    }
}

/// A response body as a byte stream.
pub fn body(
    response: reqwest::Response,
) -> impl Stream<Item = Result<Bytes, reqwest::Error>> + Send + Unpin {
    Box::pin(response.bytes_stream())
}
