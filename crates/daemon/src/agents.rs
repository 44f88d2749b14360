//! Terminals the daemon opens for no session: an account's login and an agent's
//! install. Each runs the `weft` binary's own command (`weft accounts login ID`, `weft
//! agents install NAME`) in a PTY, so the app does exactly what a terminal does, and its
//! user sees the agent's login prompt or npm's progress live in a terminal pane.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft_accounts::agents::{installable, INSTALLABLE};
use weft_kernel::pty::{PtyBridge, PtySpec};
use weft_kernel::Caller;
use weft_protocol::{ErrorCode, WireError};

use crate::service::Service;

fn bad(message: impl Into<String>) -> WireError {
    WireError::new(ErrorCode::BadRequest, message)
}

/// This daemon's own `weft` binary: the commands run in these terminals are its own.
fn weft_binary() -> Result<PathBuf, WireError> {
    let exe = std::env::current_exe()
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("finding weft: {e}")))?;
    if exe.file_name().is_some_and(|n| n == "weft") {
        Ok(exe)
    } else {
        Err(WireError::new(
            ErrorCode::Internal,
            format!(
                "this kernel runs inside {}, not the `weft` binary: run the command in a terminal instead",
                exe.display()
            ),
        ))
    }
}

/// `weft ARGS` in a PTY with the caller's environment (the app's, as a terminal it
/// started would have), reaching this daemon.
fn weft_spec(
    service: &Service,
    caller: &Caller,
    args: &[&str],
    cwd: &Path,
) -> Result<PtySpec, WireError> {
    Ok(PtySpec {
        program: weft_binary()?,
        args: args.iter().map(|a| a.to_string()).collect(),
        base_env: caller
            .env
            .as_ref()
            .map(|env| env.0.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        env: vec![("WEFT_HOME".into(), service.home.dir().display().to_string())],
        cwd: cwd.to_path_buf(),
    })
}

/// Opens (or finds open) the terminal logging `account` in. Returns its key.
pub async fn login(
    service: &Arc<Service>,
    caller: &Caller,
    account: String,
    cols: Option<u16>,
    rows: Option<u16>,
) -> Result<(String, Arc<PtyBridge>), WireError> {
    let accounts = service.accounts.clone();
    let list = tokio::task::spawn_blocking(move || accounts.list())
        .await
        .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(|e| WireError::new(ErrorCode::Storage, e.to_string()))?;
    let Some(info) = list.into_iter().find(|a| a.id == account) else {
        return Err(bad(format!("unknown account `{account}`")));
    };
    let (Some(home), "login") = (info.home_dir.as_deref(), info.kind.as_str()) else {
        return Err(bad(format!(
            "account `{account}` ({}) is a `{}` account; only login accounts log in",
            info.label, info.kind
        )));
    };
    let home = Path::new(home);
    let cwd = if home.is_dir() {
        home
    } else {
        service.home.dir()
    };
    let spec = weft_spec(service, caller, &["accounts", "login", &account], cwd)?;
    let key = format!("login:{account}");
    let bridge = service
        .loom
        .side_terminal_open(&key, &spec, cols, rows, || {})
        .map_err(|e| bad(e.to_string()))?;
    Ok((key, bridge))
}

/// Opens (or finds open) the terminal installing `name`. Returns its key.
pub fn install(
    service: &Arc<Service>,
    caller: &Caller,
    name: String,
    version: Option<String>,
    cols: Option<u16>,
    rows: Option<u16>,
) -> Result<(String, Arc<PtyBridge>), WireError> {
    if installable(&name).is_none() {
        let known: Vec<&str> = INSTALLABLE.iter().map(|i| i.name).collect();
        return Err(bad(format!(
            "`{name}` is not an agent Weft installs; it installs {}",
            known.join(", ")
        )));
    }
    let mut args = vec!["agents", "install", name.as_str()];
    if let Some(v) = version.as_deref() {
        // An npm version or tag, never an option of npm's.
        if v.is_empty()
            || v.starts_with('-')
            || !v
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-+_".contains(c))
        {
            return Err(bad(format!("`{v}` is not a version")));
        }
        args.extend(["--version", v]);
    }
    let spec = weft_spec(service, caller, &args, service.home.dir())?;
    let key = format!("install:{name}");
    let loom = service.loom.clone();
    let bridge = service
        .loom
        .side_terminal_open(&key, &spec, cols, rows, move || loom.forget_agent_info())
        .map_err(|e| bad(e.to_string()))?;
    Ok((key, bridge))
}
