//! The vendor-neutral core: an HTTP/1.1 server on loopback that records every request
//! and answers each with a [`Reply`] chosen by a [`Responder`].
//!
//! A reply body is a list of [`Step`]s played in order, so a vendor module can stream
//! SSE with pauses, stall forever, or cut the connection mid-body. Shutdown is
//! injected (any future) and also happens on drop; it aborts open connections at once,
//! like a crashed server, rather than waiting for long-lived streams to finish.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, Notify};
use tokio::task::JoinSet;

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// Path and query (`/v1/messages?beta=true`).
    pub path: String,
    /// Headers, names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body, parsed as JSON (`Null` when it is not JSON).
    pub body: Value,
    /// The body as received.
    pub raw: Bytes,
}

impl RecordedRequest {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// The path without its query.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or_default()
    }
}

/// The first of `headers` (names lower-cased) named `name` (case-insensitive).
pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    headers
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.as_str())
}

/// Every request a server received, shared with the test — or, for a long run, only
/// the newest few ([`Recorder::keeping_last`]): a recorded request holds its whole body
/// twice (as received and parsed), and an agent resuming a session sends its whole
/// conversation each time, so keeping all of a long run grows without bound (the
/// 10-minute load run's harness reached 1.4 GiB this way).
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    inner: Arc<(Mutex<Kept>, Notify)>,
}

#[derive(Debug, Default)]
struct Kept {
    requests: VecDeque<RecordedRequest>,
    /// Requests ever recorded, kept or not.
    total: usize,
    /// At most this many are kept (the newest); `None`: all.
    limit: Option<usize>,
}

impl Recorder {
    /// A recorder that keeps only the newest `n` requests (it still counts all).
    pub fn keeping_last(n: usize) -> Self {
        let kept = Kept {
            limit: Some(n),
            ..Kept::default()
        };
        Self {
            inner: Arc::new((Mutex::new(kept), Notify::new())),
        }
    }

    /// Adds a request.
    pub fn record(&self, request: RecordedRequest) {
        {
            let mut kept = self.inner.0.lock();
            kept.total += 1;
            kept.requests.push_back(request);
            if let Some(limit) = kept.limit {
                while kept.requests.len() > limit {
                    kept.requests.pop_front();
                }
            }
        }
        self.inner.1.notify_waiters();
    }

    /// The requests kept (all of them unless [`Recorder::keeping_last`]), in arrival
    /// order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.inner.0.lock().requests.iter().cloned().collect()
    }

    /// How many requests arrived (kept or not).
    pub fn len(&self) -> usize {
        self.inner.0.lock().total
    }

    /// How many requests are kept.
    pub fn kept(&self) -> usize {
        self.inner.0.lock().requests.len()
    }

    /// True before any request.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits until `pred` holds for the requests kept so far, or `timeout` passes.
    /// Returns whether it held.
    pub async fn wait_until(
        &self,
        timeout: Duration,
        mut pred: impl FnMut(&[RecordedRequest]) -> bool,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.inner.1.notified();
            if pred(self.inner.0.lock().requests.make_contiguous()) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return pred(self.inner.0.lock().requests.make_contiguous());
            }
        }
    }
}

/// One piece of a reply body.
#[derive(Debug, Clone)]
pub enum Step {
    /// Bytes written and flushed.
    Bytes(Bytes),
    /// A pause.
    Delay(Duration),
    /// Never finish: the body stays open until the server shuts down (a stalled model).
    Hang,
    /// Cut the connection here (no clean end of the chunked body).
    Drop,
}

/// An HTTP reply.
#[derive(Debug, Clone)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Headers.
    pub headers: Vec<(String, String)>,
    /// The body, played step by step.
    pub body: Vec<Step>,
}

impl Reply {
    /// A JSON reply.
    pub fn json(status: u16, value: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: vec![Step::Bytes(Bytes::from(value.to_string()))],
        }
    }

    /// A streamed `text/event-stream` reply made of `steps`.
    pub fn sse(steps: Vec<Step>) -> Self {
        Self {
            status: 200,
            headers: vec![
                ("content-type".into(), "text/event-stream".into()),
                ("cache-control".into(), "no-cache".into()),
            ],
            body: steps,
        }
    }

    /// Headers sent, then the connection cut before any body.
    pub fn dropped() -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: vec![Step::Drop],
        }
    }
}

