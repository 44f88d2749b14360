//! `codex app-server` notifications → [`DriverEvent`]s. Pure: no process, no clock,
//! so the recorded transcripts drive it directly in tests.
//!
//! One [`Normalizer`] lives as long as its process (so an unknown notification or a
//! repeated warning is reported once per process); [`Normalizer::begin_turn`] resets
//! what belongs to one turn. What maps where:
//! - `item/agentMessage/delta` → text (messages of one turn separated by a blank
//!   line; a message that arrives whole on `item/completed` is added then);
//! - `item/reasoning/summaryTextDelta` and `textDelta` → reasoning;
//! - `commandExecution` items → `shell` tool calls; while one runs, its row shows the
//!   latest part of what `item/commandExecution/outputDelta` brought, throttled
//!   ([`crate::live`]: the one place the normalizer reads the clock; a held-back
//!   update is shown by [`Normalizer::flush_live`] when [`Normalizer::live_due`]);
//!   a non-zero exit or a refusal fails them;
//! - `fileChange` items → `edit` (or `write`, when every file is new) calls carrying
//!   each file's diff;
//! - `mcpToolCall`, `webSearch`, `imageView`, `dynamicToolCall` → tool calls;
//!   `collabAgentToolCall` → subagents;
//! - `turn/plan/updated` and `plan` items (plan mode's proposed plan) → the plan;
//! - `thread/tokenUsage/updated` → usage: the sum of the turn's model responses
//!   (`last`), since `total` is the thread's running total;
//! - a review's result (`exitedReviewMode`, after `/review`) → text;
//! - `warning`, `configWarning`, `model/rerouted`, `thread/compacted` → notices;
//! - `account/rateLimits/updated` (and a `usageLimitExceeded` error) → limits
//!   ([`crate::limits`]);
//! - `turn/completed` ends the turn ([`TurnEnd`]).

use std::collections::{HashMap, HashSet};

use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use weft_protocol::{
    DriverEvent, Plan, PlanStep, StepStatus, SubAgent, ToolCall, ToolKind, ToolStatus, Usage,
};

use crate::items::{
    capped, changes_input, changes_summary, first_line, part_text, plan_from_markdown,
    readable_command,
};
use crate::live::LiveOutput;
use crate::wire::{
    Delta, ErrorNotification, ItemNotification, ItemStatus, McpProgress, PatchUpdated, PlanUpdated,
    SummaryPart, ThreadItem, TokenBreakdown, TokenUsageUpdated, TurnEnvelope,
};

/// The longest tool result kept (the head; the agent's own record has the rest).
pub const RESULT_CAP: usize = 64 * 1024;

/// How a turn ended, from `turn/completed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEnd {
    /// `completed`, `interrupted`, `failed`.
    pub status: String,
    /// Why it failed.
    pub error: Option<String>,
}

/// Notifications the driver knows and has no use for.
const IGNORED: &[&str] = &[
    "thread/started",
    "thread/status/changed",
    "thread/readState/changed",
    "thread/settings/updated",
    "thread/name/updated",
    "thread/goal/updated",
    "thread/goal/cleared",
    "thread/queue/changed",
    "thread/environment/connected",
    "thread/environment/disconnected",
    "turn/diff/updated",
    "turn/moderationMetadata",
    "item/commandExecution/terminalInteraction",
    "item/fileChange/outputDelta",
    "item/autoApprovalReview/started",
    "item/autoApprovalReview/completed",
    "serverRequest/resolved",
    "account/updated",
    "remoteControl/status/changed",
    "mcpServer/startupStatus/updated",
    "skills/changed",
    "hook/started",
    "hook/completed",
    "deprecationNotice",
    "model/safetyBuffering/updated",
    "model/verification",
    "fs/changed",
    "app/list/updated",
];

#[derive(Debug, Default)]
struct TurnState {
    turn_id: Option<String>,
    calls: HashMap<String, ToolCall>,
    outputs: HashMap<String, String>,
    live: HashMap<String, LiveOutput>,
    streamed_messages: HashSet<String>,
    wrote_text: bool,
    streamed_reasoning: HashSet<String>,
    wrote_reasoning: bool,
    plans: HashMap<String, String>,
    usage: TokenBreakdown,
    window: Option<u64>,
    last: TokenBreakdown,
    saw_usage: bool,
    notices: HashSet<String>,
    error: Option<String>,
    /// A used-up limit window was reported this turn.
    limit_hit: bool,
}

