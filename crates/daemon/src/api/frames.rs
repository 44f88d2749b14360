//! One frame from a connection, whatever carries it: a request is answered (concurrently
//! with the connection's others, at most `IN_FLIGHT` at once), keystrokes go to their
//! terminal in order, and a frame that is not one gets a clear error.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use weft_client::frame::{self, ClientFrame, FrameError};
use weft_protocol::{ErrorCode, Scope, ServerMessage, WireError};

use crate::conn::Conn;
use crate::service::Service;

/// Handles one frame from the peer (the transports' [`crate::conn::OnFrame`]). Past
/// `IN_FLIGHT` requests it returns only once one has ended, so the transport reads
/// nothing meanwhile: a peer that sends faster than it is answered waits at its own
/// socket.
pub fn on_frame<'a>(
    service: &'a Arc<Service>,
    conn: &'a Arc<Conn>,
    bytes: &'a [u8],
    text: bool,
) -> BoxFuture<'a, ()> {
    Box::pin(handle_frame(service, conn, bytes, text))
}

async fn handle_frame(service: &Arc<Service>, conn: &Arc<Conn>, bytes: &[u8], text: bool) {
    let parsed = if text {
        frame::decode_client_text(bytes)
    } else {
        frame::decode_client(bytes)
    };
    match parsed {
        Ok(ClientFrame::Message(msg)) => {
            if !conn.greeted() {
                // The hello is answered before anything else is read.
                super::respond(service, conn, msg).await;
                return;
            }
            let Some(running) = conn.slot(service).await else {
                return;
            };
            let (service, conn) = (service.clone(), conn.clone());
            tokio::spawn(async move {
                let id = msg.id;
                // A handler that panics still answers: its caller would otherwise wait
                // forever for a reply that never comes.
                let answered = AssertUnwindSafe(super::respond(&service, &conn, msg))
                    .catch_unwind()
                    .await;
                if answered.is_err() {
                    tracing::error!(id, "a request's handler panicked");
                    let error = WireError::new(
                        ErrorCode::Internal,
                        "the daemon failed on this request (its log says where)",
                    );
                    conn.send(&ServerMessage::Error { id, error }).await;
                }
                drop(running);
            });
        }
        Ok(ClientFrame::Input(input)) => {
            if conn.scopes().contains(&Scope::Control) {
                conn.queue_input(input).await;
            }
        }
        Err(FrameError::Json { message, id }) => {
            let error = WireError::new(ErrorCode::BadRequest, format!("bad message: {message}"));
            conn.send(&ServerMessage::Error {
                id: id.unwrap_or(0),
                error,
            })
            .await;
        }
        Err(FrameError::Unknown) => {
            let error = WireError::new(ErrorCode::BadRequest, "a frame of an unknown kind");
            conn.send(&ServerMessage::Error { id: 0, error }).await;
        }
    }
}
