//! Claude Code's stream-json lines → [`DriverEvent`]s, with no I/O.
//!
//! The hazards this handles:
//! - With `--include-partial-messages` the reply arrives twice: as `stream_event`
//!   deltas, then again as one `assistant` line per finished block. Deltas are emitted
//!   as they come; an `assistant` block is then matched against what its message
//!   already streamed, and only a part that never streamed (a lost delta, or no
//!   partial messages at all) is emitted. Thinking is handled the same way.
//! - A subagent's lines carry `parent_tool_use_id`: its tool calls are kept (with
//!   `parentId`), its text is not the reply.
//! - `result` closes one *CLI* turn, not necessarily the Weft turn: a queued steer, a
//!   background task waking the agent, or a follow-up the driver sent each make one
//!   more. Usage is summed over them; `total_cost_usd` is per process, so the cost is
//!   counted from the figure the turn started at.
//! - The turn loop decides what a result means; the normalizer only reports
//!   [`Signal`]s (init, result, control requests, tasks, replays).

use std::collections::HashMap;

use serde_json::Value;
use weft_protocol::{DriverEvent, Plan, PlanStep, SubAgent, ToolCall, ToolStatus, Usage};

use crate::commands::{self, Commands};
use crate::tools::{self, TaskList};
use crate::wire::{
    content_text, ApiUsage, AssistantLine, Block, ControlRequest, Delta, OutLine, ResultLine,
    StreamEvent, SystemLine, UserLine,
};

/// What a line means for the turn loop, besides its events.
#[derive(Debug, Clone, PartialEq)]
pub enum Signal {
    /// A CLI turn starts (one per user message the CLI takes as its own turn).
    Init {
        /// The session id.
        session_id: String,
    },
    /// A CLI turn ended.
    Result(TurnEnd),
    /// The CLI asks the host.
    ControlRequest {
        /// Answer with this id.
        request_id: String,
        /// What is asked.
        request: ControlRequest,
    },
    /// The CLI answered one of our control requests.
    ControlResponse {
        /// Which.
        request_id: String,
    },
    /// A task (shell or subagent) started.
    TaskStarted {
        /// Its id.
        task_id: String,
        /// True for subagents (longer caps).
        agent: bool,
    },
    /// A task finished.
    TaskDone {
        /// Its id.
        task_id: String,
    },
    /// The CLI echoed a user message we wrote.
    Replay {
        /// Its text.
        text: String,
    },
}

/// A `result`, digested.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnEnd {
    /// `success`, `error_during_execution`, …
    pub subtype: String,
    /// The CLI says it failed.
    pub is_error: bool,
    /// The final text the CLI reports.
    pub text: Option<String>,
    /// The turn was interrupted (by us).
    pub interrupted: bool,
    /// The CLI answered without running the prompt ("No response requested.").
    pub noop: bool,
    /// A clean end right after tool results, with no closing text.
    pub truncated: bool,
    /// Diagnostics the CLI gave.
    pub errors: Vec<String>,
}

/// The text the CLI makes up when it resumes a session without running the prompt.
pub const NOOP_REPLY: &str = "No response requested.";

#[derive(Debug, Default)]
struct MsgText {
    text: String,
    text_confirmed: usize,
    thinking: String,
    thinking_confirmed: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Last {
    #[default]
    Nothing,
    Text,
    ToolUse,
    ToolResult,
}

/// One turn's normalizer. Create one per Weft turn.
#[derive(Debug, Default)]
pub struct Normalizer {
    session_id: Option<String>,
    model: Option<String>,
    msgs: HashMap<String, MsgText>,
    stream_msg: Option<String>,
    last_text_msg: Option<String>,
    text_emitted: bool,
    text_tail: [u8; 2],
    reasoning_emitted: bool,
    last_reasoning_msg: Option<String>,
    tools: HashMap<String, ToolCall>,
    agents: HashMap<String, SubAgent>,
    tasks: TaskList,
    last: Last,
    synthetic_noop: bool,
    interrupted: bool,
    usage_sum: ApiUsage,
    context_tokens: Option<u64>,
    context_window: Option<u64>,
    cost_base: f64,
    cost: Option<f64>,
    compacting: bool,
    permission_mode: Option<String>,
    /// The session's slash commands, as far as this turn knows them.
    pub commands: Commands,
    /// The tools the last `init` line listed.
    pub tools_reported: Option<Vec<String>>,
}

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

impl Normalizer {
    /// A normalizer for a turn of a process whose `total_cost_usd` stood at `cost_base`
    /// when the turn started.
    pub fn new(cost_base: f64) -> Self {
        Self {
            cost_base,
            ..Default::default()
        }
    }

