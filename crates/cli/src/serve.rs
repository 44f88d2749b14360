//! `weft serve`: the kernel's verbs over a WebSocket, for scripts and remote surfaces.
//!
//! One JSON message per frame. A client sends `ClientMessage {id, type, …}`; the server
//! answers `{type:"reply", id, result}` or `{type:"error", id, error:{code,message}}`.
//! After `subscribe`, `{type:"patch", sessionKey, seq, patch}` frames follow for that
//! session; a client that sees a seq gap sends `getSnapshot` and continues from it.
//!
//! Anything but a loopback address needs a token (`WEFT_SERVE_TOKEN`), given by the
//! client as `?token=` or `Authorization: Bearer`; the token is never logged.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use clap::Args;
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use weft_kernel::{KernelError, Loom, LoomIO};
use weft_protocol::{ClientMessage, ClientRequest, ErrorCode, ServerMessage, WireError};

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on (port 0 picks a free one; the address is printed).
    #[arg(long, default_value = "127.0.0.1:7777")]
    listen: SocketAddr,
}

#[derive(Clone)]
struct Host {
    loom: Arc<Loom>,
    token: Option<Arc<str>>,
}

#[derive(Deserialize)]
struct WsQuery {
    token: Option<String>,
}

pub(crate) async fn serve(loom: &Arc<Loom>, args: ServeArgs) -> ExitCode {
    let token = std::env::var("WEFT_SERVE_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
        .map(Arc::from);
    if token.is_none() && !args.listen.ip().is_loopback() {
        eprintln!(
            "weft: refusing to serve on {} without a token: set WEFT_SERVE_TOKEN",
            args.listen
        );
        return ExitCode::from(crate::EXIT_USAGE);
    }
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("weft: cannot listen on {}: {e}", args.listen);
            return ExitCode::from(crate::EXIT_USAGE);
        }
    };
    let addr = listener.local_addr().map_or(args.listen, |a| a);
    eprintln!("weft: serving on ws://{addr}/ws");
    let host = Host {
        loom: loom.clone(),
        token,
    };
    let app = Router::new().route("/ws", get(upgrade)).with_state(host);
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("weft: {e}");
            ExitCode::FAILURE
        }
    }
}

fn authorized(host: &Host, query: &WsQuery, headers: &HeaderMap) -> bool {
    let Some(expected) = &host.token else {
        return true;
    };
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let given = query.token.as_deref().or(bearer).unwrap_or_default();
    // Compare every byte so the time taken does not say how much matched.
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

async fn upgrade(
    State(host): State<Host>,
    Query(query): Query<WsQuery>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if !authorized(&host, &query, &headers) {
        return (StatusCode::UNAUTHORIZED, "a valid token is required").into_response();
    }
    ws.on_upgrade(move |socket| connection(host.loom, socket))
}

async fn connection(loom: Arc<Loom>, socket: WebSocket) {
    let (mut sink, mut stream) = socket.split();
    let (out, mut outgoing) = mpsc::unbounded_channel::<ServerMessage>();
    let writer = tokio::spawn(async move {
        while let Some(msg) = outgoing.recv().await {
            let Ok(text) = serde_json::to_string(&msg) else {
                continue;
            };
            if sink.send(Message::Text(text.into())).await.is_err() {
                break;
            }
        }
    });
    let mut subscriptions: HashMap<String, JoinHandle<()>> = HashMap::new();
    while let Some(Ok(frame)) = stream.next().await {
        let text = match frame {
            Message::Text(t) => t.to_string(),
            Message::Close(_) => break,
            _ => continue,
        };
        let msg: ClientMessage = match serde_json::from_str(&text) {
            Ok(m) => m,
            Err(e) => {
                // Without a parseable id the error goes to id 0.
                let id = serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| v.get("id").and_then(Value::as_u64))
                    .unwrap_or(0);
                let error = WireError::new(ErrorCode::BadRequest, format!("bad message: {e}"));
                let _ = out.send(ServerMessage::Error { id, error });
                continue;
            }
        };
        let id = msg.id;
        let reply = match msg.request {
            ClientRequest::Subscribe { session_key } => {
                subscribe(&loom, &session_key, &out, &mut subscriptions).await
            }
            other => dispatch(&loom, other).await,
        };
        let _ = out.send(match reply {
            Ok(result) => ServerMessage::Reply { id, result },
            Err(error) => ServerMessage::Error { id, error },
        });
    }
    for (_, task) in subscriptions {
        task.abort();
    }
    writer.abort();
}

/// Replies with the snapshot; the session's patches then follow on `out`.
async fn subscribe(
    loom: &Loom,
    key: &str,
    out: &mpsc::UnboundedSender<ServerMessage>,
    subscriptions: &mut HashMap<String, JoinHandle<()>>,
) -> Result<Value, WireError> {
    let sub = loom.subscribe(key).await?;
    let out = out.clone();
    let mut patches = sub.patches;
    let task = tokio::spawn(async move {
        loop {
            match patches.recv().await {
                Ok(ev) => {
                    if out
                        .send(ServerMessage::Patch(Box::new((*ev).clone())))
                        .is_err()
                    {
                        break;
                    }
                }
                // The client sees the seq gap and re-reads the snapshot.
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            }
        }
    });
    if let Some(old) = subscriptions.insert(key.to_string(), task) {
        old.abort();
    }
    to_value(sub.snapshot)
}

fn to_value<T: serde::Serialize>(value: T) -> Result<Value, WireError> {
    serde_json::to_value(value).map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))
}

fn wire(e: KernelError) -> WireError {
    e.to_wire()
}

/// Every verb but subscribe: one call into the kernel each.
async fn dispatch(loom: &Loom, request: ClientRequest) -> Result<Value, WireError> {
    match request {
        ClientRequest::Prompt(r) => to_value(loom.prompt(r).await.map_err(wire)?),
        ClientRequest::Stop { session_key } => {
            to_value(loom.stop(&session_key).await.map_err(wire)?)
        }
        ClientRequest::Steer { session_key, text } => {
            to_value(loom.steer(&session_key, text).await.map_err(wire)?)
        }
        ClientRequest::Interact(r) => to_value(loom.interact(r).await.map_err(wire)?),
        ClientRequest::GetSnapshot { session_key } => {
            to_value(loom.get_snapshot(&session_key).await.map_err(wire)?)
        }
        ClientRequest::GetHistory { session_key } => {
            to_value(loom.get_history(&session_key).await.map_err(wire)?)
        }
        ClientRequest::ListSessions { workdir } => {
            to_value(loom.list_sessions(workdir.as_deref()).await.map_err(wire)?)
        }
        ClientRequest::Search { query, limit } => {
            let limit = limit.map_or(50, |l| l as usize);
            to_value(loom.search(&query, limit).await.map_err(wire)?)
        }
        ClientRequest::ListAgentInfo {} => to_value(loom.list_agent_info().await),
        ClientRequest::ListModels { agent } => {
            to_value(loom.list_models(&agent).await.map_err(wire)?)
        }
        ClientRequest::ListEffort { agent } => {
            to_value(loom.list_effort(&agent).await.map_err(wire)?)
        }
        ClientRequest::ListTools {} => to_value(loom.list_tools().await),
        ClientRequest::ListSkills { workdir } => {
            to_value(loom.list_skills(workdir.as_deref()).await)
        }
        ClientRequest::Subscribe { .. } => Err(WireError::new(
            ErrorCode::BadRequest,
            "subscribe is answered by the connection, not dispatched",
        )),
    }
}
