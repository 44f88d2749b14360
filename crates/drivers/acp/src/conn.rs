//! One ACP connection to one agent process, on the official SDK.
//!
//! The SDK's connection runs in its own task (`Client.v1()…connect_with`): its
//! dispatch loop parses each line, answers malformed JSON-RPC with a parse error,
//! answers requests no handler claims with `method_not_found` (so an agent is never
//! left waiting), and routes responses to the requests we sent. Our handlers never
//! block that loop: every notification and every permission request is forwarded to
//! one channel, [`Incoming`], read by the turn in order. Because the loop runs each
//! handler before it routes the next message, every `session/update` sent before a
//! `session/prompt` response is in the channel by the time that response arrives.
//!
//! Requests whose replies carry fields the stable schema lacks (`models` in
//! `session/new`, `usage` in `session/prompt`) are sent as [`UntypedMessage`]s built
//! from the typed schema requests, and their replies read as JSON.

use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, CreateElicitationRequest, CreateElicitationResponse,
    ElicitationCapabilities, ElicitationFormCapabilities, Implementation, InitializeRequest,
    InitializeResponse, RequestPermissionRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, ByteStreams, Client, JsonRpcMessage, JsonRpcRequest, UntypedMessage,
};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::process::{AgentProcess, SpawnSpec};

/// What the agent sent us, in arrival order.
pub enum Incoming {
    /// A notification (`session/update` or anything else), unparsed.
    Notification {
        /// Its method.
        method: String,
        /// Its params.
        params: Value,
    },
    /// `session/request_permission`, with the handle its answer goes through.
    /// Dropping the responder answers the agent with an error.
    /// Answered as raw JSON ([`crate::permission::reply`]): Qwen Code reads the
    /// answers to its questions from an `answers` field beside `outcome`, which the
    /// schema's typed reply cannot carry.
    Permission(Box<RequestPermissionRequest>, Responder<Value>),
    /// `elicitation/create`: the agent asks the user something.
    Elicitation(
        Box<CreateElicitationRequest>,
        Responder<CreateElicitationResponse>,
    ),
    /// The connection ended (the agent exited or broke the protocol).
    Closed(Option<String>),
}

/// `session/request_permission`, parsed as the schema says, whose reply is raw JSON.
#[derive(Debug, Clone)]
pub struct PermissionAsk(pub RequestPermissionRequest);

const REQUEST_PERMISSION: &str = "session/request_permission";

impl JsonRpcMessage for PermissionAsk {
    fn matches_method(method: &str) -> bool {
        method == REQUEST_PERMISSION
    }

    fn method(&self) -> &str {
        REQUEST_PERMISSION
    }

    fn to_untyped_message(&self) -> Result<UntypedMessage, agent_client_protocol::Error> {
        UntypedMessage::new(REQUEST_PERMISSION, &self.0)
    }

    fn parse_message(method: &str, params: &Value) -> Result<Self, agent_client_protocol::Error> {
        if method != REQUEST_PERMISSION {
            return Err(agent_client_protocol::Error::method_not_found());
        }
        serde_json::from_value(params.clone())
            .map(Self)
            .map_err(|_| agent_client_protocol::Error::invalid_params())
    }
}

impl JsonRpcRequest for PermissionAsk {
    type Response = Value;
}