/// Folds one process's notifications into driver events.
#[derive(Debug, Default)]
pub struct Normalizer {
    provider: Option<String>,
    unknown: HashSet<String>,
    turn: TurnState,
    /// The process's MCP servers, as its startup notifications left them: codex
    /// reports them once per process, every turn's snapshot shows them.
    mcp: Vec<weft_protocol::McpServerStatus>,
}

fn parse<T: DeserializeOwned>(method: &str, params: Value) -> Option<T> {
    match serde_json::from_value(params) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!("codex: `{method}` with params of an unexpected shape: {e}");
            None
        }
    }
}

impl Normalizer {
    /// A normalizer for a process serving `provider` (reported in usage).
    pub fn new(provider: Option<String>) -> Self {
        Self {
            provider,
            ..Default::default()
        }
    }

    /// Keeps what `mcpServer/startupStatus/updated` says; the status, when it parses.
    pub fn mcp_startup(&mut self, params: Value) -> Option<weft_protocol::McpServerStatus> {
        use weft_protocol::{McpServerStatus, McpState};
        #[derive(serde::Deserialize)]
        struct Updated {
            name: String,
            status: String,
            error: Option<String>,
        }
        let u: Updated = parse("mcpServer/startupStatus/updated", params)?;
        let status = match u.status.as_str() {
            "ready" => McpState::Connected,
            "starting" => McpState::Pending,
            _ => McpState::Failed,
        };
        let error = match (status, u.error) {
            (McpState::Failed, None) => Some(u.status),
            (_, e) => e,
        };
        let st = McpServerStatus {
            name: u.name,
            status,
            error,
        };
        match self.mcp.iter().position(|m| m.name == st.name) {
            Some(i) => self.mcp[i] = st.clone(),
            None => self.mcp.push(st.clone()),
        }
        Some(st)
    }

    /// The MCP servers as last reported.
    pub fn mcp_servers(&self) -> &[weft_protocol::McpServerStatus] {
        &self.mcp
    }

    /// A normalizer for a new thread of the same process, keeping its MCP servers.
    pub fn renewed(&mut self, provider: Option<String>) -> Self {
        Self {
            provider,
            mcp: std::mem::take(&mut self.mcp),
            ..Default::default()
        }
    }

    /// Forgets the last turn; `turn_id`, when known, filters what belongs to this one.
    pub fn begin_turn(&mut self, turn_id: Option<String>) {
        self.turn = TurnState {
            turn_id,
            ..Default::default()
        };
    }

    /// A follow-up codex turn inside the same Weft turn: its id is not known yet;
    /// text, tools and usage go on accumulating.
    pub fn begin_codex_turn(&mut self) {
        self.turn.turn_id = None;
    }

    /// The context the last model response used, as `/status` says it.
    pub fn context_used(&self) -> Option<String> {
        let t = &self.turn;
        if !t.saw_usage {
            return None;
        }
        let used = t.last.total_tokens;
        Some(match t.window.filter(|w| *w > 0) {
            Some(w) => format!(
                "{used} tokens of {w} ({:.1}%)",
                used as f64 * 100.0 / w as f64
            ),
            None => format!("{used} tokens"),
        })
    }

    /// The running turn's id, once known.
    pub fn turn_id(&self) -> Option<&str> {
        self.turn.turn_id.as_deref()
    }

    /// Sets the running turn's id (from `turn/start`'s result).
    pub fn set_turn_id(&mut self, id: &str) {
        self.turn.turn_id = Some(id.to_string());
    }

    /// The last error codex reported without retrying.
    pub fn error(&self) -> Option<&str> {
        self.turn.error.as_deref()
    }

    /// Methods seen that the driver does not know (each logged once).
    pub fn unknown_methods(&self) -> &HashSet<String> {
        &self.unknown
    }

    /// True while a tool call of this turn is still running.
    pub fn has_running_calls(&self) -> bool {
        self.turn
            .calls
            .values()
            .any(|c| c.status == ToolStatus::Running)
    }

    /// The tool call for item `id`, if one is open or done this turn.
    pub fn call(&self, id: &str) -> Option<&ToolCall> {
        self.turn.calls.get(id)
    }

