//! One long-lived `codex app-server`, in its own process group.
//!
//! The npm package's `codex` is a node wrapper that starts the native binary, which in
//! turn runs the agent's shells: killing one pid would orphan the rest. So the child
//! leads a new process group (`process_group(0)`) and every kill is `weft_proctree::kill_tree` (the group and every descendant): on
//! [`CodexProcess::close`] (stdin closed first, a short wait for a clean exit) and on
//! drop (at once). No `Drop` path leaves a process behind.
//!
//! stdout is read by a thread of its own, in paced bursts (see
//! `weft_agent_process::paced`), into a bounded channel of [`RawLine`]s, each line capped
//! (a huge line is skipped and reported, not buffered); stderr is kept as a bounded tail
//! for the error a crash becomes.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::sync::mpsc;
use weft_agent_process::GroupChild;

pub use weft_agent_process::{preview, read_lines, RawLine};

use crate::spawn::SpawnSpec;

/// A running `codex app-server`.
pub struct CodexProcess {
    child: GroupChild,
    /// stdout, line by line.
    pub lines: mpsc::Receiver<RawLine>,
}

impl CodexProcess {
    /// Starts `spec` in a new process group.
    pub fn spawn(spec: &SpawnSpec, max_line: usize) -> io::Result<Self> {
        let (child, lines) = GroupChild::spawn_lines(
            &spec.program,
            &spec.args,
            &spec.cwd,
            &spec.env,
            max_line,
            1024,
        )?;
        Ok(Self { child, lines })
    }

    /// Writes one message as a line to stdin.
    pub async fn write(&mut self, line: &[u8]) -> io::Result<()> {
        self.child.write(line).await
    }

    /// The end of stderr: ANSI colour codes removed, codex's own startup warnings
    /// about helper binaries dropped, trimmed.
    pub fn stderr_tail(&self) -> String {
        strip_ansi(&self.child.stderr())
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

    /// Kills the whole process group now, and every other descendant: codex runs
    /// commands in pseudo-terminals, each a session (and process group) of its own,
    /// which a group kill does not reach.
    pub fn kill(&mut self) {
        self.child.kill();
    }

    /// Ends the process: stdin closed (app-server exits at EOF), up to `grace` to do
    /// so, then the group is killed either way (its own children too).
    pub async fn close(self, grace: Duration) {
        self.child.close(grace).await;
    }

    /// The process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.pid()
    }
}

/// `s` without ANSI escape sequences (codex colours its log lines).
pub fn strip_ansi(s: &str) -> String {
    strip_ansi_escapes::strip_str(s)
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
