//! One Weft turn over a live `claude` process: write the prompt, read until the turn
//! has really ended, and answer what the CLI asks on the way.
//!
//! "Really ended" is the hard part, because `claude -p` never exits by itself and one
//! `result` line is not one turn:
//! - a steer the CLI queued runs as its own CLI turn with its own `result`; a steer it
//!   injected gets none. Each steer is tracked until the CLI echoes it
//!   (`--replay-user-messages`): echoed before the next `result` means injected,
//!   after means queued. `result`s are never paired with messages.
//! - background tasks (`task_started` … `task_notification`) outlive the `result`, and
//!   the CLI later wakes itself (a new `init`) to report. The turn waits while any is
//!   pending, up to a cap, then for a quiet period in case the CLI wakes.
//! - a model that goes silent would hang the turn forever: a watchdog settles it as
//!   stalled (and interrupts the CLI) without killing the process.
//! - a clean `result` right after tool results has no final answer: the CLI is asked
//!   once to finish; a resumed session can answer "No response requested." without
//!   running the prompt: it is sent again, a bounded number of times.
//!
//! A stop sends the `interrupt` control request and keeps reading to the `result`; only
//! if none comes within the grace period is the process group killed.

use std::collections::HashMap;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::Instant;
use weft_kernel::driver::{AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::{DriverEvent, Interaction, InteractionResponse, ToolStatus};

use crate::commands::{self, Commands};
use crate::config::Config;
use crate::interact;
use crate::lines::{parse, preview, Parsed, RawLine};
use crate::normalize::{Normalizer, Signal, TurnEnd};
use crate::process::ClaudeProcess;
use crate::recover;
use crate::spawn::{self, prompt_text};
use crate::wire::{self, CanUseTool, ControlRequest};

/// How a turn ended, for the driver.
pub struct Outcome {
    /// What the kernel gets.
    pub result: DriverResult,
    /// Whether the process can take the next turn.
    pub keep: bool,
}

struct Steer {
    text: String,
    results_at_send: usize,
    while_idle: bool,
}

type Answer = (String, Interaction, CanUseTool, InteractionResponse);

struct TurnState<'a> {
    proc: &'a mut ClaudeProcess,
    input: &'a AgentTurnInput,
    ctx: &'a DriverContext,
    cfg: &'a Config,
    prompt: String,
    norm: Normalizer,
    text: String,
    events: Vec<DriverEvent>,
    problems: Vec<String>,
    damaged: bool,
    steers: Vec<Steer>,
    results: usize,
    inits: usize,
    cli_busy: bool,
    tasks: HashMap<String, (bool, Instant)>,
    woke_pending: bool,
    followed_up: bool,
    truncated: bool,
    noop_sent: u32,
    noop_failed: bool,
    last_end: Option<TurnEnd>,
    stopping: Option<Instant>,
    last_output: Instant,
    lingering: bool,
    interrupts: u32,
    pending: HashMap<String, (Interaction, CanUseTool)>,
    write_failed: Option<String>,
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(86_400)
}

/// Runs one turn on `proc`.
pub async fn run(
    proc: &mut ClaudeProcess,
    input: &AgentTurnInput,
    ctx: &DriverContext,
    cfg: &Config,
) -> Outcome {
    let cost_base = proc.cost_total;
    let mut t = TurnState {
        proc,
        input,
        ctx,
        cfg,
        prompt: prompt_text(input),
        norm: Normalizer::new(cost_base),
        text: String::new(),
        events: Vec::new(),
        problems: Vec::new(),
        damaged: false,
        steers: Vec::new(),
        results: 0,
        inits: 0,
        cli_busy: true,
        tasks: HashMap::new(),
        woke_pending: false,
        followed_up: false,
        truncated: false,
        noop_sent: 0,
        noop_failed: false,
        last_end: None,
        stopping: None,
        last_output: Instant::now(),
        lingering: false,
        interrupts: 0,
        pending: HashMap::new(),
        write_failed: None,
    };
    let message = match spawn::prompt_message(input, &t.prompt) {
        Ok(m) => m,
        Err(e) => {
            return Outcome {
                result: DriverResult::failed(e),
                keep: true,
            }
        }
    };
    t.norm.commands = Commands::new(commands::scan(input));
    t.norm.commands.described = t.proc.commands.clone();
    if !t.proc.initialized {
        // Its reply describes the commands; a CLI that refuses it still runs the turn.
        t.proc.initialized = true;
        let _ = t.proc.write(&commands::initialize_request()).await;
    }
    if let Err(e) = t.proc.write(&message).await {
        // Most likely the CLI already died: its stdout's end (read next) reports the
        // exit status and stderr, which say more than the broken pipe.
        t.write_failed = Some(format!("could not write the prompt to Claude Code: {e}"));
    }
    t.main_loop().await
}

