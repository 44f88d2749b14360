//! ACP `session/update`s → [`DriverEvent`]s: pure, so the replay tests drive it
//! without a process.
//!
//! A tool call arrives as `tool_call` and then `tool_call_update`s that each carry only
//! the fields that changed; the normalizer keeps every call's whole state and emits it
//! whole (the kernel upserts by id). While a call runs, what it has written so far
//! shows in its row ([`crate::live`]: the latest part, throttled — the one place the
//! normalizer reads the clock; a held-back update is shown by
//! [`Normalizer::flush_live`] when [`Normalizer::live_due`]): an update that carries
//! Zed's `_meta.terminal_output` chunk, or one that carries nothing but text content
//! (codex-acp sends a running command's whole output so far that way). Usage comes from four places — `usage_update`
//! (context window, cost), the `session/prompt` reply's `usage` (claude-agent-acp,
//! Copilot, Hermes), its `_meta.quota` (gemini) and a chunk's `_meta.usage` (Qwen Code,
//! see [`crate::quirks`]) — merged into one [`Usage`].
//!
//! Kinds with no snapshot field are kept on the normalizer (available commands, the
//! current mode) or ignored (`user_message_chunk`, a history replay); a kind this
//! schema does not know is ignored and named once in the log.

use std::collections::{BTreeSet, HashMap};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, Plan as AcpPlan, PlanEntryStatus,
    SessionNotification, SessionUpdate, ToolCall as AcpToolCall, ToolCallContent, ToolCallStatus,
    ToolCallUpdate, ToolKind as AcpKind,
};
use serde_json::Value;
use weft_protocol::{
    DriverEvent, Plan, PlanStep, StepStatus, ToolCall, ToolKind, ToolStatus, Usage,
};

use crate::live::LiveOutput;
use crate::quirks;

/// Folds one session's updates into events.
#[derive(Debug, Default)]
pub struct Normalizer {
    tools: HashMap<String, ToolCall>,
    /// What each running call has written so far.
    live: HashMap<String, LiveOutput>,
    usage: Usage,
    /// The agent's slash commands, as last announced.
    pub commands: Vec<AvailableCommand>,
    /// The mode the agent says it is in.
    pub mode: Option<String>,
    unknown_logged: BTreeSet<String>,
    /// Text chunks seen this turn (to tell an empty reply from a streamed one).
    pub text_seen: bool,
    /// The sum of this turn's per-call usage from chunks' `_meta` (Qwen Code).
    call_usage: quirks::CallUsage,
}

fn block_text(block: &ContentBlock) -> Option<String> {
    match block {
        ContentBlock::Text(t) => Some(t.text.clone()),
        ContentBlock::ResourceLink(r) => Some(r.uri.clone()),
        _ => None,
    }
}

fn map_kind(kind: &AcpKind) -> ToolKind {
    match kind {
        AcpKind::Read => ToolKind::Read,
        AcpKind::Edit => ToolKind::Edit,
        AcpKind::Search => ToolKind::Search,
        AcpKind::Execute => ToolKind::Shell,
        AcpKind::Fetch => ToolKind::Fetch,
        _ => ToolKind::Other,
    }
}

fn map_status(status: &ToolCallStatus) -> ToolStatus {
    match status {
        ToolCallStatus::Completed => ToolStatus::Done,
        ToolCallStatus::Failed => ToolStatus::Failed,
        _ => ToolStatus::Running,
    }
}

fn kind_label(kind: &AcpKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_else(|| "tool".into())
}

