//! Sandboxes started ahead: bubblewrap's namespace and mount set-up costs more than
//! the command it wraps, so after each sandboxed call the next one's sandbox is
//! started (waiting for its command line on stdin) while the model thinks. A spare is
//! used only for the same policy, environment and `.git`/`.weft` (see
//! [`weft_sandbox::spare_key`]); anything else starts cold. A few are kept at most.
//!
//! One put away is killed with everything it started ([`weft_proctree::kill_tree`]):
//! bubblewrap's sandbox leaves its session and dies with bubblewrap only once it has
//! set itself up, so a spare killed by its pid alone in its first moments (another
//! session closing just then) left the sandbox waiting forever.

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
    contain(&mut cmd, root, env, std::process::Stdio::piped());
    Some((cmd.spawn().ok()?, confined.hold))
}

/// How every bash the tool starts is set up, started ahead or not: in `root` with only
/// `env`, stdout read (stderr is joined to it by the line itself), in a process group
/// of its own so that the whole group can be killed, and killed if dropped.
pub(crate) fn contain(
    cmd: &mut tokio::process::Command,
    root: &Path,
    env: &[(String, String)],
    stdin: std::process::Stdio,
) {
    cmd.current_dir(root)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
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
    let mut gone: Vec<Spare> = Vec::new();
    let mut i = 0;
    while i < spares.len() {
        if spares[i].key == k {
            gone.push(spares.remove(i));
        } else {
            i += 1;
        }
    }
    spares.push(Spare {
        key: k,
        child,
        hold,
    });
    while spares.len() > KEEP {
        gone.push(spares.remove(0));
    }
    drop(spares);
    gone.into_iter().for_each(discard);
}

/// Kills a spare that was never used, and all it started.
fn discard(spare: Spare) {
    // Not reaped yet (its `Child` is here), so the pid names it and nothing else.
    if let Some(pid) = spare.child.id() {
        weft_proctree::kill_tree(pid);
    }
}

/// Kills every spare (the host shuts down, or a session closed: its spare must not
/// outlive it; the others' next calls start cold).
pub fn clear() {
    let spares = std::mem::take(&mut *SPARES.lock().unwrap_or_else(PoisonError::into_inner));
    spares.into_iter().for_each(discard);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Processes whose environment carries `mark`.
    fn marked(mark: &str) -> Vec<String> {
        let needle = mark.as_bytes();
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read(e.path().join("environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle))
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// A spare put away at any moment of its start leaves nothing behind. Killed by its
    /// pid alone, about one in twenty put away in its first milliseconds left a sandbox
    /// waiting forever (caught by the conformance suite as a process left after
    /// shutdown when another session closed just then).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_spare_put_away_while_it_starts_leaves_nothing() {
        if weft_sandbox::probe().mechanism != weft_sandbox::Mechanism::Bwrap {
            eprintln!("SKIP: sandboxes are started ahead only for bubblewrap");
            return;
        }
        let root = tempfile::tempdir().unwrap();
        let temp = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let policy = weft_sandbox::Policy::new(root.path(), temp.path(), home.path());
        let mark = format!("WEFT_SPARE_TEST={}", std::process::id());
        let (k, v) = mark.split_once('=').unwrap();
        let env = vec![
            (k.to_string(), v.to_string()),
            (
                "PATH".to_string(),
                std::env::var("PATH").unwrap_or_default(),
            ),
        ];
        for i in 0..120u64 {
            refill(&policy, &env, root.path());
            // From at once to 4 ms: bubblewrap's start is the window.
            std::thread::sleep(std::time::Duration::from_micros((i % 40) * 100));
            clear();
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let left = marked(&mark);
            if left.is_empty() {
                break;
            }
            if std::time::Instant::now() >= deadline {
                for pid in &left {
                    weft_proctree::kill_tree(pid.parse().unwrap());
                }
                panic!("sandboxes left behind: {left:?}");
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}