/// A live connection and its process.
pub struct AcpConnection {
    /// Sends requests and notifications.
    pub cx: ConnectionTo<Agent>,
    /// Everything the agent sent.
    pub incoming: mpsc::UnboundedReceiver<Incoming>,
    /// The agent's answer to `initialize`.
    pub init: InitializeResponse,
    /// The process (killed with its group on drop).
    pub process: AgentProcess,
    /// The connection has ended.
    pub closed: bool,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

/// Why a connection could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    /// The program could not be started.
    #[error("could not start {program}: {source}")]
    Spawn {
        /// What was run.
        program: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The agent exited or closed its output.
    #[error("the agent exited{status}{stderr}")]
    Exited {
        /// ` (exit status N)` when known.
        status: String,
        /// `: <last stderr lines>` when it said something.
        stderr: String,
    },
    /// The agent answered with a JSON-RPC error.
    #[error("{method} failed: {message}")]
    Rpc {
        /// The request.
        method: String,
        /// The agent's error.
        message: String,
    },
    /// No answer in time.
    #[error("{0} timed out")]
    Timeout(String),
}

/// Sends `params` as `method`; the reply as JSON.
pub async fn request(
    cx: &ConnectionTo<Agent>,
    method: &str,
    params: &impl Serialize,
) -> Result<Value, agent_client_protocol::Error> {
    let msg = UntypedMessage::new(method, params)?;
    cx.send_request(msg).block_task().await
}

impl AcpConnection {
    /// Starts the agent and initializes it; a child that exits (or never answers)
    /// during start-up becomes an error with its own last words.
    pub async fn start(spec: &SpawnSpec, init_timeout: Duration) -> Result<Self, ConnError> {
        let (mut process, stdin, stdout) =
            AgentProcess::spawn(spec).map_err(|source| ConnError::Spawn {
                program: spec.program.display().to_string(),
                source,
            })?;
        let (tx, incoming) = mpsc::unbounded_channel();
        let (cx_tx, cx_rx) = oneshot::channel::<ConnectionTo<Agent>>();
        let (stop, stop_rx) = oneshot::channel::<()>();
        let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
        let notify_tx = tx.clone();
        let permission_tx = tx.clone();
        let elicit_tx = tx.clone();
        let task = tokio::spawn(async move {
            let result = Client
                .v1()
                .name("weft")
                .on_receive_request(
                    async move |req: PermissionAsk,
                                responder: Responder<Value>,
                                _cx: ConnectionTo<Agent>| {
                        let _ =
                            permission_tx.send(Incoming::Permission(Box::new(req.0), responder));
                        Ok(())
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |req: CreateElicitationRequest,
                                responder: Responder<CreateElicitationResponse>,
                                _cx: ConnectionTo<Agent>| {
                        let _ = elicit_tx.send(Incoming::Elicitation(Box::new(req), responder));
                        Ok(())
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_notification(
                    async move |n: UntypedMessage, _cx: ConnectionTo<Agent>| {
                        let _ = notify_tx.send(Incoming::Notification {
                            method: n.method,
                            params: n.params,
                        });
                        Ok(())
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
                    let _ = cx_tx.send(cx.clone());
                    tokio::select! {
                        _ = stop_rx => {}
                        _ = cx.incoming_closed() => {}
                    }
                    Ok(())
                })
                .await;
            let _ = tx.send(Incoming::Closed(result.err().map(|e| e.to_string())));
        });
        let cx = match cx_rx.await {
            Ok(cx) => cx,
            Err(_) => {
                task.abort();
                return Err(exited(&mut process).await);
            }
        };
        let init_req = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(ClientCapabilities::default().elicitation(
                ElicitationCapabilities::new().form(ElicitationFormCapabilities::new()),
            ))
            .client_info(Implementation::new("weft", env!("CARGO_PKG_VERSION")).title("Weft"));
        let init = tokio::time::timeout(init_timeout, cx.send_request(init_req).block_task()).await;
        let init = match init {
            Ok(Ok(init)) => init,
            Ok(Err(e)) => {
                task.abort();
                if process.exit_status().is_some() || cx.is_incoming_closed() {
                    return Err(exited(&mut process).await);
                }
                return Err(ConnError::Rpc {
                    method: "initialize".into(),
                    message: e.to_string(),
                });
            }
            Err(_) => {
                task.abort();
                if process.exit_status().is_some() {
                    return Err(exited(&mut process).await);
                }
                return Err(ConnError::Timeout("initialize".into()));
            }
        };
        Ok(Self {
            cx,
            incoming,
            init,
            process,
            closed: false,
            stop: Some(stop),
            task,
        })
    }

    /// Sends `session/cancel` for `session_id`.
    pub fn cancel(&self, session_id: &str) {
        let _ = self
            .cx
            .send_notification(CancelNotification::new(session_id.to_string()));
    }

    /// The error a dead connection becomes, with the child's last words.
    pub async fn exit_error(&mut self) -> ConnError {
        exited(&mut self.process).await
    }

    /// Ends the connection (the agent's stdin closes with it), gives the agent what is
    /// left of `grace` to exit by itself — an agent killed at once may not have written
    /// its session out, and a later `session/load` of it then fails — and kills the
    /// process group either way.
    pub async fn close(mut self, grace: Duration) {
        let started = tokio::time::Instant::now();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(grace, &mut self.task).await;
        let left = grace
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(100));
        let _ = self.process.wait_exit(left).await;
        self.process.kill();
    }
}

impl Drop for AcpConnection {
    fn drop(&mut self) {
        self.task.abort();
        self.process.kill();
    }
}

async fn exited(process: &mut AgentProcess) -> ConnError {
    let status = process.wait_exit(Duration::from_millis(500)).await;
    process.settle_stderr(Duration::from_millis(250)).await;
    let tail = process.stderr_tail(1500);
    ConnError::Exited {
        status: status
            .map(|s| match s.code() {
                Some(c) => format!(" (exit status {c})"),
                None => " (killed by a signal)".to_string(),
            })
            .unwrap_or_default(),
        stderr: if tail.is_empty() {
            String::new()
        } else {
            format!(": {tail}")
        },
    }
}