/// Chooses the reply to each request (after it is recorded).
pub trait Responder: Send + Sync + 'static {
    /// The reply to `request`.
    fn respond(&self, request: &RecordedRequest) -> Reply;
}

type Body = BoxBody<Bytes, io::Error>;

/// A running scripted server. Dropping it shuts it down.
pub struct ScriptedServer {
    addr: SocketAddr,
    recorder: Recorder,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl ScriptedServer {
    /// Binds 127.0.0.1 on a free port and serves until dropped or shut down.
    pub async fn start(responder: Arc<dyn Responder>) -> io::Result<Self> {
        Self::start_with_shutdown(responder, std::future::pending()).await
    }

    /// Like [`ScriptedServer::start`], also stopping when `shutdown` resolves.
    pub async fn start_with_shutdown(
        responder: Arc<dyn Responder>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<Self> {
        Self::start_recording(responder, shutdown, Recorder::default()).await
    }

    /// Like [`ScriptedServer::start_with_shutdown`], recording into `recorder` (e.g.
    /// one [`Recorder::keeping_last`] a few, for a long run).
    pub async fn start_recording(
        responder: Arc<dyn Responder>,
        shutdown: impl Future<Output = ()> + Send + 'static,
        recorder: Recorder,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let rec = recorder.clone();
        let task = tokio::spawn(async move {
            let mut conns = JoinSet::new();
            tokio::pin!(shutdown);
            tokio::pin!(stopped);
            loop {
                tokio::select! {
                    _ = &mut shutdown => break,
                    _ = &mut stopped => break,
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        let responder = responder.clone();
                        let rec = rec.clone();
                        conns.spawn(async move {
                            let service = service_fn(move |req| {
                                handle(req, responder.clone(), rec.clone())
                            });
                            let _ = hyper::server::conn::http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        });
                    }
                    Some(_) = conns.join_next(), if !conns.is_empty() => {}
                }
            }
            // Dropping the set aborts every open connection: a crash, not a drain.
            conns.abort_all();
        });
        Ok(Self {
            addr,
            recorder,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The recorder of every request.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// Stops accepting, cuts open connections, and waits for the server task.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn handle(
    req: Request<Incoming>,
    responder: Arc<dyn Responder>,
    recorder: Recorder,
) -> Result<Response<Body>, Infallible> {
    let method = req.method().to_string();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_else(|| req.uri().path().to_string());
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let raw = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let recorded = RecordedRequest {
        method,
        path,
        headers,
        body,
        raw,
    };
    let reply = responder.respond(&recorded);
    recorder.record(recorded);
    Ok(into_response(reply))
}

fn into_response(reply: Reply) -> Response<Body> {
    // A body of plain bytes goes out with a Content-Length; steps need chunks.
    let body = if reply.body.iter().all(|s| matches!(s, Step::Bytes(_))) {
        let mut all = Vec::new();
        for step in &reply.body {
            if let Step::Bytes(b) = step {
                all.extend_from_slice(b);
            }
        }
        Full::new(Bytes::from(all)).map_err(|e| match e {}).boxed()
    } else {
        streamed(reply.body)
    };
    let mut response = Response::new(body);
    *response.status_mut() =
        hyper::StatusCode::from_u16(reply.status).unwrap_or(hyper::StatusCode::OK);
    for (k, v) in reply.headers {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(k.as_bytes()),
            hyper::header::HeaderValue::from_str(&v),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

fn streamed(steps: Vec<Step>) -> Body {
    let stream = futures::stream::unfold(steps.into_iter(), |mut steps| async move {
        loop {
            match steps.next()? {
                Step::Bytes(b) => return Some((Ok(Frame::data(b)), steps)),
                Step::Delay(d) => tokio::time::sleep(d).await,
                Step::Hang => std::future::pending::<()>().await,
                Step::Drop => {
                    // Let hyper flush what was sent so far: a cut comes after the data.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    let cut = io::Error::new(io::ErrorKind::ConnectionAborted, "scripted drop");
                    return Some((Err(cut), Vec::new().into_iter()));
                }
            }
        }
    });
    StreamBody::new(stream).boxed()
}
