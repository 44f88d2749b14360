//! Sessions: turns, their queue and interactions, snapshots and history, what agents
//! offer, and the switches of account and agent.

use std::sync::Arc;

use weft_kernel::{Caller, Loom};
use weft_protocol::{
    AccountSwitch, AgentInfo, AnswerRequest, InboxItem, InteractRequest, ModelInfo, PromptAccepted,
    PromptRequest, SearchHit, ServerMessage, SessionInfo, SkillInfo, SnapshotAt, SteerOutcome,
    ToolInfo, UniversalSnapshot, WireError,
};

use super::forward::{forward, forward_all};
use super::wire;
use crate::conn::Conn;
use crate::reply::Reply;
use crate::service::Service;

pub(super) async fn prompt(
    service: &Arc<Service>,
    caller: &Caller,
    mut r: PromptRequest,
) -> Result<PromptAccepted, WireError> {
    let worktree = crate::worktrees::prepare(service, caller, &mut r).await?;
    let accepted = service.loom.prompt_as(caller, r).await.map_err(wire)?;
    if let Some(entry) = worktree {
        crate::worktrees::started(service, entry, accepted.session_key.clone()).await;
    }
    Ok(accepted)
}

pub(super) async fn stop(loom: &Loom, session_key: &str) -> Result<(), WireError> {
    loom.stop(session_key).await.map_err(wire)
}

pub(super) async fn steer(
    loom: &Loom,
    caller: &Caller,
    session_key: &str,
    text: String,
    attachments: Option<Vec<String>>,
) -> Result<SteerOutcome, WireError> {
    let steer = weft_kernel::Steer {
        text,
        attachments: attachments
            .unwrap_or_default()
            .into_iter()
            .map(std::path::PathBuf::from)
            .collect(),
    };
    loom.steer_as(caller, session_key, steer)
        .await
        .map_err(wire)
}

pub(super) async fn dequeue(
    loom: &Loom,
    session_key: &str,
    task_id: &str,
) -> Result<(), WireError> {
    loom.dequeue(session_key, task_id).await.map_err(wire)
}

pub(super) async fn requeue(
    loom: &Loom,
    session_key: &str,
    task_id: &str,
    to: u32,
) -> Result<(), WireError> {
    loom.requeue(session_key, task_id, to as usize)
        .await
        .map_err(wire)
}

pub(super) async fn interact(
    loom: &Loom,
    caller: &Caller,
    r: InteractRequest,
) -> Result<(), WireError> {
    loom.interact_as(caller, r).await.map_err(wire)
}

pub(super) async fn answer(
    loom: &Loom,
    caller: &Caller,
    r: AnswerRequest,
) -> Result<(), WireError> {
    loom.answer_as(caller, &r.prompt_id, r.response)
        .await
        .map_err(wire)
}

pub(super) fn inbox(loom: &Loom) -> Result<Vec<InboxItem>, WireError> {
    Ok(loom.inbox())
}

/// Replies with the snapshot, then forwards the session's patches; a connection that
/// reads too slowly is told to resync.
pub(super) async fn subscribe(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    id: u64,
    session_key: String,
) -> Result<Reply, WireError> {
    let sub = service.loom.subscribe(&session_key).await.map_err(wire)?;
    let out = conn.out.clone();
    let result = serde_json::to_value(&sub.snapshot)
        .map_err(|e| WireError::new(weft_protocol::ErrorCode::Internal, e.to_string()))?;
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

pub(super) fn unsubscribe(conn: &Conn, session_key: &str) -> Result<(), WireError> {
    if let Some(task) = conn.subscriptions.lock().remove(session_key) {
        task.abort();
    }
    Ok(())
}

pub(super) fn subscribe_all(service: &Arc<Service>, conn: &Conn) -> Result<(), WireError> {
    let task = tokio::spawn(forward_all(service.clone(), conn.out.clone()));
    if let Some(old) = conn.all.lock().replace(task) {
        old.abort();
    }
    Ok(())
}

pub(super) async fn get_snapshot(
    service: &Service,
    session_key: &str,
) -> Result<SnapshotAt, WireError> {
    let at = service.loom.get_snapshot(session_key).await.map_err(wire)?;
    service.durable().await;
    Ok(at)
}

pub(super) async fn get_history(
    loom: &Loom,
    session_key: &str,
    limit: Option<u32>,
    before: Option<String>,
) -> Result<Vec<UniversalSnapshot>, WireError> {
    loom.history_page(session_key, limit, before)
        .await
        .map_err(wire)
}

pub(super) async fn list_sessions(
    service: &Arc<Service>,
    workdir: Option<&str>,
    archived: bool,
) -> Result<Vec<SessionInfo>, WireError> {
    let mut list = service
        .loom
        .list_sessions_with(workdir, archived)
        .await
        .map_err(wire)?;
    crate::worktrees::decorate(service.home.dir(), &mut list);
    Ok(list)
}

pub(super) async fn search(
    loom: &Loom,
    query: &str,
    limit: Option<u32>,
) -> Result<Vec<SearchHit>, WireError> {
    let limit = limit.map_or(50, |l| l as usize);
    loom.search(query, limit).await.map_err(wire)
}

pub(super) async fn list_agent_info(loom: &Loom) -> Result<Vec<AgentInfo>, WireError> {
    Ok(loom.list_agent_info().await)
}

pub(super) async fn list_models(loom: &Loom, agent: &str) -> Result<Vec<ModelInfo>, WireError> {
    loom.list_models(agent).await.map_err(wire)
}

pub(super) async fn list_effort(
    loom: &Loom,
    agent: &str,
    model: Option<&str>,
) -> Result<Vec<String>, WireError> {
    loom.list_effort(agent, model).await.map_err(wire)
}

pub(super) async fn list_tools(
    loom: &Loom,
    agent: Option<&str>,
    workdir: Option<&str>,
) -> Result<Vec<ToolInfo>, WireError> {
    loom.list_tools(agent, workdir).await.map_err(wire)
}

pub(super) async fn list_skills(
    loom: &Loom,
    workdir: Option<&str>,
) -> Result<Vec<SkillInfo>, WireError> {
    Ok(loom.list_skills(workdir).await)
}

pub(super) async fn switch_account(
    loom: &Loom,
    caller: &Caller,
    session_key: &str,
    account: &str,
    resume: bool,
    confirm: bool,
) -> Result<AccountSwitch, WireError> {
    loom.switch_account_as(caller, session_key, account, resume, confirm)
        .await
        .map_err(wire)
}

pub(super) async fn switch_agent(
    loom: &Loom,
    caller: &Caller,
    session_key: &str,
    agent: &str,
) -> Result<(), WireError> {
    loom.switch_agent_as(caller, session_key, agent)
        .await
        .map_err(wire)
}

pub(super) async fn check_account_switch(
    loom: &Loom,
    caller: &Caller,
    session_key: &str,
    account: &str,
) -> Result<AccountSwitch, WireError> {
    loom.check_account_switch_as(caller, session_key, account)
        .await
        .map_err(wire)
}