    /// The running call of MCP server `server`'s `tool` (any of its tools when `tool` is
    /// None): codex's approval of an MCP call names no item, and the call is already
    /// open when it asks.
    pub fn running_mcp_call(&self, server: &str, tool: Option<&str>) -> Option<&ToolCall> {
        let prefix = format!("mcp__{server}__");
        self.turn.calls.values().find(|c| {
            c.status == ToolStatus::Running
                && c.name
                    .strip_prefix(&prefix)
                    .is_some_and(|t| tool.is_none_or(|want| want == t))
        })
    }

    fn other_turn(&self, turn_id: Option<&str>) -> bool {
        matches!((self.turn.turn_id.as_deref(), turn_id), (Some(a), Some(b)) if a != b)
    }

    /// Folds one notification; `Some` when it ended the turn.
    pub fn notification(
        &mut self,
        method: &str,
        params: Value,
        out: &mut Vec<DriverEvent>,
    ) -> Option<TurnEnd> {
        match method {
            "mcpServer/startupStatus/updated" => {
                if let Some(server) = self.mcp_startup(params) {
                    out.push(DriverEvent::Mcp { server });
                }
            }
            "item/agentMessage/delta" => {
                let d: Delta = parse(method, params)?;
                self.text(&d.item_id, &d.delta, out);
            }
            "item/reasoning/summaryTextDelta" | "item/reasoning/textDelta" => {
                let d: Delta = parse(method, params)?;
                self.reasoning(&d.item_id, &d.delta, out);
            }
            "item/reasoning/summaryPartAdded" => {
                let p: SummaryPart = parse(method, params)?;
                if p.summary_index > 0 && self.turn.wrote_reasoning {
                    out.push(DriverEvent::Reasoning {
                        delta: "\n\n".into(),
                    });
                }
                let _ = p.item_id;
            }
            "item/plan/delta" => {
                let d: Delta = parse(method, params)?;
                self.turn
                    .plans
                    .entry(d.item_id)
                    .or_default()
                    .push_str(&d.delta);
            }
            "item/commandExecution/outputDelta" => {
                let d: Delta = parse(method, params)?;
                self.output(&d.item_id, &d.delta, out);
            }
            "item/fileChange/patchUpdated" => {
                let p: PatchUpdated = parse(method, params)?;
                if let Some(call) = self.turn.calls.get_mut(&p.item_id) {
                    call.input = changes_input(&p.changes);
                    call.changes = crate::items::file_changes(&p.changes);
                    call.summary = changes_summary(&p.changes);
                    out.push(DriverEvent::Tool { call: call.clone() });
                }
            }
            "item/mcpToolCall/progress" => {
                let p: McpProgress = parse(method, params)?;
                if let Some(call) = self.turn.calls.get_mut(&p.item_id) {
                    call.result = Some(p.message);
                    out.push(DriverEvent::Tool { call: call.clone() });
                }
            }
            "item/started" | "item/completed" => {
                let n: ItemNotification = parse(method, params)?;
                if self.other_turn(n.turn_id.as_deref()) {
                    return None;
                }
                self.item(n.item, method == "item/completed", out);
            }
            "turn/plan/updated" => {
                let p: PlanUpdated = parse(method, params)?;
                let steps = p
                    .plan
                    .into_iter()
                    .map(|s| PlanStep {
                        text: s.step,
                        status: step_status(&s.status),
                    })
                    .collect();
                out.push(DriverEvent::Plan {
                    plan: Plan {
                        explanation: p.explanation.filter(|e| !e.is_empty()),
                        steps,
                    },
                });
            }
            "thread/tokenUsage/updated" => {
                let u: TokenUsageUpdated = parse(method, params)?;
                if self.other_turn(u.turn_id.as_deref())
                    || (self.turn.turn_id.is_none() && u.turn_id.is_some())
                {
                    return None;
                }
                self.usage(&u, out);
            }
            "account/rateLimits/updated" => {
                let limits = crate::limits::from_update(&params);
                self.turn.limit_hit |= crate::limits::any_rejected(&limits);
                out.extend(limits);
            }
            "error" => {
                if let Some(hit) =
                    crate::limits::from_error(&params).filter(|_| !self.turn.limit_hit)
                {
                    self.turn.limit_hit = true;
                    out.push(hit);
                }
                let e: ErrorNotification = parse(method, params)?;
                if e.will_retry {
                    out.push(DriverEvent::Activity {
                        text: format!("retrying: {}", e.error.text()),
                    });
                } else {
                    self.turn.error = Some(e.error.text());
                }
            }
            "warning" | "configWarning" | "guardianWarning" => {
                let text = params["message"]
                    .as_str()
                    .or(params["summary"].as_str())
                    .unwrap_or_default()
                    .to_string();
                self.notice(format!("codex: {text}"), out);
            }
            "model/rerouted" => {
                let to = params["toModel"].as_str().unwrap_or("another model");
                self.notice(format!("codex rerouted the turn to {to}"), out);
            }
            "thread/compacted" => self.notice("codex compacted the context".into(), out),
            "turn/started" => {
                let t: TurnEnvelope = parse(method, params)?;
                if self.turn.turn_id.is_none() {
                    self.turn.turn_id = Some(t.turn.id);
                }
            }
            "turn/completed" => {
                let t: TurnEnvelope = parse(method, params)?;
                if self.other_turn(Some(&t.turn.id)) {
                    return None;
                }
                let error = t
                    .turn
                    .error
                    .map(|e| e.text())
                    .or_else(|| self.turn.error.clone())
                    .filter(|_| t.turn.status == "failed");
                return Some(TurnEnd {
                    status: t.turn.status,
                    error,
                });
            }
            m if IGNORED.contains(&m) => {}
            m => {
                if self.unknown.insert(m.to_string()) {
                    tracing::info!("codex: ignoring notification `{m}` (not known to Weft)");
                }
            }
        }
        None
    }

