//! The window's commands: one per verb, each one line into `LoomIO`, plus the app's
//! own few (workspaces, log). Errors travel as `WireError {code, message}`.

use std::sync::Arc;

use serde::Serialize;
use tauri::State;
use weft_kernel::{Loom, LoomIO};
use weft_protocol::{
    AgentInfo, ErrorCode, InteractRequest, ModelInfo, PromptAccepted, PromptRequest, SearchHit,
    SessionInfo, SkillInfo, SnapshotAt, SteerOutcome, ToolInfo, UniversalSnapshot, WireError,
};

use crate::{workspaces, AppConfig};

type Kernel<'a> = State<'a, Arc<Loom>>;
type Reply<T> = Result<T, WireError>;

#[tauri::command]
pub async fn prompt(loom: Kernel<'_>, request: PromptRequest) -> Reply<PromptAccepted> {
    Ok(loom.prompt(request).await?)
}

#[tauri::command]
pub async fn stop(loom: Kernel<'_>, session_key: String) -> Reply<()> {
    Ok(loom.stop(&session_key).await?)
}

#[tauri::command]
pub async fn steer(loom: Kernel<'_>, session_key: String, text: String) -> Reply<SteerOutcome> {
    Ok(loom.steer(&session_key, text).await?)
}

#[tauri::command]
pub async fn interact(loom: Kernel<'_>, request: InteractRequest) -> Reply<()> {
    Ok(loom.interact(request).await?)
}

#[tauri::command]
pub async fn get_snapshot(loom: Kernel<'_>, session_key: String) -> Reply<SnapshotAt> {
    Ok(loom.get_snapshot(&session_key).await?)
}

#[tauri::command]
pub async fn get_history(loom: Kernel<'_>, session_key: String) -> Reply<Vec<UniversalSnapshot>> {
    Ok(loom.get_history(&session_key).await?)
}

#[tauri::command]
pub async fn list_sessions(loom: Kernel<'_>, workdir: Option<String>) -> Reply<Vec<SessionInfo>> {
    Ok(loom.list_sessions(workdir.as_deref()).await?)
}

#[tauri::command]
pub async fn search(loom: Kernel<'_>, query: String, limit: Option<u32>) -> Reply<Vec<SearchHit>> {
    Ok(loom
        .search(&query, limit.map_or(50, |l| l as usize))
        .await?)
}

#[tauri::command]
pub async fn list_agent_info(loom: Kernel<'_>) -> Reply<Vec<AgentInfo>> {
    Ok(loom.list_agent_info().await)
}

#[tauri::command]
pub async fn list_models(loom: Kernel<'_>, agent: String) -> Reply<Vec<ModelInfo>> {
    Ok(loom.list_models(&agent).await?)
}

#[tauri::command]
pub async fn list_effort(loom: Kernel<'_>, agent: String) -> Reply<Vec<String>> {
    Ok(loom.list_effort(&agent).await?)
}

#[tauri::command]
pub async fn list_tools(loom: Kernel<'_>) -> Reply<Vec<ToolInfo>> {
    Ok(loom.list_tools().await)
}

#[tauri::command]
pub async fn list_skills(loom: Kernel<'_>, workdir: Option<String>) -> Reply<Vec<SkillInfo>> {
    Ok(loom.list_skills(workdir.as_deref()).await)
}

/// What the window shows about the app itself.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    version: String,
    state_dir: String,
    log_path: String,
    initial_workspace: Option<String>,
}

#[tauri::command]
pub fn app_info(config: State<'_, AppConfig>) -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        state_dir: config.state_dir.display().to_string(),
        log_path: config.log_dir.display().to_string(),
        initial_workspace: config.initial_workspace.clone(),
    }
}

#[tauri::command]
pub fn recent_workspaces(config: State<'_, AppConfig>) -> Vec<String> {
    workspaces::load(&config.state_dir)
}

#[tauri::command]
pub fn add_recent_workspace(config: State<'_, AppConfig>, path: String) -> Reply<Vec<String>> {
    workspaces::remember(&config.state_dir, &path)
        .map_err(|e| WireError::new(ErrorCode::BadWorkdir, format!("workspace `{path}`: {e}")))
}

/// Opens the newest log file with the desktop's default viewer.
#[tauri::command]
pub fn open_log(config: State<'_, AppConfig>) -> Reply<()> {
    let path =
        crate::logging::newest_log(&config.log_dir).unwrap_or_else(|| config.log_dir.clone());
    std::process::Command::new("xdg-open")
        .arg(&path)
        .spawn()
        .map(|mut child| {
            // Reap it when it exits, so it leaves no zombie.
            std::thread::spawn(move || child.wait());
        })
        .map_err(|e| {
            WireError::new(
                ErrorCode::Internal,
                format!("cannot open the log ({e}); it is at {}", path.display()),
            )
        })
}