impl TurnState<'_> {
    async fn main_loop(&mut self) -> Outcome {
        let cancel = self.ctx.cancel_token();
        let mut steer_rx = Some(self.ctx.register_steer());
        let mut asks: JoinSet<Answer> = JoinSet::new();
        loop {
            if let Some(out) = self.check_timers(&asks).await {
                return out;
            }
            let deadline = self.next_deadline(&asks);
            tokio::select! {
                _ = cancel.cancelled(), if self.stopping.is_none() => {
                    steer_rx = None;
                    self.stopping = Some(Instant::now() + self.cfg.stop_grace);
                    // Pending questions are cancelled explicitly, before the interrupt,
                    // so the CLI never runs a tool nobody allowed.
                    asks.abort_all();
                    let pending: Vec<_> = self
                        .pending
                        .iter()
                        .map(|(id, (i, r))| (id.clone(), i.clone(), r.clone()))
                        .collect();
                    for (id, interaction, req) in pending {
                        let answer = InteractionResponse::cancel();
                        self.answer((id, interaction, req, answer)).await;
                    }
                    self.interrupt().await;
                }
                raw = self.proc.lines.recv() => {
                    let raw = raw.unwrap_or(RawLine::Eof);
                    if matches!(raw, RawLine::Eof) {
                        self.proc.eof = true;
                        return self.died(None).await;
                    }
                    self.last_output = Instant::now();
                    if let Some(out) = self.raw_line(raw, &mut asks).await {
                        return out;
                    }
                }
                steer = async { match steer_rx.as_mut() { Some(rx) => rx.recv().await, None => std::future::pending().await } } => {
                    match steer {
                        Some(steer) => self.steer(steer).await,
                        None => steer_rx = None,
                    }
                }
                Some(Ok(answer)) = asks.join_next(), if !asks.is_empty() => {
                    self.answer(answer).await;
                }
                _ = tokio::time::sleep_until(deadline) => {}
            }
        }
    }

    fn flush(&mut self) {
        for ev in self.events.drain(..) {
            if let DriverEvent::Text { delta } = &ev {
                self.text.push_str(delta);
            }
            let ev = weft_kernel::mcp::with_captured_stderr(
                ev,
                &self.input.state_dir,
                &self.input.session_key,
            );
            self.ctx.emit(ev);
        }
    }

    fn notice(&mut self, text: impl Into<String>) {
        self.ctx.emit(DriverEvent::Notice { text: text.into() });
    }

    fn problem(&mut self, text: String) {
        self.damaged = true;
        self.notice(text.clone());
        self.problems.push(text);
    }

    async fn write(&mut self, value: &serde_json::Value) {
        if let Err(e) = self.proc.write(value).await {
            let msg = format!("could not write to Claude Code: {e}");
            self.problem(msg);
        }
    }

    async fn interrupt(&mut self) {
        self.interrupts += 1;
        let id = format!("weft_interrupt_{}", self.interrupts);
        self.write(&wire::interrupt_request(&id)).await;
    }

    async fn raw_line(&mut self, raw: RawLine, asks: &mut JoinSet<Answer>) -> Option<Outcome> {
        let parsed = match raw {
            RawLine::Line(bytes) => (parse(&bytes), bytes),
            RawLine::Cut(bytes) => {
                let p = parse(&bytes);
                if matches!(p, Parsed::Malformed(_)) {
                    self.problem(format!(
                        "Claude Code's output ended in the middle of a line ({} bytes lost)",
                        bytes.len()
                    ));
                    return None;
                }
                (p, bytes)
            }
            RawLine::TooLong { len, head } => {
                self.problem(format!(
                    "skipped a {len}-byte line from Claude Code, over the {}-byte limit \
                     (WEFT_CLAUDE_MAX_LINE_BYTES): {}",
                    self.cfg.max_line,
                    preview(&head)
                ));
                return None;
            }
            RawLine::Eof => return None,
        };
        let line = match parsed {
            (Parsed::Line(l), _) => l,
            (Parsed::Lossy(l), _) => {
                self.problem("Claude Code wrote invalid UTF-8; the bad bytes were replaced".into());
                l
            }
            (Parsed::Malformed(e), bytes) => {
                self.problem(format!(
                    "skipped a malformed line from Claude Code ({e}): {}",
                    preview(&bytes)
                ));
                return None;
            }
            (Parsed::Blank, _) => return None,
        };
        let signals = self.norm.line(line, &mut self.events);
        self.flush();
        for signal in signals {
            if let Some(out) = self.signal(signal, asks).await {
                return Some(out);
            }
        }
        None
    }

    async fn signal(&mut self, signal: Signal, asks: &mut JoinSet<Answer>) -> Option<Outcome> {
        match signal {
            Signal::Init { session_id } => {
                self.proc.session_id = session_id;
                if let Some(tools) = self.norm.tools_reported.take() {
                    self.proc.tools = Some(tools);
                }
                self.inits += 1;
                self.cli_busy = true;
                self.woke_pending = false;
            }
            Signal::Result(end) => return self.result(end).await,
            Signal::ControlRequest {
                request_id,
                request,
            } => match request {
                ControlRequest::CanUseTool(req) => {
                    let req = *req;
                    let interaction = interact::interaction(&request_id, &req);
                    self.pending
                        .insert(request_id.clone(), (interaction.clone(), req.clone()));
                    let ctx = self.ctx.clone();
                    asks.spawn(async move {
                        let answer = ctx.ask_user(interaction.clone()).await;
                        (request_id, interaction, req, answer)
                    });
                }
                ControlRequest::Other => {
                    let reply = wire::control_error(&request_id, "not supported by Weft");
                    self.write(&reply).await;
                }
            },
            Signal::ControlResponse { .. } => {
                self.proc.commands = self.norm.commands.described.clone();
            }
            Signal::TaskStarted { task_id, agent } => {
                self.tasks.insert(task_id, (agent, Instant::now()));
            }
            Signal::TaskDone { task_id } => {
                if self.tasks.remove(&task_id).is_some() && !self.cli_busy {
                    self.woke_pending = true;
                }
            }
            Signal::Replay { text } => {
                let text = text.trim().to_string();
                if let Some(i) = self.steers.iter().position(|s| s.text.trim() == text) {
                    let steer = self.steers.remove(i);
                    if !steer.while_idle {
                        let how = if self.results > steer.results_at_send {
                            "Claude Code queued the steer: it ran as its own turn after the reply"
                        } else {
                            "steer injected into the running turn"
                        };
                        self.notice(how);
                    }
                }
            }
        }
        None
    }

    async fn result(&mut self, end: TurnEnd) -> Option<Outcome> {
        self.results += 1;
        self.cli_busy = false;
        self.woke_pending = false;
        if let Some(cost) = self.norm.process_cost() {
            self.proc.cost_total = cost;
        }
        if self.stopping.is_some() {
            self.last_end = Some(end);
            return Some(self.settle_stopped(true));
        }
        if end.noop && !self.norm.has_text() {
            if self.noop_sent < self.cfg.noop_retries {
                self.noop_sent += 1;
                self.notice(format!(
                    "Claude Code answered \"No response requested.\" without running the prompt; \
                     sent it again ({}/{})",
                    self.noop_sent, self.cfg.noop_retries
                ));
                self.cli_busy = true;
                let msg = wire::user_message(&self.prompt);
                self.write(&msg).await;
                return None;
            }
            self.noop_failed = true;
        }
        if end.truncated && self.steers.is_empty() && self.tasks.is_empty() {
            if !self.followed_up {
                self.followed_up = true;
                self.notice(
                    "the reply ended after tool results without a final answer; asked Claude \
                     Code to finish it",
                );
                self.cli_busy = true;
                let msg = wire::user_message(&self.cfg.finish_prompt);
                self.write(&msg).await;
                self.last_end = Some(end);
                return None;
            }
            self.truncated = true;
        } else if !end.truncated {
            self.truncated = false;
        }
        self.last_end = Some(end);
        None
    }

    async fn steer(&mut self, steer: weft_kernel::Steer) {
        if self.stopping.is_some() {
            return;
        }
        // Like a prompt: images as image blocks, other files named after the text.
        let text = spawn::text_with_files(&steer.text, &steer.attachments);
        let message = spawn::message_with_images(&text, &steer.attachments).unwrap_or_else(|e| {
            self.notice(format!("the steer's images were left out: {e}"));
            wire::user_message(&text)
        });
        // The CLI echoes the message as this text (an image block as `[image]`).
        let echo = wire::content_text(&message["message"]["content"]);
        let while_idle = !self.cli_busy;
        if while_idle {
            self.notice("steer sent while Claude Code was idle: it runs as a turn of its own");
            self.cli_busy = true;
        }
        self.steers.push(Steer {
            text: echo,
            results_at_send: self.results,
            while_idle,
        });
        self.write(&message).await;
    }

    async fn answer(&mut self, (request_id, interaction, req, answer): Answer) {
        if self.pending.remove(&request_id).is_none() {
            return; // already answered (cancelled by a stop)
        }
        let (body, note) = interact::response(&interaction, &req, &answer);
        if let Some(note) = note {
            self.notice(note);
        }
        self.last_output = Instant::now();
        self.write(&wire::control_success(&request_id, body)).await;
    }

    fn next_deadline(&self, asks: &JoinSet<Answer>) -> Instant {
        let mut d = far();
        if let Some(s) = self.stopping {
            d = d.min(s);
        }
        if self.cli_busy && asks.is_empty() && self.tasks.is_empty() {
            d = d.min(self.last_output + self.cfg.stall_for(self.input.effort.as_deref()));
        }
        if self.write_failed.is_some() {
            d = d.min(self.last_output + Duration::from_secs(5));
        }
        if !self.cli_busy {
            d = d.min(self.last_output + self.cfg.bg_quiet);
        }
        for (agent, started) in self.tasks.values() {
            d = d.min(*started + self.cap(*agent));
        }
        d
    }

    fn cap(&self, agent: bool) -> Duration {
        if agent {
            self.cfg.bg_agent_cap
        } else {
            self.cfg.bg_shell_cap
        }
    }

    async fn check_timers(&mut self, asks: &JoinSet<Answer>) -> Option<Outcome> {
        let now = Instant::now();
        if self.write_failed.is_some() && now >= self.last_output + Duration::from_secs(5) {
            let why = self.write_failed.take();
            return Some(self.died(why).await);
        }
        if let Some(deadline) = self.stopping {
            if now >= deadline {
                self.proc.kill();
                self.notice(format!(
                    "Claude Code did not answer the interrupt within {} ms; its process group \
                     was killed",
                    self.cfg.stop_grace.as_millis()
                ));
                return Some(self.settle_stopped(false));
            }
            return None;
        }
        let over: Vec<String> = self
            .tasks
            .iter()
            .filter(|(_, (agent, started))| now >= *started + self.cap(*agent))
            .map(|(id, _)| id.clone())
            .collect();
        for id in over {
            if let Some((agent, _)) = self.tasks.remove(&id) {
                self.notice(format!(
                    "background {} {id} still running after {} s; the turn settles without it",
                    if agent { "subagent" } else { "shell" },
                    self.cap(agent).as_secs()
                ));
            }
        }
        if self.cli_busy {
            let stall = self.cfg.stall_for(self.input.effort.as_deref());
            if asks.is_empty() && self.tasks.is_empty() && now >= self.last_output + stall {
                return Some(self.settle_stalled(stall).await);
            }
            return None;
        }
        if self.results == 0 {
            return None;
        }
        let waiting = !self.tasks.is_empty() || !self.steers.is_empty() || self.woke_pending;
        if waiting && !self.lingering {
            self.lingering = true;
            self.ctx.emit(DriverEvent::Activity {
                text: "waiting for Claude Code's background work".into(),
            });
        }
        if !waiting || (self.tasks.is_empty() && now >= self.last_output + self.cfg.bg_quiet) {
            if !self.steers.is_empty() {
                self.notice("Claude Code had not taken the steer when the turn settled");
            }
            return Some(self.settle().await);
        }
        None
    }

    async fn recover(&mut self) {
        let Some(config) = recover::config_dir(self.input) else {
            return;
        };
        let Some(file) = recover::session_file(&config, &self.input.workdir, &self.proc.session_id)
        else {
            return;
        };
        let Some(full) = recover::turn_text(&file, &self.prompt) else {
            return;
        };
        let have = self.text.clone();
        if let Some(tail) = recover::missing_tail(&full, &have) {
            let n = tail.chars().count();
            self.norm.push_recovered_text(tail, &mut self.events);
            self.flush();
            self.notice(format!(
                "recovered {n} characters of the reply from Claude Code's session file"
            ));
        }
    }

    fn clear_activity(&mut self) {
        if self.lingering {
            self.lingering = false;
            self.ctx.emit(DriverEvent::Activity {
                text: String::new(),
            });
        }
    }

    async fn settle(&mut self) -> Outcome {
        self.clear_activity();
        if self.damaged {
            self.recover().await;
        }
        let end = self.last_end.clone().unwrap_or_default();
        let mut error = self.problems.first().cloned();
        if self.noop_failed {
            error = Some(format!(
                "Claude Code did not run the prompt (it answered \"No response requested.\" {} times)",
                self.noop_sent + 1
            ));
        } else if self.truncated {
            error = Some(
                "the reply was truncated: Claude Code ended the turn after tool results without \
                 a final answer, even when asked to finish"
                    .into(),
            );
        } else if end.is_error && error.is_none() {
            let detail = end
                .text
                .clone()
                .or_else(|| end.errors.first().cloned())
                .unwrap_or_else(|| end.subtype.clone());
            error = Some(format!("Claude Code reported an error: {detail}"));
        }
        let ok = error.is_none();
        Outcome {
            result: DriverResult {
                ok,
                text: end.text.filter(|_| !self.norm.has_text()),
                session_id: Some(self.proc.session_id.clone()),
                error,
            },
            keep: true,
        }
    }

    fn fail_running_calls(&mut self, why: &str) {
        for mut call in self.norm.running_calls() {
            call.status = ToolStatus::Failed;
            call.result = Some(why.to_string());
            self.ctx.emit(DriverEvent::Tool { call });
        }
    }

    fn settle_stopped(&mut self, answered: bool) -> Outcome {
        self.clear_activity();
        self.fail_running_calls("stopped");
        Outcome {
            result: DriverResult {
                ok: false,
                text: None,
                session_id: Some(self.proc.session_id.clone()),
                error: None,
            },
            keep: answered,
        }
    }

    async fn settle_stalled(&mut self, stall: Duration) -> Outcome {
        self.clear_activity();
        self.interrupt().await;
        self.proc.stale = true;
        self.fail_running_calls("stalled");
        Outcome {
            result: DriverResult {
                ok: false,
                text: None,
                session_id: Some(self.proc.session_id.clone()),
                error: Some(format!(
                    "stalled: Claude Code produced no output for {} s (WEFT_CLAUDE_STALL_SECS); \
                     the turn was settled and the CLI interrupted",
                    stall.as_secs()
                )),
            },
            keep: true,
        }
    }

    /// stdout closed: the process is gone (or going).
    async fn died(&mut self, why: Option<String>) -> Outcome {
        if self.stopping.is_some() {
            return self.settle_stopped(false);
        }
        let status = self.proc.wait_exit(Duration::from_secs(2)).await;
        // A result for the last CLI turn with nothing pending: the CLI ended after a
        // complete turn, which is not an error.
        if why.is_none() && !self.cli_busy && self.results > 0 && self.steers.is_empty() {
            let mut out = self.settle().await;
            out.keep = false;
            return out;
        }
        let error = match why {
            Some(why) => why,
            None => {
                // Quoted only here, so only here is it worth waiting for its end.
                if status.is_some() {
                    self.proc.drain_stderr(Duration::from_millis(500)).await;
                }
                let status = status
                    .map(|s| match s.code() {
                        Some(c) => format!("exit status {c}"),
                        None => "killed by a signal".to_string(),
                    })
                    .unwrap_or_else(|| "still running".into());
                let stderr = self.proc.stderr_tail();
                let stderr = if stderr.is_empty() {
                    String::new()
                } else {
                    let tail: String = stderr
                        .chars()
                        .rev()
                        .take(2000)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    format!(": {tail}")
                };
                if self.inits == 0 && self.results == 0 {
                    format!("Claude Code exited before it started ({status}){stderr}")
                } else {
                    format!("Claude Code exited mid-turn ({status}){stderr}")
                }
            }
        };
        self.recover().await;
        self.fail_running_calls("Claude Code exited");
        self.clear_activity();
        Outcome {
            result: DriverResult {
                ok: false,
                text: None,
                session_id: Some(self.proc.session_id.clone()),
                error: Some(error),
            },
            keep: false,
        }
    }
}