/// Text of a tool call's content: text blocks as they are, diffs as `path` and the
/// new text, terminals by id.
pub fn content_text(content: &[ToolCallContent]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            ToolCallContent::Content(c) => block_text(&c.content),
            ToolCallContent::Diff(d) => Some(format!("{}\n{}", d.path.display(), d.new_text)),
            ToolCallContent::Terminal(t) => Some(format!("[terminal {}]", t.terminal_id.0)),
            _ => None,
        })
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The files a call's `diff` content changes. ACP gives the text before (none: a new
/// file) and after; an agent that sends only the edited fragment (claude-agent-acp) gets
/// hunks numbered from the fragment.
pub fn content_changes(content: &[ToolCallContent]) -> Vec<weft_protocol::FileChange> {
    content
        .iter()
        .filter_map(|c| match c {
            ToolCallContent::Diff(d) => Some(weft_kernel::changes::file_change(
                &d.path.display().to_string(),
                d.old_text.as_deref(),
                Some(&d.new_text),
            )),
            _ => None,
        })
        .collect()
}

use quirks::raw_output_text;

/// The call's kind, or the one its title implies when the agent sent none (Kimi).
fn kind_or_title(kind: &AcpKind, title: &str) -> AcpKind {
    match kind {
        AcpKind::Other => quirks::kind_from_title(title).unwrap_or(AcpKind::Other),
        k => *k,
    }
}

/// The agent's own name for a tool: `_meta.claudeCode.toolName`, the ACP `name`, or
/// the prefix of a gemini call id (`run_shell_command__…`), else its ACP kind.
fn native_name(
    meta: Option<&serde_json::Map<String, Value>>,
    name: Option<&str>,
    id: &str,
) -> Option<String> {
    if let Some(n) = meta
        .and_then(|m| m.get("claudeCode"))
        .and_then(|c| c.get("toolName"))
        .and_then(Value::as_str)
    {
        return Some(n.to_string());
    }
    if let Some(n) = name.filter(|n| !n.is_empty()) {
        return Some(n.to_string());
    }
    let (prefix, _) = id.split_once("__")?;
    prefix
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
        .then(|| prefix.to_string())
}

impl Normalizer {
    /// A normalizer with no state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a new turn: usage figures restart, tool calls are forgotten.
    pub fn begin_turn(&mut self) {
        self.tools.clear();
        self.live.clear();
        self.usage = Usage::default();
        self.call_usage = quirks::CallUsage::default();
        self.text_seen = false;
    }

    /// The call with `id`, as last emitted.
    pub fn tool(&self, id: &str) -> Option<&ToolCall> {
        self.tools.get(id)
    }

    /// Ids of calls still running.
    pub fn running_tools(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .tools
            .values()
            .filter(|t| t.status == ToolStatus::Running)
            .map(|t| t.id.clone())
            .collect();
        ids.sort();
        ids
    }

    /// One notification (any method) → events.
    pub fn notification(&mut self, method: &str, params: &Value, out: &mut Vec<DriverEvent>) {
        if method != "session/update" {
            self.log_unknown(&format!("notification {method}"));
            return;
        }
        let parsed = serde_json::from_value::<SessionNotification>(params.clone())
            .or_else(|e| serde_json::from_value(quirks::without_nulls(params)).map_err(|_| e));
        match parsed {
            Ok(n) => self.update(n.update, out),
            Err(e) => {
                let kind = params["update"]["sessionUpdate"]
                    .as_str()
                    .unwrap_or("?")
                    .to_string();
                self.log_unknown(&format!("session/update {kind} ({e})"));
            }
        }
    }

    fn log_unknown(&mut self, what: &str) {
        let key: String = what.split(" (").next().unwrap_or(what).to_string();
        if self.unknown_logged.insert(key) {
            tracing::info!("ACP: ignoring {what}");
        }
    }

