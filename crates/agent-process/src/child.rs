//! Starting an agent's process the same way for every driver: as the leader of a new
//! process group (agents run shells and helpers of their own; the group, and
//! `weft_proctree::kill_tree`, reach them all), with exactly the environment the turn
//! gives it, set to die with the kernel, recorded in the process ledger, with piped
//! stdio and the end of stderr kept for the error a crash becomes.
//!
//! The environment is cleared first: the kernel is a service whose own environment
//! belongs to whoever started it, not to the client whose turn this is
//! (`AgentTurnInput::spawn_env` is the whole of what the agent gets).
//!
//! Spawn from an async runtime's worker thread, not from `spawn_blocking`: the
//! parent-death signal follows the thread that forked (see
//! `weft_proctree::parent_death`).

use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::lines::{read_lines_blocking, RawLine};
use crate::paced::{Paced, PacedStdout};

/// How much of a child's stderr is kept.
pub const STDERR_TAIL: usize = 16 * 1024;

/// A child leading its own process group: its pipes, the end of its stderr, and the
/// tasks reading its output. Killing it kills the group and every descendant that left
/// it (agents run tools in sessions of their own); dropping it kills it. No `Drop`
/// path leaves a process behind.
pub struct GroupChild {
    child: Child,
    /// The pid at spawn, which is also the group id, until the child is reaped: then
    /// what it left in its group is killed at once and the id forgotten, because once
    /// the group is empty the kernel may hand that number to any other process, and a
    /// later kill by it would reach a stranger (a CI run wraps 32768 pids in minutes).
    group: Option<u32>,
    /// The group is in the process ledger until it is killed.
    recorded: bool,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_task: Option<JoinHandle<()>>,
    tasks: Vec<JoinHandle<()>>,
}

impl GroupChild {
    /// Starts `program` in `cwd` with exactly the environment `env` (nothing
    /// inherited), as the leader of a new process group that dies with this process,
    /// with piped stdio; the group is reported to the process ledger.
    pub fn spawn(
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &[(String, String)],
    ) -> io::Result<Self> {
        Self::start(program, args, cwd, env, Stdio::piped())
    }

    /// Starts it like [`GroupChild::spawn`], with its stdout read as lines capped at
    /// `max_line` by a thread of its own into the returned channel (`depth` lines
    /// deep), in paced bursts ([`Paced`]): for agents that stream a line per token.
    /// The thread ends when stdout closes (the child and what inherited its stdout
    /// are gone) or the receiver is dropped.
    pub fn spawn_lines(
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &[(String, String)],
        max_line: usize,
        depth: usize,
    ) -> io::Result<(Self, mpsc::Receiver<RawLine>)> {
        // A pipe of our own rather than the runtime's: the runtime would register its
        // end with epoll, and such a pipe wakes its reader on every write.
        let (reader, writer) = std::io::pipe()?;
        let child = Self::start(program, args, cwd, env, Stdio::from(writer))?;
        let (tx, rx) = mpsc::channel(depth);
        std::thread::Builder::new()
            .name("weft-agent-out".into())
            .spawn(move || {
                let paced = std::io::BufReader::with_capacity(256 * 1024, Paced::new(reader));
                read_lines_blocking(paced, max_line, tx);
            })?;
        Ok((child, rx))
    }

    /// Starts it like [`GroupChild::spawn`], with its stdout read in paced bursts by a
    /// thread of its own ([`PacedStdout`]): for agents that stream a message per token
    /// to a caller that parses the bytes itself.
    pub fn spawn_paced(
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &[(String, String)],
    ) -> io::Result<(Self, PacedStdout)> {
        // Our own pipe, for the reason given in `spawn_lines`.
        let (reader, writer) = std::io::pipe()?;
        let child = Self::start(program, args, cwd, env, Stdio::from(writer))?;
        Ok((child, PacedStdout::start(reader)?))
    }