    fn notice(&mut self, text: String, out: &mut Vec<DriverEvent>) {
        if self.turn.notices.insert(text.clone()) {
            out.push(DriverEvent::Notice { text });
        }
    }

    fn text(&mut self, item_id: &str, delta: &str, out: &mut Vec<DriverEvent>) {
        if delta.is_empty() {
            return;
        }
        if self.turn.streamed_messages.insert(item_id.to_string()) && self.turn.wrote_text {
            out.push(DriverEvent::Text {
                delta: "\n\n".into(),
            });
        }
        self.turn.wrote_text = true;
        out.push(DriverEvent::Text {
            delta: delta.to_string(),
        });
    }

    fn reasoning(&mut self, item_id: &str, delta: &str, out: &mut Vec<DriverEvent>) {
        if delta.is_empty() {
            return;
        }
        if self.turn.streamed_reasoning.insert(item_id.to_string()) && self.turn.wrote_reasoning {
            out.push(DriverEvent::Reasoning {
                delta: "\n\n".into(),
            });
        }
        self.turn.wrote_reasoning = true;
        out.push(DriverEvent::Reasoning {
            delta: delta.to_string(),
        });
    }

    fn output(&mut self, item_id: &str, delta: &str, out: &mut Vec<DriverEvent>) {
        let buf = self.turn.outputs.entry(item_id.to_string()).or_default();
        if buf.len() < RESULT_CAP {
            buf.push_str(delta);
        }
        let live = self.turn.live.entry(item_id.to_string()).or_default();
        live.push(delta);
        self.show_live(item_id, std::time::Instant::now(), out);
    }

    /// Shows call `id`'s output so far in its running row, when an update is due.
    fn show_live(&mut self, id: &str, now: std::time::Instant, out: &mut Vec<DriverEvent>) {
        let (Some(live), Some(call)) = (self.turn.live.get_mut(id), self.turn.calls.get_mut(id))
        else {
            return;
        };
        if call.status != ToolStatus::Running {
            return;
        }
        if let Some(text) = live.take_due(now) {
            call.result = Some(text);
            out.push(DriverEvent::Tool { call: call.clone() });
        }
    }

    /// When output a running command wrote is due in its row (held back by the
    /// throttle); the loop calls [`Normalizer::flush_live`] then.
    pub fn live_due(&self) -> Option<std::time::Instant> {
        self.turn
            .live
            .iter()
            .filter(|(id, _)| {
                self.turn
                    .calls
                    .get(*id)
                    .is_some_and(|c| c.status == ToolStatus::Running)
            })
            .filter_map(|(_, l)| l.due_at())
            .min()
    }

    /// Shows the output due by `now` in the running rows.
    pub fn flush_live(&mut self, now: std::time::Instant, out: &mut Vec<DriverEvent>) {
        let ids: Vec<String> = self.turn.live.keys().cloned().collect();
        for id in ids {
            self.show_live(&id, now, out);
        }
    }