    /// One parsed update → events.
    pub fn update(&mut self, update: SessionUpdate, out: &mut Vec<DriverEvent>) {
        match update {
            SessionUpdate::AgentMessageChunk(c) => {
                if let Some(t) = block_text(&c.content).filter(|t| !t.is_empty()) {
                    self.text_seen = true;
                    out.push(DriverEvent::Text { delta: t });
                }
                if let Some(u) = quirks::chunk_usage(c.meta.as_ref()) {
                    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
                        (None, None) => None,
                        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
                    };
                    let sum = &mut self.call_usage;
                    sum.input = add(sum.input, u.input);
                    sum.output = add(sum.output, u.output);
                    sum.cached = add(sum.cached, u.cached);
                    self.usage.input_tokens = sum.input;
                    self.usage.output_tokens = sum.output;
                    self.usage.cached_input_tokens = sum.cached.filter(|c| *c > 0);
                    out.push(DriverEvent::Usage {
                        usage: self.usage.clone(),
                    });
                }
            }
            SessionUpdate::AgentThoughtChunk(c) => {
                if let Some(t) = block_text(&c.content).filter(|t| !t.is_empty()) {
                    out.push(DriverEvent::Reasoning { delta: t });
                }
            }
            SessionUpdate::UserMessageChunk(_) => {}
            SessionUpdate::ToolCall(call) => self.tool_call(call, out),
            SessionUpdate::ToolCallUpdate(u) => self.tool_update(u, out),
            SessionUpdate::Plan(p) => out.push(DriverEvent::Plan { plan: plan(&p) }),
            SessionUpdate::AvailableCommandsUpdate(c) => {
                self.commands = c.available_commands;
                out.push(DriverEvent::Commands {
                    commands: self.commands.iter().map(slash_command).collect(),
                });
            }
            SessionUpdate::CurrentModeUpdate(m) => {
                let mode = m.current_mode_id.0.to_string();
                if self.mode.as_deref() != Some(mode.as_str()) {
                    out.push(DriverEvent::Notice {
                        text: format!("The agent switched to mode `{mode}`"),
                    });
                }
                self.mode = Some(mode);
            }
            SessionUpdate::UsageUpdate(u) => {
                self.usage.context_used_tokens = Some(u.used);
                if u.size > 0 {
                    let pct = (u.used as f64) * 100.0 / (u.size as f64);
                    self.usage.context_percent = Some((pct * 100.0).round() / 100.0);
                }
                if let Some(cost) = u.cost.filter(|c| c.currency.eq_ignore_ascii_case("USD")) {
                    self.usage.cost_usd = Some(cost.amount);
                }
                out.push(DriverEvent::Usage {
                    usage: self.usage.clone(),
                });
            }
            other => {
                let kind = serde_json::to_value(&other)
                    .ok()
                    .and_then(|v| v["sessionUpdate"].as_str().map(String::from))
                    .unwrap_or_else(|| "?".into());
                self.log_unknown(&format!("session/update {kind}"));
            }
        }
    }

    fn tool_call(&mut self, call: AcpToolCall, out: &mut Vec<DriverEvent>) {
        let id = call.tool_call_id.0.to_string();
        let meta = call.meta.as_ref();
        let kind = kind_or_title(&call.kind, &call.title);
        let name =
            native_name(meta, call.name.as_deref(), &id).unwrap_or_else(|| kind_label(&kind));
        let mut result = call.raw_output.as_ref().and_then(raw_output_text);
        let mut status = map_status(&call.status);
        if status == ToolStatus::Done && quirks::failed_exit(call.raw_output.as_ref()).is_some() {
            status = ToolStatus::Failed;
        }
        if result.is_none() && status != ToolStatus::Running {
            result = Some(content_text(&call.content)).filter(|s| !s.is_empty());
        }
        let t = ToolCall {
            id: id.clone(),
            name,
            summary: call.title.clone(),
            input: call
                .raw_input
                .clone()
                .unwrap_or(Value::Object(Default::default())),
            result,
            status,
            kind: map_kind(&kind),
            parent_id: None,
            changes: content_changes(&call.content),
        };
        self.tools.insert(id, t.clone());
        out.push(DriverEvent::Tool { call: t });
    }

    fn tool_update(&mut self, u: ToolCallUpdate, out: &mut Vec<DriverEvent>) {
        let id = u.tool_call_id.0.to_string();
        if self.progress(&id, &u, out) {
            return;
        }
        let f = u.fields;
        let meta = u.meta.as_ref();
        let mut t = self.tools.remove(&id).unwrap_or_else(|| ToolCall {
            id: id.clone(),
            name: native_name(meta, None, &id).unwrap_or_else(|| "tool".into()),
            input: Value::Object(Default::default()),
            ..Default::default()
        });
        if let Some(n) = native_name(meta, f.name.as_deref(), "") {
            t.name = n;
        }
        if let Some(title) = f.title.filter(|s| !s.is_empty()) {
            if f.kind.is_none() && t.kind == ToolKind::Other {
                if let Some(k) = quirks::kind_from_title(&title) {
                    t.kind = map_kind(&k);
                }
            }
            t.summary = title;
        }
        if let Some(kind) = &f.kind {
            t.kind = map_kind(&kind_or_title(kind, &t.summary));
        }
        if let Some(input) = f.raw_input.filter(|v| !v.is_null()) {
            let empty_object = input.as_object().is_some_and(|o| o.is_empty());
            if !empty_object || t.input.is_null() {
                t.input = input;
            }
        }
        if let Some(status) = &f.status {
            t.status = map_status(status);
            if t.status == ToolStatus::Done && quirks::failed_exit(f.raw_output.as_ref()).is_some()
            {
                t.status = ToolStatus::Failed;
            }
        }
        if let Some(changes) = f.content.as_deref().map(content_changes) {
            if !changes.is_empty() {
                t.changes = changes;
            }
        }
        if let Some(r) = f.raw_output.as_ref().and_then(raw_output_text) {
            t.result = Some(r);
        } else if let Some(content) = &f.content {
            let text = content_text(content);
            let live = self.live.contains_key(&id);
            if !text.is_empty()
                && (t.status != ToolStatus::Running || (t.result.is_some() && !live))
            {
                t.result = Some(text);
            }
        }
        if t.status != ToolStatus::Running {
            self.live.remove(&id);
        }
        self.tools.insert(id, t.clone());
        out.push(DriverEvent::Tool { call: t });
    }

    /// Folds an update that only says what running call `id` has written so far: a
    /// `_meta.terminal_output` chunk, or text content and nothing else about the call
    /// (claude-agent-acp's update with a command's description names it too). True when
    /// it was one.
    fn progress(&mut self, id: &str, u: &ToolCallUpdate, out: &mut Vec<DriverEvent>) -> bool {
        let f = &u.fields;
        let running = self
            .tools
            .get(id)
            .is_some_and(|t| t.status == ToolStatus::Running);
        let only_output = f
            .status
            .as_ref()
            .is_none_or(|s| *s == ToolCallStatus::InProgress)
            && f.title.is_none()
            && f.kind.is_none()
            && f.name.is_none()
            && f.raw_input.is_none()
            && f.raw_output.is_none();
        if !running || !only_output {
            return false;
        }
        let chunk = u
            .meta
            .as_ref()
            .and_then(|m| m.get("terminal_output"))
            .and_then(|o| o.get("data"))
            .and_then(Value::as_str);
        let whole = f
            .content
            .as_deref()
            .filter(|c| {
                !c.is_empty()
                    && c.iter().all(|c| {
                        matches!(c, ToolCallContent::Content(b) if matches!(b.content, ContentBlock::Text(_)))
                    })
            })
            .map(|c| unfenced(&content_text(c)));
        let live = self.live.entry(id.to_string()).or_default();
        match (chunk, whole) {
            (Some(chunk), _) => live.push(chunk),
            (None, Some(whole)) => live.replace(&whole),
            (None, None) => return false,
        }
        self.show_live(id, std::time::Instant::now(), out);
        true
    }

    fn show_live(&mut self, id: &str, now: std::time::Instant, out: &mut Vec<DriverEvent>) {
        let (Some(live), Some(t)) = (self.live.get_mut(id), self.tools.get_mut(id)) else {
            return;
        };
        if t.status != ToolStatus::Running {
            return;
        }
        if let Some(text) = live.take_due(now) {
            t.result = Some(text);
            out.push(DriverEvent::Tool { call: t.clone() });
        }
    }

    /// When output a running call wrote is due in its row (held back by the
    /// throttle); the prompt loop calls [`Normalizer::flush_live`] then.
    pub fn live_due(&self) -> Option<std::time::Instant> {
        self.live
            .iter()
            .filter(|(id, _)| {
                self.tools
                    .get(*id)
                    .is_some_and(|t| t.status == ToolStatus::Running)
            })
            .filter_map(|(_, l)| l.due_at())
            .min()
    }

    /// Shows the output due by `now` in the running rows.
    pub fn flush_live(&mut self, now: std::time::Instant, out: &mut Vec<DriverEvent>) {
        let ids: Vec<String> = self.live.keys().cloned().collect();
        for id in ids {
            self.show_live(&id, now, out);
        }
    }

    /// Marks a call with a final status and result (a denied permission, a stopped
    /// turn) unless the agent already finished it.
    pub fn settle_tool(
        &mut self,
        id: &str,
        status: ToolStatus,
        result: &str,
    ) -> Option<DriverEvent> {
        let t = self.tools.get_mut(id)?;
        if t.status != ToolStatus::Running {
            return None;
        }
        self.live.remove(id);
        t.status = status;
        if t.result.is_none() {
            t.result = Some(result.to_string());
        }
        Some(DriverEvent::Tool { call: t.clone() })
    }

    /// Registers a call first seen in a permission request (gemini sends no
    /// `tool_call` before asking).
    pub fn ensure_tool(&mut self, call: &ToolCallUpdate, out: &mut Vec<DriverEvent>) {
        let id = call.tool_call_id.0.to_string();
        if self.tools.contains_key(&id) {
            return;
        }
        self.tool_update(call.clone(), out);
        if let Some(t) = self.tools.get_mut(&id) {
            t.status = ToolStatus::Running;
            t.result = None;
        }
    }

    /// Usage from a `session/prompt` reply (`usage` or gemini's `_meta.quota`).
    pub fn prompt_usage(&mut self, reply: &Value) -> Option<DriverEvent> {
        let u = &reply["usage"];
        let q = &reply["_meta"]["quota"]["token_count"];
        let (input, output, cached) = if u.is_object() {
            (
                u["inputTokens"].as_u64(),
                u["outputTokens"].as_u64(),
                u["cachedReadTokens"].as_u64(),
            )
        } else if q.is_object() {
            (
                q["input_tokens"].as_u64(),
                q["output_tokens"].as_u64(),
                None,
            )
        } else {
            return None;
        };
        if input.is_none() && output.is_none() {
            return None;
        }
        self.usage.input_tokens = input;
        self.usage.output_tokens = output;
        self.usage.cached_input_tokens = cached.filter(|c| *c > 0);
        Some(DriverEvent::Usage {
            usage: self.usage.clone(),
        })
    }
}

