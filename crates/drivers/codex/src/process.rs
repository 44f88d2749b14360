//! One long-lived `codex app-server`, in its own process group.
//!
//! The npm package's `codex` is a node wrapper that starts the native binary, which in
//! turn runs the agent's shells: killing one pid would orphan the rest. So the child
//! leads a new process group (`process_group(0)`) and every kill is `weft_proctree::kill_tree` (the group and every descendant): on
//! [`CodexProcess::close`] (stdin closed first, a short wait for a clean exit) and on
//! drop (at once). No `Drop` path leaves a process behind.
//!
//! stdout is read by its own task into a bounded channel of [`RawLine`]s, each line
//! capped (a huge line is skipped and reported, not buffered); stderr is kept as a
//! bounded tail for the error a crash becomes.

use std::io;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use nix::unistd::Pid;
use parking_lot::Mutex;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use weft_kernel::programs::spawn_in_group;

pub use weft_kernel::lines::{preview, read_lines, RawLine};

use crate::spawn::SpawnSpec;

/// A running `codex app-server`.
pub struct CodexProcess {
    child: Child,
    pgid: Option<Pid>,
    stdin: Option<ChildStdin>,
    /// stdout, line by line.
    pub lines: mpsc::Receiver<RawLine>,
    stderr: Arc<Mutex<Vec<u8>>>,
    tasks: Vec<JoinHandle<()>>,
    stderr_task: Option<JoinHandle<()>>,
}

impl CodexProcess {
    /// Starts `spec` in a new process group.
    pub fn spawn(spec: &SpawnSpec, max_line: usize) -> io::Result<Self> {
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
            tasks: vec![reader],
            stderr_task: Some(group.stderr_task),
        })
    }

    /// Writes one message as a line to stdin.
    pub async fn write(&mut self, line: &[u8]) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin is closed"))?;
        stdin.write_all(line).await?;
        stdin.flush().await
    }

    /// The end of stderr: ANSI colour codes removed, codex's own startup warnings
    /// about helper binaries dropped, trimmed.
    pub fn stderr_tail(&self) -> String {
        let raw = String::from_utf8_lossy(&self.stderr.lock()).into_owned();
        strip_ansi(&raw)
            .lines()
            .filter(|l| !l.contains("could not create PATH aliases"))
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_string()
    }

    /// Waits (up to `max`) for stderr to reach its end, so an exited process's last
    /// words are all in [`CodexProcess::stderr_tail`].
    pub async fn drain_stderr(&mut self, max: Duration) {
        if let Some(task) = self.stderr_task.as_mut() {
            if tokio::time::timeout(max, task).await.is_ok() {
                self.stderr_task = None;
            }
        }
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

    /// Kills the whole process group now, and every other descendant: codex runs
    /// commands in pseudo-terminals, each a session (and process group) of its own,
    /// which a group kill does not reach.
    pub fn kill(&mut self) {
        if let Some(pgid) = self.pgid.and_then(|p| u32::try_from(p.as_raw()).ok()) {
            weft_proctree::kill_tree(pgid);
        }
        let _ = self.child.start_kill();
    }

    /// Ends the process: stdin closed (app-server exits at EOF), up to `grace` to do
    /// so, then the group is killed either way (its own children too).
    pub async fn close(mut self, grace: Duration) {
        self.stdin = None;
        let _ = self.wait_exit(grace).await;
        self.kill();
    }

    /// The process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

impl Drop for CodexProcess {
    fn drop(&mut self) {
        self.kill();
        for t in self.tasks.iter().chain(self.stderr_task.iter()) {
            t.abort();
        }
    }
}

/// `s` without ANSI escape sequences (codex colours its log lines).
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_is_stripped() {
        assert_eq!(
            strip_ansi("\u{1b}[2m2026\u{1b}[0m \u{1b}[31mERROR\u{1b}[0m x"),
            "2026 ERROR x"
        );
    }
}