    fn usage(&mut self, u: &TokenUsageUpdated, out: &mut Vec<DriverEvent>) {
        let t = &mut self.turn;
        let last = u.token_usage.last;
        t.usage.input_tokens += last.input_tokens;
        t.usage.cached_input_tokens += last.cached_input_tokens;
        t.usage.output_tokens += last.output_tokens;
        t.usage.reasoning_output_tokens += last.reasoning_output_tokens;
        t.usage.total_tokens += last.total_tokens;
        t.last = last;
        t.window = u.token_usage.model_context_window.or(t.window);
        t.saw_usage = true;
        let used = last.total_tokens;
        out.push(DriverEvent::Usage {
            usage: Usage {
                input_tokens: Some(t.usage.input_tokens),
                output_tokens: Some(t.usage.output_tokens),
                cached_input_tokens: Some(t.usage.cached_input_tokens),
                context_used_tokens: Some(used),
                context_percent: t
                    .window
                    .filter(|w| *w > 0)
                    .map(|w| (used as f64 * 10000.0 / w as f64).round() / 100.0),
                cost_usd: None,
                provider_name: self.provider.clone(),
            },
        });
    }

    fn open(&mut self, call: ToolCall, out: &mut Vec<DriverEvent>) {
        out.push(DriverEvent::Tool { call: call.clone() });
        self.turn.calls.insert(call.id.clone(), call);
    }

