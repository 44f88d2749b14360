//! The API layer: one function, [`handle`], serves every verb for every surface over
//! the wire types of `weft_protocol`. The Unix socket, the WebSocket and (through the
//! socket) the desktop window all end here; adding a verb touches the protocol, the
//! kernel and the UI, and this match.

use std::sync::Arc;

use serde_json::Value;
use weft_kernel::feed::{Patches, RecvError, TryRecvError};
use weft_kernel::{Caller, KernelError, LoomIO};
use weft_protocol::{
    ClientMessage, ClientRequest, ErrorCode, Hello, PatchEvent, Scope, ServerMessage,
    TerminalAttached, Welcome, WireError,
};

use crate::conn::{Conn, Transport};
use crate::service::Service;

/// How a request was answered.
pub enum Reply {
    /// Send this as the reply.
    Value(Value),
    /// Already sent, by a task that must order it before what follows (a
    /// subscription's patches, a terminal's frames).
    Sent,
}

fn to_value<T: serde::Serialize>(value: T) -> Result<Reply, WireError> {
    serde_json::to_value(value)
        .map(Reply::Value)
        .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))
}

fn wire(e: KernelError) -> WireError {
    e.to_wire()
}

fn forbidden(message: impl Into<String>) -> WireError {
    WireError::new(ErrorCode::Forbidden, message)
}

/// Handles one message and sends its reply.
pub async fn respond(service: &Arc<Service>, conn: &Arc<Conn>, msg: ClientMessage) {
    let id = msg.id;
    let reply = handle(service, conn, id, msg.request).await;
    let message = match reply {
        Ok(Reply::Sent) => return,
        Ok(Reply::Value(result)) => ServerMessage::Reply { id, result },
        Err(error) => ServerMessage::Error { id, error },
    };
    let frame = within_frame(
        id,
        weft_client::frame::encode_json(&message),
        weft_client::frame::MAX_FRAME,
    );
    let _ = conn.out.send(frame).await;
}

/// A reply goes out as one frame, which the transports refuse past `limit`: writing it
/// would fail the connection, so the request gets an error naming the reply's size.
fn within_frame(id: u64, frame: bytes::Bytes, limit: usize) -> bytes::Bytes {
    if frame.len() <= limit {
        return frame;
    }
    let mib = |n: usize| n as f64 / f64::from(1u32 << 20);
    let error = WireError::new(
        ErrorCode::BadRequest,
        format!(
            "the reply to this request is {:.1} MiB, more than one reply can carry ({:.1} MiB); nothing was sent",
            mib(frame.len()),
            mib(limit)
        ),
    );
    weft_client::frame::encode_json(&ServerMessage::Error { id, error })
}