    /// The session id seen so far.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The process's `total_cost_usd` at the last result.
    pub fn process_cost(&self) -> Option<f64> {
        self.cost.map(|c| c + self.cost_base)
    }

    /// True once any reply text was emitted.
    pub fn has_text(&self) -> bool {
        self.text_emitted
    }

    /// Calls still running (for a stop: they end as failed).
    pub fn running_calls(&self) -> Vec<ToolCall> {
        self.tools
            .values()
            .filter(|c| c.status == ToolStatus::Running)
            .cloned()
            .collect()
    }

    /// Folds one parsed line in.
    pub fn line(&mut self, line: OutLine, out: &mut Vec<DriverEvent>) -> Vec<Signal> {
        let mut signals = Vec::new();
        match line {
            OutLine::System(s) => self.system(s, out, &mut signals),
            OutLine::StreamEvent(e) => {
                if e.parent_tool_use_id.is_none() {
                    self.stream_event(e.event, out);
                }
            }
            OutLine::Assistant(a) => self.assistant(a, out),
            OutLine::User(u) => self.user(u, out, &mut signals),
            OutLine::Result(r) => signals.push(self.result(r, out)),
            OutLine::ControlRequest(c) => signals.push(Signal::ControlRequest {
                request_id: c.request_id,
                request: c.request,
            }),
            OutLine::ControlResponse(c) => {
                if c.response.request_id == commands::INIT_REQUEST_ID {
                    if let Some(r) = &c.response.response {
                        self.commands.described = commands::from_initialize(r);
                        self.emit_commands(out);
                    }
                }
                signals.push(Signal::ControlResponse {
                    request_id: c.response.request_id,
                })
            }
            OutLine::RateLimitEvent(r) => out.push(limit_event(r.rate_limit_info)),
            OutLine::Other => {}
        }
        signals
    }

    fn emit_commands(&mut self, out: &mut Vec<DriverEvent>) {
        if let Some(commands) = self.commands.changed() {
            out.push(DriverEvent::Commands { commands });
        }
    }

    /// Emits reply text directly (text recovered from the session file).
    /// It continues the text so far (the recovered tail already carries any separator).
    pub fn push_recovered_text(&mut self, text: &str, out: &mut Vec<DriverEvent>) {
        let id = self.last_text_msg.clone().unwrap_or_default();
        self.push_text(&id, text, out);
    }

