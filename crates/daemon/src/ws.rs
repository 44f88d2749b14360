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
//!   token must not cross a network in clear.

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

use crate::conn::{Conn, Transport, OUTGOING};
use crate::service::Service;

/// The browser page's policy: its own scripts and styles, WebSockets to itself, no
/// remote images from agent output, no frames.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; \
     frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// How long a WebSocket peer has to say hello (with its token).
const HELLO_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

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
    port: u16,
}

/// Starts a listener on `addr` owned by `conn` (it closes when `conn` does); `conn`
/// of `None` keeps it for the daemon's life.
pub async fn listen(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    addr: &str,
) -> Result<Listening, WireError> {
    let (listener, listening) = open(service, addr).await?;
    conn.listeners.lock().push(listener);
    Ok(listening)
}

/// Binds `addr` and serves it; the caller keeps the [`Listener`].
pub async fn open(service: &Arc<Service>, addr: &str) -> Result<(Listener, Listening), WireError> {
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
        port: bound.port(),
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
    let scopes = match bearer {
        Some(token) => match host.service.token_scopes(&token) {
            Some(scopes) => scopes,
            None => return (StatusCode::UNAUTHORIZED, "that token is not valid").into_response(),
        },
        // The hello must then carry it.
        None => Vec::new(),
    };
    ws.max_message_size(weft_client::frame::MAX_FRAME)
        .on_upgrade(move |socket| connection(host.service, socket, scopes))
}

async fn connection(service: Arc<Service>, socket: WebSocket, scopes: Vec<weft_protocol::Scope>) {
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
        match frame {
            Some(Ok(Message::Text(text))) => conn.on_frame(&service, text.as_bytes(), true).await,
            Some(Ok(Message::Binary(bytes))) => conn.on_frame(&service, &bytes, false).await,
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
            Some(Ok(_)) => {}
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
