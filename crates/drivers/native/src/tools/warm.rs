//! Sandboxes started ahead: bubblewrap's namespace and mount set-up costs more than
//! the command it wraps, so after each sandboxed call the next one's sandbox is
//! started (waiting for its command line on stdin) while the model thinks. A spare is
//! used only for the same policy, environment and `.git`/`.weft` (see
//! [`weft_sandbox::spare_key`]); anything else starts cold. A few are kept at most;
//! dropping one kills it (and bubblewrap's --die-with-parent takes the rest when the
//! process ends).

use std::path::Path;

use std::sync::{Mutex, PoisonError};

/// Spares kept at most (one per recently used session, roughly).
const KEEP: usize = 4;

/// A sandbox started ahead, and what it holds (its `.git`/`.weft` mountpoints) until
/// its command has ended.
pub struct Spare {
    key: String,
    /// The waiting sandbox.
    pub child: tokio::process::Child,
    /// Drop it after the child has exited.
    pub hold: weft_sandbox::Hold,
}

static SPARES: Mutex<Vec<Spare>> = Mutex::new(Vec::new());

fn key(policy: &weft_sandbox::Policy, env: &[(String, String)], root: &Path) -> String {
    format!(
        "{} {env:?} {}",
        weft_sandbox::spare_key(policy),
        root.display()
    )
}

/// A waiting sandbox for `policy`, started now (`None` when there is none to start).
fn start(
    policy: &weft_sandbox::Policy,
    env: &[(String, String)],
    root: &Path,
) -> Option<(tokio::process::Child, weft_sandbox::Hold)> {
    let confined = weft_sandbox::waiting_shell(policy).ok()??;
    let mut cmd = tokio::process::Command::from(confined.command);
    cmd.current_dir(root)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    Some((cmd.spawn().ok()?, confined.hold))
}

/// A spare made for exactly this call, still waiting, if there is one.
pub fn take(policy: &weft_sandbox::Policy, env: &[(String, String)], root: &Path) -> Option<Spare> {
    let k = key(policy, env, root);
    let mut spares = SPARES.lock().unwrap_or_else(PoisonError::into_inner);
    let i = spares.iter().position(|s| s.key == k)?;
    let mut spare = spares.remove(i);
    // One that died while waiting (killed, or its parent thread gone) is not used.
    match spare.child.try_wait() {
        Ok(None) => Some(spare),
        _ => None,
    }
}

/// Starts the spare for the next call like this one (replacing an older one for it).
pub fn refill(policy: &weft_sandbox::Policy, env: &[(String, String)], root: &Path) {
    let k = key(policy, env, root);
    let Some((child, hold)) = start(policy, env, root) else {
        return;
    };
    let mut spares = SPARES.lock().unwrap_or_else(PoisonError::into_inner);
    spares.retain(|s| s.key != k);
    spares.push(Spare {
        key: k,
        child,
        hold,
    });
    while spares.len() > KEEP {
        spares.remove(0);
    }
}

/// Kills every spare (the host shuts down, or a session closed: its spare must not
/// outlive it; the others' next calls start cold).
pub fn clear() {
    let spares = std::mem::take(&mut *SPARES.lock().unwrap_or_else(PoisonError::into_inner));
    for mut s in spares {
        let _ = s.child.start_kill();
    }
}
