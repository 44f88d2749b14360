//! WebSocket listeners (`weft serve`, `weft daemon run --listen`) and the browser UI's
//! files beside them.
//!
//! Every peer is hostile until it proves itself:
//! - a token is always required, given as `Authorization: Bearer` or in the hello (the
//!   first frame) — never in the URL, which lands in logs and history;
//! - the `Host` must be a loopback name (a DNS-rebinding page reaches us under its own
//!   name, and is refused);
//! - a browser's `Origin` must be this listener's own page, so another site the user
//!   has open cannot drive agents;
//! - a listen address that is not loopback is refused: there is no TLS here yet, and a
//!   token must not cross a network in clear;
//! - before its hello, a peer costs little: at most [`UNPROVEN`] such connections at
//!   once per listener, each with [`HELLO_WITHIN`] to say hello in a frame of at most
//!   [`PRE_HELLO_FRAME`] bytes.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;
use weft_protocol::{ErrorCode, Listening, WireError};

use crate::conn::{Conn, OnFrame, Transport, OUTGOING};
use crate::service::Service;

/// The browser page's policy: its own scripts and styles, WebSockets to itself, no
/// remote images from agent output, no frames.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; \
     frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// How long a WebSocket peer has to say hello (with its token).
pub const HELLO_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Connections of a listener that have not proven themselves yet (no bearer token,
/// no hello yet). Any local user reaches a loopback port: without a cap each could
/// hold a connection, and up to a 16 MiB frame, for the hello's 10 s. A browser tab
/// opens one; more are refused (503) until one says hello or goes.
pub const UNPROVEN: usize = 8;

/// The largest frame read from a peer that has not proven itself (no bearer token,
/// no hello yet): a hello is a few hundred bytes (a browser sends no environment). A
/// bigger one ends the connection unparsed.
pub const PRE_HELLO_FRAME: usize = 64 * 1024;

/// An open listener; dropping it stops accepting.
pub struct Listener {
    addr: SocketAddr,
    service: Arc<Service>,
    task: JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
        let addr = self.addr.to_string();
        self.service.listening.lock().retain(|a| *a != addr);
        tracing::info!(%addr, "stopped listening");
    }
}

#[derive(Clone)]
struct Host {
    service: Arc<Service>,
    on_frame: OnFrame,
    port: u16,
    /// A permit per connection that has not proven itself yet ([`UNPROVEN`]).
    unproven: Arc<tokio::sync::Semaphore>,
}

/// Starts a listener on `addr` owned by `conn` (it closes when `conn` does), whose
/// connections' frames go to `on_frame`.
pub async fn listen(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    addr: &str,
    on_frame: OnFrame,
) -> Result<Listening, WireError> {
    let (listener, listening) = open(service, addr, on_frame).await?;
    conn.held.lock().push(Box::new(listener));
    Ok(listening)
}

/// Binds `addr` and serves it, each connection's frames to `on_frame`; the caller
/// keeps the [`Listener`].
pub async fn open(
    service: &Arc<Service>,
    addr: &str,
    on_frame: OnFrame,
) -> Result<(Listener, Listening), WireError> {
    let bad = |m: String| WireError::new(ErrorCode::BadRequest, m);
    let wanted: SocketAddr = addr
        .parse()
        .map_err(|e| bad(format!("`{addr}` is not an IP:PORT address: {e}")))?;
    if !wanted.ip().is_loopback() {
        return Err(bad(format!(
            "refusing to listen on {wanted}: only loopback addresses are served (no TLS is configured, and a token must not cross a network in clear)"
        )));
    }
    let tcp = tokio::net::TcpListener::bind(wanted)
        .await
        .map_err(|e| bad(format!("cannot listen on {wanted}: {e}")))?;
    let bound = tcp.local_addr().unwrap_or(wanted);
    let token = service
        .control_token()
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("cannot make a token: {e}")))?;
    let host = Host {
        service: service.clone(),
        on_frame,
        port: bound.port(),
        unproven: Arc::new(tokio::sync::Semaphore::new(UNPROVEN)),
    };
    let app = router(host, service.ui_dir.as_deref());
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(tcp, app).await {
            tracing::warn!("the WebSocket listener failed: {e}");
        }
    });
    service.listening.lock().push(bound.to_string());
    tracing::info!(addr = %bound, "listening for WebSocket clients");
    let listening = Listening {
        addr: bound.to_string(),
        ws_url: format!("ws://{bound}/ws"),
        ui_url: format!("http://{bound}/#token={}", token.value),
    };
    Ok((
        Listener {
            addr: bound,
            service: service.clone(),
            task,
        },
        listening,
    ))
}

