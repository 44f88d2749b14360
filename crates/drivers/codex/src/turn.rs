//! One Weft turn on an open thread: `turn/start`, then every message until
//! `turn/completed`.
//!
//! The loop reads codex, the user's steers, the answers to pending interactions and
//! the stop signal at once, so nothing blocks anything else:
//! - a steer goes out as `turn/steer` once the turn's id is known (codex appends it
//!   to the running turn); one codex refuses because the turn just ended is sent as a
//!   follow-up `turn/start` inside the same Weft turn, so no steer is lost;
//! - stop sends `turn/interrupt` and waits (up to the stop grace) for the turn to
//!   complete as `interrupted`; after that the process group is killed;
//! - approvals and questions are asked through the context while the loop keeps
//!   reading; every other server request is answered with an error at once;
//! - a malformed line is reported once as a notice and skipped; the child exiting
//!   ends the turn with its exit status and last stderr lines;
//! - a running command's output held back by the row's throttle is shown when due;
//! - no message at all for the stall time, while codex waits on neither the user nor a
//!   running command, interrupts the turn and fails it.

use std::collections::HashMap;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{json, Value};
use tokio::time::Instant;
use weft_kernel::driver::{AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::DriverEvent;

use crate::config::Config;
use crate::interact::{self, Pending};
use crate::rpc::{self, Incoming};
use crate::session::{CodexSession, Next};
use crate::wire::{
    CommandApproval, FileChangeApproval, McpElicitation, TurnEnvelope, UserInputRequest,
};

/// How the turn went, and whether the process is fit for the next one.
pub struct Outcome {
    /// What the kernel gets.
    pub result: DriverResult,
    /// Keep the process for the session's next turn.
    pub keep: bool,
}

/// The `input` of `turn/start`: the prompt, images as local images (a copy fitted to
/// OpenAI's limits under the turn's attachment folder when the original is larger or
/// in a format the API does not take), other files named in the text.
pub fn user_input(input: &AgentTurnInput) -> Value {
    input_items(input, &input.prompt, &input.attachments)
}

/// `text` and `attachments` as user input items, as [`user_input`] makes them (a
/// prompt's, or a steer's for `turn/steer`, which takes the same items).
fn input_items(input: &AgentTurnInput, text: &str, attachments: &[std::path::PathBuf]) -> Value {
    let (images, files): (Vec<_>, Vec<_>) = attachments
        .iter()
        .partition(|p| weft_attachments::looks_like_image(p));
    let images: Vec<std::path::PathBuf> = images.into_iter().map(|p| fitted(input, p)).collect();
    let mut text = text.to_string();
    if !files.is_empty() {
        let list: Vec<String> = files.iter().map(|p| format!("- {}", p.display())).collect();
        text = format!("{text}\n\nAttached files:\n{}", list.join("\n"));
    }
    let mut items = vec![json!({"type": "text", "text": text, "text_elements": []})];
    items.extend(
        images
            .iter()
            .map(|p| json!({"type": "localImage", "path": p})),
    );
    Value::Array(items)
}

/// `path`, or a copy fitted to OpenAI's limits.
fn fitted(input: &AgentTurnInput, path: &std::path::Path) -> std::path::PathBuf {
    weft_attachments::fitted_path(
        path,
        weft_attachments::OPENAI,
        &input.state_dir,
        &input.task_id,
    )
}

fn start_params(s: &CodexSession, input: &AgentTurnInput, items: Value) -> Value {
    let mut p = json!({"threadId": s.thread_id, "input": items});
    if let Some(m) = &input.model {
        p["model"] = json!(m);
    }
    if let Some(e) = &input.effort {
        p["effort"] = json!(e);
    }
    if let Some(mode) = &s.knobs.collaboration_mode {
        let model = input.model.clone().or_else(|| s.model.clone());
        p["collaborationMode"] = json!({
            "mode": mode,
            "settings": {"model": model, "developer_instructions": null},
        });
    }
    p
}

struct Loop<'a> {
    s: &'a mut CodexSession,
    ctx: &'a DriverContext,
    start_id: u64,
    /// Each steer's input items, by the id of its `turn/steer` request.
    steers: HashMap<u64, Value>,
    waiting_steers: Vec<Value>,
    undelivered: Vec<Value>,
    stopping: bool,
    interrupt_sent: bool,
    bad_lines: usize,
    answers: FuturesUnordered<BoxFuture<'static, (Value, Value)>>,
}

enum Step {
    Go,
    Done(Outcome),
}