    fn system(&mut self, s: SystemLine, out: &mut Vec<DriverEvent>, signals: &mut Vec<Signal>) {
        match s.subtype.as_str() {
            "init" => {
                let Some(id) = s.session_id else { return };
                if self.session_id.as_deref() != Some(id.as_str()) || self.model != s.model {
                    self.session_id = Some(id.clone());
                    self.model = s.model.clone();
                    out.push(DriverEvent::Session {
                        session_id: id.clone(),
                        model: s.model,
                    });
                }
                if self.context_window.is_none() {
                    self.context_window = self.model.as_deref().map(window_of);
                }
                if self.permission_mode.is_none() {
                    self.permission_mode = s.permission_mode;
                }
                // A server that did not connect is also worth a lasting note; a
                // connected one is not (every spawn would repeat it).
                for m in &s.mcp_servers {
                    out.push(DriverEvent::Mcp {
                        server: mcp_status(m),
                    });
                    if m.status != "connected" {
                        out.push(DriverEvent::Notice {
                            text: format!("MCP server {}: {}", m.name, m.status),
                        });
                    }
                }
                if !s.tools.is_empty() {
                    self.tools_reported = Some(s.tools);
                }
                if !s.slash_commands.is_empty() {
                    self.commands.recognized = Some(s.slash_commands);
                    self.emit_commands(out);
                }
                signals.push(Signal::Init { session_id: id });
            }
            "status" => {
                if let Some(mode) = s.permission_mode {
                    if self.permission_mode.as_deref() != Some(mode.as_str()) {
                        out.push(DriverEvent::Notice {
                            text: format!("permission mode is now {mode}"),
                        });
                        self.permission_mode = Some(mode);
                    }
                }
                let compacting = s.status.as_deref() == Some("compacting");
                if compacting != self.compacting {
                    self.compacting = compacting;
                    out.push(DriverEvent::Activity {
                        text: if compacting {
                            "compacting context".into()
                        } else {
                            String::new()
                        },
                    });
                }
            }
            "compact_boundary" => out.push(DriverEvent::Notice {
                text: "context compacted".into(),
            }),
            "api_retry" => {
                let status = s
                    .error_status
                    .map(|c| format!(" (HTTP {c})"))
                    .unwrap_or_default();
                out.push(DriverEvent::Activity {
                    text: format!(
                        "model API error{status}, retry {} of {}",
                        s.attempt.unwrap_or(0),
                        s.max_retries.unwrap_or(0)
                    ),
                });
            }
            "task_started" => {
                if let Some(task_id) = s.task_id {
                    let agent = s.task_type.as_deref() == Some("local_agent");
                    signals.push(Signal::TaskStarted { task_id, agent });
                }
            }
            "task_notification" => {
                if let Some(task_id) = s.task_id {
                    signals.push(Signal::TaskDone { task_id });
                }
            }
            _ => {}
        }
    }

    fn stream_event(&mut self, event: StreamEvent, out: &mut Vec<DriverEvent>) {
        match event {
            StreamEvent::MessageStart { message } => {
                if let Some(u) = message.usage {
                    self.context_tokens = Some(u.context_tokens());
                }
                self.stream_msg = Some(message.id);
            }
            StreamEvent::ContentBlockStart {
                content_block: Block::Text { text },
                ..
            } if !text.is_empty() => self.stream_text(&text, out),
            StreamEvent::ContentBlockDelta { delta, .. } => match delta {
                Delta::TextDelta { text } => self.stream_text(&text, out),
                Delta::ThinkingDelta { thinking } => {
                    let id = self.stream_msg.clone().unwrap_or_default();
                    self.msgs
                        .entry(id.clone())
                        .or_default()
                        .thinking
                        .push_str(&thinking);
                    self.push_reasoning(&id, &thinking, out);
                }
                _ => {}
            },
            StreamEvent::MessageDelta { usage: Some(u), .. } => {
                if u.input_tokens.is_some() || u.cache_read_input_tokens.is_some() {
                    self.context_tokens = Some(u.context_tokens());
                } else if let (Some(ctx), Some(o)) = (self.context_tokens, u.output_tokens) {
                    self.context_tokens = Some(ctx + o);
                }
                out.push(self.usage_event());
            }
            _ => {}
        }
    }

    fn stream_text(&mut self, text: &str, out: &mut Vec<DriverEvent>) {
        let id = self.stream_msg.clone().unwrap_or_default();
        self.msgs.entry(id.clone()).or_default().text.push_str(text);
        self.push_text(&id, text, out);
        self.last = Last::Text;
    }

    fn push_text(&mut self, msg_id: &str, text: &str, out: &mut Vec<DriverEvent>) {
        if text.is_empty() {
            return;
        }
        if self.text_emitted && self.last_text_msg.as_deref() != Some(msg_id) {
            let sep = match self.text_tail {
                [b'\n', b'\n'] => "",
                [_, b'\n'] => "\n",
                _ => "\n\n",
            };
            if !sep.is_empty() {
                out.push(DriverEvent::Text { delta: sep.into() });
            }
        }
        self.last_text_msg = Some(msg_id.to_string());
        self.text_emitted = true;
        let bytes = text.as_bytes();
        self.text_tail = match bytes {
            [.., a, b] => [*a, *b],
            [b] => [self.text_tail[1], *b],
            [] => self.text_tail,
        };
        out.push(DriverEvent::Text { delta: text.into() });
    }