/// `text` without the Markdown code fence around it (codex-acp fences a command's
/// output as ```` ```sh ````).
fn unfenced(text: &str) -> String {
    let trimmed = text.trim_end();
    match (trimmed.strip_prefix("```"), trimmed.strip_suffix("```")) {
        (Some(_), Some(inner)) if trimmed.len() > 6 => {
            let body = inner.split_once('\n').map_or("", |(_, body)| body);
            body.to_string()
        }
        _ => text.to_string(),
    }
}

fn plan(p: &AcpPlan) -> Plan {
    Plan {
        explanation: None,
        steps: p
            .entries
            .iter()
            .map(|e| PlanStep {
                text: e.content.clone(),
                status: match e.status {
                    PlanEntryStatus::InProgress => StepStatus::InProgress,
                    PlanEntryStatus::Completed => StepStatus::Completed,
                    _ => StepStatus::Pending,
                },
            })
            .collect(),
    }
}

/// An ACP command as Weft lists it (ACP says nothing of where a command comes from).
fn slash_command(c: &AvailableCommand) -> weft_protocol::SlashCommand {
    let hint = match &c.input {
        Some(AvailableCommandInput::Unstructured(u)) => Some(u.hint.clone()),
        _ => None,
    };
    weft_protocol::SlashCommand {
        name: c.name.trim_start_matches('/').to_string(),
        description: c.description.clone(),
        argument_hint: hint.filter(|h| !h.is_empty()),
        source: weft_protocol::CommandSource::Builtin,
    }
}