    fn item(&mut self, item: ThreadItem, done: bool, out: &mut Vec<DriverEvent>) {
        match item {
            ThreadItem::AgentMessage { id, text }
                if done && !self.turn.streamed_messages.contains(&id) =>
            {
                self.text(&id, &text, out);
            }
            ThreadItem::Reasoning {
                id,
                summary,
                content,
            } if done && !self.turn.streamed_reasoning.contains(&id) => {
                let parts = if summary.is_empty() { content } else { summary };
                let text: Vec<String> = parts.iter().map(part_text).collect();
                self.reasoning(&id, &text.join("\n\n"), out);
            }
            ThreadItem::Plan { id, text } if done => {
                let streamed = self.turn.plans.remove(&id).unwrap_or_default();
                let text = if text.is_empty() { streamed } else { text };
                if let Some(plan) = plan_from_markdown(&text) {
                    out.push(DriverEvent::Plan { plan });
                }
            }
            ThreadItem::CommandExecution {
                id,
                command,
                cwd,
                command_actions,
                aggregated_output,
                exit_code,
                status,
            } => {
                let readable = readable_command(&command, &command_actions);
                let mut call = ToolCall {
                    id: id.clone(),
                    name: "command_execution".into(),
                    summary: format!("$ {}", first_line(&readable, 80)),
                    input: json!({"command": readable, "cwd": cwd}),
                    kind: ToolKind::Shell,
                    ..Default::default()
                };
                if !done {
                    return self.open(call, out);
                }
                let streamed = self.turn.outputs.remove(&id);
                self.turn.live.remove(&id);
                let output = aggregated_output.or(streamed).unwrap_or_default();
                let output = capped(output.trim_end());
                let failed = match status {
                    ItemStatus::Completed => exit_code.is_some_and(|c| c != 0),
                    ItemStatus::InProgress => false,
                    _ => true,
                };
                call.status = if failed {
                    ToolStatus::Failed
                } else {
                    ToolStatus::Done
                };
                call.result = Some(match (status, exit_code) {
                    (ItemStatus::Declined, _) => "declined by the user".into(),
                    (_, Some(c)) if c != 0 && output.is_empty() => format!("exit code {c}"),
                    (_, Some(c)) if c != 0 => format!("{output}\n(exit code {c})"),
                    _ => output,
                });
                self.close(call, out);
            }
            ThreadItem::FileChange {
                id,
                changes,
                status,
            } => {
                let all_new = !changes.is_empty() && changes.iter().all(|c| c.kind_name() == "add");
                let mut call = ToolCall {
                    id,
                    name: "apply_patch".into(),
                    summary: changes_summary(&changes),
                    input: changes_input(&changes),
                    changes: crate::items::file_changes(&changes),
                    kind: if all_new {
                        ToolKind::Write
                    } else {
                        ToolKind::Edit
                    },
                    ..Default::default()
                };
                if !done {
                    return self.open(call, out);
                }
                // On success the diffs (in `input`) are the whole story.
                (call.status, call.result) = match status {
                    ItemStatus::Completed => (ToolStatus::Done, None),
                    ItemStatus::Declined => {
                        (ToolStatus::Failed, Some("declined by the user".into()))
                    }
                    _ => (ToolStatus::Failed, Some("the patch did not apply".into())),
                };
                self.close(call, out);
            }
            ThreadItem::McpToolCall {
                id,
                server,
                tool,
                arguments,
                result,
                error,
                status,
            } => {
                let mut call = ToolCall {
                    id,
                    name: format!("mcp__{server}__{tool}"),
                    summary: format!("{server}/{tool}"),
                    input: arguments,
                    kind: ToolKind::Mcp,
                    ..Default::default()
                };
                if !done {
                    return self.open(call, out);
                }
                let text = result.map(|r| {
                    r.content
                        .iter()
                        .map(part_text)
                        .collect::<Vec<_>>()
                        .join("\n")
                });
                (call.status, call.result) = match (status, error) {
                    (_, Some(e)) => (ToolStatus::Failed, Some(e.message)),
                    (ItemStatus::Failed, None) => (ToolStatus::Failed, text),
                    _ => (ToolStatus::Done, text),
                };
                self.close(call, out);
            }
            ThreadItem::DynamicToolCall {
                id,
                tool,
                arguments,
                content_items,
                success,
                status,
            } => {
                let mut call = ToolCall {
                    id,
                    name: tool.clone(),
                    summary: tool,
                    input: arguments,
                    ..Default::default()
                };
                if !done {
                    return self.open(call, out);
                }
                let ok = success.unwrap_or(status == ItemStatus::Completed);
                call.status = if ok {
                    ToolStatus::Done
                } else {
                    ToolStatus::Failed
                };
                call.result =
                    content_items.map(|c| c.iter().map(part_text).collect::<Vec<_>>().join("\n"));
                self.close(call, out);
            }
            ThreadItem::WebSearch { id, query, action } => {
                let query = if query.is_empty() {
                    action
                        .as_ref()
                        .and_then(|a| a["query"].as_str().or(a["url"].as_str()))
                        .unwrap_or_default()
                        .to_string()
                } else {
                    query
                };
                let mut call = ToolCall {
                    id,
                    name: "web_search".into(),
                    summary: format!("search the web: {}", first_line(&query, 80)),
                    input: json!({"query": query, "action": action}),
                    kind: ToolKind::Fetch,
                    ..Default::default()
                };
                if !done {
                    return self.open(call, out);
                }
                call.status = ToolStatus::Done;
                self.close(call, out);
            }
            ThreadItem::ImageView { id, path } => {
                let mut call = ToolCall {
                    id,
                    name: "view_image".into(),
                    summary: format!("view {path}"),
                    input: json!({"path": path}),
                    kind: ToolKind::Read,
                    ..Default::default()
                };
                if done {
                    call.status = ToolStatus::Done;
                    self.close(call, out);
                } else {
                    self.open(call, out);
                }
            }
            ThreadItem::CollabAgentToolCall {
                id,
                tool,
                prompt,
                status,
            } => {
                let status = match status.as_str() {
                    Some("failed") => ToolStatus::Failed,
                    _ if done => ToolStatus::Done,
                    _ => ToolStatus::Running,
                };
                out.push(DriverEvent::Subagent {
                    agent: SubAgent {
                        id,
                        name: tool.as_str().unwrap_or("agent").to_string(),
                        summary: prompt.map(|p| first_line(&p, 80)).unwrap_or_default(),
                        status,
                        result: None,
                    },
                });
            }
            ThreadItem::ExitedReviewMode { id, review } if done => {
                self.text(&id, &review, out);
            }
            ThreadItem::ContextCompaction { .. } => {
                let text = if done { "" } else { "compacting the context" };
                out.push(DriverEvent::Activity { text: text.into() });
            }
            _ => {}
        }
    }

    fn close(&mut self, call: ToolCall, out: &mut Vec<DriverEvent>) {
        self.turn.calls.insert(call.id.clone(), call.clone());
        out.push(DriverEvent::Tool { call });
    }
}

fn step_status(s: &str) -> StepStatus {
    match s {
        "completed" => StepStatus::Completed,
        "inProgress" | "in_progress" => StepStatus::InProgress,
        _ => StepStatus::Pending,
    }
}
