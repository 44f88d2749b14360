//! Finding and starting an agent's executable the same way for every driver.
//!
//! Finding: a path as given, else the project-local install that `scripts/setup.sh`
//! makes (looked for above the running executable, then above the current folder),
//! else `PATH`. Starting: as the leader of a new process group (agents run shells and
//! helpers of their own; the group, and `weft_proctree::kill_tree`, reach them all),
//! with piped stdio and the end of stderr kept for the error a crash becomes.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

/// How much of a child's stderr is kept.
pub const STDERR_TAIL: usize = 16 * 1024;

/// Where the project's set-up installs agent CLIs, relative to the repository root.
pub const LOCAL_BIN_DIR: &str = ".tools/agents/node_modules/.bin";

/// A program by path, or by name in the project-local install or on `PATH`.
pub fn find_program(command: &str) -> Option<PathBuf> {
    let as_path = Path::new(command);
    if as_path.components().count() > 1 || as_path.is_absolute() {
        return as_path.is_file().then(|| as_path.to_path_buf());
    }
    let starts = [std::env::current_exe().ok(), std::env::current_dir().ok()];
    for start in starts.iter().flatten() {
        for dir in start.ancestors() {
            let candidate = dir.join(LOCAL_BIN_DIR).join(command);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(command))
        .find(|c| c.is_file())
}

/// A child leading its own process group, with its pipes.
pub struct GroupChild {
    /// The process (killed on drop).
    pub child: Child,
    /// Its pid, which is also its process group id.
    pub pid: Option<u32>,
    /// Its stdin.
    pub stdin: ChildStdin,
    /// Its stdout.
    pub stdout: ChildStdout,
    /// The last [`STDERR_TAIL`] bytes of its stderr, kept by `stderr_task`.
    pub stderr: Arc<Mutex<Vec<u8>>>,
    /// Reads stderr until it closes.
    pub stderr_task: JoinHandle<()>,
}

/// Starts `program` in `cwd` with `env` added to the inherited environment, as the
/// leader of a new process group.
pub fn spawn_in_group(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[(String, String)],
) -> io::Result<GroupChild> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn()?;
    let pipe = |name: &str| io::Error::other(format!("no {name} pipe"));
    let stdin = child.stdin.take().ok_or_else(|| pipe("stdin"))?;
    let stdout = child.stdout.take().ok_or_else(|| pipe("stdout"))?;
    let mut stderr_pipe = child.stderr.take().ok_or_else(|| pipe("stderr"))?;
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let tail = stderr.clone();
    let stderr_task = tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr_pipe.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let mut t = tail.lock();
            t.extend_from_slice(&buf[..n]);
            if t.len() > STDERR_TAIL {
                let cut = t.len() - STDERR_TAIL;
                t.drain(..cut);
            }
        }
    });
    Ok(GroupChild {
        pid: child.id(),
        child,
        stdin,
        stdout,
        stderr,
        stderr_task,
    })
}

/// How long a version probe may take.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// Runs `program args` (`--version` and the like) with no input and a time limit;
/// its stdout, or why there is none, for an agent's info.
pub async fn probe_output(program: &Path, args: &[&str]) -> Result<String, String> {
    let out = tokio::time::timeout(
        PROBE_TIMEOUT,
        Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await;
    let call = || format!("`{} {}`", program.display(), args.join(" "));
    match out {
        Ok(Ok(o)) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(Ok(o)) => Err(format!(
            "{} failed: {}",
            call(),
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(Err(e)) => Err(format!("could not run {}: {e}", program.display())),
        Err(_) => Err(format!("{} timed out", call())),
    }
}