fn router(host: Host, ui_dir: Option<&Path>) -> Router {
    let mut app = Router::new().route("/ws", get(upgrade));
    if let Some(dir) = ui_dir {
        let index = dir.join("index.html");
        app = app.fallback_service(ServeDir::new(dir).fallback(ServeFile::new(index)));
    }
    app.layer(SetResponseHeaderLayer::overriding(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    ))
    .layer(SetResponseHeaderLayer::overriding(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    ))
    .layer(SetResponseHeaderLayer::overriding(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    ))
    .with_state(host)
}

/// The host part of a `Host` header or an origin's authority, and its port.
fn split_authority(authority: &str) -> (String, Option<u16>) {
    if let Some(rest) = authority.strip_prefix('[') {
        if let Some((ip, after)) = rest.split_once(']') {
            let port = after.strip_prefix(':').and_then(|p| p.parse().ok());
            return (ip.to_ascii_lowercase(), port);
        }
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => (h.to_ascii_lowercase(), p.parse().ok()),
        None => (authority.to_ascii_lowercase(), None),
    }
}

fn is_loopback_name(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Why a WebSocket upgrade is refused, if it is.
pub fn refusal(headers: &HeaderMap, port: u16) -> Option<(StatusCode, &'static str)> {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let Some(host) = text(header::HOST) else {
        return Some((StatusCode::BAD_REQUEST, "a Host header is required"));
    };
    let (host_name, host_port) = split_authority(host);
    if !is_loopback_name(&host_name) {
        return Some((StatusCode::FORBIDDEN, "only loopback host names are served"));
    }
    if let Some(origin) = text(header::ORIGIN) {
        let Some(authority) = origin.strip_prefix("http://") else {
            return Some((StatusCode::FORBIDDEN, "a foreign origin is refused"));
        };
        let (origin_host, origin_port) = split_authority(authority);
        let same = is_loopback_name(&origin_host)
            && origin_port.unwrap_or(80) == port
            && host_port.unwrap_or(80) == port;
        if !same {
            return Some((StatusCode::FORBIDDEN, "a foreign origin is refused"));
        }
    }
    None
}

async fn upgrade(State(host): State<Host>, headers: HeaderMap, ws: WebSocketUpgrade) -> Response {
    if let Some((status, why)) = refusal(&headers, host.port) {
        tracing::warn!(%why, "refused a WebSocket client");
        return (status, why).into_response();
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let (scopes, unproven) = match bearer {
        Some(token) => match host.service.token_scopes(&token) {
            Some(scopes) => (scopes, None),
            None => return (StatusCode::UNAUTHORIZED, "that token is not valid").into_response(),
        },
        // The hello must then carry it.
        None => match host.unproven.clone().try_acquire_owned() {
            Ok(permit) => (Vec::new(), Some(permit)),
            Err(_) => {
                tracing::warn!(
                    "refused a WebSocket client: {UNPROVEN} are already waiting to say hello"
                );
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many connections are waiting to say hello; try again",
                )
                    .into_response();
            }
        },
    };
    ws.max_message_size(weft_client::frame::MAX_FRAME)
        .on_upgrade(move |socket| connection(host.service, host.on_frame, socket, scopes, unproven))
}