/// Every verb, for one connection.
pub async fn handle(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    id: u64,
    request: ClientRequest,
) -> Result<Reply, WireError> {
    let request = match request {
        ClientRequest::Hello(hello) => return hello_reply(service, conn, hello),
        other => other,
    };
    if !conn.greeted() {
        return Err(forbidden("say hello first (with a token on a WebSocket)"));
    }
    let needed = request.scope();
    if !conn.scopes().contains(&needed) {
        return Err(forbidden(format!(
            "this connection may not `{}`: its token lacks the {} scope",
            verb_name(&request),
            needed.as_str()
        )));
    }
    let loom = &service.loom;
    let caller = conn.caller();
    match request {
        ClientRequest::Hello(_) => Err(forbidden("hello was already said")),
        ClientRequest::Prompt(r) => {
            crate::library::adopt(service, &r).await?;
            to_value(loom.prompt_as(&caller, r).await.map_err(wire)?)
        }
        ClientRequest::Stop { session_key } => {
            to_value(loom.stop(&session_key).await.map_err(wire)?)
        }
        ClientRequest::Steer { session_key, text } => to_value(
            loom.steer_as(&caller, &session_key, text)
                .await
                .map_err(wire)?,
        ),
        ClientRequest::Dequeue {
            session_key,
            task_id,
        } => to_value(loom.dequeue(&session_key, &task_id).await.map_err(wire)?),
        ClientRequest::Requeue {
            session_key,
            task_id,
            to,
        } => to_value(
            loom.requeue(&session_key, &task_id, to as usize)
                .await
                .map_err(wire)?,
        ),
        ClientRequest::Interact(r) => to_value(loom.interact_as(&caller, r).await.map_err(wire)?),
        ClientRequest::Answer(r) => to_value(
            loom.answer_as(&caller, &r.prompt_id, r.response)
                .await
                .map_err(wire)?,
        ),
        ClientRequest::Inbox {} => to_value(loom.inbox()),
        ClientRequest::Subscribe { session_key } => subscribe(service, conn, id, session_key).await,
        ClientRequest::Unsubscribe { session_key } => {
            if let Some(task) = conn.subscriptions.lock().remove(&session_key) {
                task.abort();
            }
            to_value(())
        }
        ClientRequest::SubscribeAll {} => {
            let task = tokio::spawn(forward_all(service.clone(), conn.out.clone()));
            if let Some(old) = conn.all.lock().replace(task) {
                old.abort();
            }
            to_value(())
        }
        ClientRequest::GetSnapshot { session_key } => {
            let at = loom.get_snapshot(&session_key).await.map_err(wire)?;
            service.durable().await;
            to_value(at)
        }
        ClientRequest::GetHistory {
            session_key,
            limit,
            before,
        } => to_value(
            loom.history_page(&session_key, limit, before)
                .await
                .map_err(wire)?,
        ),
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
        ClientRequest::SaveAttachment { name, data } => {
            // Decoding up to 32 MiB of base64 and an image: off the runtime's threads.
            let home = service.home.dir().to_path_buf();
            let saved =
                tokio::task::spawn_blocking(move || crate::attachments::save(&home, &name, &data))
                    .await
                    .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))??;
            to_value(saved)
        }
        ClientRequest::ListWorkspaceFiles(q) => {
            // A walk of a big tree blocks for a while: off the runtime's threads.
            let found = tokio::task::spawn_blocking(move || crate::files::list(&q))
                .await
                .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))??;
            to_value(found)
        }
        ClientRequest::ListSkills { workdir } => {
            to_value(loom.list_skills(workdir.as_deref()).await)
        }
        ClientRequest::OpenTerminal(r) => {
            let (key, bridge) = loom.terminal_open(&caller, r).await.map_err(wire)?;
            attach(conn, id, key, bridge)
        }
        ClientRequest::AttachTerminal { session_key } => {
            let bridge = loom.terminal(&session_key).map_err(wire)?;
            attach(conn, id, session_key, bridge)
        }
        ClientRequest::DetachTerminal { session_key } => {
            if let Some(task) = conn.terminals.lock().remove(&session_key) {
                task.abort();
            }
            to_value(())
        }
        ClientRequest::WriteTerminal { session_key, data } => {
            loom.terminal(&session_key).map_err(wire)?;
            conn.type_text(session_key, data).await;
            to_value(())
        }
        ClientRequest::ResizeTerminal {
            session_key,
            cols,
            rows,
        } => {
            let bridge = loom.terminal(&session_key).map_err(wire)?;
            let size = weft_kernel::pty::PtySize {
                cols: cols.max(1),
                rows: rows.max(1),
            };
            bridge.resize(size).map_err(|e| match e {
                // Past the limits (the grid is allocated whole): the message names them.
                weft_kernel::pty::PtyError::TooLarge { .. } => {
                    WireError::new(ErrorCode::BadRequest, e.to_string())
                }
                e => WireError::new(ErrorCode::Internal, format!("resizing the terminal: {e}")),
            })?;
            to_value(())
        }
        ClientRequest::CloseTerminal { session_key } => {
            if let Some(task) = conn.terminals.lock().remove(&session_key) {
                task.abort();
            }
            to_value(loom.terminal_close(&session_key).await.map_err(wire)?)
        }
        ClientRequest::DaemonStatus {} => to_value(service.status()),
        ClientRequest::DaemonStop {} => {
            tracing::info!(surface = %caller.surface, "stop asked by a client");
            service.stop_soon("stopped by `weft daemon stop` or the app's Quit");
            to_value(())
        }
        ClientRequest::Listen { addr } => {
            if conn.transport != Transport::Socket {
                return Err(forbidden(
                    "only a client on the daemon's own socket may open a listener",
                ));
            }
            let listening = crate::ws::listen(service, conn, &addr).await?;
            to_value(listening)
        }
        ClientRequest::ExportSessionToFile { .. } if conn.transport != Transport::Socket => Err(
            forbidden("only a client on the daemon's own socket may have it write a file"),
        ),
        r @ (ClientRequest::ListLibrary(_)
        | ClientRequest::SearchLibrary(_)
        | ClientRequest::OpenTranscript { .. }
        | ClientRequest::EarlierTurns { .. }
        | ClientRequest::ExportSession { .. }
        | ClientRequest::ExportSessionToFile { .. }
        | ClientRequest::LibraryProgress {}
        | ClientRequest::Usage { .. }
        | ClientRequest::ManageSession { .. }
        | ClientRequest::ForkSession { .. }) => crate::library::handle(service, r).await,
        r @ (ClientRequest::GetWorkspaceTrust { .. }
        | ClientRequest::TrustWorkspace { .. }
        | ClientRequest::DeclineWorkspaceTrust { .. }
        | ClientRequest::RevokeWorkspaceTrust { .. }) => {
            crate::trust::handle(service.home.dir(), r).await
        }
        r @ (ClientRequest::ListMcp { .. }
        | ClientRequest::SetMcpEnabled { .. }
        | ClientRequest::SetMcpSecret { .. }
        | ClientRequest::RemoveMcpSecret { .. }) => {
            crate::mcp::handle(service.home.dir(), conn, r).await
        }
        // A skill is a folder copied, removed or rewritten: off the runtime's threads.
        ClientRequest::AddSkill { path } => {
            let state = service.home.dir().to_path_buf();
            let found = tokio::task::spawn_blocking(move || {
                let skill = weft_kernel::skills::add(&state, std::path::Path::new(&path))
                    .map_err(|e| WireError::new(ErrorCode::BadRequest, e))?;
                let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
                let listed = weft_kernel::skills::list(&state, None, home.as_deref());
                Ok::<_, WireError>(listed.into_iter().find(|s| s.name == skill.name))
            })
            .await
            .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))??;
            to_value(found)
        }
        ClientRequest::RemoveSkill { name } => {
            let state = service.home.dir().to_path_buf();
            tokio::task::spawn_blocking(move || weft_kernel::skills::remove(&state, &name))
                .await
                .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?
                .map_err(|e| WireError::new(ErrorCode::BadRequest, e))?;
            to_value(())
        }
        ClientRequest::SetSkillEnabled { name, enabled } => {
            let state = service.home.dir().to_path_buf();
            tokio::task::spawn_blocking(move || {
                weft_kernel::skills::set_enabled(&state, &name, enabled)
            })
            .await
            .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?
            .map_err(|e| WireError::new(ErrorCode::Storage, e))?;
            to_value(())
        }
        ClientRequest::LoginAccount {
            account,
            cols,
            rows,
        } => {
            let (key, bridge) = crate::agents::login(service, &caller, account, cols, rows).await?;
            attach(conn, id, key, bridge)
        }
        ClientRequest::InstallAgent {
            name,
            version,
            cols,
            rows,
        } => {
            let (key, bridge) =
                crate::agents::install(service, &caller, name, version, cols, rows)?;
            attach(conn, id, key, bridge)
        }
        ClientRequest::ListAgentInstalls {} => {
            to_value(weft_accounts::agents::list(&|n| std::env::var(n).ok()))
        }
        r @ (ClientRequest::ListAccounts {}
        | ClientRequest::AddAccount(_)
        | ClientRequest::RenameAccount { .. }
        | ClientRequest::RemoveAccount { .. }
        | ClientRequest::TestAccount { .. }
        | ClientRequest::AccountUsage { .. }
        | ClientRequest::SetAutoSwitch { .. }
        | ClientRequest::GetAutoSwitch { .. }) => {
            crate::accounts::handle(&service.accounts, conn, r).await
        }
        ClientRequest::SwitchAccount {
            session_key,
            account,
            resume,
            confirm,
        } => to_value(
            loom.switch_account_as(&caller, &session_key, &account, resume, confirm)
                .await
                .map_err(wire)?,
        ),
        ClientRequest::SwitchAgent { session_key, agent } => {
            loom.switch_agent_as(&caller, &session_key, &agent)
                .await
                .map_err(wire)?;
            to_value(())
        }
        ClientRequest::CheckAccountSwitch {
            session_key,
            account,
        } => to_value(
            loom.check_account_switch_as(&caller, &session_key, &account)
                .await
                .map_err(wire)?,
        ),
    }
}

