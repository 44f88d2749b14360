//! The API layer: one function, [`handle`], serves every verb for every surface over
//! the wire types of `weft_protocol`. The Unix socket, the WebSocket and (through the
//! socket) the desktop window all end here. Its match has one arm per verb, each calling
//! the verb's area (sessions, terminals, the daemon; accounts, library, trust and MCP
//! have handlers of their own); [`reply`] is the one place a typed reply or error
//! becomes what is sent, checked against the reply type the verb's declaration names.

mod daemon;
mod forward;
mod frames;

mod sessions;
mod terminals;

use std::sync::Arc;

use serde_json::Value;
use weft_kernel::{Caller, KernelError};
use weft_protocol::{
    verb, AnswerRequest, ClientMessage, ClientRequest, ErrorCode, Hello, InteractRequest,
    PromptRequest, Scope, ServerMessage, Welcome, WireError, WorkspaceFilesQuery,
};

pub use frames::on_frame;

use crate::reply::answer;
pub use crate::reply::Reply;

use crate::conn::{Conn, Transport};
use crate::service::Service;

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
        // Sessions.
        ClientRequest::Prompt(r) => {
            answer::<PromptRequest>(sessions::prompt(service, &caller, r).await)
        }
        ClientRequest::Restore {
            session_key,
            turn,
            side,
            paths,
            yes,
            undo,
        } => {
            let request = weft_kernel::checkpoints::RestoreRequest {
                turn,
                side,
                paths,
                yes,
                undo,
            };
            answer::<verb::Restore>(
                loom.restore_files(&session_key, request)
                    .await
                    .map_err(wire),
            )
        }
        ClientRequest::RevertHunk {
            session_key,
            path,
            hunk,
        } => answer::<verb::RevertHunk>(
            loom.revert_hunk(&session_key, path, hunk)
                .await
                .map_err(wire),
        ),
        ClientRequest::SessionDiff {
            session_key,
            from,
            to,
        } => answer::<verb::SessionDiff>(
            loom.session_diff(&session_key, from, to)
                .await
                .map_err(wire),
        ),
        ClientRequest::Stop { session_key } => {
            answer::<verb::Stop>(sessions::stop(loom, &session_key).await)
        }
        ClientRequest::Steer {
            session_key,
            text,
            attachments,
        } => answer::<verb::Steer>(
            sessions::steer(loom, &caller, &session_key, text, attachments).await,
        ),
        ClientRequest::Dequeue {
            session_key,
            task_id,
        } => answer::<verb::Dequeue>(sessions::dequeue(loom, &session_key, &task_id).await),
        ClientRequest::Requeue {
            session_key,
            task_id,
            to,
        } => answer::<verb::Requeue>(sessions::requeue(loom, &session_key, &task_id, to).await),
        ClientRequest::Interact(r) => {
            answer::<InteractRequest>(sessions::interact(loom, &caller, r).await)
        }
        ClientRequest::Answer(r) => {
            answer::<AnswerRequest>(sessions::answer(loom, &caller, r).await)
        }
        ClientRequest::Inbox {} => answer::<verb::Inbox>(sessions::inbox(loom)),
        ClientRequest::Subscribe { session_key } => {
            sessions::subscribe(service, conn, id, session_key).await
        }
        ClientRequest::Unsubscribe { session_key } => {
            answer::<verb::Unsubscribe>(sessions::unsubscribe(conn, &session_key))
        }
        ClientRequest::SubscribeAll {} => {
            answer::<verb::SubscribeAll>(sessions::subscribe_all(service, conn))
        }
        ClientRequest::GetSnapshot { session_key } => {
            answer::<verb::GetSnapshot>(sessions::get_snapshot(service, &session_key).await)
        }
        ClientRequest::GetHistory {
            session_key,
            limit,
            before,
        } => answer::<verb::GetHistory>(
            sessions::get_history(loom, &session_key, limit, before).await,
        ),
        ClientRequest::ListSessions { workdir, archived } => answer::<verb::ListSessions>(
            sessions::list_sessions(service, workdir.as_deref(), archived.unwrap_or(false)).await,
        ),
        ClientRequest::Search { query, limit } => {
            answer::<verb::Search>(sessions::search(loom, &query, limit).await)
        }
        ClientRequest::ListAgentInfo {} => {
            answer::<verb::ListAgentInfo>(sessions::list_agent_info(loom).await)
        }
        ClientRequest::ListModels { agent } => {
            answer::<verb::ListModels>(sessions::list_models(loom, &agent).await)
        }
        ClientRequest::ListEffort { agent, model } => {
            answer::<verb::ListEffort>(sessions::list_effort(loom, &agent, model.as_deref()).await)
        }
        ClientRequest::ListTools { agent, workdir } => answer::<verb::ListTools>(
            sessions::list_tools(loom, agent.as_deref(), workdir.as_deref()).await,
        ),
        ClientRequest::ListSkills { workdir } => {
            answer::<verb::ListSkills>(sessions::list_skills(loom, workdir.as_deref()).await)
        }
        ClientRequest::SwitchAccount {
            session_key,
            account,
            resume,
            confirm,
        } => answer::<verb::SwitchAccount>(
            sessions::switch_account(loom, &caller, &session_key, &account, resume, confirm).await,
        ),
        ClientRequest::SwitchAgent { session_key, agent } => answer::<verb::SwitchAgent>(
            sessions::switch_agent(loom, &caller, &session_key, &agent).await,
        ),
        ClientRequest::CheckAccountSwitch {
            session_key,
            account,
        } => answer::<verb::CheckAccountSwitch>(
            sessions::check_account_switch(loom, &caller, &session_key, &account).await,
        ),
        // Terminals.
        ClientRequest::Prewarm(r) => {
            answer::<weft_protocol::PrewarmRequest>(loom.prewarm(&caller, r).await.map_err(wire))
        }
        ClientRequest::OpenTerminal(r) => terminals::open(loom, conn, &caller, id, r).await,
        ClientRequest::AttachTerminal { session_key } => {
            terminals::attach_to(loom, conn, id, session_key)
        }
        ClientRequest::DetachTerminal { session_key } => {
            answer::<verb::DetachTerminal>(terminals::detach(conn, &session_key))
        }
        ClientRequest::WriteTerminal { session_key, data } => {
            answer::<verb::WriteTerminal>(terminals::write(loom, conn, session_key, data).await)
        }
        ClientRequest::ResizeTerminal {
            session_key,
            cols,
            rows,
        } => answer::<verb::ResizeTerminal>(terminals::resize(loom, &session_key, cols, rows)),
        ClientRequest::CloseTerminal { session_key } => {
            answer::<verb::CloseTerminal>(terminals::close(loom, conn, &session_key).await)
        }
        ClientRequest::LoginAccount {
            account,
            cols,
            rows,
        } => terminals::login(service, conn, &caller, id, account, cols, rows).await,
        ClientRequest::InstallAgent {
            name,
            version,
            cols,
            rows,
        } => terminals::install(service, conn, &caller, id, name, version, cols, rows),
        // The daemon.
        ClientRequest::DaemonStatus {} => answer::<verb::DaemonStatus>(daemon::status(service)),
        ClientRequest::DaemonStop {} => answer::<verb::DaemonStop>(daemon::stop(service, &caller)),
        ClientRequest::Listen {
            addr,
            tls,
            tls_cert,
            tls_key,
        } => {
            let options = daemon::listen_options(addr, tls, tls_cert, tls_key);
            answer::<verb::Listen>(match options {
                Ok(options) => daemon::listen(service, conn, &options).await,
                Err(e) => Err(e),
            })
        }
        ClientRequest::SurfaceCommand(request) => answer::<weft_protocol::SurfaceCommandRequest>(
            daemon::surface_command(service, conn, request).await,
        ),
        ClientRequest::ReloadSurface { name } => {
            answer::<verb::ReloadSurface>(daemon::reload_surface(service, conn, &name).await)
        }
        ClientRequest::ListAgentInstalls {} => {
            answer::<verb::ListAgentInstalls>(daemon::agent_installs(service))
        }
        ClientRequest::SaveAttachment { name, data } => {
            answer::<verb::SaveAttachment>(daemon::save_attachment(service, name, data).await)
        }
        ClientRequest::ListWorkspaceFiles(q) => {
            answer::<WorkspaceFilesQuery>(daemon::workspace_files(q).await)
        }
        ClientRequest::ReadFile { path, max_bytes } => {
            answer::<verb::ReadFile>(daemon::read_file(service, path, max_bytes).await)
        }
        ClientRequest::ListDir { path } => {
            answer::<verb::ListDir>(daemon::list_dir(service, path).await)
        }
        ClientRequest::AddSkill { path } => {
            answer::<verb::AddSkill>(daemon::add_skill(service, path).await)
        }
        ClientRequest::ImportAgentSetup {
            dry_run,
            servers,
            skills,
        } => answer::<verb::ImportAgentSetup>(
            daemon::import_agent_setup(service, dry_run, servers, skills).await,
        ),
        ClientRequest::RemoveSkill { name } => {
            answer::<verb::RemoveSkill>(daemon::remove_skill(service, name).await)
        }
        ClientRequest::SetSkillEnabled { name, enabled } => {
            answer::<verb::SetSkillEnabled>(daemon::set_skill_enabled(service, name, enabled).await)
        }
        // The library (its own handler, over the session library).
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
        // Workspace trust and MCP (their own handlers).
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
        // Worktrees.
        ClientRequest::ListWorktrees { repo } => {
            answer::<verb::ListWorktrees>(crate::worktrees::list(service, repo).await)
        }
        ClientRequest::RunWorktree {
            name,
            repo,
            cols,
            rows,
        } => terminals::run_worktree(service, conn, &caller, id, name, repo, (cols, rows)),
        ClientRequest::MergeSession {
            session_key,
            mode,
            message,
            push,
            pr,
        } => answer::<verb::MergeSession>(
            crate::worktrees::merge(service, session_key, mode, message, push, pr).await,
        ),
        // Accounts (their own handler, over the accounts service).
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
    }
}

fn hello_reply(service: &Arc<Service>, conn: &Arc<Conn>, hello: Hello) -> Result<Reply, WireError> {
    if conn.greeted() {
        return Err(forbidden("hello was already said"));
    }
    let mut scopes = conn.scopes();
    if let Some(token) = hello.token.as_deref() {
        match service.token_scopes(token) {
            Some(granted) => {
                scopes = granted;
                conn.proved_with(token);
            }
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
    answer::<Hello>(Ok(Welcome {
        version: weft_client::VERSION.to_string(),
        pid: std::process::id(),
        scopes,
        restarting,
    }))
}

/// True when version `a` is newer than `b` (semantic versions; anything that does not
/// parse is not newer).
fn newer(a: &str, b: &str) -> bool {
    match (semver::Version::parse(a), semver::Version::parse(b)) {
        (Ok(a), Ok(b)) => a > b,
        _ => false,
    }
}

fn verb_name(request: &ClientRequest) -> String {
    serde_json::to_value(request)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "that".into())
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
        assert!(
            super::newer("0.2.0", "0.2.0-dev"),
            "a release is newer than its pre-release"
        );
    }
}
