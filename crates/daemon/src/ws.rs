//! WebSocket listeners (`weft serve`, `weft daemon run --listen`) and the browser UI's
//! files beside them.
//!
//! Every peer is hostile until it proves itself:
//! - a token is always required, given as `Authorization: Bearer` or in the hello (the
//!   first frame) — never in the URL, which lands in logs and history;
//! - the `Host` must be one of the listener's own names: loopback's, its address, or
//!   a name its TLS certificate is valid for (a DNS-rebinding page reaches us under
//!   its own name, and is refused);
//! - a browser's `Origin` must be this listener's own page, so another site the user
//!   has open cannot drive agents;
//! - off loopback a listener is always TLS (see [`crate::tls`]): a token never
//!   crosses a network in clear, and a plain-text peer gets no answer;
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

/// How soon a connection whose token was revoked is closed.
pub const REVOKED_WITHIN: std::time::Duration = std::time::Duration::from_secs(1);

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
    /// Its own token, valid while it is open.
    token: String,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
        self.service.forget_listener_token(&self.token);
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
    /// The address listened on.
    ip: std::net::IpAddr,
    /// Over TLS: what the listener presents.
    tls: Option<Arc<crate::tls::Identity>>,
    /// A permit per connection that has not proven itself yet ([`UNPROVEN`]).
    unproven: Arc<tokio::sync::Semaphore>,
}

/// How a listener serves: its address, and TLS.
#[derive(Debug, Clone, Default)]
pub struct ListenOptions {
    /// `IP:PORT`.
    pub addr: String,
    /// TLS on loopback too (off loopback it always is).
    pub tls: bool,
    /// The user's own certificate chain and key (PEM files).
    pub cert: Option<(PathBuf, PathBuf)>,
}

impl ListenOptions {
    /// Plain `addr` (TLS if it is not loopback).
    pub fn at(addr: &str) -> ListenOptions {
        ListenOptions {
            addr: addr.to_string(),
            ..ListenOptions::default()
        }
    }
}

/// Starts a listener owned by `conn` (it closes when `conn` does), whose connections'
/// frames go to `on_frame`.
pub async fn listen(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    options: &ListenOptions,
    on_frame: OnFrame,
) -> Result<Listening, WireError> {
    let (listener, listening) = open(service, options, on_frame).await?;
    conn.held.lock().push(Box::new(listener));
    Ok(listening)
}

/// Binds the address and serves it, each connection's frames to `on_frame`; the
/// caller keeps the [`Listener`].
pub async fn open(
    service: &Arc<Service>,
    options: &ListenOptions,
    on_frame: OnFrame,
) -> Result<(Listener, Listening), WireError> {
    let bad = |m: String| WireError::new(ErrorCode::BadRequest, m);
    let addr = &options.addr;
    let wanted: SocketAddr = addr
        .parse()
        .map_err(|e| bad(format!("`{addr}` is not an IP:PORT address: {e}")))?;
    let use_tls = options.tls || options.cert.is_some() || !wanted.ip().is_loopback();
    let identity = if use_tls {
        let made = match &options.cert {
            Some((cert, key)) => crate::tls::from_files(cert, key),
            None => crate::tls::own(&service.home, &crate::tls::names_for(wanted)),
        };
        Some(Arc::new(made.map_err(|e| {
            bad(format!("cannot serve TLS on {wanted}: {e}"))
        })?))
    } else {
        None
    };
    let acceptor = match &identity {
        Some(identity) => Some(identity.acceptor().map_err(bad)?),
        None => None,
    };
    let tcp = tokio::net::TcpListener::bind(wanted)
        .await
        .map_err(|e| bad(format!("cannot listen on {wanted}: {e}")))?;
    let bound = tcp.local_addr().unwrap_or(wanted);
    let token = service.listener_token();
    let host = Host {
        service: service.clone(),
        on_frame,
        port: bound.port(),
        ip: bound.ip(),
        tls: identity.clone(),
        unproven: Arc::new(tokio::sync::Semaphore::new(UNPROVEN)),
    };
    let app = router(host, service.ui_dir.as_deref());
    let task = match acceptor {
        Some(acceptor) => {
            let tls = crate::tls::TlsListener::new(tcp, acceptor)
                .map_err(|e| bad(format!("cannot listen on {wanted}: {e}")))?;
            tokio::spawn(async move {
                if let Err(e) = axum::serve(tls, app).await {
                    tracing::warn!("the WebSocket listener failed: {e}");
                }
            })
        }
        None => tokio::spawn(async move {
            if let Err(e) = axum::serve(tcp, app).await {
                tracing::warn!("the WebSocket listener failed: {e}");
            }
        }),
    };
    service.listening.lock().push(bound.to_string());
    tracing::info!(addr = %bound, tls = identity.is_some(), "listening for WebSocket clients");
    // An unspecified address is reached by another: the URL names loopback's.
    let shown = if bound.ip().is_unspecified() {
        let ip: std::net::IpAddr = if bound.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        };
        SocketAddr::new(ip, bound.port())
    } else {
        bound
    };
    let (ws, http) = if identity.is_some() {
        ("wss", "https")
    } else {
        ("ws", "http")
    };
    let listening = Listening {
        addr: bound.to_string(),
        ws_url: format!("{ws}://{shown}/ws"),
        ui_url: format!("{http}://{shown}/#token={token}"),
        fingerprint: identity.as_ref().map(|i| i.fingerprint.clone()),
    };
    Ok((
        Listener {
            addr: bound,
            service: service.clone(),
            task,
            token,
        },
        listening,
    ))
}