fn hello_reply(service: &Arc<Service>, conn: &Arc<Conn>, hello: Hello) -> Result<Reply, WireError> {
    if conn.greeted() {
        return Err(forbidden("hello was already said"));
    }
    let mut scopes = conn.scopes();
    if let Some(token) = hello.token.as_deref() {
        match service.token_scopes(token) {
            Some(granted) => scopes = granted,
            None => return Err(forbidden("that token is not valid for this Weft")),
        }
    } else if conn.transport == Transport::Socket && !service.proves(hello.proof.as_deref()) {
        // Our uid alone does not tell the user from a command in Weft's sandbox.
        return Err(forbidden(format!(
            "this client did not prove it runs outside Weft's sandbox: it could not read {} (a `weft` of this version reads it by itself)",
            service.home.client_key().display()
        )));
    }
    if scopes.is_empty() {
        return Err(forbidden(
            "a token is required (`weft serve --print-token`)",
        ));
    }
    // Only a client of the owner's socket may hand over an environment: a WebSocket
    // peer's would decide what the agents' processes run with.
    let env = match conn.transport {
        Transport::Socket => hello.env.map(Arc::new),
        Transport::WebSocket => None,
    };
    let surface = if hello.surface.is_empty() {
        "client".to_string()
    } else {
        hello.surface.chars().take(40).collect()
    };
    service.client_joined(conn.id, &surface);
    conn.greet(Caller { surface, env }, scopes.clone());
    // Only a newer `weft` on the owner's socket restarts the daemon (it then starts its
    // own binary); an older one, or a browser page, uses it as it is.
    let restarting = conn.transport == Transport::Socket
        && newer(&hello.version, weft_client::VERSION)
        && service.restart_for(&hello.version);
    to_value(Welcome {
        version: weft_client::VERSION.to_string(),
        pid: std::process::id(),
        scopes,
        restarting,
    })
}