    fn push_reasoning(&mut self, msg_id: &str, text: &str, out: &mut Vec<DriverEvent>) {
        if text.is_empty() {
            return;
        }
        if self.reasoning_emitted && self.last_reasoning_msg.as_deref() != Some(msg_id) {
            out.push(DriverEvent::Reasoning {
                delta: "\n\n".into(),
            });
        }
        self.reasoning_emitted = true;
        self.last_reasoning_msg = Some(msg_id.to_string());
        out.push(DriverEvent::Reasoning { delta: text.into() });
    }

    fn assistant(&mut self, a: AssistantLine, out: &mut Vec<DriverEvent>) {
        let msg_id = a.message.id;
        if let Some(parent) = a.parent_tool_use_id {
            for block in a.message.content {
                if let Block::ToolUse { id, name, input } = block {
                    self.tool_started(id, name, input, Some(parent.clone()), out);
                }
            }
            return;
        }
        let synthetic = a.message.model.as_deref() == Some("<synthetic>");
        if self.stream_msg.as_deref() != Some(msg_id.as_str()) && !synthetic {
            // No partial messages for this one: its own usage is the best figure.
            if let Some(u) = a.message.usage {
                self.context_tokens = Some(u.context_tokens());
            }
        }
        for block in a.message.content {
            match block {
                Block::Text { text } => {
                    if synthetic && text.trim() == NOOP_REPLY {
                        self.synthetic_noop = true;
                        continue;
                    }
                    let m = self.msgs.entry(msg_id.clone()).or_default();
                    let rest = &m.text[m.text_confirmed..];
                    let missing = if rest.starts_with(&text) {
                        m.text_confirmed += text.len();
                        None
                    } else if let Some(missing) = text.strip_prefix(rest) {
                        let missing = missing.to_string();
                        m.text.push_str(&missing);
                        m.text_confirmed = m.text.len();
                        Some(missing)
                    } else {
                        m.text.push_str(&text);
                        m.text_confirmed = m.text.len();
                        Some(text.clone())
                    };
                    if let Some(missing) = missing {
                        self.push_text(&msg_id, &missing, out);
                    }
                    if !text.trim().is_empty() {
                        self.last = Last::Text;
                    }
                }
                Block::Thinking { thinking } => {
                    let m = self.msgs.entry(msg_id.clone()).or_default();
                    let rest = &m.thinking[m.thinking_confirmed..];
                    let missing = if rest.starts_with(&thinking) {
                        m.thinking_confirmed += thinking.len();
                        None
                    } else if let Some(missing) = thinking.strip_prefix(rest) {
                        let missing = missing.to_string();
                        m.thinking.push_str(&missing);
                        m.thinking_confirmed = m.thinking.len();
                        Some(missing)
                    } else {
                        m.thinking.push_str(&thinking);
                        m.thinking_confirmed = m.thinking.len();
                        Some(thinking)
                    };
                    if let Some(missing) = missing {
                        self.push_reasoning(&msg_id, &missing, out);
                    }
                }
                Block::ToolUse { id, name, input } => {
                    self.last = Last::ToolUse;
                    self.tool_started(id, name, input, None, out);
                }
                _ => {}
            }
        }
    }

    fn tool_started(
        &mut self,
        id: String,
        name: String,
        input: Value,
        parent: Option<String>,
        out: &mut Vec<DriverEvent>,
    ) {
        let call = ToolCall {
            id: id.clone(),
            summary: tools::summary(&name, &input),
            kind: tools::kind(&name),
            name: name.clone(),
            input: input.clone(),
            result: None,
            status: ToolStatus::Running,
            parent_id: parent,
            changes: tools::file_changes(&name, &input, None),
        };
        out.push(DriverEvent::Tool { call: call.clone() });
        self.tools.insert(id.clone(), call);
        if tools::is_subagent_tool(&name) {
            let agent = SubAgent {
                id: id.clone(),
                name: input
                    .get("subagent_type")
                    .and_then(Value::as_str)
                    .unwrap_or("subagent")
                    .to_string(),
                summary: input
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                status: ToolStatus::Running,
                result: None,
            };
            out.push(DriverEvent::Subagent {
                agent: agent.clone(),
            });
            self.agents.insert(id, agent);
        } else if name == "TodoWrite" {
            if let Some(steps) = tools::todo_steps(&input) {
                out.push(plan(None, steps));
            }
        } else if name == "ExitPlanMode" {
            if let Some(text) = input.get("plan").and_then(Value::as_str) {
                out.push(plan(Some(text.to_string()), plan_steps(text)));
            }
        }
    }

