//! One session's `codex app-server`: the process, its JSON-RPC ids, its thread, and
//! the handshake that opens the thread.
//!
//! Opening is `initialize` → `initialized` → `thread/start` (a new session) or
//! `thread/resume` (a session with an id: after a restart, in a new process, or
//! when the process had to change), or `thread/fork` (a session forked from another
//! that has no thread of its own yet: `lastTurnId` keeps the parent's turns through
//! that one, and codex writes the new thread's rollout with `forked_from_id`, leaving
//! the parent's alone). Each handshake request is bounded by the
//! configured timeout and races the child's exit, so a binary that dies on start
//! becomes an error carrying its own last words, not a hang.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use weft_kernel::driver::AgentTurnInput;

use crate::config::{Config, TurnKnobs};
use crate::normalize::Normalizer;
use crate::process::{preview, CodexProcess, RawLine};
use crate::rpc::{self, Incoming};
use crate::spawn::{self, ProcessShape};
use crate::wire::ThreadOpened;

/// What reading the next message gave.
#[derive(Debug)]
pub enum Next {
    /// A message.
    Message(Incoming),
    /// A line that is not a JSON-RPC message: why, and its start.
    Malformed(String),
    /// stdout closed: the process is gone.
    Eof,
}

/// A live session process with its thread open.
pub struct CodexSession {
    /// The process.
    pub proc: CodexProcess,
    /// What it was started with.
    pub shape: ProcessShape,
    /// The knobs it was started with.
    pub knobs: TurnKnobs,
    /// The thread: Weft's session id for this session.
    pub thread_id: String,
    /// The model the thread runs.
    pub model: Option<String>,
    /// The thread's rollout file.
    pub rollout: Option<String>,
    /// Its notifications, normalized.
    pub norm: Normalizer,
    /// stdout closed.
    pub eof: bool,
    /// A thread asked to resume that codex has no record of (lost before it was saved):
    /// a new one was started instead; the next turn says so.
    pub lost_thread: Option<String>,
    next_id: u64,
}

impl CodexSession {
    /// Starts `codex app-server` for `input` and opens its thread: resumes `resume`
    /// when given, else starts one.
    pub async fn open(
        program: &Path,
        input: &AgentTurnInput,
        knobs: TurnKnobs,
        resume: Option<&str>,
        cfg: &Config,
    ) -> Result<Self, String> {
        let mut s = Self::start(program, input, knobs, cfg).await?;
        s.open_thread(input, resume, cfg).await?;
        Ok(s)
    }

    /// Starts `codex app-server` for `input` and takes it through `initialize`, with
    /// no thread: what asks codex about its set-up (its MCP servers' tools) needs no
    /// thread, and a thread would be a session in codex's own history.
    pub async fn start(
        program: &Path,
        input: &AgentTurnInput,
        knobs: TurnKnobs,
        cfg: &Config,
    ) -> Result<Self, String> {
        let spec = spawn::spec(program, input, &knobs);
        let proc = CodexProcess::spawn(&spec, cfg.max_line)
            .map_err(|e| format!("could not start codex ({}): {e}", program.display()))?;
        let mut s = Self {
            proc,
            shape: ProcessShape::of(input),
            knobs,
            thread_id: String::new(),
            model: None,
            rollout: None,
            norm: Normalizer::default(),
            eof: false,
            lost_thread: None,
            next_id: 0,
        };
        let init = json!({
            "clientInfo": {"name": "weft", "title": "Weft", "version": env!("CARGO_PKG_VERSION")},
            "capabilities": {"experimentalApi": true, "requestAttestation": false},
        });
        s.call("initialize", init, cfg.rpc_timeout).await?;
        s.write(&rpc::notification("initialized", Value::Null))
            .await?;
        Ok(s)
    }

    /// Opens the thread: resumes `resume` when given, else forks or starts one.
    async fn open_thread(
        &mut self,
        input: &AgentTurnInput,
        resume: Option<&str>,
        cfg: &Config,
    ) -> Result<(), String> {
        let s = self;
        let mut params = json!({
            "cwd": input.workdir,
            "approvalPolicy": s.knobs.approval_policy,
            "sandbox": s.knobs.sandbox,
        });
        if let Some(m) = &input.model {
            params["model"] = json!(m);
        }
        if let Some(sp) = input.system_prompt.as_ref().filter(|p| !p.is_empty()) {
            params["developerInstructions"] = json!(sp);
        }
        let mut opened = match resume {
            Some(id) => {
                let mut resume_params = params.clone();
                resume_params["threadId"] = json!(id);
                resume_params["excludeTurns"] = json!(true);
                match s
                    .call("thread/resume", resume_params, cfg.rpc_timeout)
                    .await
                {
                    Ok(v) => Ok(v),
                    // Killed before its rollout was written: nothing to resume.
                    Err(e) if e.contains("no rollout found") => {
                        s.lost_thread = Some(id.to_string());
                        Err(e)
                    }
                    Err(e) => return Err(format!("could not resume codex thread {id}: {e}")),
                }
            }
            None => Err(String::new()),
        };
        // No thread of its own yet (or it was lost before it was saved): a fork's
        // first turn forks the parent's thread.
        let fork = input.fork.as_ref().filter(|_| !input.fresh);
        if let Some(fork) = fork.filter(|_| opened.is_err()) {
            let mut fork_params = params.clone();
            fork_params["threadId"] = json!(fork.parent_id);
            fork_params["excludeTurns"] = json!(true);
            if let Some(turn) = &fork.at {
                fork_params["lastTurnId"] = json!(turn);
            }
            s.lost_thread = None;
            opened = Ok(s
                .call("thread/fork", fork_params, cfg.rpc_timeout)
                .await
                .map_err(|e| format!("could not fork codex thread {}: {e}", fork.parent_id))?);
        }
        if opened.is_err() {
            opened = s
                .call("thread/start", params, cfg.rpc_timeout)
                .await
                .map_err(|e| format!("could not start a codex thread: {e}"));
        }
        let opened = opened?;
        let what = "open a codex thread";
        let opened: ThreadOpened = serde_json::from_value(opened)
            .map_err(|e| format!("could not {what}: unexpected answer ({e})"))?;
        s.thread_id = opened.thread.id;
        s.rollout = opened.thread.path;
        s.model = opened.model;
        s.norm = s.norm.renewed(opened.model_provider);
        Ok(())
    }