#[cfg(test)]
mod change_tests {
    use super::*;

    #[test]
    fn diff_content_becomes_the_normalized_change() {
        let content: Vec<ToolCallContent> = serde_json::from_value(serde_json::json!([
            {"type": "diff", "path": "/w/notes.txt", "oldText": "one\ntwo\nthree\n", "newText": "one\n2\nthree\n"},
            {"type": "diff", "path": "/w/new.txt", "oldText": null, "newText": "hi\n"},
            {"type": "content", "content": {"type": "text", "text": "not a change"}}
        ]))
        .unwrap_or_else(|e| panic!("{e}"));
        let c = content_changes(&content);
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0].diff,
            "--- a/w/notes.txt\n+++ b/w/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        );
        assert_eq!(c[1].kind, weft_protocol::ChangeKind::Add);
    }
}

#[cfg(test)]
mod live_tests {
    use super::*;
    use serde_json::json;

    fn update(n: &mut Normalizer, update: Value) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        n.notification(
            "session/update",
            &json!({"sessionId": "s", "update": update}),
            &mut out,
        );
        out
    }

    fn row(events: &[DriverEvent]) -> Option<(ToolStatus, Option<String>)> {
        events.iter().rev().find_map(|e| match e {
            DriverEvent::Tool { call } => Some((call.status, call.result.clone())),
            _ => None,
        })
    }

    /// The output so far of a running command shows in its row: codex-acp's whole
    /// output in a fenced block (as its source sends it without the terminal
    /// capability), Zed's `_meta.terminal_output` chunks; a command's description
    /// (claude-agent-acp) is not output; held-back output is shown when due.
    #[test]
    fn a_running_call_shows_what_it_wrote_so_far() {
        let mut n = Normalizer::new();
        update(
            &mut n,
            json!({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "make",
                   "kind": "execute", "status": "in_progress"}),
        );
        let described = update(
            &mut n,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "make",
                   "kind": "execute", "rawInput": {"command": "make"},
                   "content": [{"type": "content", "content": {"type": "text", "text": "build it"}}]}),
        );
        assert_eq!(row(&described), Some((ToolStatus::Running, None)));
        let first = update(
            &mut n,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c",
                   "content": [{"type": "content", "content": {"type": "text", "text": "```sh\nstep one\n```\n"}}]}),
        );
        assert_eq!(
            row(&first),
            Some((ToolStatus::Running, Some("step one\n".into())))
        );
        // Within the throttle: held back, then shown when due.
        let soon = update(
            &mut n,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c", "_meta":
                   {"terminal_output": {"terminal_id": "c", "data": "step two\n"}}}),
        );
        assert_eq!(row(&soon), None);
        let due = n.live_due().unwrap_or_else(|| panic!("nothing due"));
        let mut out = Vec::new();
        n.flush_live(due, &mut out);
        assert_eq!(
            row(&out),
            Some((ToolStatus::Running, Some("step one\nstep two\n".into())))
        );
        assert_eq!(n.live_due(), None);
        let done = update(
            &mut n,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed",
                   "rawOutput": "step one\nstep two\ndone\n"}),
        );
        assert_eq!(
            row(&done),
            Some((ToolStatus::Done, Some("step one\nstep two\ndone\n".into())))
        );
        assert_eq!(n.live_due(), None);
    }
}
