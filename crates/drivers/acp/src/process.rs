//! One agent process, in its own process group, killed with it.
//!
//! ACP agents spawn shells and helpers of their own (claude-agent-acp runs a whole
//! Claude Code underneath); killing only the agent's pid would orphan them. So the
//! child is made a process-group leader (`process_group(0)`) and every kill is
//! `weft_proctree::kill_tree` (the group and every descendant): on [`AgentProcess::kill`] and on drop. stderr is kept as a bounded tail
//! for the error a crash becomes; stdin and stdout go to the ACP connection, stdout read
//! in paced bursts by a thread of its own (see `weft_agent_process::paced`).

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use tokio::process::ChildStdin;
use weft_agent_process::{GroupChild, PacedStdout};

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpawnSpec {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The whole environment (nothing is inherited; never logged).
    pub env: Vec<(String, String)>,
    /// Working folder.
    pub cwd: PathBuf,
}

/// A running agent.
pub struct AgentProcess {
    child: GroupChild,
}

impl AgentProcess {
    /// Starts `spec` in a new process group; returns it with its stdin and stdout.
    pub fn spawn(spec: &SpawnSpec) -> io::Result<(Self, ChildStdin, PacedStdout)> {
        let (mut child, stdout) =
            GroupChild::spawn_paced(&spec.program, &spec.args, &spec.cwd, &spec.env)?;
        let stdin = child
            .take_stdin()
            .ok_or_else(|| io::Error::other("no stdin pipe"))?;
        Ok((Self { child }, stdin, stdout))
    }

    /// The last lines of stderr, trimmed, at most `max` characters.
    pub fn stderr_tail(&self, max: usize) -> String {
        let all = self.child.stderr();
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
        self.child.settle_stderr(wait).await;
    }

    /// Whether the process has exited, and how.
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.exit_status()
    }

    /// Waits up to `wait` for the process to exit by itself.
    pub async fn wait_exit(&mut self, wait: Duration) -> Option<std::process::ExitStatus> {
        self.child.wait_exit(wait).await
    }

    /// Kills the whole process group now, with every descendant that left it.
    pub fn kill(&mut self) {
        self.child.kill();
    }

    /// The process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.pid()
    }
}