    /// Writes one line. A failed write is most often a process that is gone: the
    /// error then says how it went.
    pub async fn write(&mut self, line: &[u8]) -> Result<(), String> {
        match self.proc.write(line).await {
            Ok(()) => Ok(()),
            Err(e) => {
                let why = self.exit_reason().await;
                Err(format!("could not write to codex ({e}); codex: {why}"))
            }
        }
    }

    /// Sends a request; returns its id.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<u64, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.write(&rpc::request(id, method, params)).await?;
        Ok(id)
    }

    /// Answers the server's request `id`.
    pub async fn respond(&mut self, id: &Value, result: Value) -> Result<(), String> {
        self.write(&rpc::response(id, result)).await
    }

    /// Answers the server's request `id` with an error.
    pub async fn respond_error(
        &mut self,
        id: &Value,
        code: i64,
        message: &str,
    ) -> Result<(), String> {
        self.write(&rpc::error_response(id, code, message)).await
    }

    /// The next message (or why there is none).
    pub async fn next(&mut self) -> Next {
        loop {
            match self.proc.lines.recv().await {
                Some(RawLine::Line(bytes)) => {
                    if bytes.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    return match rpc::parse(&bytes) {
                        Ok(m) => Next::Message(m),
                        Err(why) => Next::Malformed(format!("{why}: {}", preview(&bytes))),
                    };
                }
                Some(RawLine::TooLong { len, head }) => {
                    return Next::Malformed(format!(
                        "a {len}-byte line, over the limit: {}",
                        preview(&head)
                    ))
                }
                Some(RawLine::Cut(bytes)) => {
                    return Next::Malformed(format!("a line cut short: {}", preview(&bytes)))
                }
                Some(RawLine::Eof) | None => {
                    self.eof = true;
                    return Next::Eof;
                }
            }
        }
    }

    /// Why the process is gone: its exit status and the end of its stderr.
    pub async fn exit_reason(&mut self) -> String {
        let status = self.proc.wait_exit(Duration::from_millis(1500)).await;
        if status.is_some() {
            self.proc.drain_stderr(Duration::from_millis(250)).await;
        }
        let tail = self.proc.stderr_tail();
        let last: Vec<&str> = tail.lines().rev().take(6).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        let status = match status {
            Some(s) => match s.code() {
                Some(c) => format!("exit code {c}"),
                None => format!("{s}"),
            },
            None => "still running, stdout closed".into(),
        };
        if last.is_empty() {
            status
        } else {
            format!("{status}; its last words: {}", last.join("\n"))
        }
    }

    /// Calls `method` and waits (up to `timeout`) for its answer. Notifications that
    /// arrive meanwhile are logged; server requests are answered with an error.
    pub async fn call(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let id = self
            .request(method, params)
            .await
            .map_err(|e| format!("codex exited before `{method}`: {e}"))?;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let next = match tokio::time::timeout_at(deadline, self.next()).await {
                Ok(n) => n,
                Err(_) => {
                    return Err(format!(
                        "codex did not answer `{method}` within {}s",
                        timeout.as_secs()
                    ))
                }
            };
            match next {
                Next::Message(Incoming::Response { id: got, result }) if got == id => {
                    return result.map_err(|e| e.to_string());
                }
                Next::Message(Incoming::Response { .. }) => {}
                Next::Message(Incoming::Request { id, method: m, .. }) => {
                    let why = crate::interact::unsupported(&m);
                    self.respond_error(&id, rpc::METHOD_NOT_FOUND, &why).await?;
                }
                Next::Message(Incoming::Notification { method: m, params }) => {
                    if m == "mcpServer/startupStatus/updated" {
                        self.norm.mcp_startup(params);
                    } else {
                        tracing::debug!("codex, before the turn: `{m}` {}", params);
                    }
                }
                Next::Malformed(why) => tracing::warn!("codex wrote a bad line: {why}"),
                Next::Eof => {
                    let why = self.exit_reason().await;
                    return Err(format!("codex exited during `{method}` ({why})"));
                }
            }
        }
    }

    /// Closes the process (see [`CodexProcess::close`]).
    pub async fn close(self, grace: Duration) {
        self.proc.close(grace).await
    }
}
