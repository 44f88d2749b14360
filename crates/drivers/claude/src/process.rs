//! One long-lived `claude` process, in its own process group.
//!
//! The CLI spawns shells and subagents of its own; killing only its pid would orphan
//! them. So the child is made a process-group leader (`process_group(0)`) and every
//! kill is `weft_proctree::kill_tree` (the group and every descendant): on [`ClaudeProcess::close`] (after closing stdin and a short
//! wait, which lets the CLI exit cleanly and flush its session file) and on drop
//! (at once). No `Drop` path leaves a process behind.
//!
//! stdout is read by its own task into a bounded channel of [`RawLine`]s (lines are
//! capped, see [`crate::lines`]); stderr is kept as a bounded tail, for the error a
//! crash on start or mid-turn becomes.

use std::io;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use nix::unistd::Pid;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use weft_kernel::programs::spawn_in_group;

use crate::lines::{read_lines, RawLine};
use crate::spawn::{ProcessShape, SpawnSpec};
use crate::wire;

/// A running CLI and what the driver knows about it.
pub struct ClaudeProcess {
    child: Child,
    pgid: Option<Pid>,
    stdin: Option<ChildStdin>,
    /// stdout, line by line.
    pub lines: mpsc::Receiver<RawLine>,
    stderr: Arc<Mutex<Vec<u8>>>,
    tasks: Vec<JoinHandle<()>>,
    /// What it was started with.
    pub shape: ProcessShape,
    /// Its session id.
    pub session_id: String,
    /// `total_cost_usd` at its last `result`.
    pub cost_total: f64,
    /// stdout has closed.
    pub eof: bool,
    /// A turn was settled before its `result` (stalled): the next turn first drains
    /// that `result`.
    pub stale: bool,
}

impl ClaudeProcess {
    /// Starts `spec` in a new process group.
    pub fn spawn(
        spec: &SpawnSpec,
        shape: ProcessShape,
        session_id: String,
        max_line: usize,
    ) -> io::Result<Self> {
        let group = spawn_in_group(&spec.program, &spec.args, &spec.cwd, &spec.env)?;
        let (tx, lines) = mpsc::channel(1024);
        let reader = tokio::spawn(read_lines(
            BufReader::with_capacity(256 * 1024, group.stdout),
            max_line,
            tx,
        ));
        Ok(Self {
            pgid: group
                .pid
                .and_then(|p| i32::try_from(p).ok())
                .map(Pid::from_raw),
            child: group.child,
            stdin: Some(group.stdin),
            lines,
            stderr: group.stderr,
            tasks: vec![reader, group.stderr_task],
            shape,
            session_id,
            cost_total: 0.0,
            eof: false,
            stale: false,
        })
    }

    /// Writes one JSON line to stdin.
    pub async fn write(&mut self, value: &Value) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin is closed"))?;
        stdin.write_all(&wire::encode(value)).await?;
        stdin.flush().await
    }

    /// The end of stderr, trimmed (secrets are the CLI's business: it prints none).
    pub fn stderr_tail(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock())
            .trim()
            .to_string()
    }

    /// Waits up to `wait` for the process to exit.
    pub async fn wait_exit(&mut self, wait: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(wait, self.child.wait())
            .await
            .ok()?
            .ok()
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Kills the whole process group now, with every descendant that left it.
    pub fn kill(&mut self) {
        if let Some(pgid) = self.pgid.and_then(|p| u32::try_from(p.as_raw()).ok()) {
            // The group and every descendant that left it (tools run in new sessions).
            weft_proctree::kill_tree(pgid);
        }
        let _ = self.child.start_kill();
    }

    /// Ends the process: stdin closed (the CLI exits by itself when idle), up to
    /// `grace` to do so, then the group is killed either way (its own children too).
    pub async fn close(mut self, grace: Duration) {
        self.stdin = None;
        let _ = self.wait_exit(grace).await;
        self.kill();
    }

    /// The process id (for tests that check for orphans).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

impl Drop for ClaudeProcess {
    fn drop(&mut self) {
        self.kill();
        for t in &self.tasks {
            t.abort();
        }
    }
}