    fn user(&mut self, u: UserLine, out: &mut Vec<DriverEvent>, signals: &mut Vec<Signal>) {
        if u.is_replay {
            signals.push(Signal::Replay {
                text: u.message.text(),
            });
            return;
        }
        let nested = u.parent_tool_use_id.is_some();
        for block in u.message.blocks() {
            match block {
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    if !nested {
                        self.last = Last::ToolResult;
                    }
                    self.tool_finished(
                        &tool_use_id,
                        &content,
                        is_error,
                        u.tool_use_result.as_ref(),
                        out,
                    );
                }
                Block::Text { text } if !nested && text.starts_with("[Request interrupted") => {
                    self.interrupted = true;
                }
                _ => {}
            }
        }
    }

    fn tool_finished(
        &mut self,
        id: &str,
        content: &Value,
        is_error: Option<bool>,
        structured: Option<&Value>,
        out: &mut Vec<DriverEvent>,
    ) {
        let Some(call) = self.tools.get_mut(id) else {
            return;
        };
        let failed = is_error.unwrap_or(false);
        call.result = Some(content_text(content));
        if !failed {
            if let Some(original) = tools::original_file(structured) {
                call.changes = tools::file_changes(&call.name, &call.input, Some(original));
            }
        }
        call.status = if failed {
            ToolStatus::Failed
        } else {
            ToolStatus::Done
        };
        let call = call.clone();
        out.push(DriverEvent::Tool { call: call.clone() });
        if let Some(agent) = self.agents.get_mut(id) {
            agent.status = call.status;
            agent.result = call.result.clone();
            out.push(DriverEvent::Subagent {
                agent: agent.clone(),
            });
        }
        if failed {
            return;
        }
        match call.name.as_str() {
            "TodoWrite" => {
                let steps = structured
                    .and_then(|s| s.get("newTodos"))
                    .and_then(|t| tools::todo_steps(&serde_json::json!({ "todos": t })))
                    .or_else(|| tools::todo_steps(&call.input));
                if let Some(steps) = steps {
                    out.push(plan(None, steps));
                }
            }
            "TaskCreate" => {
                self.tasks.created(&call.input, structured);
                out.push(plan(None, self.tasks.steps()));
            }
            "TaskUpdate" if self.tasks.updated(&call.input) => {
                out.push(plan(None, self.tasks.steps()));
            }
            _ => {}
        }
        if let Some(path) = tools::written_path(&call.name, &call.input, structured) {
            out.push(DriverEvent::Artifact {
                artifact: tools::file_artifact(&path, Some(call.summary.clone())),
            });
        } else if call.name == "Read" && content_has_image(content) {
            if let Some(path) = call.input.get("file_path").and_then(Value::as_str) {
                out.push(DriverEvent::Artifact {
                    artifact: tools::file_artifact(path, Some(call.summary.clone())),
                });
            }
        }
    }

    fn result(&mut self, r: ResultLine, out: &mut Vec<DriverEvent>) -> Signal {
        if let Some(u) = r.usage {
            self.usage_sum = ApiUsage {
                input_tokens: add(self.usage_sum.input_tokens, u.input_tokens),
                output_tokens: add(self.usage_sum.output_tokens, u.output_tokens),
                cache_read_input_tokens: add(
                    self.usage_sum.cache_read_input_tokens,
                    u.cache_read_input_tokens,
                ),
                cache_creation_input_tokens: add(
                    self.usage_sum.cache_creation_input_tokens,
                    u.cache_creation_input_tokens,
                ),
            };
        }
        if let Some(w) = r
            .model_usage
            .values()
            .filter_map(|m| m.context_window)
            .max()
        {
            self.context_window = Some(w);
        }
        if let Some(total) = r.total_cost_usd {
            self.cost = Some((total - self.cost_base).max(0.0));
        }
        out.push(self.usage_event());
        let interrupted = std::mem::take(&mut self.interrupted)
            || matches!(
                r.terminal_reason.as_deref(),
                Some("aborted_streaming" | "aborted_tools")
            );
        let noop = std::mem::take(&mut self.synthetic_noop)
            || (r.result.as_deref().map(str::trim) == Some(NOOP_REPLY)
                && r.duration_api_ms == Some(0));
        let truncated = !r.is_error && !interrupted && self.last == Last::ToolResult;
        self.last = Last::Nothing;
        Signal::Result(TurnEnd {
            subtype: r.subtype,
            is_error: r.is_error,
            text: r.result,
            interrupted,
            noop,
            truncated,
            errors: r.errors,
        })
    }