fn ok(s: &CodexSession) -> DriverResult {
    DriverResult {
        ok: true,
        session_id: Some(s.thread_id.clone()),
        ..Default::default()
    }
}

fn failed(s: &CodexSession, error: Option<String>) -> DriverResult {
    DriverResult {
        ok: false,
        session_id: Some(s.thread_id.clone()),
        error,
        ..Default::default()
    }
}

/// Runs one turn on `s`.
pub async fn run(
    s: &mut CodexSession,
    input: &AgentTurnInput,
    ctx: &DriverContext,
    cfg: &Config,
) -> Outcome {
    let params = start_params(s, input, user_input(input));
    run_method(s, input, ctx, cfg, "turn/start", params).await
}

/// Runs one turn on `s` that `method` starts: `turn/start`, or a command codex runs as
/// a turn of its own (`thread/compact/start`, `review/start`).
pub async fn run_method(
    s: &mut CodexSession,
    input: &AgentTurnInput,
    ctx: &DriverContext,
    cfg: &Config,
    method: &str,
    params: Value,
) -> Outcome {
    s.norm.begin_turn(None);
    if let Some(lost) = s.lost_thread.take() {
        ctx.emit(DriverEvent::Notice {
            text: format!(
                "codex had no record of thread {lost} (it stopped before saving it); \
                 this turn starts a new thread"
            ),
        });
    }
    ctx.emit(DriverEvent::Session {
        session_id: s.thread_id.clone(),
        model: input.model.clone().or_else(|| s.model.clone()),
    });
    for server in s.norm.mcp_servers().to_vec() {
        let e = DriverEvent::Mcp { server };
        ctx.emit(weft_kernel::mcp::with_captured_stderr(
            e,
            &input.state_dir,
            &input.session_key,
        ));
    }
    let mut steer_rx = ctx.register_steer();
    let start_id = match s.request(method, params).await {
        Ok(id) => id,
        Err(e) => {
            return Outcome {
                result: failed(s, Some(e)),
                keep: false,
            }
        }
    };
    let mut lp = Loop {
        s,
        ctx,
        start_id,
        steers: HashMap::new(),
        waiting_steers: Vec::new(),
        undelivered: Vec::new(),
        stopping: false,
        interrupt_sent: false,
        bad_lines: 0,
        answers: FuturesUnordered::new(),
    };
    let mut stop_deadline: Option<Instant> = None;
    let mut last_heard = Instant::now();
    let mut steer_open = true;
    loop {
        let live_due = lp.s.norm.live_due().map(Instant::from_std);
        let step = tokio::select! {
            next = lp.s.next() => {
                last_heard = Instant::now();
                lp.message(next, input).await
            }
            Some((id, result)) = lp.answers.next(), if !lp.answers.is_empty() => {
                last_heard = Instant::now();
                match lp.s.respond(&id, result).await {
                    Ok(()) => Step::Go,
                    Err(e) => Step::Done(Outcome { result: failed(lp.s, Some(e)), keep: false }),
                }
            }
            steer = steer_rx.recv(), if steer_open => {
                match steer {
                    Some(steer) => lp.steer(input_items(input, &steer.text, &steer.attachments)).await,
                    None => { steer_open = false; Step::Go }
                }
            }
            _ = ctx.cancelled(), if !lp.stopping => {
                lp.stopping = true;
                stop_deadline = Some(Instant::now() + cfg.stop_grace);
                lp.interrupt().await
            }
            _ = sleep_until(stop_deadline), if stop_deadline.is_some() => {
                lp.s.proc.kill();
                Step::Done(Outcome { result: failed(lp.s, None), keep: false })
            }
            _ = sleep_until(live_due), if live_due.is_some() => {
                let mut events = Vec::new();
                lp.s.norm.flush_live(std::time::Instant::now(), &mut events);
                lp.emit_all(events, input);
                Step::Go
            }
            _ = tokio::time::sleep_until(last_heard + cfg.stall),
                if !lp.stopping && lp.answers.is_empty() && !lp.s.norm.has_running_calls() => {
                let _ = lp.interrupt().await;
                lp.s.proc.kill();
                let why = format!(
                    "codex sent nothing for {}s; the turn was abandoned and codex restarted",
                    cfg.stall.as_secs()
                );
                Step::Done(Outcome { result: failed(lp.s, Some(why)), keep: false })
            }
        };
        if let Step::Done(outcome) = step {
            return outcome;
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

impl Loop<'_> {
    fn emit_all(&self, events: Vec<DriverEvent>, input: &AgentTurnInput) {
        for e in events {
            let e = weft_kernel::mcp::with_captured_stderr(e, &input.state_dir, &input.session_key);
            self.ctx.emit(e);
        }
    }

    async fn interrupt(&mut self) -> Step {
        let Some(turn_id) = self.s.norm.turn_id().map(String::from) else {
            return Step::Go; // sent once `turn/start` answers
        };
        if self.interrupt_sent {
            return Step::Go;
        }
        self.interrupt_sent = true;
        let params = json!({"threadId": self.s.thread_id, "turnId": turn_id});
        match self.s.request("turn/interrupt", params).await {
            Ok(_) => Step::Go,
            Err(_) => Step::Done(Outcome {
                result: failed(self.s, None),
                keep: false,
            }),
        }
    }

    async fn steer(&mut self, items: Value) -> Step {
        let Some(turn_id) = self.s.norm.turn_id().map(String::from) else {
            self.waiting_steers.push(items);
            return Step::Go;
        };
        let params = json!({
            "threadId": self.s.thread_id,
            "expectedTurnId": turn_id,
            "input": items.clone(),
        });
        match self.s.request("turn/steer", params).await {
            Ok(id) => {
                self.steers.insert(id, items);
                Step::Go
            }
            Err(e) => Step::Done(Outcome {
                result: failed(self.s, Some(e)),
                keep: false,
            }),
        }
    }

    async fn message(&mut self, next: Next, input: &AgentTurnInput) -> Step {
        match next {
            Next::Message(Incoming::Response { id, result }) => self.response(id, result).await,
            Next::Message(Incoming::Request { id, method, params }) => {
                self.server_request(id, &method, params).await
            }
            Next::Message(Incoming::Notification { method, params }) => {
                let mut events = Vec::new();
                let end = self.s.norm.notification(&method, params, &mut events);
                self.emit_all(events, input);
                match end {
                    Some(end) => self.turn_ended(end, input).await,
                    None => Step::Go,
                }
            }
            Next::Malformed(why) => {
                self.bad_lines += 1;
                tracing::warn!("codex wrote a line that is not JSON-RPC: {why}");
                if self.bad_lines == 1 {
                    self.ctx.emit(DriverEvent::Notice {
                        text: format!("codex wrote a line that is not JSON-RPC (skipped): {why}"),
                    });
                }
                Step::Go
            }
            Next::Eof => {
                let why = self.s.exit_reason().await;
                let error = (!self.stopping).then(|| format!("codex exited mid-turn ({why})"));
                Step::Done(Outcome {
                    result: failed(self.s, error),
                    keep: false,
                })
            }
        }
    }

    async fn response(&mut self, id: u64, result: Result<Value, rpc::RpcError>) -> Step {
        if id == self.start_id {
            if result.as_ref().is_ok_and(|v| v.get("turn").is_none()) {
                // `thread/compact/start` answers `{}`: the turn's id comes with
                // `turn/started`.
                return Step::Go;
            }
            let turn = result
                .map_err(|e| e.to_string())
                .and_then(|v| serde_json::from_value::<TurnEnvelope>(v).map_err(|e| e.to_string()));
            let turn = match turn {
                Ok(t) => t.turn,
                Err(e) => {
                    return Step::Done(Outcome {
                        result: failed(self.s, Some(format!("codex refused the turn: {e}"))),
                        keep: true,
                    })
                }
            };
            self.s.norm.set_turn_id(&turn.id);
            if self.stopping {
                return self.interrupt().await;
            }
            for items in std::mem::take(&mut self.waiting_steers) {
                if let Step::Done(o) = self.steer(items).await {
                    return Step::Done(o);
                }
            }
        } else if let Some(items) = self.steers.remove(&id) {
            if let Err(e) = result {
                tracing::info!("codex refused a steer ({e}); it follows the turn instead");
                self.undelivered.push(items);
            }
        }
        Step::Go
    }

    async fn server_request(&mut self, id: Value, method: &str, params: Value) -> Step {
        let pending: Result<Pending, String> = match method {
            "item/commandExecution/requestApproval" => {
                serde_json::from_value::<CommandApproval>(params)
                    .map(|r| {
                        let prompt_id = format!("{}:{}:{id}", self.s.thread_id, r.item_id);
                        interact::command_approval(prompt_id, &r, self.s.norm.call(&r.item_id))
                    })
                    .map_err(|e| e.to_string())
            }
            "item/fileChange/requestApproval" => {
                serde_json::from_value::<FileChangeApproval>(params)
                    .map(|r| {
                        let prompt_id = format!("{}:{}:{id}", self.s.thread_id, r.item_id);
                        interact::file_change_approval(prompt_id, &r, self.s.norm.call(&r.item_id))
                    })
                    .map_err(|e| e.to_string())
            }
            "item/tool/requestUserInput" => serde_json::from_value::<UserInputRequest>(params)
                .map(|r| {
                    let prompt_id = format!("{}:{}:{id}", self.s.thread_id, r.item_id);
                    interact::user_input(prompt_id, &r)
                })
                .map_err(|e| e.to_string()),
            "mcpServer/elicitation/request" => {
                match serde_json::from_value::<McpElicitation>(params) {
                    Ok(r) if r.is_tool_approval() => {
                        let prompt_id = format!("{}:mcp:{id}", self.s.thread_id);
                        let tool = crate::interact::quoted_tool(&r.message);
                        let call = self.s.norm.running_mcp_call(&r.server_name, tool);
                        Ok(interact::mcp_tool_approval(prompt_id, &r, call))
                    }
                    Ok(r) => {
                        let prompt_id = format!("{}:form:{id}", self.s.thread_id);
                        match crate::elicit::form(prompt_id, &r) {
                            Some(p) => Ok(p),
                            None => {
                                tracing::info!(
                                    "the MCP server {} asked in {} mode, which Weft does not show; declined",
                                    r.server_name,
                                    r.mode
                                );
                                let declined = json!({"action": "decline", "content": null});
                                return match self.s.respond(&id, declined).await {
                                    Ok(()) => Step::Go,
                                    Err(e) => Step::Done(Outcome {
                                        result: failed(self.s, Some(e)),
                                        keep: false,
                                    }),
                                };
                            }
                        }
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
            other => {
                tracing::info!(
                    "codex asked `{other}`, which Weft does not handle; answered with an error"
                );
                let why = interact::unsupported(other);
                return self.reply_error(&id, rpc::METHOD_NOT_FOUND, &why).await;
            }
        };
        match pending {
            Ok(pending) => {
                let ctx = self.ctx.clone();
                self.answers.push(Box::pin(async move {
                    let response = ctx.ask_user(pending.interaction.clone()).await;
                    (id, pending.result(&response))
                }));
                Step::Go
            }
            Err(e) => {
                let why = format!("Weft could not read this `{method}` request: {e}");
                self.reply_error(&id, rpc::INVALID_PARAMS, &why).await
            }
        }
    }

    async fn reply_error(&mut self, id: &Value, code: i64, why: &str) -> Step {
        match self.s.respond_error(id, code, why).await {
            Ok(()) => Step::Go,
            Err(e) => Step::Done(Outcome {
                result: failed(self.s, Some(e)),
                keep: false,
            }),
        }
    }

    async fn turn_ended(&mut self, end: crate::normalize::TurnEnd, input: &AgentTurnInput) -> Step {
        match end.status.as_str() {
            "completed" if !self.undelivered.is_empty() && !self.stopping => {
                // Every undelivered steer's items, in order, as one follow-up.
                let items: Vec<Value> = std::mem::take(&mut self.undelivered)
                    .into_iter()
                    .flat_map(|v| v.as_array().cloned().unwrap_or_default())
                    .collect();
                self.ctx.emit(DriverEvent::Notice {
                    text: "the steer arrived as codex finished; it was sent as a follow-up".into(),
                });
                self.s.norm.begin_codex_turn();
                let params = start_params(self.s, input, Value::Array(items));
                match self.s.request("turn/start", params).await {
                    Ok(id) => {
                        self.start_id = id;
                        self.interrupt_sent = false;
                        Step::Go
                    }
                    Err(e) => Step::Done(Outcome {
                        result: failed(self.s, Some(e)),
                        keep: false,
                    }),
                }
            }
            "completed" => Step::Done(Outcome {
                result: ok(self.s),
                keep: true,
            }),
            "interrupted" if self.stopping => Step::Done(Outcome {
                result: failed(self.s, None),
                keep: true,
            }),
            "interrupted" => Step::Done(Outcome {
                result: failed(
                    self.s,
                    Some("codex interrupted the turn (a request was answered with stop)".into()),
                ),
                keep: true,
            }),
            _ => {
                let error = end
                    .error
                    .or_else(|| self.s.norm.error().map(String::from))
                    .unwrap_or_else(|| format!("codex ended the turn as `{}`", end.status));
                Step::Done(Outcome {
                    result: failed(self.s, Some(error)),
                    keep: true,
                })
            }
        }
    }
}

/// How long `close` waits for a clean exit.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);
