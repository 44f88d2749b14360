//! The daemon itself: its status, stopping, listening for WebSocket clients, the agent
//! CLIs it installs, skills, workspace files and attachments.

use std::sync::Arc;

use weft_kernel::Caller;
use weft_protocol::{
    AgentInstall, AgentSetupImport, DaemonStatus, ErrorCode, Listening, SkillInfo, WireError,
    WorkspaceEntry, WorkspaceFilesQuery,
};

use super::forbidden;
use crate::conn::{Conn, Transport};
use crate::service::Service;

fn joined(e: tokio::task::JoinError) -> WireError {
    WireError::new(ErrorCode::Internal, e.to_string())
}

pub(super) fn status(service: &Service) -> Result<DaemonStatus, WireError> {
    Ok(service.status())
}

pub(super) fn stop(service: &Service, caller: &Caller) -> Result<(), WireError> {
    tracing::info!(surface = %caller.surface, "stop asked by a client");
    service.stop_soon("stopped by `weft daemon stop` or the app's Quit");
    Ok(())
}

/// Only a client on the daemon's own socket (this user on this machine) may start a
/// surface: it runs a program with the user's chat credentials.
pub(super) async fn reload_surface(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    name: &str,
) -> Result<weft_protocol::SurfaceStatus, WireError> {
    if conn.transport != Transport::Socket {
        return Err(forbidden(
            "only a client on the daemon's own socket may start or stop a surface",
        ));
    }
    crate::surfaces::reload(service, name).await
}

/// A surface's account command: on the daemon's own socket only, as it carries the
/// bot's password.
pub(super) async fn surface_command(
    service: &Service,
    conn: &Arc<Conn>,
    request: weft_protocol::SurfaceCommandRequest,
) -> Result<weft_protocol::SurfaceOutput, WireError> {
    if conn.transport != Transport::Socket {
        return Err(forbidden(
            "only a client on the daemon's own socket may run a surface's commands",
        ));
    }
    crate::surfaces::command(service.home.dir(), request).await
}

/// A listen request's options: a certificate and its key come together.
pub(super) fn listen_options(
    addr: String,
    tls: Option<bool>,
    cert: Option<String>,
    key: Option<String>,
) -> Result<crate::ws::ListenOptions, WireError> {
    let cert = match (cert, key) {
        (Some(c), Some(k)) => Some((c.into(), k.into())),
        (None, None) => None,
        _ => {
            return Err(WireError::new(
                weft_protocol::ErrorCode::BadRequest,
                "a TLS certificate and its key go together (--tls-cert with --tls-key)",
            ))
        }
    };
    Ok(crate::ws::ListenOptions {
        addr,
        tls: tls.unwrap_or(false),
        cert,
    })
}

pub(super) async fn listen(
    service: &Arc<Service>,
    conn: &Arc<Conn>,
    options: &crate::ws::ListenOptions,
) -> Result<Listening, WireError> {
    if conn.transport != Transport::Socket {
        return Err(forbidden(
            "only a client on the daemon's own socket may open a listener",
        ));
    }
    crate::ws::listen(service, conn, options, super::on_frame).await
}

pub(super) fn agent_installs(service: &Service) -> Result<Vec<AgentInstall>, WireError> {
    Ok(weft_accounts::agents::list(
        service.accounts.specs(),
        &|n| std::env::var(n).ok(),
    ))
}

pub(super) async fn save_attachment(
    service: &Service,
    name: String,
    data: String,
) -> Result<String, WireError> {
    // Decoding up to 32 MiB of base64 and an image: off the runtime's threads.
    let home = service.home.dir().to_path_buf();
    tokio::task::spawn_blocking(move || crate::attachments::save(&home, &name, &data))
        .await
        .map_err(joined)?
}

pub(super) async fn workspace_files(
    q: WorkspaceFilesQuery,
) -> Result<Vec<WorkspaceEntry>, WireError> {
    // A walk of a big tree blocks for a while: off the runtime's threads.
    tokio::task::spawn_blocking(move || crate::files::list(&q))
        .await
        .map_err(joined)?
}

pub(super) async fn list_dir(
    service: &Service,
    path: Option<String>,
) -> Result<weft_protocol::DirListing, WireError> {
    let state = service.home.dir().to_path_buf();
    tokio::task::spawn_blocking(move || {
        crate::dirs::list(path.as_deref(), &crate::dirs::home(), &state)
    })
    .await
    .map_err(joined)?
}

pub(super) async fn read_file(
    service: &Service,
    path: String,
    max_bytes: Option<u32>,
) -> Result<weft_protocol::FileContent, WireError> {
    let state = service.home.dir().to_path_buf();
    tokio::task::spawn_blocking(move || crate::dirs::read(&path, max_bytes, &state))
        .await
        .map_err(joined)?
}

// A skill is a folder copied, removed or rewritten: off the runtime's threads.

pub(super) async fn add_skill(
    service: &Service,
    path: String,
) -> Result<Option<SkillInfo>, WireError> {
    let state = service.home.dir().to_path_buf();
    let skill = tokio::task::spawn_blocking(move || {
        weft_kernel::skills::add(&state, std::path::Path::new(&path)).map_err(WireError::from)
    })
    .await
    .map_err(joined)??;
    let listed = service.loom.list_skills(None).await;
    Ok(listed.into_iter().find(|s| s.name == skill.name))
}

/// `importAgentSetup`: the servers and skills the user set up in the agents
/// themselves, found where each agent's spec says (`own_mcp`, `skills`) under the
/// daemon's `HOME`.
pub(super) async fn import_agent_setup(
    service: &Service,
    dry_run: bool,
    servers: bool,
    skills: bool,
) -> Result<AgentSetupImport, WireError> {
    let state = service.home.dir().to_path_buf();
    let specs = service.accounts.specs().to_vec();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let options = weft_kernel::agent_setup::Options {
        dry_run,
        servers,
        skills,
    };
    tokio::task::spawn_blocking(move || {
        let keep = |name: &str, value: &str| crate::mcp::keep_secret(name, value);
        weft_kernel::agent_setup::import(&state, home.as_deref(), &specs, options, &keep)
            .map_err(WireError::from)
    })
    .await
    .map_err(joined)?
}

pub(super) async fn remove_skill(service: &Service, name: String) -> Result<(), WireError> {
    let state = service.home.dir().to_path_buf();
    tokio::task::spawn_blocking(move || weft_kernel::skills::remove(&state, &name))
        .await
        .map_err(joined)?
        .map_err(WireError::from)
}

pub(super) async fn set_skill_enabled(
    service: &Service,
    name: String,
    enabled: bool,
) -> Result<(), WireError> {
    let state = service.home.dir().to_path_buf();
    tokio::task::spawn_blocking(move || weft_kernel::skills::set_enabled(&state, &name, enabled))
        .await
        .map_err(joined)?
        .map_err(WireError::from)
}
