//! One agent process, in its own process group, killed with it.
//!
//! ACP agents spawn shells and helpers of their own (claude-agent-acp runs a whole
//! Claude Code underneath); killing only the agent's pid would orphan them. So the
//! child is made a process-group leader (`process_group(0)`) and every kill is
//! `weft_proctree::kill_tree` (the group and every descendant): on [`AgentProcess::kill`] and on drop. stderr is kept as a bounded tail
//! for the error a crash becomes; stdin and stdout go to the ACP connection.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nix::unistd::Pid;
use parking_lot::Mutex;
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;
use weft_kernel::programs::spawn_in_group;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpawnSpec {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment on top of the inherited one (never logged).
    pub env: Vec<(String, String)>,
    /// Working folder.
    pub cwd: PathBuf,
}

/// A running agent.
pub struct AgentProcess {
    child: Child,
    pgid: Option<Pid>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_task: JoinHandle<()>,
}

impl AgentProcess {
    /// Starts `spec` in a new process group; returns it with its stdin and stdout.
    pub fn spawn(spec: &SpawnSpec) -> io::Result<(Self, ChildStdin, ChildStdout)> {
        let group = spawn_in_group(&spec.program, &spec.args, &spec.cwd, &spec.env)?;
        Ok((
            Self {
                pgid: group
                    .pid
                    .and_then(|p| i32::try_from(p).ok())
                    .map(Pid::from_raw),
                child: group.child,
                stderr: group.stderr,
                stderr_task: group.stderr_task,
            },
            group.stdin,
            group.stdout,
        ))
    }

    /// The last lines of stderr, trimmed, at most `max` characters.
    pub fn stderr_tail(&self, max: usize) -> String {
        let all = String::from_utf8_lossy(&self.stderr.lock()).into_owned();
        let lines: Vec<&str> = all.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut out = String::new();
        for line in lines.iter().rev() {
            if out.len() + line.len() > max {
                break;
            }
            out = if out.is_empty() {
                line.to_string()
            } else {
                format!("{line}\n{out}")
            };
        }
        out
    }

    /// Waits up to `wait` for stderr to reach its end (the child exited), so a crash
    /// report carries the child's last words.
    pub async fn settle_stderr(&mut self, wait: Duration) {
        let _ = tokio::time::timeout(wait, &mut self.stderr_task).await;
    }

    /// Whether the process has exited, and how.
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits up to `wait` for the process to exit by itself.
    pub async fn wait_exit(&mut self, wait: Duration) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(wait, self.child.wait())
            .await
            .ok()?
            .ok()
    }

    /// Kills the whole process group now, with every descendant that left it.
    pub fn kill(&mut self) {
        if let Some(pgid) = self.pgid.and_then(|p| u32::try_from(p.as_raw()).ok()) {
            // The group and every descendant that left it (tools run in new sessions).
            weft_proctree::kill_tree(pgid);
        }
        let _ = self.child.start_kill();
    }

    /// The process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        self.kill();
        self.stderr_task.abort();
    }
}