    fn usage_event(&self) -> DriverEvent {
        let s = &self.usage_sum;
        let context_percent = match (self.context_tokens, self.context_window) {
            (Some(used), Some(window)) if window > 0 => {
                Some(((used as f64) * 10_000.0 / window as f64).round() / 100.0)
            }
            _ => None,
        };
        DriverEvent::Usage {
            usage: Usage {
                input_tokens: add(s.input_tokens, s.cache_creation_input_tokens),
                output_tokens: s.output_tokens,
                cached_input_tokens: s.cache_read_input_tokens,
                context_used_tokens: self.context_tokens,
                context_percent,
                cost_usd: self.cost,
                provider_name: Some("anthropic".into()),
            },
        }
    }
}

fn plan(explanation: Option<String>, steps: Vec<PlanStep>) -> DriverEvent {
    DriverEvent::Plan {
        plan: Plan { explanation, steps },
    }
}

/// Numbered or bulleted lines of a plan's text as steps.
fn plan_steps(text: &str) -> Vec<PlanStep> {
    text.lines()
        .map(str::trim)
        .filter_map(|l| {
            let rest = l
                .strip_prefix("- ")
                .or_else(|| l.strip_prefix("* "))
                .or_else(|| {
                    let digits = l.chars().take_while(char::is_ascii_digit).count();
                    (digits > 0)
                        .then(|| {
                            l[digits..]
                                .strip_prefix(". ")
                                .or(l[digits..].strip_prefix(") "))
                        })
                        .flatten()
                })?;
            Some(PlanStep {
                text: rest.trim().to_string(),
                status: Default::default(),
            })
        })
        .collect()
}

fn content_has_image(content: &Value) -> bool {
    content.as_array().is_some_and(|a| {
        a.iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("image"))
    })
}

/// The context window a model name implies when the CLI has not said (`[1m]` is the
/// million-token variant).
pub fn window_of(model: &str) -> u64 {
    if model.contains("[1m]") {
        1_000_000
    } else {
        200_000
    }
}

/// A `rate_limit_event`'s window as Weft keeps it: used percent 0–100, reset in ms.
fn limit_event(info: crate::wire::RateLimitInfo) -> DriverEvent {
    let resets_at = info.resets_at.map(|t| {
        // Seconds since the epoch (a value already in ms is kept).
        if t < 1e12 {
            (t * 1000.0) as i64
        } else {
            t as i64
        }
    });
    DriverEvent::Limit {
        limit: weft_protocol::LimitWindow {
            window: info.rate_limit_type.unwrap_or_else(|| "unified".into()),
            status: if info.status.is_empty() {
                "allowed".into()
            } else {
                info.status
            },
            used_percent: info.utilization.map(|u| u * 100.0),
            resets_at,
            seen_at: weft_kernel::now_ms(),
        },
    }
}

/// A server of an `init` line as Weft's status: `needs-auth` and the like are failures
/// whose reason is the CLI's word for them.
fn mcp_status(m: &crate::wire::McpServerLine) -> weft_protocol::McpServerStatus {
    use weft_protocol::McpState;
    let (status, error) = match m.status.as_str() {
        "connected" => (McpState::Connected, None),
        "pending" => (McpState::Pending, None),
        "failed" => (McpState::Failed, None),
        other => (McpState::Failed, Some(other.to_string())),
    };
    weft_protocol::McpServerStatus {
        name: m.name.clone(),
        status,
        error,
    }
}

#[cfg(test)]
#[path = "normalize_limit_tests.rs"]
mod limit_tests;
