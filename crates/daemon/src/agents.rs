//! Terminals the daemon opens for no session: an account's login and an agent's
//! install. Each runs what the agent's spec says directly in a PTY (the agent's own
//! login with the account's home; npm with Weft's install folder), so the app's user
//! sees the agent's login prompt or npm's progress live in a terminal pane — without
//! the daemon calling back into itself through the `weft` CLI.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use weft_agent_process::install::{self, installable};
use weft_kernel::pty::{After as PtyAfter, PtyBridge, PtySpec};
use weft_kernel::Caller;
use weft_protocol::{ErrorCode, WireError};

use crate::service::Service;

fn bad(message: impl Into<String>) -> WireError {
    WireError::new(ErrorCode::BadRequest, message)
}

/// The environment these terminals start from: the caller's (the app's, as a terminal
/// it started would have), else the daemon's own, with this daemon's `WEFT_HOME`.
pub(crate) fn caller_env(service: &Service, caller: &Caller) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = match &caller.env {
        Some(env) => env.0.clone(),
        None => std::env::vars().collect(),
    };
    env.insert("WEFT_HOME".into(), service.home.dir().display().to_string());
    env
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
    let Some(spec) = service.accounts.spec(&info.agent) else {
        return Err(bad(format!("no agent `{}` to log in with", info.agent)));
    };
    let env = caller_env(service, caller);
    let login = weft_agent_process::login::command(spec, &|n| env.get(n).cloned())
        .map_err(|e| WireError::new(ErrorCode::AgentUnavailable, e))?;
    let home = Path::new(home);
    let cwd = if home.is_dir() {
        home
    } else {
        service.home.dir()
    };
    // The same cleared environment the account's turns get, never the user's keys.
    let spec = PtySpec {
        banner: Some(format!(
            "weft: logging in {} account `{account}` ({}) in {}",
            info.agent,
            info.label,
            home.display()
        )),
        program: login.program,
        args: login.args,
        base_env: Some(weft_kernel::isolated_env(env).into_iter().collect()),
        env: vec![(login.home_var, home.display().to_string())],
        cwd: cwd.to_path_buf(),
        after: None,
    };
    let key = format!("login:{account}");
    let bridge = service
        .loom
        .side_terminal_open(&key, &spec, cols, rows, || {})
        .map_err(|e| bad(e.to_string()))?;
    Ok((key, bridge))
}

/// Opens (or finds open) the terminal installing `name`: npm, then (as it ends) the
/// spec's repair step when the command does not run yet. Returns its key.
pub fn install(
    service: &Arc<Service>,
    caller: &Caller,
    name: String,
    version: Option<String>,
    cols: Option<u16>,
    rows: Option<u16>,
) -> Result<(String, Arc<PtyBridge>), WireError> {
    let agent = installable(service.accounts.specs(), &name).map_err(bad)?;
    if let Some(v) = version.as_deref() {
        install::check_version(v).map_err(bad)?;
    }
    let env = caller_env(service, caller);
    let var = |n: &str| env.get(n).cloned();
    let Some(dir) = weft_agent_process::installed_agents_dir(&var) else {
        return Err(bad("no folder to install into"));
    };
    let npm = weft_agent_process::find_agent("npm", &["WEFT_NPM_BIN"], &var).map_err(|e| {
        WireError::new(
            ErrorCode::AgentUnavailable,
            format!("npm is not installed (it comes with Node.js): {e}"),
        )
    })?;
    install::prepare(&dir).map_err(|e| {
        WireError::new(
            ErrorCode::Storage,
            format!("cannot prepare {}: {e}", dir.display()),
        )
    })?;
    let args = agent.npm_args(&dir, version.as_deref());
    let banner = format!(
        "weft: installing {} into {} (npm's progress follows)",
        args.last().map_or("", String::as_str),
        dir.display()
    );
    let into = dir.clone();
    // Once npm is done: the spec's repair when the command does not run yet, and the
    // installed binary (or why it does not run) in the pane.
    let after = PtyAfter(Arc::new(move |exit: &weft_kernel::pty::ExitInfo| {
        if !exit.success {
            return Err(format!(
                "weft: npm install failed (exit code {}); nothing of the user's own installs was touched",
                exit.code
            ));
        }
        match agent.finish(&into) {
            Ok(bin) => Ok(bin.display().to_string()),
            Err(e) => Err(format!("weft: {e}")),
        }
    }));
    let spec = PtySpec {
        program: npm,
        args,
        base_env: Some(env.into_iter().collect()),
        env: Vec::new(),
        cwd: dir,
        banner: Some(banner),
        after: Some(after),
    };
    let key = format!("install:{name}");
    let loom = service.loom.clone();
    let bridge = service
        .loom
        .side_terminal_open(&key, &spec, cols, rows, move || loom.forget_agent_info())
        .map_err(|e| bad(e.to_string()))?;
    Ok((key, bridge))
}