/// True when version `a` is newer than `b` (dot-separated numbers; anything that does
/// not parse is not newer).
fn newer(a: &str, b: &str) -> bool {
    let parse = |v: &str| -> Option<Vec<u64>> {
        v.split(['.', '-', '+'])
            .take(3)
            .map(|p| p.parse().ok())
            .collect()
    };
    match (parse(a), parse(b)) {
        (Some(a), Some(b)) => a > b,
        _ => false,
    }
}

fn verb_name(request: &ClientRequest) -> String {
    serde_json::to_value(request)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "that".into())
}

/// Replies with the snapshot, then forwards the session's patches; a connection that
/// reads too slowly is told to resync.
async fn subscribe(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    id: u64,
    session_key: String,
) -> Result<Reply, WireError> {
    let sub = service.loom.subscribe(&session_key).await.map_err(wire)?;
    let out = conn.out.clone();
    let result = serde_json::to_value(&sub.snapshot)
        .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?;
    let patches = sub.patches;
    let key = session_key.clone();
    let service = service.clone();
    let task = tokio::spawn(async move {
        service.durable().await;
        let reply = ServerMessage::Reply { id, result };
        if out
            .send(weft_client::frame::encode_json(&reply))
            .await
            .is_err()
        {
            return;
        }
        forward(&service, patches, &out, Some(key)).await;
    });
    if let Some(old) = conn.subscriptions.lock().insert(session_key, task) {
        old.abort();
    }
    Ok(Reply::Sent)
}

fn patch_message(event: &PatchEvent) -> ServerMessage {
    ServerMessage::Patch(Box::new(event.clone()))
}

/// Every session's patches (a window); a lag becomes a resync of everything.
async fn forward_all(service: Arc<Service>, out: tokio::sync::mpsc::Sender<bytes::Bytes>) {
    let patches = service.loom.subscribe_all();
    forward(&service, patches, &out, None).await;
}

/// The most messages held for one wait for the store (merged patches count once).
const FORWARD_BATCH: usize = 4096;

/// Sends `patches` to `out` in batches, each once the store has committed what it shows
/// (a client never sees what a crash would take back); a lag becomes a resync of `key`
/// (of everything when `None`). Within a batch, a session's consecutive patches that
/// [`SnapshotPatch::merge`](weft_protocol::SnapshotPatch::merge) can join travel as one
/// (`from`..=`seq`): a streamed reply is a patch per token, and a client decoding a
/// frame per token fell behind at a few hundred thousand a second and was resynced,
/// re-reading the whole snapshot each time. While one batch waits for its commit the
/// next is gathered (it waits for a commit of its own): a forwarder that stopped reading
/// during each wait lagged behind a fast turn by the channel's whole capacity.
async fn forward(
    service: &Service,
    mut patches: Patches,
    out: &tokio::sync::mpsc::Sender<bytes::Bytes>,
    key: Option<String>,
) {
    let resync = || ServerMessage::Resync {
        session_key: key.clone(),
    };
    let mut next: Vec<ServerMessage> = Vec::new();
    let mut closed = false;
    loop {
        if next.is_empty() {
            match patches.recv_direct().await {
                Ok(ev) => join(&mut next, &ev),
                Err(RecvError::Overflowed(_)) => next.push(resync()),
                Err(RecvError::Closed) => return,
            }
        }
        // Everything already published joins this batch.
        drain(&mut patches, &mut next, &mut closed, &resync);
        let batch = std::mem::take(&mut next);
        let durable = service.durable();
        tokio::pin!(durable);
        // Polled, not woken per patch: a wake-up per streamed token cost the turn's own
        // task more than the token.
        let mut poll = tokio::time::interval(GATHER_EVERY);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                biased;
                () = &mut durable => break,
                _ = poll.tick(), if !closed && next.len() < FORWARD_BATCH => {
                    drain(&mut patches, &mut next, &mut closed, &resync);
                }
            }
        }
        for message in &batch {
            if out
                .send(weft_client::frame::encode_json(message))
                .await
                .is_err()
            {
                return;
            }
        }
        if closed && next.is_empty() {
            return;
        }
    }
}