async fn connection(
    service: Arc<Service>,
    on_frame: OnFrame,
    socket: WebSocket,
    scopes: Vec<weft_protocol::Scope>,
    mut unproven: Option<tokio::sync::OwnedSemaphorePermit>,
) {
    let _task = service.connection_task();
    let (mut sink, mut stream) = socket.split();
    let (out, mut outgoing) = mpsc::channel::<Bytes>(OUTGOING);
    let writer = tokio::spawn(async move {
        while let Some(bytes) = outgoing.recv().await {
            let message = if bytes.first() == Some(&b'{') {
                match std::str::from_utf8(&bytes) {
                    Ok(text) => Message::Text(text.to_string().into()),
                    Err(_) => continue,
                }
            } else {
                Message::Binary(bytes)
            };
            if sink.send(message).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let conn = Conn::new(&service, Transport::WebSocket, out, scopes);
    // A peer that does not prove itself soon is not kept.
    let hello_by = tokio::time::Instant::now() + HELLO_WITHIN;
    loop {
        let frame = tokio::select! {
            f = stream.next() => f,
            _ = service.hung_up() => break,
            _ = tokio::time::sleep_until(hello_by), if !conn.greeted() => {
                tracing::warn!("a WebSocket client said no hello within {} s", HELLO_WITHIN.as_secs());
                break;
            }
        };
        let (bytes, text) = match &frame {
            Some(Ok(Message::Text(text))) => (text.as_bytes(), true),
            Some(Ok(Message::Binary(bytes))) => (&bytes[..], false),
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
            Some(Ok(_)) => continue,
        };
        if unproven.is_some() && bytes.len() > PRE_HELLO_FRAME {
            tracing::warn!(
                bytes = bytes.len(),
                "a WebSocket client sent a frame too large for a hello"
            );
            break;
        }
        on_frame(&service, &conn, bytes, text).await;
        if conn.greeted() {
            // Proven: no longer counted against the ones waiting.
            unproven.take();
        }
    }
    conn.close(&service, writer).await;
}

/// Where the browser UI's built files are: `WEFT_UI_DIR`, else installed beside the
/// binary (`../share/weft/ui`), else a development tree's `ui/dist` above it.
pub fn find_ui_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WEFT_UI_DIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return dir.join("index.html").is_file().then_some(dir);
    }
    let exe = std::env::current_exe().ok()?;
    let installed = exe.parent()?.join("../share/weft/ui");
    if installed.join("index.html").is_file() {
        return Some(installed);
    }
    exe.ancestors()
        .map(|d| d.join("ui/dist"))
        .find(|d| d.join("index.html").is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// Opens a WebSocket to `addr` by hand; the status code of the answer.
    async fn upgrade(addr: &str) -> (TcpStream, u16) {
        let mut tcp = TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let request = format!(
            "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        tcp.write_all(request.as_bytes())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match tcp.read(&mut byte).await {
                Ok(1) => head.push(byte[0]),
                _ => break,
            }
        }
        let text = String::from_utf8_lossy(&head);
        let code = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        (tcp, code)
    }

    /// A client frame (masked with a zero key, so the payload goes as it is).
    fn binary_frame(payload: &[u8]) -> Vec<u8> {
        let mut frame = vec![0x82, 0x80 | 127];
        frame.extend_from_slice(&(payload.len() as u64).to_be_bytes());
        frame.extend_from_slice(&[0, 0, 0, 0]);
        frame.extend_from_slice(payload);
        frame
    }

    /// What the server sent on `tcp` until it closed it.
    async fn until_closed(tcp: &mut TcpStream) -> Vec<u8> {
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            match tokio::time::timeout_at(deadline, tcp.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return got,
                Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
                Err(_) => panic!("the connection stayed open"),
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unproven_connections_are_capped_and_their_frames_small() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let service = crate::conn::tests::service(dir.path());
        let (_listener, listening) = open(&service, "127.0.0.1:0", crate::api::on_frame)
            .await
            .unwrap_or_else(|e| panic!("{}", e.message));
        let addr = listening.addr;
        let mut waiting = Vec::new();
        for _ in 0..UNPROVEN {
            let (tcp, code) = upgrade(&addr).await;
            assert_eq!(code, 101);
            waiting.push(tcp);
        }
        let (_, code) = upgrade(&addr).await;
        assert_eq!(code, 503, "one more than {UNPROVEN} waiting to say hello");
        // One says too much before its hello: it is dropped, and its place is free.
        let mut big = waiting.remove(0);
        big.write_all(&binary_frame(&vec![b'{'; PRE_HELLO_FRAME + 1]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let answer = until_closed(&mut big).await;
        // Closed unread: no reply to it (a text frame), at most a close frame.
        assert!(
            answer.first().is_none_or(|b| *b == 0x88),
            "a frame past the hello's size was read: {:?}",
            String::from_utf8_lossy(&answer)
        );
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let (tcp, code) = upgrade(&addr).await;
            if code == 101 {
                waiting.push(tcp);
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "no place came free");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn only_loopback_hosts_and_our_own_origin_get_through() {
        assert!(refusal(&headers(&[("host", "127.0.0.1:7777")]), 7777).is_none());
        assert!(refusal(&headers(&[("host", "localhost:7777")]), 7777).is_none());
        assert!(refusal(&headers(&[("host", "[::1]:7777")]), 7777).is_none());
        let own = headers(&[
            ("host", "127.0.0.1:7777"),
            ("origin", "http://127.0.0.1:7777"),
        ]);
        assert!(refusal(&own, 7777).is_none());
        let rebinding = headers(&[("host", "evil.example:7777")]);
        assert!(refusal(&rebinding, 7777).is_some());
        let foreign = headers(&[
            ("host", "127.0.0.1:7777"),
            ("origin", "http://evil.example"),
        ]);
        assert!(refusal(&foreign, 7777).is_some());
        let other_port = headers(&[
            ("host", "127.0.0.1:7777"),
            ("origin", "http://127.0.0.1:8080"),
        ]);
        assert!(refusal(&other_port, 7777).is_some());
        let null = headers(&[("host", "127.0.0.1:7777"), ("origin", "null")]);
        assert!(refusal(&null, 7777).is_some());
        assert!(refusal(&HeaderMap::new(), 7777).is_some());
    }
}
