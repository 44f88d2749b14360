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
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nix::unistd::Pid;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::lines::{read_lines, RawLine};
use crate::spawn::{ProcessShape, SpawnSpec};
use crate::wire;

const STDERR_TAIL: usize = 16 * 1024;

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
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args)
            .current_dir(&spec.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn()?;
        let pgid = child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .map(Pid::from_raw);
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout pipe"))?;
        let mut stderr_pipe = child
            .stderr
            .take()
            .ok_or_else(|| io::Error::other("no stderr pipe"))?;
        let (tx, lines) = mpsc::channel(1024);
        let reader = tokio::spawn(read_lines(
            BufReader::with_capacity(256 * 1024, stdout),
            max_line,
            tx,
        ));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let tail = stderr.clone();
        let err_reader = tokio::spawn(async move {
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
        Ok(Self {
            child,
            pgid,
            stdin,
            lines,
            stderr,
            tasks: vec![reader, err_reader],
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