fn router(host: Host, ui_dir: Option<&Path>) -> Router {
    let mut app = Router::new()
        .route("/ws", get(upgrade))
        .route("/fingerprint", get(fingerprint));
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

/// Who a listener is: what its `Host` and `Origin` checks accept.
pub struct Own<'a> {
    /// Its port.
    pub port: u16,
    /// The address it listens on.
    pub ip: std::net::IpAddr,
    /// Over TLS: what it presents (a name its certificate is valid for is its own).
    pub tls: Option<&'a crate::tls::Identity>,
}

impl Own<'_> {
    /// True when `host` (no port, lower case, IPv6 without brackets) names this listener.
    fn names(&self, host: &str) -> bool {
        if is_loopback_name(host) {
            return true;
        }
        if host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip == self.ip)
        {
            return true;
        }
        self.tls.is_some_and(|identity| identity.names(host))
    }

    fn default_port(&self) -> u16 {
        if self.tls.is_some() {
            443
        } else {
            80
        }
    }
}

/// Why a WebSocket upgrade is refused, if it is.
pub fn refusal(headers: &HeaderMap, own: &Own<'_>) -> Option<(StatusCode, &'static str)> {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let Some(host) = text(header::HOST) else {
        return Some((StatusCode::BAD_REQUEST, "a Host header is required"));
    };
    let (host_name, host_port) = split_authority(host);
    if !own.names(&host_name) {
        return Some((
            StatusCode::FORBIDDEN,
            "only this listener's own host names are served",
        ));
    }
    if let Some(origin) = text(header::ORIGIN) {
        let scheme = if own.tls.is_some() {
            "https://"
        } else {
            "http://"
        };
        let Some(authority) = origin.strip_prefix(scheme) else {
            return Some((StatusCode::FORBIDDEN, "a foreign origin is refused"));
        };
        let (origin_host, origin_port) = split_authority(authority);
        let port = own.default_port();
        let same = own.names(&origin_host)
            && origin_port.unwrap_or(port) == own.port
            && host_port.unwrap_or(port) == own.port;
        if !same {
            return Some((StatusCode::FORBIDDEN, "a foreign origin is refused"));
        }
    }
    None
}

/// The listener's key fingerprint, for the page to show (empty without TLS).
async fn fingerprint(State(host): State<Host>) -> String {
    host.tls.map(|i| i.fingerprint.clone()).unwrap_or_default()
}