    fn start(
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &[(String, String)],
        stdout: Stdio,
    ) -> io::Result<Self> {
        // `cmd` holds the parent's copy of a given stdout's write end: it must be
        // dropped by the time this returns, or the reader never sees EOF.
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)));
        weft_proctree::die_with_parent(cmd.as_std_mut());
        let mut child = cmd.spawn()?;
        let group = child.id();
        let recorded = group
            .and_then(weft_proctree::ledger::record_started)
            .is_some();
        let pipe = |name: &str| io::Error::other(format!("no {name} pipe"));
        let stdin = child.stdin.take().ok_or_else(|| pipe("stdin"))?;
        let stdout = child.stdout.take();
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
        Ok(Self {
            group,
            recorded,
            child,
            stdin: Some(stdin),
            stdout,
            stderr,
            stderr_task: Some(stderr_task),
            tasks: Vec::new(),
        })
    }

    /// Its stdin, for a caller that writes it itself (once).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Its stdout, to be read by the caller (once; `None` when started by
    /// [`GroupChild::spawn_lines`] or [`GroupChild::spawn_paced`], whose thread reads it).
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// A task reading this child's output: aborted when the child is dropped.
    pub fn keep_task(&mut self, task: JoinHandle<()>) {
        self.tasks.push(task);
    }

    /// Writes `bytes` to stdin and flushes.
    pub async fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin is closed"))?;
        stdin.write_all(bytes).await?;
        stdin.flush().await
    }

    /// Closes stdin (an agent reading it exits at EOF).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The end of stderr so far (at most [`STDERR_TAIL`] bytes), decoded lossily.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock()).into_owned()
    }

    /// Waits (up to `wait`) for stderr to reach its end, so an exited child's last
    /// words are all in [`GroupChild::stderr`].
    pub async fn settle_stderr(&mut self, wait: Duration) {
        if let Some(task) = self.stderr_task.as_mut() {
            if tokio::time::timeout(wait, task).await.is_ok() {
                self.stderr_task = None;
            }
        }
    }

    /// How it exited, if it has.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        let status = self.child.try_wait().ok().flatten();
        if status.is_some() {
            self.reaped();
        }
        status
    }

    /// Whether it has exited.
    pub fn exited(&mut self) -> bool {
        self.exit_status().is_some()
    }

    /// Waits up to `wait` for it to exit by itself.
    pub async fn wait_exit(&mut self, wait: Duration) -> Option<ExitStatus> {
        let status = tokio::time::timeout(wait, self.child.wait())
            .await
            .ok()?
            .ok();
        if status.is_some() {
            self.reaped();
        }
        status
    }

    /// The leader was just reaped: its group id still names only what it left behind
    /// (a member keeps the id reserved; an empty group's id cannot have been reused in
    /// the moments since), so those go now, and the id is forgotten before it can name
    /// anyone else. Its descendants in other sessions were re-parented at its exit and
    /// are out of reach, as after any exit.
    fn reaped(&mut self) {
        if let Some(group) = self.group.take() {
            weft_proctree::kill_group(group);
            if std::mem::take(&mut self.recorded) {
                weft_proctree::ledger::record_ended(group);
            }
        }
    }

    /// Kills the whole process group now, and every descendant that left it.
    pub fn kill(&mut self) {
        if let Some(group) = self.group {
            weft_proctree::kill_tree(group);
            if std::mem::take(&mut self.recorded) {
                weft_proctree::ledger::record_ended(group);
            }
        }
        let _ = self.child.start_kill();
    }

    /// Ends it: stdin closed, up to `grace` to exit by itself, then the group is
    /// killed either way (its own children too).
    pub async fn close(mut self, grace: Duration) {
        self.close_stdin();
        let _ = self.wait_exit(grace).await;
        self.kill();
    }

    /// Its process id, while it has one.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        self.kill();
        for t in self.tasks.iter().chain(self.stderr_task.iter()) {
            t.abort();
        }
    }
}

/// How long a version probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs `program args` (`--version`, a model catalog) with no input and a time limit,
/// in the kernel's own environment (an agent's info belongs to no turn); its stdout,
/// or why there is none.
pub async fn probe_output(program: &Path, args: &[&str]) -> Result<String, String> {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null()).kill_on_drop(true);
    weft_proctree::die_with_parent(cmd.as_std_mut());
    let out = tokio::time::timeout(PROBE_TIMEOUT, cmd.output()).await;
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
