//! One long-lived `claude` process, in its own process group.
//!
//! The CLI spawns shells and subagents of its own; killing only its pid would orphan
//! them. So the child is made a process-group leader (`process_group(0)`) and every
//! kill is `weft_proctree::kill_tree` (the group and every descendant): on [`ClaudeProcess::close`] (after closing stdin and a short
//! wait, which lets the CLI exit cleanly and flush its session file) and on drop
//! (at once). No `Drop` path leaves a process behind.
//!
//! stdout is read by a thread of its own, in paced bursts (see
//! `weft_agent_process::paced`), into a bounded channel of [`RawLine`]s (lines are
//! capped, see [`crate::lines`]); stderr is kept as a bounded tail, for the error a
//! crash on start or mid-turn becomes.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use weft_agent_process::GroupChild;

use crate::lines::RawLine;
use crate::spawn::{ProcessShape, SpawnSpec};
use crate::wire;

/// A running CLI and what the driver knows about it.
pub struct ClaudeProcess {
    child: GroupChild,
    /// stdout, line by line.
    pub lines: mpsc::Receiver<RawLine>,
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
    /// The `initialize` request (which lists the commands) was sent.
    pub initialized: bool,
    /// The commands its `initialize` reply described.
    pub commands: Vec<weft_protocol::SlashCommand>,
    /// The tools its last `init` line listed.
    pub tools: Option<Vec<String>>,
}

impl ClaudeProcess {
    /// Starts `spec` in a new process group.
    pub fn spawn(
        spec: &SpawnSpec,
        shape: ProcessShape,
        session_id: String,
        max_line: usize,
    ) -> io::Result<Self> {
        let (child, lines) = GroupChild::spawn_lines(
            &spec.program,
            &spec.args,
            &spec.cwd,
            &spec.env,
            max_line,
            1024,
        )?;
        Ok(Self {
            child,
            lines,
            shape,
            session_id,
            cost_total: 0.0,
            eof: false,
            stale: false,
            initialized: false,
            commands: Vec::new(),
            tools: None,
        })
    }

    /// Writes one JSON line to stdin.
    pub async fn write(&mut self, value: &Value) -> io::Result<()> {
        self.child.write(&wire::encode(value)).await
    }

    /// The end of stderr, trimmed (secrets are the CLI's business: it prints none).
    pub fn stderr_tail(&self) -> String {
        self.child.stderr().trim().to_string()
    }

    /// Waits (up to `max`) for stderr to reach its end, so an exited process's last
    /// words are all in [`ClaudeProcess::stderr_tail`]: stdout and stderr are read
    /// apart, and the end of one says nothing about how far the other has been read.
    pub async fn drain_stderr(&mut self, max: Duration) {
        self.child.settle_stderr(max).await;
    }

    /// Waits up to `wait` for the process to exit.
    pub async fn wait_exit(&mut self, wait: Duration) -> Option<ExitStatus> {
        self.child.wait_exit(wait).await
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        self.child.exited()
    }

    /// Kills the whole process group now, with every descendant that left it.
    pub fn kill(&mut self) {
        self.child.kill();
    }

    /// Ends the process: stdin closed (the CLI exits by itself when idle), up to
    /// `grace` to do so, then the group is killed either way (its own children too).
    pub async fn close(self, grace: Duration) {
        self.child.close(grace).await;
    }

    /// The process id (for tests that check for orphans).
    pub fn pid(&self) -> Option<u32> {
        self.child.pid()
    }
}