/// How often a forwarder waiting for the store gathers what was published meanwhile:
/// well within the time a turn streaming a million patches a second takes to fill a
/// session's channel (4,096).
const GATHER_EVERY: std::time::Duration = std::time::Duration::from_millis(1);

/// Takes what is already published, up to [`FORWARD_BATCH`] messages.
fn drain(
    patches: &mut Patches,
    next: &mut Vec<ServerMessage>,
    closed: &mut bool,
    resync: &impl Fn() -> ServerMessage,
) {
    while !*closed && next.len() < FORWARD_BATCH {
        match patches.try_recv() {
            Ok(ev) => join(next, &ev),
            Err(TryRecvError::Overflowed(_)) => next.push(resync()),
            Err(TryRecvError::Empty) => break,
            Err(TryRecvError::Closed) => *closed = true,
        }
    }
}

/// Adds `ev` to the batch: merged into the last message when that is the same
/// session's patch just before it and the two can merge, else as a message of its own.
fn join(batch: &mut Vec<ServerMessage>, ev: &PatchEvent) {
    if let Some(ServerMessage::Patch(last)) = batch.last_mut() {
        if last.session_key == ev.session_key
            && last.seq + 1 == ev.seq
            && last.patch.merge(&ev.patch)
        {
            last.from.get_or_insert(last.seq);
            last.seq = ev.seq;
            return;
        }
    }
    batch.push(patch_message(ev));
}

fn attach(
    conn: &Arc<Conn>,
    id: u64,
    session_key: String,
    bridge: Arc<weft_kernel::pty::PtyBridge>,
) -> Result<Reply, WireError> {
    let result = serde_json::to_value(TerminalAttached {
        session_key: session_key.clone(),
    })
    .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?;
    let first = weft_client::frame::encode_json(&ServerMessage::Reply { id, result });
    let task = tokio::spawn(crate::attach::forward(
        session_key.clone(),
        bridge,
        conn.out.clone(),
        first,
    ));
    if let Some(old) = conn.terminals.lock().insert(session_key, task) {
        old.abort();
    }
    Ok(Reply::Sent)
}

/// The scopes a connection on `transport` starts with, before any hello.
pub fn initial_scopes(transport: Transport) -> Vec<Scope> {
    match transport {
        Transport::Socket => vec![Scope::Read, Scope::Control],
        Transport::WebSocket => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use weft_protocol::{ServerMessage, WireError};

    #[test]
    fn a_reply_too_big_for_one_frame_is_an_error_naming_its_size() {
        // 14 bytes a line, 3 of them escaped: 4.2 MB of text, 5.1 MB as a JSON string.
        let doc = "line \"quoted\"\n".repeat(300_000);
        let reply = ServerMessage::Reply {
            id: 7,
            result: serde_json::Value::String(doc),
        };
        let frame = weft_client::frame::encode_json(&reply);
        assert_eq!(super::within_frame(7, frame.clone(), 64 << 20), frame);
        assert_eq!(super::within_frame(7, frame.clone(), 5_200_000), frame);
        let refused = super::within_frame(7, frame, 5_000_000);
        let message: serde_json::Value = serde_json::from_slice(&refused).unwrap_or_default();
        let error: WireError = serde_json::from_value(message["error"].clone())
            .unwrap_or_else(|e| panic!("{e}: {message}"));
        assert_eq!(message["id"], 7);
        assert_eq!(error.code, weft_protocol::ErrorCode::BadRequest);
        assert!(
            error
                .message
                .contains("is 4.9 MiB, more than one reply can carry (4.8 MiB); nothing was sent"),
            "{}",
            error.message
        );
    }

    #[test]
    fn only_a_newer_version_is_newer() {
        assert!(super::newer("0.2.0", "0.1.0"));
        assert!(super::newer("0.1.10", "0.1.9"));
        assert!(!super::newer("0.1.0", "0.1.0"));
        assert!(!super::newer("0.0.9", "0.1.0"));
        assert!(!super::newer("test", "0.1.0"));
        assert!(!super::newer("", "0.1.0"));
    }
}