async fn upgrade(State(host): State<Host>, headers: HeaderMap, ws: WebSocketUpgrade) -> Response {
    let own = Own {
        port: host.port,
        ip: host.ip,
        tls: host.tls.as_deref(),
    };
    if let Some((status, why)) = refusal(&headers, &own) {
        tracing::warn!(%why, "refused a WebSocket client");
        return (status, why).into_response();
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let (scopes, unproven) = match &bearer {
        Some(token) => match host.service.token_scopes(token) {
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
        .on_upgrade(move |socket| {
            connection(
                host.service,
                host.on_frame,
                socket,
                scopes,
                bearer,
                unproven,
            )
        })
}

async fn connection(
    service: Arc<Service>,
    on_frame: OnFrame,
    socket: WebSocket,
    scopes: Vec<weft_protocol::Scope>,
    bearer: Option<String>,
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
    if let Some(token) = &bearer {
        conn.proved_with(token);
    }
    // A peer that does not prove itself soon is not kept.
    let hello_by = tokio::time::Instant::now() + HELLO_WITHIN;
    // A revoked token's connections end within a second (a `stat` of the tokens file).
    let mut recheck = tokio::time::interval(REVOKED_WITHIN);
    loop {
        let frame = tokio::select! {
            f = stream.next() => f,
            _ = service.hung_up() => break,
            _ = recheck.tick() => {
                if conn.token_hash().is_some_and(|h| !service.token_held(&h)) {
                    tracing::info!("closed a WebSocket client: its token was revoked");
                    break;
                }
                continue;
            }
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
        let (_listener, listening) = open(
            &service,
            &ListenOptions::at("127.0.0.1:0"),
            crate::api::on_frame,
        )
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
        let plain = Own {
            port: 7777,
            ip: std::net::Ipv4Addr::LOCALHOST.into(),
            tls: None,
        };
        assert!(refusal(&headers(&[("host", "127.0.0.1:7777")]), &plain).is_none());
        assert!(refusal(&headers(&[("host", "localhost:7777")]), &plain).is_none());
        assert!(refusal(&headers(&[("host", "[::1]:7777")]), &plain).is_none());
        let own = headers(&[
            ("host", "127.0.0.1:7777"),
            ("origin", "http://127.0.0.1:7777"),
        ]);
        assert!(refusal(&own, &plain).is_none());
        let rebinding = headers(&[("host", "evil.example:7777")]);
        assert!(refusal(&rebinding, &plain).is_some());
        let foreign = headers(&[
            ("host", "127.0.0.1:7777"),
            ("origin", "http://evil.example"),
        ]);
        assert!(refusal(&foreign, &plain).is_some());
        let other_port = headers(&[
            ("host", "127.0.0.1:7777"),
            ("origin", "http://127.0.0.1:8080"),
        ]);
        assert!(refusal(&other_port, &plain).is_some());
        let null = headers(&[("host", "127.0.0.1:7777"), ("origin", "null")]);
        assert!(refusal(&null, &plain).is_some());
        assert!(refusal(&HeaderMap::new(), &plain).is_some());
    }

    #[test]
    fn over_tls_the_listen_address_and_the_certificate_names_get_through() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = weft_client::Home::at(dir.path());
        let identity = crate::tls::own(&home, &["box.example".into(), "10.9.8.7".into()])
            .unwrap_or_else(|e| panic!("{e}"));
        let own = Own {
            port: 7777,
            ip: "10.9.8.7".parse().unwrap_or_else(|e| panic!("{e}")),
            tls: Some(&identity),
        };
        for host in ["10.9.8.7:7777", "box.example:7777", "127.0.0.1:7777"] {
            let h = HeaderMap::from_iter([(header::HOST, HeaderValue::from_static(host))]);
            assert!(refusal(&h, &own).is_none(), "{host} refused");
        }
        let page = headers(&[
            ("host", "10.9.8.7:7777"),
            ("origin", "https://10.9.8.7:7777"),
        ]);
        assert!(refusal(&page, &own).is_none());
        // Plain http is not this listener's page, nor is a name the certificate lacks.
        let http = headers(&[
            ("host", "10.9.8.7:7777"),
            ("origin", "http://10.9.8.7:7777"),
        ]);
        assert!(refusal(&http, &own).is_some());
        assert!(refusal(&headers(&[("host", "evil.example:7777")]), &own).is_some());
        assert!(refusal(&headers(&[("host", "10.9.8.6:7777")]), &own).is_some());
    }
}
