//! A host reached straight over the network (no ssh): `weft hosts add NAME wss://HOST:PORT
//! --fingerprint SHA256` names a `weft serve` listening with TLS, and `--host NAME`
//! then speaks to it over a WebSocket inside TLS that trusts only the key with that
//! fingerprint (`weft_client::tls::pinned_config`; the handshake still proves the
//! server holds the key). No ssh, no first contact: the machine runs its own weft.
//!
//! The WebSocket carries the socket's own frames (JSON messages as text, terminal
//! frames as binary), so the client is the same [`Client`] as over the socket or ssh:
//! a pipe between them turns each length-prefixed frame into one WebSocket message and
//! back. The token is the listener's (`weft serve --print-token`, or a named one of
//! `weft tokens add`), given in `WEFT_TOKEN`: it is never written to the hosts list.

use std::sync::Arc;

use futures::{SinkExt as _, StreamExt as _};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::codec::Framed;
use weft_client::{Client, Event};

/// Connects to host `host` (a `wss://` destination with its fingerprint), saying
/// `hello` with the token of `WEFT_TOKEN`.
pub async fn connect(
    host: &crate::Host,
    mut hello: weft_protocol::Hello,
) -> Result<(Client, mpsc::Receiver<Event>), String> {
    let fingerprint = host.fingerprint.as_deref().ok_or_else(|| {
        format!(
            "host {} has no fingerprint (weft hosts add {} wss://HOST:PORT --fingerprint SHA256)",
            host.name, host.name
        )
    })?;
    let authority = host
        .destination
        .strip_prefix("wss://")
        .map(|rest| rest.split('/').next().unwrap_or(rest))
        .filter(|a| !a.is_empty())
        .ok_or_else(|| format!("{} is not a wss:// address", host.destination))?;
    let name = authority
        .rsplit_once(':')
        .map_or(authority, |(h, _)| h)
        .trim_start_matches('[')
        .trim_end_matches(']');
    let config = weft_client::tls::pinned_config(fingerprint).map_err(|e| e.to_string())?;
    let server = rustls::pki_types::ServerName::try_from(name.to_string())
        .map_err(|e| format!("{name}: {e}"))?;
    let tcp = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| format!("{authority}: {e}"))?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(server, tcp)
        .await
        .map_err(|e| {
            format!("{authority}: TLS: {e} (is the fingerprint {fingerprint} the server's?)")
        })?;
    let (ws, _) = tokio_tungstenite::client_async(format!("wss://{authority}/ws"), tls)
        .await
        .map_err(|e| format!("{authority}: {e}"))?;
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(bridge(ws, theirs));
    hello.token = std::env::var("WEFT_TOKEN").ok().filter(|t| !t.is_empty());
    Client::connect_over(ours, hello)
        .await
        .map_err(|e| e.to_string())
}

/// Carries frames between the client's end of the pipe and the WebSocket until either
/// ends.
async fn bridge<S>(ws: tokio_tungstenite::WebSocketStream<S>, pipe: tokio::io::DuplexStream)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut ws_out, mut ws_in) = ws.split();
    let (mut frames_out, mut frames_in) = Framed::new(pipe, weft_client::frame::codec()).split();
    let up = async {
        while let Some(Ok(frame)) = frames_in.next().await {
            let message = if frame.first() == Some(&b'{') {
                match String::from_utf8(frame.to_vec()) {
                    Ok(text) => Message::Text(text.into()),
                    Err(_) => break,
                }
            } else {
                Message::Binary(frame.freeze())
            };
            if ws_out.send(message).await.is_err() {
                break;
            }
        }
        let _ = ws_out.close().await;
    };
    let down = async {
        while let Some(Ok(message)) = ws_in.next().await {
            let bytes = match message {
                Message::Text(text) => bytes::Bytes::copy_from_slice(text.as_bytes()),
                Message::Binary(data) => data,
                Message::Close(_) => break,
                _ => continue,
            };
            if frames_out.send(bytes).await.is_err() {
                break;
            }
        }
    };
    tokio::select! {
        () = up => {}
        () = down => {}
    }
}
